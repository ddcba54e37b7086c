package main

import (
	"bytes"
	"context"
	"math"
	"os"
	"reflect"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ratelim/ratelim/sim"
)

// The argv tests (this file, argv_sim_test.go, argv_live_test.go) test
// argv → options, as cli/cli's delete_test.go does for each verb: a
// command line goes through the real root (its flags, its usage errors,
// its exit codes) to runners that record the options and make the
// command's plan, and never run it. No simulation runs and no server
// starts; options → output is tested in the other files. Per command:
// argv → options, every flag given in some case (everyFlagTested);
// argv → plan, what the command would run; and the refusals, exit code
// and message.

// parsed is what one command line came to: the options the command would
// have run with (as cobra filled them, before the plan checked them), its
// plan, and the exit code and stderr of run.
type parsed struct {
	code   int
	stdout string
	stderr string

	algorithms *algorithmsOptions
	scenarios  *scenariosOptions
	sim        *simOptions
	simPlan    *simPlan
	sweep      *sweepOptions
	sweepPlan  *sweepPlan
	compare    *compareOptions
	comparePl  *comparePlan
	check      *checkOptions
	checkPlan  *checkPlan
	report     *reportOptions
	reportPlan *reportPlan
	serve      *serveOptions
	servePlan  *servePlan
	load       *loadOptions
	loadPlan   *loadPlan
	web        *webOptions
	webPlan    *webPlan
}

// parseArgs runs args as ratelim would, with each command's run replaced
// by its plan (the listings of algorithms and scenarios, which run
// nothing, are printed as they are). stdin is standard input.
func parseArgs(stdin string, args ...string) *parsed {
	p := &parsed{}
	// Each runner records a copy of o as cobra filled it (a plan may
	// change o) without its streams, which every want would otherwise
	// have to build the same.
	r := runners{
		algorithms: func(o *algorithmsOptions) error {
			c := *o
			c.streams, p.algorithms = streams{}, &c
			return algorithmsRun(o)
		},
		scenarios: func(o *scenariosOptions) error {
			c := *o
			c.streams, p.scenarios = streams{}, &c
			return scenariosRun(o)
		},
		sim: func(o *simOptions) (err error) {
			c := *o
			c.streams, p.sim = streams{}, &c
			p.simPlan, err = planSim(o)
			return err
		},
		sweep: func(o *sweepOptions) (err error) {
			c := *o
			c.streams, p.sweep = streams{}, &c
			p.sweepPlan, err = planSweepCmd(o)
			return err
		},
		compare: func(o *compareOptions) (err error) {
			c := *o
			c.streams, p.compare = streams{}, &c
			p.comparePl, err = planCompare(o)
			return err
		},
		check: func(o *checkOptions) (err error) {
			c := *o
			c.streams, p.check = streams{}, &c
			p.checkPlan, err = planCheck(o)
			return err
		},
		report: func(o *reportOptions) (err error) {
			c := *o
			c.streams, p.report = streams{}, &c
			p.reportPlan, err = planReport(o)
			return err
		},
		serve: func(o *serveOptions) (err error) {
			c := *o
			c.streams, p.serve = streams{}, &c
			p.servePlan, err = planServe(o)
			return err
		},
		load: func(o *loadOptions) (err error) {
			c := *o
			c.streams, p.load = streams{}, &c
			p.loadPlan, err = planLoad(o)
			return err
		},
		web: func(o *webOptions) (err error) {
			c := *o
			c.streams, p.web = streams{}, &c
			p.webPlan, err = planWeb(o)
			return err
		},
	}
	var out, errOut bytes.Buffer
	p.code = runWith(context.Background(), args, streams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut}, r)
	p.stdout, p.stderr = out.String(), errOut.String()
	return p
}

// argv splits a command line written as one string; no test value has a
// space in it.
func argv(line string) []string { return strings.Fields(line) }

// defaultLimits are the --max-requests, --max-memory and --parallel a
// command runs with when they are not given.
func defaultLimits() runLimits {
	return runLimits{MaxRequests: sim.DefaultMaxRequests, MaxMemory: humanize.IBytes(sim.DefaultMaxMemory)}
}

