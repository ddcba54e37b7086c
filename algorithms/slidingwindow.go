package algorithms

import (
	"time"

	"github.com/ratelim/ratelim/algorithms/internal/exact"
)

// SlidingWindow, the sliding-window counter, keeps the fixed window's count
// and the previous window's, and estimates the requests in the last Window
// as if the previous window's had been spread evenly across it:
//
//	estimate = previous × (Window − elapsed) / Window + current
//
// where elapsed is how far now is into the current window. A request passes
// if the estimate plus its cost is at most Limit = Rate × Window. The weight
// of the previous window fades as the current one fills, so the fixed
// window's double burst at the boundary is gone, at the cost of two counters
// instead of one.
//
// Its flaw is the evenness it assumes. If the previous window's requests all
// came at its end, the estimate undercounts them and a little more than Limit
// can pass in one sliding window; if they came at its start, it overcounts
// and refuses a little early. On real traffic the error is small: Cloudflare
// measured 0.003% of 400 million requests decided differently from an exact
// log. `ratelim compare` measures it on yours.
//
// Its windows are the fixed window's: aligned to multiples of Window on the
// wall clock, Origin + now ([Params].Origin, [SlidingWindow.WithOrigin];
// [FixedWindow] says why), so that the estimate's weights fade where a live
// server's, keyed by floor(unix / window), do.
//
// State: T is the start of the current window (µs, on the caller's clock),
// N its count and Prev the previous window's count. All arithmetic is
// scaled by Window, so it is exact. A clock that goes backwards keeps
// counting in the recorded window, never an earlier one. The zero State,
// when Origin is not on a boundary, is off the windows and so holds none:
// a key's first request counts in its own window, even one before T.
//
// The zero SlidingWindow has windows of no length and a limit of 0: it
// refuses every request of positive cost, with Limit 0, Remaining 0 and
// RetryAfter [Never], and lets a peek (cost 0) through, admitting nothing.
// Build a working one with [NewSlidingWindow].
type SlidingWindow struct {
	rate   Rate
	window time.Duration
	w      int64
	limit  int64
	origin int64 // Params.Origin in µs
}

// NewSlidingWindow returns a sliding-window counter admitting about
// rate × window requests in any window of that length.
func NewSlidingWindow(rate Rate, window time.Duration) (*SlidingWindow, error) {
	w, limit, err := WindowLimit(rate, window)
	if err != nil {
		return nil, err
	}
	return &SlidingWindow{rate: rate, window: window, w: w, limit: limit}, nil
}

// WithOrigin returns a copy of s whose windows are aligned to the wall
// clock at origin + now: origin is the wall-clock instant (Unix µs) that
// Time 0 stands for, [Params].Origin.
func (s *SlidingWindow) WithOrigin(origin Time) *SlidingWindow {
	c := *s
	c.origin = int64(origin)
	return &c
}

// Name returns "sliding-window".
func (s *SlidingWindow) Name() string { return "sliding-window" }

// Params returns the rate, window and origin.
func (s *SlidingWindow) Params() Params {
	return Params{Rate: s.rate, Window: s.window, Origin: Time(s.origin)}
}

// Limit returns the requests admitted per window.
func (s *SlidingWindow) Limit() int64 { return s.limit }

// Step admits the request if the weighted estimate leaves room for it.
func (s *SlidingWindow) Step(prev State, now Time, cost int64) (State, Decision) {
	if s.w == 0 {
		return Unbuilt(prev, cost)
	}
	next := State{T: prev.T, N: prev.N, Prev: prev.Prev}
	d := s.StepInPlace(&next, now, cost)
	return next, d
}

