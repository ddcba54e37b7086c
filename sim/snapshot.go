package sim

import (
	"context"
	"fmt"
	"slices"

	"github.com/ratelim/ratelim/algorithms"
)

// Snapshot is where a run stands at one virtual instant: what a live view
// draws. The run goes on without it.
//
// A Snapshot is never written once returned: the Player writes only to
// memory no Snapshot it has returned can reach, so an old Snapshot may be
// held, and read from another goroutine, while the run goes on. Successive
// Snapshots share what did not change between them (a quiet client's
// figures and last steps, the log's entries), so a caller must not write
// to one either: copy a slice before changing it.
type Snapshot struct {
	TS      float64 // virtual seconds reached
	Step    int     // the step in progress
	Clients []ClientSnapshot
	// State is each key's remaining capacity in each store copy, now:
	// every key, in the run's order of keys (by first client), each key's
	// copies in the order Player.Copies names them (on a cluster, its
	// shard's nodes alone). SnapshotFor carries the keys asked for alone.
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

// SnapshotFor is Snapshot as a live view that keeps its own history asks
// for it: State for the named keys alone, in the order Snapshot lists
// them (a name that is not one of the run's keys is skipped, and nil asks
// for none), and each client's Recent its last recent steps, the step in
// progress the last of them (recent from 1 to the 60 Snapshot carries;
// out of that range, 60). A view that shows a few keys of many reads only
// those, and one that has the steps before its previous frame asks for
// the steps since: on a Redis store reading a key is a round trip per
// copy, and once a step ends every client's Recent is new, its rows
// copied. Everything else is Snapshot's.
func (p *Player) SnapshotFor(ctx context.Context, keys []string, recent int) Snapshot {
	if recent < 1 || recent > recentSteps {
		recent = recentSteps
	}
	snap := p.s.snapshotClients(recent)
	snap.State = p.s.stateOf(ctx, p.s.keyIndexes(keys))
	return snap
}

// State is the named keys' capacity left in each store copy, now: what
// SnapshotFor(ctx, keys, …) carries in its State, without the rest.
func (p *Player) State(ctx context.Context, keys []string) []StateNow {
	return p.s.stateOf(ctx, p.s.keyIndexes(keys))
}

// Copies names the store copies of a Snapshot's State, in its order:
// "shared"; "primary" and "replica"; "server-0", "server-1", … for the
// jars of a local topology.
func (p *Player) Copies() []string { return slices.Clone(p.s.stores.names) }

func (s *sim) logf(t int64, format string, args ...any) {
	s.log = append(s.log, LogEntry{TS: seconds(t), Text: fmt.Sprintf(format, args...)})
}

// snapshots is what the previous Snapshot built, for the next to start
// from, so that a Snapshot costs what changed since: the clients that had
// a request, and every client's last steps once a step has ended (or the
// steps asked for are not the previous Snapshot's); not the run so far.
// Its clients are shared with the Snapshot returned and never written
// again: each Snapshot that changes one gets a new slice.
type snapshots struct {
	taken bool
	// ended is how many steps had ended at the previous Snapshot (their
	// rows are final: nothing that happens later falls in them), and
	// first the first step its Recent carried.
	ended, first int
	clients      []ClientSnapshot
	// sent is each client's Sent then: every request adds to it, so a
	// client whose Sent has not moved has had none since.
	sent     []int64
	keyIndex map[string]int // key name → index in sim.keys
}

func (s *sim) snapshot(ctx context.Context) Snapshot {
	snap := s.snapshotClients(recentSteps)
	all := make([]int, len(s.keys))
	for i := range all {
		all[i] = i
	}
	snap.State = s.stateOf(ctx, all)
	return snap
}

// snapshotClients is the Snapshot without its State, with the last recent
// steps of each client.
func (s *sim) snapshotClients(recent int) Snapshot {
	step := min(int(s.clock.now/s.clock.stepLen), s.steps()-1)
	// The log is only ever appended to: the entries so far are the
	// Snapshot's, capped so that appending to it copies them.
	log := s.log[:len(s.log):len(s.log)]
	snap := Snapshot{TS: seconds(s.clock.now), Step: step, Clients: s.clientSnapshots(step, recent), Log: log}
	for i, f := range s.sc.Faults {
		if s.clock.now >= int64(algorithms.At(f.Start)) && s.clock.now < int64(algorithms.At(f.End)) {
			snap.Active = append(snap.Active, s.faults.spans[i])
		}
	}
	return snap
}

// clientSnapshots are each client's totals and last recent steps, step in
// progress: only what a frame draws, not the whole Result (at 10,000
// clients, every step of every one). A client is rebuilt when it had a
// request since the previous Snapshot, or its last steps moved on (a step
// has ended, or other steps are asked for); its rows of steps that had
// ended then are taken from the previous Snapshot, the others from the
// recorder.
func (s *sim) clientSnapshots(step, recent int) []ClientSnapshot {
	c := &s.snaps
	ended := s.clock.stepsClosed // the rows of closed steps are final
	if !c.taken {
		c.clients = make([]ClientSnapshot, len(s.clients))
		c.sent = make([]int64, len(s.clients))
	}
	first := max(0, step-recent+1)
	moved := !c.taken || ended != c.ended || first != c.first
	var dirty []int
	for ci, cr := range s.clients {
		if moved || cr.total.Sent != c.sent[ci] {
			dirty = append(dirty, ci)
		}
	}
	if len(dirty) == 0 {
		return c.clients
	}
	out := slices.Clone(c.clients)
	// One allocation for every rebuilt client's rows, each capped to its
	// own so that appending to one cannot write over the next.
	w := step - first + 1
	rows := make([]TimelineRow, len(dirty)*w)
	for i, ci := range dirty {
		cr := s.clients[ci]
		cs := &out[ci]
		if !c.taken || cr.total.Sent != c.sent[ci] {
			cs.Total = s.clientResult(cr)
			cs.Name, cs.Key = cs.Total.Name, cs.Total.Key
			c.sent[ci] = cr.total.Sent
		}
		win := rows[i*w : (i+1)*w : (i+1)*w]
		// The steps of the previous Recent that had ended then are as
		// they are now: from lo to hi.
		lo, hi := first, first
		if c.taken {
			lo, hi = max(first, c.first), min(c.ended, step+1)
		}
		if lo < hi {
			hi = lo + copy(win[lo-first:hi-first], c.clients[ci].Recent[lo-c.first:])
		}
		// The others from the recorder: an empty row where it has none.
		for st := first; st <= step; st++ {
			if st < lo || st >= hi {
				win[st-first] = assembledRow(TimelineRow{}, st, cr, s.clock.stepLen)
			}
		}
		s.rec.timeline.each(ci, first, func(st int, row *TimelineRow) {
			if st <= step && (st < lo || st >= hi) {
				win[st-first] = assembledRow(*row, st, cr, s.clock.stepLen)
			}
		})
		cs.Recent = win
	}
	c.taken, c.ended, c.first, c.clients = true, ended, first, out
	return out
}

// keyIndexes are the indexes in s.keys of the named keys, in s.keys's
// order, the unknown ones left out.
func (s *sim) keyIndexes(names []string) []int {
	if len(names) == 0 {
		return nil
	}
	c := &s.snaps
	if c.keyIndex == nil {
		c.keyIndex = make(map[string]int, len(s.keys))
		for i, k := range s.keys {
			c.keyIndex[k.name] = i
		}
	}
	var out []int
	for _, n := range names {
		if i, ok := c.keyIndex[n]; ok {
			out = append(out, i)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// stateOf is the state now of the keys at indexes in s.keys, each in every
// store copy that may hold it.
func (s *sim) stateOf(ctx context.Context, keys []int) []StateNow {
	var out []StateNow
	for _, ki := range keys {
		k := s.keys[ki]
		first, n := s.copiesOfKey(ki)
		for i := first; i < first+n; i++ {
			st, err := s.stores.copies[i].Load(ctx, k.name)
			now := StateNow{Key: k.name, Copy: s.stores.names[i], Remaining: -1}
			if err == nil {
				_, d := s.alg.Step(st, algorithms.Time(s.clock.now), 0)
				now.Remaining, now.Limit = d.Remaining, d.Limit
			}
			out = append(out, now)
		}
	}
	return out
}
