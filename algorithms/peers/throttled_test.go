package peers_test

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/throttled/throttled/v2"
	"github.com/throttled/throttled/v2/store/memstore"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/algorithms/peers"
)

// throttledTAT is the TAT the model's state says the store holds, in
// nanoseconds since the Unix epoch, or −1 for none, as GetWithTime reads it.
func throttledTAT(st algorithms.State, origin algorithms.Time) int64 {
	if st.N == 0 {
		return -1
	}
	return (int64(origin)+st.T)*1000 + st.N - 1
}

// origin2262 puts the clock a day before time.Time's UnixNano overflows
// (2262-04-11): TATs and increments past it wrap, and the model must wrap
// with them.
var origin2262 = algorithms.FromTime(time.Date(2262, 4, 10, 0, 0, 0, 0, time.UTC))

// TestThrottledMatchesTheLibrary drives throttled's GCRARateLimiterCtx over
// a memstore whose clock (SetTimeNow) reads time.UnixMicro(Origin + now),
// and the model, with the same instants and quantities, and requires every
// field of the RateLimitResult to agree, a peek's RetryAfter hint included,
// and the stored TAT to be the model's state, nanosecond for nanosecond.
func TestThrottledMatchesTheLibrary(t *testing.T) {
	configs := append(peerConfigs,
		peerConfig{rate: algorithms.Rate{N: 3, Per: time.Second}, burst: 4, origin: origin2262, backwards: true, bigCost: 1 << 62},
		peerConfig{rate: algorithms.Rate{N: 7, Per: 500 * time.Millisecond}, burst: 2, origin: -origin2026, backwards: true},
	)
	ctx := context.Background()
	for ci, c := range configs {
		model, err := peers.NewThrottled(c.params())
		if err != nil {
			t.Fatal(err)
		}
		ms, err := memstore.New(0)
		if err != nil {
			t.Fatal(err)
		}
		var clock time.Time
		ms.SetTimeNow(func() time.Time { return clock })
		lim, err := throttled.NewGCRARateLimiterCtx(throttled.WrapStoreWithContext(ms), throttled.RateQuota{
			MaxRate:  throttled.PerDuration(int(c.rate.N), c.rate.Per),
			MaxBurst: int(c.burst - 1),
		})
		if err != nil {
			t.Fatal(err)
		}
		var st algorithms.State
		var counts tally
		for i, r := range peerRequests(c, uint64(100+ci), peerDecisions) {
			clock = time.UnixMicro(int64(c.origin + r.at))
			limited, res, err := lim.RateLimitCtx(ctx, "key", int(r.cost))
			if err != nil {
				t.Fatal(err)
			}
			prev := st
			var got algorithms.Decision
			st, got = model.Step(st, r.at, r.cost)
			// The library's RetryAfter is −1 unless a request of the
			// quantity (1 for a peek) would be refused.
			gotRetry := got.RetryAfter
			switch {
			case r.cost == 0:
				gotRetry = -1
				if _, unit := model.Step(prev, r.at, 1); !unit.Allowed {
					gotRetry = unit.RetryAfter
				}
			case got.Allowed:
				gotRetry = -1
			case got.RetryAfter == algorithms.Never:
				gotRetry = -1
			}
			if got.Allowed == limited || got.Limit != int64(res.Limit) || got.Remaining != int64(res.Remaining) ||
				gotRetry != res.RetryAfter || got.ResetAfter != res.ResetAfter || got.Delay != 0 {
				t.Fatalf("%v burst %d origin %d, request %d (t=%d cost=%d): model %+v (retry %v), library limited=%v %+v",
					c.rate, c.burst, c.origin, i, r.at, r.cost, got, gotRetry, limited, res)
			}
			stored, _, _ := ms.GetWithTime("key")
			if want := throttledTAT(st, c.origin); stored != want {
				t.Fatalf("%v burst %d origin %d, request %d (t=%d cost=%d): model's TAT %d (state %+v), store's %d",
					c.rate, c.burst, c.origin, i, r.at, r.cost, want, st, stored)
			}
			counts.add(r.cost, got.Allowed)
		}
		counts.check(t, fmt.Sprintf("%v burst %d origin %d", c.rate, c.burst, c.origin))
	}
}

