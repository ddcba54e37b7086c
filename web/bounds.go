package web

// The work a run in a tab may take, bounded before it starts: the tab's
// one thread is blocked while it runs, and nothing can stop it part way.
// The review of the first playground measured what is not bounded by
// requests alone: a 10-line file of 300 s at a 1 ms step and 20 clients
// (6,000 requests) blocked the tab for 78 s and returned 34 MB of SVG; a
// count: of a million blocked it for 58 s before it was refused.

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ratelim/ratelim/internal/words"
	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/simrun"
)

// Bounds of one run's work. MaxClients is clients after count: expands
// them (the built-ins have at most 40; scenarios.MaxClients is the CLI's
// million); MaxSteps the timeline's steps, duration ÷ step, which the
// run's rows, the SVG and each frame grow with (the built-ins have at
// most 3,000).
//
// MaxCells bounds clients × steps, which the drawing's work and the
// result's JSON grow with (plots reads every client's every step, to
// fold alike panels; the JSON holds a row per client per busy step,
// about 250 bytes indented, twice: result and resultJSON). Drawn
// natively, 20 clients × 20,000 steps took 1.1 s, 2,000 clients × 2,000
// steps 19 s, and each frame as long again; in node (the wasm), at
// 400,000 cells, a week at 1m for 10 clients returned 49 MB of JSON in
// 4.9 s. At 100,000 the largest is a few MB.
const (
	MaxClients = 10_000
	MaxSteps   = 20_000
	MaxCells   = 100_000
)

// maxClientNames bounds ScenarioView.Clients: a file of 10,000 clients
// lists the first thousand names and says how many there are.
const maxClientNames = 1_000

// roundSteps are the steps a run too fine for the tab is drawn at, the
// smallest that fits: those sim's Options.FitStep picks from (sim's
// stepThatFits), so that the page and `ratelim sim` coarsen alike.
var roundSteps = []time.Duration{100 * time.Microsecond, time.Millisecond, 10 * time.Millisecond, 100 * time.Millisecond, time.Second, 10 * time.Second,
	time.Minute, 10 * time.Minute, time.Hour, 6 * time.Hour, 24 * time.Hour}

// countClients refuses a scenario's text whose clients: would expand to
// more than MaxClients, before scenarios.Parse expands them (Parse has
// no bound of its own below the CLI's million, and expanding a million
// takes seconds): it reads the YAML's node tree, not the scenario, and
// sums each entry's count: (1 when absent or not a number: Parse then
// says what is wrong with it). A text that does not read as YAML passes,
// for Parse to say where.
func countClients(name string, text []byte) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(text, &doc); err != nil || len(doc.Content) == 0 {
		return nil
	}
	clients := mappingValue(doc.Content[0], "clients")
	if clients == nil || clients.Kind != yaml.SequenceNode {
		return nil
	}
	total := int64(0)
	for i, entry := range clients.Content {
		if entry.Kind == yaml.AliasNode && entry.Alias != nil {
			entry = entry.Alias
		}
		count, line := int64(1), entry.Line
		if v := mappingValue(entry, "count"); v != nil {
			if n, err := strconv.ParseInt(v.Value, 10, 64); err == nil && n > 0 {
				count, line = n, v.Line
			}
		}
		if total += count; total > MaxClients {
			return &scenarios.Error{File: name, Line: line, Field: fmt.Sprintf("clients[%d].count", i),
				Msg: fmt.Sprintf("%s clients in all, more than the playground runs (want at most %s; ratelim sim runs up to %s)",
					words.Thousands(total), words.Thousands(MaxClients), words.Thousands(scenarios.MaxClients))}
		}
	}
	return nil
}

