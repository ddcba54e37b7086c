package store

import (
	"context"
	"slices"

	"github.com/ratelim/ratelim/algorithms"
)

// Racy is the read-modify-write done the way it is so often written first:
// read the key's state with one call, decide in the API server, write the new
// state back with another call. Between the read and the write, another
// server can read the same state, and both then admit on the same last
// token; the second write silently overwrites the first (a lost update). The
// wider the gap, a network round trip or a GC pause, the more gets through.
//
// Racy exists to show that race, so it is kept on purpose. Take runs the
// whole sequence with Gap in the middle; a simulator that wants the gap to
// last a virtual round trip calls [Racy.Read] at one instant and
// [Pending.Write] at another. The atomic alternatives are [Memory.Take] and
// a Redis store's Take (store/redisstore: the Lua twin runs the step inside
// Redis).
type Racy struct {
	alg algorithms.Algorithm
	kv  KV
	// Gap, if set, runs between the read and the write of every Take: a
	// test stretches the race window with it (a sleep, a yield).
	Gap func()
}

// NewRacy returns a racy limiter deciding with alg on state kept in kv.
func NewRacy(alg algorithms.Algorithm, kv KV) *Racy {
	return &Racy{alg: alg, kv: kv}
}

// Pending is a decision taken on state that has been read but whose new state
// has not yet been written.
type Pending struct {
	Decision algorithms.Decision
	kv       KV
	key      string
	read     algorithms.State // what the decision was taken on
	next     algorithms.State
}

// Read loads key's state and decides the request on it, without writing.
func (r *Racy) Read(ctx context.Context, key string, now algorithms.Time, cost int64) (Pending, error) {
	if err := CheckCost(cost); err != nil {
		return Pending{}, err
	}
	st, err := r.kv.Load(ctx, key)
	if err != nil {
		return Pending{}, err
	}
	next, d := r.alg.Step(st, now, cost)
	return Pending{Decision: d, kv: r.kv, key: key, read: st, next: next}, nil
}

// Write stores the state the decision computed, overwriting whatever was
// written since the read. A rejected request writes nothing, as hand-written
// limiters usually do: only an admission spends anything.
func (p Pending) Write(ctx context.Context) error {
	if !p.Decision.Allowed {
		return nil
	}
	return p.kv.Save(ctx, p.key, p.next, ttl(p.Decision))
}

// CompareAndWrite stores the state the decision computed only if the key
// still holds the state the decision was taken on, and reports whether it
// did: a compare-and-swap, as throttled's stores do (memstore under a
// mutex, Redis in a script), which a write by another server in between
// makes fail, so that the caller reads again and decides anew. A rejected
// request writes nothing and reports true: there was nothing to swap.
func (p Pending) CompareAndWrite(ctx context.Context) (bool, error) {
	if !p.Decision.Allowed {
		return true, nil
	}
	cur, err := p.kv.Load(ctx, p.key)
	if err != nil {
		return false, err
	}
	if !EqualStates(cur, p.read) {
		return false, nil
	}
	return true, p.kv.Save(ctx, p.key, p.next, ttl(p.Decision))
}

// Take reads, runs Gap, and writes.
func (r *Racy) Take(ctx context.Context, key string, now algorithms.Time, cost int64) (Decision, error) {
	p, err := r.Read(ctx, key, now, cost)
	if err != nil {
		return Decision{}, err
	}
	if r.Gap != nil {
		r.Gap()
	}
	if err := p.Write(ctx); err != nil {
		return Decision{}, err
	}
	return Decision{Decision: p.Decision}, nil
}

// EqualStates reports whether a and b hold the same numbers: a nil log and
// an empty one are the same log, and a key with several limits compares
// every limit's state, a missing one being the zero State (a store that
// has never seen the key returns no Sub at all).
func EqualStates(a, b algorithms.State) bool {
	if a.T != b.T || a.N != b.N || a.Prev != b.Prev || !slices.Equal(a.Log, b.Log) {
		return false
	}
	for i := range max(len(a.Sub), len(b.Sub)) {
		var x, y algorithms.State
		if i < len(a.Sub) {
			x = a.Sub[i]
		}
		if i < len(b.Sub) {
			y = b.Sub[i]
		}
		if !EqualStates(x, y) {
			return false
		}
	}
	return true
}
