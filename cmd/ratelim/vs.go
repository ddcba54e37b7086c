package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/ratelim/ratelim/internal/escape"
	"github.com/ratelim/ratelim/report"
	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/store"
)

// versus is a --vs: the settings (an override name, a short form or a
// field's path → the value, as typed) that make the second run of a
// side-by-side from the first.
type versus struct {
	set map[string]string
	// order is the names as given, for labels; sets the settings, in it.
	order []string
	sets  []scenarios.Setting
}

// parseVersus reads --vs FIELD=VALUE flags: each FIELD a name
// scenarios.Apply takes (on_error or on-error alike, burst, limit.burst,
// clients[web].traffic.rate). A field set twice, however spelled, is
// scenarios.Apply's to refuse: it knows the file's entries.
func parseVersus(flags []string) (*versus, error) {
	if len(flags) == 0 {
		return nil, nil
	}
	v := &versus{set: map[string]string{}}
	for _, f := range flags {
		name, value, ok := strings.Cut(f, "=")
		name = strings.TrimSpace(name)
		if canon := strings.ReplaceAll(name, "_", "-"); slices.Contains(scenarios.OverrideNames(), canon) {
			name = canon
		}
		// An empty value is the field's to refuse, as --set's is:
		// "missing value (want ...)".
		if !ok || name == "" {
			return nil, badInput("--vs %q: want FIELD=VALUE, e.g. --vs on_error=fail-closed or --vs limit.burst=50 (FIELD a flag's name, %s, or a field's path)", f, strings.Join(append(scenarios.OverrideNames(), shortForms...), ", "))
		}
		if err := scenarios.CheckSettingName(name); err != nil {
			return nil, usageError{&scenarios.Error{Field: "--vs " + name, Msg: settingMessage(err, name)}}
		}
		v.set[name] = value
		v.order = append(v.order, name)
		v.sets = append(v.sets, scenarios.Setting{Name: name, Value: value, Flag: "--vs " + name})
	}
	return v, nil
}

// apply returns f changed by v, each value refused as the file's field
// would be, naming the flag. f is the first run's file, the flags'
// settings already applied: v's come after them.
func (v *versus) apply(f *scenarios.File) (*scenarios.File, error) {
	next, err := scenarios.Apply(f, v.sets)
	if err != nil {
		return nil, usageError{err}
	}
	return next, nil
}

// labels name the two runs by the fields that differ, as each run has
// them: "on-error=fail-open" and "on-error=fail-closed", "limit.burst=20"
// and "limit.burst=50".
func (v *versus) labels(a, b *scenarios.File) (string, string) {
	var la, lb []string
	for _, name := range v.order {
		la = append(la, name+"="+fileSetting(a, name))
		lb = append(lb, name+"="+fileSetting(b, name))
	}
	return strings.Join(la, " "), strings.Join(lb, " ")
}

// fileSetting is f's value for a setting's name: an override name's as
// its scenario has it, a field's as set or written, "default" when the
// file leaves it out.
func fileSetting(f *scenarios.File, name string) string {
	if slices.Contains(scenarios.OverrideNames(), name) {
		return scenarioSetting(f.Scenario, name)
	}
	if v, ok := scenarios.Value(f, name); ok {
		return v
	}
	return "default"
}

// scenarioSetting is sc's value for an override name, as a flag would
// give it; a store as compare names it (never a URL's password).
func scenarioSetting(sc sim.Scenario, name string) string {
	switch name {
	case "algorithm":
		return sc.Limit.Algorithm
	case "topology":
		return string(sc.Topology.Kind)
	case "store":
		return store.Redacted(sc.Topology.Store)
	case "servers":
		return strconv.Itoa(sc.Servers)
	case "balancer":
		return string(sc.Balancer)
	case "key":
		return string(sc.Limit.Key)
	case "seed":
		return strconv.FormatUint(sc.Seed, 10)
	case "duration":
		return sc.Duration.String()
	case "step":
		return sc.Step.String()
	case "on-error":
		return string(sc.Topology.OnError)
	case "rtt":
		return sc.Topology.RTT.String()
	case "replication-lag":
		if sc.Topology.ReplicationLag < 0 {
			return "never"
		}
		return sc.Topology.ReplicationLag.String()
	case "sync-interval":
		if sc.Topology.SyncInterval < 0 {
			return "never"
		}
		return sc.Topology.SyncInterval.String()
	case "wall-clock":
		return sc.WallClock.Format(time.RFC3339Nano)
	case "shadow":
		return shadowSetting(sc)
	}
	return "?"
}

