// Package tui is ratelim's live terminal player. It plays a simulation on
// its virtual clock at a speed the viewer chooses, one frame every 50 ms of
// wall time, and draws what the limiter decided: per client, the requests
// admitted and rejected in each recent step; per key, what each copy of the
// limiter state would still admit (two gauges drifting apart are a split
// brain); the faults in force; and the run's events as they happen.
//
// The simulator is the producer and this package only draws: a frame is a
// [sim.Snapshot] taken from a [sim.Player] after advancing it, and nothing
// else of the simulator is read. The advancing and the snapshot are a
// job, a tea.Cmd run off the UI goroutine, one at a time (frame.go): on a
// Redis store they are round trips, and the frame on screen stays
// responsive meanwhile. Played to the end, the run is the same one
// `ratelim sim` reports.
package tui

import (
	"context"
	"errors"
	"io"
	"math"
	"os"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/ratelim/ratelim/sim"
)

// Options configure the player.
type Options struct {
	// In and Out are the terminal; nil means standard input and output.
	// An In that is a file but not a terminal (stdin from /dev/null or a
	// pipe) is replaced by /dev/tty, the controlling terminal.
	In  io.Reader
	Out io.Writer
	// Speed is virtual seconds played per wall second: 0 means 1, and
	// +Inf as fast as the screen can follow ("max", at least one step a
	// frame). The viewer changes it with + and -.
	Speed float64
	// NoColor draws without colour, in glyphs that still tell allowed from
	// rejected. Run also honours the NO_COLOR environment variable.
	NoColor bool
	// Sim are the simulator's options, passed to every run played.
	Sim sim.Options
	// AltScreen draws on the terminal's alternate screen, which leaves the
	// shell's scrollback as it was on exit.
	AltScreen bool
	// Expect, if set, checks the scenario's expectations on the finished
	// run, for the verdict (cmd passes the file's expect: lines). It is
	// not called for a run the viewer changed with a or t.
	Expect func(*sim.Result) []sim.ExpectationResult
	// Versus, if set, is a second scenario played beside the first, in
	// the same frame, on the same scale and by the same clock: the same
	// traffic under another policy, algorithm or topology (ratelim sim
	// --vs). Labels name the two ("on_error=fail-open",
	// "on_error=fail-closed"); empty, they are A and B.
	Versus *sim.Scenario
	Labels [2]string
}

// frame is the wall time between two frames.
const frame = 50 * time.Millisecond

// maxFrameGap caps the wall time one frame may play: after the process was
// stopped, or when the simulation cannot keep up, the player slows down
// rather than jumping ahead.
const maxFrameGap = 250 * time.Millisecond

// Run plays sc on the terminal until the viewer quits or ctx is done. It
// returns an error for a scenario that cannot be played (a *sim.SetupError)
// or a terminal that cannot be driven; quitting is not an error. A store
// that would not delete the run's keys at the end is reported too (a
// *sim.CleanupError).
func Run(ctx context.Context, sc sim.Scenario, opts Options) (err error) {
	if os.Getenv("NO_COLOR") != "" {
		opts.NoColor = true
	}
	out := opts.Out
	if out == nil {
		out = os.Stdout
	}
	m, err := newModel(ctx, sc, opts, lipgloss.NewRenderer(out))
	if err != nil {
		return err
	}
	defer func() {
		// Every run opened, once the job in flight (if one is) is done;
		// the final Model's close below closes the same.
		err = errors.Join(err, m.Close())
	}()
	in, closeIn, err := input(opts.In, openTTY)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, closeIn()) }()
	popts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithOutput(out), tea.WithInput(in)}
	if opts.AltScreen {
		popts = append(popts, tea.WithAltScreen())
	}
	final, err := tea.NewProgram(m, popts...).Run()
	if fm, ok := final.(Model); ok {
		err = errors.Join(err, fm.Close())
	}
	if err != nil && ctx.Err() != nil && errors.Is(err, tea.ErrProgramKilled) {
		return ctx.Err()
	}
	return err
}

// Model is the player's state: a bubbletea model. Update it with messages
// and read it with View; a test drives it with tea.WindowSizeMsg, key
// messages and the ticks Init and Update schedule, and runs the job in
// flight (job) itself.
type Model struct {
	ctx     context.Context
	simOpts sim.Options
	// run is what plays: the scenario as given, or with the algorithm or
	// topology the viewer chose; its Player and the frame drawn.
	run
	players *players // every Player opened, for the jobs and Close
	// job is the tea.Cmd in flight, whose message clears it: one at a
	// time. queued are keys that need the Players (r, a, t) pressed while
	// one was, and restart the restart asked for, to start when none is.
	job     tea.Cmd
	queued  []tea.KeyMsg
	restart *restartReq
	// loaded are the keys whose state the frame carries; refreshed
	// reports whether they were read again since the last message that
	// could change them (a selection moved while paused), so that keys
	// whose geometry moves the keys shown are read once, not forever.
	loaded    []string
	refreshed bool
	clock     time.Duration // where the viewer wants the run: the Players catch up
	speed     float64       // virtual seconds per wall second; +Inf is max
	paused    bool
	help      bool
	last      time.Time // the previous tick's time; zero before the first
	width     int
	height    int
	scroll    int    // the first row shown, as far as the selection allows
	sel       string // the selected row's name: a client, or a key in the per-key view
	byKey     bool   // whether the rows are keys (every client sharing one added up)
	showLog   bool   // whether a finished run shows its events rather than its verdict
	expect    func(*sim.Result) []sim.ExpectationResult
	// pristine reports whether the scenario plays as given (not changed
	// with a or t), so that its expectations apply.
	pristine bool
	notes    []sim.LogEntry
	vs       *versusRun // the second run of a side-by-side, or nil
	// fullRate, when set, is the rate that fills a strip's cell: the
	// first run's, while the Model draws the second (see other).
	fullRate float64
	err      error // what stopped the run, if something did
	// tried are the algorithm and topology last asked for with a and t,
	// when the run they asked for could not be built: the next press
	// moves on from there, not from what is playing.
	triedAlg  string
	triedTopo sim.TopologyKind
	st        styles
	keys      keyMap
}

