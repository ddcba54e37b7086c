package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ratelim/ratelim/internal/words"
	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/sim"
)

// writeScenario writes a small scenario file and returns its path.
func writeScenario(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const smallScenario = `name: small
summary: One client hammers a bucket on two servers.
duration: 5s
servers: 2
limit: {algorithm: token-bucket, rate: 10/s, burst: 20}
topology: {kind: shared}
clients:
  - name: hammer
    api_key: h
    traffic: {pattern: constant, rate: 100/s}
  - name: polite
    api_key: p
    traffic: {pattern: constant, rate: 5/s}
expect:
  - {client: polite, rejected: {max: 0}}
  - {client: hammer, allowed: {min: 65, max: 75}}
`

func TestSimGoldenOutputs(t *testing.T) {
	tests := []struct{ golden, scenario, format string }{
		{"sim-runaway-healthcheck.table", "runaway-healthcheck", "table"},
		{"sim-window-boundary.json", "window-boundary", "json"},
		{"sim-rack-drain.csv", "rack-drain", "csv"},
	}
	for _, tt := range tests {
		code, out, errOut := runArgs("sim", tt.scenario, "--format", tt.format)
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", tt.scenario, code, errOut)
		}
		golden(t, tt.golden, []byte(out))
		// Byte-identical on a second run.
		if _, again, _ := runArgs("sim", tt.scenario, "--format", tt.format); again != out {
			t.Errorf("%s --format %s: a second run printed something else", tt.scenario, tt.format)
		}
	}
}

func TestSimJSONIsTheResultContract(t *testing.T) {
	code, out, errOut := runArgs("sim", writeScenario(t, "small.yaml", smallScenario), "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r map[string]any
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{"schema", "scenario", "algorithm", "topology", "store", "servers", "seed", "duration_s", "step_s", "limit", "clients", "keys", "timeline", "faults", "expectations"} {
		if _, ok := r[field]; !ok {
			t.Errorf("result JSON lacks %q", field)
		}
	}
	if r["schema"] != "ratelim.result/v1" {
		t.Errorf("schema = %v", r["schema"])
	}
}

func TestSimOverridesAndSeeds(t *testing.T) {
	path := writeScenario(t, "small.yaml", smallScenario)
	_, shared, _ := runArgs("sim", path, "--format", "json")
	code, local, errOut := runArgs("sim", path, "--format", "json", "--topology", "local", "--servers", "4")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(local, `"topology": "local"`) || !strings.Contains(local, `"servers": 4`) || local == shared {
		t.Errorf("overrides not applied:\n%.300s", local)
	}
}

// --shadow is the global switch of a dark launch: every limit of the
// scenario in shadow mode, until an instant or for the whole run, beside
// (--vs) the run that enforces. Nothing is refused while it holds; the
// enforcing run refuses what the shadowed one counted as would_reject.
func TestSimShadowsEveryLimit(t *testing.T) {
	code, out, errOut := runArgs("sim", "api-quotas", "--format", "json", "--shadow", "true")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r sim.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	var wouldReject int64
	for _, c := range r.Clients {
		if c.Rejected != 0 {
			t.Errorf("%s: %d refused in shadow mode", c.Name, c.Rejected)
		}
		wouldReject += c.WouldReject
	}
	for _, p := range r.Limit.Limits {
		if !p.Shadow || p.ShadowUntilS != 0 {
			t.Errorf("limit %s: shadow %v until %gs, want shadowed for the whole run", p.Name, p.Shadow, p.ShadowUntilS)
		}
	}
	_, enforced, _ := runArgs("sim", "api-quotas", "--format", "json")
	var e sim.Result
	if err := json.Unmarshal([]byte(enforced), &e); err != nil {
		t.Fatal(err)
	}
	var rejected int64
	for _, c := range e.Clients {
		rejected += c.Rejected
	}
	if wouldReject == 0 || wouldReject != rejected {
		t.Errorf("shadowed: %d would have been refused; enforced: %d refused. Want the same, more than 0", wouldReject, rejected)
	}
	code, out, errOut = runArgs("sim", "api-quotas", "--vs", "shadow=300s")
	if code != exitOK || !strings.Contains(out, "shadow=false") || !strings.Contains(out, "shadow=5m0s") {
		t.Errorf("--vs shadow=300s: exit %d, labels missing:\n%.600s%s", code, out, errOut)
	}
}

func TestSimBadInputExitsTwo(t *testing.T) {
	dir := t.TempDir()
	broken := writeScenario(t, "broken.yaml", "name: x\nduration: [\n")
	badField := writeScenario(t, "bad.yaml", strings.Replace(smallScenario, "rate: 100/s", "rate: fast", 1))
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"sim", filepath.Join(dir, "missing.yaml")}, []string{"missing.yaml"}},
		{[]string{"sim", broken}, []string{"broken.yaml:"}},
		{[]string{"sim", badField}, []string{"bad.yaml:10:", "clients[0].traffic.rate", `"fast"`}},
		{[]string{"sim", "no-such-scenario"}, []string{"no-such-scenario", "runaway-healthcheck"}},
		{[]string{"sim", "runaway-healthcheck", "--algorithm", "nope"}, []string{"--algorithm", "nope"}},
		{[]string{"sim", "runaway-healthcheck", "--topology", "mesh"}, []string{"topology", "mesh"}},
		{[]string{"sim", "runaway-healthcheck", "--servers", "0"}, []string{"--servers"}},
		{[]string{"sim", "runaway-healthcheck", "--format", "xml"}, []string{"--format", "xml"}},
		{[]string{"sim", "runaway-healthcheck", "--on-error", "fail-sideways"}, []string{"--on-error"}},
		{[]string{"sim", "runaway-healthcheck", "--duration", "soon"}, []string{"--duration"}},
		{[]string{"sim", "runaway-healthcheck", "--shadow", "maybe"}, []string{"--shadow", `"maybe"`, "e.g. 15s"}},
		{[]string{"sim", "runaway-healthcheck", "--shadow", "-3s"}, []string{"--shadow", "not positive"}},
		{[]string{"sim", "api-quotas", "--vs", "shadow=soon"}, []string{"shadow", `"soon"`}},
		{[]string{"sim", "partition", "--servers", "2"}, []string{"--servers 2: faults[0].groups[1][0] " + partitionFault + ": server 2 does not exist (want 0 to 1"}},
		{[]string{"sim", "runaway-healthcheck", "--plot", "out.jpg"}, []string{".jpg", ".png, .svg or .gif"}},
		{[]string{"sim", "runaway-healthcheck", "--plot", filepath.Join(dir, "no", "such", "dir", "p.png")}, []string{"p.png"}},
		{[]string{"sim"}, []string{"scenario name or file"}},
		{[]string{"sim", "partition", "--tui"}, []string{"--tui needs a terminal", "--format", "--plot"}},
	}
	for _, tt := range tests {
		code, out, errOut := runArgs(tt.args...)
		if code != exitBadInput {
			t.Errorf("%v: exit %d, want 2; stderr %q", tt.args, code, errOut)
			continue
		}
		if out != "" {
			t.Errorf("%v: printed to stdout: %q", tt.args, out)
		}
		for _, w := range tt.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%v: stderr %q lacks %q", tt.args, errOut, w)
			}
		}
		if strings.Contains(errOut, "panic") || strings.Contains(errOut, "goroutine") {
			t.Errorf("%v: a panic reached the user: %s", tt.args, errOut)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("bad runs left files behind: %v", entries)
	}
}

