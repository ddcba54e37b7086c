package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/simrun"
)

// cliOptions are the bounds `ratelim sim --format json` runs with by
// default.
var cliOptions = sim.Options{MaxRequests: sim.DefaultMaxRequests, MaxMemory: sim.DefaultMaxMemory, FitStep: true}

// cliRun is what `ratelim sim NAME [settings] --format F` writes, made
// as the CLI makes it: simrun.Run on the built-in with the settings as
// its flags give them.
func cliRun(t *testing.T, name string, sets []scenarios.Setting, format string) string {
	t.Helper()
	f, err := scenarios.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if _, err := simrun.Run(context.Background(), &b, simrun.Options{File: f, Settings: sets, Sim: cliOptions, Layout: simrun.Layout{Format: format}}); err != nil {
		t.Fatalf("simrun.Run(%s, %v): %v", name, sets, err)
	}
	return b.String()
}

// The page's numbers are the CLI's: for every built-in, with no settings
// and with some, Run's result is the bytes `ratelim sim NAME --format
// json` writes, and its table the bytes of --format table.
func TestRunIsTheCLIsRun(t *testing.T) {
	t.Parallel()
	for _, b := range Builtins() {
		for _, tc := range []struct {
			given []Setting
			cli   []scenarios.Setting // as the CLI's flags give them
		}{
			{nil, nil},
			{[]Setting{{"seed", "7"}}, []scenarios.Setting{{Name: "seed", Value: "7", Flag: "--seed"}}},
			// Given in another order than the CLI applies them: Run
			// applies them in the CLI's.
			{[]Setting{{"balancer", "random"}, {"seed", "3"}}, []scenarios.Setting{{Name: "seed", Value: "3", Flag: "--seed"}, {Name: "balancer", Value: "random", Flag: "--balancer"}}},
		} {
			var p Playground
			resp := p.Run(context.Background(), State{Builtin: b.Name, Settings: tc.given})
			if resp.Error != nil {
				t.Errorf("%s %v: %s", b.Name, tc.given, resp.Error.Text)
				continue
			}
			if want := cliRun(t, b.Name, tc.cli, "json"); string(resp.Result) != want {
				t.Errorf("%s %v: the result differs from ratelim sim's JSON", b.Name, tc.given)
			}
			if want := cliRun(t, b.Name, tc.cli, "table"); resp.Table != want {
				t.Errorf("%s %v: the table differs from ratelim sim's:\n%s\nwant\n%s", b.Name, tc.given, resp.Table, want)
			}
			var r sim.Result
			if err := json.Unmarshal(resp.Result, &r); err != nil {
				t.Fatal(err)
			}
			if resp.Headline != sim.Headline(&r) || len(resp.Findings) != len(r.Findings) || resp.DurationS != r.DurationS {
				t.Errorf("%s: headline %q, %d findings, %gs; want the result's", b.Name, resp.Headline, len(resp.Findings), resp.DurationS)
			}
			if !strings.HasPrefix(resp.Timeline, "<?xml") || !strings.Contains(resp.Timeline, "<svg") {
				t.Errorf("%s: the timeline is no SVG: %.80q", b.Name, resp.Timeline)
			}
			if s := resp.Scenario; s == nil || s.Name != b.Name || s.File != b.Name || s.Source == "" || len(s.Clients) != len(r.Clients) || s.StepS != r.StepS {
				t.Errorf("%s: scenario %+v", b.Name, resp.Scenario)
			}
		}
	}
}

// With no setting the file's expectations are checked and listed, as
// the table's summary counts them; with one, none are (they are about
// the file).
func TestRunChecksTheFilesExpectations(t *testing.T) {
	var p Playground
	resp := p.Run(context.Background(), State{Builtin: "store-outage"})
	var r sim.Result
	if err := json.Unmarshal(resp.Result, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Expectations) == 0 || len(resp.Expectations) < len(r.Expectations) {
		t.Fatalf("store-outage: %d expectations shown for %d checked", len(resp.Expectations), len(r.Expectations))
	}
	for i, e := range r.Expectations {
		if got := resp.Expectations[i]; got.Text != e.Text || got.OK != e.OK || got.Skipped {
			t.Errorf("expectation %d: %+v, want %+v", i, got, e)
		}
	}
	f, _ := scenarios.Open("store-outage")
	with := 0
	for _, e := range f.Expect {
		if len(e.With) > 0 {
			with++
		}
	}
	if skipped := len(resp.Expectations) - len(r.Expectations); skipped != with {
		t.Errorf("%d skipped, want the %d with a with:", skipped, with)
	}
	if resp := p.Run(context.Background(), State{Builtin: "store-outage", Settings: []Setting{{"seed", "2"}}}); len(resp.Expectations) != 0 {
		t.Errorf("with a setting: %d expectations, want none", len(resp.Expectations))
	}
}

