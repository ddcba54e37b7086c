package tui

import (
	"strings"
	"testing"

	"github.com/ratelim/ratelim/internal/escape/escapetest"
	"github.com/ratelim/ratelim/scenarios"
)

// The names a trace scenario takes from its log, and those its YAML
// gives, reach the terminal escaped in every part of the TUI: the header,
// the client rows and the key rows, the gauges that follow a selected
// client, the event log and the verdict; at every frame of the run.
func TestHostileNamesAreEscapedOnScreen(t *testing.T) {
	f, err := scenarios.Load(escapetest.Write(t, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	sc := f.Scenario
	m := send(t, newTestModel(t, sc, true), size(160, 48))
	seen := ""
	check := func(when string, view string) {
		t.Helper()
		if bad := escapetest.Unsafe(view); len(bad) > 0 {
			t.Fatalf("%s: the view holds %s raw:\n%s", when, strings.Join(bad, ", "), view)
		}
		seen += view
	}
	for _, keys := range [][]string{nil, {"down"}, {"down", "down"}, {"tab"}, {"tab", "down"}} {
		m := m
		for _, k := range keys {
			m = send(t, m, keyMsg(k))
		}
		for step := sc.Step; step <= sc.Duration; step += sc.Step {
			m = at(t, m, step)
			check(strings.Join(keys, " ")+" at "+step.String(), m.View())
		}
	}
	for _, want := range []string{escapetest.YAMLName, `\x1b[31mRED`, "</svg>&amp", `evil\x1b[2J`, "VERDICT"} {
		if !strings.Contains(seen, want) {
			t.Errorf("no frame shows %s", want)
		}
	}
}

// A regions scenario's region names are the file's: its stores' gauges
// and the banner of a region's outage show them escaped.
func TestHostileRegionNamesAreEscapedOnScreen(t *testing.T) {
	yaml := "name: r\nduration: 6s\nstep: 1s\nlimit: {rate: 5/s, burst: 5}\n" +
		"topology: {kind: regions, regions: [{name: \"eu\\x1b[2J\", servers: 1}, {name: us, servers: 1}]}\n" +
		"clients:\n  - {name: a, api_key: a, region: \"eu\\x1b[2J\", traffic: {pattern: constant, rate: 20/s}}\n" +
		"faults:\n  - {kind: outage, region: \"eu\\x1b[2J\", start: 2s, end: 4s}\n"
	f, err := scenarios.Parse("r.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	sc := f.Scenario
	m := send(t, newTestModel(t, sc, true), size(120, 40))
	seen := ""
	for step := sc.Step; step <= sc.Duration; step += sc.Step {
		m = at(t, m, step)
		view := m.View()
		if bad := escapetest.Unsafe(view); len(bad) > 0 {
			t.Fatalf("at %s: the view holds %s raw:\n%s", step, strings.Join(bad, ", "), view)
		}
		seen += view
	}
	for _, want := range []string{`eu\x1b[2J`, `REGION EU\x1b[2J DOWN`} {
		if !strings.Contains(seen, want) {
			t.Errorf("no frame shows %s", want)
		}
	}
}
