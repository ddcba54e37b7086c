// Package topology is where a limiter's counters live and how each API
// server reaches them at a given moment: the copies of the state (a jar
// per server, one shared store, a primary and its replica), the balancer
// that picks a server for a request, and the routing that outages,
// partitions, failover and replication change.
//
// The simulator and the live fleet both decide through it, so they cannot
// disagree on which copy decides a request. It holds no store and does no
// I/O: a caller owns the copies, asks [Topology.Route] which one a server
// reaches, and hands the replication's writes to its replica through a
// callback. Time is an argument, in the algorithms' microseconds, as
// everywhere in ratelim: the simulator passes its virtual clock, the live
// fleet the time since it started.
//
// A Topology is not safe for concurrent use; the live fleet guards it with
// a mutex.
package topology

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/ratelim/ratelim/algorithms"
)

// Kind is where the counter lives.
type Kind string

const (
	Local      Kind = "local"       // a jar per server: N servers admit N × the limit
	Shared     Kind = "shared"      // one atomic store, one round trip per decision
	Racy       Kind = "racy"        // one store, read at t and written a round trip later
	SplitBrain Kind = "split-brain" // a primary and a replica that a partition separates
	Cluster    Kind = "cluster"     // Redis Cluster: masters own hash slots, replicas take over by majority
	Synced     Kind = "synced"      // a jar per server, its admissions pushed to one shared copy every SyncInterval
	TwoTier    Kind = "two-tier"    // a local bucket per server in front of one shared store
	Owner      Kind = "owner"       // gubernator's GLOBAL: a node per server answers from its cache, an owner per key
	Regions    Kind = "regions"     // a store per region, replicated later or not at all
)

// Kinds are the topologies there are, in the order they are taught (and
// listed, cycled and checked by the parser, the TUI and the simulator):
// the one list of them.
func Kinds() []Kind {
	return []Kind{Local, Shared, Racy, SplitBrain, Cluster, Synced, TwoTier, Owner, Regions}
}

// PrimaryNeverStops is the PrimaryStopsAfter of a primary that keeps taking
// writes for the whole partition, as a Redis primary without
// min-replicas-to-write does.
const PrimaryNeverStops time.Duration = -1

// FailoverNever is the FailoverAfter of a split brain whose replica is
// never promoted: the cut-off servers reach no copy for the whole
// partition, as when no one promotes the replica (a Sentinel without a
// quorum on their side).
const FailoverNever time.Duration = -1

// Unreachable is the copy a server reaches when it reaches none: the store
// is out, or a partition has cut the server off from it.
const Unreachable = -1

// Config is a topology's shape and its failover timing.
type Config struct {
	Kind    Kind
	Servers int // at least 1
	// Split-brain only.
	ReplicationLag time.Duration // how far the replica trails the primary
	FailoverAfter  time.Duration // cut-off servers see errors this long, then use the replica; FailoverNever never
	// PrimaryStopsAfter is how long into a partition the primary keeps
	// taking writes from the servers that still reach it (a Redis with
	// min-replicas-to-write stops when it loses its replica): 0 is at once,
	// PrimaryNeverStops never.
	PrimaryStopsAfter time.Duration
	// Cluster only: Masters (at least 1) each hold a range of the hash
	// slots and have Replicas; a master cut off from the majority of
	// masters for NodeTimeout (DefaultNodeTimeout when 0) is failed and
	// replaced; PartialCoverage is cluster-require-full-coverage no.
	// ReplicationLag is each replica's.
	Masters, Replicas int
	NodeTimeout       time.Duration
	PartialCoverage   bool
	// Synced only: how often each server pushes its admissions to the
	// shared copy (synced.go); SyncEveryRequest and SyncNever are the
	// shared store's and the local jars' limits of it.
	SyncInterval time.Duration
	// Regions only: the regions, in order, holding the servers in order
	// (their Servers add up to Servers). ReplicationLag is how long an
	// admission takes to reach the other regions' stores, or
	// ReplicationNone.
	Regions []RegionConfig
}

// CopyCount is how many copies of the state a topology of cfg keeps: a
// jar per server on local, a primary and a replica on a split brain, each
// node of a cluster, else one.
func CopyCount(cfg Config) int { return len(CopyNames(cfg)) }

