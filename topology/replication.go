package topology

import (
	"context"

	"github.com/ratelim/ratelim/algorithms"
)

// replicator is the asynchronous replication of a split brain's primary,
// or a cluster's masters: each state a master writes reaches each replica
// lag later, in the order written. A write in flight when the link is cut
// never arrives, which is how a replica promoted by failover comes to
// have admitted less than its master knew.
type replicator struct {
	lag   algorithms.Time
	queue []replication
	head  int // queue[:head] are delivered
}

type replication struct {
	due      algorithms.Time
	from, to int // the copies: the master that wrote, the replica
	key      string
	st       algorithms.State
}

func (r *replicator) push(from, to int, key string, st algorithms.State, at algorithms.Time) {
	r.queue = append(r.queue, replication{due: at + r.lag, from: from, to: to, key: key, st: st})
}

// deliver saves every write due by at, oldest first.
func (r *replicator) deliver(ctx context.Context, at algorithms.Time, save SaveFunc) error {
	for r.head < len(r.queue) && r.queue[r.head].due <= at {
		w := r.queue[r.head]
		if save != nil {
			if err := save(ctx, w.to, w.key, w.st); err != nil {
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

// cut loses every write in flight between copies now on different sides
// (side, by copy).
func (r *replicator) cut(side []int) {
	kept := r.queue[:0]
	for _, w := range r.queue[r.head:] {
		if side[w.from] == side[w.to] {
			kept = append(kept, w)
		}
	}
	clear(r.queue[len(kept):])
	r.queue, r.head = kept, 0
}

// InFlight is how many writes are on their way to a replica.
func (t *Topology) InFlight() int { return len(t.replication.queue) - t.replication.head }
