package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ratelim/ratelim/algorithms"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/ratelim -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test ./cmd/ratelim -update rewrites it):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// runArgs runs a command line in process and returns its exit code and
// outputs.
func runArgs(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	return code, out.String(), errOut.String()
}

func TestAlgorithmsTable(t *testing.T) {
	code, out, errOut := runArgs("algorithms")
	if code != exitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	golden(t, "algorithms.golden", []byte(out))
	for _, line := range strings.Split(out, "\n") {
		if n := len([]rune(line)); n > 80 {
			t.Errorf("line of %d columns, want at most 80: %q", n, line)
		}
	}
}

func TestAlgorithmsJSONListsEveryAlgorithm(t *testing.T) {
	code, out, _ := runArgs("algorithms", "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	var got []struct {
		Name   string   `json:"name"`
		Params []string `json:"params"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(algorithms.Names()) {
		t.Fatalf("%d algorithms in JSON, want %d", len(got), len(algorithms.Names()))
	}
	for i, name := range algorithms.Names() {
		if got[i].Name != name || len(got[i].Params) != 2 {
			t.Errorf("entry %d = %+v, want %s with its two parameters", i, got[i], name)
		}
	}
}

func TestBadInputExitsTwo(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"algorithms", "--format", "xml"}, `--format: unknown format "xml" (want table or json)`},
		{[]string{"algorithms", "--no-such-flag"}, "unknown flag: --no-such-flag"},
		{[]string{"algorithms", "extra"}, `unknown command "extra"`},
		{[]string{"no-such-command"}, `unknown command "no-such-command"`},
	}
	for _, tt := range tests {
		code, out, errOut := runArgs(tt.args...)
		if code != exitBadInput || out != "" || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", tt.args, code, out, errOut, tt.want)
		}
		if strings.Contains(errOut, "goroutine") || strings.Count(errOut, "\n") > 2 {
			t.Errorf("%v: stderr is not one plain sentence: %q", tt.args, errOut)
		}
	}
}

func TestHelpListsCommands(t *testing.T) {
	code, out, _ := runArgs("--help")
	if code != exitOK || !strings.Contains(out, "algorithms") {
		t.Fatalf("exit %d, help:\n%s", code, out)
	}
}
