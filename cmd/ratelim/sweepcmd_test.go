package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	"github.com/ratelim/ratelim/sim"
)

// sweepJSON2 runs a sweep's command line with --format json and reads it.
func sweepJSON2(t *testing.T, args ...string) sweepJSONv2 {
	t.Helper()
	code, out, errOut := runArgs(append(args, "--format", "json")...)
	if code != exitOK {
		t.Fatalf("%s: exit %d: %s", strings.Join(args, " "), code, errOut)
	}
	var got sweepJSONv2
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	return got
}

// A sweep of one value is the single run: its row's result is what `sim`
// prints with the field set by its flag, figure for figure, expectations
// alike: left out, as sim leaves them out under a flag, even at the
// file's own value (runaway-healthcheck has 4 servers). A flag that fits
// only with the swept value (partition's 4 servers in groups of 3) is
// read with it, as sim reads the two flags together; no row is then the
// scenario as given, which does not exist.
func TestSweepOfOneValueIsTheRun(t *testing.T) {
	groups3 := "faults[0].groups=[[0],[1,2]]"
	groups8 := "faults[0].groups=[[0,1,2,3],[4,5,6,7]]"
	for _, tc := range []struct {
		sweep, sim []string
		own        bool
	}{
		{[]string{"sweep", "runaway-healthcheck", "servers=2"}, []string{"sim", "runaway-healthcheck", "--servers", "2"}, false},
		{[]string{"sweep", "runaway-healthcheck", "servers=4"}, []string{"sim", "runaway-healthcheck", "--servers", "4"}, true},
		{[]string{"sweep", "sync-interval", "sync-interval=10ms", "--servers", "4"}, []string{"sim", "sync-interval", "--sync-interval", "10ms", "--servers", "4"}, false},
		{[]string{"sweep", "partition", "servers=3", "--set", groups3}, []string{"sim", "partition", "--servers", "3", "--set", groups3}, false},
		{[]string{"sweep", "partition", "servers=8", "--set", groups8}, []string{"sim", "partition", "--servers", "8", "--set", groups8}, false},
	} {
		got := sweepJSON2(t, tc.sweep...)
		code, out, errOut := runArgs(append(tc.sim, "--format", "json")...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", tc.sim, code, errOut)
		}
		var one sim.Result
		if err := json.Unmarshal([]byte(out), &one); err != nil {
			t.Fatal(err)
		}
		one.Timeline, one.State = nil, nil
		want, _ := json.Marshal(&one)
		row, _ := json.Marshal(got.Rows[0].Result)
		if len(got.Rows) != 1 || string(row) != string(want) {
			t.Errorf("%v: row\n%s\nwant the run of %v\n%s", tc.sweep, row, tc.sim, want)
		}
		if tc.own != (got.Current == 0) || len(one.Expectations) > 0 || len(got.Rows[0].Result.Expectations) > 0 {
			t.Errorf("%v: current %d, %d expectations in the single run, %d in the row; want the file's own value current, no expectations in either", tc.sweep, got.Current, len(one.Expectations), len(got.Rows[0].Result.Expectations))
		}
	}
}

// N jars, each far over its limit, admit N times what one exact limiter
// does. Each jar sees the client's requests 1/λ·N apart (λ = 1000/s,
// round-robin), so its refill span differs from the exact limiter's by
// at most that spacing at each end: at most ⌈2·rate·N/λ⌉ tokens a jar.
// At 10/s and N ≤ 8 that is 1 a jar, so |admitted − N·exact| ≤ N.
func TestSweepServersScaleJars(t *testing.T) {
	const rate, lambda = 10.0, 1000.0
	got := sweepJSON2(t, "sweep", "testdata/sweep-jars.yaml", "servers=1..8")
	if len(got.Rows) != 8 || got.Current != 0 {
		t.Fatalf("%d rows, current %d; want 8, the file's 1 server first", len(got.Rows), got.Current)
	}
	for i, row := range got.Rows {
		n := float64(i + 1)
		tolerance := n * math.Ceil(2*rate*n/lambda)
		if exact := float64(row.IdealAllowed); row.Values[0] != row.Value || math.Abs(float64(row.Allowed)-n*exact) > tolerance || exact != 109 {
			t.Errorf("servers %s: admitted %d, exact %d; want %g × 109 within %g", row.Value, row.Allowed, row.IdealAllowed, n, tolerance)
		}
		if math.Abs(row.AdmittedRatio-n) > tolerance/float64(row.IdealAllowed) {
			t.Errorf("servers %s: admitted ÷ exact %g, want %g", row.Value, row.AdmittedRatio, n)
		}
	}
}

