package algorithms

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/ratelim/ratelim/algorithms/algorithmstest"
	"github.com/ratelim/ratelim/algorithms/internal/exact"
)

// request is one arrival in a generated sequence: at is what the server's
// clock read, real is when it really happened.
type request struct {
	at   Time
	real Time
	cost int64
}

// outcome is a request with the decision it got.
type outcome struct {
	request
	Decision
}

var periods = []time.Duration{time.Second, time.Minute, 250 * time.Millisecond, 3 * time.Second, 7 * time.Millisecond}

func genRate(t *rapid.T) Rate {
	return Rate{N: rapid.Int64Range(1, 50).Draw(t, "rate.N"), Per: rapid.SampledFrom(periods).Draw(t, "rate.Per")}
}

func genBucket(t *rapid.T, name string) Algorithm {
	a, err := New(name, Params{Rate: genRate(t), Burst: rapid.Int64Range(1, 20).Draw(t, "burst")})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// genWindowed draws a window algorithm whose limit is between 1 and 100,
// small enough that sequences reach it.
func genWindowed(t *rapid.T, name string) Algorithm {
	window := rapid.SampledFrom([]time.Duration{100 * time.Millisecond, time.Second, 1500 * time.Millisecond, time.Minute}).Draw(t, "window")
	per := rapid.SampledFrom(periods).Draw(t, "rate.Per")
	// Limit = N × window / per; draw it, then the N that gives it (rounded
	// down, which the algorithm does too).
	limit := rapid.Int64Range(1, 100).Draw(t, "limit")
	n := max(int64(exact.MulDiv(uint64(limit), uint64(per), uint64(window))), 1)
	a, err := New(name, Params{Rate: Rate{N: n, Per: per}, Window: window})
	if err != nil || a.(limited).Limit() > 100 {
		// A long period over a short window rounds to under one request
		// per window, a short one over a long window to thousands: state
		// the limit per window directly instead.
		a, err = New(name, Params{Rate: Rate{N: limit, Per: window}, Window: window})
		if err != nil {
			t.Fatal(err)
		}
	}
	return a
}

// genRequests draws arrivals (algorithmstest.Requests, which the peer
// models' tests draw too) as this package's requests.
func genRequests(t *rapid.T, backwards bool) []request {
	drawn := algorithmstest.Requests(t, backwards)
	reqs := make([]request, len(drawn))
	for i, r := range drawn {
		reqs[i] = request{at: Time(r.At), real: Time(r.Real), cost: r.Cost}
	}
	return reqs
}

func replay(alg Algorithm, reqs []request) []outcome {
	var st State
	out := make([]outcome, len(reqs))
	for i, r := range reqs {
		var d Decision
		st, d = alg.Step(st, r.at, r.cost)
		out[i] = outcome{r, d}
	}
	return out
}

// checkBucketBound requires that over every interval [a, b] between two
// admitted requests, the admitted cost is at most burst + rate × (b − a), in
// real time: a clock stepped back must not let more through.
func checkBucketBound(t *rapid.T, p Params, out []outcome) {
	per := int64(p.Rate.Per / time.Microsecond)
	for i := range out {
		if !out[i].Allowed {
			continue
		}
		var sum int64
		for j := i; j < len(out); j++ {
			if !out[j].Allowed {
				continue
			}
			sum += out[j].cost
			span := int64(out[j].real - out[i].real)
			// sum ≤ burst + N × span / per, kept in integers.
			if sum*per > p.Burst*per+p.Rate.N*span {
				t.Fatalf("admitted %d in %dµs (requests %d..%d), more than burst %d + %v × t", sum, span, i, j, p.Burst, p.Rate)
			}
		}
	}
}

// checkWindowBound requires that no window (t − w, t] of real time holds
// more than limit admitted cost.
func checkWindowBound(t *rapid.T, w, limit int64, out []outcome) {
	for j := range out {
		if !out[j].Allowed {
			continue
		}
		var sum int64
		for i := 0; i <= j; i++ {
			if out[i].Allowed && int64(out[i].real) > int64(out[j].real)-w {
				sum += out[i].cost
			}
		}
		if sum > limit {
			t.Fatalf("admitted %d in the window ending at request %d (t=%d, clock %d), limit %d", sum, j, out[j].real, out[j].at, limit)
		}
	}
}

type limited interface{ Limit() int64 }

func windowMicros(a Algorithm) int64 { return int64(a.Params().Window / time.Microsecond) }

func TestPropertyBucketsNeverExceedBurstPlusRate(t *testing.T) {
	for _, name := range []string{"token-bucket", "gcra", "leaky-bucket"} {
		t.Run(name, rapid.MakeCheck(func(t *rapid.T) {
			alg := genBucket(t, name)
			for _, backwards := range []bool{false, true} {
				reqs := genRequests(t, backwards)
				checkBucketBound(t, alg.Params(), replay(alg, reqs))
			}
		}))
	}
}

func TestPropertySlidingLogNeverExceedsLimitInAnyWindow(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		alg := genWindowed(t, "sliding-log")
		for _, backwards := range []bool{false, true} {
			reqs := genRequests(t, backwards)
			checkWindowBound(t, windowMicros(alg), alg.(limited).Limit(), replay(alg, reqs))
		}
	})
}