// CopyNames names the copies of the state a topology of cfg keeps, in the
// order [Topology.Route] numbers them: one jar per server ("server-0",
// …), "primary" and "replica", a cluster's nodes shard by shard
// ("s0-master", "s0-replica", "s1-master", …), or "shared".
func CopyNames(cfg Config) []string {
	switch cfg.Kind {
	case Local:
		names := make([]string, max(cfg.Servers, 1))
		for i := range names {
			names[i] = fmt.Sprintf("server-%d", i)
		}
		return names
	case SplitBrain:
		return []string{"primary", "replica"}
	case Cluster:
		return clusterNames(cfg.Masters, cfg.Replicas)
	case Synced:
		names := CopyNames(Config{Kind: Local, Servers: cfg.Servers})
		return append(names, "shared")
	case Regions:
		names := make([]string, len(cfg.Regions))
		for i, r := range cfg.Regions {
			names[i] = r.Name
		}
		return names
	case Owner:
		names := make([]string, max(cfg.Servers, 1))
		for i := range names {
			names[i] = fmt.Sprintf("node-%d", i)
		}
		return names
	}
	return []string{"shared"}
}

// DefaultMasters is a cluster's masters when its Config gives none: the
// smallest cluster `redis-cli --cluster create` builds.
const DefaultMasters = 3

// normalized is cfg with its defaults: at least one server, and a
// cluster's DefaultMasters.
func (cfg Config) normalized() Config {
	cfg.Servers = max(cfg.Servers, 1)
	if cfg.Kind == Cluster && cfg.Masters <= 0 {
		cfg.Masters = DefaultMasters
	}
	return cfg
}

// Topology is the routing state of one run or one fleet: which faults are
// on, and for a split brain, the writes on their way to the replica. Its
// zero value is a shared store that every server reaches; New sets it up.
type Topology struct {
	cfg     Config
	outages int // outages in force: they can overlap
	// The partition in force, if any: when it began, and the side each
	// server and each copy is on (a side reaches only its own).
	partitioned    bool
	partitionStart algorithms.Time
	serverSide     []int
	nodeSide       []int
	replication    replicator
	cluster        *cluster // the cluster kind's shards and their fates
	ring           *ownerRing
	regionsDown    []int // by region, the outages in force
}

// New returns the topology cfg describes, with no fault in force.
func New(cfg Config) *Topology {
	cfg = cfg.normalized()
	t := &Topology{cfg: cfg}
	t.serverSide = make([]int, cfg.Servers)
	t.nodeSide = make([]int, len(CopyNames(cfg)))
	t.replication.lag = algorithms.At(cfg.ReplicationLag)
	if cfg.Kind == Cluster {
		t.cluster = newCluster(cfg)
	}
	t.regionsDown = make([]int, len(cfg.Regions))
	if cfg.Kind == Owner {
		r := newOwnerRing(cfg.Servers)
		t.ring = &r
	}
	return t
}

// Kind is the topology's kind.
func (t *Topology) Kind() Kind {
	if t.cfg.Kind == "" {
		return Shared
	}
	return t.cfg.Kind
}

// Copies names the copies of the state, in Route's numbering.
func (t *Topology) Copies() []string { return CopyNames(t.cfg.normalized()) }

// Remote reports whether a server reaches the copy it decides on over the
// network, where round trips, outages and partitions reach it: every kind
// but local jars, synced ones (whose way to the shared copy is
// SyncRoute's) and owner ones (whose nodes' ways to each other are
// NodesReach's).
func (t *Topology) Remote() bool {
	return t.Kind() != Local && t.Kind() != Synced && t.Kind() != Owner
}

// Route is the copy server decides on at time at, or Unreachable: a
// key's copy on any kind but a cluster, whose copy depends on the key's
// slot (RouteSlot).
//
// A local jar is in the server's own memory: nothing takes it away. A
// remote store is unreachable during an outage. During a partition a
// server reaches the copies on its side only: the primary (the shared
// store) until PrimaryStopsAfter, when an isolated primary stops taking
// writes; on a split brain, the replica from FailoverAfter the partition
// began.
func (t *Topology) Route(server int, at algorithms.Time) int { return t.RouteSlot(server, 0, at) }

