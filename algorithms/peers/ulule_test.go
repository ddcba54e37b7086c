package peers_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ulule/limiter/v3"
	"github.com/ulule/limiter/v3/drivers/store/memory"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/algorithms/peers"
)

// winBubbleOrigin is where a synctest bubble's clock starts, 2000-01-01
// 00:00:00 UTC, as Params.Origin: Time 0 in a test is that instant.
var winBubbleOrigin = algorithms.FromTime(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC))

// winConfig is one configuration of a differential test: a rate and a
// window, and how requests arrive (gaps scaled to the window, costs up to
// maxCost besides the usual 0..3).
type winConfig struct {
	rate    algorithms.Rate
	window  time.Duration
	maxCost int64
}

func (c winConfig) String() string { return fmt.Sprintf("%v per %v", c.rate, c.window) }

var ululeConfigs = []winConfig{
	{rate: algorithms.Rate{N: 3, Per: time.Second}, window: time.Second, maxCost: 4},
	{rate: algorithms.Rate{N: 100, Per: time.Minute}, window: time.Minute, maxCost: 60},
	{rate: algorithms.Rate{N: 7, Per: 500 * time.Millisecond}, window: 500 * time.Millisecond, maxCost: 8},
	{rate: algorithms.Rate{N: 1, Per: time.Second}, window: 1500 * time.Millisecond, maxCost: 2},
	{rate: algorithms.Rate{N: 1000, Per: time.Second}, window: 250 * time.Millisecond, maxCost: 300},
	// A window that is not a whole number of µs: ulule keeps nanoseconds.
	{rate: algorithms.Rate{N: 5, Per: time.Second}, window: 1234567891 * time.Nanosecond, maxCost: 6},
}

// winArrivals draws the next gap (µs) and cost: ties, gaps of the order of
// a window's share of its limit (so that windows fill), gaps of the order
// of a window, and now and then a long idle; costs mostly 0..3, sometimes
// up to maxCost (over the limit for a small one).
func winArrivals(rng *rand.Rand, c winConfig, limit int64) (gap, cost int64) {
	w := int64(c.window / time.Microsecond)
	switch r := rng.IntN(1000); {
	case r < 300:
		gap = 0
	case r < 950:
		gap = rng.Int64N(max(2*w/limit, 1)) + 1
	case r < 970:
		gap = rng.Int64N(w) + 1
	case r < 980:
		gap = rng.Int64N(4*w) + 1
	default: // a window's length to the µs: land on a window's end, or a µs either side
		gap = w - 1 + rng.Int64N(3)
	}
	if rng.IntN(4) == 0 {
		cost = rng.Int64N(c.maxCost + 1)
	} else {
		cost = rng.Int64N(4)
	}
	return gap, cost
}

// winKey picks one of three keys, the first most often, so that its
// windows fill.
func winKey(rng *rand.Rand) int {
	switch r := rng.IntN(10); {
	case r < 6:
		return 0
	case r < 9:
		return 1
	}
	return 2
}

// TestUluleMatchesLibrary drives the real ulule/limiter memory store and the
// model with the same instants and costs, on three keys, and compares every
// field of ulule's Context: Limit, Remaining, Reset and Reached. A cost of 0
// is Limiter.Peek, a cost of 1 Limiter.Get, a larger one
// Limiter.Increment(ctx, key, cost). The store reads time.Now(), so it runs
// in a synctest bubble, whose fake clock time.Sleep moves exactly; its
// cleaner is turned off (CleanUpInterval 0), since its ticker would keep
// the bubble's clock running forever and it only deletes expired counters,
// which a hit replaces anyway.
func TestUluleMatchesLibrary(t *testing.T) {
	for _, c := range ululeConfigs {
		t.Run(c.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { ululeDifferential(t, c) })
		})
	}
}

