package trace_test

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ratelim/ratelim/trace"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// goldens are the sample logs of testdata/, each read with a few keys.
// Each case's records are in testdata/NAME.golden.
var goldens = []struct {
	name, file string
	format     trace.Format
	key        string
	fields     trace.Fields
}{
	{"combined-ip", "combined.log", trace.Combined, "ip", trace.Fields{}},
	{"combined-user", "combined.log", trace.Combined, "user", trace.Fields{}},
	{"combined-query", "combined.log", trace.Combined, "query:api_key", trace.Fields{}},
	{"combined-ua", "combined.log", trace.Combined, "ua", trace.Fields{}},
	{"alb-ip", "alb.log", trace.ALB, "ip", trace.Fields{}},
	{"alb-query", "alb.log", trace.ALB, "query:api_key", trace.Fields{}},
	{"jsonl-header", "requests.jsonl", trace.JSONL, "request.headers.x-api-key", trace.Fields{Method: "request.method", Path: "request.path"}},
	{"jsonl-ip", "requests.jsonl", trace.JSONL, "ip:client", trace.Fields{Method: "request.method", Path: "request.path"}},
	{"csv-key", "requests.csv", trace.CSV, "api_key", trace.Fields{Time: "ts"}},
	{"csv-ip", "requests.csv", trace.CSV, "ip:client", trace.Fields{Time: "ts"}},
}

func TestGolden(t *testing.T) {
	for _, g := range goldens {
		t.Run(g.name, func(t *testing.T) {
			key, err := trace.ParseKey(g.format, g.key)
			if err != nil {
				t.Fatal(err)
			}
			r, err := trace.Open(filepath.Join("testdata", g.file), trace.Options{Format: g.format, Key: key, Fields: g.fields})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			var b strings.Builder
			fmt.Fprintf(&b, "# %s --format %s --key %s\n# line\tat\tkey\tmethod\tpath\tstatus\n", g.file, g.format, g.key)
			eachInOrder(t, r, func(rec trace.Record) {
				fmt.Fprintf(&b, "%d\t%s\t%q\t%q\t%q\t%d\n", rec.Line, rec.At.Format(time.RFC3339Nano), rec.Key, rec.Method, rec.Path, rec.Status)
			})
			st := r.Stats()
			fmt.Fprintf(&b, "# lines %d, requests %d, keyless %d, filtered %d, bad %d\n", st.Lines, st.Requests, st.Keyless, st.Filtered, st.Bad)
			checkGolden(t, filepath.Join("testdata", g.name+".golden"), b.String())
		})
	}
}

// eachInOrder hands each of r's records to f, to the end, failing t on an
// error or on a record earlier than the one before.
func eachInOrder(t *testing.T, r *trace.Reader, f func(trace.Record)) {
	t.Helper()
	var last time.Time
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if rec.At.Before(last) {
			t.Fatalf("line %d at %v comes after %v", rec.Line, rec.At, last)
		}
		last = rec.At
		f(rec)
	}
}

// checkGolden compares got with the file, or rewrites the file with -update.
func checkGolden(t *testing.T, file, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (go test -update rewrites it):\n--- got\n%s--- want\n%s", file, got, want)
	}
}
