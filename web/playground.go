package web

// The playground's run: a scenario and the settings typed over it in, and
// everything the page shows out, built by the functions `ratelim sim`
// calls (simrun, report, plots), so that the page's numbers are the CLI's
// by construction.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/dustin/go-humanize"
	"gonum.org/v1/plot/vg"

	"github.com/ratelim/ratelim/plots"
	"github.com/ratelim/ratelim/report"
	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/simrun"
)

// Bounds of a run in a browser tab. The CLI's defaults
// (sim.DefaultMaxRequests, 50 million requests; sim.DefaultMaxMemory,
// 4 GiB) are a workstation's: a tab's WebAssembly heap is a 32-bit one
// that browsers hold to a few GiB at most, and the simulator in it runs
// a few times slower than native (about a million requests a second). A
// run estimated past either bound is refused before it starts, with the
// simulator's message saying what to change; every built-in is far
// inside both (the largest, runaway-healthcheck, sends 160,102 requests
// and is estimated at 5 MiB). Requests are not the only work: the
// clients and the timeline's steps are bounded too (MaxClients,
// MaxSteps). Bounded, a run's work is bounded, not its time: nothing
// stops a run part way, and the largest a tab accepts still takes
// seconds.
const (
	MaxRequests = 2_000_000
	MaxMemory   = 256 << 20
)

// Bounds of what a State may carry. A scenario's text is at most MaxYAML
// (the built-ins are 1–3 KB; scenarios.MaxFileSize is the CLI's 4 MiB);
// a name a file is given, at most maxFileName bytes; each run's settings
// at most maxSettings, each value at most maxSettingValue bytes.
const (
	MaxYAML         = 1 << 20
	maxFileName     = 255
	maxSettings     = 64
	maxSettingValue = 4096
)

// Playground runs scenarios for the page and keeps the last run, which
// Frame cuts at an instant. The zero value is ready; it is safe for
// concurrent use, though a page calls it from one thread.
type Playground struct {
	mu   sync.Mutex
	last *sim.Result // run A of the last Run that ran, nil after a failure
	// noDrawing leaves the SVGs out, for tests that run every control's
	// every choice and look at the runs alone.
	noDrawing bool
}

// Run runs s: the scenario, run A with s.Settings (and, with s.Vs, run B
// beside it), and returns everything the page shows. It never returns
// nil, and never panics on anything a State can say: input that cannot
// be used comes back as Response.Error, with Scenario and Controls when
// the file itself read. With no settings the file's expectations are
// checked, as `ratelim sim` checks them.
func (p *Playground) Run(ctx context.Context, s State) (resp *Response) {
	if ctx == nil {
		ctx = context.Background()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last = nil
	defer func() {
		if v := recover(); v != nil {
			resp = &Response{Error: panicked(v)}
		}
	}()
	resp = &Response{}
	file, name, err := open(s)
	if err != nil {
		resp.Error = errorView(err)
		return resp
	}
	resp.Scenario = scenarioView(file, name)
	setsA, _, notice, err := runSettings(file, s)
	if err != nil {
		return failed(resp, file, err)
	}
	resp.Notice = notice
	var result bytes.Buffer
	out, err := simrun.Run(ctx, &result, simrun.Options{
		File: file, Settings: setsA, Sim: simOptions(), Layout: simrun.Layout{Format: "json"},
	})
	if err != nil || out == nil {
		return failed(resp, file, err)
	}
	fileA, r := out.File, out.Result
	resp.Controls = controls(file, fileA, setsA)
	resp.Result, resp.ResultJSON = slices.Clone(result.Bytes()), result.String()
	var table bytes.Buffer
	if err := simrun.Write(ctx, &table, fileA, r, simrun.Layout{Format: "table"}, out.Skipped); err != nil {
		return failed(resp, file, err)
	}
	resp.Table = table.String()
	resp.Headline = sim.Headline(r)
	for _, f := range r.Findings {
		resp.Findings = append(resp.Findings, FindingView{Kind: string(f.Kind), Subject: f.Client + f.Key, Text: f.Text})
	}
	resp.Expectations = expectations(fileA, r, len(setsA) > 0)
	if !p.noDrawing {
		if resp.Timeline, err = timelineSVG(r); err != nil {
			return failed(resp, file, err)
		}
	}
	resp.Command = simrun.Command(name, setsA, nil)
	resp.DurationS = r.DurationS
	resp.Scenario.DurationS, resp.Scenario.StepS = r.DurationS, r.StepS
	resp.Scenario.Clients, resp.Scenario.ClientCount = firstNames(clientNames(r))
	resp.Question = question(fileA, r)
	if len(s.Vs) > 0 {
		vs, err := versus(ctx, s, name, fileA, r, setsA, !p.noDrawing)
		if err != nil {
			return failed(resp, file, err)
		}
		resp.Vs = vs
	}
	p.last = r
	return resp
}

// runSettings are run A's settings of s on file, in the order `ratelim
// sim` applies its flags (so that the command the page shows makes
// exactly the run it made), with file as they change it; notice says
// what fit changed. The run's work is bounded before it starts: its
// clients, store and steps checked on the file as the settings change
// it, and a step too fine replaced, as a --step setting the command then
// carries.
func runSettings(file *scenarios.File, s State) (sets []scenarios.Setting, applied *scenarios.File, notice string, err error) {
	if sets, err = settings(s.Settings, flagOf); err != nil {
		return nil, nil, "", err
	}
	simrun.CLIOrder(sets)
	if applied, err = simrun.Apply(file, sets); err != nil {
		return nil, nil, "", err
	}
	given := len(sets)
	if sets, notice, err = fit(applied, sets); err != nil {
		return nil, nil, "", err
	}
	if len(sets) != given { // fit added a --step: the file it makes is another
		if applied, err = simrun.Apply(file, sets); err != nil {
			return nil, nil, "", err
		}
	}
	return sets, applied, notice, nil
}

// Check reports whether the page would run s, without running it: the
// scenario opened, the settings applied and the run's work held to the
// page's bounds (MaxClients, MaxSteps, MaxRequests…), as Run checks them
// before it starts. `ratelim web` asks before it builds the page, so that
// a scenario the page would refuse is the command line's error.
func Check(s State) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = errors.New(panicked(v).Text)
		}
	}()
	_, _, applied, err := prepare(s)
	if err != nil {
		return err
	}
	if err := sim.CheckSize(applied.Scenario, simOptions()); err != nil {
		return errors.New(errorText(err))
	}
	return nil
}