// Any field of the file sweeps, through scenarios.Apply: the burst of a
// lone client far over 10/s for 10s on one server is what it is admitted
// at once, and the refill gives 99 more (the 100th token is due at 10 s,
// when the run ends), so admitted = burst + 99 on every value, as the
// exact limiter's. Its rate, by path, at 5/s admits all it sends.
func TestSweepAnyField(t *testing.T) {
	got := sweepJSON2(t, "sweep", "testdata/sweep-jars.yaml", "burst=5..20+5", "clients[flood].traffic.rate=5/s,1000/s")
	if len(got.Rows) != 8 || got.Current != 3 || strings.Join(got.Fields, " ") != "burst clients[flood].traffic.rate" {
		t.Fatalf("%d rows over %v, current %d; want 8 over burst and the path, the file's 10 and 1000/s current (row 3)", len(got.Rows), got.Fields, got.Current)
	}
	for i, row := range got.Rows {
		burst := int64(5 * (1 + i/2))
		want := burst + 99
		if row.Values[1] == "5/s" {
			want = 50 // 5/s for 10s: every request, under the limit
		}
		if row.Allowed != want || row.IdealAllowed != want {
			t.Errorf("burst %s at %s: admitted %d, exact %d; want %d", row.Values[0], row.Values[1], row.Allowed, row.IdealAllowed, want)
		}
	}
}

// The output is the same whatever order the runs finish in: one at a
// time and two at once print the same bytes, two fields, every format.
func TestSweepIsDeterministic(t *testing.T) {
	for _, figures := range []string{"", "allowed,peak_ratio,rejected_pct:flash-bot,max_allowed_1s:key=flash-bot"} {
		for _, format := range []string{"table", "json", "csv"} {
			var outs []string
			for _, parallel := range []string{"1", "2"} {
				code, out, errOut := runArgs("sweep", "sync-interval", "sync-interval=0,50ms,never", "seed=1..2", "--parallel", parallel, "--format", format, "--figure", figures)
				if code != exitOK {
					t.Fatalf("%s --parallel %s: exit %d: %s", format, parallel, code, errOut)
				}
				outs = append(outs, out)
			}
			if outs[0] != outs[1] {
				t.Errorf("--format %s --figure %q: --parallel 1 and 2 differ:\n%s\n---\n%s", format, figures, outs[0], outs[1])
			}
		}
	}
}

// The tables are goldens, every line within 80 columns: the default
// figures of two fields, a row per pair; and --figure's.
func TestSweepGolden(t *testing.T) {
	for _, tc := range []struct {
		golden string
		args   []string
	}{
		{"sweep-two-fields.table", []string{"sweep", "sync-interval", "sync-interval=1ms..1s*10", "servers=2..8+3"}},
		{"sweep-figures.table", []string{"sweep", "testdata/sweep-jars.yaml", "servers=1..4", "--figure", "allowed,ideal_allowed,admitted_ratio,rejected_pct,p99_ms:flood,peak_ratio:key=flood"}},
		// Wide: two long paths, values alike but at their ends; and more
		// figures than fit, in a second table.
		{"sweep-wide-fields.table", []string{"sweep", "sync-interval", "clients[flash-bot].traffic={pattern: on-off, rate: 4000/s, on: 500ms, off: 4500ms},{pattern: on-off, rate: 4000/s, on: 500ms, off: 2500ms}", "topology.sync_interval=10ms,1s"}},
		{"sweep-wide-figures.table", []string{"sweep", "sync-interval", "seed=1,2", "--figure", "sent,allowed,rejected,failed_open,failed_closed,would_reject,shed,cost_sent,cost_allowed,no_answer,retries,retries_allowed,allowed:flash-bot"}},
	} {
		code, out, errOut := runArgs(tc.args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", tc.args, code, errOut)
		}
		golden(t, tc.golden, []byte(out))
		for _, line := range strings.Split(out, "\n") {
			if n := utf8.RuneCountInString(line); n > 80 {
				t.Errorf("%s: a line of %d columns, want at most 80: %q", tc.golden, n, line)
			}
		}
		// No two rows' values, and no two headers, read alike once cut.
		seen := map[string]bool{}
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) > 0 && strings.Contains(line, "…") {
				if seen[line] {
					t.Errorf("%s: %q twice", tc.golden, line)
				}
				seen[line] = true
			}
		}
	}
}

