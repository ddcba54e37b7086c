package algorithms

import "time"

// FixedWindow counts requests in windows aligned to multiples of Window
// (from the epoch: 0s, 1s, 2s, ...) and admits up to Limit = Rate × Window in
// each; the count starts again from zero when a new window begins. It is the
// simplest limiter there is, one counter per key and window, which in Redis
// is an INCR and an EXPIRE.
//
// Its flaw is the boundary, and it is not small: nothing links one window to
// the next, so a client can send Limit requests at the very end of one
// window and Limit more at the very start of the next, and get 2 × Limit
// through in an instant that any sliding view calls one window. The
// window-boundary scenario shows it. Use it where a per-minute quota is the
// contract and a doubled burst is harmless, not to protect a backend.
//
// State: T is the start of the window being counted (µs) and N its count. A
// clock that goes backwards keeps counting in the recorded window, so it
// never starts a window early.
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
}

// NewFixedWindow returns a fixed-window counter admitting rate × window
// requests per window.
func NewFixedWindow(rate Rate, window time.Duration) (*FixedWindow, error) {
	w, limit, err := windowLimit(rate, window)
	if err != nil {
		return nil, err
	}
	return &FixedWindow{rate: rate, window: window, w: w, limit: limit}, nil
}

// Name returns "fixed-window".
func (f *FixedWindow) Name() string { return "fixed-window" }

// Params returns the rate and window.
func (f *FixedWindow) Params() Params { return Params{Rate: f.rate, Window: f.window} }

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
	if f.w == 0 { // the zero value: windowLimit never builds a window below 1µs
		next, d := unbuilt(*st, cost)
		*st = next
		return d
	}
	cost = cleanCost(cost)
	if start := floorDiv(int64(now), f.w) * f.w; start > st.T {
		*st = State{T: start}
	}
	end := st.T + f.w
	d := Decision{Limit: f.limit, ResetAfter: micros(end - int64(now))}
	if st.N+cost > f.limit {
		d.Remaining = f.limit - st.N
		d.RetryAfter = micros(end - int64(now))
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
