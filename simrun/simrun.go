// Package simrun is the run pipeline of `ratelim sim` as a library: a
// scenario file and the settings typed over it go in, and the bytes the
// command prints come out. The CLI (cmd/ratelim) and the browser
// playground call the same functions, so that a page built on it shows
// the numbers `ratelim sim NAME --format json` writes, byte for byte, by
// construction rather than by a test alone.
//
// The steps, in order, each also exported for a caller that does more
// between them (the CLI shows progress and draws plots):
//
//  1. Apply: the settings (--rate, --set PATH=VALUE, a playground's
//     slider) laid over the file with scenarios.Apply, each refused as
//     the file's own field would be.
//  2. sim.Run on the scenario, within the caller's bounds (sim.Options:
//     MaxRequests, MaxMemory, FitStep).
//  3. FillExpectations: the file's expect: lines that need no other run,
//     evaluated on the result — only when no setting was given, since a
//     scenario changed by settings is not the one its expectations are
//     about.
//  4. Write: the result as JSON (report.WriteJSONWith, ratelim.result/v1),
//     CSV, or the table followed by the expectations' summary.
//
// Nothing here reads a clock, the environment or a file: it builds for
// GOOS=js GOARCH=wasm, and its tests keep it so.
package simrun

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/ratelim/ratelim/report"
	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/sim"
)

// Formats are the outputs Write knows, as `ratelim sim --format` names
// them.
var Formats = []string{"table", "json", "csv"}

// Layout is how Write lays a result out: its format (one of Formats), the
// table all but its title and findings when Quiet, every column when
// Wide; the JSON and CSV every timeline row and state point when Dense.
type Layout struct {
	Format string
	Quiet  bool
	Wide   bool
	Dense  bool
}

// Options are one run, as `ratelim sim FILE [settings] --format F` asks
// for it.
type Options struct {
	// File is the scenario as read (scenarios.Parse, Open), before any
	// setting: its expect: lines are about it.
	File *scenarios.File
	// Settings change the file, as scenarios.Apply takes them; any given
	// leaves the file's expectations unchecked.
	Settings []scenarios.Setting
	// Sim bounds the run (MaxRequests, MaxMemory, FitStep, StateOf); its
	// zero value is the simulator's defaults, sized for a command line.
	Sim    sim.Options
	Layout Layout
}

// Outcome is what Run did besides writing: the file as the settings
// changed it, the run's result (its Expectations filled), and how many
// expectations failed and were skipped (a with: needs other runs).
type Outcome struct {
	File            *scenarios.File
	Result          *sim.Result
	Failed, Skipped int
}

// Run applies opts.Settings to opts.File, runs it, fills its
// expectations when no setting was given, and writes the result to w as
// opts.Layout says: what `ratelim sim` prints on stdout. A run that
// finished but could not clean its store (sim.CleanupError) is written,
// and its error returned with the Outcome.
func Run(ctx context.Context, w io.Writer, opts Options) (*Outcome, error) {
	if opts.File == nil {
		return nil, errors.New("simrun: no scenario file")
	}
	if err := CheckFormat(opts.Layout.Format); err != nil {
		return nil, err
	}
	file, err := Apply(opts.File, opts.Settings)
	if err != nil {
		return nil, err
	}
	r, runErr := sim.Run(ctx, file.Scenario, opts.Sim)
	if runErr != nil && !errors.As(runErr, new(*sim.CleanupError)) {
		return nil, fmt.Errorf("%s: %w", Label(file), runErr)
	}
	out := &Outcome{File: file, Result: r}
	if len(opts.Settings) == 0 {
		if out.Failed, out.Skipped, err = FillExpectations(file, r); err != nil {
			return nil, err
		}
	}
	if err := Write(ctx, w, file, r, opts.Layout, out.Skipped); err != nil {
		return nil, err
	}
	return out, runErr
}

// CheckFormat refuses a format Write does not know.
func CheckFormat(format string) error {
	for _, f := range Formats {
		if f == format {
			return nil
		}
	}
	return fmt.Errorf("format: %q is not one (want table, json or csv)", format)
}

// Apply is file changed by sets, as the sim command's flags change it;
// with none, the file itself.
func Apply(file *scenarios.File, sets []scenarios.Setting) (*scenarios.File, error) {
	if len(sets) == 0 {
		return file, nil
	}
	return scenarios.Apply(file, sets)
}

// Write prints r as l says: JSON or CSV alone, or the table and, unless
// quiet, the summary of the file's expectations under it (skipped of them
// need other runs). ctx stops a JSON or CSV being written.
func Write(ctx context.Context, w io.Writer, file *scenarios.File, r *sim.Result, l Layout, skipped int) error {
	if err := WriteResult(ctx, w, r, l); err != nil {
		return err
	}
	if l.Format == "table" && !l.Quiet {
		WriteExpectations(w, file, r, skipped)
	}
	return nil
}

// WriteResult prints r alone as l says, with no expectations under a
// table: JSON (ratelim.result/v1), CSV (the timeline) or the table.
func WriteResult(ctx context.Context, w io.Writer, r *sim.Result, l Layout) error {
	switch l.Format {
	case "json":
		return report.WriteJSONWith(ctx, w, r, report.WriteOptions{Dense: l.Dense})
	case "csv":
		return report.WriteCSVWith(ctx, w, r, report.WriteOptions{Dense: l.Dense})
	}
	if l.Quiet {
		return report.WriteTableRows(w, r, report.TableOptions{Wide: l.Wide})
	}
	return report.WriteTableWith(w, r, report.TableOptions{Wide: l.Wide})
}

// Label names a scenario file in messages: its path, or for a built-in
// its name.
func Label(f *scenarios.File) string {
	if f.Path != "" {
		return f.Path
	}
	return f.Scenario.Name
}
