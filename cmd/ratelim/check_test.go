package main

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ratelim/ratelim/scenarios"
)

// checkDir writes a directory for `ratelim check DIR`: a good file whose
// second expectation fails, a malformed file (exit 2) and a file whose run
// is over --max-memory 64MiB (exit 3), as the names say. prefix is put
// before every line of the good file, so that a test can move its lines.
func checkDir(t *testing.T, prefix string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"a-good.yaml":      prefix + strings.Replace(smallScenario, "allowed: {min: 65, max: 75}", "allowed: {max: 10}", 1),
		"b-malformed.yaml": "name: broken\nduration: 5s\nclients: [\n",
		"c-too-big.yaml":   strings.Replace(smallScenario, "duration: 5s\n", "duration: 1h\nstep: 10ms\n", 1),
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func readJUnit(t *testing.T, path string) junitSuites {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no JUnit report: %v", err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("JUnit report does not parse: %v\n%s", err, data)
	}
	return doc
}

// A directory with a malformed file and one over budget still checks the
// good file, reports each bad one as an errored case, writes the JUnit
// report, and exits with the worst: the malformed file's 2.
func TestCheckDirKeepsGoingAndReportsEveryFile(t *testing.T) {
	dir := checkDir(t, "")
	report := filepath.Join(t.TempDir(), "out.xml")
	code, out, errOut := runArgs("check", dir, "--junit", report, "--max-memory", "64MiB")
	if code != exitBadInput {
		t.Errorf("exit %d, want 2 (a malformed file is worse than one too big or a failure)\n%s%s", code, out, errOut)
	}
	for _, want := range []string{
		"FAIL " + filepath.Join(dir, "a-good.yaml") + ":16: hammer allowed <= 10 (got 69)",
		"ok   " + filepath.Join(dir, "a-good.yaml") + ":15:",
		"ERROR " + filepath.Join(dir, "b-malformed.yaml") + ":3: not valid YAML",
		"ERROR " + filepath.Join(dir, "c-too-big.yaml") + ": over the memory bound",
		"raise --max-memory",
		"1 passed, 1 failed, 2 could not be checked\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "2 checks could not run") || !strings.Contains(errOut, "b-malformed.yaml:3:") {
		t.Errorf("stderr %q, want the count and the worst error", errOut)
	}
	doc := readJUnit(t, report)
	if doc.Tests != 4 || doc.Failures != 1 || doc.Errors != 2 || len(doc.Suites) != 3 {
		t.Fatalf("report: %d tests, %d failures, %d errors in %d suites; want 4, 1, 2 in 3", doc.Tests, doc.Failures, doc.Errors, len(doc.Suites))
	}
	type caseOf struct{ suite, name, verdict string }
	var got []caseOf
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			verdict := "ok"
			switch {
			case c.Error != nil && c.Failure == nil && strings.Contains(c.Error.Message, filepath.Base(s.Name)):
				verdict = "error"
			case c.Failure != nil && c.Error == nil && c.Failure.Message == "got 69":
				verdict = "failure"
			case c.Failure != nil || c.Error != nil:
				verdict = "bad element"
			}
			got = append(got, caseOf{filepath.Base(s.Name), c.Name, verdict})
		}
	}
	want := []caseOf{
		{"a-good.yaml", "polite rejected <= 0", "ok"},
		{"a-good.yaml", "hammer allowed <= 10", "failure"},
		{"b-malformed.yaml", "scenario file", "error"},
		{"c-too-big.yaml", "run", "error"},
	}
	if len(got) != len(want) {
		t.Fatalf("cases %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("case %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

// Each error decides the exit as the worst of those seen: 4 > 2 > 3 > 1.
func TestCheckExitIsTheWorstSeen(t *testing.T) {
	dir := checkDir(t, "")
	file := func(name string) string { return filepath.Join(dir, name) }
	tests := []struct {
		args []string
		want int
	}{
		{[]string{file("a-good.yaml")}, exitFailed},
		{[]string{file("a-good.yaml"), file("c-too-big.yaml")}, exitTooBig},
		{[]string{file("c-too-big.yaml"), file("a-good.yaml")}, exitTooBig},
		{[]string{file("c-too-big.yaml"), file("b-malformed.yaml")}, exitBadInput},
		{[]string{file("b-malformed.yaml"), file("c-too-big.yaml")}, exitBadInput},
	}
	for _, tt := range tests {
		report := filepath.Join(t.TempDir(), "out.xml")
		args := append([]string{"check", "--junit", report, "--max-memory", "64MiB"}, tt.args...)
		code, out, errOut := runArgs(args...)
		if code != tt.want {
			t.Errorf("%v: exit %d, want %d\n%s%s", tt.args, code, tt.want, out, errOut)
		}
		if doc := readJUnit(t, report); len(doc.Suites) != len(tt.args) {
			t.Errorf("%v: %d suites, want one per file", tt.args, len(doc.Suites))
		}
	}
	// The order itself, with 4 (an internal or store error) on top.
	for _, order := range [][2]int{{exitInternal, exitBadInput}, {exitBadInput, exitTooBig}, {exitTooBig, exitFailed}, {exitFailed, exitOK}} {
		if checkSeverity(order[0]) <= checkSeverity(order[1]) {
			t.Errorf("exit %d is not worse than %d", order[0], order[1])
		}
	}
}

// With --junit -, standard output is the JUnit document alone, which
// parses, and the ok/FAIL/ERROR lines and the summary are on standard
// error; --format json, which also wants standard output, is refused.
func TestCheckJUnitToStdoutKeepsStdoutXML(t *testing.T) {
	dir := checkDir(t, "")
	good := filepath.Join(dir, "a-good.yaml")
	code, out, errOut := runArgs("check", good, filepath.Join(dir, "b-malformed.yaml"), "--junit", "-")
	if code != exitBadInput {
		t.Errorf("exit %d, want 2 (a malformed file)\n%s%s", code, out, errOut)
	}
	var doc junitSuites
	dec := xml.NewDecoder(strings.NewReader(out))
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("stdout is not a JUnit document: %v\n%s", err, out)
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if cd, ok := tok.(xml.CharData); err != nil || !ok || strings.TrimSpace(string(cd)) != "" {
			t.Fatalf("stdout goes on after the JUnit document (%q, %v):\n%s", tok, err, out)
		}
	}
	if len(doc.Suites) != 2 {
		t.Errorf("%d suites, want one per file", len(doc.Suites))
	}
	for _, want := range []string{
		"ok   " + good + ":15:",
		"FAIL " + good + ":16: hammer allowed <= 10 (got 69)",
		"ERROR " + filepath.Join(dir, "b-malformed.yaml") + ":3: not valid YAML",
		"1 passed, 1 failed, 1 could not be checked\n",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	code, out, errOut = runArgs("check", good, "--junit", "-", "--format", "json")
	if code != exitBadInput || out != "" || !strings.Contains(errOut, "--junit -: standard output carries the --format json report") {
		t.Errorf("--junit - --format json: exit %d, stdout %q, stderr %q; want 2 and the reason", code, out, errOut)
	}
}

// A case's name is its claim, never its line: an edit that moves the
// file's lines keeps every name.
func TestCheckJUnitNamesSurviveMovedLines(t *testing.T) {
	names := func(prefix string) []string {
		dir := checkDir(t, prefix)
		report := filepath.Join(t.TempDir(), "out.xml")
		runArgs("check", filepath.Join(dir, "a-good.yaml"), "--junit", report)
		var names []string
		for _, s := range readJUnit(t, report).Suites {
			for _, c := range s.Cases {
				names = append(names, c.Name)
			}
		}
		return names
	}
	before, after := names(""), names("# a comment\n\n# moves every line down by three\n")
	if len(before) != 2 || strings.Join(before, "|") != strings.Join(after, "|") {
		t.Errorf("names %q, after moving lines %q; want the same two", before, after)
	}
	for _, n := range before {
		if strings.ContainsAny(n, "0123456789") && !strings.Contains(n, "<= ") {
			t.Errorf("name %q carries a line number", n)
		}
		if strings.Contains(n, ".yaml:") {
			t.Errorf("name %q carries file:line", n)
		}
	}
}

// The JSON results carry an errored file as a line with error set.
func TestCheckJSONCarriesErrors(t *testing.T) {
	dir := checkDir(t, "")
	code, out, _ := runArgs("check", dir, "--format", "json", "--max-memory", "64MiB")
	var doc struct {
		Passed, Failed, Errors int
		Results                []checkLine
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("exit %d, JSON: %v\n%s", code, err, out)
	}
	if code != exitBadInput || doc.Passed != 1 || doc.Failed != 1 || doc.Errors != 2 || len(doc.Results) != 4 {
		t.Fatalf("exit %d, %d passed %d failed %d errors in %d results; want 2, 1 1 2 in 4", code, doc.Passed, doc.Failed, doc.Errors, len(doc.Results))
	}
	if r := doc.Results[2]; r.OK || !strings.Contains(r.Error, "b-malformed.yaml:3:") {
		t.Errorf("the malformed file's result: %+v", r)
	}
}

// sim's table names each failing expectation as check does: file and
// line, the claim, what was got; wrapped within 80 columns, however long
// the file's path.
func TestSimNamesFailingExpectations(t *testing.T) {
	// The temporary directory's path is long enough that the line wraps.
	dir := t.TempDir()
	path := filepath.Join(dir, "fail.yaml")
	text := strings.Replace(smallScenario, "allowed: {min: 65, max: 75}", "allowed: {max: 10}", 1)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runArgs("sim", path)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	_, summary, found := strings.Cut(out, "\nexpect: ")
	if !found {
		t.Fatalf("no expect: summary:\n%s", out)
	}
	// The wrapped lines, joined, say what check says.
	joined := strings.Join(strings.Fields(summary), " ")
	if want := "1 of 2 hold FAIL " + path + ":16: hammer allowed <= 10 (got 69)"; joined != want {
		t.Errorf("summary %q, want %q", joined, want)
	}
	if n := len([]rune("  FAIL " + path + ":16: hammer allowed <= 10 (got 69)")); n <= 80 {
		t.Fatalf("the FAIL line is %d columns: it tests no wrapping", n)
	}
	for _, line := range strings.Split(summary, "\n") {
		if n := len([]rune(line)); n > 80 {
			t.Errorf("expect: line of %d columns, want at most 80: %q", n, line)
		}
	}
}

// An expectation's with: takes a field's path, set in the file as --set
// sets it, and refused with the file's message for the same value.
func TestCheckWithAPath(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	good := write("good.yaml", smallScenario+"  - {client: hammer, allowed: {min: 140, max: 160}, with: {limit.burst: 100}}\n")
	code, out, errOut := runArgs("check", good)
	if code != 0 {
		t.Errorf("exit %d, want 0: with: {limit.burst: 100} lets the hammer's burst of 100 through\n%s%s", code, out, errOut)
	}
	bad := write("bad.yaml", smallScenario+"  - {client: hammer, allowed: {min: 1}, with: {limit.burst: -1}}\n")
	_, fileErr := scenarios.Parse("edited.yaml", []byte(strings.Replace(smallScenario, "burst: 20", "burst: -1", 1)))
	var fe *scenarios.Error
	if !errors.As(fileErr, &fe) || fe.Field != "limit.burst" {
		t.Fatalf("the edited file gives %v, want a limit.burst error", fileErr)
	}
	code, out, errOut = runArgs("check", bad)
	want := bad + ":17: expect[2].with.limit.burst: " + fe.Msg
	if code != exitBadInput || !strings.Contains(out+errOut, want) {
		t.Errorf("exit %d, want 2 and %q in\n%s%s", code, want, out, errOut)
	}
	// A path that names no field is refused as the file is read.
	typo := write("typo.yaml", smallScenario+"  - {client: hammer, allowed: {min: 1}, with: {limit.brust: 5}}\n")
	code, out, errOut = runArgs("check", typo)
	if want := `expect[2].with.limit.brust: unknown field, did you mean "burst"?`; code != exitBadInput || !strings.Contains(out+errOut, want) {
		t.Errorf("exit %d, want 2 and %q in\n%s%s", code, want, out, errOut)
	}
}

// Two with:s that set one field however named (burst, limit.burst) are
// one run, and their cases one name: the first's with: as written.
func TestCheckWithGroupsByTheFieldSet(t *testing.T) {
	src := smallScenario +
		"  - {client: hammer, allowed: {min: 140, max: 160}, with: {burst: 100}}\n" +
		"  - {client: hammer, allowed: {min: 1}, with: {limit.burst: 100}}\n"
	f, err := scenarios.Parse("grouped.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	jobs, scs, err := planFile(0, f, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 2 || len(scs) != 2 {
		t.Fatalf("%d runs, want 2: the file as written, and burst 100 once", len(jobs))
	}
	if got := len(jobs[1].exps); got != 2 || withText(jobs[1].with) != " with burst=100" || scs[1].Limit.Params.Burst != 100 {
		t.Errorf("second run: %d expectations, named %q, burst %d; want 2, \" with burst=100\", 100", got, withText(jobs[1].with), scs[1].Limit.Params.Burst)
	}
}

// A with: that Apply refuses is named as the file's reader names it: by
// its place in expect: (a lesson: comes first in the File's Expect but is
// no entry of it), with no =VALUE, and as a file's error, with no usage
// hint: the command line is not at fault.
func TestCheckNamesAWithAsTheFileDoes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lesson.yaml")
	src := strings.Replace(smallScenario, "duration: 5s\n", "duration: 5s\nlesson: over-admitted\n", 1) +
		"  - {client: hammer, allowed: {min: 1}, with: {limit.key: user}}\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runArgs("check", path)
	want := path + ":18: expect[2].with.limit.key: "
	if code != exitBadInput || !strings.Contains(errOut, "ratelim: "+want) || strings.Contains(errOut, "=user") || strings.Contains(errOut, "Run 'ratelim --help'") {
		t.Errorf("exit %d, want 2 and %q with no =VALUE and no usage hint in\n%s%s", code, want, out, errOut)
	}
}