// checkAlignedWindows requires that no window aligned to multiples of w
// holds more than limit admitted cost.
func checkAlignedWindows(t *rapid.T, w, limit int64, out []outcome) {
	perWindow := map[int64]int64{}
	for _, o := range out {
		if o.Allowed {
			perWindow[exact.FloorDiv(int64(o.real), w)] += o.cost
		}
	}
	for win, n := range perWindow {
		if n > limit {
			t.Fatalf("aligned window %d admitted %d, limit %d", win, n, limit)
		}
	}
}

// TestPropertyWindowCountersStayWithinTheirWindows: on a steady clock the
// fixed window and the sliding-window counter admit at most limit in each
// aligned window, and at most 2 × limit in any sliding one (the fixed
// window reaches it at a boundary; the weighted estimate stays far below,
// and compare measures how far). A clock stepped back never moves a window
// back, so in real time the 2 × limit bound still holds.
func TestPropertyWindowCountersStayWithinTheirWindows(t *testing.T) {
	for _, name := range []string{"fixed-window", "sliding-window"} {
		t.Run(name, rapid.MakeCheck(func(t *rapid.T) {
			alg := genWindowed(t, name)
			w, limit := windowMicros(alg), alg.(limited).Limit()
			steady := replay(alg, genRequests(t, false))
			checkAlignedWindows(t, w, limit, steady)
			checkWindowBound(t, w, 2*limit, steady)
			checkWindowBound(t, w, 2*limit, replay(alg, genRequests(t, true)))
		}))
	}
}

// TestFixedWindowAdmitsTwiceTheLimitAcrossABoundary is the fixed window's
// flaw as a test: limit requests in the window's last microsecond and limit
// more in the next one's first, 2 × limit within 2 µs. The sliding log with
// the same numbers admits only limit.
func TestFixedWindowAdmitsTwiceTheLimitAcrossABoundary(t *testing.T) {
	rate := Rate{N: 100, Per: time.Second}
	fw := must(NewFixedWindow(rate, time.Second))
	sl := must(NewSlidingLog(rate, time.Second))
	var reqs []request
	for range 150 {
		reqs = append(reqs, request{at: s1 - 1, cost: 1})
	}
	for range 150 {
		reqs = append(reqs, request{at: s1, cost: 1})
	}
	count := func(out []outcome) (n int) {
		for _, o := range out {
			if o.Allowed {
				n++
			}
		}
		return n
	}
	if got := count(replay(fw, reqs)); got != 200 {
		t.Errorf("fixed-window admitted %d across the boundary, want 2 × 100", got)
	}
	if got := count(replay(sl, reqs)); got != 100 {
		t.Errorf("sliding-log admitted %d across the boundary, want 100", got)
	}
}