func ululeDifferential(t *testing.T, c winConfig) {
	ctx := context.Background()
	model, err := peers.NewUlule(algorithms.Params{Rate: c.rate, Window: c.window, Origin: winBubbleOrigin})
	if err != nil {
		t.Fatal(err)
	}
	limit := model.Limit()
	lib := limiter.New(memory.NewStoreWithOptions(limiter.StoreOptions{Prefix: "t"}),
		limiter.Rate{Period: c.window, Limit: limit})
	if got := algorithms.FromTime(time.Now()); got != winBubbleOrigin {
		t.Fatalf("the bubble starts at %d, not %d", got, winBubbleOrigin)
	}
	rng := rand.New(rand.NewPCG(1, uint64(c.window)))
	keys := []string{"a", "b", "c"}
	states := make([]algorithms.State, len(keys))
	now := algorithms.Time(0)
	var counts tally
	for i := range peerWinDecisions {
		gap, cost := winArrivals(rng, c, limit)
		time.Sleep(time.Duration(gap) * time.Microsecond)
		now += algorithms.Time(gap)
		k := winKey(rng)
		prev := states[k]

		var lc limiter.Context
		switch cost {
		case 0:
			lc, err = lib.Peek(ctx, keys[k])
		case 1:
			lc, err = lib.Get(ctx, keys[k])
		default:
			lc, err = lib.Increment(ctx, keys[k], cost)
		}
		if err != nil {
			t.Fatal(err)
		}
		reset := model.Reset(prev, now)
		next, d := model.Step(prev, now, cost)
		states[k] = next

		// A peek reports Reached for a count already over the limit;
		// the model's peek is Allowed, and says so in Remaining 0 with
		// a count over the limit in its state.
		reached := !d.Allowed
		if cost == 0 {
			reached = d.Remaining == 0 && prev.N > limit
		}
		wall := int64(winBubbleOrigin + now)
		headerWait := time.Duration(max(lc.Reset*1_000_000-wall, 0)) * time.Microsecond
		if lc.Limit != d.Limit || lc.Remaining != d.Remaining || lc.Reset != reset || lc.Reached != reached {
			t.Fatalf("decision %d (key %s, t=%dµs, cost %d, state %+v): ulule %+v, model %+v reset %d",
				i, keys[k], now, cost, prev, lc, d, reset)
		}
		switch {
		case d.Allowed && d.RetryAfter != 0,
			!d.Allowed && cost > limit && d.RetryAfter != algorithms.Never,
			!d.Allowed && cost <= limit && d.RetryAfter != headerWait:
			t.Fatalf("decision %d: retry-after %v with %+v", i, d.RetryAfter, d)
		}
		counts.add(cost, d.Allowed)
	}
	counts.check(t, fmt.Sprintf("%d decisions", peerWinDecisions))
}

