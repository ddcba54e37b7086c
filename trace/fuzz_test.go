package trace_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/ratelim/ratelim/trace"
)

// fuzzLog reads data as a log of format f and checks what holds for any
// bytes: no panic; records in time order, ties in line order; lines and
// keys within their bounds; every error either io.EOF, a *LineError
// naming a line that exists, or one of the whole-log errors.
func fuzzLog(t *testing.T, f trace.Format, key string, fields trace.Fields, data []byte) {
	k, err := trace.ParseKey(f, key)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Count(data, []byte("\n")) + 1
	for _, skip := range []bool{false, true} {
		r, err := trace.NewReader(bytes.NewReader(data), "fuzz.log", trace.Options{Format: f, Key: k, Fields: fields, SkipBad: skip, MaxKey: 64, MaxLine: 4096})
		if err != nil {
			continue // a CSV header that names no usable columns
		}
		var last trace.Record
		for n := 0; ; n++ {
			rec, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				var le *trace.LineError
				if errors.As(err, &le) && (le.Line < 1 || le.Line > lines) {
					t.Fatalf("error names line %d of %d: %v", le.Line, lines, err)
				}
				break
			}
			if rec.Line < 1 || rec.Line > lines || len(rec.Key) > 64+len("ip:") {
				t.Fatalf("record %+v out of bounds (%d lines)", rec, lines)
			}
			if n > 0 && (rec.At.Before(last.At) || (rec.At.Equal(last.At) && rec.Line < last.Line)) {
				t.Fatalf("record of line %d (%v) after line %d (%v)", rec.Line, rec.At, last.Line, last.At)
			}
			last = rec
		}
		r.Close()
	}
}

// addSeeds adds each line of a testdata file, and the whole file, to f's
// corpus.
func addSeeds(f *testing.F, name string) {
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f.Add(append([]byte(nil), sc.Bytes()...))
	}
}

func FuzzParseCombined(f *testing.F) {
	addSeeds(f, "combined.log")
	f.Add([]byte(`a - - [01/Mar/2026:12:00:00 +0000] "GET /?k=%zz HTTP/1.1" 200 1 "\" "\\"`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzLog(t, trace.Combined, "ip", trace.Fields{}, data)
		fuzzLog(t, trace.Combined, "query:api_key", trace.Fields{}, data)
	})
}

func FuzzParseALB(f *testing.F) {
	addSeeds(f, "alb.log")
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzLog(t, trace.ALB, "ip", trace.Fields{}, data)
		fuzzLog(t, trace.ALB, "ua", trace.Fields{}, data)
	})
}

func FuzzParseJSONL(f *testing.F) {
	addSeeds(f, "requests.jsonl")
	f.Add([]byte(`{"time":1e9,"request":{"headers":{"x-api-key":"\ud800\u0041"}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzLog(t, trace.JSONL, "request.headers.x-api-key", trace.Fields{Method: "request.method", Path: "request.path"}, data)
		fuzzLog(t, trace.JSONL, "ip:client", trace.Fields{}, data)
	})
}

func FuzzParseCSV(f *testing.F) {
	addSeeds(f, "requests.csv")
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzLog(t, trace.CSV, "api_key", trace.Fields{Time: "ts"}, data)
		fuzzLog(t, trace.CSV, "ip:client", trace.Fields{Time: "ts"}, data)
	})
}
