package algorithms_test

import (
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
)

// zeroValues are the limiters a user gets by declaring one instead of
// calling its constructor, with the name each must still report.
func zeroValues() []struct {
	name string
	alg  algorithms.Algorithm
} {
	return []struct {
		name string
		alg  algorithms.Algorithm
	}{
		{"token-bucket", &algorithms.TokenBucket{}},
		{"gcra", &algorithms.GCRA{}},
		{"leaky-bucket", &algorithms.LeakyBucket{}},
		{"fixed-window", &algorithms.FixedWindow{}},
		{"sliding-log", &algorithms.SlidingLog{}},
		{"sliding-window", &algorithms.SlidingWindow{}},
	}
}

// TestZeroValueIsALimitOfZero steps every zero limiter through the inputs
// that divide by the rate or the window in a built one (elapsed time, a
// clock gone backwards, a state left by another limiter) and checks the
// documented answer: a positive cost is refused for good, a peek passes,
// and the state comes back untouched.
func TestZeroValueIsALimitOfZero(t *testing.T) {
	refused := algorithms.Decision{RetryAfter: algorithms.Never}
	peek := algorithms.Decision{Allowed: true}
	states := []algorithms.State{
		{},
		{T: 5_000_000, N: 3, Prev: 2},
		{T: -1, N: math.MaxInt64},
		{Log: []int64{1_000_000, 2_000_000}},
	}
	steps := []struct {
		now  algorithms.Time
		cost int64
		want algorithms.Decision
	}{
		{now: 0, cost: 1, want: refused},
		{now: 0, cost: 0, want: peek},
		{now: 0, cost: -3, want: peek}, // a negative cost counts as 0
		{now: algorithms.At(time.Hour), cost: 1, want: refused},
		{now: algorithms.At(time.Hour), cost: math.MaxInt64, want: refused},
		{now: -1_000_000, cost: 1, want: refused},
		{now: math.MaxInt64, cost: 1, want: refused},
		{now: math.MinInt64, cost: 0, want: peek},
	}
	for _, z := range zeroValues() {
		t.Run(z.name, func(t *testing.T) {
			if got := z.alg.Name(); got != z.name {
				t.Errorf("Name() = %q, want %q", got, z.name)
			}
			if got := z.alg.Params(); got != (algorithms.Params{}) {
				t.Errorf("Params() = %+v, want the zero Params", got)
			}
			// A middleware reads a window limiter's Limit for its quota.
			if wl, ok := z.alg.(interface{ Limit() int64 }); ok && wl.Limit() != 0 {
				t.Errorf("Limit() = %d, want 0", wl.Limit())
			}
			for _, prev := range states {
				for _, s := range steps {
					before := cloneState(prev)
					next, d := z.alg.Step(prev, s.now, s.cost)
					if d != s.want {
						t.Errorf("Step(%+v, %d, %d) decided %+v, want %+v", prev, s.now, s.cost, d, s.want)
					}
					if !reflect.DeepEqual(next, before) || !reflect.DeepEqual(prev, before) {
						t.Errorf("Step(%+v, %d, %d) moved the state to %+v (prev now %+v), want it untouched",
							before, s.now, s.cost, next, prev)
					}
				}
			}
		})
	}
}

func TestZeroSlidingLogStepInPlaceIsALimitOfZero(t *testing.T) {
	var l algorithms.SlidingLog
	st := algorithms.State{Log: []int64{10, 20}}
	for i, cost := range []int64{1, 0, 5} {
		d := l.StepInPlace(&st, algorithms.At(time.Second), cost)
		if d.Allowed != (cost == 0) || d.Remaining != 0 || d.Limit != 0 {
			t.Errorf("step %d (cost %d): %+v, want allowed only for the peek, limit and remaining 0", i, cost, d)
		}
		if cost > 0 && d.RetryAfter != algorithms.Never {
			t.Errorf("step %d (cost %d): RetryAfter %v, want Never", i, cost, d.RetryAfter)
		}
		if !reflect.DeepEqual(st.Log, []int64{10, 20}) {
			t.Fatalf("step %d (cost %d): log is %v, want [10 20] untouched", i, cost, st.Log)
		}
	}
}

func cloneState(st algorithms.State) algorithms.State {
	st.Log = append([]int64(nil), st.Log...)
	return st
}
