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
)

// Kinds are the topologies there are, in the order they are taught (and
// listed, cycled and checked by the parser, the TUI and the simulator):
// the one list of them.
func Kinds() []Kind { return []Kind{Local, Shared, Racy, SplitBrain} }

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
}

// CopyCount is how many copies of the state a topology of kind keeps for
// servers API servers: a jar each on local, a primary and a replica on a
// split brain, else one.
func CopyCount(kind Kind, servers int) int {
	switch kind {
	case Local:
		return max(servers, 1)
	case SplitBrain:
		return 2
	}
	return 1
}

// CopyNames names the copies of the state a topology of kind keeps for
// servers API servers, in the order [Topology.Route] numbers them: one jar
// per server ("server-0", …), "primary" and "replica", or "shared".
func CopyNames(kind Kind, servers int) []string {
	switch kind {
	case Local:
		names := make([]string, CopyCount(kind, servers))
		for i := range names {
			names[i] = fmt.Sprintf("server-%d", i)
		}
		return names
	case SplitBrain:
		return []string{"primary", "replica"}
	}
	return []string{"shared"}
}

// Topology is the routing state of one run or one fleet: which faults are
// on, and for a split brain, the writes on their way to the replica. Its
// zero value is a shared store that every server reaches; New sets it up.
type Topology struct {
	cfg     Config
	outages int // outages in force: they can overlap
	// The partition in force, if any: when it began, and the servers it
	// cut off from the primary.
	partitioned    bool
	partitionStart algorithms.Time
	cutOff         []bool
	replication    replicator
}

// New returns the topology cfg describes, with no fault in force.
func New(cfg Config) *Topology {
	cfg.Servers = max(cfg.Servers, 1)
	t := &Topology{cfg: cfg, cutOff: make([]bool, cfg.Servers)}
	t.replication.on = cfg.Kind == SplitBrain
	t.replication.lag = algorithms.At(cfg.ReplicationLag)
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
func (t *Topology) Copies() []string { return CopyNames(t.Kind(), t.cfg.Servers) }

// Remote reports whether a server reaches its copy over the network, where
// round trips, outages and partitions reach it: every kind but local jars.
func (t *Topology) Remote() bool { return t.Kind() != Local }

// Route is the copy server decides on at time at, or Unreachable.
//
// A local jar is in the server's own memory: nothing takes it away. A
// remote store is unreachable during an outage. During a partition the
// servers of its first group keep the primary (the shared store), until
// PrimaryStopsAfter when an isolated primary stops taking writes; the
// others are cut off, and on a split brain they fail over to the replica
// FailoverAfter the partition began.
func (t *Topology) Route(server int, at algorithms.Time) int {
	if t.Kind() == Local {
		return server
	}
	if t.outages > 0 {
		return Unreachable
	}
	if !t.partitioned {
		return 0
	}
	if !t.CutOff(server) {
		if stops := t.cfg.PrimaryStopsAfter; stops >= 0 && at >= t.partitionStart+algorithms.At(stops) {
			return Unreachable
		}
		return 0
	}
	if failover, ok := t.FailoverAt(); t.Kind() != SplitBrain || !ok || at < failover {
		return Unreachable
	}
	return 1
}

// OutageStarts takes the remote store away until the matching OutageEnds.
func (t *Topology) OutageStarts() { t.outages++ }

// OutageEnds ends one outage.
func (t *Topology) OutageEnds() { t.outages = max(t.outages-1, 0) }

// PartitionStarts cuts every server not in keep off from the primary at
// time at. On a split brain, the writes already due reach the replica
// (through save) and those still in flight are lost with the link; the
// replica takes no more until the partition heals.
func (t *Topology) PartitionStarts(ctx context.Context, at algorithms.Time, keep []int, save SaveFunc) error {
	t.partitioned, t.partitionStart = true, at
	for i := range t.cutOff {
		t.cutOff[i] = true
	}
	for _, s := range keep {
		if s >= 0 && s < len(t.cutOff) {
			t.cutOff[s] = false
		}
	}
	if !t.replication.on {
		return nil
	}
	err := t.replication.deliver(ctx, at, save)
	t.replication.drop()
	t.replication.on = false
	return err
}

// CutOff reports whether the partition in force has cut server off from
// the primary: it is not in the partition's first group. With no
// partition in force, or for a server the topology does not have, it
// reports false. Being cut off is not where a server decides: local jars
// ignore a partition, and on a split brain a cut-off server reaches the
// replica after failover; see Route.
func (t *Topology) CutOff(server int) bool {
	return t.partitioned && server >= 0 && server < len(t.cutOff) && t.cutOff[server]
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

// PartitionEnds heals the partition: every server is back on the primary.
// On a split brain the replica's writes during the partition are lost: it
// resynchronises from the primary (resync copies each key's state across)
// and replication resumes.
func (t *Topology) PartitionEnds(resync func() error) error {
	t.partitioned = false
	for i := range t.cutOff {
		t.cutOff[i] = false
	}
	if t.Kind() != SplitBrain {
		return nil
	}
	t.replication.on = true
	if resync == nil {
		return nil
	}
	return resync()
}

// Partitioned reports whether a partition is in force.
func (t *Topology) Partitioned() bool { return t.partitioned }

// Replicates reports whether a decision on the primary must be sent to the
// replica: a split brain whose link is up.
func (t *Topology) Replicates() bool { return t.replication.on }

// Replicate sends key's new primary state st, written at time at, towards
// the replica, which receives it ReplicationLag later, and hands save the
// writes due by at.
func (t *Topology) Replicate(ctx context.Context, key string, st algorithms.State, at algorithms.Time, save SaveFunc) error {
	if !t.replication.on {
		return nil
	}
	t.replication.push(key, st, at)
	return t.replication.deliver(ctx, at, save)
}

// SaveFunc writes a key's state to the replica.
type SaveFunc func(ctx context.Context, key string, st algorithms.State) error
