// The fleet's stores: openStores builds the copies of the limiter state the
// topology needs (memory, miniredis, a redis-server of the fleet's own, or
// Redis URLs); memoryOf and sweepMemory keep the memory ones bounded.

package live

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/store"
	"github.com/ratelim/ratelim/store/redisstore"
)

const (
	// sweepEvery is how often a server's memory store drops the keys
	// that are back to full, for the keys no request touches again.
	sweepEvery = 10 * time.Second
	// clearTimeout bounds the deletion of a Redis store's keys at Close.
	clearTimeout = 10 * time.Second
)

// memoryOf returns server i's memory store, if it has one of its own to
// bound: a local jar, or the one memory store a shared fleet runs.
func (f *Fleet) memoryOf(i int) (*store.Memory, bool) {
	idx := 0
	if k := f.opts.Scenario.Topology.Kind; k == sim.Local || k == sim.Synced {
		idx = i
	} else if i != 0 {
		return nil, false // the shared store's stats are server 0's
	}
	if idx >= len(f.copies) {
		return nil, false
	}
	m, ok := f.copies[idx].(*store.Memory)
	return m, ok
}

// sweepMemory drops, every sweepEvery, the keys of the fleet's memory
// stores that are back to full: the ones no request comes back for, which
// forgetting on touch never reaches.
func (f *Fleet) sweepMemory() {
	mems := append([]*store.Memory(nil), f.localTiers...)
	for _, c := range f.copies {
		if m, ok := c.(*store.Memory); ok {
			mems = append(mems, m)
		}
	}
	if len(mems) == 0 {
		return
	}
	stop := make(chan struct{})
	f.stopSweep = func() { close(stop) }
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		tick := time.NewTicker(sweepEvery)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case now := <-tick.C:
				for _, m := range mems {
					m.Sweep(algorithms.FromTime(now))
				}
			}
		}
	}()
}

// openStores builds the copies of the limiter state the topology needs.
func (f *Fleet) openStores(ctx context.Context, alg algorithms.Algorithm) error {
	sc := f.opts.Scenario
	copies := len(f.topo.Copies())
	urls := []string{f.opts.Store}
	if sc.Topology.Kind == sim.SplitBrain && strings.Contains(f.opts.Store, ",") {
		urls = strings.Split(f.opts.Store, ",")
		if len(urls) != 2 {
			return optionError("Store", "split-brain takes two Redis URLs separated by a comma (got %d)", len(urls))
		}
	}
	var b [4]byte
	rand.Read(b[:])
	prefix := "ratelim-serve:" + hex.EncodeToString(b[:]) + ":"
	open := func(kind string, copyIndex int) (switchable, error) {
		switch {
		case kind == "" || kind == "memory":
			// A server's store forgets full keys and holds a bounded
			// number: keys are what its clients choose.
			return store.NewServerMemory(alg), nil
		case kind == "redis-server":
			if f.redis == nil {
				// Not a SetupError: the input was fine, the machine (no
				// redis-server, one that would not start) or the user
				// (ctrl-c during the start) stopped it.
				rs, err := StartRedisServer(ctx)
				if err != nil {
					return nil, err
				}
				f.redis = rs
				f.closers = append(f.closers, rs.Close)
			}
			kind = f.redis.URL()
		}
		addr := kind
		if kind == "miniredis" {
			addr = store.Embedded
		}
		keyPrefix := fmt.Sprintf("%s%d:", prefix, copyIndex)
		r, err := redisstore.Open(ctx, alg, redisstore.Options{URL: addr, Prefix: keyPrefix, FailFast: true})
		if err != nil {
			if m, ok := alg.(*algorithms.Multi); ok {
				return nil, &sim.SetupError{Err: fmt.Errorf("topology.store: %s cannot run a key with %d limits (%s): %w; run it on store: memory",
					store.Redacted(kind), m.Len(), m.Name(), err)}
			}
			return nil, &sim.SetupError{Err: err}
		}
		if r.Embedded() != nil {
			f.embedded = append(f.embedded, r)
		}
		// Where, for the operator, without a password the URL may hold.
		where := store.Redacted(kind)
		f.closers = append(f.closers, func() error {
			// Bounded: a store that went away at the end must not hold
			// the fleet's exit. Its keys then wait for their TTLs.
			ctx, cancel := context.WithTimeout(context.Background(), clearTimeout)
			defer cancel()
			_, err := r.Clear(ctx)
			r.Close()
			if err != nil {
				return &sim.CleanupError{Err: fmt.Errorf("%s: %w", where, err)}
			}
			return nil
		})
		return r, nil
	}
	for i := range copies {
		kind := urls[min(i, len(urls)-1)]
		if sc.Topology.Kind == sim.Synced && i < sc.Servers {
			kind = "memory" // a server's own copy, in its memory; the last copy is the shared store
		}
		c, err := open(strings.TrimSpace(kind), i)
		if err != nil {
			return err
		}
		f.copies = append(f.copies, c)
	}
	return nil
}
