package algorithms

import (
	"math"

	"github.com/ratelim/ratelim/algorithms/internal/exact"
)

// GCRA, the generic cell rate algorithm from ATM networks, is a token bucket
// stored as a single instant: the theoretical arrival time (TAT), when the
// key's next request would be on schedule if requests came exactly at Rate.
// Each admitted request pushes the TAT one emission interval (1/Rate) later.
// A request is admitted if, after pushing, the TAT is no further ahead of now
// than Burst emission intervals: the client may be early by at most Burst.
//
// How far the TAT is ahead of now is exactly the token bucket's deficit, so
// GCRA with the same Rate and Burst admits exactly the same requests as
// [TokenBucket] on a clock that does not go backwards; it only stores one
// number instead of two and never needs a refill step. That is why Redis
// limiters such as redis-cell and go-redis/redis_rate use it. Its flaw is
// legibility: the remaining tokens are derived, never stored.
//
// State: T is the TAT in whole microseconds and N the fraction of a
// microsecond beyond it, in units of 1/Rate.N µs, so that an emission
// interval of a third of a second is exact. The zero State is a TAT long
// past: a full bucket. When the clock goes backwards the TAT stays put and
// looks further ahead, so a skewed server is refused more, never less.
//
// The zero GCRA has no emission interval to push the TAT by: like the zero
// [TokenBucket] it refuses every request of positive cost, with Limit 0,
// Remaining 0 and RetryAfter [Never], and lets a peek (cost 0) through.
// Build a working one with [NewGCRA].
type GCRA struct{ tat }

// NewGCRA returns a GCRA limiter admitting rate with bursts up to burst.
func NewGCRA(rate Rate, burst int64) (*GCRA, error) {
	t, err := newTAT(rate, burst)
	if err != nil {
		return nil, err
	}
	return &GCRA{t}, nil
}

// Name returns "gcra".
func (g *GCRA) Name() string { return "gcra" }

// Step admits the request if the TAT it would push to stays within Burst
// emission intervals of now.
func (g *GCRA) Step(prev State, now Time, cost int64) (State, Decision) {
	if g.unbuilt() {
		return Unbuilt(prev, cost)
	}
	next, d, _ := g.step(prev, now, cost)
	return next, d
}

// Charge counts a request of cost at now as admitted ([Charger]): the TAT
// moves from max(TAT, now) by cost emission intervals, kept exact with its
// sub-microsecond remainder as Step keeps it, whether or not that leaves
// it within Burst intervals of now. Counted beyond capacity, the TAT is
// more than Burst intervals ahead of now: requests are refused until the
// clock has caught up with the excess. A now before the TAT (a push that
// arrived after a later one) adds its intervals to the TAT all the same;
// one after it starts from now, as a request on a full bucket does.
//
// A charge moves the TAT by at most capacity + 2^50 units of 1/Rate.N µs
// (a larger cost saturates there), and never past 2^62 µs: the TAT is the
// state's only instant, so unlike the token bucket's deficit there is no
// later instant to bound the total from, and each charge is bounded alone.
//
// The leaky bucket, on the same arithmetic, charges the same way: the
// instant its queue will be empty moves by cost emission intervals, and
// counted beyond capacity the queue holds more than Burst requests ahead
// of now, refusing until it has drained below Burst again.
func (t tat) Charge(prev State, now Time, cost int64) State {
	if t.unbuilt() {
		return prev
	}
	t.chargeInPlace(&prev, now, cost)
	return prev
}

// ChargeInPlace is Charge for a caller that owns st ([Charger]).
func (t tat) ChargeInPlace(st *State, now Time, cost int64) {
	if !t.unbuilt() {
		t.chargeInPlace(st, now, cost)
	}
}

// tat is the arithmetic GCRA and the leaky bucket share: a theoretical
// arrival time kept exactly, as microseconds plus a remainder in 1/rate.N µs.
type tat struct {
	rate     Rate
	burst    int64
	per      int64 // µs per rate.N requests
	capacity int64 // burst × per: the most backlog allowed, in 1/rate.N µs
}

func newTAT(rate Rate, burst int64) (tat, error) {
	per, err := RateMicros(rate)
	if err != nil {
		return tat{}, err
	}
	if err := CheckBurst(burst, per); err != nil {
		return tat{}, err
	}
	return tat{rate: rate, burst: burst, per: per, capacity: burst * per}, nil
}

func (t tat) Params() Params { return Params{Rate: t.rate, Burst: t.burst} }

// unbuilt reports whether t is the zero value: newTAT never builds a period
// below 1µs, and step divides by the rate.
func (t tat) unbuilt() bool { return t.per == 0 }

// step decides a request and also returns the backlog ahead of it (in
// 1/rate.N µs) before it was added: the leaky bucket's queueing delay.
func (t tat) step(prev State, now Time, cost int64) (next State, d Decision, backlog int64) {
	cost = CleanCost(cost)
	n := t.rate.N
	d = Decision{Limit: t.burst}
	ahead := prev.T - int64(now)
	if ahead > t.capacity/n+1 {
		// Only a clock that went far backwards gets here; the backlog
		// in units would overflow, and no request can pass anyway.
		d.Remaining = 0
		d.RetryAfter = Never
		if cost <= t.burst {
			d.RetryAfter = exact.Micros(ahead + ceilDiv(prev.N+cost*t.per-t.capacity, n))
		}
		d.ResetAfter = exact.Micros(ahead + ceilDiv(prev.N, n))
		return prev, d, 0
	}
	backlog = max(ahead*n+prev.N, 0)
	if cost > t.burst || backlog+cost*t.per > t.capacity {
		// A clock that stepped back a little can leave backlog above
		// capacity: no room, not negative room.
		d.Remaining = max((t.capacity-backlog)/t.per, 0)
		d.RetryAfter = Never
		if cost <= t.burst {
			d.RetryAfter = exact.Micros(ceilDiv(backlog+cost*t.per-t.capacity, n))
		}
		d.ResetAfter = exact.Micros(ceilDiv(backlog, n))
		return prev, d, backlog
	}
	after := backlog + cost*t.per
	d.Allowed = true
	d.Remaining = (t.capacity - after) / t.per
	d.ResetAfter = exact.Micros(ceilDiv(after, n))
	return State{T: int64(now) + after/n, N: after % n}, d, backlog
}

// chargeInPlace is GCRA's and the leaky bucket's Charge, in place: the
// TAT, as T and the remainder N, moved from max(TAT, now) by cost emission
// intervals of per units each. For a request Step admits this is Step's
// arithmetic: after = backlog + cost × per, from now, is the same instant
// from the TAT.
func (t tat) chargeInPlace(st *State, now Time, cost int64) {
	n := t.rate.N
	at, rem := st.T, max(st.N, 0) // a step never leaves N negative
	if at < int64(now) {
		// A TAT in the past is a full bucket: its remainder, under a
		// microsecond, is behind now too.
		at, rem = int64(now), 0
	}
	units := addSat(rem, mulSat(CleanCost(cost), t.per, t.capacity+excessMax), math.MaxInt64)
	st.T, st.N = addSat(at, units/n, maxInstant), units%n
	onlyTN(st)
}
