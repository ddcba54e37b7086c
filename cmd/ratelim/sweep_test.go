package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ratelim/ratelim/scenarios/scenariotest"
	"github.com/ratelim/ratelim/sim"
)

// The table of a sweep is a golden: the rows, the exact limiter's
// figures, the line saying where the worst second leaves the exact one,
// each line within 80 columns.
func TestSimSweepGolden(t *testing.T) {
	args := []string{"sim", "sync-interval", "--sweep", "sync-interval=0,100ms,never"}
	code, out, errOut := runArgs(args...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	golden(t, "sim-sync-interval-sweep.table", []byte(out))
	for _, line := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(line); n > 80 {
			t.Errorf("line of %d columns, want at most 80: %q", n, line)
		}
	}
}

// The output is the same whatever the runs' order of finishing: one at a
// time and two at once print the same bytes, in every format.
func TestSimSweepIsDeterministic(t *testing.T) {
	for _, format := range []string{"table", "json", "csv"} {
		var outs []string
		for _, parallel := range []string{"1", "2"} {
			code, out, errOut := runArgs("sim", "sync-interval", "--sweep", "sync-interval=never,0,50ms,100ms", "--parallel", parallel, "--format", format)
			if code != exitOK {
				t.Fatalf("%s --parallel %s: exit %d: %s", format, parallel, code, errOut)
			}
			outs = append(outs, out)
		}
		if outs[0] != outs[1] {
			t.Errorf("--format %s: --parallel 1 and 2 differ:\n%s\n---\n%s", format, outs[0], outs[1])
		}
	}
}

// Each row is the run of its value alone: the sweep's JSON row for
// 100ms has the figures `sim --sync-interval 100ms` has.
func TestSimSweepRowsAreTheRuns(t *testing.T) {
	code, out, errOut := runArgs("sim", "sync-interval", "--sweep", "sync-interval=0,100ms,never", "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got struct {
		Schema, Scenario, Field string
		Rows                    []SweepRow
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got.Schema != SweepSchema || got.Field != "sync-interval" || got.Scenario != "sync-interval" || len(got.Rows) != 3 {
		t.Fatalf("json: %s of %s over %s with %d rows; want %s, sync-interval, 3 rows", got.Schema, got.Scenario, got.Field, len(got.Rows), SweepSchema)
	}
	for i, value := range []string{"0", "100ms", "never"} {
		code, one, errOut := runArgs("sim", "sync-interval", "--sync-interval", value, "--format", "json")
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", value, code, errOut)
		}
		var r sim.Result
		if err := json.Unmarshal([]byte(one), &r); err != nil {
			t.Fatal(err)
		}
		row := got.Rows[i]
		want := SweepRow{Value: value}
		want.summarise(&r)
		if row.Value != value || row.Allowed != want.Allowed || row.IdealAllowed != want.IdealAllowed || row.WorstKey != want.WorstKey ||
			row.MaxAllowed1s != want.MaxAllowed1s || row.IdealMaxAllowed1s != want.IdealMaxAllowed1s || row.DesignBound1s != want.DesignBound1s || row.PeakRatio != want.PeakRatio {
			t.Errorf("row %d: %+v, want the run of --sync-interval %s: %+v", i, row, value, want)
		}
	}
	// The exact limiter admits the same at every interval; a synced run
	// admits more the longer it waits, and 0 is the shared store.
	if r := got.Rows; r[0].PeakRatio != 1 || r[1].PeakRatio <= 1.05 || r[2].MaxAllowed1s < r[1].MaxAllowed1s || r[1].DesignBound1s == 0 || r[0].DesignBound1s != 0 {
		t.Errorf("rows %+v: want 0 exact, 100ms over with a bound, never the most and no bound", r)
	}

	code, out, _ = runArgs("sim", "sync-interval", "--sweep", "sync-interval=0,100ms,never", "--format", "csv")
	records, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if code != exitOK || err != nil || len(records) != 4 || records[0][0] != "field" || records[2][1] != "100ms" || records[2][6] != strconv.FormatInt(got.Rows[1].MaxAllowed1s, 10) {
		t.Errorf("csv: exit %d, %v, %q; want a header and a row per value", code, err, records)
	}
}