// ulule's quirks beside ratelim's fixed window (aligned to the clock) and
// sliding log, 100 per second in windows of 1s.
func TestUluleWindowFollowsTheKey(t *testing.T) {
	rate := algorithms.Rate{N: 100, Per: time.Second}
	p := algorithms.Params{Rate: rate, Window: time.Second}
	ulule := winMust(peers.NewUlule(p))
	fixed := winMust(algorithms.NewFixedWindow(rate, time.Second))
	log := winMust(algorithms.NewSlidingLog(rate, time.Second))

	// A key first hit at 0.3s has the window (0.3s, 1.3s]: at 1.3s it
	// still counts, 1µs later a new one starts. One hit at 0.3s, then 150
	// requests at 1.3s and 150 at 1.300001s.
	const ms = algorithms.Time(1000)
	reqs := []algorithms.Time{300 * ms}
	for range 150 {
		reqs = append(reqs, 1300*ms)
	}
	for range 150 {
		reqs = append(reqs, 1300*ms+1)
	}
	admittedAtEnd := func(alg algorithms.Algorithm) (n int) {
		var st algorithms.State
		for _, at := range reqs {
			var d algorithms.Decision
			if st, d = alg.Step(st, at, 1); d.Allowed && at >= 1300*ms {
				n++
			}
		}
		return n
	}
	if got := admittedAtEnd(ulule); got != 199 {
		t.Errorf("ulule admitted %d within 1µs at its key's window end, want 99 + 100", got)
	}
	for _, alg := range []algorithms.Algorithm{fixed, log} {
		if got := admittedAtEnd(alg); got != 100 {
			t.Errorf("%s admitted %d within the same 1µs, want 100", alg.Name(), got)
		}
	}

	// Two keys with the same traffic, 5 requests every 100ms from their
	// first hit, B's 350ms after A's. After its first refusal each key is
	// admitted again when its own window ends: A at 1.1s, B at 1.45s,
	// 350ms apart. The clock-aligned window admits both again at its
	// boundary: A at 1.0s, B at 1.05s, 50ms apart.
	readmitted := func(alg algorithms.Algorithm, first algorithms.Time) algorithms.Time {
		var st algorithms.State
		refused := false
		for at := first; at < first+3000*ms; at += 100 * ms {
			var d algorithms.Decision
			st, d = alg.Step(st, at, 5)
			if !d.Allowed {
				refused = true
			} else if refused {
				return at
			}
		}
		return -1
	}
	rate5 := algorithms.Rate{N: 30, Per: time.Second} // 30 per window: 6 requests of 5
	ulule5 := winMust(peers.NewUlule(algorithms.Params{Rate: rate5, Window: time.Second}))
	fixed5 := winMust(algorithms.NewFixedWindow(rate5, time.Second))
	for _, tt := range []struct {
		alg  algorithms.Algorithm
		a, b algorithms.Time
	}{
		{ulule5, 1100 * ms, 1450 * ms},
		{fixed5, 1000 * ms, 1050 * ms},
	} {
		if a, b := readmitted(tt.alg, 0), readmitted(tt.alg, 350*ms); a != tt.a || b != tt.b {
			t.Errorf("%s: keys readmitted at %dµs and %dµs, want %dµs and %dµs", tt.alg.Name(), a, b, tt.a, tt.b)
		}
	}
}

// TestUluleDisagreesWithFixedWindow measures, on the differential test's
// traffic for 3/s, how often ulule and ratelim's clock-aligned fixed window
// decide a request differently, for the record.
func TestUluleDisagreesWithFixedWindow(t *testing.T) {
	c := ululeConfigs[0]
	ulule := winMust(peers.NewUlule(algorithms.Params{Rate: c.rate, Window: c.window}))
	fixed := winMust(algorithms.NewFixedWindow(c.rate, c.window))
	log := winMust(algorithms.NewSlidingLog(c.rate, c.window))
	u, f, l, n := winCountAdmitted(c, peerWinDecisions, ulule, fixed, log)
	t.Logf("%d decisions (%d of positive cost) at %v: ulule admitted %d, fixed-window %d, sliding-log %d; ulule and fixed-window disagreed %d times",
		peerWinDecisions, n.positive, c, u, f, l, n.disagree)
	if n.disagree == 0 {
		t.Fatal("ulule and the aligned fixed window never disagreed")
	}
}

type winTally struct{ positive, disagree int }

// winCountAdmitted runs the differential tests' traffic on one key through
// a, b and c, and counts what each admits and how often a and b disagree.
func winCountAdmitted(conf winConfig, n int, a, b, c algorithms.Algorithm) (na, nb, nc int, t winTally) {
	rng := rand.New(rand.NewPCG(2, 2))
	var sa, sb, sc algorithms.State
	now := algorithms.Time(0)
	for range n {
		gap, cost := winArrivals(rng, conf, a.(interface{ Limit() int64 }).Limit())
		now += algorithms.Time(gap)
		if cost == 0 {
			continue
		}
		t.positive++
		var da, db, dc algorithms.Decision
		sa, da = a.Step(sa, now, cost)
		sb, db = b.Step(sb, now, cost)
		sc, dc = c.Step(sc, now, cost)
		if da.Allowed != db.Allowed {
			t.disagree++
		}
		for _, x := range []struct {
			d algorithms.Decision
			n *int
		}{{da, &na}, {db, &nb}, {dc, &nc}} {
			if x.d.Allowed {
				*x.n += int(cost)
			}
		}
	}
	return na, nb, nc, t
}

