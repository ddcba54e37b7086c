package main

import (
	"context"
	"encoding/json"
	"io"
	"strings"

	"github.com/ratelim/ratelim/report"
	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/simrun"
)

// versus is a --vs: simrun's (the settings that make the second run of a
// side by side from the first, and the labels of the two), with the
// flags' errors sorted as the user's to fix.
type versus struct {
	simrun.Versus
	// set are the settings by their names as given, for the JSON's
	// changed.
	set map[string]string
}

// parseVersus reads --vs FIELD=VALUE flags: each FIELD a name
// scenarios.Apply takes (on_error or on-error alike, burst, limit.burst,
// clients[web].traffic.rate). A field set twice, however spelled, is
// scenarios.Apply's to refuse: it knows the file's entries.
func parseVersus(flags []string) (*versus, error) {
	if len(flags) == 0 {
		return nil, nil
	}
	v := &versus{}
	for _, f := range flags {
		name, value, ok := strings.Cut(f, "=")
		name = simrun.SettingName(name)
		// An empty value is the field's to refuse, as --set's is:
		// "missing value (want ...)".
		if !ok || name == "" {
			return nil, badInput("--vs %q: want FIELD=VALUE, e.g. --vs on_error=fail-closed or --vs limit.burst=50 (FIELD a flag's name, %s, or a field's path)", f, strings.Join(simrun.FlagNames(), ", "))
		}
		if err := simrun.CheckSetting(name, "--vs "+name); err != nil {
			return nil, usageError{err}
		}
		v.Settings = append(v.Settings, scenarios.Setting{Name: name, Value: value, Flag: "--vs " + name})
	}
	v.set = v.Changed()
	return v, nil
}

// apply returns f changed by v, each value refused as the file's field
// would be, naming the flag. f is the first run's file, the flags'
// settings already applied: v's come after them.
func (v *versus) apply(f *scenarios.File) (*scenarios.File, error) {
	next, err := v.Apply(f)
	if err != nil {
		return nil, usageError{err}
	}
	return next, nil
}

// labels name the two runs by the fields that differ (simrun's Labels).
func (v *versus) labels(a, b *scenarios.File) (string, string) { return v.Labels(a, b) }

// scenarioSetting is sc's value for an override name, as a flag would
// give it (simrun.ScenarioSetting).
func scenarioSetting(sc sim.Scenario, name string) string { return simrun.ScenarioSetting(sc, name) }

// writeVersusRows is, per client, what each run allowed and refused
// (simrun.WriteVersusRows).
func writeVersusRows(w io.Writer, a, b *sim.Result) error { return simrun.WriteVersusRows(w, a, b) }

// VersusSchema names `sim --vs --format json`: one object whose runs are
// two ratelim.result/v1 results, the scenario's first.
const VersusSchema = "ratelim.versus/v1"

type versusJSON struct {
	Schema string `json:"schema"`
	// Changed are the --vs settings, by their names as given.
	Changed map[string]string `json:"changed"`
	// Labels name the two runs, as the table and the plot do.
	Labels [2]string      `json:"labels"`
	Runs   [2]*sim.Result `json:"runs"`
}

// simVersus finishes `sim --vs`: a, already run (its expectations checked,
// skipped of them needing other runs), against scA changed by vs, scB.
func simVersus(ctx context.Context, opts *simOptions, file *scenarios.File, a *sim.Result, skipped int, fileA, fileB *scenarios.File, vs *versus, simOpts sim.Options) error {
	scB := fileB.Scenario
	showProgress := opts.ErrIsTerminal && !opts.Quiet && opts.Format == "table"
	b, err := runScenario(ctx, opts.ErrOut, showProgress, scenarioLabel(file), scB, simOpts)
	if err != nil {
		return err
	}
	labelA, labelB := vs.labels(fileA, fileB)
	if err := opts.Plot.render(func(w io.Writer) error { return renderVersus(w, a, b, labelA, labelB, opts.Plot) }); err != nil {
		return err
	}
	switch opts.Format {
	case "json":
		enc := json.NewEncoder(opts.Out)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(versusJSON{Schema: VersusSchema, Changed: vs.set, Labels: [2]string{labelA, labelB}, Runs: [2]*sim.Result{sparseUnless(opts.Dense, a), sparseUnless(opts.Dense, b)}})
	case "csv":
		// One header; each row's run column is its side's label.
		if err := report.WriteCSVWith(ctx, opts.Out, a, report.WriteOptions{Dense: opts.Dense, Label: labelA}); err != nil {
			return err
		}
		return report.WriteCSVWith(ctx, opts.Out, b, report.WriteOptions{Dense: opts.Dense, Label: labelB, NoHeader: true})
	}
	if opts.Quiet {
		return writeVersusRows(opts.Out, a, b)
	}
	if err := simrun.WriteVersus(opts.Out, a, b, labelA, labelB, opts.Wide); err != nil {
		return err
	}
	writeExpectations(opts.Out, file, a, skipped)
	return nil
}
