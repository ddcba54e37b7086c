package trace_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratelim/ratelim/trace"
	"github.com/ratelim/ratelim/trace/tracetest"
)

var formats = []trace.Format{trace.Combined, trace.JSONL, trace.CSV, trace.ALB}

// readAll reads every record, or fails the test.
func readAll(t *testing.T, r *trace.Reader) []trace.Record {
	t.Helper()
	var out []trace.Record
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rec)
	}
}

// readErr reads until an error other than io.EOF, and returns it.
func readErr(r *trace.Reader) error {
	for {
		if _, err := r.Next(); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

func newReader(t *testing.T, log string, opts trace.Options) *trace.Reader {
	t.Helper()
	r, err := trace.NewReader(strings.NewReader(log), "access.log", opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// randomRecords are n records in time order, each moved back by up to
// jitter, in file order: what a log written as responses finish looks like.
func randomRecords(rng *rand.Rand, n int, jitter time.Duration) []trace.Record {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	keys := []string{"alpha", "beta", "gamma", "", "key-with.dots_and:colons"}
	methods := []string{"GET", "POST", "DELETE", ""}
	var out []trace.Record
	at := t0
	for i := range n {
		at = at.Add(time.Duration(rng.Int64N(int64(50 * time.Millisecond))))
		r := trace.Record{
			At:     at.Add(-time.Duration(rng.Int64N(int64(jitter) + 1))),
			Key:    keys[rng.IntN(len(keys))],
			Method: methods[rng.IntN(len(methods))],
			Path:   []string{"/", "/api/items", "/a,b", `/q"x`}[rng.IntN(4)],
			Status: []int{200, 429, 0}[rng.IntN(3)],
			Line:   i + 1,
		}
		if r.Method == "" {
			r.Path = ""
		}
		out = append(out, r)
	}
	return out
}

// TestRoundTrip writes records out of order within the window in each
// format and reads them back in arrival order.
func TestRoundTrip(t *testing.T) {
	for _, f := range formats {
		t.Run(f.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, uint64(f)))
			recs := randomRecords(rng, 2000, time.Second)
			if f == trace.Combined || f == trace.ALB {
				// Their request lines cannot hold a quote or a comma
				// as written here.
				for i := range recs {
					recs[i].Path = strings.NewReplacer(`"`, "", ",", "").Replace(recs[i].Path)
				}
			}
			if f == trace.ALB {
				for i := range recs {
					recs[i].At = recs[i].At.Truncate(time.Microsecond)
					if recs[i].Method == "" {
						recs[i].Key = "" // a malformed request has no query
					}
				}
			}
			var buf bytes.Buffer
			if err := tracetest.Write(&buf, f, recs); err != nil {
				t.Fatal(err)
			}
			r := newReader(t, buf.String(), tracetest.Options(f))
			got := readAll(t, r)
			want := slices.Clone(recs)
			if f == trace.CSV {
				for i := range want {
					want[i].Line++ // the header
				}
			}
			slices.SortStableFunc(want, func(a, b trace.Record) int { return a.At.Compare(b.At) })
			if len(got) != len(want) {
				t.Fatalf("%d records, want %d", len(got), len(want))
			}
			for i := range want {
				if g, w := got[i], want[i]; !g.At.Equal(w.At) || g.Key != w.Key || g.Method != w.Method || g.Path != w.Path || g.Status != w.Status || g.Line != w.Line {
					t.Fatalf("record %d:\n got %+v\nwant %+v", i, g, w)
				}
			}
		})
	}
}

func TestOutOfOrder(t *testing.T) {
	log := `1.1.1.1 - - [01/Mar/2026:12:00:00 +0000] "GET / HTTP/1.1" 200 1
1.1.1.1 - - [01/Mar/2026:12:05:03 +0000] "GET / HTTP/1.1" 200 1
1.1.1.1 - - [01/Mar/2026:12:05:01 +0000] "GET / HTTP/1.1" 200 1
1.1.1.1 - - [01/Mar/2026:12:00:00 +0000] "GET / HTTP/1.1" 200 1
`
	tests := []struct {
		reorder time.Duration
		want    string
	}{
		{0, "access.log:4: timestamp 2026-03-01T12:00:00Z: 5m3s earlier than line 2's (logs must be in time order; lines may be out of order by at most 2s, see --reorder)"},
		{-1, "access.log:3: timestamp 2026-03-01T12:05:01Z: 2s earlier than line 2's (logs must be in time order; no line may be out of order, see --reorder)"},
		{time.Second, "access.log:3: timestamp 2026-03-01T12:05:01Z: 2s earlier than line 2's (logs must be in time order; lines may be out of order by at most 1s, see --reorder)"},
	}
	for _, tt := range tests {
		r := newReader(t, log, trace.Options{Format: trace.Combined, Reorder: tt.reorder})
		err := readErr(r)
		var le *trace.LineError
		if !errors.As(err, &le) || err.Error() != tt.want {
			t.Errorf("reorder %v: %v\nwant %s", tt.reorder, err, tt.want)
		}
		if err2 := readErr(r); err2 != err {
			t.Errorf("reorder %v: next error %v, want the same again", tt.reorder, err2)
		}
	}
	// With a window of 10m, the file reads, in order, ties in file order.
	r := newReader(t, log, trace.Options{Format: trace.Combined, Reorder: 10 * time.Minute})
	var lines []int
	for _, rec := range readAll(t, r) {
		lines = append(lines, rec.Line)
	}
	if !slices.Equal(lines, []int{1, 4, 3, 2}) {
		t.Errorf("lines in order %v, want [1 4 3 2]", lines)
	}
}

func TestLineErrors(t *testing.T) {
	const ok = `1.1.1.1 - - [01/Mar/2026:12:00:00 +0000] "GET / HTTP/1.1" 200 1`
	tests := []struct {
		format trace.Format
		line   string
		want   string
	}{
		{trace.Combined, `1.1.1.1 - - 01/Mar/2026:12:00:00 +0000 "GET /" 200 1`, `access.log:2: "01/Mar/2026:12:00:00 +0000 \"GET /\" 200 1" where the time should be (want a combined log line: host ident user [time] "request" status bytes ...)`},
		{trace.Combined, `1.1.1.1 - - [01/Mar/2026:12:00:00 +0000 "GET /" 200 1`, `access.log:2: the time has no closing ] (want [10/Oct/2000:13:55:36 -0700])`},
		{trace.Combined, `1.1.1.1 - - [01/Mrz/2026:12:00:00 +0000] "GET /" 200 1`, `access.log:2: time "01/Mrz/2026:12:00:00 +0000" is not a log time (want e.g. 10/Oct/2000:13:55:36 -0700)`},
		{trace.Combined, `1.1.1.1 - - [31/Feb/2026:12:00:00 +0000] "GET /" 200 1`, `access.log:2: time "31/Feb/2026:12:00:00 +0000": day 31 out of range`},
		{trace.Combined, `1.1.1.1 - - [01/Mar/2026:12:00:00 +0000] "GET / 200 1`, `access.log:2: request: a quoted field has no closing quote (want "..." with \" for a quote inside)`},
		{trace.Combined, `1.1.1.1 - - [01/Mar/2026:12:00:00 +0000] "GET /" OK 1`, `access.log:2: status "OK" is not an HTTP status (want three digits, e.g. 200)`},
		{trace.Combined, `1.1.1.1 - - [01/Mar/2026:12:00:00 +0000] "GET /" 200 1 "ref" "ua`, `access.log:2: user agent: a quoted field has no closing quote (want "..." with \" for a quote inside)`},
		{trace.JSONL, `{"time":"2026-03-01T12:00:00Z","key":"a"`, `access.log:2: the JSON ends early (want "," or "}"; is the line cut off?)`},
		{trace.JSONL, `{"key":"a"}`, `access.log:2: no "time" field (want the request's time there)`},
		{trace.JSONL, `{"time":"yesterday"}`, `access.log:2: time: time "yesterday" is not a timestamp (want RFC 3339, e.g. 2026-03-01T12:00:00Z, or seconds since 1970)`},
		{trace.JSONL, `{"time":"2026-03-01T12:00:00"}`, `access.log:2: time: time "2026-03-01T12:00:00" is not RFC 3339 (want RFC 3339, e.g. 2026-03-01T12:00:00.5Z)`},
		{trace.JSONL, `{"time":1772366400,"key":{"a":1}}`, `access.log:2: key is an object or array (want a string or a number)`},
		{trace.JSONL, `{"time":1772366400} x`, `access.log:2: "x" after the JSON object (want one object a line)`},
		{trace.JSONL, `[1]`, `access.log:2: "[1]" is not a JSON object (want one {...} a line)`},
		{trace.JSONL, `{"time":1772366400,"status":2000}`, `access.log:2: status: status "2000" is not an HTTP status (want three digits, e.g. 200)`},
		{trace.JSONL, `{"time":1772366400,"a":tru}`, `access.log:2: JSON: "tru}" at byte 24 (want a value)`},
		{trace.JSONL, `{"time":1e400}`, `access.log:2: time: time "1e400" is not a number (want a number of seconds since 1970, e.g. 1700000000.25)`},
		{trace.JSONL, `{"time":99999999999999999999}`, `access.log:2: time: time "99999999999999999999": out of range (want a year between 1678 and 2261)`},
		{trace.CSV, `2026-03-01T12:00:00Z`, `access.log:2: the line has 1 columns, the header 2 (want one value a column)`},
		{trace.CSV, `2026-03-01T12:00:00Z,"a`, `access.log:2: a quoted field has no closing quote on its line (want "..." with "" for a quote inside; a field cannot span lines)`},
		{trace.CSV, `2026-03-01T12:00:00Z,"a"b`, `access.log:2: "b" right after a quoted field (want a comma)`},
		{trace.ALB, `https 2026-03-01T12:00:00Z app/x 1.1.1.1:1 2.2.2.2:80 0 0 0 200 200`, `access.log:2: the line has 10 fields, an ALB log line at least 22 (want type time elb client:port ... request_creation_time ...)`},
	}
	heads := map[trace.Format]string{
		trace.Combined: ok,
		trace.JSONL:    `{"time":"2026-03-01T12:00:00Z"}`,
		trace.CSV:      "time,key\n2026-03-01T12:00:00Z,a",
		trace.ALB:      `https 2026-03-01T12:00:00.1Z app/x 1.1.1.1:1 2.2.2.2:80 0.0 0.0 0.0 200 200 1 1 "GET https://h:443/ HTTP/1.1" "ua" - - arn "Root" "h" "-" 0 2026-03-01T12:00:00Z "forward" "-"`,
	}
	for _, tt := range tests {
		head := heads[tt.format]
		if tt.format == trace.CSV {
			// The header is line 1, a good line 2.
			tt.want = strings.Replace(tt.want, "access.log:2:", "access.log:3:", 1)
		}
		r := newReader(t, head+"\n"+tt.line+"\n", trace.Options{Format: tt.format})
		err := readErr(r)
		var le *trace.LineError
		if !errors.As(err, &le) || err.Error() != tt.want {
			t.Errorf("%s %q:\n got %v\nwant %s", tt.format, tt.line, err, tt.want)
		}
	}
}

func TestSkipBad(t *testing.T) {
	var b strings.Builder
	for i := range 20 {
		if i%3 == 0 {
			b.WriteString("garbage\n")
			continue
		}
		b.WriteString(`{"time":"2026-03-01T12:00:0` + string(rune('0'+i%10)) + `Z","key":"k"}` + "\n")
	}
	r := newReader(t, b.String(), trace.Options{Format: trace.JSONL, SkipBad: true, Reorder: 10 * time.Second})
	recs := readAll(t, r)
	n, first := r.Skipped()
	if len(recs) != 13 || n != 7 || len(first) != trace.MaxBadExamples || first[0].Line != 1 || first[1].Line != 4 {
		t.Errorf("%d records, %d skipped, first %v", len(recs), n, first)
	}
	// Nothing readable is an error even with SkipBad.
	r = newReader(t, "garbage\nmore garbage\n", trace.Options{Format: trace.JSONL, SkipBad: true})
	err := readErr(r)
	want := `trace: access.log: no line of its 2 can be read (want JSON objects, one a line); the first: access.log:1: "garbage" is not a JSON object (want one {...} a line)`
	if err == nil || err.Error() != want {
		t.Errorf("all bad: %v\nwant %s", err, want)
	}
}

func TestEmpty(t *testing.T) {
	for _, tt := range []struct {
		format trace.Format
		log    string
		want   string
	}{
		{trace.Combined, "", "trace: access.log: no requests in it (want combined log lines)"},
		{trace.Combined, "\n\n  \n", "trace: access.log: no requests in it (want combined log lines)"},
		{trace.CSV, "time,key\n", "trace: access.log: no requests in it (want CSV lines after the header)"},
	} {
		r := newReader(t, tt.log, trace.Options{Format: tt.format})
		if err := readErr(r); err == nil || err.Error() != tt.want {
			t.Errorf("%q: %v, want %s", tt.log, err, tt.want)
		}
	}
	if _, err := trace.NewReader(strings.NewReader(""), "a.csv", trace.Options{Format: trace.CSV}); err == nil ||
		err.Error() != "trace: a.csv: empty (want a CSV header line naming the columns)" {
		t.Errorf("empty CSV: %v", err)
	}
	if _, err := trace.NewReader(strings.NewReader("ts,who\n"), "a.csv", trace.Options{Format: trace.CSV}); err == nil ||
		err.Error() != `a.csv:1: header: no column "time" (want one of ts, who)` {
		t.Errorf("CSV without a time column: %v", err)
	}
}

func TestLongLineAndKey(t *testing.T) {
	good := `{"time":"2026-03-01T12:00:00Z","key":"k"}` + "\n"
	long := `{"time":"2026-03-01T12:00:00Z","key":"k","pad":"` + strings.Repeat("x", 3<<20) + "\"}\n"
	longKey := `{"time":"2026-03-01T12:00:00Z","key":"` + strings.Repeat("k", 2000) + "\"}\n"
	r := newReader(t, good+long+longKey+good, trace.Options{Format: trace.JSONL, SkipBad: true})
	recs := readAll(t, r)
	n, first := r.Skipped()
	if len(recs) != 2 || recs[1].Line != 4 || n != 2 {
		t.Fatalf("%d records (%v), %d skipped", len(recs), recs, n)
	}
	if got, want := first[0].Error(), "access.log:2: the line is longer than 1048576 bytes (want at most that; see Options.MaxLine)"; got != want {
		t.Errorf("long line: %s, want %s", got, want)
	}
	if got, want := first[1].Error(), "access.log:3: key is 2000 bytes long (want at most 1024; see Options.MaxKey)"; got != want {
		t.Errorf("long key: %s, want %s", got, want)
	}
}

func TestOpenGzipAndStdin(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "combined.log"))
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(data)
	zw.Close()
	// No .gz in the name: the magic bytes tell.
	file := filepath.Join(t.TempDir(), "access.log.1")
	if err := os.WriteFile(file, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{file, "-"} {
		r, err := trace.Open(name, trace.Options{Format: trace.Combined, Stdin: bytes.NewReader(gz.Bytes())})
		if err != nil {
			t.Fatal(err)
		}
		if recs := readAll(t, r); len(recs) != 25 {
			t.Errorf("%s: %d records, want 25", name, len(recs))
		}
		if err := r.Close(); err != nil {
			t.Error(err)
		}
	}
	if _, err := trace.Open(filepath.Join(t.TempDir(), "nope.log"), trace.Options{Format: trace.Combined}); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	r, _ := trace.Open("-", trace.Options{Format: trace.Combined, Stdin: strings.NewReader("bad\n")})
	if err := readErr(r); err == nil || !strings.HasPrefix(err.Error(), "stdin:1: ") {
		t.Errorf("stdin error: %v, want it to name stdin", err)
	}
}