// RouteSlot is Route for a key in hash slot (HashSlot): on a cluster,
// the node that is its master as server sees it, Unreachable when that
// node is on another side of a partition (the server waits for its
// timeout), or ClusterDown when the node refuses every key.
func (t *Topology) RouteSlot(server, slot int, at algorithms.Time) int {
	switch {
	case t.Kind() == Local || t.Kind() == Synced || t.Kind() == Owner:
		return server
	case t.outages > 0:
		return Unreachable
	case t.cluster != nil:
		return t.cluster.route(t.side(server), slot, t.partitioned, at)
	case t.Kind() == Regions:
		return t.routeRegion(server)
	case !t.partitioned:
		return 0
	}
	side := t.side(server)
	if side == t.nodeSide[0] {
		if stops := t.cfg.PrimaryStopsAfter; stops >= 0 && at >= t.partitionStart+algorithms.At(stops) {
			return Unreachable
		}
		return 0
	}
	if t.Kind() != SplitBrain || side != t.nodeSide[1] {
		return Unreachable
	}
	if failover, ok := t.FailoverAt(); !ok || at < failover {
		return Unreachable
	}
	return 1
}

// side is the side of the partition in force server is on (0 with none).
func (t *Topology) side(server int) int {
	if !t.partitioned || server < 0 || server >= len(t.serverSide) {
		return 0
	}
	return t.serverSide[server]
}

// OutageStarts takes the remote store away until the matching OutageEnds.
func (t *Topology) OutageStarts() { t.outages++ }

// OutageEnds ends one outage.
func (t *Topology) OutageEnds() { t.outages = max(t.outages-1, 0) }

// Out reports whether an outage is in force: the remote store answers no
// one.
func (t *Topology) Out() bool { return t.outages > 0 }

// Partition is how a network partition splits a fleet into sides, each
// reaching only what is on it: Groups are the API servers of each side;
// Nodes, the copies on each side by the names Copies gives them. A copy
// no side names is on the first side, except a split brain's replica,
// which is on the second: where the servers cut off from the primary
// fail over to.
type Partition struct {
	Groups [][]int
	Nodes  [][]string
}

// PartitionStarts splits the fleet as p says at time at. Replication
// carries on only between copies on one side: the writes already due
// reach their replica (through save), those in flight across the cut are
// lost with the link. On a cluster, draw(n) draws from [0, n) for the
// gossip's and the election's jitter (unused by the other kinds).
func (t *Topology) PartitionStarts(ctx context.Context, at algorithms.Time, p Partition, draw func(int64) int64, save SaveFunc) error {
	if err := t.replication.deliver(ctx, at, save); err != nil {
		return err
	}
	t.partitioned, t.partitionStart = true, at
	// A server no group names is alone on a side of its own.
	for i := range t.serverSide {
		t.serverSide[i] = len(p.Groups) + i
	}
	for side, g := range p.Groups {
		for _, s := range g {
			if s >= 0 && s < len(t.serverSide) {
				t.serverSide[s] = side
			}
		}
	}
	names := t.Copies()
	for i := range t.nodeSide {
		t.nodeSide[i] = 0
	}
	if t.Kind() == SplitBrain && len(p.Groups) > 1 {
		t.nodeSide[1] = 1
	}
	for side, nodes := range p.Nodes {
		for _, name := range nodes {
			if i := slices.Index(names, name); i >= 0 {
				t.nodeSide[i] = side
			}
		}
	}
	t.replication.cut(t.nodeSide)
	if t.cluster != nil {
		if draw == nil {
			draw = func(n int64) int64 { return n / 2 }
		}
		t.cluster.start(at, slices.Clone(t.serverSide), slices.Clone(t.nodeSide), draw)
	}
	return nil
}

// NodeSide is the side of the partition in force copy node is on (0 with
// none).
func (t *Topology) NodeSide(node int) int {
	if !t.partitioned || node < 0 || node >= len(t.nodeSide) {
		return 0
	}
	return t.nodeSide[node]
}