// mappingValue is the value of key in the mapping n, nil when n is no
// mapping or has no such key.
func mappingValue(n *yaml.Node, key string) *yaml.Node {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// fit bounds run A (file with sets applied): at most MaxClients clients,
// and at most MaxSteps steps within MaxMemory. A step the settings give
// is kept and such a run refused; the file's own step too fine for
// either bound is replaced by the smallest round step that fits, given
// as a --step setting (so the command reproduces the run), and notice
// says so. sets is returned as given when nothing is changed.
func fit(file *scenarios.File, sets []scenarios.Setting) (out []scenarios.Setting, notice string, err error) {
	sc := file.Scenario
	if err := checkWork(file); err != nil {
		return nil, "", err
	}
	stepAsked := simrun.StepAsked(sets)
	step, most := sc.Step, maxStepsFor(len(sc.Clients))
	if steps := stepsOf(sc.Duration, step); steps > most {
		if stepAsked {
			return nil, "", fmt.Errorf("%s: %s at a step of %s is %s steps, more than the playground draws%s (want a step of at least %s, or run it with ratelim sim)",
				simrun.Label(file), words.Duration(sc.Duration), words.Duration(step), words.Thousands(steps), ofClients(len(sc.Clients)), words.Duration(minStep(sc.Duration, most)))
		}
		step = fitting(sc, func(d time.Duration) bool { return stepsOf(sc.Duration, d) <= most })
		if step == 0 {
			return nil, "", fmt.Errorf("%s: %s is more than %s steps at any step the playground draws%s (want a shorter duration, or run it with ratelim sim)",
				simrun.Label(file), words.Duration(sc.Duration), words.Thousands(most), ofClients(len(sc.Clients)))
		}
		notice = fmt.Sprintf("drawn at step %s: %s at the file's %s would be %s steps, more than the playground draws%s (every total is the same at any step)",
			words.Duration(step), words.Duration(sc.Duration), words.Duration(sc.Step), words.Thousands(steps), ofClients(len(sc.Clients)))
	}
	if !stepAsked {
		at := sc
		at.Step = step
		if need, fits := sim.MemoryNeed(at, nil, MaxMemory); need > MaxMemory && fits > 0 {
			step = fits
			notice = fmt.Sprintf("run at step %s: at the file's %s it would need about %s of memory, more than the playground's %s (every total is the same at any step)",
				words.Duration(step), words.Duration(sc.Step), words.Bytes(need), words.Bytes(MaxMemory))
		}
	}
	if step == sc.Step {
		return sets, "", nil
	}
	return append(sets, scenarios.Setting{Name: "step", Value: words.Duration(step), Flag: "--step"}), notice, nil
}

// checkWork refuses a run of file with more clients than the playground
// runs, or a store it cannot reach: a tab has memory only.
func checkWork(file *scenarios.File) error {
	sc := file.Scenario
	if n := len(sc.Clients); n > MaxClients {
		return fmt.Errorf("%s: %s clients, more than the playground runs (want at most %s, or run it with ratelim sim)",
			simrun.Label(file), words.Thousands(int64(n)), words.Thousands(MaxClients))
	}
	if st := sc.Topology.Store; st != "" && st != "memory" {
		return &scenarios.Error{Field: "store", Msg: fmt.Sprintf("%s: the playground runs the memory store only (want store: memory; miniredis and redis:// run with ratelim sim)",
			strconv.Quote(sc.Topology.StoreLabel()))}
	}
	return nil
}

// checkClientCount refuses a setting of a client entry's count: past
// MaxClients before scenarios.Apply expands it.
func checkClientCount(s scenarios.Setting) error {
	if !strings.HasPrefix(s.Name, "clients[") || !strings.HasSuffix(s.Name, "].count") {
		return nil
	}
	if n, err := strconv.ParseInt(strings.TrimSpace(s.Value), 10, 64); err == nil && n > MaxClients {
		return &scenarios.Error{Field: s.Flag, Msg: fmt.Sprintf("%s clients, more than the playground runs (want at most %s; ratelim sim runs up to %s)",
			words.Thousands(n), words.Thousands(MaxClients), words.Thousands(scenarios.MaxClients))}
	}
	return nil
}

// checkSteps refuses a run of file past MaxSteps: run B, which runs at
// run A's step (a --vs that changes the step is the user's to fit).
func checkSteps(file *scenarios.File) error {
	sc := file.Scenario
	if most, steps := maxStepsFor(len(sc.Clients)), stepsOf(sc.Duration, sc.Step); steps > most {
		return fmt.Errorf("%s: %s at a step of %s is %s steps, more than the playground draws%s (want a step of at least %s, or run it with ratelim sim)",
			simrun.Label(file), words.Duration(sc.Duration), words.Duration(sc.Step), words.Thousands(steps), ofClients(len(sc.Clients)), words.Duration(minStep(sc.Duration, most)))
	}
	return nil
}

// stepsOf is how many steps duration takes at step, the last partial
// one counted.
func stepsOf(duration, step time.Duration) int64 {
	if step <= 0 {
		return 0
	}
	return int64((duration + step - 1) / step)
}

// maxStepsFor is the most steps a run of clients may have: MaxSteps,
// and MaxCells in all.
func maxStepsFor(clients int) int64 {
	return min(MaxSteps, MaxCells/int64(max(clients, 1)))
}

// ofClients says why the steps are bounded where the clients bound
// them: " for 2,000 clients" ("" under MaxSteps' own bound).
func ofClients(clients int) string {
	if maxStepsFor(clients) == MaxSteps {
		return fmt.Sprintf(" (at most %s)", words.Thousands(MaxSteps))
	}
	return fmt.Sprintf(" for %s clients (at most %s)", words.Thousands(int64(clients)), words.Thousands(maxStepsFor(clients)))
}

// minStep is the smallest round step at which duration takes at most
// most steps.
func minStep(duration time.Duration, most int64) time.Duration {
	for _, d := range roundSteps {
		if stepsOf(duration, d) <= most {
			return d
		}
	}
	return roundSteps[len(roundSteps)-1]
}

// fitting is the smallest round step coarser than sc's, within its
// duration, for which ok holds; 0 when none does.
func fitting(sc sim.Scenario, ok func(time.Duration) bool) time.Duration {
	for _, d := range roundSteps {
		if d <= sc.Step || d > sc.Duration {
			continue
		}
		if ok(d) {
			return d
		}
	}
	return 0
}
