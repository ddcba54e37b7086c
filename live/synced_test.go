package live

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/route"
	"github.com/ratelim/ratelim/store"
	"github.com/ratelim/ratelim/topology"
)

// slowSave holds a push's Save until released: the window between a push
// taking its admissions and the shared store holding them.
type slowSave struct {
	route.Copy
	entered, release chan struct{}
}

func (s *slowSave) Save(ctx context.Context, key string, st algorithms.State, ttl time.Duration) error {
	close(s.entered)
	<-s.release
	return s.Copy.Save(ctx, key, st, ttl)
}

// TestSyncedPushIsOneInstant: a server's requests wait for its push, so a
// read cannot find the shared store without the server's own admissions
// and admit them again. One server, a burst of 10 and no refill: 10
// admitted, however long the push's save takes (found by review: before,
// the requests made while the save was held admitted 10 more).
func TestSyncedPushIsOneInstant(t *testing.T) {
	alg, _ := algorithms.NewTokenBucket(algorithms.Rate{N: 1, Per: time.Hour}, 10)
	charger, _ := algorithms.AsCharger(alg)
	shared := &slowSave{Copy: store.NewServerMemory(alg), entered: make(chan struct{}), release: make(chan struct{})}
	f := &Fleet{topo: topology.New(topology.Config{Kind: topology.Synced, Servers: 1, SyncInterval: time.Hour}), started: time.Now()}
	f.synced = &syncedFleet{shared: shared, charger: charger,
		servers: []*syncedServer{{local: store.NewServerMemory(alg), read: map[string]struct{}{}, kick: make(chan struct{}, 1)}}}
	lim := f.syncedLimiter(0)
	ctx := context.Background()
	var admitted atomic.Int64
	take := func(now algorithms.Time) {
		for range 10 {
			if d, err := lim.Take(ctx, "k", now, 1); err == nil && d.Allowed {
				admitted.Add(1)
			}
		}
	}
	take(1000)
	pushed := make(chan struct{})
	go func() { f.push(0); close(pushed) }()
	<-shared.entered // the push holds its admissions; its save waits
	during := make(chan struct{})
	go func() { take(1001); close(during) }()
	select {
	case <-during: // the requests did not wait for the push
	case <-time.After(200 * time.Millisecond): // they wait, as they must
	}
	close(shared.release)
	<-pushed
	<-during
	if n := admitted.Load(); n != 10 {
		t.Errorf("one server, burst 10, no refill: %d admitted, want 10 (the simulator's push is one instant)", n)
	}
}
