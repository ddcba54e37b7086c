package sim

// The copies of the limiter state and the calls into them; which copy a
// server reaches is the topology package's.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/store"
	"github.com/ratelim/ratelim/topology"
)

// errStoreDown is what a server sees from a store that is out, or that a
// partition has cut it off from.
var errStoreDown = errors.New("store unreachable")

// copyStore is one copy of the limiter state: a jar, the shared store, a
// primary or a replica. Both store.Memory and store.Redis are one.
type copyStore interface {
	store.Limiter
	store.KV
}

// NewTopology is sc's topology as the simulator routes it: the one place a
// scenario becomes a topology.Config, for the simulator, the live fleet
// and the TUI's header alike.
func NewTopology(sc Scenario) *topology.Topology {
	tp := sc.Topology
	return topology.New(topology.Config{Kind: tp.Kind, Servers: sc.Servers,
		ReplicationLag: tp.ReplicationLag, FailoverAfter: tp.FailoverAfter, PrimaryStopsAfter: tp.PrimaryStopsAfter})
}

func (s *sim) setupStores(ctx context.Context, prefix string) error {
	s.topo = NewTopology(s.sc)
	s.spread = topology.Spreader{Balancer: s.sc.Balancer, Servers: s.sc.Servers}
	s.intn = s.rng.IntN
	s.int64n = s.rng.Int64N
	names := s.topo.Copies()
	s.copyNames = names
	kind := s.sc.Topology.Store
	if kind == "" || kind == "memory" {
		for range names {
			j := newJar(s.alg, s.keys)
			s.jars = append(s.jars, j)
			s.copies = append(s.copies, j)
		}
	} else {
		if prefix == "" {
			var b [6]byte
			rand.Read(b[:])
			prefix = "ratelim-sim:" + hex.EncodeToString(b[:]) + ":"
		}
		url := kind
		if kind == "miniredis" {
			url = store.Embedded
		}
		base, err := store.OpenRedis(ctx, s.alg, store.RedisOptions{URL: url, Prefix: prefix})
		if err != nil {
			return err
		}
		s.closers = append(s.closers, func() error {
			// A run deletes what it wrote, so runs never see each other.
			_, err := base.WithPrefix(prefix).Clear(context.Background())
			base.Close()
			return err
		})
		for _, n := range names {
			s.copies = append(s.copies, base.WithPrefix(prefix+n+":"))
		}
	}
	if s.sc.Topology.Kind == Racy {
		for _, c := range s.copies {
			s.racy = append(s.racy, store.NewRacy(s.alg, c))
		}
	}
	return nil
}

func (s *sim) close() error {
	var errs []error
	for _, c := range s.closers {
		errs = append(errs, c())
	}
	s.closers = nil
	if err := errors.Join(errs...); err != nil {
		return &CleanupError{err}
	}
	return nil
}

func (s *sim) scheduleWrite(p store.Pending, at int64) int32 {
	var slot int32
	if n := len(s.freeSlots); n > 0 {
		slot = s.freeSlots[n-1]
		s.freeSlots = s.freeSlots[:n-1]
		s.writes[slot] = p
	} else {
		slot = int32(len(s.writes))
		s.writes = append(s.writes, p)
	}
	s.schedule(event{at: at, kind: evWrite, arg: slot})
	return slot
}

// replicate sends the primary's new state for key towards the replica,
// which receives it replication_lag later.
func (s *sim) replicate(ctx context.Context, key int, t int64) error {
	name := s.keys[key].name
	st, err := s.copies[0].Load(ctx, name)
	if err != nil {
		return err
	}
	return s.topo.Replicate(ctx, name, st, algorithms.Time(t), s.saveReplica)
}

// saveReplica writes a replicated state to the replica.
func (s *sim) saveReplica(ctx context.Context, key string, st algorithms.State) error {
	return s.copies[1].Save(ctx, key, st, time.Hour)
}
