package main

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/sim"
)

type checkOptions struct {
	streams
	Paths  []string
	JUnit  string
	Format string
	Store  string
	Limits runLimits
}

func newCmdCheck(s streams, runF func(*checkOptions) error) *cobra.Command {
	opts := &checkOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "check [FILE|DIR ...]",
		Short: "Run scenarios and check their expect: lines (exit 1 on any failure)",
		Long: `Run each scenario given (every built-in when none is; a directory means its
*.yaml files) and check its expect: lines against the result. Each
expectation prints ok or FAIL with the figure it got; a glob subject
("bastion-*") is checked for each client it matches. An expectation with
with: runs the scenario again with those overrides.

Exit status: 0 when every expectation holds, 1 when any fails, 2 when a file
or an expectation is malformed (named with file and line), 3 when a run is
over --max-requests or --max-memory, 4 on an internal or store error, 130
when interrupted (see 'ratelim --help').`,
		Example: `  ratelim check
  ratelim check scenarios/ --junit report.xml
  ratelim check my-limits.yaml --format json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths = args
			if runF != nil {
				return runF(opts)
			}
			return checkRun(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.JUnit, "junit", "", "also write a JUnit XML report to this file")
	f.StringVar(&opts.Format, "format", "text", "output: text or json")
	f.StringVar(&opts.Store, "store", "", "run every scenario on this store: memory, miniredis or redis://host:port")
	addLimitFlags(f, &opts.Limits, true)
	return cmd
}

// checkJob is one run a check needs: a scenario, with one with: variant.
type checkJob struct {
	file  *scenarios.File
	label string
	with  map[string]string
	exps  []*scenarios.Expectation
}

// checkLine is one outcome as reported.
type checkLine struct {
	File    string  `json:"file"`
	Line    int     `json:"line"`
	Text    string  `json:"text"`
	Subject string  `json:"subject"`
	Got     float64 `json:"got"`
	OK      bool    `json:"ok"`
	outcome scenarios.Outcome
}

// checkPlan is what `ratelim check` runs: a scenario per job, each job
// one file's expectations that share a with:.
type checkPlan struct {
	files   []*scenarios.File
	jobs    []checkJob
	scs     []sim.Scenario
	simOpts sim.Options
}

// planCheck checks opts, opens the files and makes each job's scenario,
// running nothing.
func planCheck(opts *checkOptions) (*checkPlan, error) {
	if err := checkFormat(opts.Format, "text", "json"); err != nil {
		return nil, err
	}
	simOpts, err := opts.Limits.options()
	if err != nil {
		return nil, err
	}
	files, err := checkFiles(opts.Paths, opts.In)
	if err != nil {
		return nil, err
	}
	p := &checkPlan{files: files, simOpts: simOpts}
	for _, f := range files {
		label := scenarioLabel(f)
		base := f.Scenario
		if opts.Store != "" {
			// Read as the file's topology.store is, and as sim's --store.
			if base, err = scenarios.Override(base, map[string]string{"store": opts.Store}, scenarios.FlagField); err != nil {
				return nil, usageError{err}
			}
		}
		groups := map[string]*checkJob{}
		var order []string
		for i := range f.Expect {
			e := &f.Expect[i]
			id := withID(e.With)
			if groups[id] == nil {
				groups[id] = &checkJob{file: f, label: label, with: e.With}
				order = append(order, id)
			}
			groups[id].exps = append(groups[id].exps, e)
		}
		for _, id := range order {
			job := groups[id]
			sc, err := scenarios.Override(base, job.with, func(name string) string { return "with." + name })
			if err != nil {
				return nil, usageError{fmt.Errorf("%s:%d: %w", label, job.exps[0].Line, err)}
			}
			p.jobs = append(p.jobs, *job)
			p.scs = append(p.scs, sc)
		}
	}
	return p, nil
}

func checkRun(ctx context.Context, opts *checkOptions) error {
	p, err := planCheck(opts)
	if err != nil {
		return err
	}
	files, jobs, scs, simOpts := p.files, p.jobs, p.scs, p.simOpts
	results, errs := sim.RunAll(ctx, scs, simOpts, opts.Limits.Workers)
	var lines []checkLine
	suites := map[string][]checkLine{}
	var suiteOrder []string
	for i, job := range jobs {
		if err := runError(opts.ErrOut, job.label, errs[i]); err != nil {
			return err
		}
		for _, e := range job.exps {
			outs, err := scenarios.Evaluate(job.label, e, results[i])
			if err != nil {
				return usageError{err}
			}
			for _, o := range outs {
				l := checkLine{File: job.label, Line: e.Line, Text: o.String(), Subject: o.Subject, Got: o.Got, OK: o.OK, outcome: o}
				lines = append(lines, l)
				if _, seen := suites[job.label]; !seen {
					suiteOrder = append(suiteOrder, job.label)
				}
				suites[job.label] = append(suites[job.label], l)
			}
		}
	}
	// Lines in file order, then line order, whatever order runs finished in.
	sort.SliceStable(lines, func(i, j int) bool {
		if lines[i].File != lines[j].File {
			return fileIndex(files, lines[i].File) < fileIndex(files, lines[j].File)
		}
		return lines[i].Line < lines[j].Line
	})
	passed, failed := 0, 0
	for _, l := range lines {
		if l.OK {
			passed++
		} else {
			failed++
		}
	}
	if opts.JUnit != "" {
		if err := writeOutput(opts.JUnit, opts.Out, func(w io.Writer) error { return writeJUnit(w, suiteOrder, suites) }); err != nil {
			return err
		}
	}
	if opts.Format == "json" {
		enc := json.NewEncoder(opts.Out)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if lines == nil {
			lines = []checkLine{}
		}
		if err := enc.Encode(struct {
			Schema  string      `json:"schema"`
			Passed  int         `json:"passed"`
			Failed  int         `json:"failed"`
			Results []checkLine `json:"results"`
		}{"ratelim.check/v1", passed, failed, lines}); err != nil {
			return err
		}
	} else {
		for _, l := range lines {
			verdict := "ok  "
			if !l.OK {
				verdict = "FAIL"
			}
			fmt.Fprintf(opts.Out, "%s %s:%d: %s\n", verdict, l.File, l.Line, l.Text)
		}
		for _, f := range files {
			if len(f.Expect) == 0 {
				fmt.Fprintf(opts.Out, "note %s: no expect: lines, nothing checked\n", scenarioLabel(f))
			}
		}
		fmt.Fprintf(opts.Out, "%d passed, %d failed\n", passed, failed)
	}
	if failed > 0 {
		return errChecksFailed
	}
	return nil
}

// errChecksFailed is returned when an expectation failed: exit 1, and the
// lines above have said which.
var errChecksFailed = errors.New("some expectations failed")

func fileIndex(files []*scenarios.File, label string) int {
	for i, f := range files {
		if scenarioLabel(f) == label {
			return i
		}
	}
	return len(files)
}

// checkFiles opens what the arguments name: files, directories of *.yaml,
// - for a scenario on stdin, or, with none, every built-in.
func checkFiles(paths []string, stdin io.Reader) ([]*scenarios.File, error) {
	var names []string
	if len(paths) == 0 {
		names = scenarios.Builtin()
	}
	for _, p := range paths {
		info, err := os.Stat(p)
		if err == nil && info.IsDir() {
			matches, _ := filepath.Glob(filepath.Join(p, "*.yaml"))
			yml, _ := filepath.Glob(filepath.Join(p, "*.yml"))
			matches = append(matches, yml...)
			sort.Strings(matches)
			if len(matches) == 0 {
				return nil, badInput("%s: no *.yaml files in this directory", p)
			}
			names = append(names, matches...)
			continue
		}
		names = append(names, p)
	}
	var files []*scenarios.File
	for _, n := range names {
		var f *scenarios.File
		var err error
		if n == "-" {
			if stdin == nil {
				return nil, badInput("-: no standard input to read the scenario from")
			}
			f, err = scenarios.Read("stdin", stdin)
			stdin = nil // read once
		} else {
			f, err = scenarios.Open(n)
		}
		if err != nil {
			return nil, usageError{err}
		}
		files = append(files, f)
	}
	return files, nil
}

// withID is a canonical name of a with: map, to run each variant once.
func withID(with map[string]string) string {
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

// The JUnit XML schema that CI systems read: a testsuite per scenario, a
// testcase per checked expectation, a failure element for each that failed.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Timestamp string      `xml:"timestamp,attr,omitempty"`
	Cases     []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Body    string `xml:",chardata"`
}

func writeJUnit(w io.Writer, order []string, suites map[string][]checkLine) error {
	doc := junitSuites{}
	for _, name := range order {
		s := junitSuite{Name: name}
		for _, l := range suites[name] {
			// The case is named by its claim, not what it got, so that a
			// CI system tracks one case across runs whose figures change.
			c := junitCase{Name: fmt.Sprintf("%s:%d: %s", l.File, l.Line, l.outcome.Claim()), Classname: strings.TrimSuffix(filepath.Base(name), ".yaml")}
			if !l.OK {
				got := l.outcome.GotText
				if got == "" {
					got = strconv.FormatFloat(l.Got, 'g', -1, 64)
				}
				c.Failure = &junitFailure{Message: "got " + got, Body: l.Text}
				s.Failures++
			}
			s.Cases = append(s.Cases, c)
			s.Tests++
		}
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Suites = append(doc.Suites, s)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// fillExpectations evaluates the file's expect: lines that need no other
// run (no with:) on r, records them in r.Expectations, and returns how many
// failed and were skipped. A malformed expectation is bad input.
func fillExpectations(file *scenarios.File, r *sim.Result) (failed, skipped int, err error) {
	label := scenarioLabel(file)
	for i := range file.Expect {
		e := &file.Expect[i]
		if len(e.With) > 0 {
			skipped++
			continue
		}
		outs, err := scenarios.Evaluate(label, e, r)
		if err != nil {
			return 0, 0, usageError{err}
		}
		for _, o := range outs {
			r.Expectations = append(r.Expectations, sim.ExpectationResult{Text: o.Claim(), OK: o.OK, Got: o.Got, Found: o.GotText})
			if !o.OK {
				failed++
			}
		}
	}
	return failed, skipped, nil
}

// otherRuns says that n expectations were not checked because their with:
// asks for other runs: "1 more needs other runs (with: …)".
func otherRuns(n int) string {
	if n == 1 {
		return "1 more needs other runs (with: …)"
	}
	return fmt.Sprintf("%d more need other runs (with: …)", n)
}

// writeExpectations is the table's summary of r.Expectations: a count, and
// each one that failed.
func writeExpectations(w io.Writer, r *sim.Result, skipped int) {
	if len(r.Expectations) == 0 && skipped == 0 {
		return
	}
	ok := 0
	for _, e := range r.Expectations {
		if e.OK {
			ok++
		}
	}
	fmt.Fprintf(w, "\nexpect: %d of %d hold", ok, len(r.Expectations))
	if skipped > 0 {
		fmt.Fprintf(w, "; %s: ratelim check", otherRuns(skipped))
	}
	fmt.Fprintln(w)
	for _, e := range r.Expectations {
		if !e.OK {
			fmt.Fprintf(w, "  FAIL %s (got %s)\n", e.Text, e.GotText())
		}
	}
}