// prepare opens s's scenario and applies run A's settings, as Run does
// before it runs: the file as read, the settings as applied, and the
// file they make.
func prepare(s State) (file *scenarios.File, sets []scenarios.Setting, applied *scenarios.File, err error) {
	if file, _, err = open(s); err != nil {
		return nil, nil, nil, err
	}
	sets, applied, _, err = runSettings(file, s)
	return file, sets, applied, err
}

// ChoicesView is what Choices answers: the values of the choice control
// Name that run, or the error that kept it from finding them.
type ChoicesView struct {
	Error   *ErrorView `json:"error,omitempty"`
	Name    string     `json:"name,omitempty"`
	Choices []string   `json:"choices,omitempty"`
}

// Choices are the values of s's choice control name (a Control of kind
// "choice", as Run returned it) that run A would take with the rest of
// its settings kept: those scenarios.Apply takes and the simulator
// starts. With forB, those run B would take instead: B is run A's file
// with one setting applied after A's (simrun.Versus), which takes some
// values A's settings refuse (an algorithm that reads no window, after
// A set limit.window: the window is then the file's, not a setting).
// Run offers every value such a control's field takes, unfiltered,
// because finding which run costs a trial Apply each (api-quotas, 48
// values over two limits, was 40% of its Run), and a slider's every step
// would pay it; the page asks here when a list opens instead. Run A's
// own value is always among A's.
func (p *Playground) Choices(s State, name string, forB bool) (view *ChoicesView) {
	defer func() {
		if v := recover(); v != nil {
			view = &ChoicesView{Error: panicked(v)}
		}
	}()
	file, sets, applied, err := prepare(s)
	if err != nil {
		return &ChoicesView{Error: errorView(err)}
	}
	for _, c := range unfilteredControls(file, applied) {
		if c.Name != name || c.Kind != kindChoice {
			continue
		}
		keep := func(v string) bool { return v == c.Value || runnable(file, sets, c.Name, v) }
		if forB {
			keep = func(v string) bool { return runnableB(applied, c.Name, v) }
		}
		out := slices.DeleteFunc(c.Choices, func(v string) bool { return !keep(v) })
		return &ChoicesView{Name: name, Choices: out}
	}
	return &ChoicesView{Error: &ErrorView{Text: fmt.Sprintf("choices: %q is not a choice this run offers (want a control of kind choice)", short(name))}}
}

