package replay

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/trace"

	"pgregory.net/rapid"
)

// A suggestion's untouched keys are what its own replay leaves untouched:
// on one exact limiter (one server, an atomic store), replaying a log at
// the suggested limit throttles exactly keys − untouched of them. Over
// random small logs, where a key's window peak and the burst it needs
// differ (two requests half a period apart peak at 2 in a window but need
// a burst of 1), for the burst algorithms and the exact window alike.
func TestSuggestUntouchedIsWhatItsReplayLeaves(t *testing.T) {
	dir := t.TempDir()
	algs := []string{"token-bucket", "gcra", "leaky-bucket", "sliding-log"}
	rapid.Check(t, func(t *rapid.T) {
		alg := rapid.SampledFrom(algs).Draw(t, "algorithm")
		per := rapid.SampledFrom([]time.Duration{time.Second, 10 * time.Second, time.Minute}).Draw(t, "per")
		p := algorithms.Params{Rate: algorithms.Rate{N: rapid.Int64Range(1, 4).Draw(t, "rate"), Per: per}, Burst: 1}
		if alg == "sliding-log" {
			p.Window = per
		}
		keys := rapid.IntRange(1, 5).Draw(t, "keys")
		n := rapid.IntRange(1, 30).Draw(t, "requests")
		recs := make([]trace.Record, n)
		at := logStart
		for i := range recs {
			// Steps of a tenth of the period, often none: bursts and gaps.
			at = at.Add(time.Duration(rapid.IntRange(0, 12).Draw(t, "step")) * per / 10)
			recs[i] = trace.Record{At: at, Key: fmt.Sprintf("k%d", rapid.IntRange(0, keys-1).Draw(t, "key")), Method: "GET", Path: "/", Status: 200}
		}
		q := rapid.SampledFrom([]float64{0.2, 0.5, 0.75, 0.99, 1}).Draw(t, "quantile")

		path := filepath.Join(dir, "log.jsonl")
		writeLogAt(t, path, recs)
		limit := sim.Limit{Algorithm: alg, Params: p}
		l := scanOpen(t, path, limit)
		defer l.Close()
		got, err := l.Suggest(context.Background(), l.Scenario(limit, nil), []float64{q}, sim.Options{}, 1)
		if err != nil {
			t.Fatal(err)
		}
		s := got[0]
		if throttled := s.Run.Totals.Throttled; throttled != len(l.Keys)-s.Untouched {
			t.Fatalf("%s %v: suggested %+v says %d of %d keys untouched; its replay throttled %d", alg, q, s.Params, s.Untouched, len(l.Keys), throttled)
		}
	})
}
