package scenarios

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/internal/words"
	"github.com/ratelim/ratelim/sim"
)

// Expectation is one line of a file's expect: list, a claim about the run
// that `ratelim check` verifies:
//
//   - {client: scheduler, rejected: {max: 0}}
//   - {client: "bastion-*", allowed: {max: 260}, during: {from: 5s, to: 25s}}
//   - {client: normal, failed_closed: {min: 40}, with: {on_error: fail-closed}}
//
// It names a subject (a client, or a limiter key, either possibly a glob
// that is checked against each client or key it matches), one figure of the
// result, and bounds on it; optionally a span of the run the figure is
// taken over, and flags the run is made with (as on the command line).
//
// Or it names a lesson the run must show, one of its findings
// (sim.Findings), optionally about a client or key:
//
//   - {finding: retries-wasted, client: eager}
//   - {finding: failed-closed, with: {on_error: fail-closed}}
//
// A file's top-level "lesson: KIND" is the claim that KIND leads the
// findings, the run's headline; it is checked as an expectation too.
type Expectation struct {
	// Line is the expectation's line in the file.
	Line int
	// Index is its place in the file's expect: list, as its errors name
	// it (expect[1]); -1 for the lesson, which comes first in a File's
	// Expect but is no entry of expect:.
	Index int
	// Text renders it for people: "scheduler rejected <= 0".
	Text string
	// Client is a client name or a glob ("bastion-*"); Key is a limiter
	// key or a glob. Exactly one is set.
	Client string
	Key    string
	// Figure is the result's field the bounds apply to: one of figures;
	// "finding" or "lesson" for a claim about the findings.
	Figure string
	// Finding is the kind of finding claimed, for Figure "finding" (one
	// of that kind, about the subject if one is given) or "lesson" (the
	// first finding is of that kind).
	Finding sim.FindingKind
	// Min, Max and Equals are the bounds; nil if not given. Equals is
	// never set with Min or Max. Rates (allowed_rate) are per second.
	Min, Max, Equals *float64
	// During is the part of the run the figure is taken over; nil for the
	// whole run.
	During *Span
	// With are flags to run the scenario with before checking, by their
	// YAML names (algorithm, topology, store, servers, seed, duration,
	// on_error, wall_clock), values as written; nil for none.
	With map[string]string
}

// Span is a part of the run, from From (included) to To (excluded).
type Span struct {
	From, To time.Duration
}

const expectWant = "a mapping such as {client: scheduler, rejected: {max: 0}}"

func (d *decoder) expectations(n *yaml.Node, sc *sim.Scenario) []Expectation {
	items := d.list(n, "expect", "a list of expectations, each "+expectWant)
	if len(items) > MaxExpect {
		d.failf(n, "expect", "%d expectations is too many (want at most %d)", len(items), MaxExpect)
		return nil
	}
	var out []Expectation
	for i, item := range items {
		e := d.expectation(item, index("expect", i), sc)
		if d.failed() {
			return nil
		}
		e.Index = i
		out = append(out, e)
	}
	return out
}

func (d *decoder) expectation(n *yaml.Node, p string, sc *sim.Scenario) Expectation {
	f := d.record(n, p, &expectationObject, expectWant)
	e := Expectation{Line: f.node.Line}
	if d.failed() {
		return e
	}
	if fv, isFinding := f.values["finding"]; isFinding {
		return d.findingExpectation(f, fv, sc)
	}
	// The subject.
	d.expectSubject(f, &e, sc, "")
	if d.failed() {
		return e
	}
	// The figure.
	var named []string
	for _, name := range f.order {
		if slices.Contains(figures, name) {
			named = append(named, name)
		}
	}
	switch len(named) {
	case 0:
		d.failf(f.node, p, "no figure to check (want one of %s, e.g. rejected: {max: 0})", words.OneOf(figures))
		return e
	case 1:
	default:
		d.failf(f.keys[named[1]], f.field(named[1]), "a second figure after %s (want one figure per expectation; write another line for this one)", named[0])
		return e
	}
	e.Figure = named[0]
	if e.Key != "" && !slices.Contains(keyFigures, e.Figure) {
		d.failf(f.keys[e.Figure], f.field(e.Figure), "a key has no %s, only its clients do (want client: instead of key:, or one of %s)", e.Figure, words.OneOf(keyFigures))
		return e
	}
	d.bounds(&e, f.values[e.Figure], f.field(e.Figure))
	if d.failed() {
		return e
	}
	if v, ok := f.values["during"]; ok {
		if !slices.Contains(spanFigures, e.Figure) {
			d.failf(f.keys["during"], f.field("during"), "%s is a figure of the whole run only (want during: with %s)", e.Figure, words.OneOf(spanFigures))
			return e
		}
		e.During = d.span(v, f.field("during"), sc)
	}
	if v, ok := f.values["with"]; ok {
		e.With = d.with(v, f.field("with"), sc)
	}
	if d.failed() {
		return e
	}
	e.Text = e.render()
	return e
}