// TestPropertyRemainingIsExact: a decision's Remaining is exactly how many
// unit requests the next ones at the same instant admit. In particular, none
// admits a request when its state says zero remaining.
func TestPropertyRemainingIsExact(t *testing.T) {
	for _, name := range ExactNames() {
		t.Run(name, rapid.MakeCheck(func(t *rapid.T) {
			alg := genAny(t, name)
			reqs := genRequests(t, rapid.Bool().Draw(t, "backwards"))
			var st State
			for i, r := range reqs {
				var d Decision
				st, d = alg.Step(st, r.at, r.cost)
				if d.Remaining < 0 || d.Remaining > d.Limit {
					t.Fatalf("request %d: remaining %d outside [0, %d]", i, d.Remaining, d.Limit)
				}
				if d.RetryAfter < 0 || d.ResetAfter < 0 || d.Delay < 0 {
					t.Fatalf("request %d: negative duration in %+v", i, d)
				}
				if !d.Allowed && d.RetryAfter == 0 {
					t.Fatalf("request %d: rejected with no Retry-After: %+v", i, d)
				}
				probe := st
				for k := int64(0); k < d.Remaining; k++ {
					var pd Decision
					if probe, pd = alg.Step(probe, r.at, 1); !pd.Allowed {
						t.Fatalf("request %d: remaining %d, but unit request %d at the same instant was rejected", i, d.Remaining, k+1)
					}
				}
				if _, pd := alg.Step(probe, r.at, 1); pd.Allowed {
					t.Fatalf("request %d: remaining %d, but request %d at the same instant was admitted too", i, d.Remaining, d.Remaining+1)
				}
			}
		}))
	}
}

// TestPropertyRetryAfterIsHonest: a rejected request sent again exactly
// RetryAfter later, with nothing in between, is admitted, and one sent a
// microsecond earlier is not, on a clock that does not go backwards.
func TestPropertyRetryAfterIsHonest(t *testing.T) {
	for _, name := range ExactNames() {
		t.Run(name, rapid.MakeCheck(func(t *rapid.T) {
			alg := genAny(t, name)
			var st State
			for i, r := range genRequests(t, false) {
				prev := st
				var d Decision
				st, d = alg.Step(st, r.at, r.cost)
				if d.Allowed || d.RetryAfter == Never {
					continue
				}
				wait := Time(d.RetryAfter / time.Microsecond)
				if _, again := alg.Step(prev, r.at+wait, r.cost); !again.Allowed {
					t.Fatalf("request %d (cost %d at %d): Retry-After %v, but rejected again then: %+v", i, r.cost, r.at, d.RetryAfter, again)
				}
				if _, early := alg.Step(prev, r.at+wait-1, r.cost); early.Allowed {
					t.Fatalf("request %d (cost %d at %d): Retry-After %v, but admitted 1µs earlier", i, r.cost, r.at, d.RetryAfter)
				}
			}
		}))
	}
}

// TestPropertyBackwardsClockNeverRefills: at an instant earlier than one
// already seen, a limiter has no more room than it had at the latest instant.
func TestPropertyBackwardsClockNeverRefills(t *testing.T) {
	for _, name := range ExactNames() {
		t.Run(name, rapid.MakeCheck(func(t *rapid.T) {
			alg := genAny(t, name)
			reqs := genRequests(t, false)
			var st State
			for _, r := range reqs {
				st, _ = alg.Step(st, r.at, r.cost)
			}
			latest := reqs[len(reqs)-1].at
			_, atLatest := alg.Step(st, latest, 0)
			back := latest - Time(rapid.Int64Range(1, 10_000_000).Draw(t, "back"))
			_, atBack := alg.Step(st, back, 0)
			if atBack.Remaining > atLatest.Remaining {
				t.Fatalf("stepping back %dµs: remaining %d, more than %d at the latest instant", latest-back, atBack.Remaining, atLatest.Remaining)
			}
		}))
	}
}

