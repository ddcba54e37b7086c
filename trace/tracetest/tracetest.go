// Package tracetest writes access logs of made-up requests, in each of the
// formats package trace reads, for tests: small ones with Write, and ones
// too large to hold in memory with NewReader, which makes its lines as
// they are read.
//
// Each record's Key is written where [KeySpec] finds it, so that reading
// the log back with that key returns the records as written (less what a
// format cannot hold: a combined log's times have whole seconds unless the
// record's have a fraction, and then it is written, as trace reads it).
package tracetest

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/ratelim/ratelim/trace"
)

// KeySpec returns the key, for trace.ParseKey, that reads back the keys
// written in format f: the remote user of a combined log, the query
// parameter "key" of an ALB log's request, the field or column "key" of
// JSONL and CSV.
func KeySpec(f trace.Format) string {
	switch f {
	case trace.Combined:
		return "user"
	case trace.ALB:
		return "query:key"
	}
	return "key"
}

// Options returns the trace.Options that read a log written in format f
// with the keys as written.
func Options(f trace.Format) trace.Options {
	k, err := trace.ParseKey(f, KeySpec(f))
	if err != nil {
		panic(err) // KeySpec gives only keys ParseKey reads
	}
	return trace.Options{Format: f, Key: k}
}

// Write writes recs to w as a log of format f, one line each in the order
// given (out of time order if they are). A key must not hold a space, a
// quote, a backslash, a comma, '&', '#', '%', '+' or a control character,
// which not every format holds as it is; "" (and "-") read back as no key.
// A record without a method is written as a malformed request line, which
// in an ALB log cannot hold the key: it reads back without one.
func Write(w io.Writer, f trace.Format, recs []trace.Record) error {
	var b []byte
	if f == trace.CSV {
		b = append(b, csvHeader...)
	}
	for _, r := range recs {
		var err error
		if b, err = AppendLine(b, f, r); err != nil {
			return err
		}
		if len(b) >= 64<<10 {
			if _, err := w.Write(b); err != nil {
				return err
			}
			b = b[:0]
		}
	}
	_, err := w.Write(b)
	return err
}

const csvHeader = "time,key,method,path,status\n"

var errBadKey = errors.New("tracetest: a key holds a character not every format can hold")

// AppendLine appends the line of r in format f, with its newline, to dst.
// A request without a method is written as the format writes a line with
// no request ("-"); one without a path asks for /.
func AppendLine(dst []byte, f trace.Format, r trace.Record) ([]byte, error) {
	if strings.ContainsAny(r.Key, " \"&#%+\\,\t\r\n") {
		return dst, errBadKey
	}
	at := r.At.UTC()
	method, path := r.Method, r.Path
	if method == "" {
		method, path = "-", ""
	}
	if path == "" && method != "-" {
		path = "/"
	}
	// Each format's writer takes r's time in UTC and the method and path
	// as made above.
	switch f {
	case trace.Combined:
		dst = appendCombined(dst, at, method, path, r)
	case trace.ALB:
		dst = appendALB(dst, at, method, path, r)
	case trace.JSONL:
		dst = appendJSONL(dst, at, method, path, r)
	case trace.CSV:
		dst = appendCSVLine(dst, at, method, path, r)
	default:
		return dst, fmt.Errorf("tracetest: no such format %v", f)
	}
	return dst, nil
}

// appendCombined appends r as nginx's and Apache's combined format writes
// it: the key as the user, and a fixed client address and user agent.
func appendCombined(dst []byte, at time.Time, method, path string, r trace.Record) []byte {
	dst = append(dst, "192.0.2.1 - "...)
	dst = appendOr(dst, r.Key, "-")
	dst = append(dst, " ["...)
	dst = at.AppendFormat(dst, "02/Jan/2006:15:04:05")
	if ns := at.Nanosecond(); ns != 0 {
		dst = appendFraction(dst, ns)
	}
	dst = append(dst, ` +0000] "`...)
	dst = append(dst, method...)
	if method != "-" {
		dst = append(dst, ' ')
		dst = append(dst, path...)
		dst = append(dst, " HTTP/1.1"...)
	}
	dst = append(dst, `" `...)
	dst = appendStatus(dst, r.Status)
	dst = append(dst, " 0 \"-\" \"tracetest/1.0\"\n"...)
	return dst
}

