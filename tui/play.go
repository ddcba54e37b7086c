package tui

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/topology"
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

// onTick moves the clock on by the wall time since the previous tick,
// times the speed; the job that plays the runs to it starts from Update.
// The first tick only sets the clock going: the time is the tick
// message's, so that a test decides it. A tick while a job is in flight
// moves nothing: when the simulation cannot keep up, the player slows
// down rather than jumping ahead.
func (m Model) onTick(now time.Time) Model {
	last := m.last
	m.last = now
	if m.paused || m.err != nil || m.done || last.IsZero() || m.job != nil {
		return m
	}
	wall := min(max(now.Sub(last), 0), maxFrameGap)
	if math.IsInf(m.speed, 1) {
		stride := max(m.sc.Step, m.sc.Duration/maxFrames)
		return m.playTo(ceilTo(m.clock+stride, m.sc.Step))
	}
	return m.playTo(m.clock + time.Duration(float64(wall)*m.speed))
}

// ceilTo rounds d up to a multiple of step.
func ceilTo(d, step time.Duration) time.Duration {
	return (d + step - 1) / step * step
}

// playTo sets the clock to until, within the run: the next frame job
// plays the runs there.
func (m Model) playTo(until time.Duration) Model {
	m.clock = min(until, m.sc.Duration)
	return m
}

// note adds a line of the player's own to the event log, at the virtual
// time reached.
func (m *Model) note(format string, args ...any) {
	m.notes = append(m.notes, sim.LogEntry{TS: m.now.Seconds(), Text: fmt.Sprintf(format, args...)})
}

// onKey answers a key; the command it returns is tea.Quit or nil. A key
// that restarts (r, a, t) while a job is in flight, or a restart waits,
// waits its turn: the restart starts from the run the job leaves.
func (m Model) onKey(msg tea.KeyMsg) (Model, tea.Cmd) {
	if msg.Type == tea.KeyRunes && len(msg.Runes) > 1 && !msg.Paste {
		// Keys typed faster than the terminal is read (a held +) come in
		// one message: each is a key press.
		var cmd tea.Cmd
		for _, r := range msg.Runes {
			m, cmd = m.onKey(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: msg.Alt})
			if cmd != nil {
				return m, cmd // only quit returns a command
			}
		}
		return m, cmd
	}
	k := m.keys
	restarts := key.Matches(msg, k.Restart) || key.Matches(msg, k.Algorithm) || key.Matches(msg, k.Topology)
	if restarts && (m.job != nil || m.restart != nil) {
		m.queued = append(m.queued, msg)
		return m, nil
	}
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
		if m.err == nil && !m.done {
			m = m.playTo((m.clock/m.sc.Step + 1) * m.sc.Step)
		}
	case key.Matches(msg, k.Restart):
		m.restart = &restartReq{sc: m.sc, what: fmt.Sprintf("restart: %s, %s on %s", m.sc.Limit.Algorithm, m.sc.Topology.Kind, storeName(m.sc)), pristine: m.pristine}
	case m.vs != nil && (key.Matches(msg, k.Algorithm) || key.Matches(msg, k.Topology)):
		m.note("%v", errVersusKeys)
	case key.Matches(msg, k.Algorithm):
		m = m.nextAlgorithm()
	case key.Matches(msg, k.Topology):
		m = m.nextTopology()
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

// nextAlgorithm asks for a restart on the algorithm after the one playing
// (or after the last one tried, which the limit did not suit).
func (m Model) nextAlgorithm() Model {
	from := m.sc.Limit.Algorithm
	if m.triedAlg != "" {
		from = m.triedAlg
	}
	name := next(sim.Algorithms(), from)
	sc, why, err := withAlgorithm(m.sc, name)
	if err != nil {
		// The limit does not suit it: no run to build.
		m.note("%s: cannot play it: limit.%v", why, err)
		m.triedAlg = name
		return m
	}
	m.restart = &restartReq{sc: sc, what: why, alg: true}
	return m
}

// nextTopology asks for a restart on the topology after the one playing
// (or after the last one tried).
func (m Model) nextTopology() Model {
	from := m.sc.Topology.Kind
	if m.triedTopo != "" {
		from = m.triedTopo
	}
	sc := m.sc
	sc = sim.WithTopology(sc, next(topologies, from))
	m.restart = &restartReq{sc: sc, what: "topology → " + string(sc.Topology.Kind), topo: true}
	return m
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
	m.run = m.run.withRows(m.byKey)
	if m.vs != nil {
		b := *m.vs
		b.run = b.withRows(m.byKey)
		m.vs = &b
	}
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

// restarted is m after a restart job: the new runs from t=0, with what
// changed in the log; or, for a scenario the simulator refused, the run
// playing as it was, with the reason in the log.
func (m Model) restarted(msg restartMsg) Model {
	req := msg.req
	if msg.err != nil || msg.errB != nil {
		if msg.err != nil {
			m.note("%s: cannot play it: %v", req.what, msg.err)
		} else {
			m.note("%s: cannot play the B run: %v", req.what, msg.errB)
		}
		if req.alg {
			m.triedAlg = req.sc.Limit.Algorithm
		}
		if req.topo {
			m.triedTopo = req.sc.Topology.Kind
		}
		return m
	}
	m.run, m.vs = msg.a.withRows(m.byKey), msg.b
	if m.vs != nil {
		b := *m.vs
		b.run = b.withRows(m.byKey)
		m.vs = &b
	}
	m.clock, m.err, m.notes, m.pristine = 0, nil, nil, req.pristine
	m.triedAlg, m.triedTopo = "", ""
	m.note("%s, from t=0", req.what)
	if msg.closeErr != nil {
		m.note("the previous run: %v", msg.closeErr)
	}
	return m
}

// topologies are the kinds t cycles through: all but regions, whose
// regions and clients' homes only a file says.
var topologies = slices.DeleteFunc(topology.Kinds(), func(k topology.Kind) bool { return k == topology.Regions })

// next is the element after from in list, wrapping; the first if from is
// not in it.
func next[T comparable](list []T, from T) T {
	return list[(slices.Index(list, from)+1)%len(list)]
}

// withAlgorithm is sc limited by the named algorithm, what the scenario's
// limit lacks filled by sim.WithAlgorithm, the rule every command uses;
// the reason says what was filled. A limit the algorithm still refuses
// is an error, and sc as it was.
func withAlgorithm(sc sim.Scenario, name string) (sim.Scenario, string, error) {
	why := "algorithm → " + name
	next, err := sim.WithAlgorithm(sc, name)
	if err != nil {
		return sc, why, err
	}
	// What was filled is what the scenario's limit did not say was.
	if next.Limit.DefaultWindow && !sc.Limit.DefaultWindow {
		why += " (window 1s: the scenario sets none)"
	}
	if next.Limit.DefaultBurst && !sc.Limit.DefaultBurst {
		why += fmt.Sprintf(" (burst %d, one second of the rate: the scenario sets none)", next.Limit.Params.Burst)
	}
	return next, why, nil
}

// storeName is the store the scenario's state lives in, a Redis URL
// without its password.
func storeName(sc sim.Scenario) string { return sc.Topology.StoreLabel() }
