package peers

import (
	"fmt"
	"math"
	"time"

	"github.com/ratelim/ratelim/algorithms"
)

// Gubernator models the TOKEN_BUCKET algorithm of
// github.com/gubernator-io/gubernator/v2 v2.13.0 (algorithms.go:
// tokenBucket and tokenBucketNewItem), the limiter behind its GLOBAL
// behaviour that the owner topology models (topology.Owner). Despite its
// name it refills nothing: it is a fixed window of Duration anchored at
// the key's first hit, with Limit requests in it.
//
// A hit on a key with no item, or whose item has expired (the LRU drops
// an item at its ExpireAt: cache.go IsExpired), makes a new one
// (tokenBucketNewItem): ExpireAt = now + Duration, Remaining = Limit −
// hits. A first hit above the limit is refused and takes nothing: the
// new item keeps its whole Limit (rl.Remaining = r.Limit). On an item
// that lives: Remaining 0 refuses; hits equal to Remaining take it all;
// hits above it are refused and take nothing, unless the request says
// DRAIN_OVER_LIMIT, when Remaining drops to 0 (Drain: what the owner does
// with a peer's batch of hits, gubernator.go GetPeerRateLimits); else
// Remaining −= hits.
//
// A peek (hits 0) answers the status and, like gubernator's, makes an
// item on a key without one: the window starts at the peek. ResetAfter is
// ExpireAt − now and a microsecond (the item lives through its ExpireAt:
// cache.go IsExpired), which gubernator sends as ResetTime; RetryAfter the
// same for a refusal, Never for hits above the limit.
//
// Limit is rate × window rounded down, Duration the window: Rate{N,
// Per} and Window as the fixed window reads them.
//
// State: T is the item's ExpireAt (µs), 0 for a key with no item; N is
// the hits taken in its window (Limit − Remaining).
type Gubernator struct {
	p      algorithms.Params
	window int64 // µs: gubernator's Duration
	limit  int64 // gubernator's Limit
}

// NewGubernator returns a model of gubernator's token bucket with Limit
// p.Rate × p.Window and Duration p.Window.
func NewGubernator(p algorithms.Params) (*Gubernator, error) {
	w, limit, err := algorithms.WindowLimit(p.Rate, p.Window)
	if err != nil {
		return nil, err
	}
	return &Gubernator{p: algorithms.Params{Rate: p.Rate, Window: p.Window}, window: w, limit: limit}, nil
}

// Name returns "gubernator".
func (g *Gubernator) Name() string { return "gubernator" }

// Params returns the rate and window.
func (g *Gubernator) Params() algorithms.Params { return onlyRead(g.p, "window") }

// Step is a GetRateLimits request of hits = cost, without
// DRAIN_OVER_LIMIT, on the node that holds the item.
func (g *Gubernator) Step(prev algorithms.State, now algorithms.Time, cost int64) (algorithms.State, algorithms.Decision) {
	return g.step(prev, now, cost, false)
}

// Expired reports whether a cache holding st has dropped it by now: an
// item past its ExpireAt (cache.go IsExpired).
func (g *Gubernator) Expired(st algorithms.State, now algorithms.Time) bool {
	return st.T != 0 && int64(now) > st.T
}

// Drain is Step with DRAIN_OVER_LIMIT: what a key's owner does with a
// peer's batch of hits (gubernator.go GetPeerRateLimits sets it on every
// GLOBAL request it receives). On a new item it changes nothing:
// tokenBucketNewItem never reads the flag.
func (g *Gubernator) Drain(prev algorithms.State, now algorithms.Time, hits int64) algorithms.State {
	next, _ := g.step(prev, now, hits, true)
	return next
}