// WrittenView is the scenario as run A's settings write it
// (scenarios.Written): the YAML "Download YAML" saves, or why it cannot
// be written as one file.
type WrittenView struct {
	Error *ErrorView `json:"error,omitempty"`
	YAML  string     `json:"yaml,omitempty"`
}

// Written is s's scenario with run A's settings written into its YAML,
// asked when the page's Download YAML is pressed rather than made on
// every run.
func (p *Playground) Written(s State) (view *WrittenView) {
	defer func() {
		if v := recover(); v != nil {
			view = &WrittenView{Error: panicked(v)}
		}
	}()
	_, _, applied, err := prepare(s)
	if err != nil {
		return &WrittenView{Error: errorView(err)}
	}
	text, err := scenarios.Written(applied)
	if err != nil {
		return &WrittenView{Error: errorView(err)}
	}
	return &WrittenView{YAML: string(text)}
}

// panicked is a recovered panic as the page shows it: never a trace,
// and never a throw across the bridge.
func panicked(v any) *ErrorView {
	return &ErrorView{Text: fmt.Sprintf("internal error: %v", v)}
}

// failed is what a failure after file read shows: err, the scenario, and
// the file's controls, valued as the file has them.
func failed(resp *Response, file *scenarios.File, err error) *Response {
	ev := errorView(err)
	if ev.Line == 0 && resp.Scenario != nil {
		ev.File, ev.Line = lineOfFile(ev, resp.Scenario.File)
	}
	return &Response{Error: ev, Scenario: resp.Scenario, Controls: controls(file, file, nil)}
}

// open reads the scenario s names: its YAML, under its FileName, or the
// built-in it names (never a file: the page has none). name is what
// errors and the command call it.
func open(s State) (file *scenarios.File, name string, err error) {
	if s.YAML != "" {
		name = s.FileName
		if name == "" {
			name = DefaultFileName
		}
		if err := checkFileName(name); err != nil {
			return nil, "", err
		}
		if len(s.YAML) > MaxYAML {
			return nil, "", &scenarios.Error{File: name, Msg: fmt.Sprintf("%s of YAML, more than the playground reads (want at most %s; ratelim sim reads up to %s)",
				humanize.IBytes(uint64(len(s.YAML))), humanize.IBytes(MaxYAML), humanize.IBytes(scenarios.MaxFileSize))}
		}
		if err := countClients(name, []byte(s.YAML)); err != nil {
			return nil, "", err
		}
		f, err := scenarios.Parse(name, []byte(s.YAML))
		return f, name, err
	}
	if s.Builtin == "" {
		return nil, "", errors.New("no scenario (want a built-in's name, or a scenario's YAML)")
	}
	if !slices.Contains(scenarios.Builtin(), s.Builtin) {
		return nil, "", &scenarios.Error{Msg: scenarios.UnknownBuiltin(s.Builtin)}
	}
	f, err := scenarios.Open(s.Builtin)
	return f, s.Builtin, err
}

// checkFileName refuses a name for a scenario's text that would not read
// as one in a message or a command: too long, or with a control
// character (a newline would forge a line of the error).
func checkFileName(name string) error {
	if len(name) > maxFileName {
		return fmt.Errorf("file name: %d bytes (want at most %d)", len(name), maxFileName)
	}
	if i := strings.IndexFunc(name, unicode.IsControl); i >= 0 {
		return fmt.Errorf("file name: %q has a control character (want a plain file name, e.g. %s)", name, DefaultFileName)
	}
	// The command names the text by its file name, and ratelim sim reads
	// a built-in's name as the built-in, "-" as stdin and "-x" as a flag:
	// the command would not run this text.
	if slices.Contains(scenarios.Builtin(), name) {
		return fmt.Errorf("file name: %q is a built-in's name, which ratelim sim would run instead of this text (want e.g. %s.yaml)", name, name)
	}
	if strings.HasPrefix(name, "-") {
		return fmt.Errorf("file name: %q reads as %s to ratelim sim (want a name that does not start with -, e.g. %s)", name,
			map[bool]string{true: "stdin", false: "a flag"}[name == "-"], DefaultFileName)
	}
	return nil
}

