package algorithms

import (
	"time"

	"github.com/ratelim/ratelim/algorithms/internal/exact"
)

// FixedWindow counts requests in windows aligned to multiples of Window on
// the wall clock (from the Unix epoch: hh:mm:00, hh:mm:01, ... for a 1 s
// window) and admits up to Limit = Rate × Window in each; the count starts
// again from zero when a new window begins. It is the simplest limiter there
// is, one counter per key and window, which in Redis is an INCR and an
// EXPIRE on a key named after floor(unix time / window).
//
// The wall clock is Origin + now ([Params].Origin: the instant Time 0
// stands for; [FixedWindow.WithOrigin]). A live server passes Unix
// microseconds with Origin 0; the simulator passes virtual time with its
// wall clock as Origin, so the windows fall where a live fleet's would. A
// window that divides a day (1 s, 1 m, 1 h) then starts at virtual 0 when
// the run starts at midnight; one that does not (7 s) starts wherever the
// clock puts it, before Time 0 if need be, as a Redis INCR keyed by
// floor(unix / window) does.
//
// Its flaw is the boundary, and it is not small: nothing links one window to
// the next, so a client can send Limit requests at the very end of one
// window and Limit more at the very start of the next, and get 2 × Limit
// through in an instant that any sliding view calls one window. The
// window-boundary scenario shows it. Use it where a per-minute quota is the
// contract and a doubled burst is harmless, not to protect a backend.
//
// State: T is the start of the window being counted (µs, on the caller's
// clock: Origin + T is on a multiple of Window) and N its count. A clock
// that goes backwards keeps counting in the recorded window, so it never
// starts a window early, nor leaves a window for an earlier one, even one
// that counts nothing yet. The zero State, when Origin is not on a
// boundary, is off the windows and so holds none: a key's first request
// counts in its own window, even one that starts before Time 0.
//
// The zero FixedWindow has windows of no length and a limit of 0: it refuses
// every request of positive cost, with Limit 0, Remaining 0 and RetryAfter
// [Never], and lets a peek (cost 0) through, admitting nothing. Build a
// working one with [NewFixedWindow].
type FixedWindow struct {
	rate   Rate
	window time.Duration
	w      int64 // window in µs
	limit  int64
	origin int64 // Params.Origin in µs
}

// NewFixedWindow returns a fixed-window counter admitting rate × window
// requests per window.
func NewFixedWindow(rate Rate, window time.Duration) (*FixedWindow, error) {
	w, limit, err := WindowLimit(rate, window)
	if err != nil {
		return nil, err
	}
	return &FixedWindow{rate: rate, window: window, w: w, limit: limit}, nil
}

// WithOrigin returns a copy of f whose windows are aligned to the wall
// clock at origin + now: origin is the wall-clock instant (Unix µs) that
// Time 0 stands for, [Params].Origin.
func (f *FixedWindow) WithOrigin(origin Time) *FixedWindow {
	g := *f
	g.origin = int64(origin)
	return &g
}

// Name returns "fixed-window".
func (f *FixedWindow) Name() string { return "fixed-window" }

// Params returns the rate, window and origin.
func (f *FixedWindow) Params() Params {
	return Params{Rate: f.rate, Window: f.window, Origin: Time(f.origin)}
}

// Limit returns the requests admitted per window.
func (f *FixedWindow) Limit() int64 { return f.limit }

// Step counts the request in its window if the window has room.
func (f *FixedWindow) Step(prev State, now Time, cost int64) (State, Decision) {
	next := prev
	d := f.StepInPlace(&next, now, cost)
	return next, d
}

// StepInPlace is Step for a caller that owns st: it decides as Step does
// and moves st on where it lies, without copying a State in and out (a
// key's hourly quota beside its per-second limit, stepped in place by
// [Multi] on every request).
func (f *FixedWindow) StepInPlace(st *State, now Time, cost int64) Decision {
	if f.w == 0 { // the zero value: WindowLimit never builds a window below 1µs
		next, d := Unbuilt(*st, cost)
		*st = next
		return d
	}
	cost = CleanCost(cost)
	if start := windowStart(f.origin, now, f.w); start > st.T || !onWindow(f.origin, st.T, f.w) {
		*st = State{T: start}
	}
	end := st.T + f.w
	d := Decision{Limit: f.limit, ResetAfter: exact.Micros(end - int64(now))}
	// cost > limit first: a cost near math.MaxInt64 would overflow the
	// sum and pass. A charged window ([FixedWindow.Charge]) may count
	// beyond its limit: no room, not negative room.
	if cost > f.limit || st.N+cost > f.limit {
		d.Remaining = max(f.limit-st.N, 0)
		d.RetryAfter = exact.Micros(end - int64(now))
		if cost > f.limit {
			d.RetryAfter = Never
		}
		if st.N == 0 {
			d.ResetAfter = 0
		}
		return d
	}
	st.N += cost
	d.Allowed = true
	d.Remaining = f.limit - st.N
	if st.N == 0 {
		d.ResetAfter = 0
	}
	return d
}

// Charge counts a request of cost at now as admitted ([Charger]), in the
// window that holds now, whether or not the window has room: counted beyond
// capacity, the window's count exceeds the limit, and every request is
// refused, a peek included, until the next window starts from zero. A
// charge in the state's window adds to its count; one in a later window
// starts that window with the cost, as Step does; one in an earlier window
// (a push that arrived after a later one) is dropped, since that window is
// over and nothing reads its count again: Kong's INCRBY on an old window's
// key. The count saturates at the limit + 2^50/window (window in µs).
func (f *FixedWindow) Charge(prev State, now Time, cost int64) State {
	next := prev // Step's shape: what it does not move, it keeps
	f.ChargeInPlace(&next, now, cost)
	return next
}

// ChargeInPlace is Charge for a caller that owns st ([Charger]).
func (f *FixedWindow) ChargeInPlace(st *State, now Time, cost int64) {
	if f.w == 0 {
		return
	}
	start := windowStart(f.origin, now, f.w)
	switch {
	case start > st.T || !onWindow(f.origin, st.T, f.w):
		*st = State{T: start}
	case start < st.T:
		return
	}
	ceiling := f.limit + excessMax/f.w
	st.N = addSat(st.N, min(CleanCost(cost), ceiling), ceiling)
}

// windowStart is the start, on the caller's clock, of the window of
// length w (µs) that holds now when windows are aligned to multiples of w
// on the wall clock, origin + now. The wall clock is floored, not
// truncated, so an instant before the epoch is in the window that began
// before it; the start is before Time 0 when origin is not on a boundary
// (as envoy-ratelimit's Step computes its window). Instants are Unix
// microseconds, about 2^51 today, far inside int64 either way.
func windowStart(origin int64, now Time, w int64) int64 {
	return exact.FloorDiv(origin+int64(now), w)*w - origin
}

// onWindow reports whether t is the start of one of the windows origin
// lays on the clock. Every state a window counter writes starts on one;
// the zero State (a key never seen) does not when origin is off a
// boundary, and is then no window at all: its first request counts in its
// own. A window that has begun is never left for an earlier one, even when
// it counts nothing yet (a peek moved it on) and the clock steps back: that
// would count a window a second time.
func onWindow(origin, t, w int64) bool { return windowStart(origin, Time(t), w) == t }
