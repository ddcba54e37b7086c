package trace

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Format is the layout of an access log.
type Format int

// The formats a Reader reads. The zero Format is none: Open refuses it.
const (
	// Combined is the NCSA combined log format that nginx and Apache write
	// by default, and the common log format (the same without the referer
	// and user agent):
	//
	//	127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /a.gif?api_key=abc HTTP/1.0" 200 2326 "http://ref/" "Mozilla/4.08"
	//
	// Anything after the user agent (nginx formats that append
	// $request_time, say) is ignored. The time has whole seconds, or a
	// fraction if the log writes one.
	Combined Format = iota + 1
	// JSONL is one JSON object a line, with the fields named by [Fields].
	JSONL
	// CSV is comma-separated values with a header line naming the columns,
	// which [Fields] picks. A field may be quoted (RFC 4180), but not span
	// lines: one line is one request.
	CSV
	// ALB is the access log of an AWS Application Load Balancer. A request
	// arrives at its request_creation_time; the line's time field is when
	// the balancer sent the response, which is why ALB lines are out of
	// arrival order by up to the slowest response (see Options.Reorder).
	// Fields after request_creation_time are ignored, so logs with fields
	// added since still read.
	ALB
)

var formatNames = map[Format]string{Combined: "combined", JSONL: "jsonl", CSV: "csv", ALB: "alb"}

// String returns the name ParseFormat reads.
func (f Format) String() string {
	if s, ok := formatNames[f]; ok {
		return s
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// ParseFormat reads a format's name as a flag or a YAML file gives it:
// "combined" (also "common", "clf", "nginx", "apache"), "jsonl" (also
// "json", "ndjson"), "csv" or "alb". Case does not matter.
func ParseFormat(s string) (Format, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "combined", "common", "clf", "nginx", "apache":
		return Combined, nil
	case "jsonl", "json", "ndjson":
		return JSONL, nil
	case "csv":
		return CSV, nil
	case "alb":
		return ALB, nil
	}
	return 0, fmt.Errorf("%q is not a log format (want combined, jsonl, csv or alb)", s)
}

// Fields name where a JSONL or CSV log keeps each part of a request: a
// JSON field, which may be a dotted path into nested objects
// ("request.method"), or a CSV column. An empty name is the default
// below; "-" means the log has no such field. A field left at its
// default may be missing from the log (the part is then empty); a
// field named explicitly must be there. Combined and ALB logs have fixed
// layouts and ignore Fields. The request's key is named by its [Key].
type Fields struct {
	// Time is the request's arrival time: "time" by default. It must be
	// present. Its value is an RFC 3339 time (2026-03-01T12:00:00.5Z, any
	// offset), a common log format time (10/Oct/2000:13:55:36 -0700), or a
	// number of TimeUnits since 1970 (1700000000.25), as a JSON number or
	// a string.
	Time string
	// Method is the HTTP method: "method" by default.
	Method string
	// Path is the request's path, with or without its query string:
	// "path" by default. A key "query:NAME" reads its query string.
	Path string
	// Status is the response's HTTP status code: "status" by default.
	Status string
	// TimeUnit is what a numeric time counts: time.Second by default, or
	// time.Millisecond, time.Microsecond, time.Nanosecond.
	TimeUnit time.Duration
}

// fieldName is one of Fields resolved: the name to look for, and whether a
// log must have it.
type fieldName struct {
	name     string
	required bool
}

func (f Fields) resolve() (t, method, path, status fieldName, unit time.Duration, err error) {
	pick := func(name, def string) fieldName {
		switch name {
		case "":
			return fieldName{name: def}
		case "-":
			return fieldName{}
		}
		return fieldName{name: name, required: true}
	}
	t = pick(f.Time, "time")
	if t.name == "" {
		return t, method, path, status, 0, fmt.Errorf("trace: the time field cannot be %q: every request needs a time", f.Time)
	}
	t.required = true
	unit = f.TimeUnit
	switch unit {
	case 0:
		unit = time.Second
	case time.Second, time.Millisecond, time.Microsecond, time.Nanosecond:
	default:
		return t, method, path, status, 0, fmt.Errorf("trace: time unit %v is not one of s, ms, us, ns", unit)
	}
	return t, pick(f.Method, "method"), pick(f.Path, "path"), pick(f.Status, "status"), unit, nil
}

// ParseTimeUnit reads the unit of numeric timestamps as a flag gives it:
// "s", "ms", "us" (or "µs") or "ns".
func ParseTimeUnit(s string) (time.Duration, error) {
	switch strings.TrimSpace(s) {
	case "s", "sec":
		return time.Second, nil
	case "ms":
		return time.Millisecond, nil
	case "us", "µs", "μs":
		return time.Microsecond, nil
	case "ns":
		return time.Nanosecond, nil
	}
	return 0, fmt.Errorf("%q is not a time unit (want s, ms, us or ns)", s)
}

// GuessFormat names the format of the log at path from its name (.jsonl,
// .ndjson, .json, .csv, with or without .gz), else from its first line,
// gzipped or not: a JSON object is JSONL, an ALB entry (a request type and
// an RFC 3339 time) is ALB, and anything else, standard input ("-"), a
// pipe, a device and a file that cannot be read included, is Combined, whose reader then says
// what is wrong.
func GuessFormat(path string) Format {
	base := strings.TrimSuffix(strings.ToLower(filepath.Base(path)), ".gz")
	switch filepath.Ext(base) {
	case ".jsonl", ".ndjson", ".json":
		return JSONL
	case ".csv":
		return CSV
	}
	if path == "-" {
		return Combined
	}
	// Only a regular file is peeked at: what is read of a pipe or a
	// device is gone for the reader, which would start mid-log, and
	// /dev/zero has no first line.
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
		return Combined
	}
	f, err := os.Open(path)
	if err != nil {
		return Combined
	}
	defer f.Close()
	br := bufio.NewReader(f)
	var in io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return Combined
		}
		defer zr.Close()
		in = zr
	}
	line, _ := bufio.NewReaderSize(in, 64<<10).ReadSlice('\n')
	text := strings.TrimSpace(string(line))
	if strings.HasPrefix(text, "{") {
		return JSONL
	}
	fields := strings.Fields(text)
	if len(fields) > 2 && slices.Contains([]string{"http", "https", "h2", "grpcs", "ws", "wss"}, fields[0]) {
		if _, err := time.Parse(time.RFC3339Nano, fields[1]); err == nil {
			return ALB
		}
	}
	return Combined
}
