package store

import (
	"context"
	"fmt"

	"github.com/ratelim/ratelim/algorithms"
)

// Releaser gives back the lease a request took on a limiter that counts
// requests in flight ([algorithms.Concurrency], or a key's several limits
// with one among them), when the request completes: Decision.Lease names
// it. A lease already expired, or never taken, is not there to give back,
// so a release that comes twice, or too late, changes nothing.
type Releaser interface {
	Release(ctx context.Context, key string, now, lease algorithms.Time, cost int64) error
}

// leaseHolder is an algorithm that hands out leases.
type leaseHolder interface {
	Release(prev algorithms.State, now, lease algorithms.Time, cost int64) algorithms.State
}

// Release gives back cost leases named lease on key at now. On a Memory
// whose algorithm hands out no leases it does nothing.
func (m *Memory) Release(_ context.Context, key string, now, lease algorithms.Time, cost int64) error {
	if err := checkCost(cost); err != nil {
		return err
	}
	r, ok := m.alg.(leaseHolder)
	if !ok || lease == 0 {
		return nil
	}
	sh := m.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e := sh.keys[key]
	if e == nil {
		return nil // forgotten: every lease it held had expired
	}
	// Release writes a log of its own: a state Load handed out keeps its.
	e.state = r.Release(e.state, now, lease, cost)
	return nil
}

// Release gives back cost leases named lease on key at now, in one atomic
// round trip: lib/release.lua's script, which on every Redis key holding
// the key's leases (the concurrency twin's key; for a key with several
// limits, each concurrency limit's) removes up to cost leases equal to
// lease and forgets the expired ones, as [algorithms.Concurrency.Release]
// does. With the store clock option, now is the store's (Redis TIME), as
// in Take. On a store whose algorithm hands out no leases it does nothing,
// and sends nothing.
func (r *Redis) Release(ctx context.Context, key string, now, lease algorithms.Time, cost int64) error {
	if err := checkCost(cost); err != nil {
		return err
	}
	keys, err := r.script.leaseKeys(r.opts.Prefix, key)
	if err != nil || len(keys) == 0 || lease == 0 {
		return err
	}
	// Sent once, as a decision is (see once): a release retried after a
	// timeout could give back a lease twice.
	if err := luaReleaseScript.Run(ctx, onceScripter{r.client}, keys, scriptNow(now, r.opts.StoreClock), int64(lease), cost).Err(); err != nil {
		r.followTopology(err)
		return fmt.Errorf("store: releasing lease %d on key %q: %w", lease, keys[0], err)
	}
	return nil
}

var (
	_ Releaser = (*Memory)(nil)
	_ Releaser = (*Redis)(nil)
)