// parallelLimits are defaultLimits on a command with --parallel.
func parallelLimits() runLimits {
	l := defaultLimits()
	l.parallel = true
	return l
}

// noOverrides are the override flags of a command line that gives none.
func noOverrides() overrides { return overrides{set: map[string]string{}} }

// sameOptions fails the test when got is not want, printing both.
func sameOptions[T any](t *testing.T, line string, got *T, want T) {
	t.Helper()
	if got == nil {
		t.Errorf("%s: the command did not run (the line was refused before its options were made)", line)
		return
	}
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("%s:\n got options %+v\nwant options %+v", line, *got, want)
	}
}

// everyFlagTested fails the test when a flag of cmd is not given on any of
// lines: a flag added without an argv case is a flag whose field nobody
// checked.
func everyFlagTested(t *testing.T, cmd *cobra.Command, lines []string) {
	t.Helper()
	given := map[string]bool{}
	for _, line := range lines {
		for _, arg := range argv(line) {
			name, _, _ := strings.Cut(arg, "=")
			given[name] = true
		}
	}
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Name == "help" {
			return
		}
		if !given["--"+f.Name] && (f.Shorthand == "" || !given["-"+f.Shorthand]) {
			t.Errorf("%s --%s: no argv case gives it", cmd.Name(), f.Name)
		}
		if f.Shorthand != "" && !given["-"+f.Shorthand] {
			t.Errorf("%s -%s: no argv case gives the shorthand of --%s", cmd.Name(), f.Shorthand, f.Name)
		}
	})
}

// argvCase is a command line and the options it must give: want changes
// the command's defaults into them.
type argvCase[T any] struct {
	line string
	want func(*T)
	// code is the exit code, when the plan refuses what was parsed.
	code int
}

// testArgv runs each case's line and compares its options with defaults
// changed by want, then checks that every flag of cmd was given.
func testArgv[T any](t *testing.T, cmd *cobra.Command, defaults func() T, got func(*parsed) *T, cases []argvCase[T]) {
	t.Helper()
	var lines []string
	for _, tt := range cases {
		lines = append(lines, tt.line)
		p := parseArgs("", argv(tt.line)...)
		if p.code != tt.code {
			t.Errorf("%s: exit %d, want %d; stderr %q", tt.line, p.code, tt.code, p.stderr)
		}
		want := defaults()
		if tt.want != nil {
			tt.want(&want)
		}
		sameOptions(t, tt.line, got(p), want)
	}
	everyFlagTested(t, cmd, lines)
}

// planCase is a command line and what its plan must hold: what the
// command would run, checked without running it.
type planCase struct {
	line  string
	stdin string
	check func(t *testing.T, p *parsed)
}

func testPlans(t *testing.T, cases []planCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.line, func(t *testing.T) {
			p := parseArgs(tt.stdin, argv(tt.line)...)
			if p.code != exitOK {
				t.Fatalf("exit %d, stderr %q", p.code, p.stderr)
			}
			tt.check(t, p)
		})
	}
}

// simBounds are the simulator's options the flags set; the others (a
// progress callback, an observer) are the command's.
type simBounds struct{ MaxRequests, MaxMemory int64 }

func boundsOf(o sim.Options) simBounds { return simBounds{o.MaxRequests, o.MaxMemory} }

// defaultBounds are the simulator's bounds when no flag sets them.
var defaultBounds = simBounds{sim.DefaultMaxRequests, sim.DefaultMaxMemory}

// A refusal is a command line that is bad input: its exit code and what
// its message must say (the flag, and the value where it is one).
type refusal struct {
	line string
	code int
	want []string
}