// StepInPlace is Step for a caller that owns st: it decides as Step does
// and moves st on where it lies, without copying a State in and out (a
// key's quota beside its per-second limit, stepped in place by [Multi] on
// every request). It reads and writes only T, N and Prev.
func (s *SlidingWindow) StepInPlace(st *State, now Time, cost int64) Decision {
	if s.w == 0 { // the zero value: WindowLimit never builds a window below 1µs
		next, d := Unbuilt(*st, cost)
		*st = next
		return d
	}
	cost = CleanCost(cost)
	w, limit := s.w, s.limit
	if start := windowStart(s.origin, now, w); start > st.T || !onWindow(s.origin, st.T, w) {
		prevN := int64(0)
		if start == st.T+w {
			prevN = st.N
		}
		st.T, st.N, st.Prev = start, 0, prevN
	}
	// A clock behind the window's start counts the previous window in full.
	elapsed := max(int64(now)-st.T, 0)
	weighted := st.Prev * (w - elapsed) // the previous window's share, × w
	d := Decision{Limit: limit}
	// cost > limit first: a cost near math.MaxInt64 would overflow the
	// product and pass.
	if cost > limit || weighted+(st.N+cost)*w > limit*w {
		d.Remaining = max(limit-st.N-ceilDiv(weighted, w), 0)
		d.RetryAfter = s.retryAfter(*st, now, cost)
		d.ResetAfter = s.resetAfter(*st, now)
		return d
	}
	st.N += cost
	d.Allowed = true
	d.Remaining = max(limit-st.N-ceilDiv(weighted, w), 0)
	d.ResetAfter = s.resetAfter(*st, now)
	return d
}

// Charge counts a request of cost at now as admitted ([Charger]), whether
// or not the estimate leaves room for it. Counted beyond capacity, the
// current window's count exceeds the limit, and requests are refused until
// the count has faded: through the rest of this window and, as the
// previous window's weighted count, into the next one. A charge in the
// state's current window adds to N; one in the window before it (a push
// that arrived after a later one) adds to Prev, where Step would have
// counted it; one in a later window rolls the windows as Step does, then
// adds to the new N; one in an older window is dropped, since no estimate
// reads it again. Counts saturate at the limit + 2^50/window (window in
// µs), which keeps the estimate's products, count × window, exact.
func (s *SlidingWindow) Charge(prev State, now Time, cost int64) State {
	if s.w == 0 {
		return prev
	}
	next := State{T: prev.T, N: prev.N, Prev: prev.Prev}
	s.ChargeInPlace(&next, now, cost)
	return next
}

// ChargeInPlace is Charge for a caller that owns st ([Charger]).
func (s *SlidingWindow) ChargeInPlace(st *State, now Time, cost int64) {
	if s.w == 0 {
		return
	}
	if st.Log != nil || st.Sub != nil {
		st.Log, st.Sub = nil, nil // Charge's state is T, N and Prev alone
	}
	w := s.w
	ceiling := s.limit + excessMax/w
	cost = min(CleanCost(cost), ceiling)
	switch start := windowStart(s.origin, now, w); {
	case start > st.T || !onWindow(s.origin, st.T, w):
		prevN := int64(0)
		if start == st.T+w {
			prevN = st.N
		}
		st.T, st.N, st.Prev = start, cost, prevN
	case start == st.T:
		st.N = addSat(st.N, cost, ceiling)
	case start == st.T-w:
		st.Prev = addSat(st.Prev, cost, ceiling)
	}
}

// retryAfter is how long until a request of cost would fit, if nothing else
// arrived: later in this window, when the previous window's weight has faded
// enough, or in the next one, when this window's count becomes the weighted
// previous count.
func (s *SlidingWindow) retryAfter(st State, now Time, cost int64) time.Duration {
	w, limit := s.w, s.limit
	if cost > limit {
		return Never
	}
	// fitAt returns the offset into a window at which prev×(w−e) ≤ room×w.
	fitAt := func(prev, room int64) int64 {
		if prev == 0 {
			return 0
		}
		return max(w-(room*w)/prev, 0)
	}
	if room := limit - st.N - cost; room >= 0 {
		return exact.Micros(st.T + fitAt(st.Prev, room) - int64(now))
	}
	return exact.Micros(st.T + w + fitAt(st.N, limit-cost) - int64(now))
}

// resetAfter is how long until both counted windows have passed.
func (s *SlidingWindow) resetAfter(st State, now Time) time.Duration {
	switch {
	case st.N > 0:
		return exact.Micros(st.T + 2*s.w - int64(now))
	case st.Prev > 0:
		return exact.Micros(st.T + s.w - int64(now))
	}
	return 0
}
