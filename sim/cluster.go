package sim

// The cluster topology in a run: the changes a partition brings each
// shard (the topology plans them, cluster.go there), logged at their
// instants, and what each shard's keys met, for the Result's Shards and
// the findings.

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/internal/words"
	"github.com/ratelim/ratelim/topology"
)

// ShardResult is what a run did to one shard of a cluster: the master
// holding a range of hash slots and its replicas. Added to v1, on a
// cluster's Result only.
type ShardResult struct {
	Shard int `json:"shard"`
	// FirstSlot and LastSlot bound the shard's hash slots.
	FirstSlot int `json:"first_slot"`
	LastSlot  int `json:"last_slot"`
	// Master is the node that held the slots at the start, EndMaster the
	// one at the end (a promoted replica after a failover).
	Master    string `json:"master"`
	EndMaster string `json:"end_master"`
	// Keys are the run's keys in the shard's slots, in the run's order.
	Keys []string `json:"keys"`
	// Events are what partitions did to it, in time order.
	Events []ShardEvent `json:"events,omitempty"`
	// TimedOut are its keys' requests that waited for a master across a
	// partition; Fenced those its master answered CLUSTERDOWN, cut off
	// from the majority; Uncovered those a node answered CLUSTERDOWN
	// while a failed master's slots had no master (full coverage). Each
	// then went to the fail policy.
	TimedOut  int64 `json:"timed_out"`
	Fenced    int64 `json:"fenced"`
	Uncovered int64 `json:"uncovered"`
	// Lost are the admissions its old master made during a partition that
	// a failover then discarded: the promoted replica never saw them.
	Lost int64 `json:"lost_admissions"`
	// Affected are its keys whose requests met a timeout or a CLUSTERDOWN,
	// each with its own counts, in the run's order of keys.
	Affected []ShardKey `json:"affected,omitempty"`
}

// ShardKey is what one key of a shard met: TimedOut, Fenced and Uncovered
// as ShardResult counts them, for its requests alone.
type ShardKey struct {
	Key       string `json:"key"`
	TimedOut  int64  `json:"timed_out,omitempty"`
	Fenced    int64  `json:"fenced,omitempty"`
	Uncovered int64  `json:"uncovered,omitempty"`
}

// ShardEvent is one change a partition brought a shard, at TS seconds:
// "fenced" (its master, cut off from the majority of masters, refuses
// every key), "failed" (the majority marked its master FAIL), "promoted"
// (Node, a replica, was elected its master), "rejoined" (its old master
// came back as the promoted replica's replica, its writes lost).
type ShardEvent struct {
	TS   float64 `json:"t_s"`
	What string  `json:"what"`
	Node string  `json:"node"`
}

// clusterRun is a cluster run's bookkeeping: the planned changes, by the
// index an evCluster event carries, and each shard's figures.
type clusterRun struct {
	planned []topology.ClusterEvent
	shards  []ShardResult
	// admitted counts each node's admissions since the partition began,
	// or since its heal: those of a master a failover replaces are lost
	// (after a heal, those it took before the election that completes
	// then; the heal copied the ones before it to its replicas).
	admitted []int64
	// rejoins are the old masters, by shard, that rejoin as replicas at
	// the heal ("" for none).
	rejoins []string
	// affected are the keys whose requests met a timeout or a
	// CLUSTERDOWN: by key, its index in its shard's Affected.
	affected map[int]int
}

// setupCluster readies a cluster run's shards.
func (s *sim) setupCluster() {
	if s.sc.Topology.Kind != Cluster {
		return
	}
	names := s.stores.names
	c := &clusterRun{admitted: make([]int64, len(names))}
	for m := range len(names) / (1 + s.sc.Topology.Replicas) {
		first, last := s.topo.ShardSlots(m)
		master, _ := s.topo.ShardCopies(m)
		node := names[master]
		c.shards = append(c.shards, ShardResult{Shard: m, FirstSlot: first, LastSlot: last, Master: node, EndMaster: node, Keys: []string{}})
		c.rejoins = append(c.rejoins, "")
	}
	for ki, k := range s.keys {
		m := s.shardOfKey(ki)
		c.shards[m].Keys = append(c.shards[m].Keys, k.name)
	}
	s.stores.cluster = c
}

