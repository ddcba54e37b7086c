// Package route is a request's way from an API server to its decision,
// written once for the simulator and the live fleet: the topology routes
// the server to a copy of the limiter state or to none; the algorithm's
// way of writing a store the servers share decides it there (one atomic
// step, a read then an overwrite, or a compare-and-swap); an admission
// on a split brain's primary is sent towards the replica; and a heal
// makes the replica the primary's copy again.
//
// The simulator decides a request on its own memory through int-indexed
// jars, and a racy read's write lands a virtual round trip later; those
// are its own. Everything else a request meets on its way, and every rule
// the two must agree on (which way an algorithm writes, how many swaps a
// compare-and-swap tries, what an unreachable copy says, what is
// replicated and what a heal copies), is here.
package route

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/store"
	"github.com/ratelim/ratelim/topology"
)

// Writes is how an algorithm writes a key's state to a store the servers
// share, which matters on the racy topology, where the servers read and
// write the state themselves.
type Writes uint8

const (
	// Overwrite reads, decides in the server, and writes back, the last
	// write winning: the read-modify-write written first, ratelim's own
	// algorithms on the racy topology, and the race that topology shows.
	Overwrite Writes = iota
	// Atomic reads and writes in one operation (a Lua script, an INCRBY,
	// a mutex in process): servers sharing the store cannot race.
	Atomic
	// CompareAndSwap reads, decides, and writes only if the key is still
	// as it was read; if another server wrote it since, it reads again,
	// at most MaxCASAttempts times in all (throttled's GCRA).
	CompareAndSwap
)

// String names the way of writing as the log and the docs do.
func (w Writes) String() string {
	switch w {
	case Atomic:
		return "atomic"
	case CompareAndSwap:
		return "compare-and-swap"
	}
	return "overwrite"
}

// WritesOf is how the named algorithm writes a shared store: a peer model
// of a library writes as its library does (algorithms.Provenance.Write);
// ratelim's own algorithms overwrite, which is the lesson of the racy
// topology.
func WritesOf(algorithm string) Writes {
	info, ok := algorithms.Lookup(algorithm)
	switch {
	case !ok || info.Peer == nil:
		return Overwrite
	case info.Peer.Write == "cas":
		return CompareAndSwap
	}
	return Atomic
}

// MaxCASAttempts is how many times a compare-and-swap limiter reads,
// decides and tries to swap before it gives up with ErrCASExhausted
// (throttled's maxCASAttempts, rate.go, GCRARateLimiterCtx.RateLimitCtx).
const MaxCASAttempts = 10

// ErrCASExhausted is the error a compare-and-swap limiter gives when every
// attempt found the key changed under it; the fail policy answers it.
var ErrCASExhausted = fmt.Errorf("failed to store the updated rate limit state after %d compare-and-swap attempts", MaxCASAttempts)

// ErrUnreachable is what a server sees from a copy the topology says it
// cannot reach: the store is out, or a partition cut the server off.
var ErrUnreachable = errors.New("store unreachable")

// ErrClusterDown is what a cluster node that refuses every key answers
// (src/cluster.c, clusterRedirectClient): the topology routed the request
// to topology.ClusterDown. The fail policy answers it, as it answers
// ErrUnreachable.
var ErrClusterDown = errors.New("CLUSTERDOWN The cluster is down")

// ErrBreakerOpen is what a server's open circuit breaker answers for its
// store (Breaker): the fail policy answers it, at once.
var ErrBreakerOpen = errors.New("circuit breaker open")

// StoreDown reports whether err is a store that could not decide, which
// the fail policy answers: unreachable, a cluster that is down, or a
// circuit breaker open in front of it.
func StoreDown(err error) bool {
	return errors.Is(err, ErrUnreachable) || errors.Is(err, ErrClusterDown) || errors.Is(err, ErrBreakerOpen)
}

// Copy is one copy of the limiter state: a server's jar, the shared store,
// a split brain's primary or its replica.
type Copy interface {
	store.Limiter
	store.KV
}

// ReplicaTTL is how long a state copied to the replica (by replication or
// a heal) is kept untouched: past any run's window.
const ReplicaTTL = time.Hour

// Copies are a fleet's copies of the limiter state, in the topology's
// order (copy 0 is the shared store or the primary, copy 1 the replica; a
// cluster's nodes shard by shard), and how a request is decided on them.
type Copies struct {
	topo   *topology.Topology
	copies []Copy
	// Writes is how the run's algorithm writes, on the racy topology.
	Writes Writes
	// racy reads and writes each copy in two calls, on the racy topology
	// when the algorithm does not write atomically.
	racy []*store.Racy
	// topo is not safe for concurrent use: a fleet whose servers decide
	// at once guards it with lock (the simulator, one request at a time,
	// has none).
	lock sync.Locker
	// SlotKey, if set, is the part of a key its cluster slot is taken
	// from: the live fleet's middleware keys "key:orders" where the
	// simulator keys "orders", and both must put it in one slot. Nil
	// takes the key whole.
	SlotKey func(key string) string
}

// New returns the copies of a fleet running alg on topo, and how it writes
// them on the racy topology. lock guards topo, nil when one request is
// decided at a time.
func New(topo *topology.Topology, copies []Copy, alg algorithms.Algorithm, lock sync.Locker) *Copies {
	c := &Copies{topo: topo, copies: copies, Writes: WritesOf(alg.Name()), lock: lock}
	if topo.Kind() == topology.Racy && c.Writes != Atomic {
		for _, cp := range copies {
			c.racy = append(c.racy, store.NewRacy(alg, cp))
		}
	}
	return c
}