// testRefusals runs each line to its plan and checks that it is refused
// with its code, one sentence naming what to fix, and the usage hint,
// with nothing on stdout. Nothing runs whether it is refused or not.
func testRefusals(t *testing.T, cases []refusal) {
	t.Helper()
	for _, tt := range cases {
		p := parseArgs("", argv(tt.line)...)
		if p.code != tt.code {
			t.Errorf("%s: exit %d, want %d; stderr %q", tt.line, p.code, tt.code, p.stderr)
			continue
		}
		if p.stdout != "" {
			t.Errorf("%s: printed to stdout: %q", tt.line, p.stdout)
		}
		if !strings.HasPrefix(p.stderr, "ratelim: ") || !strings.HasSuffix(p.stderr, "\nRun 'ratelim --help' for usage.\n") || strings.Count(p.stderr, "\n") != 2 {
			t.Errorf("%s: stderr %q, want one sentence and the usage hint", tt.line, p.stderr)
		}
		for _, w := range tt.want {
			if !strings.Contains(p.stderr, w) {
				t.Errorf("%s: stderr %q does not say %q", tt.line, p.stderr, w)
			}
		}
	}
}

func TestAlgorithmsArgvToOptions(t *testing.T) {
	testArgv(t, newCmdAlgorithms(streams{}, nil),
		func() algorithmsOptions { return algorithmsOptions{Format: "table"} },
		func(p *parsed) *algorithmsOptions { return p.algorithms },
		[]argvCase[algorithmsOptions]{
			{line: "algorithms"},
			{line: "algorithms --format json", want: func(o *algorithmsOptions) { o.Format = "json" }},
			{line: "algorithms --format=json", want: func(o *algorithmsOptions) { o.Format = "json" }},
		})
}

func TestScenariosArgvToOptionsThroughRoot(t *testing.T) {
	testArgv(t, newCmdScenarios(streams{}, nil),
		func() scenariosOptions { return scenariosOptions{} },
		func(p *parsed) *scenariosOptions { return p.scenarios },
		[]argvCase[scenariosOptions]{
			{line: "scenarios"},
			{line: "scenarios list"},
			{line: "scenarios show nat", want: func(o *scenariosOptions) { o.Show = "nat" }},
		})
}

func TestListingsRefuseBadFlags(t *testing.T) {
	testRefusals(t, []refusal{
		{"algorithms --format xml", exitBadInput, []string{"--format", `"xml"`}},
		{"algorithms --format", exitBadInput, []string{"--format", "needs an argument"}},
		{"algorithms extra", exitBadInput, []string{`unknown command "extra"`}},
		{"algorithms --servers 3", exitBadInput, []string{"unknown flag: --servers"}},
		{"scenarios show", exitBadInput, []string{"accepts 1 arg"}},
		{"scenarios show nope", exitBadInput, []string{`"nope"`, "window-boundary"}},
		{"scenarios list extra", exitBadInput, []string{`unknown command "extra"`}},
		{"scenarios --format json", exitBadInput, []string{"unknown flag: --format"}},
	})
}

// --max-memory is the Go runtime's soft memory limit too, in the program
// (not in the other tests), for the runs at once: the estimate counts what a run holds live and a quarter more,
// which holds only if the collector works to stay under the bound rather
// than let the heap grow to twice what is live.
func TestMaxMemoryHoldsTheHeap(t *testing.T) {
	if os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOMEMLIMIT is set: the command leaves the limit it chose")
	}
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	// As the program holds it (main); the other tests leave it alone.
	setMemoryLimit = debug.SetMemoryLimit
	defer func() { setMemoryLimit = nil }()
	for _, tt := range []struct {
		limits runLimits
		want   int64
	}{
		{runLimits{MaxRequests: 1, MaxMemory: "64MiB"}, 64 << 20},
		{runLimits{MaxRequests: 1, MaxMemory: "64MiB", Workers: 3, parallel: true}, 3 * 64 << 20},
		{runLimits{MaxRequests: 1, MaxMemory: "64MiB", parallel: true}, int64(runtime.GOMAXPROCS(0)) * 64 << 20},
		{runLimits{MaxRequests: 1, MaxMemory: "8EiB", Workers: 4, parallel: true}, math.MaxInt64},
	} {
		if _, err := tt.limits.apply(); err != nil {
			t.Fatal(err)
		}
		if got := debug.SetMemoryLimit(-1); got != tt.want {
			t.Errorf("%+v: memory limit %d, want %d", tt.limits, got, tt.want)
		}
	}
}
