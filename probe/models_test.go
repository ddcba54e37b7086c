package probe

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/ratelim/ratelim/algorithms"
)

// TestModelsAgreeWithAlgorithms holds each model the fit uses to the
// algorithm ratelim serves, on random arrivals: the same numbers must
// admit the same requests, or the fit would name a limiter by a model
// that decides otherwise. The bucket is held to the token bucket and to
// GCRA; the clock-aligned windows to fixed-window and sliding-window on
// Unix microseconds (origin 0), as a live server runs them.
func TestModelsAgreeWithAlgorithms(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		kind := rapid.SampledFrom([]string{"token-bucket", "gcra", "fixed-window", "sliding-window", "sliding-log"}).Draw(t, "algorithm")
		var alg algorithms.Algorithm
		var m model
		var err error
		switch kind {
		case "token-bucket", "gcra":
			n := rapid.Int64Range(1, 50).Draw(t, "rate")
			burst := rapid.Int64Range(1, 20).Draw(t, "burst")
			rate := algorithms.Rate{N: n, Per: time.Second}
			if kind == "gcra" {
				alg, err = algorithms.NewGCRA(rate, burst)
			} else {
				alg, err = algorithms.NewTokenBucket(rate, burst)
			}
			m = newModel(candidate{family: familyBucket}, params{rate: float64(n), burst: burst})
		default:
			limit := rapid.Int64Range(1, 30).Draw(t, "limit")
			window := time.Duration(rapid.SampledFrom([]int{100, 250, 500, 1000, 2000}).Draw(t, "window ms")) * time.Millisecond
			rate := algorithms.Rate{N: limit, Per: window}
			f := map[string]family{"fixed-window": familyFixedClock, "sliding-window": familySlidingClock, "sliding-log": familyLog}[kind]
			switch kind {
			case "fixed-window":
				alg, err = algorithms.NewFixedWindow(rate, window)
			case "sliding-window":
				alg, err = algorithms.NewSlidingWindow(rate, window)
			default:
				alg, err = algorithms.NewSlidingLog(rate, window)
			}
			m = newModel(candidate{family: f}, params{limit: limit, window: window.Microseconds()})
		}
		if err != nil {
			t.Fatal(err)
		}
		now := int64(1_765_000_000_000_000) + rapid.Int64Range(0, 10_000_000).Draw(t, "start µs")
		var st algorithms.State
		for i := range rapid.IntRange(1, 200).Draw(t, "requests") {
			// Round gaps half the time: they land on the windows' edges
			// and the tokens' due instants, where a model is most likely
			// to differ.
			gap := rapid.OneOf(rapid.Int64Range(0, 150_000), rapid.SampledFrom([]int64{0, 10_000, 50_000, 100_000, 250_000})).Draw(t, fmt.Sprintf("gap %d", i))
			now += gap
			var d algorithms.Decision
			st, d = alg.Step(st, algorithms.Time(now), 1)
			if got := m.decide(decision{t: now}); got != d.Allowed {
				t.Fatalf("request %d at %d µs: model admits %v, %s admits %v", i, now, got, kind, d.Allowed)
			}
		}
	})
}

// TestModelsThatCountRefusals: a refused request postpones recovery only
// when the model counts refusals, and never in a fixed window.
func TestModelsThatCountRefusals(t *testing.T) {
	for f := range familyConcurrency { // a concurrency limit counts what is in flight, not what came
		p := params{rate: 10, burst: 2, limit: 2, window: 200_000}
		for _, counts := range []bool{false, true} {
			m := newModel(candidate{family: f, countsRefused: counts}, p)
			// Two admitted at 0, then refused every 10 ms for 400 ms, then
			// one more right after: admitted unless the refusals counted.
			m.decide(decision{})
			m.decide(decision{})
			for at := int64(10_000); at < 400_000; at += 10_000 {
				m.decide(decision{t: at})
			}
			// A fixed window starts from zero at its next window whatever
			// it counted: the refusals cannot show.
			want := !counts || f == familyFixedClock || f == familyFixedFirst
			if got := m.decide(decision{t: 400_001}); got != want {
				t.Errorf("%s, counting refusals %v: the request after 40 refusals admitted %v, want %v", familyName(f), counts, got, want)
			}
		}
	}
}

// TestSignificantDigits: the simplest value is the one a person writes.
func TestSignificantDigits(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want int
	}{{20, 1}, {1_000_000, 1}, {19.97, 4}, {2.5, 2}, {1_500_000, 2}, {20.05, 4}, {0.25, 2}} {
		if got := significantDigits(c.v); got != c.want {
			t.Errorf("significantDigits(%g) = %d, want %d", c.v, got, c.want)
		}
	}
	tried := []scored{{19.97, 0}, {20, 0}, {20.04, 0}, {21, 3}}
	if wrong, _, v, lo, hi, ok := pickSimplest(tried, 10, 1, true); !ok || wrong != 0 || v != 20 || lo != 19.97 || hi != 20.04 {
		t.Errorf("pickSimplest = %d %g [%g, %g] %v, want 0 20 [19.97, 20.04]", wrong, v, lo, hi, ok)
	}
	// 20 one worse than its neighbours, inside their range: within the
	// slack it is said; past it, not; outside the range, never.
	tried = []scored{{19.99, 2}, {20, 3}, {20.02, 2}}
	if wrong, _, v, _, _, _ := pickSimplest(tried, 10, 1, true); v != 20 || wrong != 3 {
		t.Errorf("pickSimplest chose %g (%d wrong), want 20 (3 wrong, within 1)", v, wrong)
	}
	if _, _, v, _, _, _ := pickSimplest(tried, 10, 0, true); v == 20 {
		t.Error("pickSimplest chose 20 with no slack for its extra mismatch")
	}
	tried = []scored{{19.99, 2}, {20.02, 2}, {30, 3}}
	if _, _, v, _, _, _ := pickSimplest(tried, 10, 1, true); v == 30 {
		t.Error("pickSimplest chose 30, outside the range of the best")
	}
	// A rate per minute is as simple as one per second: 10/m (0.1667/s)
	// over the 0.1648/s that fits as well (significantDigits(10/60) is 9).
	tried = []scored{{0.1648, 0}, {10.0 / 60, 0}, {0.1671, 0}}
	if _, _, v, _, _, _ := pickSimplest(tried, 10, 1, true); v != 10.0/60 {
		t.Errorf("pickSimplest chose %g, want 10/60", v)
	}
}

// TestLimitBlockOfARatePerMinute: the block writes the unrounded rate, so
// 10/m is "10/m", never 1667/10000s.
func TestLimitBlockOfARatePerMinute(t *testing.T) {
	r := Report{Target: "http://127.0.0.1:1/", Limited: true, Algorithm: "token-bucket", Family: "token bucket or GCRA",
		Rate: round4(10.0 / 60), exactRate: 10.0 / 60, Burst: 5}
	if block := LimitBlock(r); !strings.Contains(block, "rate: 10/m\n") {
		t.Errorf("block\n%s\nwant rate: 10/m", block)
	}
	// Whole in no unit: to the report's four digits.
	r.Rate, r.exactRate = 49.95, 49.9524
	if block := LimitBlock(r); !strings.Contains(block, "rate: 4995/100s\n") {
		t.Errorf("block\n%s\nwant rate: 4995/100s", block)
	}
}
