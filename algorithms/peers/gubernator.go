package peers

import (
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
// ExpireAt − now, which gubernator sends as ResetTime; RetryAfter the
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
		d.ResetAfter = time.Duration(g.window) * time.Microsecond
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
	d.ResetAfter = time.Duration(prev.T-t) * time.Microsecond
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
