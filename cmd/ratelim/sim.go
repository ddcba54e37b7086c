package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/internal/words"
	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/simrun"
	"github.com/ratelim/ratelim/tui"
)

// simOptions are `ratelim sim`'s flags. A flag left unset leaves the
// scenario's own value; the override fields are applied in overrides.
type simOptions struct {
	streams
	Scenario string
	Format   string
	Quiet    bool
	Wide     bool
	// Dense writes every timeline row and state point of a json or csv
	// result, the empty and repeated ones included.
	Dense  bool
	Limits runLimits
	// ErrIsTerminal says whether ErrOut is a terminal, where progress goes.
	ErrIsTerminal bool
	// OutIsTerminal says whether Out is a terminal, which --tui needs.
	OutIsTerminal bool
	TUI           bool
	Live          bool
	Speed         float64
	Plot          plotFlags
	// Vs are the --vs FIELD=VALUE flags: run the scenario a second time
	// so changed and show the two side by side.
	Vs []string
	// Sweep is the --sweep FIELD=V1,V2,... flag (one): run the scenario
	// once per value and show a row per value.
	Sweep []string

	over overrides
}

// overrides are the flags that change the scenario. The fields are where
// cobra parses them to; set holds the override flags given (an override
// name or a short form, rate, burst, window), as typed, and paths the
// --set PATH=VALUE flags in order: settings turns both into what
// scenarios.Apply reads, so that a flag is checked exactly as the file's
// field is, by the file's reader and with its message.
type overrides struct {
	algorithm, topology, store, balancer, key, onError, rtt, syncInterval, replicationLag, duration, step, wallClock, shadow string
	// servers and seed are text, read by the file's readers: "--servers
	// x" is refused as servers: x would be, not by the flag parser.
	servers, seed       string
	rate, burst, window string
	paths               []string
	set                 map[string]string
}

// given reports whether any flag changes the scenario.
func (o overrides) given() bool { return len(o.set) > 0 || len(o.paths) > 0 }