// TestThrottledQuirkOverCapacityReportsAFullBucket: with capacity 3 at 1/s,
// three requests at once empty the bucket; a fourth of quantity 1 is refused
// with Remaining 0 and a Retry-After of 1 s, but one of quantity 4, over the
// capacity, is refused with Remaining 3 and ResetAfter 0, a full bucket, and
// no Retry-After (the library's −1): its refusal never sets ttl. The exact
// GCRA reports the empty bucket it is.
func TestThrottledQuirkOverCapacityReportsAFullBucket(t *testing.T) {
	p := algorithms.Params{Rate: algorithms.Rate{N: 1, Per: time.Second}, Burst: 3, Origin: origin2026}
	model, _ := peers.NewThrottled(p)
	exact, _ := algorithms.NewGCRA(p.Rate, p.Burst)
	var ms, es algorithms.State
	for range 3 {
		ms, _ = model.Step(ms, 0, 1)
		es, _ = exact.Step(es, 0, 1)
	}
	if _, d := model.Step(ms, 0, 1); d.Allowed || d.Remaining != 0 || d.RetryAfter != time.Second || d.ResetAfter != 3*time.Second {
		t.Errorf("quantity 1 on an empty bucket: %+v, want refused, remaining 0, retry 1s, reset 3s", d)
	}
	md := must2(model.Step(ms, 0, 4))
	ed := must2(exact.Step(es, 0, 4))
	if md.Allowed || md.Remaining != 3 || md.ResetAfter != 0 || md.RetryAfter != algorithms.Never {
		t.Errorf("throttled, quantity 4 on an empty bucket: %+v, want refused with remaining 3 and reset 0", md)
	}
	if ed.Allowed || ed.Remaining != 0 || ed.ResetAfter != 3*time.Second {
		t.Errorf("gcra, quantity 4 on an empty bucket: %+v, want refused with remaining 0 and reset 3s", ed)
	}
}

// TestThrottledQuirkEmissionTruncated: at 3/s the emission interval is
// 333333333 ns, a third of a nanosecond short. With a burst of 2 and each
// request sent the microsecond the exact GCRA admits it, the TAT stays
// ahead of now and throttled's drifts a nanosecond ahead every three
// requests; a request sent 1 µs earlier is first admitted by throttled
// 333 s in, at 333333333 µs, where the exact GCRA's TAT less one interval
// is 333333333.3 µs: the 1000th request after the burst.
func TestThrottledQuirkEmissionTruncated(t *testing.T) {
	p := algorithms.Params{Rate: algorithms.Rate{N: 3, Per: time.Second}, Burst: 2, Origin: origin2026}
	model, _ := peers.NewThrottled(p)
	exact, _ := algorithms.NewGCRA(p.Rate, p.Burst)
	ms, _ := model.Step(algorithms.State{}, 0, 2)
	es, _ := exact.Step(algorithms.State{}, 0, 2)
	at := algorithms.Time(0)
	for k := 1; k <= 1200; k++ {
		_, refused := exact.Step(es, at, 1)
		next := at + algorithms.At(refused.RetryAfter) // when the exact GCRA admits request k
		if _, early := model.Step(ms, next-1, 1); early.Allowed {
			if k != 1000 || next-1 != 333_333_333 {
				t.Fatalf("throttled admitted request %d after the burst at %dµs, 1µs early; want the 1000th at 333333333µs", k, next-1)
			}
			t.Logf("throttled admitted request %d after the burst at %dµs, 1 µs before the exact GCRA", k, next-1)
			return
		}
		at = next
		var md, ed algorithms.Decision
		ms, md = model.Step(ms, at, 1)
		es, ed = exact.Step(es, at, 1)
		if !md.Allowed || !ed.Allowed {
			t.Fatalf("request %d at %dµs: throttled %v, gcra %v, want both admitted", k, at, md.Allowed, ed.Allowed)
		}
	}
	t.Fatal("throttled never ran ahead of the exact GCRA in 1200 requests")
}