// shardOfKey is key ki's shard, by the slot worked out once for it
// (keyRun.slot): it is asked at every step's end for every key sampled.
func (s *sim) shardOfKey(ki int) int { return s.topo.ShardOfSlot(int(s.keys[ki].slot)) }

// countCluster counts what request p met on a cluster: a wait for a
// master across the partition (an outage's waits are the outage's), a
// CLUSTERDOWN, or an admission on a node.
func (s *sim) countCluster(p *pending, allowed bool) {
	c := s.stores.cluster
	switch p.target {
	case topology.Unreachable:
		if s.topo.Out() || !s.topo.Partitioned() {
			return
		}
		sh := &c.shards[s.shardOfKey(p.key)]
		sh.TimedOut++
		s.affected(sh, p.key).TimedOut++
	case topology.ClusterDown:
		sh := &c.shards[s.shardOfKey(p.key)]
		if s.topo.ClusterDownFenced(p.server, int(s.keys[p.key].slot), algorithms.Time(p.t)) {
			sh.Fenced++
			s.affected(sh, p.key).Fenced++
		} else {
			sh.Uncovered++
			s.affected(sh, p.key).Uncovered++
		}
	default:
		if p.target >= 0 && allowed {
			c.admitted[p.target]++
		}
	}
}

// affected is key ki's entry in its shard's Affected, made at its first
// request that met a timeout or a CLUSTERDOWN.
func (s *sim) affected(sh *ShardResult, ki int) *ShardKey {
	c := s.stores.cluster
	i, ok := c.affected[ki]
	if !ok {
		if c.affected == nil {
			c.affected = map[int]int{}
		}
		i = len(sh.Affected)
		c.affected[ki] = i
		sh.Affected = append(sh.Affected, ShardKey{Key: s.keys[ki].name})
	}
	return &sh.Affected[i]
}

// scheduleClusterEvents schedules the changes the partition just begun
// plans for a cluster (none on another kind).
func (s *sim) scheduleClusterEvents(t int64) {
	if s.stores.cluster == nil {
		return
	}
	clear(s.stores.cluster.admitted)
	for _, ev := range s.topo.ClusterEvents() {
		s.schedule(event{at: int64(ev.At), kind: evCluster, arg: int32(len(s.stores.cluster.planned))})
		s.stores.cluster.planned = append(s.stores.cluster.planned, ev)
	}
}

// clusterEvent is planned change i falling due at t: logged and counted
// if it still happens (a heal may have cancelled it); a promotion after
// the heal is where the old master rejoins, and the shard's nodes
// resynchronise.
func (s *sim) clusterEvent(ctx context.Context, i int32, t int64) error {
	ev, ok := s.topo.ClusterEventHappens(s.stores.cluster.planned[i])
	if !ok {
		return nil
	}
	names := s.stores.names
	sh := &s.stores.cluster.shards[ev.Shard]
	node := names[ev.Node]
	switch ev.What {
	case "fenced":
		s.logf(t, "%s has not reached a majority of masters for the node timeout (%s): it answers CLUSTERDOWN for every key", node, words.Duration(s.topo.NodeTimeout().Duration()))
	case "failed":
		what := "its slots have no master until a replica is elected"
		if !s.sc.Topology.PartialCoverage {
			what += "; meanwhile the majority's nodes answer CLUSTERDOWN for every key (full coverage)"
		}
		s.logf(t, "%s is marked FAIL by the majority of masters: %s", node, what)
	case "promoted":
		old := sh.EndMaster
		lost := s.stores.cluster.admitted[slices.Index(names, old)]
		sh.Lost += lost
		since := "the partition began"
		if ev.Resync {
			since = "the heal"
		}
		s.logf(t, "%s is elected master of slots %d–%d: the %s %s %s took since %s are lost", node, sh.FirstSlot, sh.LastSlot, words.Thousands(lost), words.Plural(lost, "admission", "admissions"), old, since)
		sh.EndMaster = node
		sh.Events = append(sh.Events, ShardEvent{TS: seconds(t), What: "promoted", Node: node})
		if !ev.Resync {
			s.stores.cluster.rejoins[ev.Shard] = old // at the heal
			return nil
		}
		// Healed already: the old master rejoins as its replica now.
		sh.Events = append(sh.Events, ShardEvent{TS: seconds(t), What: "rejoined", Node: old})
		s.logf(t, "%s rejoins as %s's replica", old, node)
		return s.resyncCopies(ctx, t)
	}
	sh.Events = append(sh.Events, ShardEvent{TS: seconds(t), What: ev.What, Node: node})
	return nil
}

