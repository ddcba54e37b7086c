package algorithms

import (
	"testing"
	"time"

	"pgregory.net/rapid"
)

// midnight is 2026-12-01T00:00:00Z in Unix µs (the simulator's default
// wall clock): a multiple of every window that divides a day.
const midnight = Time(1_796_083_200_000_000)

// offBoundary is a quarter second past midnight: with 1 s windows, the
// windows start at virtual −250ms, 750ms, 1.75s, ...
const offBoundary = midnight + 250*ms

// originStep is one request of an origin table and what its decision must
// say.
type originStep struct {
	now        Time
	allowed    bool
	retryAfter time.Duration
	resetAfter time.Duration
}

// TestWindowsAlignToTheWallClock: the fixed and sliding windows put their
// windows on multiples of Window at Origin + now, whether or not Origin is
// on a boundary, and place an instant before Time 0 in the window the wall
// clock puts it in.
func TestWindowsAlignToTheWallClock(t *testing.T) {
	rate := Rate{N: 2, Per: time.Second} // 2 a 1 s window
	tests := []struct {
		name   string
		alg    string
		origin Time
		steps  []originStep
	}{
		{"fixed, origin on a boundary", "fixed-window", midnight, []originStep{
			{now: 0, allowed: true, resetAfter: time.Second},
			{now: 999_999, allowed: true, resetAfter: time.Microsecond},
			{now: 999_999, retryAfter: time.Microsecond, resetAfter: time.Microsecond},
			{now: s1, allowed: true, resetAfter: time.Second},
		}},
		{"fixed, origin 250ms past a boundary", "fixed-window", offBoundary, []originStep{
			{now: 0, allowed: true, resetAfter: 750 * time.Millisecond},
			{now: 0, allowed: true, resetAfter: 750 * time.Millisecond},
			{now: 0, retryAfter: 750 * time.Millisecond, resetAfter: 750 * time.Millisecond},
			{now: 749_999, retryAfter: time.Microsecond, resetAfter: time.Microsecond},
			{now: 750_000, allowed: true, resetAfter: time.Second},
		}},
		{"fixed, now before Time 0, origin off a boundary", "fixed-window", offBoundary, []originStep{
			// Wall clock 23:59:59.950 the day before: window [−1.25s, −250ms).
			{now: -300_000, allowed: true, resetAfter: 50 * time.Millisecond},
			{now: -250_000, allowed: true, resetAfter: time.Second},
			{now: 0, allowed: true, resetAfter: 750 * time.Millisecond},
			{now: 10, retryAfter: 749_990 * time.Microsecond, resetAfter: 749_990 * time.Microsecond},
		}},
		{"fixed, now before Time 0, origin on a boundary", "fixed-window", midnight, []originStep{
			// The zero State is the window at 0, on the windows when the
			// origin is: a clock behind it counts in it, never in an
			// earlier one (onWindow).
			{now: -1, allowed: true, resetAfter: time.Second + time.Microsecond},
			{now: -1, allowed: true, resetAfter: time.Second + time.Microsecond},
			{now: 0, retryAfter: time.Second, resetAfter: time.Second},
		}},
		{"fixed, origin before the Unix epoch", "fixed-window", -250 * ms, []originStep{
			// Wall clock 1969-12-31T23:59:59.750: windows start at 250ms.
			{now: 0, allowed: true, resetAfter: 250 * time.Millisecond},
			{now: 249_999, allowed: true, resetAfter: time.Microsecond},
			{now: 249_999, retryAfter: time.Microsecond, resetAfter: time.Microsecond},
			{now: 250_000, allowed: true, resetAfter: time.Second},
		}},
		{"sliding, origin 250ms past a boundary", "sliding-window", offBoundary, []originStep{
			{now: 0, allowed: true, resetAfter: 1750 * time.Millisecond},
			{now: 0, allowed: true, resetAfter: 1750 * time.Millisecond},
			// The next window starts at 750ms with the previous one's 2 at
			// full weight; half of it has faded at 1.25s.
			{now: 750_000, retryAfter: 500 * time.Millisecond, resetAfter: time.Second},
			{now: 1_250_000, allowed: true, resetAfter: 1500 * time.Millisecond},
		}},
		{"sliding, now before Time 0, origin off a boundary", "sliding-window", offBoundary, []originStep{
			{now: -300_000, allowed: true, resetAfter: 1050 * time.Millisecond},
			// A new window at −250ms: the previous one's 1 weighs in full.
			{now: -250_000, allowed: true, resetAfter: 2 * time.Second},
			{now: -250_000, retryAfter: time.Second, resetAfter: 2 * time.Second},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			alg := must(New(tt.alg, Params{Rate: rate, Window: time.Second, Origin: tt.origin}))
			if got := alg.Params().Origin; got != tt.origin {
				t.Fatalf("Params().Origin = %d, want %d", got, tt.origin)
			}
			var st State
			for i, s := range tt.steps {
				var d Decision
				st, d = alg.Step(st, s.now, 1)
				if d.Allowed != s.allowed || d.RetryAfter != s.retryAfter || d.ResetAfter != s.resetAfter {
					t.Fatalf("step %d at %d: allowed %v, retry after %v, reset after %v; want %v, %v, %v (state after %+v)",
						i, s.now, d.Allowed, d.RetryAfter, d.ResetAfter, s.allowed, s.retryAfter, s.resetAfter, st)
				}
			}
		})
	}
}

