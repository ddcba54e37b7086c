package peers_test

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/algorithms/peers"
)

// envoyOrigin is 2026-01-01 00:00:00 UTC in Unix µs: a multiple of every
// envoy unit but the week's and the year's, so Time 0 starts a second, a
// minute, an hour and a day.
const envoyOrigin = algorithms.Time(1767225600_000_000)

func newEnvoy(t interface {
	Helper()
	Fatal(...any)
}, r algorithms.Rate, window time.Duration, origin algorithms.Time) *peers.EnvoyRatelimit {
	t.Helper()
	e, err := peers.NewEnvoyRatelimit(algorithms.Params{Rate: r, Window: window, Origin: origin})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

type envoyStep struct {
	at        time.Duration // after Time 0
	cost      int64         // hits_addend
	allowed   bool          // code OK, not OVER_LIMIT
	remaining int64         // limit_remaining
	reset     time.Duration // duration_until_reset
	count     int64         // the key's value after INCRBY
}

func runEnvoy(t *testing.T, e *peers.EnvoyRatelimit, steps []envoyStep) {
	t.Helper()
	var st algorithms.State
	for i, s := range steps {
		var d algorithms.Decision
		st, d = e.Step(st, algorithms.At(s.at), s.cost)
		retry := time.Duration(0)
		if !s.allowed {
			retry = s.reset
		}
		want := algorithms.Decision{Allowed: s.allowed, Limit: e.Limit(), Remaining: s.remaining, RetryAfter: retry, ResetAfter: s.reset}
		if d != want || st.N != s.count {
			t.Fatalf("step %d (at %v, cost %d): %+v with count %d, want %+v with count %d", i, s.at, s.cost, d, st.N, want, s.count)
		}
	}
}

// TestEnvoyRatelimitSteps follows the service's arithmetic by hand:
// requests_per_unit 10, unit MINUTE (divider 60, UnitToDivider). The key
// is (now/60)×60 (GenerateCacheKey); INCRBY returns the count after the
// hit (pipelineAppend); OVER_LIMIT if it is above 10, else OK with 10 −
// count remaining (GetResponseDescriptorStatus); the reset is 60 − now%60
// whole seconds (CalculateReset), now being time.Now().Unix().
func TestEnvoyRatelimitSteps(t *testing.T) {
	e := newEnvoy(t, algorithms.Rate{N: 10, Per: time.Minute}, time.Minute, envoyOrigin)
	runEnvoy(t, e, []envoyStep{
		{at: 0, cost: 1, allowed: true, remaining: 9, reset: 60 * time.Second, count: 1},
		{at: 30*time.Second + 999*time.Millisecond, cost: 3, allowed: true, remaining: 6, reset: 30 * time.Second, count: 4},
		{at: 31 * time.Second, cost: 6, allowed: true, remaining: 0, reset: 29 * time.Second, count: 10},
		// 11 > 10: OVER_LIMIT, and the hit is counted all the same.
		{at: 40 * time.Second, cost: 1, allowed: false, remaining: 0, reset: 20 * time.Second, count: 11},
		{at: 59*time.Second + 999_999*time.Microsecond, cost: 1, allowed: false, remaining: 0, reset: time.Second, count: 12},
		// A check-only descriptor (hits_addend 0) is over the limit too.
		{at: 59 * time.Second, cost: 0, allowed: false, remaining: 0, reset: time.Second, count: 12},
		// A new minute is a new key.
		{at: 60 * time.Second, cost: 10, allowed: true, remaining: 0, reset: 60 * time.Second, count: 10},
		{at: 61 * time.Second, cost: 0, allowed: true, remaining: 0, reset: 59 * time.Second, count: 10},
	})

	// Origin moves the windows: with the clock at hh:mm:30 at Time 0, the
	// minute ends 30s later, and the count starts again then.
	shifted := newEnvoy(t, algorithms.Rate{N: 10, Per: time.Minute}, time.Minute, envoyOrigin+algorithms.At(30*time.Second))
	runEnvoy(t, shifted, []envoyStep{
		{at: 0, cost: 10, allowed: true, remaining: 0, reset: 30 * time.Second, count: 10},
		{at: 29 * time.Second, cost: 1, allowed: false, remaining: 0, reset: time.Second, count: 11},
		{at: 30 * time.Second, cost: 1, allowed: true, remaining: 9, reset: 60 * time.Second, count: 1},
	})

	// DAY windows are UTC days: 100/h × 24h is 2400 a day, reset at midnight.
	day := newEnvoy(t, algorithms.Rate{N: 100, Per: time.Hour}, 24*time.Hour, envoyOrigin)
	runEnvoy(t, day, []envoyStep{
		{at: 23 * time.Hour, cost: 2400, allowed: true, remaining: 0, reset: time.Hour, count: 2400},
		{at: 24 * time.Hour, cost: 1, allowed: true, remaining: 2399, reset: 24 * time.Hour, count: 1},
	})
}

// TestEnvoyRatelimitAdmitsTwiceTheLimitAcrossABoundary: 100 requests in a
// second's last microsecond and 100 in the next one's first all pass, 200
// within 2µs; the sliding log with the same 100/s admits 100.
func TestEnvoyRatelimitAdmitsTwiceTheLimitAcrossABoundary(t *testing.T) {
	rate := algorithms.Rate{N: 100, Per: time.Second}
	e := newEnvoy(t, rate, time.Second, envoyOrigin)
	sl, err := algorithms.NewSlidingLog(rate, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	admitted := func(alg algorithms.Algorithm) (n int) {
		var st algorithms.State
		for i := range 300 {
			at := algorithms.Time(999_999)
			if i >= 150 {
				at = 1_000_000
			}
			var d algorithms.Decision
			if st, d = alg.Step(st, at, 1); d.Allowed {
				n++
			}
		}
		return n
	}
	if got := admitted(e); got != 200 {
		t.Errorf("envoy-ratelimit admitted %d across the boundary, want 2 × 100", got)
	}
	if got := admitted(sl); got != 100 {
		t.Errorf("sliding-log admitted %d, want 100", got)
	}
}

// TestEnvoyRatelimitCountsRefusedHits: limit 10 a second. Nine unit
// requests, then one of cost 2, refused by both. The fixed window did not
// count it and admits the next unit request (10 of 10); envoy's INCRBY
// did (count 11), so it refuses the unit request, and a check-only
// request, for the rest of the second.
func TestEnvoyRatelimitCountsRefusedHits(t *testing.T) {
	rate := algorithms.Rate{N: 10, Per: time.Second}
	e := newEnvoy(t, rate, time.Second, envoyOrigin)
	fw, err := algorithms.NewFixedWindow(rate, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	costs := []int64{1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 0}
	want := map[string][]bool{
		"envoy-ratelimit": {true, true, true, true, true, true, true, true, true, false, false, false},
		"fixed-window":    {true, true, true, true, true, true, true, true, true, false, true, true},
	}
	for _, alg := range []algorithms.Algorithm{e, fw} {
		var st algorithms.State
		for i, c := range costs {
			var d algorithms.Decision
			st, d = alg.Step(st, algorithms.Time(500_000), c)
			if d.Allowed != want[alg.Name()][i] {
				t.Errorf("%s, request %d (cost %d): allowed %v, want %v", alg.Name(), i, c, d.Allowed, want[alg.Name()][i])
			}
		}
		if alg == algorithms.Algorithm(e) && st.N != 12 {
			t.Errorf("envoy's count is %d, want 12 hits", st.N)
		}
	}
}

// TestEnvoyRatelimitEdges: the zero State, clocks gone back one window and
// further, costs 0 and above the limit, a negative cost.
func TestEnvoyRatelimitEdges(t *testing.T) {
	e := newEnvoy(t, algorithms.Rate{N: 5, Per: time.Second}, time.Second, envoyOrigin)
	sec := algorithms.Time(1_000_000)
	tests := []struct {
		name string
		prev algorithms.State
		at   algorithms.Time
		cost int64
		want algorithms.Decision
		next algorithms.State
	}{
		{"a new key", algorithms.State{}, 0, 1,
			algorithms.Decision{Allowed: true, Limit: 5, Remaining: 4, ResetAfter: time.Second}, algorithms.State{N: 1}},
		{"a peek writes a count of 0", algorithms.State{}, 3 * sec, 0,
			algorithms.Decision{Allowed: true, Limit: 5, Remaining: 5, ResetAfter: time.Second}, algorithms.State{T: 3_000_000}},
		{"the next window keeps this one's count as Prev", algorithms.State{T: 0, N: 4}, sec, 2,
			algorithms.Decision{Allowed: true, Limit: 5, Remaining: 3, ResetAfter: time.Second}, algorithms.State{T: 1_000_000, N: 2, Prev: 4}},
		{"back one window counts in the previous key", algorithms.State{T: 1_000_000, N: 2, Prev: 4}, sec / 2, 2,
			algorithms.Decision{Limit: 5, RetryAfter: time.Second, ResetAfter: time.Second}, algorithms.State{T: 1_000_000, N: 2, Prev: 6}},
		{"back two windows finds the key expired", algorithms.State{T: 2_000_000, N: 5, Prev: 5}, sec / 2, 1,
			algorithms.Decision{Allowed: true, Limit: 5, Remaining: 4, ResetAfter: time.Second}, algorithms.State{T: 2_000_000, N: 5, Prev: 5}},
		{"a cost above the limit never passes", algorithms.State{}, 0, 6,
			algorithms.Decision{Limit: 5, RetryAfter: algorithms.Never, ResetAfter: time.Second}, algorithms.State{N: 6}},
		{"a negative cost is a peek", algorithms.State{N: 3}, 0, -4,
			algorithms.Decision{Allowed: true, Limit: 5, Remaining: 2, ResetAfter: time.Second}, algorithms.State{N: 3}},
		{"a count at the top stays there", algorithms.State{N: math.MaxInt64 - 1}, 0, 5,
			algorithms.Decision{Limit: 5, RetryAfter: time.Second, ResetAfter: time.Second}, algorithms.State{N: math.MaxInt64}},
	}
	for _, tt := range tests {
		next, d := e.Step(tt.prev, tt.at, tt.cost)
		if d != tt.want || !reflect.DeepEqual(next, tt.next) {
			t.Errorf("%s: %+v → %+v, want %+v → %+v", tt.name, d, next, tt.want, tt.next)
		}
	}
	for _, at := range []algorithms.Time{math.MinInt64, -1, math.MaxInt64} {
		for _, prev := range []algorithms.State{{}, {T: math.MaxInt64, N: math.MaxInt64, Prev: math.MaxInt64}, {T: math.MinInt64}} {
			e.Step(prev, at, math.MaxInt64)
		}
	}
	var zero peers.EnvoyRatelimit
	if next, d := zero.Step(algorithms.State{N: 3}, 0, 1); d != (algorithms.Decision{RetryAfter: algorithms.Never}) || next.N != 3 {
		t.Errorf("zero EnvoyRatelimit: %+v, %+v; want a refusal for good, state untouched", d, next)
	}
	if n := testing.AllocsPerRun(1000, func() { e.Step(algorithms.State{N: 2}, 5, 1) }); n != 0 {
		t.Errorf("Step allocates %v times", n)
	}
}

func TestEnvoyRatelimitParams(t *testing.T) {
	p := algorithms.Params{Rate: algorithms.Rate{N: 3, Per: time.Second}, Window: time.Hour, Burst: 7, Origin: envoyOrigin}
	e, err := peers.NewEnvoyRatelimit(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := (algorithms.Params{Rate: p.Rate, Window: time.Hour, Origin: envoyOrigin}); e.Params() != want {
		t.Errorf("Params() = %+v, want %+v", e.Params(), want)
	}
	if e.Limit() != 3*3600 {
		t.Errorf("Limit() = %d, want 10800", e.Limit())
	}
	units := map[time.Duration]int64{time.Second: 1, time.Minute: 60, 7 * 24 * time.Hour: 604800, 720 * time.Hour: 2592000, 8760 * time.Hour: 31536000}
	for w, div := range units {
		e, err := peers.NewEnvoyRatelimit(algorithms.Params{Rate: algorithms.Rate{N: 1, Per: time.Second}, Window: w})
		if err != nil || e.Limit() != div {
			t.Errorf("window %v: limit %v (%v), want %d", w, e, err, div)
		}
	}
	bad := []struct {
		p     algorithms.Params
		param string
		msg   string
	}{
		{algorithms.Params{Rate: algorithms.Rate{N: 1, Per: time.Second}, Window: 2 * time.Second}, "window", "2s is not a unit envoy counts in"},
		{algorithms.Params{Rate: algorithms.Rate{N: 1, Per: time.Second}}, "window", "0s is not a unit"},
		{algorithms.Params{Rate: algorithms.Rate{N: 1, Per: time.Minute}, Window: time.Second}, "window", "less than one request per window"},
		{algorithms.Params{Rate: algorithms.Rate{N: 0, Per: time.Second}, Window: time.Second}, "rate", "must be positive"},
		{algorithms.Params{Rate: algorithms.Rate{N: 1 << 40, Per: time.Second}, Window: time.Hour}, "rate", "uint32"},
		{algorithms.Params{Rate: algorithms.Rate{N: math.MaxInt64, Per: time.Microsecond}, Window: 8760 * time.Hour}, "rate", "uint32"},
	}
	for _, b := range bad {
		var pe *algorithms.ParamError
		_, err := peers.NewEnvoyRatelimit(b.p)
		if !errors.As(err, &pe) || pe.Param != b.param || !strings.Contains(pe.Msg, b.msg) {
			t.Errorf("NewEnvoyRatelimit(%+v) = %v, want a ParamError on %s saying %q", b.p, err, b.param, b.msg)
		}
	}
}

// TestPropertyEnvoyRatelimitCountsEveryHit: whatever the sequence (ties,
// gaps, clock never going back), the state's count is the sum of the
// costs sent in its window, refused or not; a request passes exactly when
// that sum is within the limit, Remaining is what is left of it; so no
// aligned window admits more than the limit.
func TestPropertyEnvoyRatelimitCountsEveryHit(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		window := rapid.SampledFrom([]time.Duration{time.Second, time.Minute}).Draw(t, "window")
		limit := rapid.Int64Range(1, 20).Draw(t, "limit")
		origin := algorithms.Time(rapid.Int64Range(0, 4_000_000_000_000_000).Draw(t, "origin"))
		e := newEnvoy(t, algorithms.Rate{N: limit, Per: window}, window, origin)
		w := int64(window / time.Microsecond)
		var st algorithms.State
		at := algorithms.Time(0)
		hits, admitted := map[int64]int64{}, map[int64]int64{}
		for i := range rapid.IntRange(1, 100).Draw(t, "n") {
			at += algorithms.Time(rapid.Int64Range(0, 2*w/limit).Draw(t, "gap"))
			cost := rapid.Int64Range(0, 3).Draw(t, "cost")
			var d algorithms.Decision
			st, d = e.Step(st, at, cost)
			win := (int64(origin+at) / w) // the clock's window, Unix time being positive
			hits[win] += cost
			if st.N != hits[win] || st.T != win*w-int64(origin) {
				t.Fatalf("request %d: state %+v, want window %d with %d hits", i, st, win*w-int64(origin), hits[win])
			}
			if d.Allowed != (hits[win] <= limit) || d.Remaining != max(limit-hits[win], 0) {
				t.Fatalf("request %d: %+v with %d hits of %d", i, d, hits[win], limit)
			}
			if d.Allowed {
				admitted[win] += cost
			}
			if admitted[win] > limit {
				t.Fatalf("window %d admitted %d, limit %d", win, admitted[win], limit)
			}
		}
	})
}