// A sweep whose runs are each within --max-requests but together over it
// is refused before any run starts, with the sum; so is one whose runs at
// once need more than --max-memory together, each alone under it.
func TestSweepRefusesItsSumUpFront(t *testing.T) {
	// 10,000 requests a run (1000/s for 10s), 8 runs: refused at the
	// sixth, the first past 50,000, without making the last two's
	// scenarios.
	code, out, errOut := runArgs("sweep", "testdata/sweep-jars.yaml", "servers=1..8", "--max-requests", "50000")
	if code != exitTooBig || out != "" || !strings.Contains(errOut, "would send more than 50,000 requests in its 8 runs: about 60,000 in the first 6") || !strings.Contains(errOut, "raise --max-requests") {
		t.Errorf("exit %d, %q; want %d and the sum so far", code, errOut, exitTooBig)
	}
	code, _, errOut = runArgs("sweep", "testdata/sweep-jars.yaml", "servers=1..8", "--max-requests", "79999")
	if code != exitTooBig || !strings.Contains(errOut, "would send about 80,000 requests in its 8 runs together, more than 79,999") {
		t.Errorf("over at the last run: exit %d, %q; want %d and the whole sum", code, errOut, exitTooBig)
	}
	if code, _, errOut := runArgs("sweep", "testdata/sweep-jars.yaml", "servers=1..8", "--max-requests", "80000", "-q"); code != exitOK {
		t.Errorf("at the sum: exit %d, %s; want it run", code, errOut)
	}
	// Each run is held to its share: 4 at once under 16 MiB is 4 MiB
	// each, and a run of sweep-jars needs about 5 MiB at any step.
	p := parseArgs("", "sweep", "testdata/sweep-jars.yaml", "servers=1..8", "--parallel", "4", "--max-memory", "16MiB")
	one := sim.MemoryEstimate(p.sweep.scenarioOf(t))
	if p.code != exitTooBig || !strings.Contains(p.stderr, "with servers 1 would need about 5.0 MiB of memory, more than its share of 16 MiB: 4.0 MiB for 4 runs at once") || p.sweepPlan != nil || 4*one <= 16<<20 || one > 16<<20 {
		t.Errorf("exit %d, %q (a run estimated at %d bytes); want %d, four runs at once over 16 MiB, each under", p.code, p.stderr, one, exitTooBig)
	}
	// Two at once fit their shares, 8 MiB each; the rows of all 8 runs
	// are counted too.
	if p := parseArgs("", "sweep", "testdata/sweep-jars.yaml", "servers=1..8", "--parallel", "2", "--max-memory", "16MiB"); p.code != exitOK {
		t.Errorf("two at once: exit %d, %q; want them planned", p.code, p.stderr)
	}
}