func TestCommandReproducesTheRun(t *testing.T) {
	yaml, _ := scenarios.Open("partition")
	for _, tc := range []struct {
		state State
		want  string
	}{
		{State{Builtin: "partition"}, "ratelim sim partition"},
		{State{Builtin: "runaway-healthcheck", Settings: []Setting{{"limit.burst", "20"}}}, "ratelim sim runaway-healthcheck --set limit.burst=20"},
		// Paths first, then the flags in the CLI's order, each as typed.
		{State{Builtin: "partition", Settings: []Setting{{"seed", "9"}, {"on_error", "fail-closed"}, {"topology.failover_after", "5s"}, {"burst", "10"}}},
			"ratelim sim partition --set topology.failover_after=5s --seed 9 --on-error fail-closed --burst 10"},
		{State{YAML: string(yaml.Source)}, "ratelim sim scenario.yaml"},
		{State{YAML: string(yaml.Source), FileName: "my lab's.yaml", Settings: []Setting{{"clients[0].traffic", "{pattern: constant, rate: 5/s}"}}},
			`ratelim sim 'my lab'\''s.yaml' --set 'clients[0].traffic={pattern: constant, rate: 5/s}'`},
		{State{Builtin: "store-outage", Vs: []Setting{{"on_error", "fail-closed"}}}, "ratelim sim store-outage"},
	} {
		var p Playground
		p.noDrawing = true
		resp := p.Run(context.Background(), tc.state)
		if resp.Error != nil {
			t.Errorf("%+v: %s", tc.state, resp.Error.Text)
			continue
		}
		if resp.Command != tc.want {
			t.Errorf("command %s, want %s", resp.Command, tc.want)
		}
	}
}

