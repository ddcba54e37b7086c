package probe_test

import (
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ratelim/ratelim/internal/testsize"
	"github.com/ratelim/ratelim/live"
	"github.com/ratelim/ratelim/live/livetest"
	"github.com/ratelim/ratelim/probe"
	"github.com/ratelim/ratelim/scenarios"
)

// serveLimit starts an in-process `ratelim serve` fleet of one server on
// a loopback port, keyed by X-API-Key, with the limit block given, and
// returns its API URL.
func serveLimit(t *testing.T, limit string) string {
	t.Helper()
	yaml := fmt.Sprintf("name: probe-target\nduration: 1s\nservers: 1\nlimit: %s\ntopology: {kind: shared, store: memory}\nclients:\n  - {name: c, api_key: c, ip: 203.0.113.7, traffic: [{pattern: constant, rate: 1/s}]}\n", limit)
	f, err := scenarios.Parse("probe-target.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return livetest.Serve(t, live.ServeOptions{Scenario: f.Scenario}).URLs[0] + "/api"
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
			rec, r := probeRecording(t, c.name, url)
			exact := r.Algorithm == c.algorithm && near(r.Rate, c.rate) && near(float64(r.Burst), float64(c.burst))
			if c.burst > 0 && !exact {
				// A bucket the probe did not find is held to what it
				// observed, as the nginx test is (truthFitsAsWell): the
				// three admit as a token bucket of the same numbers does
				// (the leaky bucket queues what it admits), and under
				// CI's -race with packages in parallel the leaky bucket's
				// queued answers came back late enough to look like 9
				// requests in flight (found: concurrency, low confidence).
				truthFitsAsWell(t, rec, r, c.rate, c.burst, "serve's "+c.algorithm)
				return
			}
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

// TestProbeFindsSlowLongAndLargeLimits probes ratelim serve with the
// limits recorded for TestAnalyzeRecordedByAddress: a slow rate, a rate
// per minute, a long window, a large burst, and a limit keyed by address
// that X-Api-Key does not key. Each takes up to --max-duration (60 s), so
// it runs only with RATELIM_TEST_EXHAUSTIVE=1; -record rewrites the
// recordings.
func TestProbeFindsSlowLongAndLargeLimits(t *testing.T) {
	if !testsize.Exhaustive() {
		t.Skipf("each probe takes up to a minute: set %s=1", testsize.EnvVar)
	}
	for _, c := range []struct {
		name  string // of its recording under testdata/
		limit string
	}{
		{"serve-token-bucket-1s", "{algorithm: token-bucket, rate: 1/s, burst: 1, key: ip}"},
		{"serve-token-bucket-30m", "{algorithm: token-bucket, rate: 30/m, burst: 5, key: ip}"},
		{"serve-fixed-window-10s", "{algorithm: fixed-window, rate: 10/10s, window: 10s, key: ip}"},
		{"serve-token-bucket-burst500", "{algorithm: token-bucket, rate: 50/s, burst: 500, key: ip}"},
		{"serve-token-bucket-by-address", "{algorithm: token-bucket, rate: 20/s, burst: 10, key: ip}"},
	} {
		t.Run(c.name, func(t *testing.T) {
			url := serveLimit(t, c.limit)
			opts := probe.Options{URL: url}
			if c.name == "serve-token-bucket-by-address" {
				opts.KeyHeader = "X-Api-Key"
			}
			rec, err := probe.Run(t.Context(), opts)
			if err != nil {
				t.Fatal(err)
			}
			recordIfAsked(t, c.name, rec)
			r := probe.Analyze(rec)
			for _, want := range recordedByAddress {
				if want.name != c.name {
					continue
				}
				exact := r.Algorithm == want.algorithm && near(r.Rate, want.rate) && (want.burst == 0 || near(float64(r.Burst), float64(want.burst))) &&
					(want.limit == 0 || r.Limit == want.limit && near(float64(r.Window), float64(want.window)))
				if !exact && want.algorithm == "token-bucket" {
					// A bucket the probe did not find is held to what it
					// observed (truthFitsAsWell): under CI's parallel
					// packages 1/s burst 1 was found as 0.9966/s burst 2.
					truthFitsAsWell(t, rec, r, want.rate, want.burst, "serve's bucket")
				} else if !exact {
					t.Errorf("found %s %g/s burst %d limit %d window %s, want %s %g/s burst %d limit %d window %s",
						r.Algorithm, r.Rate, r.Burst, r.Limit, time.Duration(r.Window), want.algorithm, want.rate, want.burst, want.limit, want.window)
				}
			}
			if opts.KeyHeader != "" {
				keyedAsObserved(t, r.Key)
			}
		})
	}
}

// keyedAsObserved holds the key finding of a limit keyed by address (one
// bucket whatever the key header says) to what was observed: it must
// never say keyed, and says "no" unless the fresh key's requests were
// admitted more than the probe's own, which a refill landing between
// them can do (CI's exhaustive stage: 2 of 6 fresh admitted against 1 of
// 6 own, at 20/s); then "unknown" is what the answers show.
func keyedAsObserved(t *testing.T, k *probe.KeyFinding) {
	t.Helper()
	if k == nil {
		t.Fatal("no key finding, with a key header sent")
	}
	own := k.OwnSent - k.OwnRefused
	switch {
	case k.Keyed == "yes":
		t.Errorf("key finding %+v: keyed, of a limit by address", k)
	case k.Keyed == "no":
	case k.Keyed == "unknown" && k.FreshAdmitted > own:
		t.Logf("key finding %+v: unknown, the fresh key admitted %d against the own key's %d (a refill between them)", k, k.FreshAdmitted, own)
	default:
		t.Errorf("key finding %+v, want not keyed (the fresh key admitted %d, no more than the own key's %d)", k, k.FreshAdmitted, own)
	}
}