// findingKinds are the finding kinds as a file writes them.
func findingKinds() []string {
	out := make([]string, len(sim.FindingKinds()))
	for i, k := range sim.FindingKinds() {
		out[i] = string(k)
	}
	return out
}

// findingExpectation reads {finding: KIND, client|key: …, with: …}.
func (d *decoder) findingExpectation(f *fields, fv *yaml.Node, sc *sim.Scenario) Expectation {
	e := Expectation{Line: f.node.Line, Figure: "finding"}
	e.Finding = sim.FindingKind(d.choice(fv, f.field("finding"), "finding", findingKinds()))
	for _, name := range f.order {
		if name == "during" || slices.Contains(figures, name) {
			d.failf(f.keys[name], f.field(name), "a finding is about the whole run and has no figure to bound (want finding: with client:, key: or with: only)")
		}
	}
	if !d.failed() {
		d.expectSubject(f, &e, sc, e.Finding)
	}
	if v, ok := f.values["with"]; ok && !d.failed() {
		e.With = d.with(v, f.field("with"), sc)
	}
	if !d.failed() {
		e.Text = e.render()
	}
	return e
}

// expectSubject reads an expectation's client: or key: into e. A figure's
// (finding "") must name one; a finding's may, if its kind is about a
// client or a key (sim.FindingSubject), and then only that one.
func (d *decoder) expectSubject(f *fields, e *Expectation, sc *sim.Scenario, finding sim.FindingKind) {
	cv, hasClient := f.values["client"]
	kv, hasKey := f.values["key"]
	about := sim.FindingSubject(finding) // for a finding: what it may name
	switch {
	case hasClient && hasKey:
		d.failf(f.keys["key"], f.field("key"), "an expectation is about a client or a key, not both (want one of them)")
	case finding != "" && (hasClient && about != "client" || hasKey && about != "key"):
		field := "client"
		if hasKey {
			field = "key"
		}
		want := "no client: or key:, it is about the whole run"
		if about != "" {
			want = "about a " + about + ": " + about + ": NAME"
		}
		d.failf(f.keys[field], f.field(field), "a %s finding is not about a %s (want %s)", finding, field, want)
	case hasClient:
		e.Client = d.subject(cv, f.field("client"), "client", namesOf(sc))
	case hasKey:
		e.Key = d.subject(kv, f.field("key"), "key", keysOf(sc))
	case finding == "":
		d.failf(f.node, f.field("client"), "missing: whose figure is it? (want client: NAME or key: KEY; a glob such as \"bastion-*\" matches several)")
	}
}

// lesson reads the top-level lesson: the kind of finding that must lead.
func (d *decoder) lesson(n *yaml.Node) Expectation {
	e := Expectation{Line: n.Line, Index: -1, Figure: "lesson"}
	e.Finding = sim.FindingKind(d.choice(n, "lesson", "finding", findingKinds()))
	e.Text = e.render()
	return e
}

// subject reads a name or glob and requires it to match one of names.
func (d *decoder) subject(n *yaml.Node, field, what string, names []string) string {
	s := d.text(n, field, "scheduler")
	if d.failed() {
		return ""
	}
	if _, err := path.Match(s, ""); err != nil {
		d.failf(n, field, "%s is not a valid glob (want a name, or a pattern such as \"bastion-*\")", quote(s))
		return ""
	}
	if d.settingsGiven && d.injected[n] == nil {
		return s // the file's own, unchecked against a changed run
	}
	for _, name := range names {
		if ok, _ := path.Match(s, name); ok {
			return s
		}
	}
	d.notOneOf(n, field, fmt.Sprintf("%s matches no %s", quote(s), what), s, names)
	return ""
}

// notOneOf records that s at n is not one of names: msg, the name
// closest to s if one is close, and the first eight names as the want.
// A subject's error (an expectation's, a question's) ends so.
func (d *decoder) notOneOf(n *yaml.Node, field, msg, s string, names []string) {
	list := names
	if len(list) > 8 {
		list = append(slices.Clone(list[:8]), "…")
	}
	if sug := suggest(s, names); sug != "" {
		msg += fmt.Sprintf(", did you mean %q?", sug)
	}
	d.failf(n, field, "%s (want one of %s)", msg, strings.Join(list, ", "))
}

// namesOf are the names of sc's clients, in order.
func namesOf(sc *sim.Scenario) []string {
	out := make([]string, len(sc.Clients))
	for i, c := range sc.Clients {
		out[i] = c.Name
	}
	return out
}