// A file that cannot be used, or a setting, comes back as an error the
// CLI would print, with its file, line and field apart for the page.
func TestRunErrorsSayWhereAndWhat(t *testing.T) {
	partition, _ := scenarios.Open("runaway-healthcheck")
	source := string(partition.Source)
	badBurst := strings.Replace(source, "burst: 50 ", "burst: lots", 1)
	burstLine := 1 + strings.Count(source[:strings.Index(source, "burst: 50 ")], "\n")
	huge := strings.Replace(source, "rate: 1000/s", "rate: 1000000/s", 1)
	for _, tc := range []struct {
		name  string
		state State
		want  ErrorView // Text: a part of it
		file  bool      // the file read: scenario and controls shown
	}{
		{"a syntax error", State{YAML: "name: x\nlimit: [\n"}, ErrorView{Text: "scenario.yaml:", File: "scenario.yaml", Line: 2}, false},
		{"an unknown field", State{YAML: "name: x\ncolour: red\n", FileName: "lab.yaml"}, ErrorView{Text: "lab.yaml:2: colour: unknown field", File: "lab.yaml", Line: 2, Field: "colour"}, false},
		{"a bad value", State{YAML: badBurst}, ErrorView{Text: "limit.burst:", File: "scenario.yaml", Line: burstLine, Field: "limit.burst"}, false},
		{"a bad setting", State{Builtin: "runaway-healthcheck", Settings: []Setting{{"limit.burst", "-1"}}}, ErrorView{Text: "--set limit.burst: ", Field: "--set limit.burst"}, true},
		{"an unknown setting", State{Builtin: "runaway-healthcheck", Settings: []Setting{{"colour", "red"}}}, ErrorView{Text: `--set colour: unknown setting "colour"`, Field: "--set colour"}, true},
		{"a setting the run does not read", State{Builtin: "runaway-healthcheck", Settings: []Setting{{"window", "2s"}}}, ErrorView{Text: "--window: token-bucket reads no window", Field: "--window"}, true},
		{"a bad --vs", State{Builtin: "store-outage", Vs: []Setting{{"on_error", "closed"}}}, ErrorView{Text: `--vs on-error: unknown policy "closed"`, Field: "--vs on-error"}, true},
		{"too large", State{YAML: source + strings.Repeat("#", MaxYAML)}, ErrorView{Text: "scenario.yaml: 1.0 MiB of YAML, more than the playground reads (want at most 1.0 MiB", File: "scenario.yaml"}, false},
		{"too many requests", State{YAML: huge}, ErrorView{Text: "run it with ratelim sim: the playground stops at 2,000,000 requests"}, true},
		{"a setting the file's line refuses", State{Builtin: "api-quotas", Settings: []Setting{{"limits[hourly].algorithm", "gcra"}}},
			ErrorView{Text: "--set limits[hourly].algorithm=gcra: limits[1].burst (line 37): missing", File: "api-quotas", Line: 37, Field: "--set limits[hourly].algorithm=gcra"}, true},
		{"an unknown built-in", State{Builtin: "partiton"}, ErrorView{Text: `unknown scenario "partiton", did you mean "partition"?`}, false},
		{"a built-in's name that is a path", State{Builtin: "../go.mod"}, ErrorView{Text: `unknown scenario "../go.mod"`}, false},
		{"no scenario", State{}, ErrorView{Text: "no scenario (want"}, false},
		{"a built-in's name for a text", State{YAML: source, FileName: "nat"}, ErrorView{Text: `file name: "nat" is a built-in's name, which ratelim sim would run instead of this text (want e.g. nat.yaml)`}, false},
		{"stdin's name", State{YAML: source, FileName: "-"}, ErrorView{Text: `file name: "-" reads as stdin`}, false},
		{"a flag's name", State{YAML: source, FileName: "--seed=3"}, ErrorView{Text: `file name: "--seed=3" reads as a flag`}, false},
		{"a file name with a newline", State{YAML: source, FileName: "a\nb.yaml:1: forged"}, ErrorView{Text: "file name: "}, false},
	} {
		var p Playground
		resp := p.Run(context.Background(), tc.state)
		e := resp.Error
		if e == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		if !strings.Contains(e.Text, tc.want.Text) || e.File != tc.want.File || e.Line != tc.want.Line || e.Field != tc.want.Field || strings.HasPrefix(e.Text, "internal error") {
			t.Errorf("%s: %+v, want %+v", tc.name, *e, tc.want)
		}
		if tc.file != (resp.Scenario != nil && len(resp.Controls) > 0) || resp.Result != nil || resp.Timeline != "" {
			t.Errorf("%s: scenario %v, %d controls, result %d bytes; want the file's scenario and controls (%v) and nothing else", tc.name, resp.Scenario != nil, len(resp.Controls), len(resp.Result), tc.file)
		}
	}
}

// The text of a file's error is the scenarios error's, which the CLI
// prints after "ratelim: ".
func TestRunErrorIsTheCLIs(t *testing.T) {
	const yaml = "name: x\nduration: 30s\nlimit: {rate: 10/s, burst: 0}\nclients: [{name: a, traffic: {pattern: constant, rate: 5/s}}]\n"
	_, err := scenarios.Parse("lab.yaml", []byte(yaml))
	var p Playground
	resp := p.Run(context.Background(), State{YAML: yaml, FileName: "lab.yaml"})
	if err == nil || resp.Error == nil || resp.Error.Text != err.Error() {
		t.Errorf("error %+v, want %v", resp.Error, err)
	}
}

