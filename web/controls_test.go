package web

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// withoutExpectations is a result's JSON with its expectations left out:
// a run with a setting checks none (they are about the file).
func withoutExpectations(t testing.TB, data []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "expectations")
	return m
}

// Every control of every built-in, set to the file's own value, leaves
// the run as it was: the controls read the file as the run does.
func TestControlsAtTheFilesValueChangeNothing(t *testing.T) {
	t.Parallel()
	for _, b := range Builtins() {
		p := Playground{noDrawing: true}
		base := p.Run(context.Background(), State{Builtin: b.Name})
		if base.Error != nil {
			t.Fatalf("%s: %s", b.Name, base.Error.Text)
		}
		want := withoutExpectations(t, base.Result)
		groups := map[string]bool{}
		for _, c := range base.Controls {
			groups[c.Group] = true
			if c.Value != c.FileValue || c.Value == "" {
				t.Errorf("%s: %s: value %q, file's %q; want the file's, with no setting", b.Name, c.Name, c.Value, c.FileValue)
			}
			resp := p.Run(context.Background(), State{Builtin: b.Name, Settings: []Setting{{c.Name, c.FileValue}}})
			if resp.Error != nil {
				t.Errorf("%s: %s=%s: %s", b.Name, c.Name, c.FileValue, resp.Error.Text)
				continue
			}
			if got := withoutExpectations(t, resp.Result); !reflect.DeepEqual(got, want) {
				t.Errorf("%s: %s=%s changed the run", b.Name, c.Name, c.FileValue)
			}
			for _, after := range resp.Controls {
				if after.Name == c.Name && after.Value != c.FileValue {
					t.Errorf("%s: %s=%s: the control says %q", b.Name, c.Name, c.FileValue, after.Value)
				}
			}
		}
		if !groups[groupLimit] || !groups[groupTopology] {
			t.Errorf("%s: controls in %v, want limit and topology", b.Name, groups)
		}
	}
}

// A control shows what the run used: a setting moves its value, not its
// file's value, and a control the run's algorithm does not read goes.
func TestControlsFollowTheRun(t *testing.T) {
	p := Playground{noDrawing: true}
	resp := p.Run(context.Background(), State{Builtin: "runaway-healthcheck", Settings: []Setting{{"limit.burst", "20"}}})
	c := control(resp.Controls, "limit.burst")
	if c == nil || c.Value != "20" || c.FileValue != "50" || c.Kind != kindInt || c.Min != 1 || c.Max != 200 {
		t.Errorf("limit.burst: %+v; want 20 of the file's 50, a slider to 200", c)
	}
	resp = p.Run(context.Background(), State{Builtin: "runaway-healthcheck", Settings: []Setting{{"algorithm", "fixed-window"}}})
	if control(resp.Controls, "limit.burst") != nil {
		t.Error("a fixed window reads no burst, and its control stays")
	}
	if w := control(resp.Controls, "limit.window"); w == nil || w.Value != "1s" || w.Unit != "s" || w.Min <= 0 {
		t.Errorf("limit.window: %+v; want the window the run used, positive", w)
	}
	// partition's fault is 10s–20s of 30s: its start from 0 to a step
	// before its end, its end from a step after its start to the run's.
	resp = p.Run(context.Background(), State{Builtin: "partition"})
	for _, tc := range []struct {
		name     string
		min, max float64
	}{{"faults[0].start", 0, 19}, {"faults[0].end", 11, resp.DurationS}} {
		c := control(resp.Controls, tc.name)
		if c == nil || c.Group != groupFaults || c.Kind != kindDuration || c.Min != tc.min || c.Max != tc.max {
			t.Errorf("%s: %+v; want a slider from %v to %v", tc.name, c, tc.min, tc.max)
		}
	}
	if c := control(resp.Controls, "servers"); c != nil {
		t.Errorf("partition names servers in its faults, and offers servers: %+v", c)
	}
	if control(resp.Controls, "topology.failover_after") == nil {
		t.Errorf("partition (split-brain) has no failover_after control: %v", names(resp.Controls))
	}
	// A limit of 1000/h over 1h: its rate in /h, its window from 3.6s.
	tr := p.Run(context.Background(), State{Builtin: "two-regions"})
	if c := control(tr.Controls, "limit.rate"); c == nil || c.Unit != "/h" || c.Min != 1 || c.Max != 4000 {
		t.Errorf("two-regions limit.rate: %+v; want /h, 1 to 4000", c)
	}
	if c := control(tr.Controls, "limit.window"); c == nil || c.Min != 4 {
		t.Errorf("two-regions limit.window: %+v; want it from 4s (1000/h admits one in 3.6s)", c)
	}
	if c := p.Choices(State{Builtin: "two-regions"}, "algorithm", false); c.Error != nil || slices.Contains(c.Choices, "concurrency") || !slices.Contains(c.Choices, "sliding-log") {
		t.Errorf("two-regions algorithm: %+v; want no concurrency for a rate, and sliding-log", c)
	}
	if c := p.Choices(State{Builtin: "two-regions"}, "topology", false); c.Error != nil || !slices.Equal(c.Choices, []string{"regions"}) {
		t.Errorf("two-regions topology: %+v; want regions alone", c)
	}
	if c := control(tr.Controls, "topology"); c == nil || len(c.Choices) < 2 {
		t.Errorf("two-regions topology control: %+v; want every kind listed, Choices to filter", c)
	}
	resp = p.Run(context.Background(), State{Builtin: "partition", Settings: []Setting{{"topology", "local"}}})
	for _, gone := range []string{"on-error", "rtt", "topology.failover_after"} {
		if control(resp.Controls, gone) != nil {
			t.Errorf("a local topology reads no %s, and its control stays", gone)
		}
	}
}