func TestFilters(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var recs []trace.Record
	for i := range 100 {
		recs = append(recs, trace.Record{At: t0.Add(time.Duration(i) * time.Second), Key: "k",
			Method: []string{"GET", "POST"}[i%2], Path: []string{"/api/v1/items", "/api/v1/x/items", "/health"}[i%3], Status: 200})
	}
	var buf bytes.Buffer
	if err := tracetest.Write(&buf, trace.JSONL, recs); err != nil {
		t.Fatal(err)
	}
	count := func(o trace.Options) (int, trace.Stats) {
		o.Format = trace.JSONL
		r := newReader(t, buf.String(), o)
		n := 0
		for _, rec := range readAll(t, r) {
			n++
			if (!o.From.IsZero() && rec.At.Before(o.From)) || (!o.Until.IsZero() && !rec.At.Before(o.Until)) {
				t.Errorf("%v is outside [%v, %v)", rec.At, o.From, o.Until)
			}
		}
		return n, r.Stats()
	}
	tests := []struct {
		name string
		o    trace.Options
		want int
	}{
		{"all", trace.Options{}, 100},
		{"from", trace.Options{From: t0.Add(90 * time.Second)}, 10},
		{"until", trace.Options{Until: t0.Add(10 * time.Second)}, 10},
		{"both", trace.Options{From: t0.Add(10 * time.Second), Until: t0.Add(20 * time.Second)}, 10},
		{"prefix", trace.Options{PathPrefix: "/api/"}, 67},
		{"glob", trace.Options{PathGlob: "/api/*/items"}, 34},
		{"method", trace.Options{Methods: []string{"post"}}, 50},
		{"glob and method", trace.Options{PathGlob: "/api/*/items", Methods: []string{"GET"}}, 17},
	}
	for _, tt := range tests {
		n, st := count(tt.o)
		if n != tt.want || st.Requests != n {
			t.Errorf("%s: %d requests (stats %+v), want %d", tt.name, n, st, tt.want)
		}
	}
	// Until stops the reading early.
	if _, st := count(trace.Options{Until: t0.Add(10 * time.Second)}); st.Lines != 13 {
		t.Errorf("until: read %d lines, want 13 (10 kept, 2s of reorder window, one past it)", st.Lines)
	}
	if _, err := trace.NewReader(strings.NewReader(""), "x", trace.Options{Format: trace.JSONL, PathGlob: "[x"}); err == nil {
		t.Error("a bad glob was taken")
	}
}