func TestUluleSteps(t *testing.T) {
	const ms = algorithms.Time(1000)
	u := winMust(peers.NewUlule(algorithms.Params{Rate: algorithms.Rate{N: 3, Per: time.Second}, Window: time.Second}))
	type step struct {
		at        algorithms.Time
		cost      int64
		allowed   bool
		remaining int64
		retry     time.Duration
		reset     time.Duration
	}
	var st algorithms.State
	for i, s := range []step{
		// A peek on a key never seen: no window yet; one would end at
		// 1.3s, whose Reset rounds down to 1s.
		{at: 300 * ms, cost: 0, allowed: true, remaining: 3, reset: 0},
		// The first hit starts the window (0.3s, 1.3s]; Reset says 1s.
		{at: 300 * ms, cost: 1, allowed: true, remaining: 2, reset: time.Second + time.Microsecond},
		{at: 400 * ms, cost: 2, allowed: true, remaining: 0, reset: 900*time.Millisecond + time.Microsecond},
		{at: 500 * ms, cost: 1, allowed: false, remaining: 0, retry: 500 * time.Millisecond, reset: 800*time.Millisecond + time.Microsecond},
		// A cost over the limit can never pass, and is counted too.
		{at: 500 * ms, cost: 4, allowed: false, remaining: 0, retry: algorithms.Never, reset: 800*time.Millisecond + time.Microsecond},
		// Past the header's Reset but inside the window: the header
		// says 0, the window says no.
		{at: 1200 * ms, cost: 1, allowed: false, remaining: 0, retry: 0, reset: 100*time.Millisecond + time.Microsecond},
		// The window's last instant still counts.
		{at: 1300 * ms, cost: 1, allowed: false, remaining: 0, reset: time.Microsecond},
		// A peek sees the count over the limit and changes nothing.
		{at: 1300 * ms, cost: 0, allowed: true, remaining: 0, reset: time.Microsecond},
		// The clock steps back before the first hit: still the same window.
		{at: 100 * ms, cost: 1, allowed: false, remaining: 0, retry: 900 * time.Millisecond, reset: 1200*time.Millisecond + time.Microsecond},
		// 1µs past the expiration: a new window (1.300001s, 2.300001s].
		{at: 1300*ms + 1, cost: 2, allowed: true, remaining: 1, reset: time.Second + time.Microsecond},
		// A cost over the limit on an expired window starts a window anyway.
		{at: 5 * 1000 * ms, cost: 5, allowed: false, remaining: 0, retry: algorithms.Never, reset: time.Second + time.Microsecond},
		{at: 5*1000*ms + 1, cost: 1, allowed: false, remaining: 0, retry: time.Second - time.Microsecond, reset: time.Second},
	} {
		prev := st
		var d algorithms.Decision
		st, d = u.Step(st, s.at, s.cost)
		if d.Allowed != s.allowed || d.Remaining != s.remaining || d.RetryAfter != s.retry || d.ResetAfter != s.reset || d.Limit != 3 {
			t.Fatalf("step %d (t=%dµs cost %d): %+v, want allowed=%v remaining=%d retry=%v reset=%v", i, s.at, s.cost, d, s.allowed, s.remaining, s.retry, s.reset)
		}
		if s.cost == 0 && (st.T != prev.T || st.N != prev.N || st.Prev != prev.Prev) {
			t.Fatalf("step %d: a peek moved the state from %+v to %+v", i, prev, st)
		}
	}
	if st.N != 6 || st.T != int64(5*1000*ms) || st.Prev != 1 {
		t.Fatalf("final state %+v, want the window started at 5s holding 6", st)
	}
}