// --plot draws the sweep, as .png or .svg, through the one writer of
// files: the SVG names each value as typed, in order.
func TestSimSweepPlot(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sweep.svg")
	code, _, errOut := runArgs("sim", "sync-interval", "--sweep", "sync-interval=0,100ms,never", "--plot", path, "-q")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i0, i100, inever := strings.Index(s, ">0<"), strings.Index(s, ">100ms<"), strings.Index(s, ">never<")
	if i0 < 0 || i100 < i0 || inever < i100 || !strings.Contains(s, "sync-interval: what a sweep of sync-interval admits") {
		t.Errorf("the sweep's SVG lacks its title or its values in order (0 at %d, 100ms at %d, never at %d)", i0, i100, inever)
	}
}

// A sweep's runs are held to --max-requests together, as ratelim
// sweep's are, and refused before any run starts.
func TestSimSweepBoundsEachRun(t *testing.T) {
	code, out, errOut := runArgs("sim", "sync-interval", "--sweep", "sync-interval=0,100ms", "--max-requests", "10")
	if code != exitTooBig || out != "" || !strings.Contains(errOut, "sync-interval would send more than 10 requests in its 2 runs") {
		t.Errorf("exit %d, %q; want %d and the runs' sum refused", code, errOut, exitTooBig)
	}
}

// sim --sweep sets any field --vs takes, through the plan ratelim sweep
// has: a short form, a path into the file, a fault's start; each row is
// the run of `sim --set FIELD=VALUE`, figure for figure.
func TestSimSweepSetsAnyField(t *testing.T) {
	for _, tc := range []struct {
		scenario, field string
		values          []string
	}{
		{"sync-interval", "burst", []string{"5", "40"}},
		{"sync-interval", "limit.burst", []string{"5", "40"}},
		{"partition", "faults[0].start", []string{"5s", "15s"}},
	} {
		code, out, errOut := runArgs("sim", tc.scenario, "--sweep", tc.field+"="+strings.Join(tc.values, ","), "--format", "json")
		if code != exitOK {
			t.Fatalf("--sweep %s: exit %d: %s", tc.field, code, errOut)
		}
		var got sweepJSON
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		if len(got.Rows) != len(tc.values) || got.Field != tc.field {
			t.Fatalf("--sweep %s: %d rows of %q; want %d", tc.field, len(got.Rows), got.Field, len(tc.values))
		}
		for i, v := range tc.values {
			code, out, errOut := runArgs("sim", tc.scenario, "--set", tc.field+"="+v, "--format", "json")
			if code != exitOK {
				t.Fatalf("--set %s=%s: exit %d: %s", tc.field, v, code, errOut)
			}
			var one sim.Result
			if err := json.Unmarshal([]byte(out), &one); err != nil {
				t.Fatal(err)
			}
			if row, tot := got.Rows[i], one.Totals(); row.Value != v || row.Allowed != tot.Allowed || row.IdealAllowed != tot.IdealAllowed || row.Result.Totals() != tot {
				t.Errorf("--sweep %s row %s: admitted %d, exact %d; want sim --set's %d, %d", tc.field, row.Value, row.Allowed, row.IdealAllowed, tot.Allowed, tot.IdealAllowed)
			}
		}
	}
}

// On a terminal, a sweep that has run a second says how many of its runs
// are done, and erases the line at the end.
func TestSweepProgress(t *testing.T) {
	f := scenariotest.Builtin(t, "sync-interval")
	var errOut bytes.Buffer
	prog := newProgress(&errOut, true, "simulating")
	prog.started = prog.started.Add(-2 * time.Second)
	results, errs := make([]*sim.Result, 2), make([]error, 2)
	runSweep(context.Background(), prog, 2, func(int) (sim.Scenario, error) { return f, nil }, sim.Options{}, 2, func(i int, r *sim.Result, err error) {
		results[i], errs[i] = r, err
	})
	if errs[0] != nil || errs[1] != nil || results[0] == nil || results[1] == nil {
		t.Fatalf("runs: %v", errs)
	}
	if s := errOut.String(); !strings.Contains(s, "simulating: ") || !strings.Contains(s, " of 2 runs done") || !strings.HasSuffix(s, "\r\033[K") {
		t.Errorf("progress %q: want runs counted, then erased", s)
	}
}

