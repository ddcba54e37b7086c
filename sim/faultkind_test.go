package sim

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestFaultKindsAreComplete: every registered fault kind has a constant
// with a doc comment, a field list (empty, not nil, for none), fields
// that Check knows how to find on a Fault and that say what a missing
// one is, a span detail, a log detail and a banner: a new kind cannot
// forget one. Kinds are registered once each.
func TestFaultKindsAreComplete(t *testing.T) {
	docs := kindConstantDocs(t)
	known := map[string]bool{}
	for _, f := range faultFieldSet {
		known[f.name] = true
	}
	seen := map[FaultKind]bool{}
	for _, ft := range faultTypes {
		t.Run(string(ft.Kind), func(t *testing.T) {
			if seen[ft.Kind] {
				t.Fatalf("registered twice")
			}
			seen[ft.Kind] = true
			if docs[ft.Kind] == "" {
				t.Errorf("no constant of type FaultKind with a doc comment is %q", ft.Kind)
			}
			if ft.Fields == nil {
				t.Errorf("no field list (want an empty one for a kind that reads none)")
			}
			for _, f := range ft.Fields {
				if !known[f.Name] {
					t.Errorf("field %q is not in faultFieldSet: Check could not refuse it on another kind", f.Name)
				}
				if f.Required && (f.Missing == "" || f.Example == "") {
					t.Errorf("required field %q does not say what it is and how it is written (Missing, Example)", f.Name)
				}
			}
			for _, name := range ft.AnyOf {
				if !ft.reads(name) {
					t.Errorf("AnyOf names %q, a field the kind does not read", name)
				}
			}
			if len(ft.AnyOf) > 0 && ft.AnyOfWant == "" {
				t.Errorf("AnyOf without AnyOfWant")
			}
			if ft.span == nil || ft.log == nil {
				t.Fatalf("no span detail or no log detail")
			}
			f, sc := sampleFault(ft.Kind), faultScenario()
			if err := f.Check("", sc.Servers, NodeNames(sc)); err != nil {
				t.Fatalf("the sample fault: %v", err)
			}
			if ft.banner == nil || ft.banner(sc, f, f.Start) == "" {
				t.Fatalf("no banner")
			}
			// A run with the fault in it: its start and end, its log.
			sc.Faults = []Fault{f}
			r, err := Run(t.Context(), sc, Options{})
			if err != nil {
				t.Fatalf("a run with it: %v", err)
			}
			if len(r.Faults) != 1 || r.Faults[0] != SpanOf(f) {
				t.Errorf("the Result's faults %+v, want %+v", r.Faults, SpanOf(f))
			}
		})
	}
}

// kindConstantDocs are the doc comments of the package's constants of
// type FaultKind, by value.
func kindConstantDocs(t *testing.T) map[FaultKind]string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	out := map[FaultKind]string{}
	fset := token.NewFileSet()
	for _, name := range files {
		file, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range file.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "FaultKind" || len(vs.Values) != 1 {
					continue
				}
				lit, ok := vs.Values[0].(*ast.BasicLit)
				if !ok {
					continue
				}
				value, _ := strconv.Unquote(lit.Value)
				doc := vs.Doc
				if doc == nil && len(gd.Specs) == 1 {
					doc = gd.Doc
				}
				out[FaultKind(value)] = doc.Text()
			}
		}
	}
	return out
}

// faultScenario is four servers on a split brain, 4 s of a client
// hammering a token bucket.
func faultScenario() Scenario {
	sc := hammer(SplitBrain, 4, RoundRobin)
	sc.Duration = 4 * time.Second
	return sc
}

// sampleFault is a fault of kind that a fleet of four runs, from 1s to 3s.
func sampleFault(kind FaultKind) Fault {
	f := Fault{Kind: kind, Start: time.Second, End: 3 * time.Second}
	ft := typeOf(kind)
	for _, field := range ft.Fields {
		switch field.Name {
		case "groups":
			f.Groups = [][]int{{0, 1}, {2, 3}}
		case "rtt":
			f.RTT = 20 * time.Millisecond
		case "servers":
			f.Servers = []int{1}
		case "offset":
			f.Offset = time.Second
		case "drift":
			f.Drift = 0.01
		}
	}
	return f
}