// TestUluleWallClockRounding: the same first hit at 0 on a clock whose
// origin is half a second past a whole one reports Reset 1.5s − 0.5s later:
// a refused client comes back when the header says, half a second early.
func TestUluleWallClockRounding(t *testing.T) {
	p := algorithms.Params{Rate: algorithms.Rate{N: 1, Per: time.Second}, Window: time.Second}
	whole := winMust(peers.NewUlule(p))
	p.Origin = 1_700_000_000_500_000
	half := winMust(peers.NewUlule(p))
	// A second request, refused: it waits what X-RateLimit-Reset says.
	st, _ := whole.Step(algorithms.State{}, 0, 1)
	if _, d := whole.Step(st, 0, 1); d.RetryAfter != time.Second {
		t.Errorf("origin on a whole second: retry after %v, want 1s", d.RetryAfter)
	}
	st, _ = half.Step(algorithms.State{}, 0, 1)
	if _, d := half.Step(st, 0, 1); d.RetryAfter != 500*time.Millisecond || d.ResetAfter != time.Second+time.Microsecond {
		t.Errorf("origin half a second past: retry after %v, reset after %v; want 500ms (the header's whole second) and 1.000001s (the window's end)", d.RetryAfter, d.ResetAfter)
	}
	if r := half.Reset(algorithms.State{}, 0); r != 1_700_000_001 {
		t.Errorf("Reset = %d, want 1700000001", r)
	}
}

func TestUluleEdges(t *testing.T) {
	var zero peers.Ulule
	if st, d := zero.Step(algorithms.State{}, 5, 1); d.Allowed || d.RetryAfter != algorithms.Never || st.T != 0 || st.N != 0 || st.Prev != 0 {
		t.Errorf("zero Ulule: %+v %+v, want refused for good", st, d)
	}
	if _, d := zero.Step(algorithms.State{}, 5, 0); !d.Allowed {
		t.Errorf("zero Ulule refused a peek: %+v", d)
	}
	u := winMust(peers.NewUlule(algorithms.Params{Rate: algorithms.Rate{N: 10, Per: time.Second}, Window: time.Second, Origin: 42}))
	if p := u.Params(); p.Origin != 42 || p.Window != time.Second || p.Rate.N != 10 {
		t.Errorf("Params() = %+v", p)
	}
	// Huge and negative costs, instants far apart: no panic.
	st, d := u.Step(algorithms.State{}, 1<<60, 1<<62)
	if d.Allowed || d.RetryAfter != algorithms.Never {
		t.Errorf("cost 2^62: %+v", d)
	}
	if _, d = u.Step(st, -(1 << 60), -3); !d.Allowed {
		t.Errorf("negative cost is a peek: %+v", d)
	}
}

// TestWinPeersParamErrors: both peers take their limit from rate × window,
// and refuse what WindowLimit refuses, naming the parameter.
func TestWinPeersParamErrors(t *testing.T) {
	for _, tt := range []struct {
		p    algorithms.Params
		want string
	}{
		{algorithms.Params{Window: time.Second}, "rate: must be positive"},
		{algorithms.Params{Rate: algorithms.Rate{N: 1, Per: time.Second}}, "window: must be at least 1µs"},
		{algorithms.Params{Rate: algorithms.Rate{N: 1, Per: time.Second}, Window: 100 * time.Millisecond}, "window: 100ms at 1/s admits less than one"},
	} {
		for _, name := range []string{"ulule-limiter", "go-limiter"} {
			_, err := algorithms.New(name, tt.p)
			var pe *algorithms.ParamError
			if !errors.As(err, &pe) || len(err.Error()) < len(tt.want) || err.Error()[:len(tt.want)] != tt.want {
				t.Errorf("New(%q, %+v) = %v, want a ParamError starting %q", name, tt.p, err, tt.want)
			}
		}
	}
}

func winMust[A any](a A, err error) A {
	if err != nil {
		panic(err)
	}
	return a
}