// TestPropertyGCRAIsTheTokenBucket: same rate and burst, same decisions, on
// any sequence whose clock does not go backwards. The leaky bucket admits
// the same requests too; it only delays them.
func TestPropertyGCRAIsTheTokenBucket(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := Params{Rate: genRate(t), Burst: rapid.Int64Range(1, 20).Draw(t, "burst")}
		tb, _ := New("token-bucket", p)
		gcra, _ := New("gcra", p)
		leaky, _ := New("leaky-bucket", p)
		reqs := genRequests(t, false)
		a, b, c := replay(tb, reqs), replay(gcra, reqs), replay(leaky, reqs)
		for i := range reqs {
			if a[i].Decision != b[i].Decision {
				t.Fatalf("request %d (t=%d cost=%d): token bucket %+v, gcra %+v", i, reqs[i].at, reqs[i].cost, a[i].Decision, b[i].Decision)
			}
			if a[i].Allowed != c[i].Allowed || a[i].Remaining != c[i].Remaining {
				t.Fatalf("request %d: token bucket %+v, leaky bucket %+v", i, a[i].Decision, c[i].Decision)
			}
		}
	})
}

func TestPropertyStepIsPure(t *testing.T) {
	for _, name := range ExactNames() {
		t.Run(name, rapid.MakeCheck(func(t *rapid.T) {
			alg := genAny(t, name)
			var st State
			for _, r := range genRequests(t, true) {
				before := fmt.Sprint(st)
				next1, d1 := alg.Step(st, r.at, r.cost)
				next2, d2 := alg.Step(st, r.at, r.cost)
				if fmt.Sprint(st) != before {
					t.Fatalf("Step modified its input: %s became %v", before, st)
				}
				if d1 != d2 || fmt.Sprint(next1) != fmt.Sprint(next2) {
					t.Fatalf("Step is not deterministic: %+v/%v vs %+v/%v", d1, next1, d2, next2)
				}
				st = next1
			}
		}))
	}
}

func genAny(t *rapid.T, name string) Algorithm {
	switch name {
	case "token-bucket", "gcra", "leaky-bucket":
		return genBucket(t, name)
	}
	return genWindowed(t, name)
}

// TestPropertyInPlaceIsStep: the limiters that step a state in place (the
// sliding log, the token bucket, the fixed and sliding windows) decide
// exactly as Step does, request by
// request, backwards clocks and costs over the limit included, and reach
// the same state, log and all.
func TestPropertyInPlaceIsStep(t *testing.T) {
	type inPlacer interface {
		Algorithm
		StepInPlace(st *State, now Time, cost int64) Decision
	}
	rapid.Check(t, func(t *rapid.T) {
		var alg inPlacer
		switch rapid.SampledFrom([]string{"sliding-log", "token-bucket", "fixed-window", "sliding-window"}).Draw(t, "algorithm") {
		case "sliding-log":
			alg = genWindowed(t, "sliding-log").(*SlidingLog)
		case "token-bucket":
			alg = genBucket(t, "token-bucket").(*TokenBucket)
		case "fixed-window":
			alg = genWindowed(t, "fixed-window").(*FixedWindow)
		default:
			alg = genWindowed(t, "sliding-window").(*SlidingWindow)
		}
		reqs := genRequests(t, rapid.Bool().Draw(t, "backwards"))
		var pure, inPlace State
		for i, r := range reqs {
			var want Decision
			pure, want = alg.Step(pure, r.at, r.cost)
			got := alg.StepInPlace(&inPlace, r.at, r.cost)
			if got != want || pure.T != inPlace.T || pure.N != inPlace.N || pure.Prev != inPlace.Prev || !slices.Equal(pure.Log, inPlace.Log) {
				t.Fatalf("%s, request %d (%+v): in place %+v at %+v, Step %+v at %+v", alg.Name(), i, r, got, inPlace, want, pure)
			}
		}
	})
}
