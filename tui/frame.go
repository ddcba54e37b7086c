package tui

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/ratelim/ratelim/internal/escape"
	"github.com/ratelim/ratelim/sim"
)

// The simulation runs off the UI goroutine. Update never advances a
// Player, reads a store or builds a Player: it starts a job, a tea.Cmd,
// and applies the message the job returns. One job is in flight at a
// time (Model.job), so a Player is never used by two goroutines at once;
// what is asked meanwhile (a tick, a step, a restart) waits for it.
//
// A job reads the Model it was started from and builds the next frame
// from it; the frame on screen is never written, so View reads it while
// the next is built. Snapshots are never written once returned either
// (see sim.Snapshot), and the history grows only past the end of what
// the frame on screen reads.

// run is one Player and the frame the view draws of it: what a job
// builds, a value replaced whole.
type run struct {
	sc     sim.Scenario
	player *sim.Player // used by jobs alone
	info   *runInfo
	snap   sim.Snapshot // the frame drawn; its State carries the keys the gauges show
	now    time.Duration
	done   bool
	hist   history
	rows   []series // the table's rows, clients or keys, in the order drawn
	// rowsByKey says which rows are: keys or clients; widest is the
	// most any of them sent.
	rowsByKey bool
	widest    int64
	stats     frameStats
	// verdict is what the finished run teaches, once it is done.
	verdict *verdict
}

// runInfo is what stays the same over a run, worked out once from its
// first frame.
type runInfo struct {
	copies  []string // the store copies, in the order of a key's state
	keys    []string // the limiter keys, in the order of their first clients
	members [][]int  // each key's clients, by index
	self    []int    // 0, 1, …: each client's own members
	// nameW and keyW are the widest client name and the widest key.
	nameW, keyW int
}

func newRunInfo(snap sim.Snapshot, copies []string) *runInfo {
	info := &runInfo{copies: copies, self: make([]int, len(snap.Clients))}
	index := map[string]int{}
	for ci, c := range snap.Clients {
		info.self[ci] = ci
		info.nameW = max(info.nameW, lipgloss.Width(escape.Text(c.Name))) // as shown
		k, ok := index[c.Key]
		if !ok {
			k = len(info.keys)
			index[c.Key] = k
			info.keys = append(info.keys, c.Key)
			info.members = append(info.members, nil)
			info.keyW = max(info.keyW, lipgloss.Width(escape.Text(c.Key)))
		}
		info.members[k] = append(info.members[k], ci)
	}
	return info
}

// frameStats are what the table's columns ask of every client.
type frameStats struct {
	failedOpen, failedClosed, retries bool // whether some client has
}

func statsOf(snap sim.Snapshot) frameStats {
	var s frameStats
	for _, c := range snap.Clients {
		s.failedOpen = s.failedOpen || c.Total.FailedOpen > 0
		s.failedClosed = s.failedClosed || c.Total.FailedClosed > 0
		s.retries = s.retries || c.Total.Retries > 0
	}
	return s
}

// startRun is p's first frame, with the state of keys.
func startRun(ctx context.Context, sc sim.Scenario, p *sim.Player, byKey bool, keys []string) run {
	r := run{sc: sc, player: p}
	r.snap = p.SnapshotFor(ctx, nil, 1)
	r.info = newRunInfo(r.snap, p.Copies())
	return r.take(ctx, byKey, keys)
}

// take is r's frame where its Player stands: the snapshot with the state
// of keys and the steps since the history's last (those it adds to it),
// the history grown by it, the rows.
func (r run) take(ctx context.Context, byKey bool, keys []string) run {
	r.now, r.done = r.player.Now(), r.player.Done()
	steps := int((r.sc.Duration + r.sc.Step - 1) / r.sc.Step)
	step := min(int(r.now/r.sc.Step), steps-1)
	r.snap = r.player.SnapshotFor(ctx, keys, step-r.hist.steps+1)
	r.hist = r.hist.next(r.snap, r.sc.Step.Seconds(), r.player.Result)
	r.stats = statsOf(r.snap)
	r.rows = nil
	return r.withRows(byKey)
}

// withRows is r with its rows for the view chosen, clients or keys: the
// frame's own when they are, worked out again when the viewer switched
// while the frame was taken.
func (r run) withRows(byKey bool) run {
	if r.rows != nil && r.rowsByKey == byKey {
		return r
	}
	r.rows, r.rowsByKey, r.widest = rowsOf(r.snap, r.hist, r.info, byKey), byKey, 0
	for _, s := range r.rows {
		r.widest = max(r.widest, s.total.Sent)
	}
	return r
}

// players are every Player a Model and its copies have opened and not
// closed, and the lock that gives them to one goroutine at a time: the
// job in flight, or Close.
type players struct {
	mu     sync.Mutex
	open   []*sim.Player
	closed bool // by Close: a job that starts after does nothing
}

// closeAll closes every Player still open. Closing twice is harmless.
func (ps *players) closeAll() error {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	var errs []error
	for _, p := range ps.open {
		errs = append(errs, p.Close())
	}
	ps.open, ps.closed = nil, true
	return errors.Join(errs...)
}

