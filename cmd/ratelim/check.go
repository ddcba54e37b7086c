package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ratelim/ratelim/internal/escape"
	"github.com/ratelim/ratelim/internal/outfile"
	"github.com/ratelim/ratelim/live"
	"github.com/ratelim/ratelim/report"
	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/sim"
)

type checkOptions struct {
	streams
	// ErrIsTerminal says whether ErrOut is a terminal, where a live
	// run's progress goes.
	ErrIsTerminal bool
	Paths         []string
	Builtins      bool
	JUnit         string
	Format        string
	Store         string
	Limits        runLimits
	// Live: the servers to send the scenarios' clients to, instead of
	// simulating them (checktarget.go).
	Live liveTargets
}

func newCmdCheck(s streams, runF func(*checkOptions) error) *cobra.Command {
	opts := &checkOptions{streams: s, ErrIsTerminal: isTerminal(s.ErrOut)}
	cmd := &cobra.Command{
		Use:   "check [FILE|DIR|NAME ...] [--builtins] [--target URL[,URL...]]",
		Short: "Run scenarios and check their expect: lines (exit 1 on a failure)",
		Long: `Run each scenario given (a directory means its *.yaml files, a name a
built-in; --builtins adds every built-in) and check its expect: lines
against the result. Naming nothing is an error (exit 2), so that an empty
list in a CI script fails rather than checks something else. Each
expectation prints ok or FAIL with the figure it got; a glob subject
("bastion-*") is checked for each client it matches. An expectation with
with: runs the scenario again with those overrides.

With --target, each scenario's clients are sent for real, over HTTP, to
the servers given (your service: the scenario's servers: count is replaced
by the number of targets, which its balancer spreads the requests over),
one run after another, each taking the scenario's duration; the expect:
lines are checked on what was observed. On a synced, two-tier or owner
topology the targets are the servers its design counts (each with its own
jar, local tier or node); a regions topology is skipped, as a live run
cannot place the targets in its regions. A scenario the targets' count
makes invalid is refused before anything is sent.

` + liveCheckHelp + `

A file that cannot be checked (malformed, or its run over a bound) prints
ERROR and is an errored test case in --junit; the other files still run,
and the JUnit report is written whatever they found; for a bad flag
too, as one errored case, once --junit names a path it can write.

--junit - writes the JUnit XML to standard output, and then the ok, FAIL
and ERROR lines and the summary go to standard error, so that standard
output is one XML document a tool can read (with --format json, which
also wants standard output, give --junit a file).

Exit status, the worst seen when files differ (4 > 2 > 3 > 1 > 0):
  0    every expectation holds (or, live, was skipped, and some held)
  1    an expectation failed, or, live, every one was skipped: nothing
       checked
  2    a file or an expectation is malformed (named with file and line),
       a bad flag, nothing named to check, or a --junit path that cannot
       be created
  3    a run is over --max-requests or --max-memory
  4    an internal or store error, a --target nothing listens on (each
       is connected to, TCP only, before any run: none is made), one that
       answered no request (not an HTTP server: the runs after it are not
       made), a
       run answered with a status no rate limit gives (not 2xx, 429 or
       503: a wrong --path?), or the JUnit report failed part way
  130  interrupted (nothing is printed, no report is written)`,
		Example: `  ratelim check --builtins
  ratelim check scenarios/ --junit report.xml
  ratelim check my-limits.yaml --format json
  ratelim check my-limits.yaml --target http://127.0.0.1:8080 --junit report.xml`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths = args
			opts.Live.Given = cmd.Flags().Changed("target")
			if opts.Live.on() && !cmd.Flags().Changed("max-requests") {
				// A live run's bound, as load's: real requests cost
				// real time.
				opts.Limits.MaxRequests = live.DefaultMaxRequests
			}
			if runF != nil {
				return runF(opts)
			}
			return checkRun(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.Builtins, "builtins", false, "check every built-in scenario (with any files named)")
	f.StringVar(&opts.JUnit, "junit", "", "also write a JUnit XML report to this file (written even when a file cannot be checked); - for standard output, the lines then on standard error")
	f.StringVar(&opts.Format, "format", "text", "output: text or json")
	f.StringVar(&opts.Store, "store", "", "run every scenario on this store: memory, miniredis or redis://host:port")
	addLimitFlags(f, &opts.Limits, true)
	addLiveCheckFlags(f, &opts.Live)
	return cmd
}

// checkJob is one run a check needs: a scenario, with one with: variant.
type checkJob struct {
	entry int // the index of its checkEntry
	file  *scenarios.File
	label string
	with  map[string]string
	exps  []*scenarios.Expectation
}

// checkEntry is one scenario a check was asked for, in the order named:
// its file, or what kept it from being opened or planned. An entry with an
// error is reported as one errored case and runs nothing; the others run.
type checkEntry struct {
	label string
	file  *scenarios.File // nil when it could not be opened
	err   error
}

// checkLine is one outcome as reported: an expectation checked on one
// subject, or (Error set) one that could not be checked.
type checkLine struct {
	File    string  `json:"file"`
	Line    int     `json:"line"`
	Text    string  `json:"text"`
	Subject string  `json:"subject"`
	Got     float64 `json:"got"`
	OK      bool    `json:"ok"`
	// Error says why it could not be checked: the file is malformed, or
	// its run failed or was over a bound. Added to v1; such a line is
	// never OK, so a reader that does not know the field counts it failed.
	Error string `json:"error,omitempty"`
	// Skipped says why a live check (--target) could not check it: what
	// it bounds is not observed of a service. Added to v1; such a line
	// is never OK.
	Skipped string `json:"skipped,omitempty"`
	// name is its JUnit test case: the claim and its with:, never the
	// line, so that an edit that moves lines keeps the case's history.
	name    string
	outcome scenarios.Outcome
}

// checkPlan is what `ratelim check` runs: a scenario per job, each job
// one file's expectations that share a with:.
type checkPlan struct {
	entries []checkEntry
	files   []*scenarios.File // the entries planned, which run
	jobs    []checkJob
	scs     []sim.Scenario
	simOpts sim.Options
	// live is the plan of a live check (--target), nil for a simulated
	// one.
	live *livePlan
}

// errNothingToCheck is a check that names nothing: an empty $FILES in a CI
// script must fail, not check something else and pass.
var errNothingToCheck = badInput("nothing to check: name scenario files, directories or built-ins (e.g. ratelim check scenarios/), or pass --builtins to check every built-in")

// planCheck checks opts, opens the files and makes each job's scenario,
// running nothing. A bad flag is its error; a file that cannot be opened
// or planned is its entry's error, so that the others still run.
func planCheck(opts *checkOptions) (*checkPlan, error) {
	if err := checkFormat(opts.Format, "text", "json"); err != nil {
		return nil, err
	}
	if opts.Format == "json" && outfile.IsStdout(opts.JUnit) {
		return nil, badInput("--junit %s: standard output carries the --format json report (want --junit FILE, or --format text)", opts.JUnit)
	}
	simOpts, err := opts.Limits.apply()
	if err != nil {
		return nil, err
	}
	if err := checkLiveFlags(opts); err != nil {
		return nil, err
	}
	if len(opts.Paths) == 0 && !opts.Builtins {
		return nil, errNothingToCheck
	}
	p := &checkPlan{entries: checkEntries(opts.Paths, opts.Builtins, opts.In), simOpts: simOpts}
	// A --store that cannot be read is the flag's fault, not a file's: it
	// is refused once, read on the first file that opened, as sim's is.
	for _, e := range p.entries {
		if e.err == nil && opts.Store != "" {
			if _, err := scenarios.Override(e.file.Scenario, map[string]string{"store": opts.Store}, scenarios.FlagField); err != nil {
				return nil, usageError{err}
			}
			break
		}
	}
	for i := range p.entries {
		e := &p.entries[i]
		if e.err != nil {
			continue
		}
		jobs, scs, err := planFile(i, e.file, opts.Store)
		if err != nil {
			e.err = err
			continue
		}
		p.files = append(p.files, e.file)
		p.jobs = append(p.jobs, jobs...)
		p.scs = append(p.scs, scs...)
	}
	if opts.Live.on() {
		if p.live, err = planLive(opts, p); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// planFile makes the runs of one file's expectations: one per with:.
func planFile(entry int, f *scenarios.File, store string) ([]checkJob, []sim.Scenario, error) {
	label := scenarioLabel(f)
	if store != "" {
		// Read as the file's topology.store is, and as sim's --store.
		if _, err := scenarios.Override(f.Scenario, map[string]string{"store": store}, scenarios.FlagField); err != nil {
			return nil, nil, usageError{err}
		}
	}
	groups := map[string]*checkJob{}
	first := map[string]int{} // the first expectation of each with:, by which errors name it
	var order []string
	for i := range f.Expect {
		e := &f.Expect[i]
		id := withID(f, e.With)
		if groups[id] == nil {
			groups[id] = &checkJob{entry: entry, file: f, label: label, with: e.With}
			first[id] = i
			order = append(order, id)
		}
		groups[id].exps = append(groups[id].exps, e)
	}
	var jobs []checkJob
	var scs []sim.Scenario
	for _, id := range order {
		job := groups[id]
		// --store first, so that a with: store: takes its place; a with:
		// path (limit.burst) is set in the file and read again.
		var sets []scenarios.Setting
		if store != "" {
			sets = append(sets, scenarios.Setting{Name: "store", Value: store, Flag: "--store"})
		}
		for _, k := range slices.Sorted(maps.Keys(job.with)) {
			// Named as the file's reader names it: expect[2].with.limit.burst.
			sets = append(sets, scenarios.Setting{Name: k, Value: job.with[k], Flag: fmt.Sprintf("expect[%d].with.%s", f.Expect[first[id]].Index, k)})
		}
		run, err := scenarios.Apply(f, sets)
		if err != nil {
			// In the file's form: FILE:LINE: FIELD: what is wrong.
			var fe *scenarios.Error
			if errors.As(err, &fe) {
				err = &scenarios.Error{File: label, Line: job.exps[0].Line, Field: fe.Field, Msg: fe.Msg}
			} else {
				err = fmt.Errorf("%s:%d: %w", label, job.exps[0].Line, err)
			}
			return nil, nil, usageError{err}
		}
		jobs = append(jobs, *job)
		scs = append(scs, run.Scenario)
	}
	return jobs, scs, nil
}

// checkRun plans the check, runs every job, and reports each entry's
// lines in the order named: as JSON, or as a line each for people (to
// standard error when the JUnit XML takes standard output); --junit writes
// the XML besides. It exits as the worst error, or 1 when an expectation
// failed.
func checkRun(ctx context.Context, opts *checkOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	p, err := planCheck(opts)
	if err != nil {
		return flagErrorReport(opts, err)
	}
	// With the JUnit on standard output, the lines for people go to
	// standard error: one document on stdout, which a tool can parse.
	lineOut := opts.Out
	if outfile.IsStdout(opts.JUnit) || opts.Format == "json" {
		lineOut = opts.ErrOut
	}
	var results []*sim.Result
	var runErrs []error
	if p.live != nil {
		if results, runErrs, err = runLive(ctx, opts, p, lineOut); err != nil {
			return err // interrupted: nothing printed, no report
		}
	} else {
		results, runErrs = sim.RunAll(ctx, p.scs, p.simOpts, opts.Limits.Workers)
		if ctx.Err() != nil {
			for _, err := range runErrs {
				if errors.Is(err, context.Canceled) {
					return err
				}
			}
		}
	}
	perEntry, errs := checkOutcomes(opts.ErrOut, p, results, runErrs)
	lines, n := orderLines(perEntry)
	if opts.JUnit != "" {
		if err := writeOutput(opts.JUnit, opts.Out, func(w io.Writer) error { return writeJUnit(w, p.entries, perEntry) }); err != nil {
			errs = append(errs, err)
		}
	}
	if opts.Format == "json" {
		if err := writeCheckJSON(opts.Out, lines, n); err != nil {
			return err
		}
	} else {
		writeCheckLines(lineOut, p.entries, lines, n)
	}
	if len(errs) > 0 {
		return worstError(errs)
	}
	if n.failed > 0 {
		return errChecksFailed
	}
	if n.passed == 0 && n.skipped > 0 {
		return errNothingChecked
	}
	return nil
}

// flagErrorReport writes, for a check refused before it ran anything (a
// bad flag, nothing named), a JUnit report of one errored case that says
// why, when --junit names a path it can use: a CI system that reads the
// report then shows the error, not a missing file. It returns err, which
// the caller exits with; a report that could not be written is said on
// standard error besides.
func flagErrorReport(opts *checkOptions, err error) error {
	if opts.JUnit == "" || (opts.Format == "json" && outfile.IsStdout(opts.JUnit)) {
		return err // no report asked for, or its path is the flags' error
	}
	const label = "ratelim check"
	entries := []checkEntry{{label: label, err: err}}
	lines := [][]checkLine{{{File: label, Text: "flags", Error: errorText(err), name: "flags"}}}
	if werr := writeOutput(opts.JUnit, opts.Out, func(w io.Writer) error { return writeJUnit(w, entries, lines) }); werr != nil {
		fmt.Fprintf(opts.ErrOut, "ratelim: --junit: the report of the error below was not written: %s\n", escape.Text(errorText(werr)))
	}
	return err
}

// checkOutcomes evaluates each job's expectations on its result, and
// returns each entry's lines (not yet in line order: orderLines sorts
// them) and the errors of the entries and runs that could not be checked,
// each of which is a line too. A run's error is reported on errOut.
func checkOutcomes(errOut io.Writer, p *checkPlan, results []*sim.Result, runErrs []error) (perEntry [][]checkLine, errs []error) {
	perEntry = make([][]checkLine, len(p.entries))
	failLine := func(entry int, l checkLine, err error) {
		l.Error = errorText(err)
		if !strings.HasPrefix(l.Error, l.File) {
			l.Error = l.File + ": " + l.Error
		}
		perEntry[entry] = append(perEntry[entry], l)
		errs = append(errs, err)
	}
	for i, e := range p.entries {
		if e.err != nil {
			failLine(i, checkLine{File: e.label, Text: "scenario file", name: "scenario file"}, e.err)
		}
	}
	for i, job := range p.jobs {
		with := withText(job.with)
		if p.live != nil && p.live.skips[i] != "" {
			// Not run: every expectation of the job says why.
			for _, e := range job.exps {
				perEntry[job.entry] = append(perEntry[job.entry], skipLine(job, e, p.live.skips[i]))
			}
			continue
		}
		if err := runError(errOut, job.label, runErrs[i]); err != nil {
			l := checkLine{File: job.label, Text: "run" + with, name: "run" + with}
			if len(job.with) > 0 {
				l.Line = job.exps[0].Line
			}
			failLine(job.entry, l, err)
			continue
		}
		for _, e := range job.exps {
			if p.live != nil {
				if why := p.live.check.Skip(e); why != "" {
					perEntry[job.entry] = append(perEntry[job.entry], skipLine(job, e, why))
					continue
				}
			}
			outs, err := scenarios.Evaluate(job.label, e, results[i])
			if err != nil {
				// e.Text ends with its with: already.
				failLine(job.entry, checkLine{File: job.label, Line: e.Line, Text: e.Text, name: e.Text}, usageError{err})
				continue
			}
			for _, o := range outs {
				perEntry[job.entry] = append(perEntry[job.entry], checkLine{
					File: job.label, Line: e.Line, Text: o.String(), Subject: o.Subject, Got: o.Got, OK: o.OK,
					name: o.Claim() + with, outcome: o,
				})
			}
		}
	}
	return perEntry, errs
}

// checkCounts are a check's lines by outcome.
type checkCounts struct{ passed, failed, errored, skipped int }

// orderLines sorts each entry's lines by line in its file (whatever job
// each came from), in place, and returns them all, entry by entry in
// the order named, and counted.
func orderLines(perEntry [][]checkLine) ([]checkLine, checkCounts) {
	var lines []checkLine
	var n checkCounts
	for i := range perEntry {
		sort.SliceStable(perEntry[i], func(a, b int) bool { return perEntry[i][a].Line < perEntry[i][b].Line })
		for _, l := range perEntry[i] {
			switch {
			case l.Error != "":
				n.errored++
			case l.Skipped != "":
				n.skipped++
			case l.OK:
				n.passed++
			default:
				n.failed++
			}
		}
		lines = append(lines, perEntry[i]...)
	}
	return lines, n
}

// writeCheckJSON writes the lines as one ratelim.check/v1 document.
func writeCheckJSON(w io.Writer, lines []checkLine, n checkCounts) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if lines == nil {
		lines = []checkLine{}
	}
	return enc.Encode(struct {
		Schema  string      `json:"schema"`
		Passed  int         `json:"passed"`
		Failed  int         `json:"failed"`
		Errors  int         `json:"errors"`
		Skipped int         `json:"skipped,omitempty"` // added to v1, by a live check
		Results []checkLine `json:"results"`
	}{"ratelim.check/v1", n.passed, n.failed, n.errored, n.skipped, lines})
}

// writeCheckLines writes a line per outcome for people (ok, FAIL or
// ERROR), a note for each file with nothing to check, and the counts.
func writeCheckLines(w io.Writer, entries []checkEntry, lines []checkLine, n checkCounts) {
	// A line names its file and the clients it matched: input, shown
	// escaped.
	for _, l := range lines {
		switch {
		case l.Error != "":
			// Its text names the file and may quote what was in it:
			// input, escaped as the other lines' names are.
			fmt.Fprintf(w, "ERROR %s\n", escape.Text(l.Error))
		case l.Skipped != "":
			// The reason, often long, under the line and within 80
			// columns.
			fmt.Fprintf(w, "skip %s:%d: %s\n", escape.Text(l.File), l.Line, escape.Text(l.Text))
			for _, line := range report.Wrap("not checked: "+escape.Text(l.Skipped), 78) {
				fmt.Fprintf(w, "  %s\n", line)
			}
		case l.OK:
			fmt.Fprintf(w, "ok   %s:%d: %s\n", escape.Text(l.File), l.Line, escape.Text(l.Text))
		default:
			fmt.Fprintf(w, "FAIL %s:%d: %s\n", escape.Text(l.File), l.Line, escape.Text(l.Text))
		}
	}
	for _, e := range entries {
		if e.err == nil && len(e.file.Expect) == 0 {
			fmt.Fprintf(w, "note %s: no expect: lines, nothing checked\n", escape.Text(e.label))
		}
	}
	fmt.Fprintf(w, "%d passed, %d failed", n.passed, n.failed)
	if n.skipped > 0 {
		fmt.Fprintf(w, ", %d skipped", n.skipped)
	}
	if n.errored > 0 {
		fmt.Fprintf(w, ", %d could not be checked", n.errored)
	}
	fmt.Fprintln(w)
}

// errChecksFailed is returned when an expectation failed: exit 1, and the
// lines above have said which.
var errChecksFailed = errors.New("some expectations failed")

// errNothingChecked is a check whose every expectation was skipped (a
// live check that could observe none of what they bound): exit 1, as a
// failure, since a CI job that checked nothing must not pass.
var errNothingChecked error = nothingChecked{}

type nothingChecked struct{}

func (nothingChecked) Error() string { return "nothing checked: every expectation was skipped" }

// Is makes it exit as errChecksFailed does.
func (nothingChecked) Is(target error) bool { return target == errChecksFailed }

// checkSeverity orders exit codes for a check whose files ended
// differently: the worst decides the exit. An internal or store error (4)
// is worst: no result of the run can be trusted. A malformed file (2)
// comes next: it must be edited before it checks anything. A run over a
// bound (3) is a file that is right but too big for the bounds given; a
// failed expectation (1) is the check working.
func checkSeverity(code int) int {
	switch code {
	case exitInternal:
		return 4
	case exitBadInput:
		return 3
	case exitTooBig:
		return 2
	case exitFailed:
		return 1
	}
	return 0
}

// checkErrors are the errors of a check's files, all printed as ERROR
// lines; it exits as the worst of them.
type checkErrors struct {
	errs  []error
	worst error
}

// Error is the summary on standard error after the lines: it names a
// file, input, escaped as its ERROR line is.
func (e checkErrors) Error() string {
	if len(e.errs) == 1 {
		return escape.Text(errorText(e.worst))
	}
	return fmt.Sprintf("%d checks could not run (each an ERROR in the results); the worst: %s", len(e.errs), escape.Text(errorText(e.worst)))
}

func (e checkErrors) Unwrap() error { return e.worst }

// worstError is errs as one error that exits with the worst of their
// codes (the first of those, in the order named).
func worstError(errs []error) error {
	worst := errs[0]
	for _, err := range errs[1:] {
		if checkSeverity(exitCode(context.Background(), err)) > checkSeverity(exitCode(context.Background(), worst)) {
			worst = err
		}
	}
	return checkErrors{errs: errs, worst: worst}
}

// checkEntries opens what the arguments name, in order: files,
// directories of *.yaml, built-in names, - for a scenario on stdin; and,
// with builtins, every built-in first.
func checkEntries(paths []string, builtins bool, stdin io.Reader) []checkEntry {
	var names []string
	if builtins {
		names = scenarios.Builtin()
	}
	var entries []checkEntry
	open := func(n string) {
		var f *scenarios.File
		var err error
		if n == "-" {
			if stdin == nil {
				entries = append(entries, checkEntry{label: "stdin", err: badInput("-: no standard input to read the scenario from")})
				return
			}
			f, err = scenarios.Read("stdin", stdin)
			stdin = nil // read once
		} else {
			f, err = scenarios.Open(n)
		}
		if err != nil {
			label := n
			if n == "-" {
				label = "stdin"
			}
			entries = append(entries, checkEntry{label: label, err: usageError{err}})
			return
		}
		entries = append(entries, checkEntry{label: scenarioLabel(f), file: f})
	}
	for _, n := range names {
		open(n)
	}
	for _, p := range paths {
		info, err := os.Stat(p)
		if err == nil && info.IsDir() {
			matches, _ := filepath.Glob(filepath.Join(p, "*.yaml"))
			yml, _ := filepath.Glob(filepath.Join(p, "*.yml"))
			matches = append(matches, yml...)
			sort.Strings(matches)
			if len(matches) == 0 {
				entries = append(entries, checkEntry{label: p, err: badInput("%s: no *.yaml files in this directory", p)})
			}
			for _, m := range matches {
				open(m)
			}
			continue
		}
		open(p)
	}
	return entries
}

// withText is a with: as a case's name ends: " with on_error=fail-closed".
func withText(with map[string]string) string {
	if len(with) == 0 {
		return ""
	}
	return " with " + strings.ReplaceAll(strings.TrimSuffix(withKeys(with), ";"), ";", ", ")
}

// withID is a canonical name of a with: map, to run each variant once:
// each key as the field it sets in f (scenarios.SettingTarget), so that
// with: {burst: 20} and with: {limit.burst: 20} are one run.
func withID(f *scenarios.File, with map[string]string) string {
	set := make(map[string]string, len(with))
	for k, v := range with {
		if t, err := scenarios.SettingTarget(f, k); err == nil {
			k = t
		}
		set[k] = v
	}
	return withKeys(set)
}

// withKeys writes a with: map as its keys sorted: k=v;k=v;.
func withKeys(with map[string]string) string {
	keys := make([]string, 0, len(with))
	for k := range with {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + "=" + with[k] + ";")
	}
	return b.String()
}
