package main

// `ratelim sweep SCENARIO FIELD=VALUES [FIELD=VALUES]`: the scenario run
// once per value of a field, or per pair of values of two, all at once
// on every core, and a row per run of what it admitted. It shares
// `sim --sweep`'s parts (sweep.go): runSweep, SweepRow, the table, the
// CSV and JSON writers and the plot; its values are read by
// expandValues (sweepvalues.go), and its runs are bounded together, up
// front (checkSweepSize).

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/spf13/cobra"

	"github.com/ratelim/ratelim/internal/escape"
	"github.com/ratelim/ratelim/internal/sat"
	"github.com/ratelim/ratelim/internal/words"
	"github.com/ratelim/ratelim/report"
	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/sim"
)

// maxSweepFields is the most fields one sweep varies: two make a grid a
// table or a heat map still shows; a third would be a grid per value.
const maxSweepFields = 2

// maxSweepRuns is the most runs one sweep makes, all its fields' values
// multiplied: 256 rows are already more than a screen, and 16 × 16 is a
// heat map whose cells still read.
const maxSweepRuns = 256

// derivedFigures are the figures a sweep derives from check's
// (scenarios.FigureNames), as the JSON of `sim --sweep` names them.
var derivedFigures = []string{"admitted_ratio", "peak_ratio", "rejected_pct"}

// sweepOptions are `ratelim sweep`'s flags and arguments.
type sweepOptions struct {
	streams
	Scenario string
	// Axes are the FIELD=VALUES arguments, one or two.
	Axes []string
	// Figures is --figure: NAME[:CLIENT|:key=KEY],...; "" for the default
	// columns.
	Figures       string
	Format        string
	Quiet         bool
	Limits        runLimits
	Plot          plotFlags
	ErrIsTerminal bool

	over overrides
	// by is how errors name the sweep: "sweep" (`ratelim sweep`, the
	// zero value) or "--sweep" (`sim --sweep`, planned by planSweep too).
	by string
}

// sweepBy is how errors name a sweep of field: "sweep burst" or, by sim,
// "--sweep burst".
func sweepBy(by, field string) string {
	if by == "" {
		by = "sweep"
	}
	return by + " " + field
}

const sweepHelp = `Run a scenario once per value of a field, or of two fields (a run per
pair), all at once on every core (--parallel), and show a row per run:
what it admitted against the exact limiter on the same arrivals, and
its worst second, or the figures --figure names. The row of the scenario
as given (the file and its flags) is marked *, as the CSV's current
column, the JSON's current and the plot mark it.

FIELD is any field of the scenario: a flag's name (servers, seed,
sync-interval, on-error, ...), rate, burst or window (the limit's), or a
path into the file: limit.burst, topology.failover_after,
clients[web].traffic.rate, limits[hourly].rate, faults[0].start.

VALUES, each read as the field reads it in a file:
  a,b,c         these values, in this order
  A..B          the whole numbers from A to B: 1..8
  A..B+S        from A up to B in steps of S: 100ms..1s+100ms
  A..B*K        A, A×K, A×K², ... up to B, K more than 1: 1ms..10s*10 is
                1ms,10ms,100ms,1s,10s; 10/s..80/s*2 keeps A's unit
Items mix: 1,2,4..8. At most 32 values a field, 2 fields, 256 runs.

--figure NAME[:CLIENT|:key=KEY],... shows those figures instead; without
a subject, every client's added up (a most in a second: the worst key's);
a name with a comma is quoted: allowed:"a,b".
  check's: ` + "%s" + `
  derived: admitted_ratio (allowed ÷ the exact limiter's), peak_ratio
           (the worst second ÷ the exact limiter's; of every client: the
           worst key's), rejected_pct (rejected ÷ sent, in %%)

--max-requests bounds the requests of every run added up, and
--max-memory the runs at once and the rows kept: each run gets its share
(÷ --parallel) and, as sim does, runs at a coarser step if it needs
more at the file's (unless --step is given). A sweep over either is
refused before any run starts. The same scenario, values and seed give
the same output, byte for byte, at any --parallel.`