func TestMaxPending(t *testing.T) {
	var b strings.Builder
	for range 100 {
		b.WriteString(`{"time":"2026-03-01T12:00:00Z","key":"k"}` + "\n")
	}
	r := newReader(t, b.String(), trace.Options{Format: trace.JSONL, MaxPending: 10, SkipBad: true})
	err := readErr(r)
	want := "trace: access.log:11: more than 10 requests within 2s of each other (want fewer; a smaller --reorder holds fewer back)"
	if err == nil || err.Error() != want {
		t.Errorf("%v\nwant %s", err, want)
	}
}

func TestParseFormatAndKey(t *testing.T) {
	for _, s := range []string{"combined", "Common", "nginx", "jsonl", "ndjson", "csv", "ALB"} {
		f, err := trace.ParseFormat(s)
		if err != nil {
			t.Errorf("ParseFormat(%q): %v", s, err)
		}
		if g, err := trace.ParseFormat(f.String()); err != nil || g != f {
			t.Errorf("ParseFormat(%q.String()) = %v, %v", s, g, err)
		}
	}
	if _, err := trace.ParseFormat("w3c"); err == nil || err.Error() != `"w3c" is not a log format (want combined, jsonl, csv or alb)` {
		t.Errorf("ParseFormat(w3c): %v", err)
	}
	good := map[trace.Format][]string{
		trace.Combined: {"ip", "user", "ua", "path", "query:api_key"},
		trace.ALB:      {"ip", "ua", "path", "query:api_key"},
		trace.JSONL:    {"key", "request.headers.x-api-key", "ip:client", "query:api_key"},
		trace.CSV:      {"api_key", "ip:client"},
	}
	for f, specs := range good {
		for _, s := range specs {
			k, err := trace.ParseKey(f, s)
			if err != nil || k.String() != s {
				t.Errorf("ParseKey(%v, %q) = %v, %v", f, s, k, err)
			}
		}
	}
	for _, tt := range []struct {
		f    trace.Format
		s    string
		want string
	}{
		{trace.ALB, "user", `"user" is not a key of a alb log (want ip, ua, path or query:NAME)`},
		{trace.Combined, "query:", `"query:" is not a key of a combined log (want ip, user, ua, path or query:NAME)`},
		{trace.JSONL, "", `an empty key is not a key of a jsonl log (want a field name, ip:FIELD or query:NAME)`},
	} {
		if _, err := trace.ParseKey(tt.f, tt.s); err == nil || err.Error() != tt.want {
			t.Errorf("ParseKey(%v, %q): %v, want %s", tt.f, tt.s, err, tt.want)
		}
	}
	k, _ := trace.ParseKey(trace.Combined, "user")
	if _, err := trace.NewReader(strings.NewReader(""), "x", trace.Options{Format: trace.ALB, Key: k}); err == nil {
		t.Error("a combined key was taken for an ALB log")
	}
	if _, err := trace.NewReader(strings.NewReader(""), "x", trace.Options{}); err == nil {
		t.Error("no format was taken")
	}
}