func TestFrameCutsTheLastRun(t *testing.T) {
	var p Playground
	if _, err := p.Frame(1); err == nil {
		t.Error("Frame before a run: no error")
	}
	resp := p.Run(context.Background(), State{Builtin: "runaway-healthcheck"})
	var r sim.Result
	if err := json.Unmarshal(resp.Result, &r); err != nil {
		t.Fatal(err)
	}
	prev := make([]int64, len(r.Clients))
	for _, tc := range []struct{ t, want float64 }{{-5, 0}, {0, 0}, {12.7, 12}, {r.DurationS, r.DurationS}, {1e300, r.DurationS}} {
		f, err := p.Frame(tc.t)
		if err != nil {
			t.Fatalf("Frame(%g): %v", tc.t, err)
		}
		if f.T != tc.want || !strings.Contains(f.Timeline, "<svg") || len(f.Clients) != len(r.Clients) {
			t.Errorf("Frame(%g): t %g, %d clients; want t %g and every client", tc.t, f.T, len(f.Clients), tc.want)
			continue
		}
		// A frame's counts are the timeline's rows that ended by its t.
		sofar := map[string]ClientView{}
		for _, row := range r.Timeline {
			if row.TS+r.StepS <= f.T+1e-9 {
				v := sofar[row.Client]
				v.Sent, v.Allowed, v.Rejected = v.Sent+row.Sent, v.Allowed+row.Allowed, v.Rejected+row.Rejected
				sofar[row.Client] = v
			}
		}
		for i, c := range f.Clients {
			whole := r.Clients[i]
			rows := sofar[c.Name]
			switch {
			case c.Sent != rows.Sent || c.Allowed != rows.Allowed || c.Rejected != rows.Rejected:
				t.Errorf("Frame(%g): %s %d/%d/%d sent/allowed/rejected, the timeline's rows to then %d/%d/%d", tc.t, c.Name, c.Sent, c.Allowed, c.Rejected, rows.Sent, rows.Allowed, rows.Rejected)
			case c.Name != whole.Name || c.Allowed+c.Rejected > c.Sent || c.Sent < prev[i] || c.Sent > whole.Sent:
				t.Errorf("Frame(%g): %+v after %d, of %d in all", tc.t, c, prev[i], whole.Sent)
			case tc.want == 0 && (c.Sent != 0 || c.Allowed != 0):
				t.Errorf("Frame(0): %+v, want nothing yet", c)
			case tc.want == r.DurationS && (c.Sent != whole.Sent || c.Allowed != whole.Allowed || c.Rejected != whole.Rejected):
				t.Errorf("Frame(end): %+v, want the run's %d %d %d", c, whole.Sent, whole.Allowed, whole.Rejected)
			}
			prev[i] = c.Sent
		}
	}
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if f, err := p.Frame(bad); err == nil || !strings.Contains(err.Error(), "want a number of seconds") {
			t.Errorf("Frame(%g) = %v, %v; want refused", bad, f, err)
		}
	}
	// After a run that failed there is no run to cut.
	p.Run(context.Background(), State{Builtin: "nosuch"})
	if _, err := p.Frame(1); err == nil {
		t.Error("Frame after a failed run: no error")
	}
}