func newCmdSweep(s streams, runF func(*sweepOptions) error) *cobra.Command {
	opts := &sweepOptions{streams: s, ErrIsTerminal: isTerminal(s.ErrOut)}
	cmd := &cobra.Command{
		Use:   "sweep SCENARIO|FILE FIELD=VALUES [FIELD=VALUES]",
		Short: "Run a scenario over a field's values and show what each admitted",
		Long:  fmt.Sprintf(sweepHelp, strings.Join(wrapWords(scenarios.FigureNames(), 61), "\n           ")),
		Example: `  ratelim sweep sync-interval sync-interval=0,10ms,100ms,1s,never
  ratelim sweep runaway-healthcheck servers=1..8 --topology local
  ratelim sweep sync-interval sync-interval=1ms..1s*10 servers=2..8+2
  ratelim sweep nat seed=1..20 --figure allowed,rejected_pct:home --format csv`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) < 2 || len(args) > 1+maxSweepFields {
				return badInput("want a scenario name or file and one or two FIELD=VALUES, e.g. servers=1..8 (got %s)", words.Count(len(args), "argument", "arguments"))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Scenario, opts.Axes = args[0], args[1:]
			opts.over.visit(cmd)
			if runF != nil {
				return runF(opts)
			}
			return sweepRun(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Figures, "figure", "", "the figures to show, NAME[:CLIENT|:key=KEY],... (see above); default: admitted and the worst second against the exact limiter")
	f.StringVar(&opts.Format, "format", "table", "output: table, json (ratelim.sweep/v2) or csv")
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "no progress, and for the table only the rows")
	addLimitFlags(f, &opts.Limits, true)
	addOverrideFlags(cmd, &opts.over)
	addWallClockFlag(cmd, &opts.over)
	addPlotFlags(cmd, &opts.Plot)
	f.Lookup("max-requests").Usage = "refuse a sweep whose runs together are estimated to send more requests than this (a run whose retries send more is stopped)"
	f.Lookup("max-memory").Usage = "refuse a sweep whose runs at once (--parallel) and rows are estimated to need more together, each run its share (e.g. 512MiB, 8GB); the heap's soft limit too"
	f.Lookup("plot").Usage = "also draw the sweep to this file (.png or .svg): of one field a panel per figure (default admitted_ratio and peak_ratio), of two a heat map of the first (default peak_ratio); the scenario as given (the file and its flags) marked"
	// The flags wrapped at 80 columns, as the text above them is.
	return cmd
}

// wrapWords joins names with ", " in lines of at most width runes.
func wrapWords(names []string, width int) []string {
	return report.Wrap(strings.Join(names, ", "), width)
}

// sweepAxis is one FIELD=VALUES: a field and its values as typed (a
// range expanded).
type sweepAxis struct {
	field  string
	values []string
}

// sweepFigure is one --figure item: check's figure or a derived one, of a
// subject ("" every client, a client, key=KEY).
type sweepFigure struct{ name, subject string }

// label is the figure as typed: "allowed", "allowed:web".
func (f sweepFigure) label() string {
	if f.subject == "" {
		return f.name
	}
	if key, ok := strings.CutPrefix(f.subject, "key="); ok && strings.ContainsAny(key, `,"`) {
		return f.name + ":key=" + strconv.Quote(key)
	}
	if strings.ContainsAny(f.subject, `,"`) {
		return f.name + ":" + strconv.Quote(f.subject)
	}
	return f.name + ":" + f.subject
}

// sweepRunPlan is one run of a sweep: its values, one per field. Its
// scenario is made from them when it is needed (sweepPlan.scenarioOf)
// and dropped after: 256 scenarios of 20,000 clients held at once are
// gigabytes.
type sweepRunPlan struct {
	values []string
}

// sweepPlan is what `ratelim sweep` runs, checked and bounded.
type sweepPlan struct {
	// file is the scenario file with the flags' settings in it when they
	// fit it alone (given), else as read: the flags are then read with
	// each run's values only, as `sim --servers 3 --set
	// 'faults[0].groups=[[0],[1,2]]'` reads them together.
	file *scenarios.File
	// sc is file's scenario: the scenario as given (the file and its
	// flags) when given, else the file's as written, for its name alone.
	sc      sim.Scenario
	given   bool
	base    []scenarios.Setting // the flags' settings, every run's
	by      string              // how errors name the sweep (sweepBy)
	axes    []sweepAxis
	figures []sweepFigure // nil: the default columns
	runs    []sweepRunPlan
	// current is the run whose scenario is the scenario as given, the
	// file and its flags; -1 when no run is (or the flags fit no scenario
	// without a run's values).
	current int
	simOpts sim.Options // each run's: MaxMemory its share
	// maxMemory is --max-memory, all the runs' at once and the rows.
	maxMemory int64
	// note is said on stderr before the runs: runs at a coarser step.
	note    string
	workers int
}

// fields are the plan's fields, in the order typed.
func (p *sweepPlan) fields() []string {
	fields := make([]string, len(p.axes))
	for i, a := range p.axes {
		fields[i] = a.field
	}
	return fields
}

