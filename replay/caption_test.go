package replay

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/trace"
	"github.com/ratelim/ratelim/trace/tracetest"
)

// A replay's caption states the replay's own settings, the limit as
// given (60/m, not 1/s), the key, the log and how fine its times are,
// and its span in the zone asked for (the plot adds the topology when it
// is not a replay's default).
func TestCaptionStatesTheReplay(t *testing.T) {
	whole, _ := pacedLogs(t)
	l := scanCombined(t, whole)
	limit := sim.Limit{Algorithm: "token-bucket", Params: algorithms.Params{Rate: algorithms.Rate{N: 60, Per: time.Minute}, Burst: 60}}
	run := replayRun(t, l, l.Scenario(limit, nil))
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Skip("no tz database:", err)
	}
	tests := []struct {
		name string
		loc  *time.Location
		sc   func(*sim.Scenario)
		want Caption
	}{
		{"utc", nil, nil, Caption{Limit: "60/m burst 60", Key: "ip", Log: "paced.log, whole-second times", Window: "10:00:00–10:00:59 UTC"}},
		{"paris", paris, nil, Caption{Limit: "60/m burst 60", Key: "ip", Log: "paced.log, whole-second times", Window: "11:00:00–11:00:59 Europe/Paris"}},
		{"local jars: the plot says so", nil, func(sc *sim.Scenario) { sc.Topology.Kind = sim.Local; sc.Servers = 4 },
			Caption{Limit: "60/m burst 60", Key: "ip", Log: "paced.log, whole-second times", Window: "10:00:00–10:00:59 UTC"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := *run
			if tt.sc != nil {
				tt.sc(&r.Scenario)
			}
			if got := CaptionOf(l, r.Scenario, tt.loc); got != tt.want {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// scanCombined scans a combined log, keyed by ip, and closes it when t
// ends.
func scanCombined(t *testing.T, path string) *Log {
	t.Helper()
	opts := tracetest.Options(trace.Combined)
	key, err := trace.ParseKey(trace.Combined, "ip")
	if err != nil {
		t.Fatal(err)
	}
	opts.Key = key
	l, err := Scan(context.Background(), Source{Path: path, Trace: opts}, ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// Across the night clocks go back, a time of day is ambiguous: the
// header, the table and the caption then say the zone's abbreviation; a
// span with one offset does not.
func TestTimesSayTheirOffsetAcrossADSTChange(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 10, 25, 0, 0, 0, 0, time.UTC) // 02:00 CEST; 01:00 UTC is 02:00 CET
	var recs []trace.Record
	for i := range 120 {
		recs = append(recs, trace.Record{At: t0.Add(time.Duration(i) * time.Minute), Key: "a", Method: "GET", Path: "/", Status: 200})
	}
	for i := range 5 {
		recs = append(recs, trace.Record{At: t0.Add(30*time.Minute + time.Duration(i)*time.Millisecond), Key: "b", Method: "GET", Path: "/", Status: 200})
	}
	slices.SortStableFunc(recs, func(x, y trace.Record) int { return x.At.Compare(y.At) })
	path := writeLog(t, "dst.jsonl", recs)
	limit := sim.Limit{Algorithm: "token-bucket", Params: algorithms.Params{Rate: algorithms.Rate{N: 1, Per: time.Second}, Burst: 1}}
	l := scan(t, path, limit)
	run := replayRun(t, l, l.Scenario(limit, nil))
	for _, tc := range []struct {
		loc  *time.Location
		want []string
	}{
		{paris, []string{"2026-10-25 02:00:00 CEST to 02:59:00 CET Europe/Paris", "02:30:00.001 CEST", "02:30 CEST (4)"}},
		{time.UTC, []string{"2026-10-25 00:00:00 to 01:59:00 UTC", "00:30:00.001 ", "00:30 (4)"}},
	} {
		var out bytes.Buffer
		if err := WriteTable(&out, &Report{Log: l, Runs: []*Run{run}}, TableOptions{Location: tc.loc}); err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%v: no %q in:\n%s", tc.loc, w, out.String())
			}
		}
	}
	if c := CaptionOf(l, run.Scenario, paris); c.Window != "02:00 CEST–02:59 CET Europe/Paris" {
		t.Errorf("caption window %q", c.Window)
	}
	if c := CaptionOf(l, run.Scenario, time.UTC); c.Window != "00:00–01:59 UTC" {
		t.Errorf("caption window %q", c.Window)
	}
}