// flagOf is how the command line gives a setting of run A, and so how
// its errors name it: an override name or a short form as its own flag
// (--servers, --burst), a field's path as --set PATH.
func flagOf(name string) string {
	if simrun.IsFlag(name) {
		return "--" + name
	}
	return "--set " + name
}

// settings are the page's settings as scenarios.Apply takes them, in
// the order given, each name checked and spelled as the flags spell it
// (simrun.SettingName), its flag (flagOf's, or --vs NAME) naming it in
// errors.
func settings(given []Setting, flag func(name string) string) ([]scenarios.Setting, error) {
	if len(given) > maxSettings {
		return nil, fmt.Errorf("settings: %d (want at most %d)", len(given), maxSettings)
	}
	out := make([]scenarios.Setting, 0, len(given))
	for _, g := range given {
		name := simrun.SettingName(g.Name)
		if name == "" {
			return nil, errors.New("settings: a setting with no name (want e.g. limit.burst)")
		}
		if len(name) > maxSettingValue {
			return nil, &scenarios.Error{Field: flag(short(name)), Msg: fmt.Sprintf("the name is %d bytes (want at most %d)", len(name), maxSettingValue)}
		}
		if len(g.Value) > maxSettingValue {
			return nil, &scenarios.Error{Field: flag(short(name)), Msg: fmt.Sprintf("the value is %d bytes (want at most %d)", len(g.Value), maxSettingValue)}
		}
		if err := simrun.CheckSetting(name, flag(name)); err != nil {
			return nil, err
		}
		set := scenarios.Setting{Name: name, Value: g.Value, Flag: flag(name)}
		if err := checkClientCount(set); err != nil {
			return nil, err
		}
		out = append(out, set)
	}
	return out, nil
}