// TestFaultCheck: the one check of a fault, by kind, as the scenario
// decoder, Scenario.check and the live fleet's control listener (which
// passes no path) see it; the cases of the control listener's refusals
// among them.
func TestFaultCheck(t *testing.T) {
	const sec = time.Second
	for _, tt := range []struct {
		name  string
		fault Fault
		at    string
		want  string // "" for none
	}{
		{"unknown kind", Fault{Kind: "earthquake"}, "faults[0]", `faults[0].kind: unknown fault kind "earthquake" (want partition, outage, latency, clock-skew or crash)`},

		{"partition", Fault{Kind: Partition, Groups: [][]int{{0, 1}, {2, 3}}}, "", ""},
		{"partition of three", Fault{Kind: Partition, Groups: [][]int{{0}, {1, 2}, {3}}}, "", ""},
		{"partition without groups", Fault{Kind: Partition}, "", "groups: 0 group is no partition (want at least two groups, e.g. [[0, 1], [2, 3]])"},
		{"partition of one group", Fault{Kind: Partition, Groups: [][]int{{0, 1, 2, 3}}}, "", "groups: 1 group is no partition (want at least two groups, e.g. [[0, 1], [2, 3]])"},
		{"partition, no such server", Fault{Kind: Partition, Groups: [][]int{{0, 1}, {2, 99}}}, "", "groups[1][1]: server 99 does not exist (want 0 to 3: servers are numbered from 0)"},
		{"partition, negative server", Fault{Kind: Partition, Groups: [][]int{{0, -1}, {2, 3}}}, "", "groups[0][1]: server -1 does not exist (want 0 to 3: servers are numbered from 0)"},
		{"partition, server in two groups", Fault{Kind: Partition, Groups: [][]int{{0, 1}, {1, 2, 3}}}, "faults[0]", "faults[0].groups[1][0]: server 1 is already in faults[0].groups[0] (want each server in one group only)"},
		{"partition, server twice in a group", Fault{Kind: Partition, Groups: [][]int{{0, 0}, {1, 2, 3}}}, "", "groups[0][1]: server 0 is listed twice (want each server once)"},
		{"partition, empty group", Fault{Kind: Partition, Groups: [][]int{{0, 1, 2, 3}, {}}}, "", "groups[1]: empty group (want at least one server, e.g. [0], or store nodes on its side in nodes)"},
		{"partition with nodes", Fault{Kind: Partition, Groups: [][]int{{0, 1}, {2, 3}, {}}, Nodes: [][]string{{"s0-master"}, {"s1-master", "s0-replica"}, {"s1-replica"}}}, "", ""},
		{"partition, unknown node", Fault{Kind: Partition, Groups: [][]int{{0, 1}, {2, 3}}, Nodes: [][]string{{"s0-master"}, {"s9-master"}}}, "", `nodes[1][0]: no store node is called "s9-master" (want s0-master, s0-replica, s1-master or s1-replica)`},
		{"partition, node twice", Fault{Kind: Partition, Groups: [][]int{{0, 1}, {2, 3}}, Nodes: [][]string{{"s0-master"}, {"s0-master"}}}, "faults[0]", "faults[0].nodes[1][0]: s0-master is already in faults[0].nodes[0][0] (want each node on one side only)"},
		{"partition, more sides of nodes than groups", Fault{Kind: Partition, Groups: [][]int{{0, 1}, {2, 3}}, Nodes: [][]string{{}, {}, {"s0-master"}}}, "", "nodes: 3 sides of nodes for 2 groups of servers (want a list of nodes per group, in the groups' order)"},
		{"partition, a server in no group", Fault{Kind: Partition, Groups: [][]int{{0, 1}, {2}}}, "", "groups: server 3 is in no group (want every server from 0 to 3 in exactly one group)"},
		{"partition, servers in no group", Fault{Kind: Partition, Groups: [][]int{{0}, {1}}}, "", "groups: servers 2 and 3 are in no group (want every server from 0 to 3 in exactly one group)"},
		{"partition, a run of servers in no group", Fault{Kind: Partition, Groups: [][]int{{0}, {}}, Nodes: [][]string{nil, {"s0-master"}}}, "", "groups: servers 1–3 are in no group (want every server from 0 to 3 in exactly one group)"},
		{"partition with servers", Fault{Kind: Partition, Groups: [][]int{{0, 1}, {2, 3}}, Servers: []int{1}}, "", "servers: not a field of fault kind partition (want start, end, groups, nodes)"},

		{"outage", Fault{Kind: Outage, Start: sec, End: 2 * sec}, "", ""},
		{"outage with servers", Fault{Kind: Outage, Servers: []int{4}}, "", "servers: not a field of fault kind outage (want start, end, region)"},
		{"outage with groups", Fault{Kind: Outage, Groups: [][]int{{9}}}, "", "groups: not a field of fault kind outage (want start, end, region)"},
		{"outage with rtt", Fault{Kind: Outage, RTT: sec}, "faults[2]", "faults[2].rtt: not a field of fault kind outage (want start, end, region)"},

		{"latency", Fault{Kind: Latency, RTT: 50 * time.Millisecond}, "", ""},
		{"latency of 0", Fault{Kind: Latency}, "", ""},
		{"latency, negative", Fault{Kind: Latency, RTT: -sec}, "", "rtt: -1s is negative (want 0 or more, e.g. 50ms)"},
		{"latency with drift", Fault{Kind: Latency, Drift: 0.5}, "", "drift: not a field of fault kind latency (want start, end, rtt)"},

		{"clock skew of all", Fault{Kind: ClockSkew, Offset: 2 * sec}, "", ""},
		{"clock skew of one", Fault{Kind: ClockSkew, Servers: []int{3}, Drift: -1}, "", ""},
		{"clock skew, no such server", Fault{Kind: ClockSkew, Servers: []int{4}, Offset: sec}, "", "servers[0]: server 4 does not exist (want 0 to 3: servers are numbered from 0)"},
		{"clock skew, server twice", Fault{Kind: ClockSkew, Servers: []int{1, 1}, Offset: sec}, "", "servers[1]: server 1 is listed twice (want each server once)"},
		{"clock skew a day ahead", Fault{Kind: ClockSkew, Offset: 24 * time.Hour}, "", ""},
		{"clock skew past a day", Fault{Kind: ClockSkew, Offset: 25 * time.Hour}, "", "offset: 25h0m0s is more than a day (want at most 24h0m0s either way)"},
		{"clock skew past a day behind", Fault{Kind: ClockSkew, Offset: -25 * time.Hour}, "", "offset: -25h0m0s is more than a day (want at most 24h0m0s either way)"},
		{"clock skew, drift past 1", Fault{Kind: ClockSkew, Drift: 1.5}, "", "drift: 1.5 is more than a second per second (want -1 to 1, e.g. 0.01 for 1% fast)"},
		{"clock skew, drift past -1", Fault{Kind: ClockSkew, Drift: -2}, "", "drift: -2 is more than a second per second (want -1 to 1, e.g. 0.01 for 1% fast)"},
		{"clock skew with groups", Fault{Kind: ClockSkew, Offset: sec, Groups: [][]int{{0}}}, "", "groups: not a field of fault kind clock-skew (want start, end, servers, offset, drift)"},

		{"crash", Fault{Kind: Crash, Servers: []int{3}}, "", ""},
		{"crash of three", Fault{Kind: Crash, Servers: []int{0, 1, 2}}, "", ""},
		{"crash without servers", Fault{Kind: Crash}, "", "servers: empty (want the servers that crash, e.g. [1])"},
		{"crash, no such server", Fault{Kind: Crash, Servers: []int{99}}, "", "servers[0]: server 99 does not exist (want 0 to 3: servers are numbered from 0)"},
		{"crash, negative server", Fault{Kind: Crash, Servers: []int{-1}}, "", "servers[0]: server -1 does not exist (want 0 to 3: servers are numbered from 0)"},
		{"crash, server twice", Fault{Kind: Crash, Servers: []int{1, 1}}, "", "servers[1]: server 1 is listed twice (want each server once)"},
		{"crash of every server", Fault{Kind: Crash, Servers: []int{0, 1, 2, 3}}, "faults[1]", "faults[1].servers: every server crashes, and no one is left to serve (want fewer than the 4 servers)"},
		{"crash with offset", Fault{Kind: Crash, Servers: []int{1}, Offset: sec}, "", "offset: not a field of fault kind crash (want start, end, servers)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.fault.Check(tt.at, 4, []string{"s0-master", "s0-replica", "s1-master", "s1-replica"})
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("Check(%q, 4):\n got %q\nwant %q", tt.at, got, tt.want)
			}
		})
	}
}

// TestScenarioChecksFaults: Scenario.check refuses a fault as Fault.Check
// does, naming it by its place in Faults.
func TestScenarioChecksFaults(t *testing.T) {
	sc := faultScenario()
	sc.Faults = []Fault{sampleFault(Outage), {Kind: Partition, Start: time.Second, End: 2 * time.Second, Groups: [][]int{{0, 1}, {2}}}}
	want := "faults[1].groups: server 3 is in no group (want every server from 0 to 3 in exactly one group)"
	if err := sc.check(); err == nil || err.Error() != want {
		t.Errorf("check() = %v, want %q", err, want)
	}
}
