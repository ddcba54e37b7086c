package algorithms

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/ratelim/ratelim/algorithms/internal/exact"
)

// MaxConcurrencyRetry is the longest Retry-After a [Concurrency] limiter
// gives: a slot frees when a request in flight completes, which the limiter
// cannot foresee (most complete long before their lease would expire), so
// it tells a refused client to try again soon rather than at the worst
// case.
const MaxConcurrencyRetry = time.Second

// Concurrency limits how many requests of a key are in flight at once,
// whatever their rate: Stripe's concurrent-requests limiter, which lets a
// client run 20 requests at a time and refuses the 21st until one returns.
// A rate limit cannot do this: at 5 requests a second, a search that takes
// 100 ms keeps half a request in flight, one that takes 10 s keeps fifty.
//
// Each admitted request takes a lease and gives it back when it completes
// ([Concurrency.Release]). A lease expires by itself LeaseTTL after it was
// taken, so that a server that dies mid-request does not hold its slots
// for ever: until then they leak, counted in flight though nothing runs,
// and the key has fewer slots. The TTL is the trade: long enough to
// outlast the slowest request (or a live request loses its slot and a
// second one takes it), short enough that a crash costs little.
//
// Params: Burst is the most requests in flight (the limit, max_in_flight
// in a scenario), Window the lease TTL (lease_ttl). Rate is not read.
//
// State: Log holds the expiry instants of the leases held, soonest first,
// one per unit of cost; a lease is named by its expiry, which Decision's
// Lease gives the caller to release. Leases expired at now are forgotten.
// A clock that goes backwards keeps more leases alive, never fewer.
//
// A refused request's Retry-After is when enough leases would expire if
// none were released, capped at [MaxConcurrencyRetry].
type Concurrency struct {
	max int64
	ttl time.Duration
	us  int64 // ttl in µs
}

// NewConcurrency returns a limiter of maxInFlight requests in flight per
// key, each lease expiring after leaseTTL.
func NewConcurrency(maxInFlight int64, leaseTTL time.Duration) (*Concurrency, error) {
	if maxInFlight < 1 || maxInFlight > 1<<20 {
		return nil, &ParamError{"max_in_flight", fmt.Sprintf("%d requests in flight (want 1 to %d)", maxInFlight, 1<<20)}
	}
	us := int64(leaseTTL / time.Microsecond)
	if us < 1 || leaseTTL > 24*time.Hour {
		return nil, &ParamError{"lease_ttl", fmt.Sprintf("lease TTL %s (want 1µs to 24h)", leaseTTL)}
	}
	return &Concurrency{max: maxInFlight, ttl: leaseTTL, us: us}, nil
}

// Name returns "concurrency".
func (c *Concurrency) Name() string { return "concurrency" }

// Params returns the limit as Burst and the lease TTL as Window.
func (c *Concurrency) Params() Params { return Params{Burst: c.max, Window: c.ttl} }

// Step takes cost leases for a request at now if that many slots are free.
// It never writes into prev's log.
func (c *Concurrency) Step(prev State, now Time, cost int64) (State, Decision) {
	cost = CleanCost(cost)
	live := c.live(prev.Log, now)
	d := Decision{Limit: c.max}
	held := int64(len(live))
	switch {
	case cost > c.max:
		d.RetryAfter = Never
	case held+cost > c.max:
		// The (held + cost − max)-th soonest lease must expire first.
		d.RetryAfter = min(exact.Micros(live[held+cost-c.max-1]-int64(now)), MaxConcurrencyRetry)
	default:
		d.Allowed = true
		held += cost
		if cost > 0 {
			lease := int64(now) + c.us
			at := sort.Search(len(live), func(i int) bool { return live[i] > lease })
			next := make([]int64, 0, len(live)+int(cost))
			next = append(next, live[:at]...)
			for range cost {
				next = append(next, lease)
			}
			live = append(next, live[at:]...)
			d.Lease = Time(lease)
		}
	}
	d.Remaining = c.max - held
	if len(live) > 0 {
		d.ResetAfter = exact.Micros(live[len(live)-1] - int64(now))
	}
	if len(live) == 0 {
		return State{}, d
	}
	return State{Log: slices.Clip(live)}, d
}

// live is log without the leases expired at now: a view of it, not a copy.
func (c *Concurrency) live(log []int64, now Time) []int64 {
	expired := sort.Search(len(log), func(i int) bool { return log[i] > int64(now) })
	return log[expired:]
}

// Release gives back cost leases named lease (the Decision's Lease of the
// request that took them) at now, when the request completes. A lease
// already expired, or never taken, is not there to give back: releasing it
// changes nothing, so a release that arrives twice, or after the TTL, is
// harmless. It never writes into prev's log.
func (c *Concurrency) Release(prev State, now Time, lease Time, cost int64) State {
	live := c.live(prev.Log, now)
	cost = CleanCost(cost)
	at := sort.Search(len(live), func(i int) bool { return live[i] >= int64(lease) })
	n := 0
	for at+n < len(live) && live[at+n] == int64(lease) && int64(n) < cost {
		n++
	}
	if n == 0 && len(live) == len(prev.Log) {
		return prev
	}
	next := make([]int64, 0, len(live)-n)
	next = append(append(next, live[:at]...), live[at+n:]...)
	if len(next) == 0 {
		return State{}
	}
	return State{Log: next}
}