func must2(_ algorithms.State, d algorithms.Decision) algorithms.Decision { return d }

// TestThrottledQuirkFigures measures over many decisions how throttled and
// the exact GCRA of the same rate and capacity differ: the emission
// interval of 3/s truncated to 333333333 ns, and the reports of a refusal
// over the capacity.
func TestThrottledQuirkFigures(t *testing.T) {
	for _, c := range []peerConfig{
		{rate: algorithms.Rate{N: 3, Per: time.Second}, burst: 5, origin: origin2026},
		{rate: algorithms.Rate{N: 100, Per: time.Minute}, burst: 10, origin: origin2026, bigCost: 20},
	} {
		model, _ := peers.NewThrottled(c.params())
		exact, _ := algorithms.NewGCRA(c.rate, c.burst)
		var ms, es algorithms.State
		var allowed, remaining, reset, retry, resetUs, retryUs int
		for _, r := range peerRequests(c, 7, peerDecisions) {
			var md, ed algorithms.Decision
			ms, md = model.Step(ms, r.at, r.cost)
			es, ed = exact.Step(es, r.at, r.cost)
			if md.Allowed != ed.Allowed {
				allowed++
			}
			if md.Remaining != ed.Remaining {
				remaining++
			}
			// throttled reports nanoseconds, the exact GCRA whole
			// microseconds rounded up: count apart those that differ by
			// more than that rounding.
			if md.ResetAfter != ed.ResetAfter {
				reset++
				if d := ed.ResetAfter - md.ResetAfter; d < 0 || d >= time.Microsecond {
					resetUs++
				}
			}
			if md.RetryAfter != ed.RetryAfter {
				retry++
				if d := ed.RetryAfter - md.RetryAfter; d < 0 || d >= time.Microsecond {
					retryUs++
				}
			}
		}
		t.Logf("%v burst %d: over %d decisions throttled and gcra disagreed on %d admissions, %d remainings, %d reset-afters (%d by more than the µs rounding), %d retry-afters (%d by more)",
			c.rate, c.burst, peerDecisions, allowed, remaining, reset, resetUs, retry, retryUs)
		if c.bigCost > 0 && remaining == 0 {
			t.Errorf("%v: costs over the capacity, yet every Remaining agreed", c.rate)
		}
	}
}