func (g *Gubernator) step(prev algorithms.State, now algorithms.Time, cost int64, drain bool) (algorithms.State, algorithms.Decision) {
	if g.window == 0 {
		return algorithms.Unbuilt(prev, cost)
	}
	hits := algorithms.CleanCost(cost)
	t := int64(now)
	d := algorithms.Decision{Limit: g.limit}
	if prev.T == 0 || t > prev.T { // no item, or expired (ExpireAt < now: cache.go IsExpired): tokenBucketNewItem
		expire := t + g.window
		next := algorithms.State{T: expire}
		d.ResetAfter = time.Duration(g.window+1) * time.Microsecond
		if hits > g.limit {
			d.Remaining, d.RetryAfter = g.limit, algorithms.Never
			return next, d
		}
		next.N = hits
		d.Allowed, d.Remaining = true, g.limit-hits
		return next, d
	}
	next := algorithms.State{T: prev.T, N: prev.N}
	remaining := max(g.limit-prev.N, 0)
	// The item lives through its ExpireAt: forgotten a microsecond after.
	d.ResetAfter = time.Duration(prev.T-t+1) * time.Microsecond
	switch {
	case hits == 0:
		d.Allowed, d.Remaining = true, remaining
	case remaining == 0:
		d.RetryAfter = d.ResetAfter
	case hits == remaining:
		next.N = g.limit
		d.Allowed = true
	case hits > remaining:
		d.Remaining, d.RetryAfter = remaining, d.ResetAfter
		if hits > g.limit {
			d.RetryAfter = algorithms.Never
		}
		if drain {
			next.N, d.Remaining = g.limit, 0
		}
	default:
		next.N += hits
		d.Allowed, d.Remaining = true, remaining-hits
	}
	return next, d
}

// GubernatorLeaky models gubernator v2.13.0's LEAKY_BUCKET
// (algorithms.go: leakyBucket and leakyBucketNewItem), in its own
// arithmetic: milliseconds, a float64 Remaining that leaks Limit per
// Duration (rate = Duration ÷ Limit ms a token) only once a whole token
// has leaked since UpdatedAt (int64(leak) > 0), capped at Burst (= Limit,
// gubernator's default when a request gives none).
//
// A key with no item, or whose item has expired (its ExpireAt < now),
// gets a new one: Remaining = Burst − hits, refused and emptied when
// hits > Burst (unlike the token bucket, whose first hit above the limit
// leaves the window full). On a live item: int64(Remaining) 0 refuses;
// hits equal to it take it all; above it, refused, taking nothing unless
// DRAIN_OVER_LIMIT (Drain), which empties it; else Remaining −= hits. A
// hit moves the item's expiry to now + Duration. ResetAfter is until the
// cache drops the item, past its ExpireAt (a store that forgets keys
// relies on it, and a full item is not as good as none: a first hit above
// the burst empties a new one); gubernator's own ResetTime, (Limit −
// Remaining) × int64(rate), is what a peer's item expires at after a
// broadcast, and a refusal's RetryAfter at least that.
//
// State: T is UpdatedAt (ms), N the float64 bits of Remaining, Prev the
// item's ExpireAt (ms), 0 for a key with no item.
type GubernatorLeaky struct {
	p        algorithms.Params
	duration int64 // ms
	limit    int64
}

// NewGubernatorLeaky returns a model of gubernator's leaky bucket with
// Limit p.Rate × p.Window per Duration p.Window, in whole milliseconds.
func NewGubernatorLeaky(p algorithms.Params) (*GubernatorLeaky, error) {
	_, limit, err := algorithms.WindowLimit(p.Rate, p.Window)
	if err != nil {
		return nil, err
	}
	ms := p.Window.Milliseconds()
	if ms < 1 {
		return nil, &algorithms.ParamError{Param: "window", Msg: fmt.Sprintf("%s is under gubernator's millisecond (want at least 1ms)", p.Window)}
	}
	return &GubernatorLeaky{p: algorithms.Params{Rate: p.Rate, Window: p.Window}, duration: ms, limit: limit}, nil
}

// Name returns "gubernator-leaky".
func (g *GubernatorLeaky) Name() string { return "gubernator-leaky" }

// Params returns the rate and window.
func (g *GubernatorLeaky) Params() algorithms.Params { return onlyRead(g.p, "window") }

// Step is a GetRateLimits request of hits = cost on the node that holds
// the item, without DRAIN_OVER_LIMIT.
func (g *GubernatorLeaky) Step(prev algorithms.State, now algorithms.Time, cost int64) (algorithms.State, algorithms.Decision) {
	next, d, _ := g.step(prev, now, cost, false)
	return next, d
}

// Expired reports whether a cache holding st has dropped it by now: an
// item past its ExpireAt, in ms (cache.go IsExpired).
func (g *GubernatorLeaky) Expired(st algorithms.State, now algorithms.Time) bool {
	return st.Prev != 0 && floorMs(now) > st.Prev
}

// Drain is Step with DRAIN_OVER_LIMIT: an owner applying a peer's batch.
func (g *GubernatorLeaky) Drain(prev algorithms.State, now algorithms.Time, hits int64) algorithms.State {
	next, _, _ := g.step(prev, now, hits, true)
	return next
}

