package probe_test

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ratelim/ratelim/live"
	"github.com/ratelim/ratelim/probe"
	"github.com/ratelim/ratelim/scenarios"
)

// serveLimit starts an in-process `ratelim serve` fleet of one server on
// a loopback port, keyed by X-API-Key, with the limit block given, and
// returns its API URL.
func serveLimit(t *testing.T, limit string) string {
	t.Helper()
	yaml := fmt.Sprintf("name: probe-target\nduration: 1s\nservers: 1\nlimit: %s\ntopology: {kind: shared, store: memory}\nclients:\n  - {name: c, api_key: c, traffic: [{pattern: constant, rate: 1/s}]}\n", limit)
	f, err := scenarios.Parse("probe-target.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	fleet, err := live.Serve(context.Background(), live.ServeOptions{Scenario: f.Scenario, Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := fleet.Close(ctx); err != nil {
			t.Error(err)
		}
	})
	return fleet.URLs[0] + "/api"
}

// near reports whether got is within 5% of want.
func near(got, want float64) bool { return math.Abs(got-want) <= 0.05*want }

// TestProbeFindsServesAlgorithms probes ratelim serve running each of the
// six algorithms with known numbers, one after another, and checks the
// family found and that rate and burst or window are within 5%.
func TestProbeFindsServesAlgorithms(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: each probe takes seconds of wall time")
	}
	cases := []struct {
		name      string // of its recording under testdata/
		limit     string
		algorithm string
		rate      float64
		burst     int64
		window    time.Duration
	}{
		{"serve-token-bucket", "{algorithm: token-bucket, rate: 20/s, burst: 10, key: api-key}", "token-bucket", 20, 10, 0},
		{"serve-gcra", "{algorithm: gcra, rate: 20/s, burst: 10, key: api-key}", "token-bucket", 20, 10, 0},
		{"serve-leaky-bucket", "{algorithm: leaky-bucket, rate: 20/s, burst: 10, key: api-key}", "leaky-bucket", 20, 10, 0},
		{"serve-fixed-window", "{algorithm: fixed-window, rate: 20/s, window: 1s, key: api-key}", "fixed-window", 20, 0, time.Second},
		{"serve-sliding-window", "{algorithm: sliding-window, rate: 20/s, window: 1s, key: api-key}", "sliding-window", 20, 0, time.Second},
		{"serve-sliding-log", "{algorithm: sliding-log, rate: 20/s, window: 1s, key: api-key}", "sliding-log", 20, 0, time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			url := serveLimit(t, c.limit)
			r := probeURL(t, c.name, url)
			if r.Algorithm != c.algorithm {
				t.Errorf("algorithm %q, want %q", r.Algorithm, c.algorithm)
			}
			if !near(r.Rate, c.rate) {
				t.Errorf("rate %g, want %g ± 5%%", r.Rate, c.rate)
			}
			if c.burst > 0 && !near(float64(r.Burst), float64(c.burst)) {
				t.Errorf("burst %d, want %d ± 5%%", r.Burst, c.burst)
			}
			if c.window > 0 && !near(float64(r.Window), float64(c.window)) {
				t.Errorf("window %s, want %s ± 5%%", time.Duration(r.Window), c.window)
			}
		})
	}
}

// recordIfAsked writes rec under testdata/ when -record is given: a real
// run kept for the analysis's golden tests (TestAnalyzeRecorded).
func recordIfAsked(t *testing.T, name string, rec probe.Recording) {
	t.Helper()
	if !*record {
		return
	}
	f, err := os.Create(filepath.Join("testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := probe.WriteRecording(f, rec); err != nil {
		t.Fatal(err)
	}
}

var record = flag.Bool("record", false, "write each live probe's observations under testdata/")
