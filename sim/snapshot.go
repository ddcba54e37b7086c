package sim

import (
	"context"
	"fmt"

	"github.com/ratelim/ratelim/algorithms"
)

// Snapshot is where a run stands at one virtual instant: what a live view
// draws. It is a copy; the run goes on without it.
type Snapshot struct {
	TS      float64 // virtual seconds reached
	Step    int     // the step in progress
	Clients []ClientSnapshot
	// State is each key's remaining capacity in each store copy, now.
	State []StateNow
	// Active are the faults in force.
	Active []FaultSpan
	// Log is what has happened so far, oldest first.
	Log []LogEntry
}

// ClientSnapshot is one client's figures so far and over the last steps.
type ClientSnapshot struct {
	Name  string
	Key   string
	Total ClientResult
	// Recent are the client's counts per step, oldest first, up to and
	// including the step in progress.
	Recent []TimelineRow
}

// StateNow is one key's capacity left in one store copy.
type StateNow struct {
	Key, Copy string
	Remaining int64 // -1 when the copy cannot be read
	Limit     int64
}

// LogEntry is one thing that happened: a fault starting or ending, a
// failover, a heal, a client's first rejection.
type LogEntry struct {
	TS   float64 `json:"t_s"`
	Text string  `json:"text"`
}

// recentSteps is how many steps of history a snapshot carries per client.
const recentSteps = 60

func (s *sim) logf(t int64, format string, args ...any) {
	s.log = append(s.log, LogEntry{TS: seconds(t), Text: fmt.Sprintf(format, args...)})
}

func (s *sim) snapshot(ctx context.Context) Snapshot {
	step := min(int(s.now/s.stepLen), s.steps()-1)
	snap := Snapshot{TS: seconds(s.now), Step: step, Log: append([]LogEntry(nil), s.log...)}
	// Only what a frame draws: each client's totals and its last steps,
	// not the whole Result (at 10,000 clients, every step of every one).
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
		for i, cp := range s.copies {
			st, err := cp.Load(ctx, k.name)
			now := StateNow{Key: k.name, Copy: s.copyNames[i], Remaining: -1}
			if err == nil {
				_, d := s.alg.Step(st, algorithms.Time(s.now), 0)
				now.Remaining, now.Limit = d.Remaining, d.Limit
			}
			snap.State = append(snap.State, now)
		}
	}
	for i, f := range s.sc.Faults {
		if s.now >= int64(algorithms.At(f.Start)) && s.now < int64(algorithms.At(f.End)) {
			snap.Active = append(snap.Active, s.faultResults[i])
		}
	}
	return snap
}
