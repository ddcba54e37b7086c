package store

import (
	"context"

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
	if err := CheckCost(cost); err != nil {
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

var _ Releaser = (*Memory)(nil)