func TestCheckExitCodes(t *testing.T) {
	passing := writeScenario(t, "pass.yaml", smallScenario)
	code, out, errOut := runArgs("check", passing)
	if code != exitOK || !strings.Contains(out, "2 passed, 0 failed") || !strings.Contains(out, "ok   ") {
		t.Fatalf("passing file: exit %d\n%s%s", code, out, errOut)
	}
	failing := writeScenario(t, "fail.yaml", strings.Replace(smallScenario, "allowed: {min: 65, max: 75}", "allowed: {max: 10}", 1))
	code, out, _ = runArgs("check", failing)
	if code != exitFailed || !strings.Contains(out, "FAIL") || !strings.Contains(out, "fail.yaml:16:") || !strings.Contains(out, "(got 69)") || !strings.Contains(out, "1 passed, 1 failed") {
		t.Fatalf("failing file: exit %d\n%s", code, out)
	}
	malformed := writeScenario(t, "bad.yaml", strings.Replace(smallScenario, "{client: polite, rejected: {max: 0}}", "{client: nobody, rejected: {max: 0}}", 1))
	code, _, errOut = runArgs("check", malformed)
	if code != exitBadInput || !strings.Contains(errOut, "bad.yaml:15:") || !strings.Contains(errOut, "nobody") {
		t.Fatalf("unknown client: exit %d, stderr %q; want 2 with file:line", code, errOut)
	}
	minMax := writeScenario(t, "minmax.yaml", strings.Replace(smallScenario, "{min: 65, max: 75}", "{min: 75, max: 65}", 1))
	if code, _, errOut = runArgs("check", minMax); code != exitBadInput || !strings.Contains(errOut, "minmax.yaml:16:") {
		t.Fatalf("min > max: exit %d, stderr %q", code, errOut)
	}
}

