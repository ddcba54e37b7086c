package sim

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/internal/words"
	"github.com/ratelim/ratelim/topology"
)

// Partition splits the fleet into sides, Groups of API servers and the
// store's Nodes on each (topology.Partition), each side reaching only
// what is on it. With no nodes given, the store is with Groups[0] (a
// split brain's replica with Groups[1]): on a shared or racy store the
// other servers' calls fail and the fail policy decides; on a split brain
// those with the replica fail over to it; on a cluster each shard's keys
// go where its master is, and a side with the majority of masters fails
// over the others (cluster.go). At its end the partition heals: the
// copies that followed another resynchronise from it.
const Partition FaultKind = "partition"

var partitionFault = FaultType{
	Kind: Partition,
	Fields: []FaultField{required("groups", "a partition splits the servers into groups", "groups: [[0, 1], [2, 3]]"),
		{Name: "nodes", Empty: "empty list of sides (want a list of store nodes per group, e.g. [[s0-master], [s1-master, s2-master]], or no nodes field)"}},
	Shade:  ShadeYellow,
	check:  checkPartition,
	span:   partitionSpan,
	log:    partitionLog,
	banner: partitionBanner,
	start:  startPartition,
	end: func(ctx context.Context, s *sim, f Fault, t int64) error {
		// Heal: the copies that followed another during the partition
		// lose their writes and resynchronise from it.
		return s.topo.PartitionEnds(algorithms.Time(t), func() error { return s.resyncReplica(ctx, t) })
	},
}

// checkPartition: at least two groups, every server in exactly one; a
// group empty of servers only if it has store nodes (a master alone on
// its side); nodes, if given, a list per group of the store's nodes by
// name, each in one group at most.
func checkPartition(f Fault, at string, servers int, nodes []string) *FaultError {
	if len(f.Groups) < 2 {
		return &FaultError{Field: "groups", Msg: fmt.Sprintf("%d group is no partition (want at least two groups, e.g. [[0, 1], [2, 3]])", len(f.Groups))}
	}
	if len(f.Nodes) > len(f.Groups) {
		return &FaultError{Field: "nodes", Msg: fmt.Sprintf("%d sides of nodes for %d groups of servers (want a list of nodes per group, in the groups' order)", len(f.Nodes), len(f.Groups))}
	}
	seen := map[int]string{} // server → the group that has it
	for i, g := range f.Groups {
		field := fmt.Sprintf("groups[%d]", i)
		if err := checkServers(g, at, field, servers, seen); err != nil {
			return err
		}
		if len(g) == 0 && (i >= len(f.Nodes) || len(f.Nodes[i]) == 0) {
			return &FaultError{Field: field, Msg: "empty group (want at least one server, e.g. [0], or store nodes on its side in nodes)"}
		}
	}
	if err := checkNodes(f, at, nodes); err != nil {
		return err
	}
	// The servers in no group, runs of three or more as "3–1023".
	var missing []string
	count := 0
	for s := 0; s < servers; s++ {
		if _, ok := seen[s]; ok {
			continue
		}
		end := s
		for end+1 < servers {
			if _, ok := seen[end+1]; ok {
				break
			}
			end++
		}
		count += end - s + 1
		switch {
		case end-s >= 2:
			missing = append(missing, fmt.Sprintf("%d–%d", s, end))
		case end > s:
			missing = append(missing, strconv.Itoa(s), strconv.Itoa(end))
		default:
			missing = append(missing, strconv.Itoa(s))
		}
		s = end
	}
	if count == 0 {
		return nil
	}
	noun := "server " + missing[0] + " is"
	if count > 1 {
		noun = "servers " + strings.Replace(words.OneOf(missing), " or ", " and ", 1) + " are"
	}
	return &FaultError{Field: "groups", Msg: fmt.Sprintf("%s in no group (want every server from 0 to %d in exactly one group)", noun, servers-1)}
}

