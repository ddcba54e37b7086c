package main

import (
	"bytes"
	"encoding/json"
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
		{[]string{"scenarios", "reference", "extra"}, `unknown command "extra"`},
		{[]string{"scenarios", "schema", "extra"}, `unknown command "extra"`},
		{[]string{"scenarios", "schema", "-o", os.TempDir()}, "it is a directory"},
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
		{[]string{"reference"}, scenariosOptions{Reference: true}},
		{[]string{"schema"}, scenariosOptions{Schema: true}},
		{[]string{"schema", "-o", "ratelim.schema.json"}, scenariosOptions{Schema: true, Output: "ratelim.schema.json"}},
		{[]string{"schema", "--output", "-"}, scenariosOptions{Schema: true, Output: "-"}},
	}
	for _, tt := range tests {
		var got *scenariosOptions
		cmd := newCmdScenarios(streams{}, func(o *scenariosOptions) error { got = o; return nil })
		cmd.SetArgs(tt.args)
		if err := cmd.Execute(); err != nil {
			t.Fatalf("%v: %v", tt.args, err)
		}
		if got == nil || got.Show != tt.want.Show || got.Reference != tt.want.Reference || got.Schema != tt.want.Schema || got.Output != tt.want.Output {
			t.Errorf("%v: options %+v, want %+v", tt.args, got, tt.want)
		}
	}
}

// The reference is the scenarios package's, in 80 columns.
func TestScenariosReference(t *testing.T) {
	code, out, errOut := runArgs("scenarios", "reference")
	if code != exitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var want bytes.Buffer
	if err := scenarios.Reference(&want); err != nil {
		t.Fatal(err)
	}
	if out != want.String() {
		t.Errorf("scenarios reference is not scenarios.Reference:\n%s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		if n := len([]rune(line)); n > 80 {
			t.Errorf("line of %d columns, want at most 80: %q", n, line)
		}
	}
}

// The schema goes to standard output, or with -o to a file (through
// writeOutput, as every file this command writes), and a scenario file
// that names it on its first line, as an editor reads it, still loads.
func TestScenariosSchema(t *testing.T) {
	var want bytes.Buffer
	if err := scenarios.Schema(&want); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runArgs("scenarios", "schema")
	if code != exitOK || errOut != "" || out != want.String() {
		t.Fatalf("scenarios schema: exit %d, stderr %q, stdout is the schema: %v", code, errOut, out == want.String())
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc["$schema"] != scenarios.SchemaDraft {
		t.Errorf("scenarios schema: not a %s JSON Schema (%v)", scenarios.SchemaDraft, err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "ratelim.schema.json")
	code, out, errOut = runArgs("scenarios", "schema", "-o", path)
	if code != exitOK || out != "" || errOut != "" {
		t.Fatalf("scenarios schema -o: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, want.Bytes()) {
		t.Errorf("scenarios schema -o wrote %d bytes (%v), want the schema's %d", len(got), err, want.Len())
	}
	f, err := scenarios.Open("nat")
	if err != nil {
		t.Fatal(err)
	}
	scenario := filepath.Join(dir, "nat.yaml")
	if err := os.WriteFile(scenario, append([]byte("# yaml-language-server: $schema=ratelim.schema.json\n"), f.Source...), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := scenarios.Load(scenario); err != nil {
		t.Errorf("a scenario with the schema's modeline does not load: %v", err)
	}
}
