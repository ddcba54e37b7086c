package sim

// The copies of the limiter state and the calls into them; which copy a
// server reaches is the topology package's.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/route"
	"github.com/ratelim/ratelim/store"
	"github.com/ratelim/ratelim/topology"
)

// errStoreDown is what a server sees from a store that is out, or that a
// partition has cut it off from: route's, as the live fleet's servers see.
var errStoreDown = route.ErrUnreachable

// storeSet are the run's copies of the limiter state: copies, by the
// names the topology gives them; jars, the same copies when they are the
// run's own memory; closers, what deletes a Redis store's keys at the
// end; policy, what a server does when its copy cannot be reached.
type storeSet struct {
	copies  []route.Copy
	jars    []*jar
	names   []string
	closers []func() error
	policy  store.Policy
	// replicates: a copy sends its writes to others (a split brain, a
	// cluster with replicas), so an admission asks the topology whether
	// this one does.
	replicates bool
	// cluster is a cluster run's shards and their fates (cluster.go);
	// nil on another topology.
	cluster *clusterRun
	// breakers are each server's circuit breaker, on a run with one.
	breakers []route.Breaker
}

// racyWrites are the racy topology's writes in flight, by slot, and,
// when the run's algorithm writes with a compare-and-swap (route.Writes),
// the requests waiting for their swap, in casWaits by the write's slot.
type racyWrites struct {
	writes   slots[store.Pending] // in flight
	casWaits []casWait
}

// NewTopology is sc's topology as the simulator routes it: the one place a
// scenario becomes a topology.Config, for the simulator, the live fleet
// and the TUI's header alike.
func NewTopology(sc Scenario) *topology.Topology {
	return topology.New(topologyConfig(sc))
}

// NodeNames are the copies of the limiter state sc's topology keeps, by
// name, in the order the topology numbers them: the store nodes a
// partition's nodes: places.
func NodeNames(sc Scenario) []string { return topology.CopyNames(topologyConfig(sc)) }

// topologyConfig is sc's topology as package topology configures it.
func topologyConfig(sc Scenario) topology.Config {
	tp := sc.Topology
	return topology.Config{Kind: tp.Kind, Servers: sc.Servers,
		ReplicationLag: tp.ReplicationLag, FailoverAfter: tp.FailoverAfter, PrimaryStopsAfter: tp.PrimaryStopsAfter,
		Masters: tp.Masters, Replicas: tp.Replicas, NodeTimeout: tp.NodeTimeout, PartialCoverage: tp.PartialCoverage,
		SyncInterval: tp.SyncInterval, Regions: tp.Regions}
}

func (s *sim) setupStores(ctx context.Context, prefix string) error {
	s.topo = NewTopology(s.sc)
	s.spread = topology.Spreader{Balancer: s.sc.Balancer, Servers: s.sc.Servers}
	s.draw.intn = s.rng.IntN
	s.draw.int64n = s.rng.Int64N
	names := s.topo.Copies()
	s.stores.names = names
	s.stores.replicates = s.sc.Topology.Kind == SplitBrain || (s.sc.Topology.Kind == Cluster && s.sc.Topology.Replicas > 0)
	kind := s.sc.Topology.Store
	if onJars(kind) {
		// One numbering of the keys for all the jars; each dense where
		// that is small, else holding only the keys it reached.
		keys := newKeyIndex(s.keys)
		dense := jarsDense(int64(len(s.keys)), int64(len(names)))
		for range names {
			j := newJar(s.alg, keys, dense)
			s.stores.jars = append(s.stores.jars, j)
			s.stores.copies = append(s.stores.copies, j)
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
		// Through the driver registered for the URL's scheme: sim does not
		// link Redis itself, so that what reads a Result does not either
		// (cmd/ratelim links store/redisstore).
		base, err := store.Open(ctx, s.alg, store.RemoteOptions{URL: url, Prefix: prefix})
		if err != nil {
			return err
		}
		s.stores.closers = append(s.stores.closers, func() error {
			// A run deletes what it wrote, so runs never see each other.
			_, err := base.WithPrefix(prefix).Clear(context.Background())
			base.Close()
			return err
		})
		for _, n := range names {
			s.stores.copies = append(s.stores.copies, base.WithPrefix(prefix+n+":"))
		}
	}
	// The way to a decision on them, as the live fleet's servers take it.
	s.route = route.New(s.topo, s.stores.copies, s.alg, nil)
	s.setupCluster()
	s.setupSynced()
	s.setupOwner()
	s.setupRegions()
	if err := s.setupTwoTier(); err != nil {
		return err
	}
	if b := s.sc.Topology.Breaker; b != nil && s.topo.Remote() {
		s.stores.breakers = make([]route.Breaker, s.sc.Servers)
		for i := range s.stores.breakers {
			s.stores.breakers[i] = route.Breaker{Failures: b.Failures, Cooldown: algorithms.At(b.Cooldown)}
		}
	}
	return nil
}

func (s *sim) close() error {
	var errs []error
	for _, c := range s.stores.closers {
		errs = append(errs, c())
	}
	s.stores.closers = nil
	if err := errors.Join(errs...); err != nil {
		return &CleanupError{err}
	}
	return nil
}

// scheduleWrite sends a racy read's write, to land at at, and returns its
// slot.
func (s *sim) scheduleWrite(p store.Pending, at int64) int32 {
	slot := s.racy.writes.put(p)
	s.schedule(event{at: at, kind: evWrite, arg: slot})
	return slot
}

// replicate sends key's new state on copy from (a split brain's primary,
// a cluster shard's master) towards its replicas, which receive it
// replication_lag later.
func (s *sim) replicate(ctx context.Context, from, key int, t int64) error {
	return s.route.Wrote(ctx, from, s.keys[key].name, algorithms.Time(t))
}