// A sweep of one value runs where sim runs: a run over --max-memory at
// its file's step runs at the coarser step sim would take (sweep-fit:
// about 52 MiB at 1s with no state series, 11 MiB at 10s), the same
// figures; a step asked for is kept, and the run refused, naming the
// step that fits.
func TestSweepFitsItsStepAsSim(t *testing.T) {
	code, out, errOut := runArgs("sweep", "testdata/sweep-fit.yaml", "seed=1", "--max-memory", "20MiB", "--format", "csv")
	if code != exitOK || !strings.Contains(errOut, "testdata/sweep-fit.yaml: 1 run at a step of up to 10s, not 1s, to fit --max-memory 20 MiB") {
		t.Fatalf("exit %d, %q; want it run at a coarser step, as sim runs it, and said", code, errOut)
	}
	code, simOut, errOut := runArgs("sim", "testdata/sweep-fit.yaml", "--max-memory", "20MiB", "--format", "json")
	if code != exitOK {
		t.Fatalf("sim: exit %d, %s", code, errOut)
	}
	var one sim.Result
	if err := json.Unmarshal([]byte(simOut), &one); err != nil {
		t.Fatal(err)
	}
	tot := one.Totals()
	if want := "1," + strconv.FormatInt(tot.Allowed, 10) + "," + strconv.FormatInt(tot.IdealAllowed, 10) + ","; !strings.Contains(out, "\n"+want) {
		t.Errorf("sweep's row:\n%s\nwant sim's totals %s...", out, want)
	}
	code, _, errOut = runArgs("sweep", "testdata/sweep-fit.yaml", "seed=1", "--max-memory", "20MiB", "--step", "1s")
	if code != exitTooBig || !strings.Contains(errOut, "with seed 1 would need about") || !strings.Contains(errOut, "a longer --step: 10s fits") {
		t.Errorf("--step 1s: exit %d, %q; want %d and the step that fits", code, errOut, exitTooBig)
	}
}

// scenarioOf is the scenario o's first run would have, for its estimate.
func (o *sweepOptions) scenarioOf(t *testing.T) sim.Scenario {
	t.Helper()
	_, sc, err := o.loadScenario(o.Scenario, o.over)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// --help fits 80 columns, its flags wrapped, lists every figure
// --figure takes, and every example it gives runs.
func TestSweepHelp(t *testing.T) {
	code, out, _ := runArgs("sweep", "--help")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	examples := 0
	_, exampleText, _ := strings.Cut(out, "Examples:")
	exampleText, _, _ = strings.Cut(exampleText, "Flags:")
	for _, line := range strings.Split(exampleText, "\n") {
		args, ok := strings.CutPrefix(strings.TrimSpace(line), "ratelim sweep ")
		if !ok {
			continue
		}
		examples++
		if code, _, errOut := runArgs(append([]string{"sweep"}, append(strings.Fields(args), "-q")...)...); code != exitOK {
			t.Errorf("the example %q: exit %d: %s", line, code, errOut)
		}
	}
	if examples < 4 {
		t.Errorf("%d examples run, want the 4 --help gives", examples)
	}
	for _, line := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(line); n > 80 {
			t.Errorf("a line of %d columns, want at most 80: %q", n, line)
		}
	}
	flat := strings.Join(strings.Fields(out), " ")
	for _, name := range append([]string{"admitted_ratio", "peak_ratio", "rejected_pct", "A..B*K", "--max-memory"}, "sent", "served", "p99_ms", "ideal_max_allowed_1s") {
		if !strings.Contains(flat, name) {
			t.Errorf("--help does not name %s", name)
		}
	}
}

