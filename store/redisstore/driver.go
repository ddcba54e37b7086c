// Package redisstore is the Redis driver of package store: state kept in
// Redis and decided by the algorithm's Lua twin (lua/), atomically, in one
// round trip ([Store]); an embedded miniredis, one server or a Redis
// Cluster; pipelined batches ([Store.TakeBatch]), failover followed on a
// cluster and a redialing connection for a store that must fail fast.
//
// It is a package of its own so that only the programs that open a Redis
// store link the Redis client and miniredis: a program opens one by URL
// with [store.Open] once it links this package, which registers the
// schemes miniredis, redis, rediss, redis+cluster and rediss+cluster in
// its init:
//
//	import _ "github.com/ratelim/ratelim/store/redisstore"
//
// or calls [Open] here for the options store.Open does not carry
// (FailFast, StoreClock) and the embedded server itself.
package redisstore

import (
	"context"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/store"
)

func init() {
	for _, scheme := range []string{store.Embedded, "redis", "rediss", "redis+cluster", "rediss+cluster"} {
		store.Register(scheme, openRemote)
	}
}

// openRemote is the driver store.Open calls.
func openRemote(ctx context.Context, alg algorithms.Algorithm, opts store.RemoteOptions) (store.Remote, error) {
	s, err := Open(ctx, alg, Options{URL: opts.URL, Prefix: opts.Prefix})
	if err != nil {
		return nil, err
	}
	return remote{s}, nil
}

// remote is a Store as a store.Remote: the same store, whose WithPrefix
// returns a store.Remote; every other method is the Store's own, TakeBatch
// included, which the simulator finds by asking for it.
type remote struct{ *Store }

func (r remote) WithPrefix(prefix string) store.Remote { return remote{r.Store.WithPrefix(prefix)} }
