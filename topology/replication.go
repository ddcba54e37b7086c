package topology

import (
	"context"

	"github.com/ratelim/ratelim/algorithms"
)

// replicator is a split brain's asynchronous replication: each state the
// primary writes reaches the replica lag later, in the order written. A
// write in flight when the link is cut never arrives, which is how a
// replica promoted by failover comes to have admitted less than the
// primary knew.
type replicator struct {
	on    bool
	lag   algorithms.Time
	queue []replication
	head  int // queue[:head] are delivered
}

type replication struct {
	due algorithms.Time
	key string
	st  algorithms.State
}

func (r *replicator) push(key string, st algorithms.State, at algorithms.Time) {
	r.queue = append(r.queue, replication{due: at + r.lag, key: key, st: st})
}

// deliver saves every write due by at, oldest first.
func (r *replicator) deliver(ctx context.Context, at algorithms.Time, save SaveFunc) error {
	for r.head < len(r.queue) && r.queue[r.head].due <= at {
		w := r.queue[r.head]
		if save != nil {
			if err := save(ctx, w.key, w.st); err != nil {
				return err
			}
		}
		r.queue[r.head] = replication{} // let the state's log go
		r.head++
	}
	// Reuse the queue's front once most of it is delivered, so a long run
	// holds only the writes in flight.
	if r.head > 1024 && r.head > len(r.queue)/2 {
		n := copy(r.queue, r.queue[r.head:])
		clear(r.queue[n:])
		r.queue, r.head = r.queue[:n], 0
	}
	return nil
}

// drop loses every write in flight.
func (r *replicator) drop() {
	clear(r.queue)
	r.queue, r.head = r.queue[:0], 0
}

// InFlight is how many writes are on their way to the replica.
func (t *Topology) InFlight() int { return len(t.replication.queue) - t.replication.head }