// swap closes old and keeps opened open, under the lock (a job's).
func (ps *players) swap(old []*sim.Player, opened ...*sim.Player) error {
	var errs []error
	for _, p := range old {
		if i := slices.Index(ps.open, p); i >= 0 {
			ps.open = slices.Delete(ps.open, i, i+1)
			errs = append(errs, p.Close())
		}
	}
	ps.open = append(ps.open, opened...)
	return errors.Join(errs...)
}

// closedMsg is what a job started after Close returns: nothing done.
type closedMsg struct{}

// frameMsg is a frame a job played: both runs side by side.
type frameMsg struct {
	a          run
	b          *versusRun
	errA, errB error
}

// stateMsg is the state of the keys the gauges show, read again when they
// changed without a frame (a selection moved while paused).
type stateMsg struct {
	keys []string
	a, b []sim.StateNow
}

// restartMsg is a restart a job made: the new runs, or why not.
type restartMsg struct {
	req      restartReq
	a        run
	b        *versusRun
	err      error // the new run's: nothing changed
	errB     error // the new B run's: nothing changed
	closeErr error // the previous runs' stores
}

// restartReq is a restart asked for: what to play and what to log.
type restartReq struct {
	sc       sim.Scenario
	what     string
	pristine bool
	// alg and topo say that a or t asked for it: refused, the next
	// press moves on from it.
	alg, topo bool
}

// frameJob plays both runs to m.clock and takes their frames.
func (m Model) frameJob() tea.Cmd {
	ctx, a, vs, until := m.ctx, m.run, m.vs, m.clock
	byKey, keys, ps := m.byKey, m.loaded, m.players
	return func() tea.Msg {
		ps.mu.Lock()
		defer ps.mu.Unlock()
		if ps.closed {
			return closedMsg{}
		}
		var msg frameMsg
		msg.errA = a.player.Advance(ctx, until)
		msg.a = a.take(ctx, byKey, keys)
		if vs != nil {
			b := *vs
			msg.errB = b.player.Advance(ctx, min(until, b.sc.Duration))
			b.run = b.take(ctx, byKey, keys)
			msg.b = &b
		}
		return msg
	}
}

// verdictMsg is the verdicts of runs played to their end (verdictJob),
// each for the Player it was found in: a restart in between leaves them
// unused.
type verdictMsg struct {
	a, b       *verdict
	forA, forB *sim.Player
}

// verdictDue reports whether the runs have ended with no verdict yet.
func (m Model) verdictDue() bool {
	return m.err == nil && m.done && (m.verdict == nil || (m.vs != nil && m.vs.verdict == nil))
}

// verdictJob finds what the ended runs teach: a job of its own, not the
// last frame's, since it assembles each whole Result (150 ms at 10,000
// clients) where a frame reads a snapshot. The last frame is drawn
// first; the verdict follows it.
func (m Model) verdictJob() tea.Cmd {
	a, vs, expect, pristine, ps := m.run, m.vs, m.expect, m.pristine, m.players
	return func() tea.Msg {
		ps.mu.Lock()
		defer ps.mu.Unlock()
		if ps.closed {
			return closedMsg{}
		}
		msg := verdictMsg{forA: a.player}
		if a.verdict == nil {
			msg.a = newVerdict(a.player.Result(), expect, pristine)
		}
		if vs != nil && vs.verdict == nil {
			// The file's expectations are for the scenario as written:
			// the first run's.
			msg.b, msg.forB = newVerdict(vs.player.Result(), nil, false), vs.player
		}
		return msg
	}
}

// stateJob reads the state of keys in both runs.
func (m Model) stateJob(keys []string) tea.Cmd {
	ctx, pa, ps := m.ctx, m.player, m.players
	var pb *sim.Player
	if m.vs != nil {
		pb = m.vs.player
	}
	return func() tea.Msg {
		ps.mu.Lock()
		defer ps.mu.Unlock()
		if ps.closed {
			return closedMsg{}
		}
		msg := stateMsg{keys: keys, a: pa.State(ctx, keys)}
		if pb != nil {
			msg.b = pb.State(ctx, keys)
		}
		return msg
	}
}

// restartJob plays req from t=0 in new Players, with the state of the
// keys shown now, and closes the previous ones; a scenario the simulator
// refuses leaves them as they were.
func (m Model) restartJob(req restartReq) tea.Cmd {
	ctx, opts, ps, byKey, keys := m.ctx, m.simOpts, m.players, m.byKey, m.loaded
	old := []*sim.Player{m.player}
	var vs *versusRun
	if m.vs != nil {
		vs = m.vs
		old = append(old, m.vs.player)
	}
	return func() tea.Msg {
		ps.mu.Lock()
		defer ps.mu.Unlock()
		if ps.closed {
			return closedMsg{}
		}
		msg := restartMsg{req: req}
		p, err := sim.NewPlayer(ctx, req.sc, opts)
		if err != nil {
			msg.err = err
			return msg
		}
		opened := []*sim.Player{p}
		if vs != nil {
			msg.b, err = newVersus(ctx, vs.sc, opts, vs.labels, byKey, keys)
			if err != nil {
				msg.errB = errors.Join(err, p.Close())
				return msg
			}
			opened = append(opened, msg.b.player)
		}
		msg.closeErr = ps.swap(old, opened...)
		msg.a = startRun(ctx, req.sc, p, byKey, keys)
		return msg
	}
}