// NewModel prepares sc to be played from t=0 at opts.Speed, drawn for an
// 80×24 terminal until a tea.WindowSizeMsg says otherwise. Without
// opts.NoColor it draws in 256 colours whatever the output (Run matches
// the colours to the terminal's). Close it when done.
func NewModel(sc sim.Scenario, opts Options) (Model, error) {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.ANSI256)
	return newModel(context.Background(), sc, opts, r)
}

// newModel opens the runs and takes their first frames here, before the
// program starts: nothing is drawn yet.
func newModel(ctx context.Context, sc sim.Scenario, opts Options, r *lipgloss.Renderer) (Model, error) {
	p, err := sim.NewPlayer(ctx, sc, opts.Sim)
	if err != nil {
		return Model{}, err
	}
	speed := opts.Speed
	if speed <= 0 || math.IsNaN(speed) {
		speed = 1
	}
	m := Model{
		ctx: ctx, simOpts: opts.Sim, run: startRun(ctx, sc, p, false, nil), players: &players{open: []*sim.Player{p}},
		speed: speed, width: 80, height: 24, st: newStyles(r, opts.NoColor), keys: newKeyMap(),
		expect: opts.Expect, pristine: true,
	}
	if opts.Versus != nil {
		v, err := newVersus(ctx, *opts.Versus, opts.Sim, opts.Labels, false, nil)
		if err != nil {
			return Model{}, errors.Join(err, p.Close())
		}
		m.vs = v
		m.players.open = append(m.players.open, v.player)
	}
	return m.settle(), nil
}

// settle runs the jobs m waits for, here and now: reading the state of
// the keys shown, which the first frame needs to know how many it shows.
func (m Model) settle() Model {
	for range 3 {
		var job tea.Cmd
		if m, job = m.next(); job == nil {
			break
		}
		m = m.apply(job())
	}
	return m
}

// Close releases the runs' stores, and says if their keys could not be
// deleted; it waits for the job in flight. Closing twice is harmless, and
// closes what every copy of the Model opened.
func (m Model) Close() error {
	if m.players == nil {
		return nil
	}
	return m.players.closeAll()
}

// tickMsg is one frame's wall time.
type tickMsg time.Time

func tick() tea.Cmd {
	return tea.Tick(frame, func(t time.Time) tea.Msg { return tickMsg(t) })
}

// Init starts the frames.
func (m Model) Init() tea.Cmd { return tick() }

// Update moves the clock on a tick, resizes on a window size, answers
// keys and applies what a job did; then starts the job the Model waits
// for, if none is in flight.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	switch msg := msg.(type) {
	case tickMsg:
		m, cmd = m.onTick(time.Time(msg)), tick()
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.scroll = m.firstRow(m.rows(), m.plan().clientRows/m.perRow())
	case tea.KeyMsg:
		var quit tea.Cmd
		if m, quit = m.onKey(msg); quit != nil {
			return m, quit
		}
	case frameMsg, verdictMsg, stateMsg, restartMsg, closedMsg:
		m = m.apply(msg)
	default:
		return m, nil
	}
	if _, ok := msg.(stateMsg); !ok {
		m.refreshed = false
	}
	m, job := m.next()
	return m, tea.Batch(cmd, job)
}

// next starts the job m waits for when none is in flight: the restart
// asked for, then the keys queued, then playing the runs to the clock,
// then reading the state of keys the gauges show that the frame lacks.
func (m Model) next() (Model, tea.Cmd) {
	for m.job == nil {
		switch {
		case m.restart != nil:
			m.job = m.restartJob(*m.restart)
			m.restart = nil
		case len(m.queued) > 0:
			k := m.queued[0]
			m.queued = m.queued[1:]
			m, _ = m.onKey(k)
			continue
		case m.err == nil && !m.done && m.clock.Truncate(time.Microsecond) > m.now:
			// The Players' clocks are in microseconds, the wall's not.
			m.job = m.frameJob()
		case m.verdictDue():
			m.job = m.verdictJob()
		case !m.refreshed && !m.keysRead():
			m.job = m.stateJob(m.gaugeKeys())
		default:
			return m, nil
		}
		return m, m.job
	}
	return m, nil
}

// apply is m with what a job did.
func (m Model) apply(msg tea.Msg) Model {
	m.job = nil
	switch msg := msg.(type) {
	case frameMsg:
		m.run = msg.a.withRows(m.byKey)
		if msg.errA != nil {
			m.err = msg.errA
			m.note("the run stopped: %v", msg.errA)
		}
		if msg.b != nil {
			b := *msg.b
			b.run = b.withRows(m.byKey)
			m.vs = &b
			if msg.errB != nil && m.err == nil {
				m.err = msg.errB
				m.note("the B run stopped: %v", msg.errB)
			}
		}
	case verdictMsg:
		if msg.a != nil && msg.forA == m.player {
			m.verdict = msg.a
		}
		if msg.b != nil && m.vs != nil && msg.forB == m.vs.player {
			b := *m.vs
			b.verdict = msg.b
			m.vs = &b
		}
	case stateMsg:
		m.snap.State, m.loaded, m.refreshed = msg.a, msg.keys, true
		if m.vs != nil {
			b := *m.vs
			b.snap.State = msg.b
			m.vs = &b
		}
	case restartMsg:
		m = m.restarted(msg)
	}
	return m
}