// checkNodes checks a partition's nodes against the store's (nil: not
// checked): each a node of it, in one group at most. at is the fault's
// path.
func checkNodes(f Fault, at string, nodes []string) *FaultError {
	if nodes == nil {
		return nil
	}
	owner := map[string]string{}
	for i, side := range f.Nodes {
		for j, name := range side {
			field := fmt.Sprintf("nodes[%d][%d]", i, j)
			if !slices.Contains(nodes, name) {
				want := words.OneOf(nodes)
				if len(nodes) > 8 {
					want = fmt.Sprintf("one of the store's %d nodes: %s, %s, …, %s", len(nodes), nodes[0], nodes[1], nodes[len(nodes)-1])
				}
				return &FaultError{Field: field, Msg: fmt.Sprintf("%s (want %s)", unknownNode(name), want)}
			}
			if prev, dup := owner[name]; dup {
				return &FaultError{Field: field, Msg: fmt.Sprintf("%s is already in %s (want each node on one side only)", name, joinPath(at, prev))}
			}
			owner[name] = field
		}
	}
	return nil
}

// unknownNode says a node name is not one of the store's, quoted as
// input.
func unknownNode(name string) string { return fmt.Sprintf("no store node is called %q", name) }

// partitionSpan is "groups 0,1 | 2,3", and with nodes "groups 0,1 +
// s0-master | 2,3 + 5 nodes".
func partitionSpan(f Fault) string {
	var parts []string
	for i, g := range f.Groups {
		part := strings.Trim(strings.Join(strings.Fields(fmt.Sprint(g)), ","), "[]")
		if i < len(f.Nodes) && len(f.Nodes[i]) > 0 {
			nodes := f.Nodes[i][0]
			if len(f.Nodes[i]) > 1 {
				nodes = fmt.Sprintf("%d nodes", len(f.Nodes[i]))
			}
			part = strings.TrimSpace(part + " + " + nodes)
		}
		parts = append(parts, part)
	}
	return "groups " + strings.Join(parts, " | ")
}

func startPartition(ctx context.Context, s *sim, i int, t int64) error {
	f := s.sc.Faults[i]
	replicated := s.topo.ReplicatesFrom(0)
	// What had reached a replica across the cut is all it will have:
	// writes still in flight are lost with the link. The draws are the
	// cluster's gossip and election jitter (no other kind draws).
	draw := s.rng.Int64N
	if s.faults.jitter != nil {
		draw = s.faults.jitter
	}
	if err := s.topo.PartitionStarts(ctx, algorithms.Time(t), f.Partition(), draw, s.route.SaveCopy); err != nil {
		return err
	}
	s.scheduleClusterEvents(t)
	if replicated && s.sc.Topology.Kind == SplitBrain {
		if failover, ok := s.topo.FailoverAt(); ok {
			s.schedule(event{at: int64(failover), kind: evLog, arg: int32(len(s.faults.notes))})
			s.faults.notes = append(s.faults.notes, "failover: the replica is promoted for the cut-off servers")
		}
		if stops, ok := s.topo.IsolatedPrimaryStopsAt(); ok {
			s.schedule(event{at: int64(stops), kind: evLog, arg: int32(len(s.faults.notes))})
			s.faults.notes = append(s.faults.notes, "the isolated primary stops taking writes")
		}
	}
	return nil
}