func TestCheckJUnitParses(t *testing.T) {
	failing := writeScenario(t, "fail.yaml", strings.Replace(smallScenario, "allowed: {min: 65, max: 75}", "allowed: {max: 10}", 1))
	report := filepath.Join(t.TempDir(), "report.xml")
	if code, out, _ := runArgs("check", failing, "--junit", report); code != exitFailed {
		t.Fatalf("exit %d\n%s", code, out)
	}
	data, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("JUnit report does not parse: %v\n%s", err, data)
	}
	if info, err := os.Stat(report); err != nil || info.Mode().Perm() != 0o644 {
		t.Errorf("report mode: %v, %v; want 0644 for the CI to read", info.Mode(), err)
	}
	if doc.Tests != 2 || doc.Failures != 1 || len(doc.Suites) != 1 || len(doc.Suites[0].Cases) != 2 {
		t.Fatalf("report: %+v", doc)
	}
	var failure *junitFailure
	for _, c := range doc.Suites[0].Cases {
		if c.Failure != nil {
			failure = c.Failure
		}
	}
	if failure == nil || !strings.Contains(failure.Message, "got 69") {
		t.Fatalf("failure element: %+v", failure)
	}
}

func TestCheckBuiltinsPass(t *testing.T) {
	code, out, errOut := runArgs("check", "--builtins")
	if code != exitOK {
		t.Fatalf("the built-ins' own expectations: exit %d\n%s%s", code, out, errOut)
	}
}

func TestCompare(t *testing.T) {
	code, out, errOut := runArgs("compare", "window-boundary")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"admitted ÷ exact limiter", "fixed-window", "sliding-log", "split-brain", "*"} {
		if !strings.Contains(out, want) {
			t.Errorf("compare table lacks %q:\n%s", want, out)
		}
	}
	_, a, _ := runArgs("compare", "window-boundary", "--format", "json")
	_, b, _ := runArgs("compare", "window-boundary", "--format", "json", "--parallel", "1")
	if a != b || !strings.Contains(a, `"schema": "ratelim.compare/v1"`) {
		t.Fatal("compare JSON differs between parallel and sequential runs")
	}
	if code, _, errOut := runArgs("compare", "window-boundary", "--topologies", "mesh"); code != exitBadInput || !strings.Contains(errOut, "mesh") {
		t.Fatalf("bad topology: exit %d %q", code, errOut)
	}
}

func TestCompareRefusesAnUnknownAlgorithm(t *testing.T) {
	code, _, errOut := runArgs("compare", "window-boundary", "--algorithms", "token-bucket,leaky")
	if code != exitBadInput || !strings.Contains(errOut, `unknown algorithm "leaky"`) {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}

// Every built-in's table fits an 80-column terminal; --wide shows every
// column, at whatever width it takes.
func TestSimTableFits80Columns(t *testing.T) {
	for _, name := range scenarios.Builtin() {
		code, out, errOut := runArgs("sim", name)
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", name, code, errOut)
		}
		for i, line := range strings.Split(out, "\n") {
			if n := utf8.RuneCountInString(line); n > 80 {
				t.Errorf("%s: line %d is %d columns, want at most 80:\n%s", name, i+1, n, line)
			}
		}
		_, wide, _ := runArgs("sim", name, "--wide")
		if !strings.Contains(wide, "fail-closed") || !strings.Contains(wide, "p99 ms") {
			t.Errorf("%s --wide lacks a column:\n%s", name, wide)
		}
	}
	_, out, _ := runArgs("sim", "nat")
	if strings.Contains(out, "fail-open") || strings.Contains(out, "retries") {
		t.Errorf("nat has no faults and no retries, and its table shows those columns anyway:\n%s", out)
	}
}

func TestSpeedFlag(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want float64
		ok   bool
	}{{"1", 1, true}, {"0.5", 0.5, true}, {"max", math.Inf(1), true}, {"0", 0, false}, {"-2", 0, false}, {"NaN", 0, false}, {"Inf", 0, false}, {"fast", 0, false}} {
		var s speedFlag
		err := s.Set(tt.in)
		if (err == nil) != tt.ok || (tt.ok && float64(s) != tt.want) {
			t.Errorf("--speed %s: %v, %v; want %v (ok %v)", tt.in, float64(s), err, tt.want, tt.ok)
		}
		if tt.ok && tt.in != "0.5" && s.String() != tt.in {
			t.Errorf("--speed %s prints as %q", tt.in, s.String())
		}
	}
	if code, _, errOut := runArgs("sim", "nat", "--tui", "--speed", "fast"); code != exitBadInput || !strings.Contains(errOut, "or max") {
		t.Errorf("--speed fast: exit %d, %q; want %d naming max", code, errOut, exitBadInput)
	}
}