// parseAxis reads one FIELD=VALUES argument; by names the sweep (sweepBy).
func parseAxis(arg, by string) (sweepAxis, error) {
	name, list, ok := strings.Cut(arg, "=")
	name = strings.TrimSpace(name)
	if dashed := strings.ReplaceAll(name, "_", "-"); slices.Contains(scenarios.OverrideNames(), dashed) {
		// sync_interval is the flag's sync-interval, as --sweep reads it.
		name = dashed
	}
	if !ok || name == "" {
		return sweepAxis{}, badInput("%q: want FIELD=VALUES, e.g. servers=1..8 or sync-interval=0,10ms,never", arg)
	}
	if err := checkAxisField(name, by); err != nil {
		return sweepAxis{}, err
	}
	values, err := expandValues(sweepBy(by, name), list, maxSweepValues)
	if err != nil {
		return sweepAxis{}, err
	}
	return sweepAxis{field: name, values: values}, nil
}

// checkAxisField refuses a field the sweep cannot set, before its file is
// read: one scenarios.Apply would not take, with its did-you-mean.
func checkAxisField(name, by string) error {
	if err := scenarios.CheckSettingName(name); err != nil {
		return badInput("%s: %v", strings.TrimSpace(sweepBy(by, "")), err)
	}
	return nil
}

// applyAxis returns the scenario of file with the flags' overrides (over)
// and each field set to its value, through scenarios.Apply: read by the
// field's own reader, in the file's tree, and refused as the file's field
// would be, naming "sweep FIELD" (sweepBy: by sim "--sweep FIELD"), or
// the flag.
func applyAxis(file *scenarios.File, base []scenarios.Setting, by string, fields, values []string) (sim.Scenario, error) {
	sets := slices.Clone(base)
	for i, f := range fields {
		sets = append(sets, scenarios.Setting{Name: f, Value: values[i], Flag: sweepBy(by, f)})
	}
	next, err := scenarios.Apply(file, sets)
	if err != nil {
		return sim.Scenario{}, usageError{err}
	}
	return next.Scenario, nil
}

// parseFigures reads --figure: NAME[:SUBJECT],..., each a check figure
// or a derived one, none twice.
func parseFigures(text string) ([]sweepFigure, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	names := append(scenarios.FigureNames(), derivedFigures...)
	var figs []sweepFigure
	items, err := splitFigures(text)
	if err != nil {
		return nil, err
	}
	for _, item := range items {
		name, subject, hasSubject := strings.Cut(strings.TrimSpace(item), ":")
		if name == "" {
			return nil, badInput("--figure: an empty figure in %q (want NAME[:CLIENT|:key=KEY],...)", text)
		}
		if subject, err = unquoteSubject(subject); err != nil {
			return nil, badInput("--figure %s: %v", escape.Text(strings.TrimSpace(item)), err)
		}
		if hasSubject && (subject == "" || subject == "key=") {
			return nil, badInput("--figure %s: no subject after the colon (want %s:CLIENT or %s:key=KEY, or %s alone for every client)", escape.Text(strings.TrimSpace(item)), name, name, name)
		}
		if !slices.Contains(names, name) {
			return nil, badInput("--figure: unknown figure %q (want one of %s)", name, words.OneOf(names))
		}
		f := sweepFigure{name: name, subject: subject}
		if slices.Contains(figs, f) {
			return nil, badInput("--figure: %s given twice (want each figure once)", escape.Text(f.label()))
		}
		figs = append(figs, f)
	}
	return figs, nil
}

// splitFigures splits --figure at its commas outside double quotes: a
// client or key whose name has a comma is named quoted, allowed:"a,b".
func splitFigures(text string) ([]string, error) {
	var items []string
	quoted, escaped, start := false, false, 0
	for i, r := range text {
		switch {
		case escaped:
			escaped = false
		case quoted && r == '\\':
			escaped = true
		case r == '"':
			quoted = !quoted
		case r == ',' && !quoted:
			items = append(items, text[start:i])
			start = i + 1
		}
	}
	if quoted {
		return nil, badInput("--figure: %q has a quote not closed (want NAME:\"CLIENT, WITH COMMA\")", text)
	}
	return append(items, text[start:]), nil
}

// unquoteSubject is a --figure subject as named: CLIENT, key=KEY, or
// either quoted as Go quotes ("a,b", key="a,b").
func unquoteSubject(subject string) (string, error) {
	prefix, name := "", subject
	if rest, ok := strings.CutPrefix(subject, "key="); ok {
		prefix, name = "key=", rest
	}
	if !strings.HasPrefix(name, `"`) {
		return subject, nil
	}
	unquoted, err := strconv.Unquote(name)
	if err != nil {
		return "", fmt.Errorf("%s is not a quoted name (want \"NAME\", a quote inside as \\\")", name)
	}
	return prefix + unquoted, nil
}

// planSweepCmd is planSweep without a context to stop it.
func planSweepCmd(opts *sweepOptions) (*sweepPlan, error) {
	return planSweep(context.Background(), opts)
}