func control(cs []Control, name string) *Control {
	for i := range cs {
		if cs[i].Name == name {
			return &cs[i]
		}
	}
	return nil
}

func names(cs []Control) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}

// expectedRefusals are the control values offered that a run may
// refuse, by built-in and setting, with why: none now. A control offers
// only what runs (controls filters choices with a trial run, bounds a
// rate in its own unit and a window by rate × window ≥ 1, keeps a
// fault's start before its end, and leaves servers out where faults
// name servers); an entry here is a reason, not a shrug.
var expectedRefusals = map[string]string{}

// Every choice of every choice control, and every slider's ends, on
// every built-in, runs: but for expectedRefusals, never a refusal, and
// never a panic or an internal error.
func TestEveryControlValueRuns(t *testing.T) {
	t.Parallel()
	runs, refused := 0, 0
	for i, b := range Builtins() {
		if testing.Short() && i%4 != 0 {
			continue // -short: a quarter of the built-ins
		}
		p := Playground{noDrawing: true}
		base := p.Run(context.Background(), State{Builtin: b.Name})
		for _, c := range base.Controls {
			values := c.Choices
			if c.Kind == kindChoice {
				offered := p.Choices(State{Builtin: b.Name}, c.Name, false)
				if offered.Error != nil || !slices.Contains(offered.Choices, c.Value) {
					t.Errorf("%s: Choices(%s) = %+v, want its value %q among them", b.Name, c.Name, offered, c.Value)
				}
				values = offered.Choices
			} else {
				values = append([]string{number(c.Min) + unitOf(c), number(c.Max) + unitOf(c)}, c.Choices...)
			}
			for _, v := range values {
				resp := p.Run(context.Background(), State{Builtin: b.Name, Settings: []Setting{{c.Name, v}}})
				runs++
				switch e := resp.Error; {
				case e == nil && len(resp.Result) == 0:
					t.Errorf("%s: %s=%s: no result and no error", b.Name, c.Name, v)
				case e == nil:
				case e.Text == "" || strings.Contains(e.Text, "internal error") || resp.Scenario == nil:
					t.Errorf("%s: %s=%s: %+v", b.Name, c.Name, v, e)
				default:
					refused++
					if why, ok := expectedRefusals[b.Name+": "+c.Name+"="+v]; ok {
						t.Logf("%s: %s=%s: refused, as expected (%s): %s", b.Name, c.Name, v, why, e.Text)
						continue
					}
					t.Errorf("%s: %s=%s is offered, and refused: %s", b.Name, c.Name, v, e.Text)
				}
			}
		}
	}
	t.Logf("%d runs, %d refused", runs, refused)
}

