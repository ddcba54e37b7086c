// limiterFor: the store a fleet server's request is decided by, taken the
// way the simulator takes it (package route): the topology routes the
// server to a copy of the state or to none (unreachable), the algorithm
// writes a racy topology's store as it does (overwrite, atomic or
// compare-and-swap), and an admission on a split brain's primary is
// replicated towards the replica, whose heal (resync, fault.go) copies
// every key either copy was written since.

package live

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/httplimit"
	"github.com/ratelim/ratelim/route"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/store"
	"github.com/ratelim/ratelim/topology"
)

// limiterFor is server i's view of the store: the copy the topology routes
// it to at the moment of each request, as in the simulator.
func (f *Fleet) limiterFor(i int) store.Limiter {
	if f.synced != nil {
		return f.syncedLimiter(i)
	}
	if !f.topo.Remote() {
		return f.copies[i] // a jar in the server's own memory: nothing takes it away
	}
	return limiterFunc(func(ctx context.Context, key string, now algorithms.Time, cost int64) (store.Decision, error) {
		if f.localTiers != nil {
			// A two-tier server's local bucket answers first, with no
			// store call (topology.TwoTier).
			if d, err := f.localTiers[i].Take(ctx, key, now, cost); err != nil || !d.Allowed {
				return d, err
			}
		}
		at := f.clock()
		if !f.breakerAllows(i, at) {
			return store.Decision{}, route.ErrBreakerOpen
		}
		target := f.route.RouteKey(i, key, at)
		f.remember(key)
		f.wait(ctx, target)
		d, err := f.route.Take(ctx, target, key, now, at, cost)
		f.breakerDone(i, at, err != nil)
		return d, err
	})
}

// openLocalTiers builds, on a two-tier topology, each server's local
// token bucket: a memory store of its own, bounded as every server's
// memory store is (its keys are what clients choose).
func (f *Fleet) openLocalTiers() error {
	tp := f.opts.Scenario.Topology
	if tp.Kind != sim.TwoTier {
		return nil
	}
	if tp.Local == nil {
		return &sim.SetupError{Err: errors.New("topology.local: missing: a two-tier topology's local tier (want e.g. local: {rate: 25/s, burst: 10})")}
	}
	bucket, err := algorithms.NewTokenBucket(tp.Local.Rate, tp.Local.Burst)
	if err != nil {
		return &sim.SetupError{Err: fmt.Errorf("topology.local.%w", err)}
	}
	for range f.opts.Scenario.Servers {
		f.localTiers = append(f.localTiers, store.NewServerMemory(bucket))
	}
	return nil
}

// breakerAllows asks server i's circuit breaker, if the scenario has one,
// whether a store call at at may go.
func (f *Fleet) breakerAllows(i int, at algorithms.Time) bool {
	if f.breakers == nil {
		return true
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.breakers[i].Allow(at)
}

// breakerDone tells server i's circuit breaker how the call it allowed at
// at ended, now.
func (f *Fleet) breakerDone(i int, at algorithms.Time, failed bool) {
	if f.breakers == nil {
		return
	}
	done := f.clock()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.breakers[i].Done(at, done, failed)
}

// wait is what a server spends on a copy that does not decide, as the
// simulator counts it (storeLatency): its timeout for one across a
// partition or an outage (never answering); a go-redis client's retries
// of CLUSTERDOWN, up to the timeout.
func (f *Fleet) wait(ctx context.Context, target int) {
	var d time.Duration
	switch target {
	case topology.Unreachable:
		d = f.timeout
	case topology.ClusterDown:
		// The round trips are the fleet's own, on the loopback.
		d = route.ClusterDownWait(0, algorithms.At(f.timeout), rand.Int64N).Duration()
	}
	if d <= 0 {
		return
	}
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
}

// simKey is the key as the simulator names it: the middleware's key
// without the prefix that says what it was taken from ("key:orders" is
// "orders"), so that a simulated cluster puts it in the slot the
// simulator does.
func simKey(key string) string {
	for _, p := range []string{httplimit.KeyPrefixAPIKey, httplimit.KeyPrefixUser, httplimit.KeyPrefixIP} {
		if rest, ok := strings.CutPrefix(key, p); ok {
			return rest
		}
	}
	return key
}

// maxHealKeys bounds the keys a split brain remembers for its heal: past
// it, a key's replica catches up on its next admission instead.
const maxHealKeys = 100_000

// remember notes key for the next heal of a split brain or a cluster: a
// key decided on either copy since the last heal may differ between them
// (the primary's admissions during a partition, the replica's after
// failover, writes still in flight when the link was cut).
func (f *Fleet) remember(key string) {
	if k := f.topo.Kind(); k != topology.SplitBrain && k != topology.Cluster {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.healKeys) < maxHealKeys {
		f.healKeys[key] = struct{}{}
	}
}

// clock is the fleet's time, from its start: the partition's timing
// (failover_after, primary_stops_after) is measured on it.
func (f *Fleet) clock() algorithms.Time { return algorithms.At(time.Since(f.started)) }

// limiterFunc is a function as a store.Limiter: the routing closure
// limiterFor returns.
type limiterFunc func(ctx context.Context, key string, now algorithms.Time, cost int64) (store.Decision, error)

func (fn limiterFunc) Take(ctx context.Context, key string, now algorithms.Time, cost int64) (store.Decision, error) {
	return fn(ctx, key, now, cost)
}
