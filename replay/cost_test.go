package replay

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/routecost"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/trace"
	"github.com/ratelim/ratelim/trace/tracetest"
)

// A replay priced by route spends each request's cost: the same limiter
// stepped by hand with the cost of the first rule that matches refuses
// exactly what the replay refuses, and more than it does unpriced.
func TestReplaySpendsEachRoutesCost(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 1))
	paths := []string{"/api/items", "/api/search", "/api/export/1", "/api/cart"}
	methods := []string{"GET", "GET", "GET", "POST"}
	recs := make([]trace.Record, 3000)
	at := logStart
	for i := range recs {
		at = at.Add(time.Duration(rng.Int64N(int64(200 * time.Millisecond)))).Truncate(time.Microsecond)
		r := rng.IntN(len(paths))
		recs[i] = trace.Record{At: at, Key: fmt.Sprintf("key-%d", rng.IntN(4)), Method: methods[r], Path: paths[r], Status: 200}
	}
	path := writeLog(t, "priced.jsonl", recs)
	var rules []routecost.Rule
	for _, s := range []string{"GET /api/search=5", "/api/export/*=20", "POST=3"} {
		r, err := routecost.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		rules = append(rules, r)
	}
	params := algorithms.Params{Rate: algorithms.Rate{N: 60, Per: time.Minute}, Burst: 40}
	limit := sim.Limit{Algorithm: "token-bucket", Params: params}
	replayed := func(costs []routecost.Rule) map[string]int64 {
		l, err := Scan(context.Background(), Source{Path: path, Trace: tracetest.Options(trace.JSONL), Costs: costs}, ScanOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		out := map[string]int64{}
		for _, k := range replayRun(t, l, l.Scenario(limit, nil)).Keys {
			out[k.Key] = k.Rejected
		}
		return out
	}
	priced, plain := replayed(rules), replayed(nil)

	alg, _ := algorithms.New("token-bucket", params)
	states := map[string]algorithms.State{}
	want := map[string]int64{}
	for _, r := range recs {
		st, d := alg.Step(states[r.Key], algorithms.At(r.At.Sub(logStart)), costOf(rules, r))
		states[r.Key] = st
		if !d.Allowed {
			want[r.Key]++
		}
	}
	var morePriced bool
	for key, n := range want {
		if priced[key] != n {
			t.Errorf("%s: the priced replay refused %d, the limiter stepped with each route's cost %d", key, priced[key], n)
		}
		morePriced = morePriced || priced[key] > plain[key]
	}
	if !morePriced {
		t.Errorf("pricing refused no more than counting: priced %v, plain %v", priced, plain)
	}
}
