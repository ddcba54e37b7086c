package sim

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/internal/words"
	"github.com/ratelim/ratelim/topology"
)

// Partition cuts the servers outside Groups[0] off from the primary
// store: on a shared or racy store their calls fail and the fail policy
// decides; on a split brain they fail over to the replica. At its end the
// partition heals: the replica resynchronises from the primary.
const Partition FaultKind = "partition"

var partitionFault = FaultType{
	Kind:   Partition,
	Fields: []FaultField{required("groups", "a partition splits the servers into groups", "groups: [[0, 1], [2, 3]]")},
	Shade:  ShadeYellow,
	check:  checkPartition,
	span:   partitionSpan,
	log: func(f Fault) string {
		return fmt.Sprintf(": servers %v keep the primary, the rest are cut off", f.Groups[0])
	},
	banner: partitionBanner,
	start:  startPartition,
	end: func(ctx context.Context, s *sim, f Fault, t int64) error {
		// Heal: the replica's writes during the partition are lost; it
		// resynchronises from the primary and everyone is back on it.
		return s.topo.PartitionEnds(func() error { return s.resyncReplica(ctx, t) })
	},
}

// checkPartition: at least two groups, none empty, every server in
// exactly one.
func checkPartition(f Fault, at string, servers int) *FaultError {
	if len(f.Groups) < 2 {
		return &FaultError{Field: "groups", Msg: fmt.Sprintf("%d group is no partition (want at least two groups, e.g. [[0, 1], [2, 3]])", len(f.Groups))}
	}
	seen := map[int]string{} // server → the group that has it
	for i, g := range f.Groups {
		field := fmt.Sprintf("groups[%d]", i)
		if err := checkServers(g, at, field, servers, seen); err != nil {
			return err
		}
		if len(g) == 0 {
			return &FaultError{Field: field, Msg: "empty group (want at least one server, e.g. [0])"}
		}
	}
	var missing []string
	for s := range servers {
		if _, ok := seen[s]; !ok {
			missing = append(missing, strconv.Itoa(s))
		}
	}
	if len(missing) == 0 {
		return nil
	}
	noun := "server " + missing[0] + " is"
	if len(missing) > 1 {
		noun = "servers " + strings.Replace(words.OneOf(missing), " or ", " and ", 1) + " are"
	}
	return &FaultError{Field: "groups", Msg: fmt.Sprintf("%s in no group (want every server from 0 to %d in exactly one group)", noun, servers-1)}
}

// partitionSpan is "groups 0,1 | 2,3".
func partitionSpan(f Fault) string {
	var parts []string
	for _, g := range f.Groups {
		parts = append(parts, strings.Trim(strings.Join(strings.Fields(fmt.Sprint(g)), ","), "[]"))
	}
	return "groups " + strings.Join(parts, " | ")
}

func startPartition(ctx context.Context, s *sim, i int, t int64) error {
	f := s.sc.Faults[i]
	keep := f.Keep()
	replicated := s.topo.Replicates()
	// What had reached the replica is all it will have: writes still
	// in flight are lost with the link.
	if err := s.topo.PartitionStarts(ctx, algorithms.Time(t), keep, s.route.SaveReplica); err != nil {
		return err
	}
	if replicated {
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
	topo := partitioned(sc, f)
	keep, cut := partitionSides(topo, sc.Servers)
	primary, other := "store", "cut off, "+failing(sc)
	if sc.Topology.Kind == SplitBrain {
		primary, other = "primary", "replica"
		if at, ok := topo.FailoverAt(); !ok {
			other = fmt.Sprintf("cut off, %s: no failover", failing(sc))
		} else if failover := f.Start + at.Duration(); now < failover {
			other = fmt.Sprintf("cut off, %s until failover at %s", failing(sc), bannerSecs(failover))
		}
	}
	if stops, ok := topo.IsolatedPrimaryStopsAt(); ok && now >= f.Start+stops.Duration() {
		primary += " (stopped taking writes, " + failing(sc) + ")"
	}
	text := "PARTITION: " + serverList(keep) + " → " + primary
	if len(cut) > 0 {
		text += ", " + strings.TrimPrefix(strings.TrimPrefix(serverList(cut), "servers "), "server ") + " → " + other
	}
	return text
}

// partitioned is sc's topology with partition f in force, built as the
// simulator builds it (setupStores). The partition starts at the
// topology's instant 0: the instants it answers (FailoverAt,
// IsolatedPrimaryStopsAt) are offsets from f.Start, which keeps the
// banner in time.Duration.
func partitioned(sc Scenario, f Fault) *topology.Topology {
	topo := NewTopology(sc)
	keep := f.Keep()
	// With no replica to save to, starting a partition cannot fail.
	_ = topo.PartitionStarts(context.Background(), 0, keep, nil)
	return topo
}

// partitionSides are the servers that keep the primary and those cut off
// from it, in order, as topo's partition in force splits them.
func partitionSides(topo *topology.Topology, servers int) (keep, cut []int) {
	for s := range servers {
		if topo.CutOff(s) {
			cut = append(cut, s)
		} else {
			keep = append(keep, s)
		}
	}
	return keep, cut
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

// Keep are the servers a partition leaves on the primary's side: its
// first group (none for a fault without groups).
func (f Fault) Keep() []int {
	if len(f.Groups) > 0 {
		return f.Groups[0]
	}
	return nil
}
