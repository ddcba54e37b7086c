package sim

import (
	"context"

	"github.com/ratelim/ratelim/algorithms"
)

// SnapshotFromScratch is p's Snapshot built from nothing, as Snapshot was
// before it kept anything between calls: the oracle the incremental one
// is checked against (snapshot_test.go).
func SnapshotFromScratch(p *Player) Snapshot {
	s := p.s
	step := min(int(s.clock.now/s.clock.stepLen), s.steps()-1)
	snap := Snapshot{TS: seconds(s.clock.now), Step: step, Log: append([]LogEntry(nil), s.log...)}
	first := max(0, step-recentSteps+1)
	snap.Clients = make([]ClientSnapshot, len(s.clients))
	for ci, c := range s.clients {
		total := s.clientResult(c)
		cs := ClientSnapshot{Name: total.Name, Key: total.Key, Total: total, Recent: make([]TimelineRow, 0, step-first+1)}
		for st := first; st <= step; st++ {
			cs.Recent = append(cs.Recent, s.timelineRow(st, ci))
		}
		snap.Clients[ci] = cs
	}
	for _, k := range s.keys {
		for i, cp := range s.stores.copies {
			if s.sc.Topology.Kind == Cluster {
				// A cluster's key lives on its slot's shard alone.
				if m, _ := s.topo.ShardOf(k.name); i/(1+s.sc.Topology.Replicas) != m {
					continue
				}
			}
			st, err := cp.Load(context.Background(), k.name)
			now := StateNow{Key: k.name, Copy: s.stores.names[i], Remaining: -1}
			if err == nil {
				_, d := s.alg.Step(st, algorithms.Time(s.clock.now), 0)
				now.Remaining, now.Limit = d.Remaining, d.Limit
			}
			snap.State = append(snap.State, now)
		}
	}
	for i, f := range s.sc.Faults {
		if s.clock.now >= int64(algorithms.At(f.Start)) && s.clock.now < int64(algorithms.At(f.End)) {
			snap.Active = append(snap.Active, s.faults.spans[i])
		}
	}
	return snap
}

// timelineRow is client ci's figures over step: an empty row where the
// recorder has none.
func (s *sim) timelineRow(step, ci int) TimelineRow {
	row, _ := s.rec.timeline.find(step, ci)
	return assembledRow(row, step, s.clients[ci], s.clock.stepLen)
}

// find is client ci's row of step, and whether it has one.
func (t *timelineRows) find(step, ci int) (TimelineRow, bool) {
	for i := t.last[ci]; i > 0; i = t.rows.at(i).prev {
		if r := t.rows.at(i); r.step == step {
			return r.row, true
		} else if r.step < step {
			break
		}
	}
	return TimelineRow{}, false
}

// SyncedBoundOf is syncedBoundOf, for the external tests.
var SyncedBoundOf = syncedBoundOf
