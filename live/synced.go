// A synced fleet (topology.Synced): each server decides on a memory store
// of its own, reads the shared store at a key's first request after each
// of its pushes, and a loop of its own pushes its admissions to the
// shared store on the wall clock's grid (topology.NextPush), as the
// simulator does.

package live

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/route"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/store"
	"github.com/ratelim/ratelim/topology"
)

// syncedFleet is a synced fleet's sync.
type syncedFleet struct {
	shared  route.Copy
	charger algorithms.Charger
	servers []*syncedServer
	// pushMu makes the servers' pushes one at a time: a push loads a
	// key's state, charges it and saves it back, which two pushes at
	// once would race on (a fleet of processes would need the charge as
	// a Lua script; this one is one process).
	pushMu sync.Mutex
}

// syncedServer is one server's side of the sync. Its read and pending
// are keyed by what clients choose: both are emptied at every push, and a
// server that reaches maxUnpushed of either pushes at once (kick) rather
// than at its tick, so they hold at most that many.
type syncedServer struct {
	kick    chan struct{}
	mu      sync.Mutex
	local   route.Copy
	read    map[string]struct{}
	pending []pendingAdmission
	// pushes and dropped count the pushes that reached the shared store
	// and those that did not.
	pushes, dropped int64
}

// maxUnpushed bounds a server's keys read and admissions not yet pushed:
// past it the server pushes at once (the simulator, whose keys are the
// scenario's, never needs to).
const maxUnpushed = 1 << 16

type pendingAdmission struct {
	key  string
	at   algorithms.Time
	cost int64
}

// openSynced sets up a synced fleet's sync on its copies (the servers'
// memory stores, then the shared store) and starts each server's push
// loop.
func (f *Fleet) openSynced(alg algorithms.Algorithm) error {
	if f.opts.Scenario.Topology.Kind != sim.Synced {
		return nil
	}
	charger, ok := algorithms.AsCharger(alg)
	if !ok {
		return &sim.SetupError{Err: fmt.Errorf("topology.kind: %s cannot count an admission decided elsewhere, which a synced topology's push must", alg.Name())}
	}
	servers := f.opts.Scenario.Servers
	sy := &syncedFleet{shared: f.copies[servers], charger: charger}
	for i := range servers {
		sy.servers = append(sy.servers, &syncedServer{local: f.copies[i], read: map[string]struct{}{}, kick: make(chan struct{}, 1)})
	}
	f.synced = sy
	stop := make(chan struct{})
	f.stopSync = func() { close(stop) }
	for i := range servers {
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			for {
				now := time.Now()
				next := f.topo.NextPush(i, algorithms.FromTime(now))
				timer := time.NewTimer(time.UnixMicro(int64(next)).Sub(now))
				select {
				case <-stop:
					timer.Stop()
					return
				case <-timer.C:
				case <-sy.servers[i].kick:
					timer.Stop()
				}
				f.push(i)
			}
		}()
	}
	return nil
}

// syncedLimiter is server i's limiter on a synced fleet.
func (f *Fleet) syncedLimiter(i int) store.Limiter {
	sv := f.synced.servers[i]
	return limiterFunc(func(ctx context.Context, key string, now algorithms.Time, cost int64) (store.Decision, error) {
		sv.mu.Lock()
		defer sv.mu.Unlock()
		if _, ok := sv.read[key]; !ok {
			f.mu.Lock()
			reach := f.topo.SyncRoute(i, f.clock())
			f.mu.Unlock()
			if reach == topology.Unreachable {
				f.wait(ctx, reach)
				return store.Decision{}, route.ErrUnreachable
			}
			st, err := f.synced.shared.Load(ctx, key)
			if err != nil {
				return store.Decision{}, err
			}
			if err := sv.local.Save(ctx, key, st, route.ReplicaTTL); err != nil {
				return store.Decision{}, err
			}
			sv.read[key] = struct{}{}
			f.remember(key)
		}
		d, err := sv.local.Take(ctx, key, now, cost)
		if err == nil && d.Allowed {
			sv.pending = append(sv.pending, pendingAdmission{key: key, at: now, cost: cost})
		}
		if len(sv.pending) >= maxUnpushed || len(sv.read) >= maxUnpushed {
			select {
			case sv.kick <- struct{}{}:
			default: // a push is asked for already
			}
		}
		return d, err
	})
}

// push is server i's push: its admissions since the last, each charged
// to the shared store's key at its own instant, a key loaded and saved
// once; dropped when the shared store cannot be reached, as the
// simulator drops it. Either way the server reads the shared store again
// at each key's next request. The server's requests wait for its push
// (its mutex is held throughout, then the fleet's push mutex): a read
// between the push's start and its save would find the shared store
// without the server's own admissions, and admit them again, where the
// simulator's push is one instant.
func (f *Fleet) push(i int) {
	sv := f.synced.servers[i]
	sv.mu.Lock()
	defer sv.mu.Unlock()
	pending := sv.pending
	sv.pending = nil
	clear(sv.read)
	if len(pending) == 0 {
		return
	}
	f.mu.Lock()
	reach := f.topo.SyncRoute(i, f.clock())
	f.mu.Unlock()
	if reach == topology.Unreachable {
		sv.dropped++
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	sy := f.synced
	sy.pushMu.Lock()
	defer sy.pushMu.Unlock()
	// By key, each key's admissions in their order.
	slices.SortStableFunc(pending, func(a, b pendingAdmission) int { return strings.Compare(a.key, b.key) })
	for start := 0; start < len(pending); {
		key := pending[start].key
		end := start
		for end < len(pending) && pending[end].key == key {
			end++
		}
		st, err := sy.shared.Load(ctx, key)
		if err == nil {
			for _, a := range pending[start:end] {
				sy.charger.ChargeInPlace(&st, a.at, a.cost)
			}
			err = sy.shared.Save(ctx, key, st, route.ReplicaTTL)
		}
		if err != nil {
			sv.dropped++
			return
		}
		start = end
	}
	sv.pushes++
}
