package main

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ratelim/ratelim/sim"
)

func TestSimVersus(t *testing.T) {
	code, out, errOut := runArgs("sim", "store-outage", "--vs", "on_error=fail-closed")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"── A ── A: on-error=fail-open", "── B ── B: on-error=fail-closed", "── A vs B ──",
		"failed open", "mobile, under its limit, lost 50", // each run's headline
		"mobile 150 100 -50 (-33%)", // the change, client by client
	} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), want) {
			t.Errorf("the side by side lacks %q:\n%s", want, out)
		}
	}

	code, out, errOut = runArgs("sim", "store-outage", "--vs", "on-error=fail-closed", "--format", "json")
	if code != exitOK {
		t.Fatalf("json: exit %d: %s", code, errOut)
	}
	var vs struct {
		Schema  string
		Changed map[string]string
		Labels  []string
		Runs    []sim.Result
	}
	if err := json.Unmarshal([]byte(out), &vs); err != nil {
		t.Fatalf("json: %v", err)
	}
	runs := vs.Runs
	if vs.Schema != VersusSchema || vs.Changed["on-error"] != "fail-closed" || len(vs.Labels) != 2 || vs.Labels[1] != "on-error=fail-closed" ||
		len(runs) != 2 || runs[0].OnError != "fail-open" || runs[1].OnError != "fail-closed" || runs[0].Schema != sim.Schema || runs[1].Findings[0].Kind != sim.FindingFailedClosed {
		t.Errorf("json: %s, changed %v, labels %v; want %s with the file's run then the fail-closed one, each a %s", vs.Schema, vs.Changed, vs.Labels, VersusSchema, sim.Schema)
	}

	_, one, _ := runArgs("sim", "store-outage", "--format", "csv")
	code, out, _ = runArgs("sim", "store-outage", "--vs", "on_error=fail-closed", "--format", "csv")
	lines, oneLines := strings.Split(strings.TrimSpace(out), "\n"), strings.Split(strings.TrimSpace(one), "\n")
	if code != exitOK || len(lines) != 2*len(oneLines)-1 || strings.Count(out, "scenario,") != 1 || !strings.HasSuffix(lines[1], ",on-error=fail-open") || !strings.HasSuffix(lines[len(lines)-1], ",on-error=fail-closed") {
		t.Errorf("csv: %d lines for %d of one run, want one header and both runs' rows", len(lines), len(oneLines))
	}
}

// A --vs that changes the traffic says so: a random balancer draws from
// the run's one random source.
func TestSimVersusSaysWhenTheTrafficDiffers(t *testing.T) {
	_, same, _ := runArgs("sim", "store-outage", "--vs", "on_error=fail-closed")
	_, differ, _ := runArgs("sim", "nat", "--vs", "balancer=random")
	if strings.Contains(same, "traffic differs") || !strings.Contains(differ, "note: the two runs' traffic differs (office-1's first tries:") {
		t.Errorf("the note on traffic: want it for nat's random balancer only:\n%s", differ)
	}
}

func TestSimVersusBadInput(t *testing.T) {
	for _, tt := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--vs", "on_error"}, `want FIELD=VALUE`},
		{[]string{"--vs", "=x"}, `want FIELD=VALUE`},
		{[]string{"--vs", "colour=red"}, `--vs colour: unknown setting "colour"`},
		{[]string{"--vs", "on_error=closed"}, `--vs on-error: unknown policy "closed"`},
		{[]string{"--vs", "seed=1", "--vs", "seed=2"}, "--vs seed: given twice"},
		{[]string{"--vs", "servers=100000"}, "--vs servers"},
		{[]string{"--vs", "seed=2", "--live"}, "--vs and --live"},
	} {
		code, _, errOut := runArgs(append([]string{"sim", "store-outage"}, tt.args...)...)
		if code != exitBadInput || !strings.Contains(errOut, tt.msg) {
			t.Errorf("%q: exit %d, %q; want %d saying %q", tt.args, code, errOut, exitBadInput, tt.msg)
		}
	}
}

func TestSimVersusPlot(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vs.png")
	code, _, errOut := runArgs("sim", "store-outage", "--vs", "on_error=fail-closed", "--plot", path, "-q")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("the side by side is not a PNG: %v", err)
	}
	// Two columns: wider than tall for two panels and the state.
	if b := img.Bounds(); b.Dx() <= b.Dy() {
		t.Errorf("side by side is %v: want two columns, wider than tall", b)
	}
	if code, _, errOut := runArgs("sim", "store-outage", "--vs", "on_error=fail-closed", "--plot", filepath.Join(t.TempDir(), "vs.gif")); code != exitBadInput || !strings.Contains(errOut, "still side by side") {
		t.Errorf("--vs --plot .gif: exit %d, %q; want bad input", code, errOut)
	}
}

// check reads a scenario from stdin given as -, as sim does; a directory
// as an output is refused by name, not by a rename's error.
func TestCheckStdinAndOutputDirectory(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"check", "-"}, streams{In: strings.NewReader(smallScenario), Out: &out, ErrOut: &errOut})
	if code != exitOK || !strings.Contains(out.String(), "stdin:") || !strings.Contains(out.String(), "2 passed, 0 failed") {
		t.Errorf("check -: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	code, _, stderr := runArgs("report", "nat", "-o", t.TempDir())
	if code != exitBadInput || !strings.Contains(stderr, "it is a directory") || strings.Contains(stderr, "rename") {
		t.Errorf("report -o DIR: exit %d, %q; want bad input naming the directory", code, stderr)
	}
}

// compare --vs makes the matrix twice, the second so changed: each the
// matrix compare gives with the setting as a flag.
func TestCompareVersus(t *testing.T) {
	args := []string{"compare", "runaway-healthcheck", "--algorithms", "gcra", "--topologies", "local,shared"}
	code, out, errOut := runArgs(append(args, "--vs", "burst=100")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	_, a, _ := runArgs(args...)
	_, b, _ := runArgs(append(args, "--burst", "100")...)
	if want := "── A ──\nA: burst=50\n" + a + "\n── B ──\nB: burst=100\n" + b; out != want {
		t.Errorf("compare --vs:\n%s\nwant the two matrices under their labels:\n%s", out, want)
	}
	_, js, _ := runArgs(append(args, "--vs", "burst=100", "--format", "json")...)
	var doc struct {
		Schema  string            `json:"schema"`
		Changed map[string]string `json:"changed"`
		Runs    []struct {
			Label string `json:"label"`
			Cells []Cell `json:"cells"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Schema != "ratelim.compare-vs/v1" || doc.Changed["burst"] != "100" || len(doc.Runs) != 2 || doc.Runs[1].Label != "burst=100" || len(doc.Runs[1].Cells) != 2 {
		t.Errorf("json: %+v", doc)
	}
	_, csvOut, _ := runArgs(append(args, "--vs", "burst=100", "--format", "csv")...)
	lines := strings.Split(strings.TrimSpace(csvOut), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[0], "run,algorithm,") || !strings.HasPrefix(lines[4], "burst=100,gcra,shared,") {
		t.Errorf("csv:\n%s", csvOut)
	}
}
