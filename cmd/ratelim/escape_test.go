package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ratelim/ratelim/internal/escape/escapetest"
)

// The names a trace scenario takes from its log (and those its YAML
// gives) reach no terminal, plot or page raw: sim's table and its --vs
// table, check's lines, compare's table, the SVG plot and the HTML report
// show each as escaped text, and the markup key as text, not markup.
func TestHostileNamesAreEscapedInEveryView(t *testing.T) {
	dir := t.TempDir()
	scenario := escapetest.Write(t, dir)
	read := func(path string) string {
		t.Helper()
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	logKey, yamlName := escapetest.LogKey, escapetest.YAMLName
	// The names as the file and the log hold them, typed to --figure.
	rawYAMLName, rawLogKey := "yaml\u202Eclient\x1b[1m", "\x1b[31mRED\x00x\u202eevil\xff"
	tests := []struct {
		what string
		args []string
		file string // the output to read, when not stdout
		want []string
	}{
		{"sim table", []string{"sim", scenario}, "", []string{logKey, yamlName, "</svg>&amp", `evil\x1b[2J`}},
		{"sim --vs", []string{"sim", scenario, "--vs", "algorithm=gcra"}, "", []string{logKey, yamlName}},
		{"check", []string{"check", scenario}, "", []string{logKey, yamlName}},
		{"compare", []string{"compare", scenario}, "", []string{`evil\x1b[2J`}},
		{"plot", []string{"sim", scenario, "-q", "--plot", filepath.Join(dir, "out.svg")}, filepath.Join(dir, "out.svg"),
			// The panel's label is cut to fit, escapes whole.
			[]string{`\x1b[31mRED\x00x\u202ee`, yamlName, "&lt;/svg&gt;&amp;amp"}},
		{"replay plot", []string{"replay", filepath.Join(dir, "access.log"), "--key", "query:k", "--limit", "1/s", "-q", "--plot", filepath.Join(dir, "replay.svg")},
			filepath.Join(dir, "replay.svg"), []string{`\x1b[31mRED\x00x\u202ee`, "&lt;/svg&gt;&amp;amp"}},
		{"replay --suggest", []string{"replay", filepath.Join(dir, "access.log"), "--key", "query:k", "--suggest", "--top", "0", "-q"}, "", []string{`\x1b[31mRED\x00x\u202ee`}},
		{"replay --suggest plot", []string{"replay", filepath.Join(dir, "access.log"), "--key", "query:k", "--suggest", "-q", "--plot", filepath.Join(dir, "frontier.svg")},
			filepath.Join(dir, "frontier.svg"), nil},
		{"sweep", []string{"sweep", scenario, "seed=1,2"}, "", []string{`evil\x1b[2J`, `api\x1b[1mkey\u202e`}},
		{"sweep --figure", []string{"sweep", scenario, "seed=1,2", "--figure", "allowed:" + rawYAMLName + ",sent:key=" + rawLogKey}, "", []string{"allowed:" + yamlName, `sent:key=\x1b[31mRED`}},
		{"sweep --figure refused", []string{"sweep", scenario, "seed=1,2", "--figure", "allowed:nobody\x1b]0;pwned\a"}, "", []string{`evil\x1b[2J has no client`, yamlName, `allowed:nobody\x1b]0;pwned\x07`}},
		{"sweep --figure key refused", []string{"sweep", scenario, "seed=1,2", "--figure", "sent:key=nobody"}, "", []string{`evil\x1b[2J has no limiter key`, `\x1b[31mRED`}},
		{"report", []string{"report", scenario, "--image", "svg", "-o", filepath.Join(dir, "out.html")}, filepath.Join(dir, "out.html"),
			[]string{logKey, yamlName, "&lt;/svg&gt;&amp;amp"}},
	}
	for _, tt := range tests {
		code, out, errOut := runArgs(tt.args...)
		// A case named "... refused" is refused (exit 2): its message on
		// stderr is what is read.
		if strings.HasSuffix(tt.what, " refused") {
			if code != exitBadInput {
				t.Errorf("%s: exit %d, want %d\n%s%s", tt.what, code, exitBadInput, out, errOut)
			}
			out, errOut = errOut, ""
		} else if code != exitOK && code != exitFailed {
			t.Errorf("%s: exit %d\n%s%s", tt.what, code, out, errOut)
			continue
		}
		shown := map[string]string{"stdout": out, "stderr": errOut}
		if strings.HasSuffix(tt.what, " refused") {
			shown = map[string]string{"stderr": out}
		}
		if tt.file != "" {
			out = read(tt.file)
			shown[filepath.Base(tt.file)] = out
		}
		for what, text := range shown {
			if bad := escapetest.Unsafe(text); len(bad) > 0 {
				t.Errorf("%s: %s holds %s raw", tt.what, what, strings.Join(bad, ", "))
			}
		}
		for _, want := range tt.want {
			if !strings.Contains(out, want) {
				t.Errorf("%s: the output lacks %s:\n%.2000s", tt.what, want, out)
			}
		}
	}
}
