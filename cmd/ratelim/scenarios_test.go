package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ratelim/ratelim/scenarios"
)

func TestScenariosList(t *testing.T) {
	code, out, errOut := runArgs("scenarios")
	if code != exitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	golden(t, "scenarios.golden", []byte(out))
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(scenarios.Builtin()) {
		t.Errorf("%d lines for %d built-ins:\n%s", len(lines), len(scenarios.Builtin()), out)
	}
	for i, line := range lines {
		if n := len([]rune(line)); n > 80 {
			t.Errorf("line of %d columns, want at most 80: %q", n, line)
		}
		if name := scenarios.Builtin()[i]; !strings.HasPrefix(line, name+" ") {
			t.Errorf("line %d is %q, want it to start with %s", i+1, line, name)
		}
	}
	if code, again, _ := runArgs("scenarios", "list"); code != exitOK || again != out {
		t.Errorf("scenarios list: exit %d, output differs from scenarios:\n%s", code, again)
	}
}

func TestScenariosShowPrintsTheFileAsEmbedded(t *testing.T) {
	for _, name := range scenarios.Builtin() {
		code, out, errOut := runArgs("scenarios", "show", name)
		if code != exitOK || errOut != "" {
			t.Fatalf("%s: exit %d, stderr %q", name, code, errOut)
		}
		want, err := os.ReadFile(filepath.Join("..", "..", "scenarios", "builtin", name+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if out != string(want) {
			t.Errorf("scenarios show %s is not scenarios/builtin/%s.yaml byte for byte", name, name)
		}
		// What a user copies must load as it is.
		if _, err := scenarios.Parse(name+".yaml", []byte(out)); err != nil {
			t.Errorf("scenarios show %s does not parse: %v", name, err)
		}
	}
}

func TestScenariosBadInput(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"scenarios", "show", "no-such"}, `unknown scenario "no-such" (want one of ` + strings.Join(scenarios.Builtin(), ", ") + ")"},
		{[]string{"scenarios", "show"}, "accepts 1 arg(s), received 0"},
		{[]string{"scenarios", "show", "nat", "partition"}, "accepts 1 arg(s), received 2"},
		{[]string{"scenarios", "lst"}, `unknown command "lst"`},
		{[]string{"scenarios", "list", "extra"}, `unknown command "extra"`},
	}
	for _, tt := range tests {
		code, out, errOut := runArgs(tt.args...)
		if code != exitBadInput || out != "" || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", tt.args, code, out, errOut, tt.want)
		}
		if strings.Count(errOut, "\n") > 2 {
			t.Errorf("%v: stderr is not one plain sentence: %q", tt.args, errOut)
		}
	}
}

func TestScenariosArgsToOptions(t *testing.T) {
	tests := []struct {
		args []string
		want scenariosOptions
	}{
		{[]string{}, scenariosOptions{}},
		{[]string{"list"}, scenariosOptions{}},
		{[]string{"show", "nat"}, scenariosOptions{Show: "nat"}},
	}
	for _, tt := range tests {
		var got *scenariosOptions
		cmd := newCmdScenarios(streams{}, func(o *scenariosOptions) error { got = o; return nil })
		cmd.SetArgs(tt.args)
		if err := cmd.Execute(); err != nil {
			t.Fatalf("%v: %v", tt.args, err)
		}
		if got == nil || got.Show != tt.want.Show {
			t.Errorf("%v: options %+v, want %+v", tt.args, got, tt.want)
		}
	}
}