// appendALB appends r as an AWS ALB access log line: the key as a key=
// query parameter, every other field fixed.
func appendALB(dst []byte, at time.Time, method, path string, r trace.Record) []byte {
	dst = append(dst, "https "...)
	dst = at.Add(time.Millisecond).AppendFormat(dst, "2006-01-02T15:04:05.000000Z")
	dst = append(dst, " app/tracetest/0123456789abcdef 192.0.2.1:40000 10.0.0.1:80 0.000 0.001 0.000 "...)
	dst = appendStatus(dst, r.Status)
	dst = append(dst, ' ')
	dst = appendStatus(dst, r.Status)
	dst = append(dst, ` 100 200 "`...)
	if method == "-" {
		dst = append(dst, "- https://example.com:443- -"...)
	} else {
		dst = append(dst, method...)
		dst = append(dst, " https://example.com:443"...)
		dst = append(dst, path...)
		if r.Key != "" {
			if strings.IndexByte(path, '?') >= 0 {
				dst = append(dst, '&')
			} else {
				dst = append(dst, '?')
			}
			dst = append(dst, "key="...)
			dst = append(dst, r.Key...)
		}
		dst = append(dst, " HTTP/1.1"...)
	}
	dst = append(dst, `" "tracetest/1.0" ECDHE-RSA-AES128-GCM-SHA256 TLSv1.2 arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/t/0123456789abcdef "Root=1-00000000-000000000000000000000000" "example.com" "-" 0 `...)
	dst = at.AppendFormat(dst, time.RFC3339Nano)
	dst = append(dst, ` "forward" "-" "-" "10.0.0.1:80" "200" "-" "-" TID_0`+"\n"...)
	return dst
}

// appendJSONL appends r as one JSON object, its empty fields left out.
func appendJSONL(dst []byte, at time.Time, method, path string, r trace.Record) []byte {
	dst = append(dst, `{"time":"`...)
	dst = at.AppendFormat(dst, time.RFC3339Nano)
	dst = append(dst, '"')
	if r.Key != "" {
		dst = append(dst, `,"key":`...)
		dst = appendJSONString(dst, r.Key)
	}
	if method != "-" {
		dst = append(dst, `,"method":`...)
		dst = appendJSONString(dst, method)
		dst = append(dst, `,"path":`...)
		dst = appendJSONString(dst, path)
	}
	if r.Status != 0 {
		dst = append(dst, `,"status":`...)
		dst = strconv.AppendInt(dst, int64(r.Status), 10)
	}
	dst = append(dst, "}\n"...)
	return dst
}

// appendCSVLine appends r as a row under csvHeader.
func appendCSVLine(dst []byte, at time.Time, method, path string, r trace.Record) []byte {
	dst = at.AppendFormat(dst, time.RFC3339Nano)
	dst = append(dst, ',')
	dst = append(dst, r.Key...)
	dst = append(dst, ',')
	if method != "-" {
		dst = appendCSV(dst, method)
		dst = append(dst, ',')
		dst = appendCSV(dst, path)
	} else {
		dst = append(dst, ',')
	}
	dst = append(dst, ',')
	if r.Status != 0 {
		dst = strconv.AppendInt(dst, int64(r.Status), 10)
	}
	dst = append(dst, '\n')
	return dst
}

func appendOr(dst []byte, s, none string) []byte {
	if s == "" {
		return append(dst, none...)
	}
	return append(dst, s...)
}

func appendStatus(dst []byte, status int) []byte {
	if status == 0 {
		return append(dst, '-')
	}
	return strconv.AppendInt(dst, int64(status), 10)
}

// appendFraction appends ".ddddddddd" without trailing zeros.
func appendFraction(dst []byte, ns int) []byte {
	var d [10]byte
	d[0] = '.'
	for i := 9; i >= 1; i-- {
		d[i] = byte('0' + ns%10)
		ns /= 10
	}
	n := 10
	for n > 2 && d[n-1] == '0' {
		n--
	}
	return append(dst, d[:n]...)
}

func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c < 0x20:
			dst = append(dst, `\u00`...)
			dst = append(dst, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&15])
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}

func appendCSV(dst []byte, s string) []byte {
	if !strings.ContainsAny(s, ",\"\r\n") {
		return append(dst, s...)
	}
	return append(append(append(dst, '"'), strings.ReplaceAll(s, `"`, `""`)...), '"')
}

// NewReader returns a log of n requests in format f, rec(i) being the
// i-th (from 0), made as it is read: a log of 10⁸ lines costs no memory.
// A record rec cannot write (see Write) ends the log with that error.
func NewReader(f trace.Format, n int, rec func(i int) trace.Record) io.Reader {
	g := &generator{f: f, n: n, rec: rec}
	if f == trace.CSV {
		g.buf = append(g.buf, csvHeader...)
	}
	return g
}

type generator struct {
	f   trace.Format
	n   int
	i   int
	rec func(int) trace.Record
	buf []byte
	off int
	err error
}

func (g *generator) Read(p []byte) (int, error) {
	for g.off == len(g.buf) {
		if g.err != nil {
			return 0, g.err
		}
		if g.i == g.n {
			return 0, io.EOF
		}
		g.buf, g.off = g.buf[:0], 0
		for g.i < g.n && len(g.buf) < 32<<10 {
			var err error
			if g.buf, err = AppendLine(g.buf, g.f, g.rec(g.i)); err != nil {
				g.err = err
				break
			}
			g.i++
		}
	}
	n := copy(p, g.buf[g.off:])
	g.off += n
	return n, nil
}

// RSS is the process's resident set, from /proc (Linux), or "unknown":
// what a test of a log too large to hold reports beside its heap.
func RSS() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