// The side by side is `ratelim sim X --vs`'s: its labels, its rows, B's
// result as `ratelim sim` with B's settings writes it.
func TestVsIsTheCLIs(t *testing.T) {
	for _, tc := range []struct {
		name       string
		set, vs    []Setting
		cliA, cliB []scenarios.Setting
		labelB     string
		command    string
	}{
		{"store-outage", nil, []Setting{{"on_error", "fail-closed"}}, nil,
			[]scenarios.Setting{{Name: "on-error", Value: "fail-closed", Flag: "--on-error"}},
			"on-error=fail-closed", "ratelim sim store-outage --vs on-error=fail-closed"},
		{"nat", nil, []Setting{{"balancer", "random"}}, nil,
			[]scenarios.Setting{{Name: "balancer", Value: "random", Flag: "--balancer"}},
			"balancer=random", "ratelim sim nat --vs balancer=random"},
		{"runaway-healthcheck", []Setting{{"limit.burst", "20"}}, []Setting{{"limit.burst", "100"}, {"servers", "2"}},
			[]scenarios.Setting{{Name: "limit.burst", Value: "20", Flag: "--set limit.burst"}},
			[]scenarios.Setting{{Name: "limit.burst", Value: "100", Flag: "--set limit.burst"}, {Name: "servers", Value: "2", Flag: "--servers"}},
			"limit.burst=100 servers=2", "ratelim sim runaway-healthcheck --set limit.burst=20 --vs limit.burst=100 --vs servers=2"},
	} {
		var p Playground
		resp := p.Run(context.Background(), State{Builtin: tc.name, Settings: tc.set, Vs: tc.vs})
		if resp.Error != nil || resp.Vs == nil {
			t.Fatalf("%s: %+v", tc.name, resp.Error)
		}
		// As the CLI makes them: A, then B of A's file with the --vs on top.
		file, _ := scenarios.Open(tc.name)
		fileA, err := simrun.Apply(file, tc.cliA)
		if err != nil {
			t.Fatal(err)
		}
		var sets []scenarios.Setting
		for _, s := range tc.vs {
			name := simrun.SettingName(s.Name)
			sets = append(sets, scenarios.Setting{Name: name, Value: s.Value, Flag: "--vs " + name})
		}
		vs := simrun.Versus{Settings: sets}
		fileB, err := vs.Apply(fileA)
		if err != nil {
			t.Fatal(err)
		}
		a, errA := sim.Run(context.Background(), fileA.Scenario, cliOptions)
		b, errB := sim.Run(context.Background(), fileB.Scenario, cliOptions)
		if errA != nil || errB != nil {
			t.Fatal(errA, errB)
		}
		var rows bytes.Buffer
		if err := simrun.WriteVersusComparison(&rows, a, b); err != nil {
			t.Fatal(err)
		}
		labelA, labelB := vs.Labels(fileA, fileB)
		v := resp.Vs
		if v.Rows != rows.String() || v.LabelA != labelA || v.LabelB != labelB || v.LabelB != tc.labelB || v.Command != tc.command {
			t.Errorf("%s: labels %q, %q, command %q, rows\n%s\nwant %q, %q, %q,\n%s", tc.name, v.LabelA, v.LabelB, v.Command, v.Rows, labelA, tc.labelB, tc.command, rows.String())
		}
		var resultB bytes.Buffer
		if err := simrun.WriteResult(context.Background(), &resultB, b, simrun.Layout{Format: "json"}); err != nil {
			t.Fatal(err)
		}
		if string(v.Result) != resultB.String() {
			t.Errorf("%s: B's result differs from the CLI's run B", tc.name)
		}
		if tc.cliA == nil {
			// B alone is the file with B's settings, as flags.
			if want := cliRun(t, tc.name, tc.cliB, "json"); string(v.Result) != want {
				t.Errorf("%s: B's result differs from ratelim sim's with B's settings", tc.name)
			}
		}
		if !strings.Contains(v.Timeline, "<svg") {
			t.Errorf("%s: no side by side drawn", tc.name)
		}
	}
}

func TestBuiltinsAreTheScenarios(t *testing.T) {
	got := Builtins()
	if len(got) != len(scenarios.Builtin()) || len(got) < 16 {
		t.Fatalf("%d built-ins, want scenarios' %d", len(got), len(scenarios.Builtin()))
	}
	for i, b := range got {
		f, err := scenarios.Open(b.Name)
		if err != nil || b.Name != scenarios.Builtin()[i] || b.Summary != f.Scenario.Summary || b.Summary == "" {
			t.Errorf("%+v: want %s's name and summary (%v)", b, scenarios.Builtin()[i], err)
		}
	}
	got[0].Name = "changed"
	if Builtins()[0].Name == "changed" {
		t.Error("Builtins returned its own list: a caller changed it")
	}
}

// Each built-in's question comes with the run's answer, as
// scenarios.Question.Answer gives it on the CLI's run.
func TestQuestionIsAnsweredByTheRun(t *testing.T) {
	asked := 0
	for _, b := range Builtins() {
		f, err := scenarios.Open(b.Name)
		if err != nil {
			t.Fatal(err)
		}
		var p Playground
		p.noDrawing = true
		resp := p.Run(context.Background(), State{Builtin: b.Name})
		if f.Question == nil {
			if resp.Question != nil {
				t.Errorf("%s asks nothing, and the page has %+v", b.Name, resp.Question)
			}
			continue
		}
		asked++
		r, err := sim.Run(context.Background(), f.Scenario, cliOptions)
		if err != nil {
			t.Fatal(err)
		}
		want, err := f.Question.Answer(r)
		if err != nil {
			t.Fatal(err)
		}
		q := resp.Question
		switch {
		case q == nil:
			t.Errorf("%s: no question", b.Name)
		case q.Ask != f.Question.Text(f) || strings.Contains(q.Ask, "{") || q.Answer.AllTied != want.AllTied || q.Pick != f.Question.Pick || q.Answer.Text != want.Text || q.Answer.Value != want.Value || !reflect.DeepEqual(q.Answer.Clients, want.Clients):
			t.Errorf("%s: %+v, want %q answered %+v", b.Name, *q, f.Question.Text(f), want)
		case (q.Pick != "") != (len(q.Choices) == len(r.Clients) && len(q.Choices) > 0):
			t.Errorf("%s: pick %q with choices %v", b.Name, q.Pick, q.Choices)
		}
	}
	if asked == 0 {
		t.Error("no built-in asks a question")
	}
}