// settings are the flags given, as scenarios.Apply takes them: the --set
// flags in the order typed, then the others in a fixed order. A field set
// by two flags (--burst and --set limit.burst, --on-error and --set
// topology.on_error) is refused by scenarios.Apply, which knows the file's
// fields and entries.
func (o overrides) settings() ([]scenarios.Setting, error) {
	var out []scenarios.Setting
	add := func(s scenarios.Setting) error {
		if err := simrun.CheckSetting(s.Name, s.Flag); err != nil {
			return usageError{err}
		}
		out = append(out, s)
		return nil
	}
	for _, p := range o.paths {
		name, value, ok := strings.Cut(p, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, badInput("--set %q: want PATH=VALUE, e.g. --set limit.burst=20 or --set topology.failover_after=5s ('ratelim scenarios reference' lists every field)", p)
		}
		if err := add(scenarios.Setting{Name: name, Value: value, Flag: "--set " + name}); err != nil {
			return nil, err
		}
	}
	for _, name := range simrun.FlagNames() {
		if v, ok := o.set[name]; ok {
			if err := add(scenarios.Setting{Name: name, Value: v, Flag: "--" + name}); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

func newCmdSim(s streams, runF func(*simOptions) error) *cobra.Command {
	opts := &simOptions{streams: s, ErrIsTerminal: isTerminal(s.ErrOut), OutIsTerminal: isTerminal(s.Out)}
	cmd := &cobra.Command{
		Use:   "sim SCENARIO|FILE",
		Short: "Replay a scenario and show what each client experienced",
		Long: `Replay a scenario (a built-in name, or a YAML file) on a virtual clock and
show what each client experienced: sent, allowed, rejected, failed open or
closed, retries, the most admitted in any second, what one exact limiter
would have admitted, and latency.

Flags override the scenario: --rate, --burst and --window set the limit's,
and --set PATH=VALUE any field of the file (topology.failover_after=5s,
clients[web].traffic.rate=20/s, limits[hourly].rate=500/h), each value read
and refused as the file's own would be. --vs takes the same names.

The store is memory by default: it has the
semantics of one Redis running the Lua script (atomic, one round trip, the
round trip as virtual time) at in-process speed, millions of requests a
second. --store miniredis runs the real Lua scripts in an embedded Redis
(about 150 µs a decision here: keep runs to thousands of requests) and
--store redis://host:port a real server (one round trip, ~50 µs on loopback);
both give the same decisions as memory, and are there for fidelity.

A run estimated to need more than --max-memory at its file's step runs at
the finest coarser step that fits (every total the same) and says so on
stderr; with --step given, it is refused instead.

The same scenario and seed always give the same output, byte for byte.
Every field of a scenario file: 'ratelim scenarios reference'.`,
		Example: `  ratelim sim runaway-healthcheck
  ratelim sim runaway-healthcheck --topology local --servers 8
  ratelim sim window-boundary --algorithm sliding-log
  ratelim sim store-outage --vs on_error=fail-closed --plot outage.png
  ratelim sim partition --set topology.failover_after=5s --on-error fail-closed
  ratelim sim runaway-healthcheck --burst 50 --vs burst=100
  ratelim sim sync-interval --sweep sync-interval=0,10ms,1s,never --plot s.png
  ratelim sim partition --format json > result.json
  ratelim sim my-scenario.yaml --seed 7 --format csv`,
		Args: exactArgs(1, "a scenario name or file (see 'ratelim scenarios')"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Scenario = args[0]
			opts.over.visit(cmd)
			if runF != nil {
				return runF(opts)
			}
			return simRun(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Format, "format", "table", "output: table, json (ratelim.result/v1) or csv (the timeline)")
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "no progress, and for the table only the rows")
	f.BoolVar(&opts.Wide, "wide", false, "the table with every column (by default those that are all zero are left out, to fit 80 columns)")
	addDenseFlag(f, &opts.Dense)
	addLimitFlags(f, &opts.Limits, false)
	f.BoolVar(&opts.TUI, "tui", false, "play the run live in the terminal (space pause, +/- speed, q quit)")
	opts.Speed = 1
	f.Var((*speedFlag)(&opts.Speed), "speed", "with --tui: virtual seconds per second at the start, or max (as fast as the screen follows)")
	f.BoolVar(&opts.Live, "live", false, "also run it for real: in-process servers on loopback, real HTTP, for the scenario's duration; print both and the difference")
	f.StringArrayVar(&opts.Vs, "vs", nil, "FIELD=VALUE: run it again so changed and show both side by side, e.g. --vs on_error=fail-closed or --vs limit.burst=50 (repeat for several fields)")
	f.StringArrayVar(&opts.Sweep, "sweep", nil, "FIELD=V1,V2,...: run it once per value (in parallel) and show a row per value, what was admitted and the worst second against the exact limiter; FIELD any --vs takes, the values as ratelim sweep reads them, the runs together within --max-requests and --max-memory; --plot draws it, e.g. --sweep sync-interval=0,10ms,100ms,1s,never (at most 32 values)")
	// Declared here, not by addLimitFlags: a sweep alone runs several at
	// once (planSweep bounds them together).
	f.IntVar(&opts.Limits.Workers, "parallel", 0, "with --sweep: runs at once (0: one per core)")
	addOverrideFlags(cmd, &opts.over)
	addWallClockFlag(cmd, &opts.over)
	addPlotFlags(cmd, &opts.Plot)
	addByFlag(cmd, &opts.Plot)
	return cmd
}

// speedFlag is --speed: a positive number of virtual seconds per wall
// second, or max.
type speedFlag float64

func (s *speedFlag) String() string {
	if math.IsInf(float64(*s), 1) {
		return "max"
	}
	return strconv.FormatFloat(float64(*s), 'g', -1, 64)
}

func (s *speedFlag) Set(v string) error {
	if v == "max" {
		*s = speedFlag(math.Inf(1))
		return nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f <= 0 {
		return fmt.Errorf("want a positive number of virtual seconds per second, or max")
	}
	*s = speedFlag(f)
	return nil
}

func (s *speedFlag) Type() string { return "speed" }

// visit records which override flags were given on cmd, and their values.
func (o *overrides) visit(cmd *cobra.Command) {
	o.set = map[string]string{}
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if simrun.IsFlag(f.Name) {
			o.set[f.Name] = f.Value.String()
		}
	})
}

// addOverrideFlags declares the flags that override a scenario's fields,
// shared by the commands that run scenarios, but those named in except
// (compare's algorithms and topologies are its own).
func addOverrideFlags(cmd *cobra.Command, o *overrides, except ...string) {
	f := cmd.Flags()
	flag := func(p *string, name, usage string) {
		if !slices.Contains(except, name) {
			f.StringVar(p, name, "", usage)
		}
	}
	flag(&o.algorithm, "algorithm", "limiter: "+strings.Join(algorithms.Names(), ", "))
	flag(&o.topology, "topology", "where the counter lives: "+words.OneOf(scenarios.Choices("topology.kind")))
	flag(&o.store, "store", "memory, miniredis or redis://host:port")
	flag(&o.servers, "servers", "number of API servers")
	flag(&o.balancer, "balancer", "round-robin, random or key-hash")
	flag(&o.key, "key", "limit by: auto, api-key, user or ip")
	flag(&o.seed, "seed", "random seed")
	flag(&o.duration, "duration", "virtual duration, e.g. 30s")
	flag(&o.step, "step", "the timeline's resolution, e.g. 1m for a week-long run (totals are the same at any step)")
	flag(&o.onError, "on-error", "when the store fails: fail-open or fail-closed")
	flag(&o.rtt, "rtt", "one store round trip, e.g. 500us")
	flag(&o.syncInterval, "sync-interval", "synced topology: each server pushes its admissions this often, e.g. 100ms; 0 every request, never")
	flag(&o.replicationLag, "replication-lag", "split-brain, cluster, regions: how long a write takes to reach the other copies, e.g. 200ms; regions: never")
	flag(&o.shadow, "shadow", "every limit in shadow mode (decided and counted, never refused): true, false, or the instant they enforce from, e.g. 15s")
	addSetFlags(cmd, o)
}

// addSetFlags declares --rate, --burst, --window and --set, which set a
// field of the file itself.
func addSetFlags(cmd *cobra.Command, o *overrides) {
	f := cmd.Flags()
	f.StringVar(&o.rate, "rate", "", "the limit's rate, as limit.rate: e.g. 10/s, 600/m")
	f.StringVar(&o.burst, "burst", "", "the limit's burst, as limit.burst: e.g. 20")
	f.StringVar(&o.window, "window", "", "the limit's window, as limit.window: e.g. 1m")
	f.StringArrayVar(&o.paths, "set", nil, "PATH=VALUE: set any field of the file (repeatable), e.g. topology.failover_after=5s")
}

// addWallClockFlag declares --wall-clock for the commands that run on the
// virtual clock (a live run is on the real one).
func addWallClockFlag(cmd *cobra.Command, o *overrides) {
	cmd.Flags().StringVar(&o.wallClock, "wall-clock", "", "the wall-clock instant virtual time 0 stands for (default "+sim.DefaultWallClock.Format(time.RFC3339)+"); fixed and sliding windows align to it, and the peer models that keep wall-clock time read it, e.g. redis_rate")
}

// apply changes sc by the override flags that were given, each refused as
// the file's field would be; for a scenario with no file (replay's).
func (o overrides) apply(sc *sim.Scenario) error {
	next, err := scenarios.Override(*sc, o.set, scenarios.FlagField)
	if err != nil {
		return usageError{err}
	}
	*sc = next
	return nil
}

// simPlan is what `ratelim sim` runs: the scenario as the flags change
// it, the --vs one beside it, and the simulator's bounds.
type simPlan struct {
	file    *scenarios.File
	sc      sim.Scenario
	run     *scenarios.File // file as the flags change it
	vs      *versus
	runB    *scenarios.File // the --vs run's, when vs is not nil
	scB     sim.Scenario    // and its scenario
	simOpts sim.Options
	// sweep, when not nil, is --sweep's plan, as `ratelim sweep` plans
	// one; nothing else is then set.
	sweep *sweepPlan
}

// planSim checks opts and opens the scenario, running nothing: every flag
// is refused here, before a run starts.
func planSim(opts *simOptions) (*simPlan, error) {
	if err := checkOutputFlags(opts.Format, &opts.Plot); err != nil {
		return nil, err
	}
	if err := opts.Plot.checkBy(); err != nil {
		return nil, err
	}
	if len(opts.Sweep) > 0 {
		sp, err := planSimSweep(opts)
		if err != nil {
			return nil, err
		}
		return &simPlan{sweep: sp}, nil
	}
	limits := opts.Limits
	if opts.Limits.Workers != 0 {
		return nil, badInput("--parallel: a single run is one at a time (want it with --sweep)")
	}
	simOpts, err := limits.apply()
	if err != nil {
		return nil, err
	}
	// A run too big for memory at its file's step is run at a coarser one,
	// and says so; a step asked for on the command line is kept, and such
	// a run refused.
	// (A setting that does not read is refused by loadFile, below.)
	sets, _ := opts.over.settings()
	simOpts.FitStep = !simrun.StepAsked(sets)
	if opts.Format == "table" && !opts.TUI && opts.Plot.Path == "" {
		// A table shows no state series (a plot and the TUI do): a run on
		// one copy of the state then reads none at its step ends (the
		// findings are the same).
		simOpts.StateOf = func(string) bool { return false }
	}
	vs, err := parseVersus(opts.Vs)
	if err != nil {
		return nil, err
	}
	file, run, err := opts.loadFile(opts.Scenario, opts.over)
	if err != nil {
		return nil, err
	}
	sc := run.Scenario
	p := &simPlan{file: file, run: run, sc: sc, vs: vs, simOpts: simOpts}
	if vs != nil {
		if opts.Live {
			return nil, badInput("--vs and --live do not go together (run load twice)")
		}
		if opts.Plot.format == "gif" {
			return nil, badInput("--plot: --vs draws a still side by side; write it as .png or .svg")
		}
		if p.runB, err = vs.apply(run); err != nil {
			return nil, err
		}
		p.scB = p.runB.Scenario
	}
	if opts.Live && opts.TUI {
		return nil, badInput("--live and --tui do not go together")
	}
	if opts.TUI {
		if !opts.OutIsTerminal {
			return nil, badInput("--tui needs a terminal, and stdout is not one (use --format table|json|csv, or --plot FILE)")
		}
		if !(opts.Speed > 0) {
			return nil, badInput("--speed: must be positive (got %g)", opts.Speed)
		}
	}
	return p, nil
}

func simRun(ctx context.Context, opts *simOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	p, err := planSim(opts)
	if err != nil {
		return err
	}
	if p.sweep != nil {
		return simSweep(ctx, opts, p.sweep)
	}
	file, sc, vs, scB, simOpts := p.file, p.sc, p.vs, p.scB, p.simOpts
	if opts.Live {
		return simLive(ctx, opts, scenarioLabel(file), sc)
	}
	if opts.TUI {
		_, noColor := os.LookupEnv("NO_COLOR")
		topts := tui.Options{In: opts.In, Out: opts.Out, Speed: opts.Speed, NoColor: noColor, Sim: simOpts, AltScreen: true}
		if !opts.over.given() {
			// The verdict at the end checks the file's expectations, which
			// hold for the scenario as written.
			topts.Expect = func(r *sim.Result) []sim.ExpectationResult {
				if _, _, err := fillExpectations(file, r); err != nil {
					return nil
				}
				return r.Expectations
			}
		}
		if vs != nil {
			topts.Versus = &scB
			topts.Labels[0], topts.Labels[1] = vs.labels(p.run, p.runB)
		}
		err := tui.Run(ctx, sc, topts)
		return setupOrErr(scenarioLabel(file), err)
	}
	showProgress := opts.ErrIsTerminal && !opts.Quiet && opts.Format == "table"
	r, err := runScenario(ctx, opts.ErrOut, showProgress, scenarioLabel(file), sc, simOpts)
	if err != nil {
		return err
	}
	// StepS is seconds in a float; the simulator's steps are whole
	// microseconds, so rounding to one gives the step back exactly.
	if step := time.Duration(math.Round(r.StepS*1e6)) * time.Microsecond; step != sc.Step {
		// The simulator coarsened it (FitStep); its log says why, and so
		// does stderr, where a table's reader will see it.
		fmt.Fprintf(opts.ErrOut, "ratelim: %s: the timeline's step is %s, not %s, to fit --max-memory %s (every total is the same at any step; --step %s refuses instead)\n",
			scenarioLabel(file), words.Duration(step), words.Duration(sc.Step), opts.Limits.MaxMemory, words.Duration(sc.Step))
	}
	// The file's expectations hold for the scenario as written: flags that
	// change it make them meaningless.
	skipped := 0
	if !opts.over.given() {
		if _, skipped, err = fillExpectations(file, r); err != nil {
			return err
		}
	}
	if vs != nil {
		return simVersus(ctx, opts, file, r, skipped, p.run, p.runB, vs, simOpts)
	}
	if err := opts.Plot.render(func(w io.Writer) error { return renderTimeline(w, r, opts.Plot) }); err != nil {
		return err
	}
	// What simrun.Run writes after its run: the same bytes the playground
	// shows.
	return simrun.Write(ctx, opts.Out, file, r, opts.layout(), skipped)
}

// layout is how the flags lay a result out.
func (opts *simOptions) layout() simrun.Layout {
	return simrun.Layout{Format: opts.Format, Quiet: opts.Quiet, Wide: opts.Wide, Dense: opts.Dense}
}

// resultLayout is how writeResult lays a result out: the table all but
// its title and findings when quiet, every column when wide; the JSON and
// CSV every row and state point when dense.
type resultLayout struct{ quiet, wide, dense bool }

// addDenseFlag declares --dense, for the commands that write a result as
// JSON or CSV.
func addDenseFlag(f *pflag.FlagSet, dense *bool) {
	f.BoolVar(dense, "dense", false, "with --format json or csv, every timeline row and state point (by default a row in which nothing happened to its client, and a state point equal to the one before, are left out: see docs/result.md)")
}

// writeResult prints r as format says, laid out as l says; ctx stops a
// JSON or CSV being written (a signal).
func writeResult(ctx context.Context, w io.Writer, r *sim.Result, format string, l resultLayout) error {
	return simrun.WriteResult(ctx, w, r, simrun.Layout{Format: format, Quiet: l.quiet, Wide: l.wide, Dense: l.dense})
}

// sparseUnless is r as a JSON or CSV result shows it: sparse unless
// dense (sim.Result.TimelineSparse). Dense, a copy of a run's Result with
// every row put back: encoded whole inside another object, it is built
// whole (report.WriteJSONWith streams a Result of its own instead).
func sparseUnless(dense bool, r *sim.Result) *sim.Result {
	if r == nil {
		return r
	}
	if !dense {
		return r.Sparse()
	}
	out := *r
	out.Densify()
	return &out
}

// progress reports a long run's virtual time on a terminal's stderr, once a
// run has taken more than a second of wall time, and erases itself at the end.
type progress struct {
	w       io.Writer
	enabled bool
	started time.Time
	shown   bool
	last    time.Time
	doing   string // what the time is of: "simulating", "sending"
}

// runScenario runs sc, showing its progress on errOut if asked, and sorts
// a failure as runError does (a run that left keys in its store is kept).
func runScenario(ctx context.Context, errOut io.Writer, showProgress bool, label string, sc sim.Scenario, simOpts sim.Options) (*sim.Result, error) {
	progress := newProgress(errOut, showProgress, "simulating")
	simOpts.Progress = progress.update
	r, err := sim.Run(ctx, sc, simOpts)
	progress.done()
	if err := runError(errOut, label, err); err != nil {
		return nil, err
	}
	return r, nil
}

// newProgress is a progress line on w, if enabled, of what doing says
// ("simulating", "sending").
func newProgress(w io.Writer, enabled bool, doing string) *progress {
	return &progress{w: w, enabled: enabled, started: time.Now(), doing: doing}
}

func (p *progress) update(done, total time.Duration) {
	if !p.enabled {
		return
	}
	p.show(fmt.Sprintf("%s of %s (%.0f%%)", done.Round(time.Millisecond), total, 100*done.Seconds()/total.Seconds()))
}

// show writes how far the run has got, as text says ("3 of 8 runs
// done"), once it has taken a second and at most ten times a second.
func (p *progress) show(text string) {
	if !p.enabled {
		return
	}
	now := time.Now()
	if now.Sub(p.started) < time.Second || now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last = now
	p.shown = true
	// Erased to the line's end: a shorter figure leaves nothing behind.
	fmt.Fprintf(p.w, "\r%s: %s \033[K", p.doing, text)
}

func (p *progress) done() {
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