// Racy reports whether requests read and write in two calls: the racy
// topology, for an algorithm that does not write atomically.
func (c *Copies) Racy() bool { return c.racy != nil }

// Read is a racy read of the copy target, decided on but not yet written:
// what the simulator's read-then-write and compare-and-swap send their
// write from, a round trip later.
func (c *Copies) Read(ctx context.Context, target int, key string, now algorithms.Time, cost int64) (store.Pending, error) {
	return c.racy[target].Read(ctx, key, now, cost)
}

// Route is the copy server reaches at true time at, or
// topology.Unreachable.
func (c *Copies) Route(server int, at algorithms.Time) int {
	c.acquire()
	defer c.release()
	return c.topo.Route(server, at)
}

// RouteKey is the copy server reaches for key at true time at: on a
// cluster, its slot's master as server sees it (topology.RouteSlot).
func (c *Copies) RouteKey(server int, key string, at algorithms.Time) int {
	slot := 0
	if c.topo.Kind() == topology.Cluster {
		slot = topology.HashSlot(c.slotKey(key))
	}
	c.acquire()
	defer c.release()
	return c.topo.RouteSlot(server, slot, at)
}

// Take decides a request for key of cost, on the server's clock now, on
// the copy target (Route's answer) at true time at, all at once: an
// unreachable copy answers ErrUnreachable; on the racy topology the
// algorithm writes as it does (Writes), its read and write, or its swaps,
// done now; an admission on the primary is then sent towards the replica.
func (c *Copies) Take(ctx context.Context, target int, key string, now, at algorithms.Time, cost int64) (store.Decision, error) {
	switch target {
	case topology.Unreachable:
		return store.Decision{}, ErrUnreachable
	case topology.ClusterDown:
		return store.Decision{}, ErrClusterDown
	}
	if c.racy != nil {
		if c.Writes == CompareAndSwap {
			return c.swap(ctx, target, key, now, cost)
		}
		return c.racy[target].Take(ctx, key, now, cost)
	}
	d, err := c.copies[target].Take(ctx, key, now, cost)
	if err != nil || !d.Allowed {
		return d, err
	}
	return d, c.Wrote(ctx, target, key, at)
}

// swap is a compare-and-swap limiter's whole take: read, decide, swap if
// the key is unchanged; else read again, at most MaxCASAttempts times.
func (c *Copies) swap(ctx context.Context, target int, key string, now algorithms.Time, cost int64) (store.Decision, error) {
	for range MaxCASAttempts {
		p, err := c.racy[target].Read(ctx, key, now, cost)
		if err != nil {
			return store.Decision{}, err
		}
		swapped, err := p.CompareAndWrite(ctx)
		if err != nil {
			return store.Decision{}, err
		}
		if swapped {
			return store.Decision{Decision: p.Decision}, nil
		}
	}
	return store.Decision{}, ErrCASExhausted
}

// Wrote is what follows a write of key on copy target at true time at (an
// admission, a lease given back): a write on a split brain's primary, or
// a cluster shard's master, is sent towards each replica it reaches,
// which receives it the replication lag later.
func (c *Copies) Wrote(ctx context.Context, target int, key string, at algorithms.Time) error {
	if !c.replicatesFrom(target) {
		return nil
	}
	st, err := c.copies[target].Load(ctx, key)
	if err != nil {
		return err
	}
	c.acquire()
	defer c.release()
	return c.topo.Replicate(ctx, target, key, st, at, c.SaveCopy)
}

func (c *Copies) replicatesFrom(target int) bool {
	c.acquire()
	defer c.release()
	return c.topo.ReplicatesFrom(target)
}

// SaveCopy writes a state replicated from a master to copy to.
func (c *Copies) SaveCopy(ctx context.Context, to int, key string, st algorithms.State) error {
	return c.copies[to].Save(ctx, key, st, ReplicaTTL)
}

// Resync is a heal, at true time at: each copy that follows another (a
// split brain's replica, a cluster shard's other nodes) loses its writes
// during the partition and takes each of keys from the copy it follows
// (the primary; the shard's master, which after a failover is the
// promoted replica). keys must hold every key either copy may hold that
// the other does not: the simulator passes every key of its run, the live
// fleet every key decided since the last heal. It is called by the
// topology's heal, with the topology's lock held.
func (c *Copies) Resync(ctx context.Context, keys func(yield func(string) bool), at algorithms.Time) error {
	for key := range keys {
		master, followers := c.topo.Followers(c.slotKey(key), at)
		if len(followers) == 0 {
			continue
		}
		st, err := c.copies[master].Load(ctx, key)
		if err != nil {
			return err
		}
		for _, to := range followers {
			if err := c.SaveCopy(ctx, to, key, st); err != nil {
				return err
			}
		}
	}
	return nil
}

// slotKey is what key's slot is taken from (SlotKey).
func (c *Copies) slotKey(key string) string {
	if c.SlotKey == nil {
		return key
	}
	return c.SlotKey(key)
}

func (c *Copies) acquire() {
	if c.lock != nil {
		c.lock.Lock()
	}
}

func (c *Copies) release() {
	if c.lock != nil {
		c.lock.Unlock()
	}
}