// Download YAML is the file with run A's settings written in: read back,
// it runs as run A did. A setting that cannot be written says so.
func TestWrittenRunsAsRunA(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  []Setting
	}{
		{"runaway-healthcheck", nil},
		{"runaway-healthcheck", []Setting{{"limit.burst", "20"}, {"servers", "2"}}},
		{"store-outage", []Setting{{"on-error", "fail-closed"}, {"faults[0].start", "5s"}}},
		{"partition", []Setting{{"topology.failover_after", "5s"}, {"clients[app].traffic.rate", "30/s"}}},
		{"window-boundary", []Setting{{"algorithm", "sliding-log"}}},
		{"api-quotas", []Setting{{"limits[hourly].rate", "2000/h"}}},
	} {
		var p Playground
		p.noDrawing = true
		state := State{Builtin: tc.name, Settings: tc.set}
		resp := p.Run(context.Background(), state)
		if resp.Error != nil {
			t.Fatalf("%s %v: %s", tc.name, tc.set, resp.Error.Text)
		}
		w := p.Written(state)
		if w.Error != nil {
			if !strings.Contains(w.Error.Text, "(want") {
				t.Errorf("%s %v: nothing written, and %q says not why", tc.name, tc.set, w.Error.Text)
			}
			continue
		}
		if tc.set == nil && w.YAML != resp.Scenario.Source {
			t.Errorf("%s: with no setting, the file written is not the file", tc.name)
		}
		written := p.Run(context.Background(), State{YAML: w.YAML, FileName: tc.name + ".yaml"})
		if written.Error != nil {
			t.Fatalf("%s %v: the file written: %s", tc.name, tc.set, written.Error.Text)
		}
		if !reflect.DeepEqual(withoutExpectations(t, written.Result), withoutExpectations(t, resp.Result)) {
			t.Errorf("%s %v: the file written runs otherwise than run A", tc.name, tc.set)
		}
	}
}

// Written answers a state that does not run with the error the run
// gives, and a setting Written cannot write with why, naming the flag.
func TestWrittenSaysWhyNot(t *testing.T) {
	t.Parallel()
	var p Playground
	for _, tc := range []struct {
		state State
		want  string
	}{
		{State{Builtin: "no-such"}, "no-such"},
		{State{Builtin: "partition", Settings: []Setting{{"limit.burst", "x"}}}, "--set limit.burst: \"x\""},
		{State{Builtin: "partition", Settings: []Setting{{"duration", "1s"}}}, "(want"},
	} {
		w := p.Written(tc.state)
		if w.Error == nil || !strings.Contains(w.Error.Text, tc.want) || w.YAML != "" {
			t.Errorf("Written(%+v) = %+v, want an error with %q and no YAML", tc.state, w, tc.want)
		}
	}
}

// A run the page no longer shows is not cut: after Forget (the bridge's
// call when a run's JSON does not read), and after a failed Run, Frame
// refuses.
func TestFrameForgetsARunThatFailed(t *testing.T) {
	t.Parallel()
	for _, fail := range []struct {
		name string
		do   func(p *Playground)
	}{
		{"Forget", func(p *Playground) { p.Forget() }},
		{"a failed Run", func(p *Playground) { p.Run(context.Background(), State{Builtin: "no-such"}) }},
	} {
		var p Playground
		if resp := p.Run(context.Background(), State{Builtin: "partition"}); resp.Error != nil {
			t.Fatal(resp.Error.Text)
		}
		if _, err := p.Frame(1); err != nil {
			t.Fatalf("Frame after a run: %v", err)
		}
		fail.do(&p)
		if f, err := p.Frame(1); err == nil {
			t.Errorf("after %s: Frame(1) = a frame at %v s, want an error", fail.name, f.T)
		}
	}
}

