package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"gonum.org/v1/plot/vg"

	"github.com/ratelim/ratelim/internal/outfile"
	"github.com/ratelim/ratelim/plots"
	"github.com/ratelim/ratelim/report"
	"github.com/ratelim/ratelim/sim"
)

// plotFlags are --plot, its size and --by, shared by sim, load, compare
// and report (which takes the size and --by without --plot).
type plotFlags struct {
	Path          string
	Width, Height float64 // inches; 0 for the plot's own default
	By            string
	// Focus are the clients that get a panel each, the rest folded
	// (plots.Options.Focus): replay's most throttled keys.
	Focus []string
	// Clock and Caption put a replay's timeline in its log's clock and
	// title it with the replay's own settings (plots.Options'); nil for a
	// simulated run.
	Clock   *time.Location
	Caption *plots.Caption
	format  string
}

func addPlotFlags(cmd *cobra.Command, p *plotFlags) {
	cmd.Flags().StringVar(&p.Path, "plot", "", "also draw the run to this file: .png, .svg or .gif (the timeline animated)")
	addPlotSizeFlags(cmd, p)
}

// addPlotSizeFlags declares --plot-width and --plot-height, for a command
// that draws a plot whether or not it writes one to --plot.
func addPlotSizeFlags(cmd *cobra.Command, p *plotFlags) {
	f := cmd.Flags()
	f.Float64Var(&p.Width, "plot-width", 0, "plot width in inches (default: fits the content)")
	f.Float64Var(&p.Height, "plot-height", 0, "plot height in inches (default: fits the panels)")
}

// addByFlag declares --by, a timeline's panel per client or per key.
func addByFlag(cmd *cobra.Command, p *plotFlags) {
	cmd.Flags().StringVar(&p.By, "by", "client", "plot one panel per client or per key")
}

// checkBy refuses a --by other than client or key.
func (p *plotFlags) checkBy() error {
	if p.By != "client" && p.By != "key" {
		return badInput("--by: unknown %q (want client or key)", p.By)
	}
	return nil
}

// A plot's side is 0 (the plot's own default) or from minPlotInches to
// maxPlotInches. The most is plots' own bound (a PNG 120in a side is
// already 100 megapixels), checked here before a run rather than after
// it; below an inch no figure fits, and a size under a pixel would be an
// image of none.
const (
	minPlotInches = 1
	maxPlotInches = 120
)

// checkSize refuses a --plot-width or --plot-height that is not 0 or a
// size from minPlotInches to maxPlotInches: negative, NaN and infinite
// ones too.
func (p *plotFlags) checkSize() error {
	for _, side := range []struct {
		flag   string
		inches float64
	}{{"--plot-width", p.Width}, {"--plot-height", p.Height}} {
		if side.inches != 0 && !(side.inches >= minPlotInches && side.inches <= maxPlotInches) {
			return badInput("%s: want 0 (the plot's own size) or %d to %d inches (got %g)", side.flag, minPlotInches, maxPlotInches, side.inches)
		}
	}
	return nil
}

// checkOutputFlags refuses a bad --format (table, json or csv) or --plot
// before anything runs.
func checkOutputFlags(format string, plot *plotFlags) error {
	if err := checkFormat(format, "table", "json", "csv"); err != nil {
		return err
	}
	return plot.check()
}

// check refuses a bad --plot before anything runs.
func (p *plotFlags) check() error {
	if p.Path == "" {
		return nil
	}
	if outfile.IsStdout(p.Path) {
		return badInput("--plot: an image does not go to standard output, where the table goes (want a file such as out.png)")
	}
	// An animation is drawn here from the plots' PNG frames, so plots
	// does not know the extension.
	format := "gif"
	if ext := filepath.Ext(p.Path); !strings.EqualFold(ext, ".gif") {
		var err error
		if format, err = plots.FormatFor(p.Path); err != nil {
			return badInput("--plot: unknown image format %q (want .png, .svg or .gif)", ext)
		}
	}
	if err := p.checkSize(); err != nil {
		return err
	}
	// A path the plot cannot be written to is refused now, not after
	// every run (a directory, a FIFO, a dangling link, no such directory).
	if err := outfile.Check(p.Path, false); err != nil {
		return usageError{fmt.Errorf("--plot: %w", err)}
	}
	p.format = format
	return nil
}

func (p *plotFlags) options() plots.Options {
	return plots.Options{Width: vg.Length(p.Width) * vg.Inch, Height: vg.Length(p.Height) * vg.Inch, Format: p.format, By: p.By, Focus: p.Focus,
		Clock: p.Clock, Caption: p.Caption}
}

// render writes the plot to p.Path, if one was asked for, by writeOutput.
// An unwritable path is bad input, and so is a plot that cannot be drawn
// (too big); nothing half-written is left behind either way.
func (p *plotFlags) render(draw func(io.Writer) error) error {
	if p.Path == "" {
		return nil
	}
	var drawErr error
	err := writeOutput(p.Path, nil, func(w io.Writer) error { drawErr = draw(w); return drawErr })
	if err != nil && err == drawErr {
		return usageError{err}
	}
	return err
}

func renderTimeline(w io.Writer, r *sim.Result, p plotFlags) error {
	if p.format == "gif" {
		return report.GIF(w, r, report.GIFOptions{Plot: p.options()})
	}
	return plots.Timeline(w, r, p.options())
}

// cellWhy is why a grid cell is as hot as it is: its run's headline, or
// for an over-admission only the reason, which cells that differ only in
// the ratio then share as one footnote.
func cellWhy(r *sim.Result) string {
	if len(r.Findings) == 0 {
		return sim.Headline(r)
	}
	f := r.Findings[0]
	if _, reason, ok := strings.Cut(f.Text, ": "); ok && f.Kind == sim.FindingOverAdmitted {
		return reason
	}
	return f.Text
}

// renderVersus draws two runs side by side on shared y axes, for --vs.
func renderVersus(w io.Writer, a, b *sim.Result, labelA, labelB string, p plotFlags) error {
	return plots.TimelineVs(w, a, b, labelA, labelB, p.options())
}

func renderCompare(w io.Writer, scenario string, cells []Cell, p plotFlags) error {
	if p.format == "gif" {
		return badInput("--plot: compare draws a still grid; write it as .png or .svg")
	}
	grid := make([]plots.Cell, len(cells))
	for i, c := range cells {
		grid[i] = plots.Cell{Algorithm: c.Algorithm, Topology: c.Topology, AdmittedRatio: c.AdmittedRatio}
		if c.Result != nil {
			grid[i].Why = cellWhy(c.Result)
		}
	}
	return plots.CompareGrid(w, scenario+": admitted ÷ exact limiter", grid, p.options())
}
