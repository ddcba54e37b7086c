package algorithms

import "github.com/ratelim/ratelim/algorithms/internal/exact"

// LeakyBucket is the leaky bucket as a queue: requests pour into a bucket of
// Burst places and leak out, to be served, at exactly Rate. A request that
// finds a place is admitted but waits its turn (its Decision's Delay); one
// that finds the bucket full is rejected. Two numbers: Burst is the queue's
// capacity, Rate the steady rate at which the backend sees requests.
//
// Where a token bucket lets a burst through at once, the leaky bucket turns it
// into a steady stream: the backend never sees more than Rate, however the
// clients behave. That is what it protects, a backend that cannot absorb any
// burst (a payment gateway, a mail relay). Its flaw is the price of that: the
// client of a burst waits up to Burst/Rate for its answer, and work queued for
// a client that gave up is still done.
//
// Which requests are admitted is the same as for [TokenBucket] and [GCRA]
// with the same numbers (the "leaky bucket as a meter" is the token bucket);
// what differs is when they are served. The state is GCRA's: T, with the
// remainder N, is when the queue will be empty.
//
// The zero LeakyBucket is a queue of no places that never drains: it refuses
// every request of positive cost, with Limit 0, Remaining 0 and RetryAfter
// [Never], and lets a peek (cost 0) through with no Delay. Build a working
// one with [NewLeakyBucket].
type LeakyBucket struct{ tat }

// NewLeakyBucket returns a leaky bucket that queues up to burst requests and
// serves them at rate.
func NewLeakyBucket(rate Rate, burst int64) (*LeakyBucket, error) {
	t, err := newTAT(rate, burst)
	if err != nil {
		return nil, err
	}
	return &LeakyBucket{t}, nil
}

// Name returns "leaky-bucket".
func (b *LeakyBucket) Name() string { return "leaky-bucket" }

// Step queues the request if the bucket has room for it; Delay says how long
// it waits behind the requests already queued.
func (b *LeakyBucket) Step(prev State, now Time, cost int64) (State, Decision) {
	if b.unbuilt() {
		return Unbuilt(prev, cost)
	}
	next, d, backlog := b.step(prev, now, cost)
	if d.Allowed {
		d.Delay = exact.Micros(ceilDiv(backlog, b.rate.N))
	}
	return next, d
}