// writeVersus prints two runs of one scenario for people: each run's
// table under its label, then what differs, client by client, and each
// run's headline.
func writeVersus(w io.Writer, a, b *sim.Result, labelA, labelB string, wide bool) error {
	for _, run := range []struct {
		label string
		r     *sim.Result
		side  string
	}{{labelA, a, "A"}, {labelB, b, "B"}} {
		writeRunHeading(w, run.side, run.label)
		if err := report.WriteTableWith(w, run.r, report.TableOptions{Wide: wide}); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "── A vs B ──")
	if err := writeVersusRows(w, a, b); err != nil {
		return err
	}
	if differ := arrivalsDiffer(a, b); differ != "" {
		note := fmt.Sprintf("note: the two runs' traffic differs (%s): the seed, and a random balancer, draw from the run's one random source, so compare what each admitted, not request by request", differ)
		fmt.Fprintln(w)
		for _, line := range report.Wrap(note, 80) {
			fmt.Fprintln(w, line)
		}
	}
	return nil
}

// writeRunHeading heads one side of a --vs: "── A ──", then "A: " and
// its label, wrapped at 80 columns (a label is the settings as typed, and
// a mapping's value is long).
func writeRunHeading(w io.Writer, side, label string) {
	fmt.Fprintf(w, "── %s ──\n", side)
	for i, line := range report.Wrap(side+": "+label, 80-3) {
		if i > 0 {
			line = "   " + line
		}
		fmt.Fprintln(w, line)
	}
}

// writeVersusRows is, per client, what each run allowed and refused
// (rejected, failed closed included), and the change.
func writeVersusRows(w io.Writer, a, b *sim.Result) error {
	// Names came from input: shown escaped, padded by what they show.
	names := make([]string, len(a.Clients))
	width := len("client")
	for i, c := range a.Clients {
		names[i] = escape.Text(c.Name)
		width = max(width, utf8.RuneCountInString(names[i]))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-*s\tallowed A\tallowed B\tchange\trejected A\trejected B\t\n", width, "client")
	for i, ca := range a.Clients {
		if i >= len(b.Clients) || b.Clients[i].Name != ca.Name {
			break // another client list (a --vs duration cannot change it; be safe)
		}
		cb := b.Clients[i]
		fmt.Fprintf(tw, "%-*s\t%d\t%d\t%s\t%d\t%d\t\n", width, names[i], ca.Allowed, cb.Allowed, change(ca.Allowed, cb.Allowed), ca.Rejected, cb.Rejected)
	}
	return tw.Flush()
}

// arrivalsDiffer names the first client whose first tries differ between
// a and b ("office-1 sent 23, then 32"), or "" when the traffic is the same.
func arrivalsDiffer(a, b *sim.Result) string {
	for i, ca := range a.Clients {
		if i < len(b.Clients) {
			if fa, fb := ca.Sent-ca.Retries, b.Clients[i].Sent-b.Clients[i].Retries; fa != fb {
				return fmt.Sprintf("%s's first tries: %d, then %d", escape.Text(ca.Name), fa, fb)
			}
		}
	}
	return ""
}

// change is b against a as a signed count and, where a is not 0, a
// percentage: "-50 (-33%)".
func change(a, b int64) string {
	d := b - a
	s := strconv.FormatInt(d, 10)
	if d > 0 {
		s = "+" + s
	}
	if a != 0 && d != 0 {
		s += fmt.Sprintf(" (%+.0f%%)", 100*float64(d)/float64(a))
	}
	return s
}

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
	if err := writeVersus(opts.Out, a, b, labelA, labelB, opts.Wide); err != nil {
		return err
	}
	writeExpectations(opts.Out, file, a, skipped)
	return nil
}

// shadowSetting is sc's shadow mode as --shadow gives it: false, true,
// the instant its limits enforce from, or "per-limit" when they differ.
func shadowSetting(sc sim.Scenario) string {
	text := func(l sim.Limit) string {
		switch {
		case !l.Shadow:
			return "false"
		case l.ShadowUntil > 0:
			return l.ShadowUntil.String()
		}
		return "true"
	}
	limits := sc.Limits()
	first := text(limits[0])
	for _, l := range limits[1:] {
		if text(l) != first {
			return "per-limit"
		}
	}
	return first
}
