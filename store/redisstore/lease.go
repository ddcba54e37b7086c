package redisstore

import (
	"context"
	"fmt"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/store"
)

// Release gives back cost leases named lease on key at now, in one atomic
// round trip: lib/release.lua's script, which on every Redis key holding
// the key's leases (the concurrency twin's key; for a key with several
// limits, each concurrency limit's) removes up to cost leases equal to
// lease and forgets the expired ones, as [algorithms.Concurrency.Release]
// does. With the store clock option, now is the store's (Redis TIME), as
// in Take. On a store whose algorithm hands out no leases it does nothing,
// and sends nothing.
func (r *Store) Release(ctx context.Context, key string, now, lease algorithms.Time, cost int64) error {
	if err := store.CheckCost(cost); err != nil {
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

var _ store.Releaser = (*Store)(nil)