// keysOf are the distinct limiter keys of sc's clients, in order.
func keysOf(sc *sim.Scenario) []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range sc.Clients {
		k := keyOf(c, sc.Limit.Key)
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// keyOf returns the limiter key of c's requests when the limit keys by by:
// for auto, the API key, else the user, else the IP.
func keyOf(c sim.Client, by sim.KeyBy) string {
	switch by {
	case sim.KeyAPIKey:
		return c.APIKey
	case sim.KeyUser:
		return c.User
	case sim.KeyIP:
		return c.IP
	}
	switch {
	case c.APIKey != "":
		return c.APIKey
	case c.User != "":
		return c.User
	}
	return c.IP
}

func (d *decoder) bounds(e *Expectation, n *yaml.Node, field string) {
	want := "a mapping of min, max or equals, e.g. {max: 0}"
	if e.Figure == "allowed_rate" {
		want = "a mapping of min, max or equals, e.g. {max: 11/s}"
	}
	f := d.record(n, field, &boundsObject, want)
	if d.failed() {
		return
	}
	if len(f.order) == 0 {
		d.failf(f.node, field, "no bound (want %s)", want)
		return
	}
	read := func(name string) *float64 {
		v, ok := f.values[name]
		if !ok {
			return nil
		}
		var x float64
		if e.Figure == "allowed_rate" {
			x = d.rate(v, f.field(name), true).PerSecond()
		} else {
			x = d.number(v, f.field(name), "0")
			if !d.failed() && x < 0 {
				d.failf(v, f.field(name), "%s is negative, and %s never is (want 0 or more)", v.Value, e.Figure)
			}
		}
		return &x
	}
	e.Min, e.Max, e.Equals = read("min"), read("max"), read("equals")
	switch {
	case d.failed():
	case e.Equals != nil && (e.Min != nil || e.Max != nil):
		d.failf(f.keys["equals"], f.field("equals"), "equals with min or max (want equals alone, or min and max)")
	case e.Min != nil && e.Max != nil && *e.Min > *e.Max:
		d.failf(f.values["max"], f.field("max"), "%s is below min %s (want min ≤ max)", f.values["max"].Value, f.values["min"].Value)
	}
}

func (d *decoder) span(n *yaml.Node, field string, sc *sim.Scenario) *Span {
	f := d.record(n, field, &spanObject, "a mapping such as {from: 10s, to: 20s}")
	s := &Span{To: sc.Duration}
	if d.failed() {
		return s
	}
	if v, ok := f.values["from"]; ok {
		s.From = d.nonNegative(v, f.field("from"), "10s")
	}
	if v, ok := f.values["to"]; ok {
		s.To = d.positive(v, f.field("to"), "20s")
		if !d.failed() && s.To > sc.Duration {
			d.failf(v, f.field("to"), "%s is after the end of the run (want at most the duration, %s)", s.To, sc.Duration)
		}
	}
	if !d.failed() && s.From >= s.To {
		at, fl := f.values["to"], f.field("to")
		if at == nil {
			at, fl = f.values["from"], f.field("from")
		}
		d.failf(at, fl, "the span from %s to %s is empty (want from < to)", s.From, s.To)
	}
	return s
}

func (d *decoder) with(n *yaml.Node, field string, sc *sim.Scenario) map[string]string {
	f := d.record(n, field, &withObject, "a mapping of flags, e.g. {on_error: fail-closed}")
	out := map[string]string{}
	var given []Setting // for setting a field twice
	for _, name := range f.order {
		v, fl := f.values[name], f.field(name)
		given = append(given, Setting{Name: name, Flag: fl})
		if err := checkTargets(d.root, given); err != nil {
			d.failf(v, fl, "%s", err.(*Error).Msg)
			return nil
		}
		value := v.Value // servers and seed in decimal, whatever base they were written in
		switch name {
		case "algorithm":
			alg := d.choice(v, fl, "algorithm", algorithms.Names())
			if !d.failed() {
				if _, err := sim.WithAlgorithm(*sc, alg); err != nil {
					d.failf(v, fl, "%s cannot use this file's limit: %s", alg, wanting(err, "a limit it accepts"))
				}
			}
		case "topology":
			d.choice(v, fl, "topology", topologyKinds)
		case "store":
			d.storeName(v, fl)
		case "servers":
			// Read against the faults when the run is made: Apply sets
			// it in the file, and a partition's groups, with: or the
			// file's, are read against it with their lines.
			n := d.integer(v, fl, 1, MaxServers, "4")
			value = strconv.FormatInt(n, 10)
		case "seed":
			value = strconv.FormatUint(d.seed(v, fl, "1"), 10)
		case "duration":
			d.runDuration(v, fl)
		case "on_error":
			d.choice(v, fl, "policy", onErrorPolicies)
		case "wall_clock":
			d.wallClock(v, fl)
		case "replication_lag":
			if k := withKind(f, sc); k != sim.Regions && k != sim.SplitBrain && k != sim.Cluster {
				d.failf(v, fl, "only a split-brain, cluster or regions topology replicates, and this one is %s (want it removed, or topology: regions)", k)
				break
			}
			if v.Kind != yaml.ScalarNode || v.Value != "never" || withKind(f, sc) != sim.Regions {
				d.nonNegative(v, fl, "200ms")
			}
		case "sync_interval":
			if k := withKind(f, sc); k != sim.Synced {
				d.failf(v, fl, "only a synced topology has it, and this one is %s (want it removed, or topology: synced)", k)
				break
			}
			d.syncInterval(v, fl)
		case "rate":
			d.rate(v, fl, false)
			value, _ = settingText(v)
		case "burst":
			d.integer(v, fl, 0, 1<<50, "50")
			value, _ = settingText(v)
		case "window":
			d.positive(v, fl, "1m")
			value, _ = settingText(v)
		default:
			// A field's path: set in the file by Apply
			// when the run is made, and read by the field's reader then.
			value, _ = settingText(v)
		}
		if !d.failed() && hasAlias(v, 0) {
			// Written out again as a setting's text, an alias repeats
			// its anchor's value: nine nested anchors of ten aliases
			// each are a billion nodes.
			d.failf(v, fl, "the value refers to an anchor (want the value written out)")
		}
		if d.failed() {
			return nil
		}
		out[name] = value
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// serversFit requires Override's servers (set over a scenario already
// read, not in the file as Apply sets it) to leave the file's faults
// meaningful: a partition's groups name every server, so the count cannot
// change under it, and a clock skew's servers must still exist.
func (d *decoder) serversFit(n *yaml.Node, field string, servers int, sc *sim.Scenario) {
	for i, ft := range sc.Faults {
		switch {
		case ft.Kind == sim.Partition && servers != sc.Servers:
			d.failf(n, field, "faults[%d] partitions the file's %d servers into groups, which must name every server (want %d servers, or no partition)", i, sc.Servers, sc.Servers)
			return
		case ft.Kind == sim.ClockSkew:
			for _, s := range ft.Servers {
				if s >= servers {
					d.failf(n, field, "faults[%d] skews the clock of server %d, which %d servers do not have (want at least %d)", i, s, servers, s+1)
					return
				}
			}
		}
	}
}

// render writes the expectation as a person would say it.
func (e *Expectation) render() string {
	var b strings.Builder
	switch e.Figure {
	case "lesson":
		return "lesson: " + string(e.Finding) + " leads the findings"
	case "finding":
		b.WriteString("finding " + string(e.Finding))
		switch {
		case e.Client != "":
			b.WriteString(" about " + e.Client)
		case e.Key != "":
			b.WriteString(" about key " + e.Key)
		}
		e.renderWith(&b)
		return b.String()
	}
	if e.Key != "" {
		b.WriteString("key " + e.Key)
	} else {
		b.WriteString(e.Client)
	}
	b.WriteString(" " + e.Figure)
	num := func(x float64) string {
		s := strconv.FormatFloat(x, 'g', -1, 64)
		if e.Figure == "allowed_rate" {
			s += "/s"
		}
		return s
	}
	switch {
	case e.Equals != nil:
		b.WriteString(" == " + num(*e.Equals))
	case e.Min != nil && e.Max != nil:
		b.WriteString(" >= " + num(*e.Min) + " and <= " + num(*e.Max))
	case e.Min != nil:
		b.WriteString(" >= " + num(*e.Min))
	case e.Max != nil:
		b.WriteString(" <= " + num(*e.Max))
	}
	if e.During != nil {
		fmt.Fprintf(&b, " during %s-%s", e.During.From, e.During.To)
	}
	e.renderWith(&b)
	return b.String()
}

func (e *Expectation) renderWith(b *strings.Builder) {
	if len(e.With) > 0 {
		var parts []string
		for _, k := range sortedKeys(e.With) {
			parts = append(parts, k+"="+e.With[k])
		}
		b.WriteString(" with " + strings.Join(parts, ", "))
	}
}

// withKind is the topology a with: block runs on: its own topology:, or
// the file's.
func withKind(f *fields, sc *sim.Scenario) sim.TopologyKind {
	if v, ok := f.values["topology"]; ok && v.Kind == yaml.ScalarNode {
		return sim.TopologyKind(v.Value)
	}
	return sc.Topology.Kind
}