// sim --sweep reads its values as `ratelim sweep` does: a range is its
// values, in order.
func TestSimSweepTakesRanges(t *testing.T) {
	code, out, errOut := runArgs("sim", "sync-interval", "--sweep", "servers=2..6+2", "--format", "csv")
	records, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if code != exitOK || err != nil || len(records) != 4 || records[1][1] != "2" || records[2][1] != "4" || records[3][1] != "6" {
		t.Errorf("exit %d, %v, %q (%s); want a row for 2, 4 and 6 servers", code, err, records, errOut)
	}
}

// The finding line reads for any rows: one value, or every value over
// at one ratio, is stated once, never "from 2.54× at 100ms up to 2.54×
// at 100ms".
func TestSweepFindingOneRatio(t *testing.T) {
	for _, tc := range []struct {
		rows []SweepRow
		want string
	}{
		{[]SweepRow{{Value: "100ms", PeakRatio: 2.54}}, "at every sync-interval the worst second is more than 5% over the exact limiter's: 2.54× at 100ms"},
		{[]SweepRow{{Value: "1s", PeakRatio: 4}, {Value: "never", PeakRatio: 4}}, "over the exact limiter's: 4.00× at 1s and never"},
		{[]SweepRow{{Value: "100ms", PeakRatio: 2.54}, {Value: "1s", PeakRatio: 4}}, "from 2.54× at 100ms up to 4.00× at 1s"},
	} {
		if got := sweepFinding("sync-interval", tc.rows); !strings.Contains(got, tc.want) {
			t.Errorf("%q, want %q", got, tc.want)
		}
	}
}

// --figure's ratios read as the default columns' (1.92×), its
// percentages with their sign, counts with thousands separators.
func TestSweepFigureText(t *testing.T) {
	v := func(f float64) *float64 { return &f }
	for _, tc := range []struct {
		name string
		v    *float64
		want string
	}{
		{"admitted_ratio", v(1), "1.00×"},
		{"peak_ratio", v(1.917), "1.92×"},
		{"rejected_pct", v(98.7612), "98.76%"},
		{"allowed", v(14046), "14,046"},
		{"p99_ms", v(1.23456), "1.235"},
		{"peak_ratio", nil, "—"},
	} {
		if got := figureText(tc.name, tc.v); got != tc.want {
			t.Errorf("%s %v: %q, want %q", tc.name, tc.v, got, tc.want)
		}
	}
}

// runSweep hands each run's result over as the run ends, before the
// next starts on the same worker: a sweep holds the runs in flight, not
// every run's result (with its timeline) until the last ends.
func TestSweepHandsEachResultOverAsItEnds(t *testing.T) {
	f := scenariotest.Builtin(t, "sync-interval")
	f.Duration = time.Second
	var mu sync.Mutex
	var order []string
	runSweep(context.Background(), newProgress(io.Discard, false, ""), 3, func(i int) (sim.Scenario, error) {
		mu.Lock()
		defer mu.Unlock()
		order = append(order, fmt.Sprintf("make %d", i))
		return f, nil
	}, sim.Options{}, 1, func(i int, r *sim.Result, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil || r == nil {
			t.Errorf("run %d: %v", i, err)
		}
		order = append(order, fmt.Sprintf("done %d", i))
	})
	if got := strings.Join(order, ", "); got != "make 0, done 0, make 1, done 1, make 2, done 2" {
		t.Errorf("%s; want each run made as it starts and handed over as it ends", got)
	}
}
