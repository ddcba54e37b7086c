package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ratelim/ratelim/scenarios"
)

// partitionFault is "(line N)" with the line of the partition built-in's
// fault (its groups, in flow style), as the errors about them give it:
// derived from the file, as scenarios/with_test.go does, so that a line
// the file gains above it (a question:) moves it.
var partitionFault = func() string {
	f, err := scenarios.Open("partition")
	if err != nil {
		panic(err)
	}
	at := strings.Index(string(f.Source), "{kind: partition")
	return fmt.Sprintf("(line %d)", 1+strings.Count(string(f.Source[:max(at, 0)]), "\n"))
}()

// noExpect is smallScenario without its expect: lines, which hold for the
// file as written (a run changed by flags skips them).
var noExpect, _, _ = strings.Cut(smallScenario, "expect:\n")

// A flag that sets a field gives the output that editing the file gives,
// byte for byte.
func TestSimSetEqualsEditingTheFile(t *testing.T) {
	for _, tc := range []struct {
		flags []string
		edits []string // old, new, ...
	}{
		{[]string{"--set", "limit.burst=7"}, []string{"burst: 20}", "burst: 7}"}},
		{[]string{"--burst", "7"}, []string{"burst: 20}", "burst: 7}"}},
		{[]string{"--rate", "3/s"}, []string{"rate: 10/s", "rate: 3/s"}},
		{[]string{"--set", "clients[polite].traffic.rate=50/s"}, []string{"rate: 5/s}", "rate: 50/s}"}},
		{[]string{"--set", "clients[1].traffic={pattern: burst, count: 30, at: 1s}"}, []string{"{pattern: constant, rate: 5/s}", "{pattern: burst, count: 30, at: 1s}"}},
		{[]string{"--set", "topology.rtt=2ms", "--set", "limit.algorithm=gcra"}, []string{"topology: {kind: shared}", "topology: {kind: shared, rtt: 2ms}", "algorithm: token-bucket", "algorithm: gcra"}},
	} {
		edited := noExpect
		for i := 0; i < len(tc.edits); i += 2 {
			next := strings.Replace(edited, tc.edits[i], tc.edits[i+1], 1)
			if next == edited {
				t.Fatalf("%v: no line %q to edit", tc.flags, tc.edits[i])
			}
			edited = next
		}
		for _, format := range []string{"json", "table"} {
			code, set, errOut := runArgs(append([]string{"sim", writeScenario(t, "small.yaml", noExpect), "--format", format}, tc.flags...)...)
			if code != 0 {
				t.Fatalf("%v: exit %d: %s", tc.flags, code, errOut)
			}
			code, want, errOut := runArgs("sim", writeScenario(t, "small.yaml", edited), "--format", format)
			if code != 0 {
				t.Fatalf("the edited file: exit %d: %s", code, errOut)
			}
			if set != want {
				t.Errorf("sim %v --format %s differs from the edited file's:\n%s\nwant\n%s", tc.flags, format, set, want)
			}
		}
	}
}

// Every flag that sets a field is refused with the message the file gives
// for the same value, the flag named where the file names its line and
// field.
func TestSetFlagsGiveTheFilesMessage(t *testing.T) {
	for _, tc := range []struct {
		flags      []string
		flag       string // as the message names it
		line, edit string
		field      string // as the file's message names it
	}{
		{[]string{"--rate", "0/s"}, "--rate", "rate: 10/s", "rate: 0/s", "limit.rate"},
		{[]string{"--burst", "x"}, "--burst", "burst: 20}", "burst: x}", "limit.burst"},
		{[]string{"--window", "1.5us"}, "--window", "burst: 20}", "burst: 20, window: 1.5us}", "limit.window"},
		{[]string{"--set", "limit.burst=0"}, "--set limit.burst", "burst: 20}", "burst: 0}", "limit.burst"},
		{[]string{"--vs", "limit.rate=abc"}, "--vs limit.rate", "rate: 10/s", "rate: abc", "limit.rate"},
		{[]string{"--vs", "burst=-1"}, "--vs burst", "burst: 20}", "burst: -1}", "limit.burst"},
		{[]string{"--set", "clients[hammer].traffic.rate=fast"}, "--set clients[hammer].traffic.rate", "rate: 100/s}", "rate: fast}", "clients[0].traffic.rate"},
		{[]string{"--set", "clients[0].count=0"}, "--set clients[0].count", "api_key: h\n", "api_key: h\n    count: 0\n", "clients[0].count"},
		{[]string{"--servers", "abc"}, "--servers", "servers: 2", "servers: abc", "servers"},
		{[]string{"--servers", "2000"}, "--servers", "servers: 2", "servers: 2000", "servers"},
		{[]string{"--seed", "x"}, "--seed", "servers: 2", "servers: 2\nseed: x", "seed"},
		{[]string{"--seed", "-1"}, "--seed", "servers: 2", "servers: 2\nseed: -1", "seed"},
	} {
		edited := strings.Replace(noExpect, tc.line, tc.edit, 1)
		if edited == noExpect {
			t.Fatalf("%v: no line %q to edit", tc.flags, tc.line)
		}
		_, ferr := scenarios.Parse("small.yaml", []byte(edited))
		var fe *scenarios.Error
		if !errors.As(ferr, &fe) || fe.Field != tc.field {
			t.Fatalf("%v: the edited file gives %v, want an error of %s", tc.flags, ferr, tc.field)
		}
		code, _, errOut := runArgs(append([]string{"sim", writeScenario(t, "small.yaml", noExpect)}, tc.flags...)...)
		want := "ratelim: " + tc.flag + ": " + fe.Msg + "\n"
		if code != exitBadInput || !strings.HasPrefix(errOut, want) {
			t.Errorf("%v: exit %d, %q\nwant exit 2 and %q", tc.flags, code, errOut, want)
		}
	}
}