func TestIPv6PrefixLen(t *testing.T) {
	log := `2001:db8:1:2:3:4:5:6 - - [01/Mar/2026:12:00:00 +0000] "GET / HTTP/1.1" 200 1` + "\n" +
		`host.example - - [01/Mar/2026:12:00:00 +0000] "GET / HTTP/1.1" 200 1` + "\n"
	for bits, want := range map[int]string{0: "ip:2001:db8:1:2::/64", 48: "ip:2001:db8:1::/48", 128: "ip:2001:db8:1:2:3:4:5:6"} {
		recs := readAll(t, newReader(t, log, trace.Options{Format: trace.Combined, IPv6PrefixLen: bits}))
		if recs[0].Key != want || recs[1].Key != "ip:host.example" {
			t.Errorf("IPv6PrefixLen %d: keys %q, %q; want %q, ip:host.example", bits, recs[0].Key, recs[1].Key, want)
		}
	}
}

// TestJSONLFieldNone is a JSONL log read with fields named "-" (none):
// the parts they stand for are empty, whatever the line has under the
// names they would default to, and a line has no need of them.
func TestJSONLFieldNone(t *testing.T) {
	const log = `{"time":"2026-03-01T12:00:00Z","method":"GET","path":"/a","status":500,"key":"k1"}
{"time":"2026-03-01T12:00:01Z","key":"k2"}
`
	r, err := trace.NewReader(strings.NewReader(log), "none.jsonl", trace.Options{Format: trace.JSONL, Fields: trace.Fields{Method: "-", Status: "-"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []trace.Record{
		{At: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), Key: "k1", Path: "/a", Line: 1},
		{At: time.Date(2026, 3, 1, 12, 0, 1, 0, time.UTC), Key: "k2", Line: 2},
	}
	for _, w := range want {
		got, err := r.Next()
		if err != nil || got != w {
			t.Fatalf("Next() = %+v, %v; want %+v", got, err, w)
		}
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("after the last: %v, want EOF", err)
	}
}

// TestCRLFLines is logs written with Windows line endings: the "\r" is
// the line ending's, not the last field's (a combined log line that ends
// at its status, a CSV key in the last column).
func TestCRLFLines(t *testing.T) {
	for _, c := range []struct {
		format trace.Format
		key    string
		first  int // the line of the first request
		log    string
	}{
		{trace.Combined, "ip", 1, "10.0.0.1 - - [01/Mar/2026:12:00:00 +0000] \"GET / HTTP/1.1\" 200\r\n\r\n10.0.0.2 - - [01/Mar/2026:12:00:01 +0000] \"GET / HTTP/1.1\" 429"},
		{trace.CSV, "key", 2, "time,key\r\n2026-03-01T12:00:00Z,k1\r\n\r\n2026-03-01T12:00:01Z,k2"},
	} {
		key, err := trace.ParseKey(c.format, c.key)
		if err != nil {
			t.Fatal(err)
		}
		r, err := trace.NewReader(strings.NewReader(c.log), "crlf", trace.Options{Format: c.format, Key: key, Fields: trace.Fields{Method: "-", Path: "-", Status: "-"}})
		if err != nil {
			t.Fatal(err)
		}
		for n := range 2 {
			if got, err := r.Next(); err != nil || got.Line != c.first+2*n {
				t.Fatalf("%s: Next() = %+v, %v; want line %d", c.format, got, err, c.first+2*n)
			}
		}
		if _, err := r.Next(); err != io.EOF {
			t.Fatalf("%s: after the last: %v, want EOF", c.format, err)
		}
	}
}
