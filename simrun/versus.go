package simrun

// Two runs of one scenario side by side, as `ratelim sim --vs` and the
// playground's side by side show them: run B is run A's file with more
// settings on top (Versus), each run named by the settings that differ
// (Labels), and what each admitted, client by client (WriteVersusRows).

import (
	"errors"
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

// Versus is a --vs: the settings that make the second run of a side by
// side from the first, in the order given. Each Name is a setting's name
// as scenarios.Apply takes it, an override name spelled as its flag is
// (SettingName: on-error, not on_error), so that labels read alike
// however it was typed.
type Versus struct {
	Settings []scenarios.Setting
}

// SettingName is a setting's name as the flags spell it: an override
// name with '-' (on_error is on-error, as --on-error), anything else
// trimmed and as typed (limit.burst, clients[web].traffic.rate). A --vs
// keeps its names so, and labels its runs with them.
func SettingName(name string) string {
	name = strings.TrimSpace(name)
	if canon := strings.ReplaceAll(name, "_", "-"); slices.Contains(scenarios.OverrideNames(), canon) {
		return canon
	}
	return name
}

// Changed are v's settings by name, as `sim --vs --format json` lists
// them.
func (v Versus) Changed() map[string]string {
	out := make(map[string]string, len(v.Settings))
	for _, s := range v.Settings {
		out[s.Name] = s.Value
	}
	return out
}

// Apply is run B's file: a, run A's file (its own settings already
// applied), changed by v's settings after them, each refused as the
// file's own field would be and named by its Flag.
func (v Versus) Apply(a *scenarios.File) (*scenarios.File, error) {
	return scenarios.Apply(a, v.Settings)
}

// Labels name the two runs by the fields that differ, as each run has
// them: "on-error=fail-open" and "on-error=fail-closed", "limit.burst=20"
// and "limit.burst=50".
func (v Versus) Labels(a, b *scenarios.File) (string, string) {
	var la, lb []string
	for _, s := range v.Settings {
		la = append(la, s.Name+"="+FileSetting(a, s.Name))
		lb = append(lb, s.Name+"="+FileSetting(b, s.Name))
	}
	return strings.Join(la, " "), strings.Join(lb, " ")
}

// CheckSetting refuses a setting's name that names no field
// (scenarios.CheckSettingName), as a scenarios.Error on its flag:
// "--set colour: unknown setting ...", the path it names when that is not
// the whole name (clients[web].trafic of clients[web].trafic.rate).
func CheckSetting(name, flag string) error {
	err := scenarios.CheckSettingName(name)
	if err == nil {
		return nil
	}
	return &scenarios.Error{Field: flag, Msg: SettingMessage(err, name)}
}

// SettingMessage is a scenarios error's message, with the path it names
// when that is not the whole name (clients[web].trafic of
// clients[web].trafic.rate).
func SettingMessage(err error, name string) string {
	var se *scenarios.Error
	if !errors.As(err, &se) {
		return err.Error()
	}
	if se.Field == "" || se.Field == name {
		return se.Msg
	}
	return se.Field + ": " + se.Msg
}

// FileSetting is f's value for a setting's name: an override name's as
// its scenario has it, a field's as set or written, "default" when the
// file leaves it out.
func FileSetting(f *scenarios.File, name string) string {
	if slices.Contains(scenarios.OverrideNames(), name) {
		return ScenarioSetting(f.Scenario, name)
	}
	if v, ok := scenarios.Value(f, name); ok {
		return v
	}
	return "default"
}

// ScenarioSetting is sc's value for an override name, as a flag would
// give it; a store as compare names it (never a URL's password). "?" for
// a name that is none.
func ScenarioSetting(sc sim.Scenario, name string) string {
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

// WriteVersus prints two runs of one scenario for people, as `ratelim sim
// --vs` does: each run's table under its label, then what differs
// (WriteVersusComparison).
func WriteVersus(w io.Writer, a, b *sim.Result, labelA, labelB string, wide bool) error {
	for _, run := range []struct {
		label string
		r     *sim.Result
		side  string
	}{{labelA, a, "A"}, {labelB, b, "B"}} {
		WriteRunHeading(w, run.side, run.label)
		if err := report.WriteTableWith(w, run.r, report.TableOptions{Wide: wide}); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "── A vs B ──")
	return WriteVersusComparison(w, a, b)
}

// WriteVersusComparison is what differs between a and b, as `ratelim sim
// --vs` prints it under "── A vs B ──": the rows (WriteVersusRows), and a
// note when the two runs' traffic differs, since then they are compared
// by what each admitted, not request by request.
func WriteVersusComparison(w io.Writer, a, b *sim.Result) error {
	if err := WriteVersusRows(w, a, b); err != nil {
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

// WriteRunHeading heads one side of a --vs: "── A ──", then "A: " and
// its label, wrapped at 80 columns (a label is the settings as typed, and
// a mapping's value is long).
func WriteRunHeading(w io.Writer, side, label string) {
	fmt.Fprintf(w, "── %s ──\n", side)
	for i, line := range report.Wrap(side+": "+label, 80-3) {
		if i > 0 {
			line = "   " + line
		}
		fmt.Fprintln(w, line)
	}
}

// WriteVersusRows is, per client, what each run allowed and refused
// (rejected, failed closed included), and the change.
func WriteVersusRows(w io.Writer, a, b *sim.Result) error {
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
