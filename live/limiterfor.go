// limiterFor: the store a fleet server's request is decided by, as the
// simulator's decide finds it. The topology routes the server to a copy of
// the state or to none (unreachable); a racy topology reads and writes in
// two calls; an admission on a split brain's primary is replicated towards
// the replica, whose heal (resync, fault.go) copies what it missed.

package live

import (
	"context"
	"errors"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/store"
	"github.com/ratelim/ratelim/topology"
)

// limiterFor is server i's view of the store: the copy the topology routes
// it to at the moment of each request, as in the simulator.
func (f *Fleet) limiterFor(i int, alg algorithms.Algorithm) store.Limiter {
	if !f.topo.Remote() {
		return f.copies[i] // a jar in the server's own memory: nothing takes it away
	}
	var racy *store.Racy
	if f.topo.Kind() == topology.Racy {
		racy = store.NewRacy(alg, f.copies[0])
	}
	return limiterFunc(func(ctx context.Context, key string, now algorithms.Time, cost int64) (store.Decision, error) {
		f.mu.Lock()
		target := f.topo.Route(i, f.clock())
		f.mu.Unlock()
		switch {
		case target == topology.Unreachable:
			return store.Decision{}, errUnreachable
		case racy != nil:
			return racy.Take(ctx, key, now, cost)
		}
		d, err := f.copies[target].Take(ctx, key, now, cost)
		if err == nil && target == 0 && d.Allowed {
			err = f.replicate(ctx, key)
		}
		return d, err
	})
}

// errUnreachable is what a server sees from a store the topology says it
// cannot reach (an outage the fleet could not make real, a partition).
var errUnreachable = errors.New("store unreachable (outage or partition)")

// maxHealKeys bounds the keys a split brain remembers for its heal: past
// it, a key's replica catches up on its next admission instead.
const maxHealKeys = 100_000

// clock is the fleet's time, from its start: the partition's timing
// (failover_after, primary_stops_after) is measured on it.
func (f *Fleet) clock() algorithms.Time { return algorithms.At(time.Since(f.started)) }

// replicate sends key's new state on the primary towards the replica, which
// receives it replication_lag later, as the simulator's split brain does.
func (f *Fleet) replicate(ctx context.Context, key string) error {
	f.mu.Lock()
	on := f.topo.Replicates()
	f.mu.Unlock()
	if !on {
		return nil
	}
	st, err := f.copies[0].Load(ctx, key)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.healKeys) < maxHealKeys {
		f.healKeys[key] = struct{}{}
	}
	return f.topo.Replicate(ctx, key, st, f.clock(), f.saveReplica)
}

// saveReplica writes a replicated state to the replica.
func (f *Fleet) saveReplica(ctx context.Context, key string, st algorithms.State) error {
	return f.copies[1].Save(ctx, key, st, time.Hour)
}

// limiterFunc is a function as a store.Limiter: the routing closure
// limiterFor returns.
type limiterFunc func(ctx context.Context, key string, now algorithms.Time, cost int64) (store.Decision, error)

func (fn limiterFunc) Take(ctx context.Context, key string, now algorithms.Time, cost int64) (store.Decision, error) {
	return fn(ctx, key, now, cost)
}