// planSweep checks opts and plans every run, running nothing: every
// flag, value and figure is refused here, and a sweep too big for its
// bounds too. Cancelling ctx stops it between runs' scenarios.
func planSweep(ctx context.Context, opts *sweepOptions) (*sweepPlan, error) {
	if err := checkOutputFlags(opts.Format, &opts.Plot); err != nil {
		return nil, err
	}
	if opts.Plot.format == "gif" {
		return nil, badInput("--plot: a sweep draws a still chart; write it as .png or .svg")
	}
	p := &sweepPlan{current: -1, by: opts.by}
	for _, arg := range opts.Axes {
		a, err := parseAxis(arg, opts.by)
		if err != nil {
			return nil, err
		}
		// A field given twice, or by a flag too, is checkOnePlace's to
		// refuse, in one wording.
		p.axes = append(p.axes, a)
	}
	runs := 1
	for _, a := range p.axes {
		runs *= len(a.values)
	}
	if runs > maxSweepRuns {
		return nil, badInput("sweep: %s makes %d runs (want at most %d: fewer values)", strings.Join(p.fields(), " × "), runs, maxSweepRuns)
	}
	var err error
	if p.figures, err = parseFigures(opts.Figures); err != nil {
		return nil, err
	}
	if opts.Plot.Path != "" && len(p.axes) == 1 && len(p.figures) > maxPlotFigures {
		return nil, badInput("--plot: %d figures (want at most %d, a panel each; the table and --format show any number)", len(p.figures), maxPlotFigures)
	}
	limits := opts.Limits
	// The bounds are the whole sweep's (checkSweepSize): the heap is held
	// under --max-memory for every run at once, not each.
	limits.parallel = false
	if p.simOpts, err = limits.apply(); err != nil {
		return nil, err
	}
	p.workers = opts.Limits.Workers
	if p.workers == 0 {
		p.workers = runtime.GOMAXPROCS(0)
	}
	p.workers = min(p.workers, runs)
	// No state series: a row keeps none, in any format (the plot draws
	// the rows).
	p.simOpts.StateOf = func(string) bool { return false }
	if p.base, err = opts.over.settings(); err != nil {
		return nil, err
	}
	if err := p.open(opts); err != nil {
		return nil, err
	}
	if err := p.checkOnePlace(opts.over); err != nil {
		return nil, err
	}
	// A run too big for its share of memory at the file's step is run at
	// a coarser one, as sim runs it; a step asked for (a flag, or swept)
	// is kept, and such a sweep refused.
	p.simOpts.FitStep = true
	for _, s := range p.base {
		p.simOpts.FitStep = p.simOpts.FitStep && fieldOf(p.file, s.Name) != "step"
	}
	for _, a := range p.axes {
		p.simOpts.FitStep = p.simOpts.FitStep && fieldOf(p.file, a.field) != "step"
	}
	// Each run is held to its share of --max-memory, the runs at once
	// together to all of it (sweepSize).
	p.maxMemory = p.simOpts.MaxMemory
	p.simOpts.MaxMemory = max(p.maxMemory/int64(p.workers), 1)
	if err := p.planRuns(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

// open reads the scenario file with the flags' settings (p.base), as sim
// reads it, or, when they do not fit the file alone, without them: a
// --set that fits only with a swept value (--set
// 'faults[0].groups=[[0],[1,2]]' over servers=3) is read with each run's
// values (applyAxis), as sim reads it with --servers 3, and refused only
// where a run's values do not make it fit. The file's own error is the
// file's, as sim gives it. Standard input is read once, for both.
func (p *sweepPlan) open(opts *sweepOptions) error {
	read := func(sets []scenarios.Setting) (*scenarios.File, error) {
		return scenarios.OpenWith(opts.Scenario, sets)
	}
	if opts.Scenario == "-" {
		if opts.In == nil {
			return badInput("-: no standard input to read the scenario from")
		}
		data, err := io.ReadAll(io.LimitReader(opts.In, scenarios.MaxFileSize+1))
		if err != nil {
			return fmt.Errorf("stdin: %w", err)
		}
		read = func(sets []scenarios.Setting) (*scenarios.File, error) {
			return scenarios.ReadWith("stdin", bytes.NewReader(data), sets)
		}
	}
	file, err := read(p.base)
	if err == nil {
		p.file, p.sc, p.given = file, file.Scenario, true
		return nil
	}
	if len(p.base) == 0 {
		return usageError{err}
	}
	plain, plainErr := read(nil)
	if plainErr != nil {
		return usageError{plainErr}
	}
	p.file, p.sc = plain, plain.Scenario
	return nil
}

// setError is the error of run i's settings: as Apply gives it when it
// names a swept field, else (a flag's) with the run's values, which the
// flag did not fit.
func (p *sweepPlan) setError(i int, err error) error {
	var se *scenarios.Error
	if errors.As(err, &se) && strings.HasPrefix(se.Field, sweepBy(p.by, "")) {
		return err
	}
	return usageError{fmt.Errorf("%s with %s: %w", scenarioLabel(p.file), runLabel(p.fields(), p.runs[i].values), err)}
}

// checkOnePlace refuses two axes, or an axis and a flag (--set, --burst,
// ...), that set one field, or one a part of the other's (limit and
// limit.burst): scenarios.Apply sets the flags' names after the paths
// whatever their order, so a row would be labelled with a value its run
// did not have. Names are compared as the fields they set in the file
// (scenarios.SettingTarget: burst is limit.burst, clients[web] is
// clients[0]), and a flag for the whole scenario as every field it sets
// (wholeFields): --shadow and --algorithm each limit's of a file of
// limits:, --duration each fault's start and end, which it cuts to the
// run.
func (p *sweepPlan) checkOnePlace(over overrides) error {
	base, err := over.settings()
	if err != nil {
		return err
	}
	type placed struct {
		keys []string
		how  string
	}
	var seen []placed
	for _, s := range base {
		seen = append(seen, placed{append([]string{fieldOf(p.file, s.Name)}, wholeFields(s.Name, true)...), s.Flag})
	}
	for _, a := range p.axes {
		keys := append([]string{fieldOf(p.file, a.field)}, wholeFields(a.field, false)...)
		for _, o := range seen {
			for _, k := range keys {
				if slices.ContainsFunc(o.keys, func(ok string) bool { return overlaps(k, ok) }) {
					return badInput("%s: also set as %s (want the field in one place)", sweepBy(p.by, a.field), o.how)
				}
			}
		}
		seen = append(seen, placed{keys, sweepBy(p.by, a.field)})
	}
	return nil
}

// wholeFields are the fields of the file a setting for the whole
// scenario sets besides its own (limit.shadow): --shadow and --algorithm
// every limit's of a file of limits: ("limits[*].shadow", [*] any
// entry), and a flag's --duration (flag) every fault's start and end,
// which a shorter run cuts; nil for any other name.
func wholeFields(name string, flag bool) []string {
	switch canon := strings.ReplaceAll(name, "_", "-"); {
	case canon == "shadow" || canon == "algorithm":
		return []string{"limits[*]." + canon}
	case canon == "duration" && flag:
		return []string{"faults[*].start", "faults[*].end"}
	}
	return nil
}

// pathStep is one step of a field's path: a name, or an entry "[0]" ("[*]"
// any).
var pathStep = regexp.MustCompile(`\[[^\]]*\]|[^.\[\]]+`)

// overlaps reports whether fields a and b are one, or one holds the
// other (limit holds limit.burst, faults[0] faults[*].end): their steps
// alike as far as the shorter goes, an entry [*] alike any entry.
func overlaps(a, b string) bool {
	as, bs := pathStep.FindAllString(a, -1), pathStep.FindAllString(b, -1)
	if len(as) > len(bs) {
		as, bs = bs, as
	}
	for i, x := range as {
		switch y := bs[i]; {
		case x == y:
		case x == "[*]" && strings.HasPrefix(y, "["), y == "[*]" && strings.HasPrefix(x, "["):
		default:
			return false
		}
	}
	return len(as) > 0
}

// planRuns lists every run, the first field's values outer, and reads
// each run's scenario once, in order, for what the plan must know before
// any run starts: its size (checkSweepSize: refused as soon as the runs
// so far are over a bound, not after all 256 are made), two values of a
// field that give one run ("100ms" and "0.1s", which would be a row
// twice), the run that is the scenario as the flags give it, and the
// --figure subjects each distinct set of clients and keys has. Only a
// digest of each scenario is kept.
func (p *sweepPlan) planRuns(ctx context.Context) error {
	fields := p.fields()
	var walk func(i int, prefix []string)
	walk = func(i int, prefix []string) {
		if i == len(p.axes) {
			p.runs = append(p.runs, sweepRunPlan{values: slices.Clone(prefix)})
			return
		}
		for _, v := range p.axes[i].values {
			walk(i+1, append(prefix, v))
		}
	}
	walk(0, nil)
	var own digest
	if p.given {
		own = scenarioDigest(p.sc)
	}
	digests := make([]digest, len(p.runs))
	size := newSweepSize(scenarioLabel(p.file), len(p.runs), p.simOpts, p.maxMemory, p.workers)
	size.swept = p.sweptFields()
	defer func() { p.note = size.note() }()
	subjects := map[digest]bool{} // the clients and keys already checked
	for i, run := range p.runs {
		if err := ctx.Err(); err != nil {
			return err
		}
		sc, err := p.scenarioOf(i)
		if err != nil {
			return p.setError(i, err)
		}
		if err := size.add(runLabel(fields, run.values), sc); err != nil {
			return err
		}
		digests[i] = scenarioDigest(sc)
		for j, prev := range p.runs[:i] {
			// Two values of one field giving one run: the runs that
			// differ in one field's value are compared, not every pair
			// (256 runs of 10,000 clients each would be 32,640).
			if oneApart(prev.values, run.values) && digests[j] == digests[i] {
				return badInput("%s: %s runs the scenario %s does (want each value once)", sweepBy(p.by, strings.Join(fields, ", ")), runLabel(fields, run.values), runLabel(fields, prev.values))
			}
		}
		if p.current < 0 && p.given && digests[i] == own {
			p.current = i
		}
		if p.figures != nil {
			if err := p.checkFigures(sc, subjects); err != nil {
				return err
			}
		}
	}
	return nil
}

// scenarioOf is run i's scenario: the file with the flags' settings and
// the run's values, through scenarios.Apply.
func (p *sweepPlan) scenarioOf(i int) (sim.Scenario, error) {
	return applyAxis(p.file, p.base, p.by, p.fields(), p.runs[i].values)
}

// sweptFields are the fields the plan's axes set, as the file names them
// (fieldOf: step, duration, limit.burst).
func (p *sweepPlan) sweptFields() map[string]bool {
	swept := map[string]bool{}
	for _, a := range p.axes {
		swept[fieldOf(p.file, a.field)] = true
	}
	return swept
}

// oneApart reports whether a and b differ in exactly one value.
func oneApart(a, b []string) bool {
	n := 0
	for i := range a {
		if a[i] != b[i] {
			n++
		}
	}
	return n == 1
}

// runLabel names a run in messages: "servers 4", "servers 4, burst 10".
func runLabel(fields, values []string) string {
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = f + " " + sweepLabel(f, values[i])
	}
	return strings.Join(parts, ", ")
}

// checkFigures refuses, before any run, a figure whose subject sc has
// not, or a figure its subject has not: each is read from a result of
// sc's clients and keys with every count 0. A set of clients and keys
// seen already (in checked) is not checked again: most sweeps change
// neither.
func (p *sweepPlan) checkFigures(sc sim.Scenario, checked map[digest]bool) error {
	r := &sim.Result{Scenario: sc.Name, DurationS: sc.Duration.Seconds()}
	seen := map[string]bool{}
	for _, c := range sc.Clients {
		key := sim.KeyOf(c, sc.Limit.Key)
		r.Clients = append(r.Clients, sim.ClientResult{Name: c.Name, Key: key})
		if !seen[key] {
			seen[key] = true
			r.Keys = append(r.Keys, sim.KeyResult{Key: key})
		}
	}
	d := scenarioDigest([]any{r.Scenario, r.Clients, r.Keys})
	if checked[d] {
		return nil
	}
	checked[d] = true
	for _, f := range p.figures {
		if _, err := sweepFigureOf(r, f); err != nil {
			return badInput("--figure %s: %v", escape.Text(f.label()), strings.TrimPrefix(err.Error(), "figure: "))
		}
	}
	return nil
}

// sweepFigureOf is f of r: check's figure (scenarios.Figure), or a
// derived one; NaN for a ratio of nothing.
func sweepFigureOf(r *sim.Result, f sweepFigure) (float64, error) {
	ratio := func(num, den string) (float64, error) {
		n, err := scenarios.Figure(r, num, f.subject)
		if err != nil {
			return 0, err
		}
		d, err := scenarios.Figure(r, den, f.subject)
		if err != nil || d == 0 {
			return math.NaN(), err
		}
		return n / d, nil
	}
	switch f.name {
	case "admitted_ratio":
		return ratio("allowed", "ideal_allowed")
	case "peak_ratio":
		if f.subject == "" {
			// The worst key's, as the default table's ÷ exact.
			var row SweepRow
			row.summarise(r)
			if row.IdealMaxAllowed1s == 0 {
				return math.NaN(), nil
			}
			return row.PeakRatio, nil
		}
		return ratio("max_allowed_1s", "ideal_max_allowed_1s")
	case "rejected_pct":
		v, err := ratio("rejected", "sent")
		return 100 * v, err
	}
	return scenarios.Figure(r, f.name, f.subject)
}

// sweepSize adds a sweep's runs up as they are planned, and refuses,
// before any run starts, a sweep whose runs' requests are over
// opts.MaxRequests (sim.Estimate: the first tries; each run still checks
// its own retries as it starts), or whose runs need more memory than
// --max-memory allows: each run its share (maxMemory ÷ workers, what
// sim.Run holds it to), at a coarser step where sim would run it at one
// (opts.FitStep), and the workers largest, the most in flight at once,
// and every run's row together all of it. The need is sim.MemoryNeed's
// for a run with no state series, which no row keeps. The sums only grow
// as runs are added, so a sweep is refused at the first run that takes
// it over.
type sweepSize struct {
	label     string
	runs      int
	opts      sim.Options
	maxMemory int64
	workers   int
	added     int
	requests  int64
	largest   []int64 // the workers largest runs' memory so far, largest first
	rows      int64   // the rows' memory so far
	// coarsened runs are run at a coarser step, up to to, not from.
	coarsened int
	from, to  time.Duration
	// swept are the fields the sweep sets (as fieldOf names them): the
	// advice of a refusal names no flag of one (--step, --duration).
	swept map[string]bool
}

// advice is what a refusal suggests: the things given, less a flag of a
// field the sweep sets ("step", "duration"), which its values set.
func (z *sweepSize) advice(things ...string) string {
	return andOr(z.kept(things...))
}

// kept are things less those offering a flag of a field the sweep sets.
func (z *sweepSize) kept(things ...string) []string {
	var kept []string
	for _, t := range things {
		if f, ok := strings.CutPrefix(t[strings.LastIndex(t, " ")+1:], "--"); !ok || !z.swept[f] {
			kept = append(kept, t)
		}
	}
	return kept
}

// andOr joins items as a sentence offers them: "a", "a or b", "a, b or
// c".
func andOr(items []string) string {
	if len(items) <= 1 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}

// note is what the plan tells stderr: runs at a coarser step than the
// file's, which no total shows ("" for none).
func (z *sweepSize) note() string {
	if z.coarsened == 0 {
		return ""
	}
	return fmt.Sprintf("%s: %s at a step of up to %s, not %s, to fit --max-memory %s (every total is the same at any step; --step %s refuses instead)",
		z.label, words.Count(z.coarsened, "run", "runs"), words.Duration(z.to), words.Duration(z.from), words.Bytes(z.maxMemory), words.Duration(z.from))
}

func newSweepSize(label string, runs int, opts sim.Options, maxMemory int64, workers int) *sweepSize {
	return &sweepSize{label: label, runs: runs, opts: opts, maxMemory: maxMemory, workers: max(workers, 1)}
}

// add counts sc, the next run (named run in messages), and refuses the
// sweep if it is now over.
func (z *sweepSize) add(run string, sc sim.Scenario) error {
	z.added++
	z.requests = sat.Add(z.requests, sim.Estimate(sc))
	if z.requests > z.opts.MaxRequests {
		detail := fmt.Sprintf("would send about %s requests in its %d runs together, more than %s", words.Thousands(z.requests), z.runs, words.Thousands(z.opts.MaxRequests))
		if z.added < z.runs {
			detail = fmt.Sprintf("would send more than %s requests in its %d runs: about %s in the first %s", words.Thousands(z.opts.MaxRequests), z.runs, words.Thousands(z.requests), words.Count(z.added, "run", "runs"))
			if z.added == 1 {
				detail = fmt.Sprintf("would send more than %s requests in its %d runs: about %s in the first run", words.Thousands(z.opts.MaxRequests), z.runs, words.Thousands(z.requests))
			}
		}
		return &sim.TooBigError{Err: sim.ErrBudget, Scenario: z.label, Option: "MaxRequests",
			Detail: detail, Advice: strings.Join(z.kept("fewer values", "a shorter --duration"), ", ")}
	}
	share := z.opts.MaxMemory
	m, fits := sim.MemoryNeed(sc, z.opts.StateOf, share)
	if m > share {
		if fits == 0 || !z.opts.FitStep {
			advice := z.advice("a lower --parallel", "a longer --step", "a shorter --duration")
			if fits > 0 && !z.swept["step"] {
				advice = fmt.Sprintf("a lower --parallel, or a longer --step: %s fits, every total the same", words.Duration(fits))
			}
			return &sim.TooBigError{Err: sim.ErrMemory, Scenario: z.label, Option: "MaxMemory",
				Detail: fmt.Sprintf("with %s would need about %s of memory, more than its share of %s: %s for %s at once", run, words.Bytes(m), words.Bytes(z.maxMemory), words.Bytes(share), words.Count(z.workers, "run", "runs")),
				Advice: advice}
		}
		z.coarsened, z.from, z.to = z.coarsened+1, sc.Step, max(z.to, fits)
		sc.Step = fits
		m, _ = sim.MemoryNeed(sc, z.opts.StateOf, share)
	}
	z.largest = append(z.largest, m)
	slices.SortFunc(z.largest, func(a, b int64) int { return cmp.Compare(b, a) })
	z.largest = z.largest[:min(len(z.largest), z.workers)]
	// Every run's row is kept to the end, a summary of its result (no
	// timeline): an upper bound for the runs not in flight.
	z.rows = sat.Add(z.rows, sweepRowBytes(sc))
	var inFlight int64
	for _, m := range z.largest {
		inFlight = sat.Add(inFlight, m)
	}
	if total := sat.Add(inFlight, z.rows); total > z.maxMemory {
		return &sim.TooBigError{Err: sim.ErrMemory, Scenario: z.label, Option: "MaxMemory",
			Detail: fmt.Sprintf("would need about %s of memory for %s at once (the largest %s) and the rows of %d, more than %s", words.Bytes(total), words.Count(len(z.largest), "run", "runs"), words.Bytes(z.largest[0]), z.added, words.Bytes(z.maxMemory)),
			Advice: z.advice("a lower --parallel", "a longer --step", "a shorter --duration")}
	}
	return nil
}

// sweepRowBytes is about what a run's row keeps: its Result without the
// timeline, a ClientResult and a KeyResult per client (at most one key
// each) with their names, and the row's own fields.
func sweepRowBytes(sc sim.Scenario) int64 {
	perClient := int64(unsafe.Sizeof(sim.ClientResult{})+unsafe.Sizeof(sim.KeyResult{})) + rowNameBytes
	return sat.Add(int64(unsafe.Sizeof(SweepRow{})+unsafe.Sizeof(sim.Result{}))+rowFixedBytes, sat.Mul(int64(len(sc.Clients)), perClient))
}

// rowNameBytes is a client's name and key, twice (the client's and the
// key's), with their string headers: generous for names of a few dozen
// bytes. rowFixedBytes is a row's findings, events and log lines.
const rowNameBytes, rowFixedBytes = 256, 16 << 10

func sweepRun(ctx context.Context, opts *sweepOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	p, err := planSweep(ctx, opts)
	if err != nil {
		return err
	}
	if p.note != "" && !opts.Quiet {
		fmt.Fprintf(opts.ErrOut, "ratelim: %s\n", escape.Text(p.note))
	}
	rows, err := p.run(ctx, opts)
	if err != nil {
		return err
	}
	return p.write(opts, rows)
}

// run makes every run of p, workers at once, and its row as it ends:
// the default figures, and --figure's read from the whole result (the
// timeline included, which the row's Result then leaves out); the
// result is dropped then. Rows and errors are by run, whatever order the
// runs end in.
func (p *sweepPlan) run(ctx context.Context, opts *sweepOptions) ([]SweepRow, error) {
	fields := p.fields()
	rows := make([]SweepRow, len(p.runs))
	errs := make([]error, len(p.runs))    // a run's own
	figErrs := make([]error, len(p.runs)) // a --figure its result has not
	runSweep(ctx, opts.progress(), len(p.runs), p.scenarioOf, p.simOpts, p.workers, func(i int, r *sim.Result, err error) {
		// No run fills the file's expectations: each sets its fields as a
		// flag does, and `sim` checks them only for the file as written
		// (`sim X --servers 4` leaves them out, whatever X's servers).
		if err != nil {
			errs[i] = err
			return
		}
		for _, f := range p.figures {
			v, err := sweepFigureOf(r, f)
			if err != nil {
				figErrs[i] = usageError{fmt.Errorf("--figure %s: %w", escape.Text(f.label()), err)}
				return
			}
			rows[i].Figures = append(rows[i].Figures, finite(v))
		}
		rows[i].summarise(r)
	})
	label := scenarioLabel(p.file)
	for i, err := range errs {
		run := p.runs[i]
		if err := runError(opts.ErrOut, label+" with "+runLabel(fields, run.values), err); err != nil {
			return nil, err
		}
		if figErrs[i] != nil {
			return nil, figErrs[i]
		}
		labels := make([]string, len(fields))
		for j, f := range fields {
			labels[j] = sweepLabel(f, run.values[j])
		}
		rows[i].Value, rows[i].Values = strings.Join(labels, " · "), labels
	}
	return rows, nil
}

// progress is the sweep's progress line on stderr, shown as
// showsProgress says.
func (o *sweepOptions) progress() *progress {
	return newProgress(o.ErrOut, showsProgress(o.ErrIsTerminal, o.Quiet), "simulating")
}

// showsProgress reports whether a sweep shows its progress line: on a
// terminal (stderr), unless -q, whatever --format: the line is on
// stderr, the JSON or CSV on stdout, and a long sweep to a file is the
// one that most wants it.
func showsProgress(errIsTerminal, quiet bool) bool { return errIsTerminal && !quiet }

// fieldOf is the field a setting's name sets in f (scenarios.SettingTarget),
// or the name as typed when it names none: Apply refuses that one with
// the file's message when the run is made.
func fieldOf(f *scenarios.File, name string) string {
	if target, err := scenarios.SettingTarget(f, name); err == nil {
		return target
	}
	return name
}