// partitionBanner says which servers reach which copy, asking the
// topology who is cut off and when rather than repeating its rules.
func partitionBanner(sc Scenario, f Fault, now time.Duration) string {
	if sc.Topology.Kind == Local {
		return "PARTITION: no effect, each server has its own jar"
	}
	if sc.Topology.Kind == Cluster {
		return clusterBanner(sc, f)
	}
	topo := partitioned(sc, f)
	keep, replica, none := partitionSides(topo, sc.Servers)
	primary, other := "store", "cut off, "+failing(sc)
	if sc.Topology.Kind == SplitBrain {
		primary = "primary"
	}
	promoted := "replica"
	if at, ok := topo.FailoverAt(); !ok {
		promoted = fmt.Sprintf("cut off, %s: no failover", failing(sc))
	} else if failover := f.Start + at.Duration(); now < failover {
		promoted = fmt.Sprintf("cut off, %s until failover at %s", failing(sc), bannerSecs(failover))
	}
	if stops, ok := topo.IsolatedPrimaryStopsAt(); ok && now >= f.Start+stops.Duration() {
		primary += " (stopped taking writes, " + failing(sc) + ")"
	}
	var sides []string
	for _, side := range []struct {
		servers []int
		copy    string
	}{{keep, primary}, {replica, promoted}, {none, other}} {
		if len(side.servers) == 0 {
			continue
		}
		list := serverList(side.servers)
		if len(sides) > 0 {
			list = strings.TrimPrefix(strings.TrimPrefix(list, "servers "), "server ")
		}
		sides = append(sides, list+" → "+side.copy)
	}
	if len(keep) == 0 {
		sides = append([]string{"no server → " + primary}, sides...)
	}
	return "PARTITION: " + strings.Join(sides, ", ")
}

// clusterBanner says which servers are with which masters, and which
// side has the majority of them (the one that fails the others over).
func clusterBanner(sc Scenario, f Fault) string {
	topo := partitioned(sc, f)
	names := topo.Copies()
	var sides []string
	for side, g := range f.Groups {
		if len(g) == 0 {
			continue
		}
		var masters []string
		for m := range len(names) / (1 + sc.Topology.Replicas) {
			if master, _ := topo.ShardCopies(m); topo.NodeSide(master) == side {
				masters = append(masters, names[master])
			}
		}
		with := "no master"
		if len(masters) > 0 {
			with = strings.Join(masters, ", ")
		}
		list := serverList(g)
		if len(sides) > 0 {
			list = strings.TrimPrefix(strings.TrimPrefix(list, "servers "), "server ")
		}
		sides = append(sides, list+" + "+with)
	}
	return "PARTITION: " + strings.Join(sides, " | ")
}

// partitioned is sc's topology with partition f in force, built as the
// simulator builds it (setupStores). The partition starts at the
// topology's instant 0: the instants it answers (FailoverAt,
// IsolatedPrimaryStopsAt) are offsets from f.Start, which keeps the
// banner in time.Duration.
func partitioned(sc Scenario, f Fault) *topology.Topology {
	topo := NewTopology(sc)
	// With no replica to save to, starting a partition cannot fail.
	_ = topo.PartitionStarts(context.Background(), 0, f.Partition(), nil, nil)
	return topo
}

// partitionSides are the servers that keep the primary, those that fail
// over to a split brain's replica, and those that reach no copy, in
// order, as topo's partition in force splits them.
func partitionSides(topo *topology.Topology, servers int) (keep, replica, none []int) {
	for s := range servers {
		switch {
		case !topo.CutOff(s):
			keep = append(keep, s)
		case topo.ReachesReplica(s):
			replica = append(replica, s)
		default:
			none = append(none, s)
		}
	}
	return keep, replica, none
}

// serverList is "server 1" or "servers 0,1".
func serverList(servers []int) string {
	parts := make([]string, len(servers))
	for i, s := range servers {
		parts[i] = strconv.Itoa(s)
	}
	if len(parts) == 1 {
		return "server " + parts[0]
	}
	return "servers " + strings.Join(parts, ",")
}

// Partition is the split partition fault f makes, as the topology takes
// it.
func (f Fault) Partition() topology.Partition {
	return topology.Partition{Groups: f.Groups, Nodes: f.Nodes}
}

// partitionLog is the log's detail of a partition: who keeps the store,
// and where the nodes are when given.
func partitionLog(f Fault) string {
	if len(f.Nodes) == 0 {
		return fmt.Sprintf(": servers %v keep the primary, the rest are cut off", f.Groups[0])
	}
	var sides []string
	for i, g := range f.Groups {
		side := fmt.Sprintf("servers %v", g)
		if i < len(f.Nodes) && len(f.Nodes[i]) > 0 {
			side += " with " + strings.Join(f.Nodes[i], ", ")
		}
		sides = append(sides, side)
	}
	return ": " + strings.Join(sides, " | ")
}
