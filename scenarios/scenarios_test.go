package scenarios

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/store"
)

func mustParse(t *testing.T, src string) *File {
	t.Helper()
	f, err := Parse("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestDefaults(t *testing.T) {
	f := mustParse(t, `duration: 30s
limit: {rate: 10/s, burst: 20}
clients:
  - {name: a, api_key: a, traffic: {pattern: constant, rate: 5/s}}
`)
	want := sim.Scenario{
		Name:     "t", // from t.yaml
		Duration: 30 * time.Second,
		Seed:     1,
		Step:     time.Second,
		Servers:  1,
		Balancer: sim.RoundRobin,
		Limit: sim.Limit{
			Algorithm: "token-bucket",
			Params:    algorithms.Params{Rate: algorithms.Rate{N: 10, Per: time.Second}, Burst: 20},
			Key:       sim.KeyAuto,
		},
		Topology: sim.Topology{
			Kind:              sim.Shared,
			Store:             "memory",
			RTT:               500 * time.Microsecond,
			OnError:           store.FailOpen,
			Clock:             sim.ServerClock,
			PrimaryStopsAfter: sim.PrimaryNeverStops,
		},
		Clients: []sim.Client{{
			Name:    "a",
			APIKey:  "a",
			Traffic: []sim.Traffic{{Pattern: sim.Constant, Rate: algorithms.Rate{N: 5, Per: time.Second}, Cost: 1}},
			Retry:   sim.Retry{Policy: sim.RetryNone},
		}},
	}
	if !reflect.DeepEqual(f.Scenario, want) {
		t.Errorf("defaults:\n got %+v\nwant %+v", f.Scenario, want)
	}
	if f.Expect != nil || f.Path != "t.yaml" || string(f.Source) == "" {
		t.Errorf("Expect %v, Path %q, Source %q", f.Expect, f.Path, f.Source)
	}
}

func TestDefaultRTTDependsOnKind(t *testing.T) {
	for kind, want := range map[string]time.Duration{
		"local":       0,
		"shared":      500 * time.Microsecond,
		"racy":        500 * time.Microsecond,
		"split-brain": 500 * time.Microsecond,
	} {
		f := mustParse(t, base+"topology: {kind: "+kind+"}\n")
		if got := f.Scenario.Topology.RTT; got != want {
			t.Errorf("%s: rtt %s, want %s", kind, got, want)
		}
	}
	if f := mustParse(t, base+"topology: {kind: local, rtt: 1ms}\n"); f.Scenario.Topology.RTT != time.Millisecond {
		t.Errorf("an explicit rtt on local was not kept: %s", f.Scenario.Topology.RTT)
	}
}

// Split-brain settings at their defaults do nothing on any topology, so
// they may stay when the kind is another (DESIGN.md's example does this).
func TestSplitBrainDefaultsAllowedElsewhere(t *testing.T) {
	f := mustParse(t, base+"topology:\n  kind: racy\n  replication_lag: 0s\n  failover_after: 0\n  primary_stops_after: never\n")
	if tp := f.Scenario.Topology; tp.Kind != sim.Racy || tp.PrimaryStopsAfter != sim.PrimaryNeverStops {
		t.Errorf("topology %+v", tp)
	}
}

func TestDefaultStepIsCutToAShortRun(t *testing.T) {
	f := mustParse(t, "duration: 500ms\nlimit: {rate: 10, burst: 1}\nclients:\n  - {name: a, ip: 10.0.0.1, traffic: {pattern: poisson, rate: 5}}\n")
	if f.Scenario.Step != 500*time.Millisecond {
		t.Errorf("step %s, want the duration", f.Scenario.Step)
	}
	if r := f.Scenario.Limit.Params.Rate; r != (algorithms.Rate{N: 10, Per: time.Second}) {
		t.Errorf("a bare rate 10 read as %v, want 10/s", r)
	}
}

func TestEverythingSet(t *testing.T) {
	f := mustParse(t, `name: full
summary: Everything set.
duration: 1m
seed: 18446744073709551615
step: 500ms
servers: 4
balancer: key-hash
limit: {algorithm: sliding-window, rate: 600/m, window: 2s, burst: 3, key: user}
topology:
  kind: split-brain
  store: redis+cluster://h1:7000,h2:7001
  rtt: 2ms
  on_error: fail-closed
  clock: store
  replication_lag: 100ms
  failover_after: 2s
  primary_stops_after: 15s
clients:
  - name: u
    user: u
    traffic: {pattern: ramp, from: 0, to: 50/s, start: 1s, stop: 50s, cost: 2}
faults:
  - {kind: partition, start: 10s, end: 20s, groups: [[0, 1], [3, 2]]}
  - {kind: latency, start: 5s, end: 25s, rtt: 50ms}
  - {kind: clock-skew, start: 0s, end: 1m, servers: [2], offset: -1.5s, drift: -0.01}
  - {kind: outage, start: 30s, end: 40s}
`)
	sc := f.Scenario
	if sc.Name != "full" || sc.Summary != "Everything set." || sc.Duration != time.Minute || sc.Seed != 1<<64-1 ||
		sc.Step != 500*time.Millisecond || sc.Servers != 4 || sc.Balancer != sim.KeyHash {
		t.Errorf("top level: %+v", sc)
	}
	wantLimit := sim.Limit{Algorithm: "sliding-window", Params: algorithms.Params{Rate: algorithms.Rate{N: 600, Per: time.Minute}, Burst: 3, Window: 2 * time.Second}, Key: sim.KeyUser}
	if sc.Limit != wantLimit {
		t.Errorf("limit %+v, want %+v", sc.Limit, wantLimit)
	}
	wantTopo := sim.Topology{Kind: sim.SplitBrain, Store: "redis+cluster://h1:7000,h2:7001", RTT: 2 * time.Millisecond, OnError: store.FailClosed,
		Clock: sim.StoreClock, ReplicationLag: 100 * time.Millisecond, FailoverAfter: 2 * time.Second, PrimaryStopsAfter: 15 * time.Second}
	if !reflect.DeepEqual(sc.Topology, wantTopo) {
		t.Errorf("topology %+v, want %+v", sc.Topology, wantTopo)
	}
	wantTraffic := sim.Traffic{Pattern: sim.Ramp, From: algorithms.Rate{N: 0, Per: time.Second}, To: algorithms.Rate{N: 50, Per: time.Second},
		Start: time.Second, Stop: 50 * time.Second, Cost: 2}
	if got := sc.Clients[0].Traffic; len(got) != 1 || !reflect.DeepEqual(got[0], wantTraffic) {
		t.Errorf("traffic %+v, want %+v", got, wantTraffic)
	}
	wantFaults := []sim.Fault{
		{Kind: sim.Partition, Start: 10 * time.Second, End: 20 * time.Second, Groups: [][]int{{0, 1}, {3, 2}}},
		{Kind: sim.Latency, Start: 5 * time.Second, End: 25 * time.Second, RTT: 50 * time.Millisecond},
		{Kind: sim.ClockSkew, End: time.Minute, Servers: []int{2}, Offset: -1500 * time.Millisecond, Drift: -0.01},
		{Kind: sim.Outage, Start: 30 * time.Second, End: 40 * time.Second},
	}
	if !reflect.DeepEqual(sc.Faults, wantFaults) {
		t.Errorf("faults\n got %+v\nwant %+v", sc.Faults, wantFaults)
	}
}

func TestCountExpands(t *testing.T) {
	f := mustParse(t, noClients+`  - name: bastion-{i}
    count: 3
    api_key: key-{i}
    user: ops
    ip: 10.0.{i}.{i}
    traffic: {pattern: constant, rate: 1/s}
  - name: solo-{i}
    ip: 10.1.1.1
    traffic: {pattern: constant, rate: 1/s}
`)
	var got []string
	for _, c := range f.Scenario.Clients {
		got = append(got, strings.Join([]string{c.Name, c.APIKey, c.User, c.IP}, " "))
	}
	want := []string{
		"bastion-1 key-1 ops 10.0.1.1",
		"bastion-2 key-2 ops 10.0.2.2",
		"bastion-3 key-3 ops 10.0.3.3",
		"solo-1   10.1.1.1", // {i} without count is 1
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("clients\n got %q\nwant %q", got, want)
	}
	// Each expanded client owns its traffic: changing one changes no other.
	cs := f.Scenario.Clients
	cs[0].Traffic[0].Cost = 99
	if cs[1].Traffic[0].Cost != 1 {
		t.Error("expanded clients share a traffic slice")
	}
}

func TestRetryForms(t *testing.T) {
	tests := []struct {
		retry string
		want  sim.Retry
	}{
		{"none", sim.Retry{Policy: sim.RetryNone}},
		{"immediate", sim.Retry{Policy: sim.RetryImmediate}},
		{"retry-after", sim.Retry{Policy: sim.RetryAfter}},
		{"backoff", sim.Retry{Policy: sim.RetryBackoff}},
		{"{policy: immediate, max: 3}", sim.Retry{Policy: sim.RetryImmediate, Max: 3}},
		{"{policy: retry-after}", sim.Retry{Policy: sim.RetryAfter}},
		{"{policy: backoff, base: 100ms, cap: 5s, max: 8}", sim.Retry{Policy: sim.RetryBackoff, Base: 100 * time.Millisecond, Cap: 5 * time.Second, Max: 8}},
		{"{policy: backoff, cap: 5s}", sim.Retry{Policy: sim.RetryBackoff, Cap: 5 * time.Second}},
	}
	for _, tt := range tests {
		f := mustParse(t, noClients+"  - {name: a, api_key: a, traffic: {pattern: constant, rate: 5/s}, retry: "+tt.retry+"}\n")
		if got := f.Scenario.Clients[0].Retry; got != tt.want {
			t.Errorf("retry: %s read as %+v, want %+v", tt.retry, got, tt.want)
		}
	}
	f := mustParse(t, base)
	if got := f.Scenario.Clients[0].Retry; got != (sim.Retry{Policy: sim.RetryNone}) {
		t.Errorf("no retry: read as %+v, want none", got)
	}
}

func TestTrafficForms(t *testing.T) {
	one := mustParse(t, noClients+"  - {name: a, api_key: a, traffic: {pattern: burst, count: 42, at: 12s, spread: 1s}}\n")
	want := []sim.Traffic{{Pattern: sim.Burst, Count: 42, At: 12 * time.Second, Spread: time.Second, Cost: 1}}
	if got := one.Scenario.Clients[0].Traffic; !reflect.DeepEqual(got, want) {
		t.Errorf("one pattern: %+v, want %+v", got, want)
	}
	list := mustParse(t, noClients+`  - name: a
    api_key: a
    traffic:
      - {pattern: constant, rate: 5/s, stop: 10s}
      - {pattern: poisson, rate: 2/s, start: 10s}
      - {pattern: on-off, rate: 100/m, on: 2s, off: 3s}
`)
	want = []sim.Traffic{
		{Pattern: sim.Constant, Rate: algorithms.Rate{N: 5, Per: time.Second}, Stop: 10 * time.Second, Cost: 1},
		{Pattern: sim.Poisson, Rate: algorithms.Rate{N: 2, Per: time.Second}, Start: 10 * time.Second, Cost: 1},
		{Pattern: sim.OnOff, Rate: algorithms.Rate{N: 100, Per: time.Minute}, On: 2 * time.Second, Off: 3 * time.Second, Cost: 1},
	}
	if got := list.Scenario.Clients[0].Traffic; !reflect.DeepEqual(got, want) {
		t.Errorf("a list:\n got %+v\nwant %+v", got, want)
	}
}

func TestAnchorsAndMerges(t *testing.T) {
	f := mustParse(t, `duration: 30s
limit: {rate: 10/s, burst: 20}
clients:
  - &web
    name: web
    api_key: web
    traffic: &steady {pattern: constant, rate: 5/s}
  - <<: *web
    name: web-2
  - name: batch
    api_key: batch
    traffic: [*steady, {pattern: burst, count: 3, at: 1s}]
`)
	cs := f.Scenario.Clients
	if len(cs) != 3 || cs[1].Name != "web-2" || cs[1].APIKey != "web" || len(cs[1].Traffic) != 1 || len(cs[2].Traffic) != 2 {
		t.Errorf("clients %+v", cs)
	}
	if !reflect.DeepEqual(cs[2].Traffic[0], cs[0].Traffic[0]) {
		t.Errorf("aliased traffic %+v differs from its anchor's %+v", cs[2].Traffic[0], cs[0].Traffic[0])
	}
}

func TestEmptyOptionalLists(t *testing.T) {
	f := mustParse(t, base+"faults:\nexpect: []\n")
	if len(f.Scenario.Faults) != 0 || len(f.Expect) != 0 {
		t.Errorf("faults %v, expect %v", f.Scenario.Faults, f.Expect)
	}
}

func TestExpectations(t *testing.T) {
	f := mustParse(t, noClients+`  - {name: "bastion-{i}", count: 2, api_key: "b{i}", traffic: {pattern: constant, rate: 1/s}}
  - {name: scheduler, api_key: s, traffic: {pattern: constant, rate: 1/s}}
expect:
  - {client: scheduler, rejected: {max: 0}}
  - {client: "bastion-*", allowed_rate: {max: 11/s}}
  - {client: bastion-1, allowed_rate: {min: 60/m, max: 2}}
  - {key: "b*", allowed: {equals: 30}, during: {from: 5s, to: 10s}}
  - {client: scheduler, p99_ms: {max: 0.5}, with: {on_error: fail-closed, seed: 0x10, servers: 2}}
`)
	one := func(x float64) *float64 { return &x }
	want := []Expectation{
		{Line: 8, Text: "scheduler rejected <= 0", Client: "scheduler", Figure: "rejected", Max: one(0)},
		{Line: 9, Index: 1, Text: "bastion-* allowed_rate <= 11/s", Client: "bastion-*", Figure: "allowed_rate", Max: one(11)},
		{Line: 10, Index: 2, Text: "bastion-1 allowed_rate >= 1/s and <= 2/s", Client: "bastion-1", Figure: "allowed_rate", Min: one(1), Max: one(2)},
		{Line: 11, Index: 3, Text: "key b* allowed == 30 during 5s-10s", Key: "b*", Figure: "allowed", Equals: one(30), During: &Span{From: 5 * time.Second, To: 10 * time.Second}},
		{Line: 12, Index: 4, Text: "scheduler p99_ms <= 0.5 with on_error=fail-closed, seed=16, servers=2", Client: "scheduler", Figure: "p99_ms", Max: one(0.5),
			With: map[string]string{"on_error": "fail-closed", "seed": "16", "servers": "2"}},
	}
	if !reflect.DeepEqual(f.Expect, want) {
		for i := range max(len(f.Expect), len(want)) {
			var g, w Expectation
			if i < len(f.Expect) {
				g = f.Expect[i]
			}
			if i < len(want) {
				w = want[i]
			}
			if !reflect.DeepEqual(g, w) {
				t.Errorf("expect[%d]\n got %s\nwant %s", i, show(g), show(w))
			}
		}
	}
}

func show(e Expectation) string {
	s := func(p *float64) string {
		if p == nil {
			return "nil"
		}
		return fmt.Sprint(*p)
	}
	return fmt.Sprintf("line %d %q client %q key %q figure %s min %s max %s equals %s during %+v with %v",
		e.Line, e.Text, e.Client, e.Key, e.Figure, s(e.Min), s(e.Max), s(e.Equals), e.During, e.With)
}

func TestLoadAndOpen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mine.yaml")
	if err := os.WriteFile(path, []byte(base), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil || f.Path != path || f.Scenario.Name != "t" {
		t.Fatalf("Open(%s) = %+v, %v", path, f, err)
	}

	missing := filepath.Join(dir, "nope.yaml")
	_, err = Open(missing)
	if !errors.Is(err, fs.ErrNotExist) || err.Error() != "open "+missing+": no such file or directory" {
		t.Errorf("Open of a missing file: %v", err)
	}

	_, err = Open("no-such-scenario")
	var e *Error
	if !errors.As(err, &e) || !strings.Contains(err.Error(), `unknown scenario "no-such-scenario"`) || !strings.Contains(err.Error(), strings.Join(Builtin(), ", ")) {
		t.Errorf("Open of an unknown name: %v, want an *Error listing %v", err, Builtin())
	}

	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: t\nduration: 1s\nservers: 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(bad); err == nil || !strings.HasPrefix(err.Error(), bad+":3: servers: ") {
		t.Errorf("Load(%s): %v", bad, err)
	}
}

func TestBuiltins(t *testing.T) {
	names := Builtin()
	if len(names) < 7 {
		t.Fatalf("built-ins %v, want at least the seven of the design", names)
	}
	for _, want := range []string{"runaway-healthcheck", "rack-drain", "window-boundary", "partition", "store-outage", "retry-storm", "nat"} {
		found := false
		for _, n := range names {
			found = found || n == want
		}
		if !found {
			t.Errorf("no built-in %s", want)
		}
	}
	for i, name := range names {
		if i > 0 && names[i-1] >= name {
			t.Errorf("Builtin() is not sorted: %v", names)
		}
		f, err := Open(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		sc := f.Scenario
		if sc.Name != name {
			t.Errorf("%s.yaml is named %q", name, sc.Name)
		}
		if sc.Summary == "" || utf8.RuneCountInString(sc.Summary) > 58 {
			t.Errorf("%s: summary %q, want one line of at most 58 characters (the list prints it beside the name)", name, sc.Summary)
		}
		if len(f.Expect) < 2 {
			t.Errorf("%s: %d expectations, want at least 2", name, len(f.Expect))
		}
		if f.Path != "" {
			t.Errorf("%s: Path %q, want empty for a built-in", name, f.Path)
		}
		raw, _ := builtinFS.ReadFile("builtin/" + name + ".yaml")
		if string(f.Source) != string(raw) {
			t.Errorf("%s: Source is not the embedded file", name)
		}
		if !strings.HasPrefix(string(raw), "# "+name+": ") {
			t.Errorf("%s.yaml does not open with a comment saying what it is", name)
		}
		if n := sim.Estimate(sc); n > 2_000_000 {
			t.Errorf("%s: about %d requests, want under 2 million", name, n)
		}
	}
}

// The example of the format in DESIGN.md must load as it is.
func TestDesignExample(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "shared", "DESIGN.md"))
	if err != nil {
		doc, err = os.ReadFile(filepath.Join("..", "DESIGN.md"))
	}
	if err != nil {
		t.Skip("DESIGN.md is not beside the module")
	}
	_, rest, ok := strings.Cut(string(doc), "```yaml\n")
	example, _, _ := strings.Cut(rest, "```")
	if !ok {
		t.Fatal("DESIGN.md has no yaml example")
	}
	f, err := Parse("design.yaml", []byte(example))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(f.Scenario.Clients); n != 9 || len(f.Scenario.Faults) != 2 || len(f.Expect) != 2 {
		t.Errorf("%d clients, %d faults, %d expectations; want 9, 2 and 2", n, len(f.Scenario.Faults), len(f.Expect))
	}
}

// A misspelt built-in's name is answered with the closest one; a name
// nothing is close to, with the list alone.
func TestUnknownScenarioSuggests(t *testing.T) {
	for _, tt := range []struct{ name, want, not string }{
		{"partiton", `did you mean "partition"?`, ""},
		{"store_outage", `did you mean "store-outage"?`, ""},
		{"zzz", "want a file, or one of api-quotas", "did you mean"},
	} {
		_, err := Open(tt.name)
		if err == nil || !strings.Contains(err.Error(), tt.want) || (tt.not != "" && strings.Contains(err.Error(), tt.not)) {
			t.Errorf("Open(%q): %v, want it to say %q", tt.name, err, tt.want)
		}
	}
	if msg := UnknownBuiltin("nta"); !strings.Contains(msg, `did you mean "nat"?`) {
		t.Errorf("UnknownBuiltin(nta) = %q, want a suggestion of nat", msg)
	}
}