func TestThrottledEdges(t *testing.T) {
	tenPerSecond := algorithms.Rate{N: 10, Per: time.Second}
	g, err := peers.NewThrottled(algorithms.Params{Rate: tenPerSecond, Burst: 3, Origin: origin2026})
	if err != nil {
		t.Fatal(err)
	}
	var fresh algorithms.State // a key the store does not hold
	tests := []struct {
		name string
		prev algorithms.State
		at   algorithms.Time
		cost int64
		want algorithms.Decision
		same bool // the state must come back unchanged
	}{
		{"zero state", fresh, 5, 1, algorithms.Decision{Allowed: true, Limit: 3, Remaining: 2, ResetAfter: 100 * time.Millisecond}, false},
		// A peek stores the TAT (now) in a new key.
		{"zero state peek", fresh, 5, 0, algorithms.Decision{Allowed: true, Limit: 3, Remaining: 3}, false},
		{"negative cost peeks", fresh, 5, -4, algorithms.Decision{Allowed: true, Limit: 3, Remaining: 3}, false},
		{"cost over burst", fresh, 0, 4, algorithms.Decision{Limit: 3, Remaining: 3, RetryAfter: algorithms.Never}, true},
		{"cost of 2^30", fresh, 0, 1 << 30, algorithms.Decision{Limit: 3, Remaining: 3, RetryAfter: algorithms.Never}, true},
		{"whole burst", fresh, 0, 3, algorithms.Decision{Allowed: true, Limit: 3, Remaining: 0, ResetAfter: 300 * time.Millisecond}, false},
	}
	for _, tt := range tests {
		next, d := g.Step(tt.prev, tt.at, tt.cost)
		if d != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, d, tt.want)
		}
		if tt.same && !reflect.DeepEqual(next, tt.prev) {
			t.Errorf("%s: state moved to %+v", tt.name, next)
		}
	}
	// A quantity whose increment overflows: MaxInt64 × 100 ms wraps to
	// −100 ms, so the library admits it, moving the TAT back, and reports
	// Remaining 4 of 3 and a ResetAfter of −100 ms. So does the model.
	if _, d := g.Step(fresh, 0, math.MaxInt64); !d.Allowed || d.Remaining != 4 || d.ResetAfter != -100*time.Millisecond {
		t.Errorf("cost MaxInt64: %+v, want admitted with remaining 4 and reset −100ms, as throttled does", d)
	}
	ms, _ := memstore.New(0)
	ms.SetTimeNow(func() time.Time { return time.UnixMicro(int64(origin2026)) })
	lim, _ := throttled.NewGCRARateLimiterCtx(throttled.WrapStoreWithContext(ms), throttled.RateQuota{MaxRate: throttled.PerSec(10), MaxBurst: 2})
	if limited, res, _ := lim.RateLimitCtx(context.Background(), "k", math.MaxInt); limited || res.Remaining != 4 || res.ResetAfter != -100*time.Millisecond {
		t.Errorf("throttled itself, quantity MaxInt: limited=%v %+v", limited, res)
	}

	// Instants at the ends of int64 must not panic.
	for _, at := range []algorithms.Time{math.MaxInt64, math.MinInt64, -1} {
		for _, cost := range []int64{0, 1, math.MaxInt64} {
			st, _ := g.Step(fresh, at, cost)
			g.Step(st, at, cost)
			g.Step(st, 0, cost)
		}
	}

	// Empty at 1 s, then the clock steps back 50 ms: the TAT is further
	// ahead, and a request waits 150 ms. A peek writes the TAT back as it was.
	st, _ := g.Step(fresh, 1_000_000, 3)
	peeked, d := g.Step(st, 950_000, 0)
	if d.Remaining != 0 || !reflect.DeepEqual(peeked, st) || d.ResetAfter != 350*time.Millisecond {
		t.Errorf("peek after a step back: %+v, state %+v, want remaining 0, reset 350ms and state %+v", d, peeked, st)
	}
	if _, d := g.Step(st, 950_000, 1); d.Allowed || d.RetryAfter != 150*time.Millisecond || d.ResetAfter != 350*time.Millisecond {
		t.Errorf("after a step back: %+v, want refused, retry 150ms, reset 350ms", d)
	}
	// A peek long after moves the stored TAT up to now: the same decisions.
	later, _ := g.Step(st, 10_000_000, 0)
	if want := (int64(origin2026) + 10_000_000) * 1000; throttledTAT(later, origin2026) != want {
		t.Errorf("peek at 10 s stored TAT %d, want %d", throttledTAT(later, origin2026), want)
	}

	wantParamErrors(t, "NewThrottled", peers.NewThrottled, []paramCase{
		{algorithms.Params{Rate: algorithms.Rate{N: 0, Per: time.Second}, Burst: 1}, "rate"},
		{algorithms.Params{Rate: algorithms.Rate{N: 1, Per: 0}, Burst: 1}, "rate"},
		{algorithms.Params{Rate: algorithms.Rate{N: 2000, Per: time.Microsecond}, Burst: 1}, "rate"}, // 0.5 ns apart
		{algorithms.Params{Rate: tenPerSecond, Burst: 0}, "burst"},
		{algorithms.Params{Rate: algorithms.Rate{N: 1, Per: time.Hour}, Burst: 1 << 40}, "burst"},
	})
	if got := g.Params(); got != (algorithms.Params{Rate: tenPerSecond, Burst: 3, Origin: origin2026}) {
		t.Errorf("Params() = %+v", got)
	}

	var zero peers.Throttled
	if _, d := zero.Step(fresh, 0, 1); d.Allowed || d.RetryAfter != algorithms.Never {
		t.Errorf("zero Throttled admitted: %+v", d)
	}
	if _, d := zero.Step(fresh, 0, 0); !d.Allowed {
		t.Errorf("zero Throttled refused a peek: %+v", d)
	}
}
