package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/ratelim/ratelim/web"
)

func TestWebArgvToOptions(t *testing.T) {
	testArgv(t, newCmdWeb(streams{}, nil),
		func() webOptions { return webOptions{Addr: "127.0.0.1:0"} },
		func(p *parsed) *webOptions { return p.web },
		[]argvCase[webOptions]{
			{line: "web"},
			{line: "web nat", want: func(o *webOptions) { o.Scenario = "nat" }},
			{line: "web nat --addr 127.0.0.1:8034 --no-open", want: func(o *webOptions) {
				o.Scenario, o.Addr, o.NoOpen = "nat", "127.0.0.1:8034", true
			}},
			{line: "web nat --addr [::1]:0", want: func(o *webOptions) { o.Scenario, o.Addr = "nat", "[::1]:0" }},
			{line: "web nat --addr localhost:8034", want: func(o *webOptions) { o.Scenario, o.Addr = "nat", "localhost:8034" }},
			{line: "web runaway-healthcheck --set limit.burst=20 --set algorithm=gcra", want: func(o *webOptions) {
				o.Scenario, o.Sets = "runaway-healthcheck", []string{"limit.burst=20", "algorithm=gcra"}
			}},
			{line: "web nat --predict", want: func(o *webOptions) { o.Scenario, o.Predict = "nat", true }},
			// A directory that is not there yet: Export creates it.
			{line: "web --export no-such-dir/site", want: func(o *webOptions) { o.Export = "no-such-dir/site" }},
		})
}

// The plan's fragment is the permalink's state: a built-in by its name,
// a file by its text (and its name alone, not its path), and the
// settings in the order typed.
func TestWebPlanCarriesTheScenario(t *testing.T) {
	dir := t.TempDir()
	yaml, err := os.ReadFile(filepath.Join("..", "..", "scenarios", "builtin", "nat.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "mine.yaml")
	if err := os.WriteFile(file, yaml, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want web.State
	}{
		{[]string{"web", "nat"}, web.State{Builtin: "nat"}},
		{[]string{"web", "runaway-healthcheck", "--set", "limit.burst=20", "--set", "algorithm=gcra"},
			web.State{Builtin: "runaway-healthcheck", Settings: []web.Setting{{Name: "limit.burst", Value: "20"}, {Name: "algorithm", Value: "gcra"}}}},
		{[]string{"web", "nat", "--predict"}, web.State{Builtin: "nat", Predict: true}},
		{[]string{"web", "--predict"}, web.State{Predict: true}},
		{[]string{"web", file, "--set", "limit.burst=3"},
			web.State{YAML: string(yaml), FileName: "mine.yaml", Settings: []web.Setting{{Name: "limit.burst", Value: "3"}}}},
	} {
		p := parseArgs("", tc.args...)
		if p.code != exitOK {
			t.Errorf("%v: exit %d, stderr %q", tc.args, p.code, p.stderr)
			continue
		}
		got, err := web.Decode(p.webPlan.Fragment)
		if err != nil {
			t.Errorf("%v: the plan's fragment %q does not decode: %v", tc.args, p.webPlan.Fragment, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%v: the fragment carries %+v, want %+v", tc.args, got, tc.want)
		}
	}
	if p := parseArgs("", "web"); p.code != exitOK || p.webPlan.Fragment != "" || !p.webPlan.Open {
		t.Errorf("web: exit %d, plan %+v; want no fragment (the page's default), opened", p.code, p.webPlan)
	}
	if p := parseArgs("", "web", "--no-open"); p.code != exitOK || p.webPlan.Open {
		t.Errorf("web --no-open: exit %d, plan %+v; want it not opened", p.code, p.webPlan)
	}
}

func TestWebRefusesBadLines(t *testing.T) {
	testRefusals(t, []refusal{
		{"web --bogus", exitBadInput, []string{"unknown flag: --bogus"}},
		{"web nat extra", exitBadInput, []string{"at most one scenario", "2 arguments"}},
		{"web no-such-scenario", exitBadInput, []string{"no-such-scenario"}},
		{"web --addr 0.0.0.0:8080", exitBadInput, []string{"--addr 0.0.0.0:8080", "loopback only", "--export"}},
		{"web --addr :8080", exitBadInput, []string{"--addr :8080", "every interface"}},
		{"web --addr 192.168.1.10:80", exitBadInput, []string{"--addr 192.168.1.10:80", "loopback only"}},
		{"web --addr example.com:80", exitBadInput, []string{"--addr example.com:80", "loopback only"}},
		{"web --addr 127.0.0.1", exitBadInput, []string{"--addr 127.0.0.1", "missing port"}},
		{"web --addr 127.0.0.1:99999", exitBadInput, []string{"--addr 127.0.0.1:99999", `port "99999"`}},
		{"web --addr 127.0.0.1:-1", exitBadInput, []string{`port "-1"`}},
		{"web --export x --addr 127.0.0.1:1", exitBadInput, []string{"--addr", "--export"}},
		{"web --export x --no-open", exitBadInput, []string{"--no-open", "--export"}},
		{"web --set limit.burst=20", exitBadInput, []string{"--set", "no scenario"}},
		{"web nat --set limit.burst", exitBadInput, []string{"--set", "PATH=VALUE"}},
		{"web nat --set limits.burst=3", exitBadInput, []string{"limits.burst"}},
		{"web nat --set limit.burst=lots", exitBadInput, []string{"limit.burst", "lots"}},
		{"web -", exitBadInput, []string{"standard input"}},
		{"web --export=", exitBadInput, []string{"--export: empty", "want a directory"}},
		// The page's bounds, tighter than ratelim sim's, before the build.
		{"web runaway-healthcheck --set clients[bastion-{i}].count=100000", exitBadInput, []string{"playground would not run this", "10,000"}},
		{"web runaway-healthcheck --set limit.burst=99999999999999999999", exitBadInput, []string{"too large"}},
		{"web nat --set clients[sync-tool].traffic.rate=10000000/s", exitBadInput, []string{"playground would not run this", "more than 2,000,000", "ratelim sim"}},
	})
}

// --export refuses a path that is not a directory before anything is
// built: a regular file, a FIFO (which would block a write), a link to
// either.
func TestWebRefusesAnExportThatIsNoDirectory(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(dir, "dangling")
	if err := os.Symlink(filepath.Join(dir, "nowhere"), dangling); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{file, "it is a regular file, not a directory"},
		{fifo, "it is a named pipe (FIFO), not a directory"},
		{link, "it is a regular file, not a directory"},
		{dangling, "it is a symbolic link to " + filepath.Join(dir, "nowhere") + ", which does not exist"},
	} {
		p := parseArgs("", "web", "--export", tc.path)
		if p.code != exitBadInput || !strings.Contains(p.stderr, "--export "+tc.path+": "+tc.want) {
			t.Errorf("web --export %s: exit %d, stderr %q; want %d and %q", tc.path, p.code, p.stderr, exitBadInput, tc.want)
		}
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "keep" {
		t.Errorf("the file --export named was changed: %q, %v", b, err)
	}
}