// healCluster logs a cluster's heal: each failed-over shard's old master
// rejoining as its replica.
func (s *sim) healCluster(t int64) {
	var rejoined []string
	for m, old := range s.stores.cluster.rejoins {
		if old == "" {
			continue
		}
		sh := &s.stores.cluster.shards[m]
		sh.Events = append(sh.Events, ShardEvent{TS: seconds(t), What: "rejoined", Node: old})
		rejoined = append(rejoined, fmt.Sprintf("%s rejoins as %s's replica", old, sh.EndMaster))
		s.stores.cluster.rejoins[m] = ""
	}
	// The heal copies each master's state to its replicas: an election
	// still to come loses only what its old master takes from now.
	clear(s.stores.cluster.admitted)
	text := "heal: every server reaches every node; each shard's replicas resynchronise from its master"
	if len(rejoined) > 0 {
		text += "; " + strings.Join(rejoined, ", ")
	}
	s.logf(t, "%s", text)
}

// shardResults are the shards as the run left them so far, for a Result:
// copies, so that a later event does not move what a Result holds.
func (s *sim) shardResults() []ShardResult {
	if s.stores.cluster == nil {
		return nil
	}
	out := slices.Clone(s.stores.cluster.shards)
	for i := range out {
		out[i].Keys = slices.Clone(out[i].Keys)
		out[i].Events = slices.Clone(out[i].Events)
		out[i].Affected = slices.Clone(out[i].Affected)
	}
	return out
}

// ClusterPartitionsSettle checks that on sc's topology, a cluster, each
// partition of faults starts once the one before it has settled: its
// failure detection (node_timeout and a second of gossip), its elections
// (up to 1.2 s and a second per replica's rank after FAIL), the undoing of
// a FAIL no replica replaced (2 × node_timeout after it) and a fenced
// master's rejoin delay after the heal (up to 5 s). A partition that
// starts before then would begin from a cluster the model has not
// settled, and is refused; i is its index in faults. Other kinds have
// nothing to settle.
func ClusterPartitionsSettle(sc Scenario, faults []Fault) (i int, err error) {
	if sc.Topology.Kind != Cluster {
		return 0, nil
	}
	nt := sc.Topology.NodeTimeout
	if nt <= 0 {
		nt = topology.DefaultNodeTimeout
	}
	var parts []int
	for i, f := range faults {
		if f.Kind == Partition {
			parts = append(parts, i)
		}
	}
	slices.SortStableFunc(parts, func(a, b int) int { return cmp.Compare(faults[a].Start, faults[b].Start) })
	for k := 1; k < len(parts); k++ {
		prev, next := faults[parts[k-1]], faults[parts[k]]
		settled := max(prev.End+5*time.Second,
			prev.Start+3*nt+time.Second,
			prev.Start+nt+2200*time.Millisecond+time.Duration(sc.Topology.Replicas)*time.Second)
		if next.Start < settled {
			return parts[k], fmt.Errorf("a partition of the cluster from %s, before the one from %s to %s has settled: its failure detection, election, FAIL's undoing and rejoin delay run until %s (want it to start at %s or later)",
				next.Start, prev.Start, prev.End, settled, settled)
		}
	}
	return 0, nil
}
