package main

import (
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"html"
	"image/gif"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ratelim/ratelim/report"
	"github.com/ratelim/ratelim/sim"
)

func TestReportFlagsToOptions(t *testing.T) {
	var got *reportOptions
	cmd := newCmdReport(streams{}, func(o *reportOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"nat", "-o", "nat.html", "--image", "svg", "--topology", "local", "--seed", "7", "--by", "key"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Scenario != "nat" || got.Output != "nat.html" || got.Image != "svg" || got.Plot.By != "key" {
		t.Errorf("options = %+v", got)
	}
	if got.over.set["topology"] != "local" || got.over.set["seed"] != "7" || len(got.over.set) != 2 {
		t.Errorf("overrides = %v, want topology and seed", got.over.set)
	}
	if want := "ratelim sim nat --topology local --seed 7"; reportCommand(got) != want {
		t.Errorf("reportCommand = %q, want %q", reportCommand(got), want)
	}
}

func TestReportWritesOneSelfContainedPage(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "small.html")
	scenario := writeScenario(t, "small.yaml", smallScenario)
	code, out, errOut := runArgs("report", scenario, "-o", path)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.HasPrefix(out, path+": ") {
		t.Errorf("stdout %q does not name the file written", out)
	}
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	wellFormed(t, page)
	for _, want := range []string{"<h1>small</h1>", "One client hammers a bucket on two servers.",
		"<td class=\"name\">hammer</td>", "<td class=\"name\">polite</td>", // the table
		"All 2 hold.", "polite rejected &lt;= 0", // the expectations, escaped
		"<pre><code>name: small", // the source
		"ratelim sim " + scenario} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("the page lacks %q", want)
		}
	}
	// The plot is inline, a PNG that decodes.
	m := regexp.MustCompile(`src="data:image/png;base64,([A-Za-z0-9+/=]+)"`).FindSubmatch(page)
	if m == nil {
		t.Fatal("no inline PNG")
	}
	img, err := base64.StdEncoding.DecodeString(string(m[1]))
	if err != nil {
		t.Fatal(err)
	}
	if cfg, err := png.DecodeConfig(bytes.NewReader(img)); err != nil || cfg.Width < 500 {
		t.Errorf("the inline PNG: %+v, %v", cfg, err)
	}
	// -o - writes the same page to stdout; a second run the same bytes.
	code, stdout, errOut := runArgs("report", scenario, "-o", "-")
	if code != exitOK {
		t.Fatalf("-o -: exit %d: %s", code, errOut)
	}
	if stdout != string(page) {
		t.Error("-o - wrote something other than the file")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
}

func TestReportBuiltinsAreDeterministic(t *testing.T) {
	for _, name := range []string{"runaway-healthcheck", "partition"} {
		_, first, _ := runArgs("report", name, "-o", "-")
		code, second, errOut := runArgs("report", name, "-o", "-", "--image", "svg")
		if code != exitOK {
			t.Fatalf("%s --image svg: exit %d: %s", name, code, errOut)
		}
		if !strings.Contains(second, `src="data:image/svg+xml;base64,`) {
			t.Errorf("%s --image svg: no inline SVG", name)
		}
		_, again, _ := runArgs("report", name, "-o", "-")
		if first != again || first == "" {
			t.Errorf("%s: two reports of the same scenario differ", name)
		}
		wellFormed(t, []byte(first))
	}
}

func TestReportOverridesSkipTheExpectations(t *testing.T) {
	_, page, _ := runArgs("report", "runaway-healthcheck", "-o", "-", "--topology", "local")
	for _, want := range []string{"not evaluated: flags changed the scenario", "ratelim sim runaway-healthcheck --topology local"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(page, "<td class=\"name ok\">") {
		t.Error("expectations were evaluated on a changed scenario")
	}
}

// A scenario's names reach the page as text, never as markup.
func TestReportEscapesTheScenario(t *testing.T) {
	hostile := strings.NewReplacer("name: small", `name: "<script>alert(1)</script>"`,
		"summary: One client hammers a bucket on two servers.", `summary: "</p><script>x()</script>"`,
		"- name: hammer", `- name: "<img src=x onerror=alert(2)>"`,
		"{client: hammer,", `{client: "<img src=x onerror=alert(2)>",`).Replace(smallScenario)
	scenario := writeScenario(t, "hostile.yaml", hostile)
	code, page, errOut := runArgs("report", scenario, "-o", "-")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, bad := range []string{"<script", "<img src=x"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q unescaped", bad)
		}
	}
	if !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("the scenario's name is not on the page, escaped")
	}
	wellFormed(t, []byte(page))
}