// TestPropertyOriginIsAShiftOfTheClock: a window algorithm with Origin o
// deciding at now decides as the same algorithm with Origin 0 deciding at
// o + now, and keeps the same state shifted by o: the origin is where the
// wall clock is read, nothing else (for clocks from the Unix epoch on).
func TestPropertyOriginIsAShiftOfTheClock(t *testing.T) {
	for _, name := range []string{"fixed-window", "sliding-window"} {
		t.Run(name, rapid.MakeCheck(func(t *rapid.T) {
			drawn := genWindowed(t, name)
			origin := Time(rapid.OneOf(
				rapid.Just(int64(midnight)),
				rapid.Int64Range(-1<<52, 1<<52),
				rapid.Int64Range(int64(midnight)-5_000_000, int64(midnight)+5_000_000),
			).Draw(t, "origin"))
			p := drawn.Params()
			p.Origin = origin
			shifted := must(New(name, p))
			p.Origin = 0
			unix := must(New(name, p))
			var a, b State
			for i, r := range genRequests(t, true) {
				fresh := a.T == 0 && a.N == 0 && a.Prev == 0 && b.T == 0 && b.N == 0 && b.Prev == 0
				if fresh && (r.at < 0 || int64(origin)+int64(r.at) < 0) {
					// A key never seen (the zero State) is at Time 0 in
					// either frame: the window at 0 when 0 is on one, which
					// a clock behind it keeps counting in (the twins' 0s
					// are 56 years apart), none when it is not
					// (onWindow). A clock behind a fresh key's Time 0 is
					// compared no further.
					continue
				}
				na, da := shifted.Step(a, r.at, r.cost)
				nb, db := unix.Step(b, origin+r.at, r.cost)
				if da != db {
					t.Fatalf("request %d at %d (origin %d): %+v, at %d with origin 0: %+v", i, r.at, origin, da, origin+r.at, db)
				}
				counts := na.N != 0 || na.Prev != 0
				if na.N != nb.N || na.Prev != nb.Prev || counts && int64(na.T)+int64(origin) != nb.T {
					t.Fatalf("request %d at %d (origin %d): state %+v, with origin 0 %+v: not the same shifted", i, r.at, origin, na, nb)
				}
				a, b = na, nb
			}
		}))
	}
}

// A window that has begun is never left for an earlier one, even while it
// counts nothing: two admitted in [2s, 3s), a peek at 3s moves the count on
// to [3s, 4s), and a clock stepped back to 2.9s keeps counting in
// [3s, 4s): [2s, 3s) is not counted a second time (rapid found a limit of
// 1 admitting 3 within a second when an empty window was taken for none).
func TestEmptyWindowIsNotLeftForAnEarlierOne(t *testing.T) {
	for _, name := range []string{"fixed-window", "sliding-window"} {
		alg := must(New(name, Params{Rate: Rate{N: 2, Per: time.Second}, Window: time.Second, Origin: midnight}))
		var st State
		for _, r := range []request{{at: 2_100_000, cost: 1}, {at: 2_200_000, cost: 1}, {at: 3_000_000, cost: 0}, {at: 2_900_000, cost: 1}} {
			st, _ = alg.Step(st, r.at, r.cost)
		}
		if st.T != 3_000_000 {
			t.Errorf("%s: after a peek at 3s and a request at 2.9s, counting in the window at %dµs; want the one at 3s", name, st.T)
		}
	}
}