// --plot draws a sweep of one field a panel per figure, the value of the
// scenario as given marked, and of two a heat map of the first figure,
// its cell named.
func TestSweepPlot(t *testing.T) {
	dir := t.TempDir()
	one, two := filepath.Join(dir, "one.svg"), filepath.Join(dir, "two.svg")
	if code, _, errOut := runArgs("sweep", "sync-interval", "sync-interval=0,100ms,never", "--figure", "allowed,rejected_pct:flash-bot", "--plot", one, "-q"); code != exitOK {
		t.Fatalf("one field: exit %d: %s", code, errOut)
	}
	if code, _, errOut := runArgs("sweep", "sync-interval", "sync-interval=10ms,100ms", "servers=2,4", "--plot", two, "-q"); code != exitOK {
		t.Fatalf("two fields: exit %d: %s", code, errOut)
	}
	for _, tc := range []struct {
		path string
		want []string
	}{
		{one, []string{"as given: the file and its flags, sync-interval 100ms", ">rejected_pct:flash-bot<", "allowed (req)", ">never<"}},
		{two, []string{"peak_ratio (×) over sync-interval × servers", ">peak_ratio<", "outlined: the scenario as given, the file and its flags (sync-interval 100ms, servers 4)"}},
	} {
		b, err := os.ReadFile(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		// The texts joined, as a wrapped line reads on.
		var texts []string
		for _, m := range regexp.MustCompile(`>([^<]+)<`).FindAllStringSubmatch(string(b), -1) {
			if text := strings.TrimSpace(m[1]); text != "" {
				texts = append(texts, text)
			}
		}
		joined := strings.Join(texts, " ")
		for _, w := range tc.want {
			if !strings.Contains(joined, w) && !strings.Contains(string(b), w) {
				t.Errorf("%s does not say %q", filepath.Base(tc.path), w)
			}
		}
	}
	code, _, errOut := runArgs("sweep", "sync-interval", "seed=1,2", "--figure", "sent,allowed,rejected,retries,served,allowed_rate,peak_ratio", "--plot", one)
	if code != exitBadInput || !strings.Contains(errOut, "--plot: 7 figures (want at most 6") {
		t.Errorf("7 figures: exit %d, %q; want them refused before any run", code, errOut)
	}
}

// The default CSV has a column per field, as --figure's has, one field
// or two: never both values packed into one cell.
func TestSweepCSVColumnPerField(t *testing.T) {
	code, out, errOut := runArgs("sweep", "testdata/sweep-jars.yaml", "seed=1,2", "servers=1,3", "--format", "csv")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[0], "seed,servers,allowed,ideal_allowed,") || !strings.HasPrefix(lines[4], "2,3,") {
		t.Errorf("two fields' CSV:\n%s\nwant a header seed,servers,allowed,... and a row 2,3,... last", out)
	}
	code, out, _ = runArgs("sweep", "testdata/sweep-jars.yaml", "servers=1,3", "--format", "csv")
	if code != exitOK || !strings.HasPrefix(out, "servers,allowed,") || !strings.Contains(out, "\n3,") {
		t.Errorf("one field's CSV:\n%s\nwant servers,allowed,... and a row 3,...", out)
	}
}

// A sweep on a terminal shows its progress line whatever --format (the
// line is on stderr, the output on stdout); -q or no terminal, none.
func TestSweepProgressEveryFormat(t *testing.T) {
	for _, format := range []string{"table", "json", "csv"} {
		for _, tc := range []struct{ terminal, quiet, want bool }{{true, false, true}, {true, true, false}, {false, false, false}} {
			p := parseArgs("", "sweep", "testdata/sweep-jars.yaml", "servers=1,2", "--format", format)
			o := p.sweep
			o.ErrIsTerminal, o.Quiet = tc.terminal, tc.quiet
			if got := o.progress().enabled; got != tc.want {
				t.Errorf("--format %s, terminal %v, quiet %v: progress %v, want %v", format, tc.terminal, tc.quiet, got, tc.want)
			}
		}
	}
}

// A client or key whose name has a comma is named quoted in --figure,
// and its column is labelled quoted as typed.
func TestSweepFigureQuotedSubject(t *testing.T) {
	got := sweepJSON2(t, "sweep", "testdata/sweep-comma.yaml", "servers=1,2", "--figure", `allowed:"flood, eu",max_allowed_1s:key="flood,eu",sent`)
	if strings.Join(got.Figures, " ") != `allowed:"flood, eu" max_allowed_1s:key="flood,eu" sent` {
		t.Errorf("figures %q, want the two quoted and sent", got.Figures)
	}
	for _, row := range got.Rows {
		if len(row.Figures) != 3 || row.Figures[0] == nil || *row.Figures[0] != float64(row.Allowed) || *row.Figures[2] != 10000 {
			t.Errorf("servers %s: figures %v, want the client's allowed (%d) and sent 10,000", row.Value, row.Figures, row.Allowed)
		}
	}
}

// Planning stops when it is cancelled (Ctrl-C), between runs' scenarios,
// instead of making every run's first.
func TestSweepPlanningStopsOnCancel(t *testing.T) {
	p := parseArgs("", "sweep", "testdata/sweep-jars.yaml", "servers=1..8", "seed=1..8")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	plan, err := planSweep(ctx, p.sweep)
	if !errors.Is(err, context.Canceled) || plan != nil {
		t.Errorf("planned %v, %v; want context.Canceled and no plan", plan != nil, err)
	}
}

