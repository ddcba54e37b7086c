package tui

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/sim"
)

// ladder is the speeds + and - step through; the last is max.
var ladder = []float64{0.1, 0.25, 0.5, 1, 2, 5, 10, 50, math.Inf(1)}

// maxFrames is about how many frames a run takes at max speed: a stride of
// duration ÷ maxFrames, or one step if that is longer.
const maxFrames = 200

// speedLabel is how the header shows a speed: 0.25×, 1×, max.
func speedLabel(speed float64) string {
	if math.IsInf(speed, 1) {
		return "max"
	}
	return strconv.FormatFloat(speed, 'g', 3, 64) + "×"
}

// faster is the next speed up the ladder from speed; slower the next down.
func faster(speed float64) float64 {
	for _, s := range ladder {
		if s > speed {
			return s
		}
	}
	return speed
}

func slower(speed float64) float64 {
	for i := len(ladder) - 1; i >= 0; i-- {
		if ladder[i] < speed {
			return ladder[i]
		}
	}
	return speed
}

// onTick plays the wall time since the previous tick, times the speed. The
// first tick only sets the clock going: the time is the tick message's, so
// that a test decides it.
func (m Model) onTick(now time.Time) Model {
	last := m.last
	m.last = now
	if m.paused || m.err != nil || m.player.Done() || last.IsZero() {
		return m
	}
	wall := min(max(now.Sub(last), 0), maxFrameGap)
	if math.IsInf(m.speed, 1) {
		stride := max(m.sc.Step, m.sc.Duration/maxFrames)
		return m.advance(ceilTo(m.clock+stride, m.sc.Step))
	}
	return m.advance(m.clock + time.Duration(float64(wall)*m.speed))
}

// ceilTo rounds d up to a multiple of step.
func ceilTo(d, step time.Duration) time.Duration {
	return (d + step - 1) / step * step
}

// advance plays up to virtual time until and takes the frame.
func (m Model) advance(until time.Duration) Model {
	m.clock = min(until, m.sc.Duration)
	if err := m.player.Advance(m.ctx, m.clock); err != nil {
		m.err = err
		m.note("the run stopped: %v", err)
	}
	m.snap = m.player.Snapshot(m.ctx)
	m.hist.update(m.snap, m.sc.Step.Seconds(), m.player.Result)
	if m.vs != nil {
		vs, err := versusTo(m.vs, m)
		m.vs = vs
		if err != nil && m.err == nil {
			m.err = err
			m.note("the B run stopped: %v", err)
		}
	}
	if m.player.Done() && m.verdict == nil && m.err == nil {
		m.verdict = newVerdict(m.player.Result(), m.expect, m.pristine)
	}
	return m
}

// note adds a line of the player's own to the event log, at the virtual
// time reached.
func (m *Model) note(format string, args ...any) {
	m.notes = append(m.notes, sim.LogEntry{TS: m.player.Now().Seconds(), Text: fmt.Sprintf(format, args...)})
}

func (m Model) onKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	if msg.Type == tea.KeyRunes && len(msg.Runes) > 1 && !msg.Paste {
		// Keys typed faster than the terminal is read (a held +) come in
		// one message: each is a key press.
		var cmd tea.Cmd
		for _, r := range msg.Runes {
			var next tea.Model
			next, cmd = m.onKey(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: msg.Alt})
			m = next.(Model)
			if cmd != nil {
				return m, cmd // only quit returns a command
			}
		}
		return m, cmd
	}
	k := m.keys
	switch {
	case key.Matches(msg, k.Quit):
		return m, tea.Quit
	case key.Matches(msg, k.Help):
		m.help = !m.help
	case key.Matches(msg, k.Close):
		m.help = false
	case key.Matches(msg, k.Pause):
		m.paused = !m.paused
	case key.Matches(msg, k.Faster):
		m.speed = faster(m.speed)
	case key.Matches(msg, k.Slower):
		m.speed = slower(m.speed)
	case key.Matches(msg, k.Step):
		m.paused = true
		if m.err == nil && !m.player.Done() {
			m = m.advance((m.clock/m.sc.Step + 1) * m.sc.Step)
		}
	case key.Matches(msg, k.Restart):
		m = m.restart(m.sc, fmt.Sprintf("restart: %s, %s on %s", m.sc.Limit.Algorithm, m.sc.Topology.Kind, storeName(m.sc)), m.pristine)
	case m.vs != nil && (key.Matches(msg, k.Algorithm) || key.Matches(msg, k.Topology)):
		m.note("%v", errVersusKeys)
	case key.Matches(msg, k.Algorithm):
		from := m.sc.Limit.Algorithm
		if m.triedAlg != "" {
			from = m.triedAlg
		}
		sc, why := withAlgorithm(m.sc, next(algorithms.Names(), from))
		m = m.restart(sc, why, false)
		if m.sc.Limit.Algorithm != sc.Limit.Algorithm {
			m.triedAlg = sc.Limit.Algorithm
		}
	case key.Matches(msg, k.Topology):
		from := m.sc.Topology.Kind
		if m.triedTopo != "" {
			from = m.triedTopo
		}
		sc := m.sc
		sc.Topology.Kind = next(topologies, from)
		m = m.restart(sc, "topology → "+string(sc.Topology.Kind), false)
		if m.sc.Topology.Kind != sc.Topology.Kind {
			m.triedTopo = sc.Topology.Kind
		}
	case key.Matches(msg, k.Up):
		m = m.selectRow(func(i, _ int) int { return i - 1 })
	case key.Matches(msg, k.Down):
		m = m.selectRow(func(i, _ int) int { return i + 1 })
	case key.Matches(msg, k.PageUp):
		m = m.selectRow(func(i, page int) int { return i - page })
	case key.Matches(msg, k.PageDown):
		m = m.selectRow(func(i, page int) int { return i + page })
	case key.Matches(msg, k.Home):
		m = m.selectRow(func(int, int) int { return 0 })
	case key.Matches(msg, k.End):
		m = m.selectRow(func(int, int) int { return math.MaxInt })
	case key.Matches(msg, k.ByKey):
		m = m.toggleByKey()
	case key.Matches(msg, k.Events):
		m.showLog = !m.showLog
	}
	return m, nil
}

