package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ratelim/ratelim/internal/escape"
	"github.com/ratelim/ratelim/internal/outfile"
	"github.com/ratelim/ratelim/plots"
	"github.com/ratelim/ratelim/report"
	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/simrun"
)

// reportOptions are `ratelim report`'s flags.
type reportOptions struct {
	streams
	Scenario string
	// Output is the file to write, or "-" for Out.
	Output string
	// Image is the figure's format inside the page: png or svg.
	Image  string
	Limits runLimits
	Plot   plotFlags
	// ErrIsTerminal says whether ErrOut is a terminal, where progress goes.
	ErrIsTerminal bool
	// Vs are the --vs FIELD=VALUE flags: a second run beside the first.
	Vs []string

	over overrides
}

func newCmdReport(s streams, runF func(*reportOptions) error) *cobra.Command {
	opts := &reportOptions{streams: s, ErrIsTerminal: isTerminal(s.ErrOut)}
	cmd := &cobra.Command{
		Use:   "report SCENARIO|FILE -o FILE.html",
		Short: "Write one run as a self-contained HTML page",
		Long: `Run a scenario (a built-in name, or a YAML file) as 'ratelim sim' does and
write what it shows as one HTML file, for a design review, a ticket or a CI
artefact: the lesson and every finding, the timeline plot, a table of what
each client and each shared key experienced, the scenario's expectations as
evaluated, the faults and events, the run's settings, and the scenario's
YAML.

The page is one file with nothing to fetch: its styles are inline and the
plot is embedded, so it opens from file:// with no server and no network.
The same scenario and seed give the same file, byte for byte, so a report
can be committed and diffed. Flags override the scenario as for 'sim'; the
file's expectations are then not evaluated (they hold for the scenario as
written), and the page says so. --vs FIELD=VALUE runs it a second time so
changed, as 'sim --vs' does: the plot shows both runs side by side and the
page says what differs, client by client.`,
		Example: `  ratelim report runaway-healthcheck -o runaway.html
  ratelim report partition --topology local -o partition-local.html
  ratelim report partition --vs topology.failover_after=5s -o failover.html
  ratelim report my-scenario.yaml --image svg -o - > report.html`,
		Args: exactArgs(1, "a scenario name or file (see 'ratelim scenarios')"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Scenario = args[0]
			opts.over.visit(cmd)
			if runF != nil {
				return runF(opts)
			}
			return reportRun(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Output, "output", "o", "", "the HTML file to write, or - for standard output (required)")
	f.StringVar(&opts.Image, "image", "png", "the plot inside the page: png (looks the same everywhere) or svg (sharp at any zoom, in the viewer's fonts)")
	addPlotSizeFlags(cmd, &opts.Plot)
	addByFlag(cmd, &opts.Plot)
	addLimitFlags(f, &opts.Limits, false)
	f.StringArrayVar(&opts.Vs, "vs", nil, "FIELD=VALUE: run it again so changed, plot both and say what differs, e.g. --vs limit.burst=50 (repeat for several fields)")
	addOverrideFlags(cmd, &opts.over)
	addWallClockFlag(cmd, &opts.over)
	return cmd
}

// reportPlan is what `ratelim report` runs: the scenario as the flags
// change it, and the simulator's bounds.
type reportPlan struct {
	file    *scenarios.File
	sc      sim.Scenario
	simOpts sim.Options
	// run is the file as the flags change it; vs and runB, when --vs is
	// given, the second run's settings and file.
	run  *scenarios.File
	vs   *versus
	runB *scenarios.File
}

// planReport checks opts and opens the scenario, running nothing.
func planReport(opts *reportOptions) (*reportPlan, error) {
	if opts.Output == "" {
		return nil, badInput("-o: say where to write the report (a file such as report.html, or - for standard output)")
	}
	if opts.Image != "png" && opts.Image != "svg" {
		return nil, badInput("--image: unknown format %q (want png or svg)", opts.Image)
	}
	if err := opts.Plot.checkBy(); err != nil {
		return nil, err
	}
	if err := opts.Plot.checkSize(); err != nil {
		return nil, err
	}
	opts.Plot.format = opts.Image
	simOpts, err := opts.Limits.apply()
	if err != nil {
		return nil, err
	}
	vs, err := parseVersus(opts.Vs)
	if err != nil {
		return nil, err
	}
	file, run, err := opts.loadFile(opts.Scenario, opts.over)
	if err != nil {
		return nil, err
	}
	p := &reportPlan{file: file, sc: run.Scenario, simOpts: simOpts, run: run, vs: vs}
	if vs != nil {
		if p.runB, err = vs.apply(run); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func reportRun(ctx context.Context, opts *reportOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	p, err := planReport(opts)
	if err != nil {
		return err
	}
	file, sc, simOpts := p.file, p.sc, p.simOpts
	r, err := runScenario(ctx, opts.ErrOut, opts.ErrIsTerminal, scenarioLabel(file), sc, simOpts)
	if err != nil {
		return err
	}
	note := ""
	var versusPart *report.Versus
	plotRun := func(w io.Writer) error { return plots.Timeline(w, r, opts.Plot.options()) }
	var done []string // what the runs found, for the line that says where the page went
	if p.vs == nil {
		done = []string{sim.Headline(r)}
	}
	if p.vs != nil {
		b, err := runScenario(ctx, opts.ErrOut, opts.ErrIsTerminal, scenarioLabel(file), p.runB.Scenario, simOpts)
		if err != nil {
			return err
		}
		labelA, labelB := p.vs.labels(p.run, p.runB)
		done = []string{"A " + labelA + " vs B " + labelB, "A: " + sim.Headline(r), "B: " + sim.Headline(b)}
		var rows strings.Builder
		if err := writeVersusRows(&rows, r, b); err != nil {
			return err
		}
		versusPart = &report.Versus{Title: "A " + labelA + " vs B " + labelB, Rows: rows.String()}
		plotRun = func(w io.Writer) error { return renderVersus(w, r, b, labelA, labelB, opts.Plot) }
	}
	if !opts.over.given() {
		_, skipped, err := fillExpectations(file, r)
		if err != nil {
			return err
		}
		if skipped > 0 {
			// Checking names what to check: the scenario read from
			// standard input is a file the reader has.
			check := "ratelim check FILE"
			if opts.Scenario != "-" {
				check = "ratelim check " + simrun.ShellWord(opts.Scenario)
			}
			note = fmt.Sprintf("%s: %s runs them.", simrun.OtherRuns(skipped), check)
		}
	} else if len(file.Expect) > 0 {
		note = fmt.Sprintf("The scenario's %d expectations were not evaluated: flags changed the scenario, and they hold for it as written.", len(file.Expect))
	}
	var plot bytes.Buffer
	if err := plotRun(&plot); err != nil {
		return usageError{err}
	}
	ropts := report.Options{
		Summary:    sc.Summary,
		Source:     file.Source,
		SourceName: sourceName(file),
		Plot:       report.Image{Format: opts.Image, Data: plot.Bytes()},
		Command:    reportCommand(opts),
		ExpectNote: note,
		Versus:     versusPart,
	}
	write := func(w io.Writer) error { return report.HTML(w, r, ropts) }
	if err := writeOutput(opts.Output, opts.Out, write); err != nil {
		return err
	}
	if outfile.IsStdout(opts.Output) {
		return nil
	}
	writeReportDone(opts.Out, opts.Output, done)
	return nil
}

// reportDoneWidth is the width of the lines that say where a report went.
const reportDoneWidth = 80

// writeReportDone says where the page went and what its runs found, in
// lines of at most reportDoneWidth columns: "PAGE: HEADLINE" for one run;
// with --vs, "PAGE: A … vs B …" and then A's and B's headlines, each
// indented under its letter.
func writeReportDone(w io.Writer, page string, done []string) {
	first, rest := done[0], done[1:]
	for i, line := range report.Wrap(escape.Text(page)+": "+escape.Text(first), reportDoneWidth-2) {
		if i > 0 {
			line = "  " + line
		}
		fmt.Fprintln(w, line)
	}
	for _, run := range rest {
		for i, line := range report.Wrap(escape.Text(run), reportDoneWidth-5) {
			indent := "  "
			if i > 0 {
				indent = "     " // under the headline, past "A: "
			}
			fmt.Fprintln(w, indent+line)
		}
	}
}

// sourceName says where a scenario's YAML came from, for the page.
func sourceName(f *scenarios.File) string {
	if f.Path != "" {
		return f.Path
	}
	return "built-in " + f.Scenario.Name
}

// reportCommand is the `ratelim sim` line that reproduces the report's
// run: simrun.Command's, as the playground writes it, the settings in
// the order ratelim sim applies them (so the page does not depend on the
// order they were typed in).
func reportCommand(opts *reportOptions) string {
	sets, _ := opts.over.settings() // the run refused any that does not read
	return simrun.Command(opts.Scenario, sets, opts.Vs)
}
