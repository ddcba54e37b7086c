package replay

import (
	"context"
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