// selectRow moves the selection to to(i, page) of the rows as listed (i
// the selected row's index, page the rows on screen), kept within them,
// and scrolls as little as shows it.
func (m Model) selectRow(to func(i, page int) int) Model {
	rows := m.rows()
	if len(rows) == 0 {
		return m
	}
	page := max(1, m.plan().clientRows/m.perRow())
	i := min(max(to(m.selected(rows), page), 0), len(rows)-1)
	m.sel = rows[i].name
	m.scroll = m.firstRow(rows, page)
	return m
}

// toggleByKey switches between a row per client and a row per key,
// keeping what is selected: a client's key, or a key's first client.
func (m Model) toggleByKey() Model {
	rows := m.rows()
	var key string
	if len(rows) > 0 {
		key = rows[m.selected(rows)].key
	}
	m.byKey = !m.byKey
	m.sel = key
	if !m.byKey {
		for _, r := range m.rows() {
			if r.key == key {
				m.sel = r.name
				break
			}
		}
	}
	m.scroll = m.firstRow(m.rows(), m.plan().clientRows/m.perRow())
	return m
}

// restart plays sc from t=0 in a new Player and logs what changed. A
// scenario the simulator refuses leaves the run playing as it was, with
// the reason in the log.
func (m Model) restart(sc sim.Scenario, what string, pristine bool) Model {
	p, err := sim.NewPlayer(m.ctx, sc, m.simOpts)
	if err != nil {
		m.note("%s: cannot play it: %v", what, err)
		return m
	}
	var vs *versusRun
	if m.vs != nil {
		vs, err = newVersus(m.ctx, m.vs.sc, m.simOpts, m.vs.labels)
		if err != nil {
			m.note("%s: cannot play the B run: %v", what, errors.Join(err, p.Close()))
			return m
		}
	}
	closeErr := errors.Join(m.player.Close(), m.closeVersus())
	m.player, m.sc, m.clock, m.err, m.notes, m.vs = p, sc, 0, nil, nil, vs
	m.hist, m.verdict, m.pristine = history{}, nil, pristine
	m.hist.update(p.Snapshot(m.ctx), sc.Step.Seconds(), p.Result)
	m.triedAlg, m.triedTopo = "", ""
	m.snap = p.Snapshot(m.ctx)
	m.note("%s, from t=0", what)
	if closeErr != nil {
		m.note("the previous run: %v", closeErr)
	}
	return m
}

// topologies are the kinds t cycles through.
var topologies = []sim.TopologyKind{sim.Local, sim.Shared, sim.Racy, sim.SplitBrain}

// next is the element after from in list, wrapping; the first if from is
// not in it.
func next[T comparable](list []T, from T) T {
	return list[(slices.Index(list, from)+1)%len(list)]
}

// withAlgorithm is sc limited by the named algorithm, what the scenario's
// limit lacks filled by algorithms.WithDefaults, the rule every command
// uses; the reason says what was filled. A limit the algorithm still
// refuses is left for the restart to refuse, in the log.
func withAlgorithm(sc sim.Scenario, name string) (sim.Scenario, string) {
	p, filled := algorithms.WithDefaults(name, sc.Limit.Params)
	why := "algorithm → " + name
	for _, f := range filled {
		switch f {
		case "window":
			sc.Limit.DefaultWindow = true
			why += " (window 1s: the scenario sets none)"
		case "burst":
			sc.Limit.DefaultBurst = true
			why += fmt.Sprintf(" (burst %d, one second of the rate: the scenario sets none)", p.Burst)
		}
	}
	sc.Limit.Algorithm, sc.Limit.Params = name, p
	return sc, why
}

// storeName is the store the scenario's state lives in, a Redis URL
// without its password.
func storeName(sc sim.Scenario) string { return sim.StoreLabel(sc.Topology.Store) }
