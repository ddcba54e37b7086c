package peers

import (
	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/algorithms/internal/exact"
)

// Ulule models github.com/ulule/limiter/v3 v3.11.2 with its memory store
// (drivers/store/memory: store.go's Increment, Get and Peek over cache.go's
// Cache.Increment and Counter; drivers/store/common's
// GetContextFromState), the limiter behind many Go HTTP middlewares. It is
// a fixed window with three differences from [algorithms.FixedWindow], each reproduced.
//
// The window starts at a key's first hit, not on the clock. ulule keeps, per
// key, a counter and an expiration in Unix nanoseconds. A hit on a key with
// no counter, or whose counter has expired (now > expiration, strictly: at
// the expiration instant itself the old window still counts), starts a new
// one: count = cost, expiration = now + period. Any other hit adds its cost.
// So each key has windows of its own, anchored at whatever hit came first
// after the last one ran out: two keys with the same traffic shifted by
// 300ms see windows 300ms apart, and a window ends when its first hit's
// period does, wherever the clock is.
//
// The boundary flaw is still there. With 100 per second, a key first hit
// at 0.3s has the window (0.3s, 1.3s]; 150 requests at 1.3s and 150 more at
// 1.300001s get 99 + 100 through within 1µs, as at an aligned boundary,
// except that the boundary is the key's, not the clock's (the aligned
// fixed window and the sliding log admit 100).
//
// Refused hits count. ulule increments before it checks (Reached is
// count > limit after the increment), so a client that keeps knocking on a
// full window keeps raising the count; that changes no decision, since the
// counter is thrown away when the window ends, but Increment's count is
// never capped. A request of cost c is Limiter.Increment(ctx, key, c)
// (Get is Increment by 1): it is admitted only if the new count is at most
// the limit, and its c is counted either way. A cost above the limit can
// never pass (RetryAfter [algorithms.Never]), and still starts or fills a window.
//
// A cost of 0 is Limiter.Peek: it reads the counter and writes nothing.
// (Increment by 0 would start a window on an idle key; Peek does not.) A
// peek is Allowed, as on every ratelim limiter, whatever ulule's Reached
// says about the count before it.
//
// Reset is whole seconds. ulule's Context reports Reset as the window's
// expiration in Unix seconds, rounded down (time.Time.Unix), and its
// middleware sends that as X-RateLimit-Reset; it sends no Retry-After.
// RetryAfter is what a client reading that header computes, Reset × 1s −
// now, and 0 when that is not positive: up to a second before the window
// really ends, so a refused client that waits what it says may be refused
// again, and a refusal in a window's last fraction of a second says
// RetryAfter 0. ResetAfter is the truth the store needs (a store that
// forgets a key once ResetAfter has passed must change no decision): the
// first microsecond after the counter's expiration, 0 for a key with no
// live counter. The exact wall-clock instant matters, so the model
// computes with Params.Origin + now. ([Ulule.Reset] gives the header's
// value itself.)
//
// Limit is rate × window rounded down (ulule's Rate{Period: window, Limit});
// Remaining is limit − count, or 0 once the count is over the limit.
//
// State: T is the instant (µs) of the hit that started the current window,
// N its count, as ulule's Counter.value (it grows past the limit with
// refused hits), and Prev is 1 once the key has a counter, 0 for a key
// never seen. The expiration ulule stores is (Origin + T) × 1000 + window
// in nanoseconds, recomputed, and like ulule the model takes an expiration
// of exactly 0 for no counter at all. A clock that steps back, even before
// T, counts in the current window until the clock passes its expiration.
// ulule's background cleaner only deletes counters that have expired,
// which a hit would have replaced anyway, so it changes nothing the model
// shows (except that a clock stepped back after a deletion finds no
// counter; the model keeps it).
//
// The zero Ulule refuses every request of positive cost, as unbuilt
// limiters do. Build one with [NewUlule].
type Ulule struct {
	p      algorithms.Params
	wns    int64 // window in ns: ulule's Rate.Period
	limit  int64 // ulule's Rate.Limit: rate × window rounded down
	origin int64 // Params.Origin in µs
}

// NewUlule returns a model of ulule/limiter's memory store with
// Rate{Period: p.Window, Limit: p.Rate × p.Window}. It reads p.Rate,
// p.Window and p.Origin.
func NewUlule(p algorithms.Params) (*Ulule, error) {
	_, limit, err := algorithms.WindowLimit(p.Rate, p.Window)
	if err != nil {
		return nil, err
	}
	return &Ulule{p: algorithms.Params{Rate: p.Rate, Window: p.Window, Origin: p.Origin},
		wns: int64(p.Window), limit: limit, origin: int64(p.Origin)}, nil
}

// Name returns "ulule-limiter".
func (u *Ulule) Name() string { return "ulule-limiter" }

// Params returns the rate, window and origin.
func (u *Ulule) Params() algorithms.Params { return onlyRead(u.p, "window") }

// Limit returns ulule's Rate.Limit: the requests admitted per window.
func (u *Ulule) Limit() int64 { return u.limit }

// window returns the count and expiration (Unix ns) ulule's Counter holds
// for a hit at nowNs, and whether it is live; for a counter absent or
// expired, the count is 0 and the expiration the one a new counter would
// get (cache.go: Counter.Increment, Counter.Load).
func (u *Ulule) window(prev algorithms.State, nowNs int64) (count, expNs int64, live bool) {
	if prev.Prev != 0 {
		expNs = (u.origin+prev.T)*1000 + u.wns
		if expNs != 0 && nowNs <= expNs {
			return prev.N, expNs, true
		}
	}
	return 0, nowNs + u.wns, false
}

// Reset returns what ulule's Context.Reset would say for a hit at now on
// a key in state st: the expiration of the window the hit falls in, in Unix
// seconds rounded down, the X-RateLimit-Reset header's value.
func (u *Ulule) Reset(st algorithms.State, now algorithms.Time) int64 {
	_, expNs, _ := u.window(st, (u.origin+int64(now))*1000)
	return exact.FloorDiv(expNs, 1e9)
}

// Step is Limiter.Increment(ctx, key, cost) on the memory store, or
// Limiter.Peek for a cost of 0.
func (u *Ulule) Step(prev algorithms.State, now algorithms.Time, cost int64) (algorithms.State, algorithms.Decision) {
	if u.wns == 0 { // the zero value: WindowLimit never builds a window below 1µs
		return algorithms.Unbuilt(prev, cost)
	}
	cost = algorithms.CleanCost(cost)
	wall := u.origin + int64(now)
	count, expNs, live := u.window(prev, wall*1000)
	next := prev
	if cost > 0 {
		if live {
			count += cost // ulule adds without a cap, refused or not
			next.N = count
		} else {
			count = cost
			next = algorithms.State{T: int64(now), N: cost, Prev: 1}
		}
	}
	d := algorithms.Decision{Limit: u.limit}
	if live || cost > 0 {
		// The counter is gone the first microsecond after its
		// expiration: from then on the key decides as one never seen.
		d.ResetAfter = exact.Micros(exact.FloorDiv(expNs, 1000) + 1 - wall)
	}
	reached := count > u.limit // common.GetContextFromState
	if !reached {
		d.Remaining = u.limit - count
	}
	switch {
	case cost == 0:
		d.Allowed = true
	case !reached:
		d.Allowed = true
	case cost > u.limit:
		d.RetryAfter = algorithms.Never
	default:
		// What a client reading X-RateLimit-Reset waits: the
		// header's whole second, not the window's end.
		d.RetryAfter = exact.Micros(exact.FloorDiv(expNs, 1e9)*1e6 - wall)
	}
	return next, d
}