func TestReportBadInputExitsTwo(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"report", "nat"}, []string{"-o", "report.html"}},
		{[]string{"report", "nat", "-o", "-", "--image", "jpeg"}, []string{"--image", "jpeg"}},
		{[]string{"report", "nat", "-o", "-", "--by", "server"}, []string{"--by", "server"}},
		{[]string{"report", "nat", "-o", "-", "--plot-width", "-1"}, []string{"--plot-width"}},
		{[]string{"report", "no-such-scenario", "-o", "-"}, []string{"no-such-scenario"}},
		{[]string{"report", "nat", "-o", "-", "--servers", "0"}, []string{"--servers"}},
		{[]string{"report", "nat", "-o", filepath.Join(dir, "no", "such", "dir", "r.html")}, []string{"r.html"}},
		{[]string{"report"}, []string{"scenario name or file"}},
		{[]string{"compare", "nat", "--plot", filepath.Join(dir, "grid.gif"), "--algorithms", "gcra", "--topologies", "shared"}, []string{".png or .svg"}},
	}
	for _, tt := range tests {
		code, out, errOut := runArgs(tt.args...)
		if code != exitBadInput {
			t.Errorf("%v: exit %d, want 2; stderr %q", tt.args, code, errOut)
			continue
		}
		if tt.args[0] == "report" && out != "" {
			t.Errorf("%v: printed to stdout: %q", tt.args, out)
		}
		for _, w := range tt.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%v: stderr %q lacks %q", tt.args, errOut, w)
			}
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("bad runs left files behind: %v", entries)
	}
}

// `sim --plot run.gif` draws the animated timeline.
func TestReportSimPlotGIF(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.GIF")
	code, _, errOut := runArgs("sim", writeScenario(t, "small.yaml", smallScenario), "--plot", path, "-q")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g, err := gif.DecodeAll(f)
	if err != nil {
		t.Fatalf("the GIF does not decode: %v", err)
	}
	// Five one-second steps: a frame each.
	if want := len(report.FrameTimes(&sim.Result{DurationS: 5, StepS: 1}, 0)); len(g.Image) != want {
		t.Errorf("%d frames, want %d", len(g.Image), want)
	}
}

// wellFormed fails the test unless page parses as XML with HTML's
// entities: the page is written so, and a broken nesting shows here.
func wellFormed(t *testing.T, page []byte) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(page))
	d.Entity = xml.HTMLEntity
	for {
		_, err := d.Token()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("the page is not well-formed: %v", err)
		}
	}
}

// report --vs runs the scenario a second time so changed: the page says
// what differs, client by client, and its command line has the --vs.
func TestReportVersus(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vs.html")
	code, _, errOut := runArgs("report", "partition", "--vs", "topology.failover_after=5s", "--on-error", "fail-closed", "-o", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, rows, _ := runArgs("sim", "partition", "--vs", "topology.failover_after=5s", "--on-error", "fail-closed", "-q")
	for _, want := range []string{
		"<h2>A topology.failover_after=0s vs B topology.failover_after=5s</h2>",
		html.EscapeString(rows),
		"ratelim sim partition --on-error fail-closed --vs topology.failover_after=5s",
	} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// The line that says where a report went is wrapped at 80 columns, and
// with --vs says what each run found, under its letter.
func TestReportSaysWhereItWentIn80Columns(t *testing.T) {
	t.Chdir(t.TempDir())
	path := "r1.html"
	for _, args := range [][]string{
		{"report", "partition", "-o", path},
		{"report", "partition", "--vs", "burst=40", "-o", path},
	} {
		code, out, errOut := runArgs(args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		for _, line := range lines {
			if n := utf8.RuneCountInString(line); n > 80 {
				t.Errorf("%v: a line of %d columns, want at most 80: %q", args, n, line)
			}
		}
		if !strings.HasPrefix(lines[0], path+": ") {
			t.Errorf("%v: first line %q, want it to start with the page's path", args, lines[0])
		}
		if len(args) > 4 {
			if lines[0] != path+": A burst=20 vs B burst=40" || !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "  A: admitted") }) || !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "  B: admitted") }) {
				t.Errorf("%v: want the runs' labels, then A's and B's headlines:\n%s", args, out)
			}
		}
	}
}