// short is s cut to a length a message can hold, at a rune's start:
// a cut inside one would show as U+FFFD.
func short(s string) string {
	const most = 64
	if len(s) <= most {
		return s
	}
	cut := most
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// simOptions bound a run in the tab, as the CLI's flags bound its runs.
// A run too big for MaxMemory at its file's step was given a coarser
// step by fit, before the run, as a setting; so the simulator coarsens
// nothing (FitStep) where the page could not say so, and a run still
// too big is refused, as `ratelim sim --step` refuses it.
func simOptions() sim.Options {
	return sim.Options{MaxRequests: MaxRequests, MaxMemory: MaxMemory}
}

// errorView is err as the page shows it: the text `ratelim sim` prints
// after "ratelim: ", a scenario file's file, line and field split out.
func errorView(err error) *ErrorView {
	if err == nil {
		err = errors.New("internal error: the run gave no result")
	}
	ev := &ErrorView{Text: errorText(err)}
	var se *scenarios.Error
	if errors.As(err, &se) {
		ev.File, ev.Field = se.File, se.Field
		if se.File != "" {
			// A line is the file's: a setting's value is read as a
			// document of its own, whose line 1 no one wrote.
			ev.Line = se.Line
		}
	}
	return ev
}

// blamedLine reads the field and line of the file a setting's error
// blames, as scenarios.Apply writes them at the head of its message:
// "limits[1].burst (line 37): missing: ...".
var blamedLine = regexp.MustCompile(`^[^\s:]+ \(line ([1-9][0-9]{0,8})\): `)

// lineOfFile is the file and line a setting's error ev blames in the
// file named name, so that the page can point at the line the text
// names; "", 0 when it names none.
func lineOfFile(ev *ErrorView, name string) (string, int) {
	msg := strings.TrimPrefix(ev.Text, ev.Field+": ")
	if ev.Field == "" || msg == ev.Text {
		return ev.File, ev.Line
	}
	m := blamedLine.FindStringSubmatch(msg)
	if m == nil {
		return ev.File, ev.Line
	}
	line, err := strconv.Atoi(m[1])
	if err != nil {
		return ev.File, ev.Line
	}
	return name, line
}

// errorText is err's message, a bound of the simulator's options named
// as the playground's own: the CLI names its flag there instead.
func errorText(err error) string {
	msg := err.Error()
	var tb *sim.TooBigError
	if errors.As(err, &tb) {
		bound := map[string]string{
			"MaxRequests": fmt.Sprintf("run it with ratelim sim: the playground stops at %s requests", humanize.Comma(MaxRequests)),
			"MaxMemory":   fmt.Sprintf("run it with ratelim sim: the playground stops at %s", humanize.IBytes(MaxMemory)),
		}[tb.Option]
		if bound != "" {
			msg = strings.Replace(msg, "raise Options."+tb.Option, bound, 1)
		}
	}
	return msg
}

// scenarioView is the scenario as read, before it runs: the run fills
// in its duration, step and clients as it ran them.
func scenarioView(f *scenarios.File, name string) *ScenarioView {
	sc := f.Scenario
	v := &ScenarioView{Name: sc.Name, Summary: sc.Summary, Lesson: lessonOf(f), File: name, Source: string(f.Source),
		DurationS: sc.Duration.Seconds(), StepS: sc.Step.Seconds()}
	names := make([]string, 0, min(len(sc.Clients), maxClientNames))
	for _, c := range sc.Clients[:min(len(sc.Clients), maxClientNames)] {
		names = append(names, c.Name)
	}
	v.Clients, v.ClientCount = names, len(sc.Clients)
	return v
}

// firstNames are the first maxClientNames of names, and how many there
// are in all.
func firstNames(names []string) ([]string, int) {
	return names[:min(len(names), maxClientNames)], len(names)
}

// question is what f asks before the run, with r's answer; nil when f
// asks nothing, or when r cannot answer it (a setting that renamed its
// client): a page asks no question it cannot answer.
func question(f *scenarios.File, r *sim.Result) *QuestionView {
	q := f.Question
	if q == nil {
		return nil
	}
	a, err := q.Answer(r)
	if err != nil || math.IsNaN(a.Value) || math.IsInf(a.Value, 0) {
		return nil
	}
	// Asked of the file as run A made it: a placeholder ({limit.burst})
	// reads the value the run used, a slider's as much as the file's.
	v := &QuestionView{Ask: q.Text(f), Pick: q.Pick, Answer: AnswerView{Value: a.Value, Clients: a.Clients, AllTied: a.AllTied, Text: a.Text}}
	if q.Pick != "" {
		v.Choices = clientNames(r)
	}
	return v
}

// lessonOf is the finding kind f's lesson: names, or "".
func lessonOf(f *scenarios.File) string {
	for _, e := range f.Expect {
		if e.Figure == "lesson" {
			return string(e.Finding)
		}
	}
	return ""
}

// clientNames are r's clients' names, in order.
func clientNames(r *sim.Result) []string {
	names := make([]string, len(r.Clients))
	for i, c := range r.Clients {
		names[i] = c.Name
	}
	return names
}

// expectations are the file's expect: lines as run A checked them, and
// those that need other runs as skipped: what the table's summary
// counts. A run with settings checks none (the file's claims are about
// the file), as `ratelim sim` does.
func expectations(f *scenarios.File, r *sim.Result, changed bool) []ExpectationView {
	if changed {
		return nil
	}
	var out []ExpectationView
	for _, e := range r.Expectations {
		out = append(out, ExpectationView{Text: e.Text, OK: e.OK})
	}
	for _, e := range f.Expect {
		if len(e.With) > 0 {
			out = append(out, ExpectationView{Text: e.Text, Skipped: true})
		}
	}
	return out
}

// pageWidth is how wide the page's figures are drawn (plots draws a
// timeline 10 inches wide by default, for a file). The page fits a
// figure to its column, about 750 px at 1280×800, so the narrower it is
// drawn the larger its text shows: at 10 in the labels were 7–9 px.
// Looked at in headless Chromium at 1280×800 (7.5, 6.5 and 6 in; the
// side by side at 7.5, 9 and 10): at 7.5 in the title is about 17 px
// and a panel's text 11 px, and the side by side, drawn as wide, keeps
// its text as legible, its two plots about 125 px each (at 9 in they
// are 165 px, their text 9 px). A frame is drawn as wide as the run.
const pageWidth = vg.Length(7.5) * vg.Inch

// timelineSVG is r drawn as `ratelim sim --plot run.svg` draws it.
func timelineSVG(r *sim.Result) (string, error) {
	var b bytes.Buffer
	if err := plots.Timeline(&b, r, plots.Options{Format: "svg", Width: pageWidth}); err != nil {
		return "", err
	}
	return b.String(), nil
}

// versus is run B: run A's file with s.Vs on top, run within the same
// bounds, beside A as `ratelim sim --vs` shows the two.
func versus(ctx context.Context, s State, name string, fileA *scenarios.File, a *sim.Result, setsA []scenarios.Setting, draw bool) (*VsView, error) {
	// As given: --vs keeps its order, and labels the runs in it.
	sets, err := settings(s.Vs, func(name string) string { return "--vs " + name })
	if err != nil {
		return nil, err
	}
	vs := simrun.Versus{Settings: sets}
	fileB, err := vs.Apply(fileA)
	if err != nil {
		return nil, err
	}
	if err := checkWork(fileB); err != nil {
		return nil, err
	}
	if err := checkSteps(fileB); err != nil {
		return nil, err
	}
	b, err := sim.Run(ctx, fileB.Scenario, simOptions())
	if err != nil && !errors.As(err, new(*sim.CleanupError)) {
		return nil, fmt.Errorf("%s: %w", simrun.Label(fileA), err)
	}
	out := &VsView{}
	out.LabelA, out.LabelB = vs.Labels(fileA, fileB)
	var result, rows, svg bytes.Buffer
	if err := simrun.WriteResult(ctx, &result, b, simrun.Layout{Format: "json"}); err != nil {
		return nil, err
	}
	out.Result, out.ResultJSON = slices.Clone(result.Bytes()), result.String()
	if err := simrun.WriteVersusComparison(&rows, a, b); err != nil {
		return nil, err
	}
	out.Rows = rows.String()
	if draw {
		if err := plots.TimelineVs(&svg, a, b, out.LabelA, out.LabelB, plots.Options{Format: "svg", Width: pageWidth}); err != nil {
			return nil, err
		}
		out.Timeline = svg.String()
	}
	vsGiven := make([]string, len(sets))
	for i, st := range sets {
		vsGiven[i] = st.Name + "=" + st.Value
	}
	out.Command = simrun.Command(name, setsA, vsGiven)
	return out, nil
}

// Frame is the last run's run A as it stood at t seconds: report.Truncate
// of it, drawn on the whole run's layout and time axis, as a frame of
// `ratelim sim --plot run.gif` is, and each client's counts by then. t is
// held to [0, the run's duration] and, as Truncate does, rounded down to
// a step; T says where it was cut (before the first step ends, at 0,
// nothing drawn yet). NaN and ±Inf are refused, and so is a Frame before
// any run (or after one that failed).
func (p *Playground) Frame(t float64) (*FrameView, error) {
	if math.IsNaN(t) || math.IsInf(t, 0) {
		return nil, fmt.Errorf("frame: t is %v (want a number of seconds)", t)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.last
	if r == nil {
		return nil, errors.New("frame: no run to show (want a run first)")
	}
	t = min(max(t, 0), r.DurationS)
	cut := report.Truncate(r, t)
	drawn := cut
	if cut.DurationS < r.StepS {
		// Before the first step ends nothing is known yet; plots draws
		// whole steps, so the frame is a sliver of one, empty: the
		// run's axes with nothing on them.
		sliver := *cut
		sliver.DurationS = r.StepS / 1000
		drawn = &sliver
	}
	var svg bytes.Buffer
	if err := plots.Timeline(&svg, drawn, plots.Options{Format: "svg", Width: pageWidth, Layout: r, AxisEndS: r.DurationS}); err != nil {
		return nil, err
	}
	out := &FrameView{T: math.Round(cut.DurationS*1e6) / 1e6, Timeline: svg.String(), Clients: make([]ClientView, len(cut.Clients))}
	for i, c := range cut.Clients {
		out.Clients[i] = ClientView{Name: c.Name, Sent: c.Sent, Allowed: c.Allowed, Rejected: c.Rejected}
	}
	return out, nil
}

// Forget drops the last run, as a failed Run does: Frame then refuses
// until a run succeeds. The bridge calls it when a call to run fails
// before Run (its JSON did not read), so that the scrubber never shows a
// run the page no longer shows.
func (p *Playground) Forget() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last = nil
}

// Builtins names the built-in scenarios, sorted, each with its summary
// and lesson.
func Builtins() []BuiltinInfo { return slices.Clone(builtins()) }

var builtins = sync.OnceValue(func() []BuiltinInfo {
	var out []BuiltinInfo
	for _, name := range scenarios.Builtin() {
		f, err := scenarios.Open(name)
		if err != nil {
			continue // scenarios' tests read every built-in
		}
		out = append(out, BuiltinInfo{Name: name, Summary: f.Scenario.Summary, Lesson: lessonOf(f)})
	}
	return out
})