// The title states only what every run had alike: a field swept by its
// path is left out as its flag's name is, and one left alone stays.
func TestSweepTitleStatesWhatRunsShare(t *testing.T) {
	for _, tc := range []struct {
		axis, want, not string
	}{
		{"limit.algorithm=token-bucket,gcra", "sync-interval · synced · 4 servers · seed 1 · 30s · store memory", "token-bucket"},
		{"topology.kind=local,shared", "sweep-jars · token-bucket · 1 server", "local"},
		{"algorithm=token-bucket,gcra", "sync-interval · synced · 4 servers", "token-bucket"},
		{"seed=1,2", "sync-interval · synced · token-bucket · 4 servers · 30s", "seed"},
	} {
		scenario := "sync-interval"
		if strings.HasPrefix(tc.axis, "topology.") {
			scenario = "testdata/sweep-jars.yaml"
		}
		code, out, errOut := runArgs("sweep", scenario, tc.axis)
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", tc.axis, code, errOut)
		}
		title, _, _ := strings.Cut(out, "\n")
		if title != tc.want && !strings.HasPrefix(title, tc.want) || strings.Contains(title, tc.not) {
			t.Errorf("%s: title %q, want %q and no %q", tc.axis, title, tc.want, tc.not)
		}
	}
}

// A --plot that cannot be written is refused before any run, as the
// output-file check refuses it when writing (a directory, a FIFO, a
// dangling link, a directory that does not exist), without offering
// standard output, which --plot refuses; a link to a file is written
// through.
func TestSweepPlotPathRefusedUpFront(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.svg")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "dir.svg"), 0o755); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(dir, "dangling.svg")
	if err := os.Symlink("missing.svg", dangling); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{filepath.Join(dir, "dir.svg"), "is a directory"},
		{fifo, "named pipe"},
		{dangling, "does not exist"},
		{filepath.Join(dir, "nodir", "x.svg"), "no such file or directory"},
	} {
		// 10 runs at --max-requests 1: refused at the first run's size
		// were the path not refused first.
		p := parseArgs("", "sweep", "testdata/sweep-jars.yaml", "servers=1..10", "--max-requests", "1", "--plot", tc.path)
		if p.code != exitBadInput || !strings.Contains(p.stderr, "--plot: cannot write "+tc.path) || !strings.Contains(p.stderr, tc.want) || strings.Contains(p.stderr, "standard output") {
			t.Errorf("%s: exit %d, %q; want %d before any run, %q", tc.path, p.code, p.stderr, exitBadInput, tc.want)
		}
	}
	target := filepath.Join(dir, "real.svg")
	if err := os.WriteFile(target, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.svg")
	if err := os.Symlink("real.svg", link); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runArgs("sweep", "testdata/sweep-jars.yaml", "servers=1,2", "-q", "--plot", link); code != exitOK {
		t.Fatalf("through a link: exit %d: %s", code, errOut)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link is no longer a link: %v", err)
	}
	if b, _ := os.ReadFile(target); !strings.Contains(string(b), "</svg>") {
		t.Errorf("the link's target holds no plot")
	}
}

// The row that is the scenario as given, the file and its flags (--burst
// 50 here), is marked in every table and in the CSV, as the JSON's
// current and the plot mark it; a sweep with no such row marks none.
func TestSweepMarksTheScenarioAsGiven(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		row     string // the table's marked row, as it starts; "" none
		current int
	}{
		{[]string{"servers=2,4,8", "--burst", "50"}, "4 *  ", 1},
		{[]string{"servers=2,4", "sync-interval=10ms,100ms", "--figure", "allowed"}, "4        100ms *", 3},
		{[]string{"servers=2,8"}, "", -1},
	} {
		args := append([]string{"sweep", "sync-interval"}, tc.args...)
		code, out, errOut := runArgs(args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", tc.args, code, errOut)
		}
		marked := 0
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, " *") {
				marked++
				if !strings.HasPrefix(line, tc.row) || tc.row == "" {
					t.Errorf("%v: marked %q, want the row %q", tc.args, line, tc.row)
				}
			}
		}
		if legend := strings.Contains(out, "\n* the scenario as given: the file and its flags\n"); marked != min(1, tc.current+1) || legend != (tc.current >= 0) {
			t.Errorf("%v: %d rows marked, legend %v; want %d\n%s", tc.args, marked, legend, min(1, tc.current+1), out)
		}
		code, out, errOut = runArgs(append(args, "--format", "csv")...)
		records, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		if code != exitOK || err != nil {
			t.Fatalf("%v csv: exit %d, %v: %s", tc.args, code, err, errOut)
		}
		last := len(records[0]) - 1
		if records[0][last] != "current" {
			t.Errorf("%v csv: header %v, want current last", tc.args, records[0])
		}
		for i, r := range records[1:] {
			if want := strconv.FormatBool(i == tc.current); r[last] != want {
				t.Errorf("%v csv: row %d current %q, want %s", tc.args, i, r[last], want)
			}
		}
		if got := sweepJSON2(t, args...); got.Current != tc.current {
			t.Errorf("%v json: current %d, want %d", tc.args, got.Current, tc.current)
		}
	}
}

