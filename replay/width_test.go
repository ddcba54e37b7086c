package replay

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/trace"
)

// A table fits 80 columns: a log over two days (whose instants carry the
// date) and two or three runs side by side leave out the first 429 and
// then the worst minute, and say so; --wide keeps them. Keys of up to 20
// characters, an IPv6 /64's, are what the width is measured with; the
// log's path, on the first line, is as long as it was given.
func TestTablesFitEightyColumns(t *testing.T) {
	start := time.Date(2026, 11, 24, 23, 58, 0, 0, time.UTC)
	var recs []trace.Record
	for i := range 600 {
		recs = append(recs, trace.Record{At: start.Add(time.Duration(i) * 400 * time.Millisecond), Key: "ip:2001:db8:7:1::/64", Method: "GET", Path: "/", Status: 200})
	}
	l := scan(t, writeLog(t, "two-days.jsonl", recs), sampleLimit)
	second := sampleLimit
	second.Params = algorithms.Params{Rate: algorithms.Rate{N: 200, Per: time.Minute}, Burst: 50}
	third := second
	third.Algorithm = "sliding-window"
	third.Params = algorithms.Params{Rate: algorithms.Rate{N: 100, Per: time.Minute}, Window: time.Minute}
	run := func(lim sim.Limit, label string) *Run {
		r := replayRun(t, l, l.Scenario(lim, nil))
		r.Label = label
		return r
	}
	tests := []struct {
		name     string
		runs     []*Run
		wantLeft string // the note, "" when every column fits
	}{
		{"one run", []*Run{run(sampleLimit, "")}, "(first 429s left out"},
		{"two runs", []*Run{run(sampleLimit, "limit=100/m"), run(second, "limit=200/m burst=50")}, "(worst minutes left out"},
		{"three runs", []*Run{run(sampleLimit, "limit=100/m"), run(second, "limit=200/m burst=50"), run(third, "algorithm=sliding-window window=1m limit=100/m")}, "(worst minutes left out"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := &Report{Log: l, Runs: tt.runs}
			var narrow, wide bytes.Buffer
			if err := WriteTable(&narrow, rep, TableOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := WriteTable(&wide, rep, TableOptions{Wide: true}); err != nil {
				t.Fatal(err)
			}
			for _, line := range strings.Split(narrow.String(), "\n") {
				if strings.HasPrefix(line, "replay of ") {
					continue // the log's path, as given
				}
				if n := utf8.RuneCountInString(line); n > TableWidth {
					t.Errorf("a line of %d columns:\n%s", n, line)
				}
			}
			if !strings.Contains(narrow.String(), tt.wantLeft) {
				t.Errorf("the narrow table does not say %q:\n%s", tt.wantLeft, narrow.String())
			}
			if !strings.Contains(wide.String(), "WORST MINUTE") || strings.Contains(wide.String(), "left out") {
				t.Errorf("--wide left a column out:\n%s", wide.String())
			}
			t.Logf("\n%s", narrow.String())
		})
	}
}

// The suggestions fit 80 columns too: the outliers' table, a row per
// rate, and the keys each throttles, wrapped, with keys as long as an
// IPv6 /64's.
func TestFrontierFitsEightyColumns(t *testing.T) {
	var recs []trace.Record
	// 11 minutes: every window of the outlier rule, 10m too, is a column.
	for i := range 1320 {
		at := logStart.Add(time.Duration(i) * 500 * time.Millisecond)
		for k := range 8 {
			if i%(k+2) == 0 {
				recs = append(recs, trace.Record{At: at.Add(time.Duration(k) * time.Millisecond), Key: fmt.Sprintf("ip:2001:db8:%d:1::/64", k), Method: "GET", Path: "/", Status: 200})
			}
		}
		recs = append(recs, trace.Record{At: at.Add(9 * time.Millisecond), Key: "ip:2001:db8:99:1::/64", Method: "GET", Path: "/", Status: 200})
		for j := range 20 {
			recs = append(recs, trace.Record{At: at.Add(time.Duration(10+j) * time.Millisecond), Key: "ip:2001:db8:66:1::/64", Method: "GET", Path: "/", Status: 200})
		}
	}
	path := writeLog(t, "frontier.jsonl", recs)
	for _, alg := range []string{"token-bucket", "sliding-window"} {
		l, f, _ := frontierOf(t, path, alg, DefaultHeadroom)
		var out bytes.Buffer
		if err := WriteTable(&out, &Report{Log: l, Runs: shownRuns(f), Frontier: f}, TableOptions{}); err != nil {
			t.Fatal(err)
		}
		l.Close()
		for _, line := range strings.Split(out.String(), "\n") {
			if n := utf8.RuneCountInString(line); n > TableWidth && !strings.HasPrefix(line, "replay of ") {
				t.Errorf("%s: a line of %d columns:\n%s", alg, n, line)
			}
		}
		if !strings.Contains(out.String(), "Keys each throttles") {
			t.Errorf("%s: no frontier:\n%s", alg, out.String())
		}
		t.Logf("\n%s", out.String())
	}
}

// A key of 300 characters is shown in at most 40 columns, its start and
// end kept around an ellipsis, in the table of keys, the outliers and the
// throttled keys' lines: the table stays 80 columns wide.
func TestLongKeysAreShortenedInTables(t *testing.T) {
	var recs []trace.Record
	long := func(i int) string { return strings.Repeat("x", 290) + fmt.Sprintf("%03d", i) }
	for i := range 10 {
		for j := range 20 {
			recs = append(recs, trace.Record{At: logStart.Add(time.Duration(j)*time.Second + time.Duration(i)*time.Millisecond), Key: long(i), Method: "GET", Path: "/", Status: 200})
		}
	}
	for j := range 3000 {
		recs = append(recs, trace.Record{At: logStart.Add(time.Duration(j) * 5 * time.Millisecond), Key: long(99), Method: "GET", Path: "/", Status: 200})
	}
	slices.SortStableFunc(recs, func(x, y trace.Record) int { return x.At.Compare(y.At) })
	l, f, _ := frontierOf(t, writeLog(t, "long.jsonl", recs), "token-bucket", DefaultHeadroom)
	defer l.Close()
	var out bytes.Buffer
	if err := WriteTable(&out, &Report{Log: l, Runs: shownRuns(f), Frontier: f}, TableOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "xxxxxxxxxxxxxxxxxxx…xxxxxxxxxxxxxxxxx099 ") {
		t.Errorf("no shortened key in:\n%s", out.String())
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if n := utf8.RuneCountInString(line); n > TableWidth && !strings.HasPrefix(line, "replay of ") {
			t.Errorf("a line of %d columns: %.60s…", n, line)
		}
	}
}