// A run too big for memory at its file's step runs at a coarser one and
// says so, with every total the same as at that step asked for; asked for
// on the command line, the fine step is kept and the run refused.
func TestSimCoarsensAStepThatDoesNotFit(t *testing.T) {
	args := []string{"sim", "runaway-healthcheck", "--duration", "6h", "--max-memory", "64MiB", "--format", "json"}
	code, out, errOut := runArgs(args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r sim.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.StepS <= 1 {
		t.Fatalf("step %gs: not coarsened", r.StepS)
	}
	step := words.Duration(time.Duration(r.StepS * float64(time.Second)))
	if want := "the timeline's step is " + step + ", not 1s"; !strings.Contains(errOut, want) || len(r.Events) == 0 || !strings.Contains(r.Events[0].Text, want) {
		t.Errorf("neither stderr %q nor the log's first entry says %q", errOut, want)
	}
	code, asked, errOut := runArgs(append(args, "--step", step)...)
	if code != 0 {
		t.Fatalf("--step %s: exit %d: %s", step, code, errOut)
	}
	var at sim.Result
	if err := json.Unmarshal([]byte(asked), &at); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r.Clients, at.Clients) || !reflect.DeepEqual(r.Timeline, at.Timeline) {
		t.Errorf("coarsened to %s, the run differs from one at --step %s", step, step)
	}
	if code, _, errOut := runArgs(append(args, "--step", "1s")...); code != exitTooBig || !strings.Contains(errOut, "of memory") {
		t.Errorf("--step 1s: exit %d, %q; want the memory refusal", code, errOut)
	}
	// A step that fits is kept and goes unremarked, one of a whole number
	// of microseconds that a float of seconds does not hold exactly too.
	if code, _, errOut := runArgs("sim", "runaway-healthcheck", "--step", "1.000001s", "-q"); code != 0 || errOut != "" {
		t.Errorf("--step 1.000001s: exit %d, stderr %q; want 0 and nothing", code, errOut)
	}
}

// A table keeps no state series, but a plot drawn beside it draws the
// State panel: the picture is the one drawn beside the JSON, which keeps
// them all.
func TestSimPlotBesideATableHasItsState(t *testing.T) {
	dir := t.TempDir()
	table, js := filepath.Join(dir, "table.png"), filepath.Join(dir, "json.png")
	for _, args := range [][]string{{"sim", "partition", "-q", "--plot", table}, {"sim", "partition", "--format", "json", "--plot", js}} {
		if code, _, errOut := runArgs(args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
	}
	a, err := os.ReadFile(table)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Error("the plot drawn beside the table differs from the one beside the JSON")
	}
}

// -q prints the table's rows alone, with the columns the table shows: an
// all-zero column is left out, as in the full table, unless --wide.
func TestQuietTableColumns(t *testing.T) {
	for _, tt := range []struct {
		args []string
		has  bool
	}{
		{[]string{"sim", "partition", "-q"}, false},
		{[]string{"sim", "partition", "-q", "--wide"}, true},
	} {
		code, out, errOut := runArgs(tt.args...)
		if code != exitOK || errOut != "" {
			t.Fatalf("%v: exit %d, %s", tt.args, code, errOut)
		}
		header, _, _ := strings.Cut(out, "\n")
		if got := strings.Contains(header, "fail-open"); got != tt.has || !strings.Contains(header, "allowed") {
			t.Errorf("%v: header %q; want the all-zero fail-open column shown = %v", tt.args, header, tt.has)
		}
		if strings.Contains(out, "admitted") {
			t.Errorf("%v: findings printed under -q:\n%s", tt.args, out)
		}
	}
}

// Progress shows after a second of wall time, each figure erasing what a
// longer one left on the line, and erases itself at the end.
func TestProgressLine(t *testing.T) {
	var b strings.Builder
	p := newProgress(&b, true, "sending")
	p.update(time.Second, 5*time.Second)
	if b.Len() != 0 {
		t.Fatalf("progress shown before a second had passed: %q", b.String())
	}
	p.started = p.started.Add(-2 * time.Second)
	p.update(1900*time.Millisecond, 5*time.Second)
	if got := b.String(); got != "\rsending: 1.9s of 5s (38%) \033[K" {
		t.Errorf("progress %q; want the figure, then erase to the line's end", got)
	}
	p.done()
	if !strings.HasSuffix(b.String(), "\r\033[K") {
		t.Errorf("done left %q; want the line erased", b.String())
	}
}