// The title states the limit as sim's does, under the settings line:
// whole when every run had the same, its swept part named so; and the
// plot's subtitle says the same.
func TestSweepTitleStatesTheLimit(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sync-interval", "servers=2,4", "--rate", "20/s"}, "limit 20/s, burst 100, keyed by api-key"},
		{[]string{"sync-interval", "burst=10,20", "--rate", "20/s"}, "limit 20/s, burst swept, keyed by api-key"},
		{[]string{"partition", "window=1s,2s", "--algorithm", "fixed-window"}, "limit 10/s, window swept, keyed by api-key"},
		{[]string{"api-quotas", "seed=1,2"}, "limits per-second 10/s, burst 20; hourly 1,000 per 1h, keyed by api-key"},
	} {
		code, out, errOut := runArgs(append([]string{"sweep"}, tc.args...)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", tc.args, code, errOut)
		}
		if lines := strings.Split(out, "\n"); len(lines) < 2 || lines[1] != tc.want {
			t.Errorf("%v: title\n%s\nwant its second line %q", tc.args, out, tc.want)
		}
	}
	path := filepath.Join(t.TempDir(), "burst.svg")
	if code, _, errOut := runArgs("sweep", "sync-interval", "burst=10,20", "--rate", "20/s", "--plot", path, "-q"); code != exitOK {
		t.Fatalf("plot: exit %d: %s", code, errOut)
	}
	if b, err := os.ReadFile(path); err != nil || !strings.Contains(string(b), ">limit 20/s, burst swept, keyed by api-key · ") {
		t.Errorf("the plot's subtitle does not state the limit (%v)", err)
	}
}

// The exact limiter's figures are stated once when every run has the
// same, as each run's own, never as "the same arrivals": a sweep of a
// client's rate changes the arrivals though retry-storm's exact totals
// come out alike.
func TestSweepTitleExactFiguresAreEachRuns(t *testing.T) {
	code, out, errOut := runArgs("sweep", "retry-storm", "clients[eager].traffic[0].rate=10/s,20/s")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if lines := strings.Split(out, "\n"); len(lines) < 3 || lines[2] != "in every run the exact limiter on its arrivals admitted 503, worst second 19" || strings.Contains(out, "same arrivals") {
		t.Errorf("title\n%s\nwant the exact limiter's figures said of every run, not of the same arrivals", out)
	}
}

// A field's name too wide for its column is not cut (the cut would keep
// "client…" and "…ic.rate", not which client): every field's column is
// headed by a letter, the names in full on a line above, in the default
// table and in --figure's.
func TestSweepCutHeadersNamedInFull(t *testing.T) {
	for _, figure := range []string{"", "allowed,sent,rejected,retries,allowed_rate,p99_ms:app"} {
		args := []string{"sweep", "partition", "clients[app].traffic.rate=10/s,20/s", "topology.failover_after=0s,5s", "-q"}
		if figure != "" {
			args = append(args, "--figure", figure)
		}
		code, out, errOut := runArgs(args...)
		if code != exitOK {
			t.Fatalf("--figure %q: exit %d: %s", figure, code, errOut)
		}
		lines := strings.Split(out, "\n")
		if len(lines) < 2 || lines[0] != "A = clients[app].traffic.rate, B = topology.failover_after" || !strings.HasPrefix(lines[1], "A     B  ") || strings.Contains(lines[1], "…") {
			t.Errorf("--figure %q:\n%s\nwant the fields named in full above a header of A and B", figure, out)
		}
	}
}