// Broadcast is the item a peer keeps of the owner's status at now
// (gubernator.go UpdatePeerGlobals): Remaining the status's, whole;
// UpdatedAt the peer's now; expiring at the status's ResetTime.
func (g *GubernatorLeaky) Broadcast(owner algorithms.State, now algorithms.Time) algorithms.State {
	if g.limit == 0 || owner.Prev == 0 {
		return owner
	}
	_, d, reset := g.step(owner, now, 0, false)
	t := floorMs(now)
	return algorithms.State{T: t, N: int64(math.Float64bits(float64(d.Remaining))), Prev: t + reset}
}

func floorMs(now algorithms.Time) int64 {
	t := int64(now)
	if t < 0 {
		return -((-t + 999) / 1000)
	}
	return t / 1000
}

// step is a request on the item, and gubernator's ResetTime for it, in
// ms from now: (Limit − int64(Remaining)) × int64(rate), what a peer's
// item expires at after a broadcast. The Decision's ResetAfter is instead
// when the item is as good as none (resetAfter), which a store that
// forgets keys relies on.
func (g *GubernatorLeaky) step(prev algorithms.State, now algorithms.Time, cost int64, drain bool) (algorithms.State, algorithms.Decision, int64) {
	if g.limit == 0 {
		next, d := algorithms.Unbuilt(prev, cost)
		return next, d, 0
	}
	hits := algorithms.CleanCost(cost)
	t := floorMs(now)
	rate := float64(g.duration) / float64(g.limit)
	burst := g.limit
	d := algorithms.Decision{Limit: g.limit}
	ms := func(v int64) time.Duration { return time.Duration(max(v, 0)) * time.Millisecond }
	if prev.Prev == 0 || prev.Prev < t { // no item, or expired: leakyBucketNewItem
		rem := burst - hits
		next := algorithms.State{T: t, Prev: t + g.duration}
		if hits > burst {
			next.N = int64(math.Float64bits(0))
			d.RetryAfter = algorithms.Never
			d.ResetAfter = g.resetAfter(next, now)
			return next, d, g.limit * int64(rate)
		}
		next.N = int64(math.Float64bits(float64(rem)))
		d.Allowed, d.Remaining = true, rem
		d.ResetAfter = g.resetAfter(next, now)
		return next, d, (g.limit - rem) * int64(rate)
	}
	remaining := math.Float64frombits(uint64(prev.N))
	updated, expire := prev.T, prev.Prev
	if hits != 0 {
		expire = t + g.duration // c.UpdateExpiration
	}
	if leak := float64(t-updated) / rate; int64(leak) > 0 {
		remaining += leak
		updated = t
	}
	if int64(remaining) > burst {
		remaining = float64(burst)
	}
	whole := int64(remaining)
	next := algorithms.State{T: updated, Prev: expire}
	reset := (g.limit - whole) * int64(rate)
	switch {
	case whole == 0 && hits > 0:
		d.RetryAfter = ms(reset)
	case whole == hits:
		remaining, whole = 0, 0
		reset = g.limit * int64(rate)
		d.Allowed = true
	case hits > whole:
		d.Remaining, d.RetryAfter = whole, ms(reset)
		if hits > burst {
			d.RetryAfter = algorithms.Never
		}
		if drain {
			remaining, d.Remaining = 0, 0
		}
	case hits == 0:
		d.Allowed, d.Remaining = true, whole
	default:
		remaining -= float64(hits)
		whole = int64(remaining)
		reset = (g.limit - whole) * int64(rate)
		d.Allowed, d.Remaining = true, whole
	}
	next.N = int64(math.Float64bits(remaining))
	d.ResetAfter = g.resetAfter(next, now)
	if d.RetryAfter != 0 && d.RetryAfter != algorithms.Never {
		d.RetryAfter = max(ms(reset), d.ResetAfter)
	}
	return next, d, reset
}

// resetAfter is how long from now until item st is as good as none: the
// cache drops it past its ExpireAt. Not sooner, even full: a first hit
// above the burst empties a new item and leaves a live full one as it is.
func (g *GubernatorLeaky) resetAfter(st algorithms.State, now algorithms.Time) time.Duration {
	if st.Prev == 0 {
		return 0
	}
	at := (st.Prev + 1) * 1000 // the first µs of the first ms past ExpireAt
	return time.Duration(max(at-int64(now), 0)) * time.Microsecond
}