// CutOff reports whether the partition in force has cut server off from
// the primary (the shared store, a split brain's primary): it is on
// another side. With no partition in force, or for a server the topology
// does not have, it reports false. Being cut off is not where a server
// decides: local jars ignore a partition, and on a split brain a cut-off
// server on the replica's side reaches it after failover; see Route.
func (t *Topology) CutOff(server int) bool {
	return t.partitioned && server >= 0 && server < len(t.serverSide) && t.serverSide[server] != t.nodeSide[0]
}

// ReachesReplica reports whether server is on the side of the partition
// in force that a split brain's replica is on, and so fails over to it.
func (t *Topology) ReachesReplica(server int) bool {
	return t.partitioned && t.Kind() == SplitBrain && t.side(server) == t.nodeSide[1] && t.side(server) != t.nodeSide[0]
}

// FailoverAt is when the cut-off servers of the partition in force start
// on the replica (a split brain's; the others stay cut off); ok is false
// when they never do (FailoverNever).
func (t *Topology) FailoverAt() (at algorithms.Time, ok bool) {
	if t.cfg.FailoverAfter < 0 {
		return 0, false
	}
	return t.partitionStart + algorithms.At(t.cfg.FailoverAfter), true
}

// IsolatedPrimaryStopsAt is when the primary of the partition in force
// stops taking writes; ok is false when it never does.
func (t *Topology) IsolatedPrimaryStopsAt() (at algorithms.Time, ok bool) {
	if t.cfg.PrimaryStopsAfter < 0 {
		return 0, false
	}
	return t.partitionStart + algorithms.At(t.cfg.PrimaryStopsAfter), true
}

// PartitionEnds heals the partition at at: every server reaches every
// copy again and replication resumes. The copies that followed another
// during the partition resynchronise from it (resync, given the pairs to
// copy: on a split brain the replica from the primary, its writes during
// the partition lost; on a cluster each shard's nodes from its master,
// which for a failed-over shard is the promoted replica, the old
// master's writes lost).
func (t *Topology) PartitionEnds(at algorithms.Time, resync func() error) error {
	t.partitioned = false
	if t.cluster != nil {
		t.cluster.heal(at)
	}
	if t.Kind() != SplitBrain && t.cluster == nil {
		return nil
	}
	if resync == nil {
		return nil
	}
	return resync()
}

// Partitioned reports whether a partition is in force.
func (t *Topology) Partitioned() bool { return t.partitioned }

// Followers are the copies that follow key's master at at, and that
// master: a split brain's replica and primary; a cluster shard's other
// nodes and its master. Other kinds have none.
func (t *Topology) Followers(key string, at algorithms.Time) (master int, followers []int) {
	switch {
	case t.cluster != nil:
		return t.cluster.followers(shardOf(t.cluster.first, HashSlot(key)), at)
	case t.Kind() == SplitBrain:
		return 0, []int{1}
	}
	return 0, nil
}

// ReplicatesFrom reports whether a write on copy from is sent to other
// copies: a split brain's primary, or a cluster shard's master, while a
// replica of it is on its side.
func (t *Topology) ReplicatesFrom(from int) bool {
	switch {
	case t.Kind() == SplitBrain:
		return from == 0 && (!t.partitioned || t.nodeSide[1] == t.nodeSide[0])
	case t.cluster == nil || t.cluster.replicas == 0:
		return false
	}
	return true
}

// Replicate sends key's new state st on copy from, written at time at,
// towards each of its replicas it reaches, which receive it
// ReplicationLag later, and hands save the writes due by at.
func (t *Topology) Replicate(ctx context.Context, from int, key string, st algorithms.State, at algorithms.Time, save SaveFunc) error {
	if !t.ReplicatesFrom(from) {
		return nil
	}
	reach := func(to int) {
		if !t.partitioned || t.nodeSide[to] == t.nodeSide[from] {
			t.replication.push(from, to, key, st, at)
		}
	}
	if t.cluster == nil {
		reach(1) // a split brain's replica
	} else {
		shard := t.cluster.shardOfNode(from)
		for j := range t.cluster.replicas + 1 {
			if n := t.cluster.node(shard, j); n != from {
				reach(n)
			}
		}
	}
	return t.replication.deliver(ctx, at, save)
}

// SaveFunc writes a key's state to copy to (a replica).
type SaveFunc func(ctx context.Context, to int, key string, st algorithms.State) error
