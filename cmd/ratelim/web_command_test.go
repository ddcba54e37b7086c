package main

// The playground's command line reproduces its run: the command a
// Response shows, split as a shell splits it and run by this program's
// own root command, writes the bytes the page holds (resultJSON, and
// the table).

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/web"
)

// shellWords splits line as a POSIX shell splits a simple command: words
// between blanks, '…' taken as is, "…" with \" \\ \$ \` escapes, and \x
// outside quotes as x. Enough for what simrun.ShellWord writes, and
// written apart from it so that a quoting mistake there shows here.
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var word strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, word.String())
				word.Reset()
				inWord = false
			}
		case c == '\'':
			end := strings.IndexByte(line[i+1:], '\'')
			if end < 0 {
				t.Fatalf("%s: an unclosed '", line)
			}
			word.WriteString(line[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' && i+1 < len(line) && strings.IndexByte("\"\\$`", line[i+1]) >= 0 {
					i++
				}
				word.WriteByte(line[i])
			}
			if i >= len(line) {
				t.Fatalf("%s: an unclosed \"", line)
			}
			inWord = true
		case c == '\\' && i+1 < len(line):
			i++
			word.WriteByte(line[i])
			inWord = true
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, word.String())
	}
	return words
}

func TestShellWordsReadsWhatShellWordWrites(t *testing.T) {
	t.Parallel()
	got := shellWords(t, `ratelim sim 'my lab.yaml' --set 'a=b'\''c' "x\"y" z\ w`)
	want := []string{"ratelim", "sim", "my lab.yaml", "--set", "a=b'c", `x"y`, "z w"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("shellWords = %q, want %q", got, want)
	}
}

// sim runs the words of a `ratelim sim` command line (without
// "ratelim") through the root command, as a terminal would, and returns
// its stdout and stderr.
func simCommand(t *testing.T, args []string) (stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := run(context.Background(), args, streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}); code != 0 {
		t.Fatalf("ratelim %s: exit %d: %s", strings.Join(args, " "), code, errOut.String())
	}
	return out.String(), errOut.String()
}

// lab is a scenario of count clients c-{i} at rate each, of duration at
// step.
func labYAML(duration, step, count, rate string, extra string) string {
	return "name: lab\nduration: " + duration + "\nstep: " + step + "\nservers: 4\n" +
		"limit: {algorithm: token-bucket, rate: 10/s, burst: 50, key: api-key}\n" +
		"topology: {kind: " + extra + "}\n" +
		"clients:\n  - name: c-{i}\n    count: " + count + "\n    api_key: c-{i}\n    traffic: {pattern: constant, rate: " + rate + "}\n"
}

func TestPlaygroundCommandReproducesItsBytes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	type state struct {
		name  string
		state web.State
		// coarsened: the page's step is not the file's, and says so
		coarsened bool
	}
	var states []state
	for _, b := range web.Builtins() {
		states = append(states,
			state{name: b.Name, state: web.State{Builtin: b.Name}},
			state{name: b.Name + " seed balancer", state: web.State{Builtin: b.Name, Settings: []web.Setting{{Name: "balancer", Value: "random"}, {Name: "seed", Value: "3"}}}})
	}
	yamlState := func(name, text string, sets ...web.Setting) web.State {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return web.State{YAML: text, FileName: path, Settings: sets}
	}
	nat, err := scenarios.Open("nat")
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(nat.Source), "20/s", "5/s", 1)
	states = append(states,
		state{name: "an edited nat", state: yamlState("nat edited.yaml", edited)},
		state{name: "an edited nat with settings", state: yamlState("nat edited.yaml", edited, web.Setting{Name: "limit.burst", Value: "7"}, web.Setting{Name: "topology", Value: "local"})},
		state{name: "coarsened for steps", state: yamlState("steps.yaml", labYAML("300s", "1ms", "5", "1/s", "shared")), coarsened: true},
		state{name: "coarsened for memory", state: yamlState("memory.yaml", labYAML("20s", "10ms", "10", "1000/s", "local"), web.Setting{Name: "servers", Value: "1024"}), coarsened: true},
	)
	for _, tc := range states {
		var p web.Playground
		resp := p.Run(context.Background(), tc.state)
		if resp.Error != nil {
			t.Errorf("%s: %s", tc.name, resp.Error.Text)
			continue
		}
		if tc.coarsened != (resp.Notice != "") {
			t.Errorf("%s: notice %q, want one: %v", tc.name, resp.Notice, tc.coarsened)
		}
		words := shellWords(t, resp.Command)
		if len(words) < 3 || words[0] != "ratelim" || words[1] != "sim" {
			t.Fatalf("%s: command %q is not a ratelim sim line", tc.name, resp.Command)
		}
		for _, format := range []string{"json", "table"} {
			out, _ := simCommand(t, append(words[1:], "--format", format))
			want := resp.ResultJSON
			if format == "table" {
				want = resp.Table
			}
			if out != want {
				t.Errorf("%s: `%s --format %s` writes %d bytes, not the page's %d", tc.name, resp.Command, format, len(out), len(want))
			}
		}
	}
}
