package web

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// lab is a scenario of count clients c-{i} at rate each, of duration at
// step: a file the page's bounds are about.
func lab(duration, step string, count int, rate string) string {
	return fmt.Sprintf(`name: lab
duration: %s
step: %s
servers: 4
limit: {algorithm: token-bucket, rate: 10/s, burst: 50, key: api-key}
topology: {kind: shared}
clients:
  - name: c-{i}
    count: %d
    api_key: c-{i}
    traffic: {pattern: constant, rate: %s}
`, duration, step, count, rate)
}

// A file of more clients than the playground runs is refused before
// Parse expands them, at its count:'s line, at once; a setting of a
// count likewise.
func TestTooManyClientsAreRefusedBeforeTheyExpand(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		state State
		want  ErrorView
	}{
		{"a million", State{YAML: lab("30s", "1s", 1_000_000, "1/h"), FileName: "big.yaml"},
			ErrorView{Text: "big.yaml:9: clients[0].count: 1,000,000 clients in all, more than the playground runs (want at most 10,000", File: "big.yaml", Line: 9, Field: "clients[0].count"}},
		{"two entries past it", State{YAML: strings.Replace(lab("30s", "1s", 6000, "1/h"), "clients:\n", "clients:\n  - {name: \"d-{i}\", count: 5000, traffic: {pattern: constant, rate: 1/h}}\n", 1)},
			ErrorView{Text: "11,000 clients in all", File: "scenario.yaml", Line: 10, Field: "clients[1].count"}},
		{"a setting", State{YAML: lab("30s", "1s", 10, "1/h"), Settings: []Setting{{"clients[c-{i}].count", "1000000"}}},
			ErrorView{Text: "1,000,000 clients, more than the playground runs", Field: "--set clients[c-{i}].count"}},
	} {
		var p Playground
		start := time.Now()
		resp := p.Run(context.Background(), tc.state)
		took := time.Since(start)
		e := resp.Error
		if e == nil {
			t.Errorf("%s: ran, want an error", tc.name)
			continue
		}
		if !strings.Contains(e.Text, tc.want.Text) || e.File != tc.want.File || e.Line != tc.want.Line || e.Field != tc.want.Field {
			t.Errorf("%s: %+v, want %+v", tc.name, *e, tc.want)
		}
		if len(e.Text) > 500 {
			t.Errorf("%s: an error of %d bytes", tc.name, len(e.Text))
		}
		t.Logf("%s: refused in %v", tc.name, took)
	}
}

// The scenario's clients list at most 1,000 names, and says how many
// there are: a failure's Response stays small.
func TestScenarioListsAThousandClients(t *testing.T) {
	t.Parallel()
	var p Playground
	// 10,000 clients at 1/h for 30 s send nothing, but the run fails
	// on a setting after the file read.
	resp := p.Run(context.Background(), State{YAML: lab("30s", "1s", 10_000, "1/h"), Settings: []Setting{{"seed", "x"}}})
	if resp.Error == nil || resp.Scenario == nil {
		t.Fatalf("want an error with the scenario, got %+v", resp.Error)
	}
	if got := len(resp.Scenario.Clients); got != maxClientNames || resp.Scenario.ClientCount != 10_000 {
		t.Errorf("%d names of %d clients, want %d of 10000", got, resp.Scenario.ClientCount, maxClientNames)
	}
}

// A file whose step is too fine for the tab runs at the smallest round
// step that fits, says so in Notice, and its command carries that step:
// for steps (MaxSteps) and for memory (MaxMemory). A step the settings
// give is kept, and such a run refused.
func TestTooFineAStepIsCoarsenedAndSaid(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		state  State
		stepS  float64
		notice string
	}{
		{"steps", State{YAML: lab("300s", "1ms", 5, "1/s")}, 0.1, "drawn at step 100ms: 5m at the file's 1ms would be 300,000 steps, more than the playground draws (at most 20,000)"},
		{"cells", State{YAML: lab("20s", "10ms", 2000, "1/s")}, 1, "drawn at step 1s: 20s at the file's 10ms would be 2,000 steps, more than the playground draws for 2,000 clients (at most 50)"},
		{"memory", State{YAML: strings.Replace(strings.Replace(lab("20s", "10ms", 10, "1000/s"), "servers: 4", "servers: 1024", 1), "kind: shared", "kind: local", 1)}, 0.1, "run at step 100ms: at the file's 10ms it would need about"},
	} {
		p := Playground{noDrawing: true}
		start := time.Now()
		resp := p.Run(context.Background(), tc.state)
		t.Logf("%s: %v", tc.name, time.Since(start))
		if resp.Error != nil {
			t.Errorf("%s: %s", tc.name, resp.Error.Text)
			continue
		}
		if resp.Scenario.StepS != tc.stepS || !strings.Contains(resp.Notice, tc.notice) {
			t.Errorf("%s: step %v s, notice %q; want %v s, %q", tc.name, resp.Scenario.StepS, resp.Notice, tc.stepS, tc.notice)
		}
		if want := fmt.Sprintf(" --step %s", time.Duration(tc.stepS*float64(time.Second))); !strings.HasSuffix(resp.Command, want) {
			t.Errorf("%s: command %q, want it to end %q", tc.name, resp.Command, want)
		}
	}
	var p Playground
	resp := p.Run(context.Background(), State{YAML: lab("300s", "1s", 20, "1/s"), Settings: []Setting{{"step", "1ms"}}})
	if resp.Error == nil || !strings.Contains(resp.Error.Text, "300,000 steps, more than the playground draws for 20 clients (at most 5,000) (want a step of at least 100ms, or run it with ratelim sim)") {
		t.Errorf("--step 1ms over 300s: %+v, want it refused", resp.Error)
	}
}

// The playground runs the memory store only, and says so as a user can
// act on it, for a setting and for a file.
func TestOnlyTheMemoryStoreRuns(t *testing.T) {
	t.Parallel()
	for _, s := range []State{
		{Builtin: "nat", Settings: []Setting{{"store", "miniredis"}}},
		{YAML: strings.Replace(lab("30s", "1s", 2, "1/s"), "kind: shared}", "kind: shared, store: \"redis://u:secret@h:6379\"}", 1)},
	} {
		var p Playground
		resp := p.Run(context.Background(), s)
		if resp.Error == nil || !strings.Contains(resp.Error.Text, "the playground runs the memory store only (want store: memory; miniredis and redis:// run with ratelim sim)") {
			t.Errorf("%+v: %+v, want the memory store's refusal", s, resp.Error)
		}
		if resp.Error != nil && strings.Contains(resp.Error.Text, "secret") {
			t.Errorf("the error shows the URL's password: %s", resp.Error.Text)
		}
	}
}