// number is x as a setting's text.
func number(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// unitOf is what follows a slider's number in its setting: a duration's
// unit; a rate's per second.
func unitOf(c Control) string {
	switch c.Kind {
	case kindDuration:
		return c.Unit
	case kindRate:
		return c.Unit
	}
	return ""
}

// Whatever settings a page sends, Run answers: a result or an error a
// user can act on, never a panic or an internal error.
func TestRunAnswersAnySettings(t *testing.T) {
	t.Parallel()
	builtins := Builtins()
	names := []string{"algorithm", "topology", "servers", "balancer", "on-error", "on_error", "rtt", "sync-interval", "replication-lag",
		"duration", "step", "seed", "key", "shadow", "wall-clock", "store", "rate", "burst", "window",
		"limit.rate", "limit.burst", "limit.window", "limit", "faults[0].start", "faults[0].end", "faults[1].kind",
		"clients[0].traffic.rate", "clients[0].traffic", "clients[9].count", "topology.failover_after", "limits[0].rate", "x", "", "limit..burst", "clients[", "faults[-1].start"}
	values := []string{"0", "1", "-1", "2", "64", "65", "1000000", "10/s", "0/s", "1e9/s", "5s", "0s", "-5s", "99999h", "never", "", "fail-closed",
		"local", "shared", "synced", "cluster", "regions", "gcra", "concurrency", "nginx-limit-req", "random", "{pattern: constant, rate: 5/s}",
		"[1, 2]", "{", "true", "ip", "memory", "miniredis", "redis://127.0.0.1:1", "2026-01-01T00:00:00Z", "\x00", "a: b"}
	rapid.Check(t, func(t *rapid.T) {
		b := rapid.SampledFrom(builtins).Draw(t, "builtin")
		draw := func(label string) []Setting {
			n := rapid.IntRange(0, 3).Draw(t, label)
			out := make([]Setting, n)
			for i := range out {
				out[i] = Setting{rapid.SampledFrom(names).Draw(t, "name"), rapid.SampledFrom(values).Draw(t, "value")}
			}
			return out
		}
		p := Playground{noDrawing: true}
		resp := p.Run(context.Background(), State{Builtin: b.Name, Settings: draw("set"), Vs: draw("vs")})
		if e := resp.Error; e != nil && (e.Text == "" || strings.Contains(e.Text, "internal error")) {
			t.Fatalf("%+v", e)
		}
		if resp.Error == nil && len(resp.Result) == 0 {
			t.Fatal("no result and no error")
		}
	})
}

// Choices names exactly the values each run takes: for run A, those Run
// runs with the setting; for run B (forB), those Run runs side by side
// (B is A's file with the setting after A's), on every built-in, with no
// settings and with one that makes the two differ (limit.window, which an
// algorithm that reads no window refuses as a setting of A, and takes as
// the file's field under B).
func TestChoicesAreWhatRuns(t *testing.T) {
	t.Parallel()
	for i, b := range Builtins() {
		if testing.Short() && i%4 != 0 {
			continue
		}
		p := Playground{noDrawing: true}
		for _, sets := range [][]Setting{nil, {{"limit.window", "2h"}}} {
			base := State{Builtin: b.Name, Settings: sets}
			resp := p.Run(context.Background(), base)
			if resp.Error != nil {
				continue // a built-in with limits:, or whose algorithm reads no window
			}
			for _, c := range resp.Controls {
				if c.Kind != kindChoice {
					continue
				}
				forA, forB := p.Choices(base, c.Name, false), p.Choices(base, c.Name, true)
				if forA.Error != nil || forB.Error != nil {
					t.Fatalf("%s %v %s: %+v %+v", b.Name, sets, c.Name, forA.Error, forB.Error)
				}
				for _, v := range c.Choices {
					a := p.Run(context.Background(), State{Builtin: b.Name, Settings: append(slices.Clone(sets), Setting{c.Name, v})})
					if runs := a.Error == nil; runs != slices.Contains(forA.Choices, v) {
						t.Errorf("%s %v: %s=%s runs as A: %v, Choices offers it: %v", b.Name, sets, c.Name, v, runs, !runs)
					}
					vs := p.Run(context.Background(), State{Builtin: b.Name, Settings: sets, Vs: []Setting{{c.Name, v}}})
					if runs := vs.Error == nil; runs != slices.Contains(forB.Choices, v) {
						t.Errorf("%s %v: %s=%s runs as B: %v, Choices(forB) offers it: %v", b.Name, sets, c.Name, v, runs, !runs)
					}
				}
			}
		}
	}
}