// A --vs run's labels and changed name the values each run used, whatever
// flag set them: the limit a --set gave, an entry named by its index.
func TestVersusLabelsNameWhatRan(t *testing.T) {
	path := writeScenario(t, "small.yaml", noExpect)
	for _, tc := range []struct {
		flags  []string
		labels [2]string
	}{
		{[]string{"--set", "limit={algorithm: token-bucket, rate: 10/s, burst: 3}", "--vs", "burst=4"}, [2]string{"burst=3", "burst=4"}},
		{[]string{"--set", "clients[hammer].traffic={pattern: constant, rate: 1/s}", "--vs", "clients[0].traffic.rate=2/s"}, [2]string{"clients[0].traffic.rate=1/s", "clients[0].traffic.rate=2/s"}},
	} {
		code, out, errOut := runArgs(append([]string{"sim", path, "--format", "json"}, tc.flags...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.flags, code, errOut)
		}
		var got versusJSON
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		if got.Labels != tc.labels {
			t.Errorf("%v: labels %q, want %q", tc.flags, got.Labels, tc.labels)
		}
	}
}

// compare sets each cell's algorithm and topology: a --set or --vs of
// either would change nothing, and is refused.
func TestCompareRefusesTheMatrixFields(t *testing.T) {
	for _, tc := range []struct{ args, want string }{
		{"--vs algorithm=gcra", "--vs algorithm: compare's matrix sets it (want --algorithms)"},
		{"--vs limit.algorithm=gcra", "--vs limit.algorithm: compare's matrix sets it (want --algorithms)"},
		{"--set limit.algorithm=gcra", "--set limit.algorithm: compare's matrix sets it (want --algorithms)"},
		{"--vs topology.kind=local", "--vs topology.kind: compare's matrix sets it (want --topologies)"},
		{"--vs topology=local", "--vs topology: compare's matrix sets it (want --topologies)"},
		{"--set topology.kind=local", "--set topology.kind: compare's matrix sets it (want --topologies)"},
	} {
		code, _, errOut := runArgs(append([]string{"compare", "nat", "--format", "json"}, strings.Fields(tc.args)...)...)
		if code != exitBadInput || !strings.HasPrefix(errOut, "ratelim: "+tc.want) {
			t.Errorf("compare nat %s: exit %d, %q; want %s", tc.args, code, errOut, tc.want)
		}
	}
	code, _, errOut := runArgs("compare", "api-quotas", "--format", "json", "--set", "limits[per-second].algorithm=gcra")
	if want := "ratelim: --set limits[per-second].algorithm: compare's matrix sets it (want --algorithms)"; code != exitBadInput || !strings.HasPrefix(errOut, want) {
		t.Errorf("compare api-quotas --set limits[per-second].algorithm=gcra: exit %d, %q; want %s", code, errOut, want)
	}
	// A whole limit that names an algorithm sets it too.
	for _, args := range [][]string{
		{"compare", "nat", "--format", "json", "--vs", "limit={algorithm: gcra, rate: 10/s, burst: 20}"},
		{"compare", "api-quotas", "--format", "json", "--set", "limits[0]={name: per-second, algorithm: gcra, rate: 10/s, burst: 20}"},
	} {
		flag, _, _ := strings.Cut(args[4]+" "+args[5], "=")
		want := "ratelim: " + flag + ": compare's matrix sets the algorithm (want the mapping without algorithm:, and --algorithms)"
		if code, _, errOut := runArgs(args...); code != exitBadInput || !strings.HasPrefix(errOut, want) {
			t.Errorf("%v: exit %d, %q; want %s", args, code, errOut, want)
		}
	}
}

// A --vs's output and the help of the commands that take settings fit 80
// columns: a label is the settings as typed, wrapped on lines of its own.
func TestVersusAndHelpFit80Columns(t *testing.T) {
	retry := "clients[drain-rack-2].retry={policy: backoff, base: 200ms, cap: 5s, max: 10}"
	for _, args := range [][]string{
		{"sim", "rack-drain", "--vs", retry},
		{"compare", "rack-drain", "--algorithms", "gcra", "--topologies", "local", "--vs", retry},
		{"--help"}, {"sim", "--help"}, {"sweep", "--help"}, {"replay", "--help"},
		{"report", "--help"}, {"compare", "--help"}, {"serve", "--help"},
		{"load", "--help"}, {"check", "--help"}, {"probe", "--help"},
		{"algorithms", "--help"}, {"scenarios", "--help"}, {"version", "--help"},
		{"web", "--help"},
	} {
		code, out, errOut := runArgs(args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		for i, line := range strings.Split(out, "\n") {
			if n := utf8.RuneCountInString(line); n > 80 {
				t.Errorf("%v: line %d is %d columns: %q", args, i+1, n, line)
			}
		}
	}
}

// --servers, --seed, --balancer and --wall-clock set the file's field in
// its tree: a partition's groups are read against the servers given, and
// a change to both goes together.
func TestServersSetInTheTree(t *testing.T) {
	code, _, errOut := runArgs("sim", "partition", "--servers", "3")
	if want := "ratelim: --servers 3: faults[0].groups[1][1] " + partitionFault + ": server 3 does not exist (want 0 to 2: servers are numbered from 0)"; code != exitBadInput || !strings.HasPrefix(errOut, want) {
		t.Errorf("sim partition --servers 3: exit %d, %q; want %s", code, errOut, want)
	}
	code, _, errOut = runArgs("sim", "partition", "--servers", "3", "--set", "faults[0].groups=[[0],[1,2]]", "-q")
	if code != 0 {
		t.Errorf("sim partition --servers 3 with groups for 3: exit %d: %s", code, errOut)
	}
}