// A setting too long says which of its name or value is, and how long,
// and a name cut short for the message is cut between runes.
func TestTooLongSettingSaysWhich(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", maxSettingValue+1)
	runes := strings.Repeat("é", maxSettingValue) // 2 bytes each: byte 64 is inside one
	for _, tc := range []struct {
		set  Setting
		want string
	}{
		{Setting{long, "1"}, fmt.Sprintf("the name is %d bytes", len(long))},
		{Setting{"seed", long}, fmt.Sprintf("the value is %d bytes", len(long))},
		{Setting{"limits[" + runes + "].burst", "1"}, "the name is"},
	} {
		var p Playground
		resp := p.Run(context.Background(), State{Builtin: "partition", Settings: []Setting{tc.set}})
		if resp.Error == nil {
			t.Fatalf("%.20s=%.20s: ran, want an error", tc.set.Name, tc.set.Value)
		}
		if !strings.Contains(resp.Error.Text, tc.want) {
			t.Errorf("%.20s=%.20s: %q, want it to say %q", tc.set.Name, tc.set.Value, resp.Error.Text, tc.want)
		}
		if !utf8.ValidString(resp.Error.Text) || strings.ContainsRune(resp.Error.Text, utf8.RuneError) {
			t.Errorf("%.20s: %q cuts a rune", tc.set.Name, resp.Error.Text)
		}
	}
}

// The bytes `ratelim sim --format json` writes reach the page as they
// are: resultJSON, through JSON encoding as the bridge encodes the
// Response; result is the same value, compacted.
func TestResultJSONIsTheCLIsBytes(t *testing.T) {
	t.Parallel()
	var p Playground
	resp := p.Run(context.Background(), State{Builtin: "store-outage", Vs: []Setting{{"on_error", "fail-closed"}}})
	if resp.Error != nil {
		t.Fatal(resp.Error.Text)
	}
	data, err := json.Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	var page struct {
		Result     json.RawMessage `json:"result"`
		ResultJSON string          `json:"resultJSON"`
		Vs         struct {
			ResultJSON string `json:"resultJSON"`
		} `json:"vs"`
	}
	if err := json.Unmarshal(data, &page); err != nil {
		t.Fatal(err)
	}
	if want := cliRun(t, "store-outage", nil, "json"); page.ResultJSON != want {
		t.Errorf("resultJSON is not ratelim sim's bytes (%d bytes, want %d)", len(page.ResultJSON), len(want))
	}
	var value, fromText any
	if err := json.Unmarshal(page.Result, &value); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(page.ResultJSON), &fromText); err != nil || !reflect.DeepEqual(value, fromText) {
		t.Errorf("result is not resultJSON's value (%v)", err)
	}
	b := cliRun(t, "store-outage", []scenarios.Setting{{Name: "on_error", Value: "fail-closed", Flag: "--on-error"}}, "json")
	if page.Vs.ResultJSON != b {
		t.Errorf("vs.resultJSON is not ratelim sim --on-error fail-closed's bytes")
	}
}

// The question asks with the run's values: its placeholders filled from
// the file as run A's settings made it.
func TestQuestionAsksWithTheRunsValues(t *testing.T) {
	t.Parallel()
	var p Playground
	resp := p.Run(context.Background(), State{Builtin: "partition", Settings: []Setting{{"limit.burst", "33"}}})
	if resp.Error != nil || resp.Question == nil {
		t.Fatalf("partition: %+v, no question", resp.Error)
	}
	if ask := resp.Question.Ask; strings.Contains(ask, "{") || !strings.Contains(ask, "burst 33") {
		t.Errorf("ask %q, want its placeholders filled, burst 33", ask)
	}
}

// The page's figures are drawn 7.5 inches wide (540 pt), the timeline,
// its frames and the side by side alike, so that fitted to the page's
// column their text reads at 11 px or so rather than 7–9.
func TestFiguresAreDrawnForThePage(t *testing.T) {
	t.Parallel()
	var p Playground
	resp := p.Run(context.Background(), State{Builtin: "store-outage", Vs: []Setting{{"on_error", "fail-closed"}}})
	if resp.Error != nil {
		t.Fatal(resp.Error.Text)
	}
	f, err := p.Frame(12)
	if err != nil {
		t.Fatal(err)
	}
	for name, svg := range map[string]string{"timeline": resp.Timeline, "vs": resp.Vs.Timeline, "frame": f.Timeline} {
		if !strings.Contains(svg, `<svg width="540pt"`) {
			t.Errorf("%s: %.200s; want it 540pt wide", name, svg)
		}
	}
}
