package scenarios

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
	"pgregory.net/rapid"
)

// setBase is a small scenario whose lines the table below edits, to get
// the file's own message for the value a setting gives.
const setBase = `name: set-base
duration: 10s
servers: 2
limit:
  algorithm: token-bucket
  rate: 10/s
  burst: 20
clients:
  - name: web
    api_key: web
    traffic: {pattern: constant, rate: 5/s}
  - name: batch-{i}
    api_key: batch
    count: 2
    traffic: {pattern: constant, rate: 50/s}
faults:
  - kind: latency
    start: 2s
    end: 4s
    rtt: 5ms
`

// TestApplyGivesTheFilesMessage sets a field from outside the file and
// checks the error is the one the file gives for the same value written
// in it, with the setting's flag in place of the file, line and field.
func TestApplyGivesTheFilesMessage(t *testing.T) {
	base, err := Parse("set-base.yaml", []byte(setBase))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		set        Setting
		line, edit string // the file's line, and what it becomes
		field      string // the field the file's error names
	}{
		{Setting{"rate", "0/s", "--rate"}, "  rate: 10/s", "  rate: 0/s", "limit.rate"},
		{Setting{"burst", "x", "--burst"}, "  burst: 20", "  burst: x", "limit.burst"},
		{Setting{"limit.burst", "0", "--set limit.burst"}, "  burst: 20", "  burst: 0", "limit.burst"},
		{Setting{"limit.rate", "abc", "--vs limit.rate"}, "  rate: 10/s", "  rate: abc", "limit.rate"},
		{Setting{"limit.burst", "-1", "with.limit.burst"}, "  burst: 20", "  burst: -1", "limit.burst"},
		{Setting{"window", "1.5ns", "--window"}, "  burst: 20", "  burst: 20\n  window: 1.5ns", "limit.window"},
		{Setting{"clients[web].traffic.rate", "fast", "sweep clients[web].traffic.rate"}, "{pattern: constant, rate: 5/s}", "{pattern: constant, rate: fast}", "clients[0].traffic.rate"},
		{Setting{"clients[1].count", "0", "--set clients[1].count"}, "    count: 2", "    count: 0", "clients[1].count"},
		{Setting{"faults[0].rtt", "2m", "--set faults[0].rtt"}, "    rtt: 5ms", "    rtt: 2m", "faults[0].rtt"},
	} {
		_, err := Apply(base, []Setting{tc.set})
		var got *Error
		if !errors.As(err, &got) {
			t.Errorf("%s %s: error %v, want an *Error", tc.set.Flag, tc.set.Value, err)
			continue
		}
		edited := strings.Replace(setBase, tc.line, tc.edit, 1)
		if edited == setBase {
			t.Fatalf("%s: no line %q to edit", tc.set.Flag, tc.line)
		}
		_, ferr := Parse("set-base.yaml", []byte(edited))
		var file *Error
		if !errors.As(ferr, &file) {
			t.Fatalf("%s: the edited file gives %v, want an *Error", tc.set.Flag, ferr)
		}
		if file.Field != tc.field {
			t.Errorf("%s: the file blames %q, want %q (%v)", tc.set.Flag, file.Field, tc.field, ferr)
		}
		want := &Error{Field: tc.set.Flag, Msg: file.Msg}
		if *got != *want {
			t.Errorf("%s %s:\n got %v\nwant %v", tc.set.Flag, tc.set.Value, got, want)
		}
	}
}

// TestApplyRefusals: what Apply refuses that no file could say, each
// naming the flag, with what to write instead.
func TestApplyRefusals(t *testing.T) {
	base, err := Parse("set-base.yaml", []byte(setBase))
	if err != nil {
		t.Fatal(err)
	}
	quotas, err := Open("api-quotas")
	if err != nil {
		t.Fatal(err)
	}
	partition, err := Open("partition")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		f    *File
		sets []Setting
		want string
	}{
		{base, []Setting{{"limit.brust", "5", "--set limit.brust"}},
			`--set limit.brust: unknown field, did you mean "burst"? (want name, algorithm, rate, burst, window, key, delay, nodelay, shadow, max_in_flight or lease_ttl)`},
		{base, []Setting{{"topology.failover_afer", "5s", "--vs topology.failover_afer"}},
			`--vs topology.failover_afer: unknown field, did you mean "failover_after"?`},
		{base, []Setting{{"clients[web].trafic.rate", "5/s", "--set clients[web].trafic.rate"}},
			`--set clients[web].trafic.rate: clients[web].trafic: unknown field, did you mean "traffic"?`},
		{base, []Setting{{"clients[3].count", "5", "--set clients[3].count"}},
			`--set clients[3].count: clients[3] is out of range: the file has 2 (want clients[0] to clients[1], as written, before count: expands them)`},
		{base, []Setting{{"clients[wbe].count", "5", "--set clients[wbe].count"}},
			`--set clients[wbe].count: clients: unknown name "wbe", did you mean "web"? (want web or batch-{i})`},
		{base, []Setting{{"faults[latency].rtt", "5ms", "--set faults[latency].rtt"}},
			`--set faults[latency].rtt: faults[latency]: its entries have no name (want an index, e.g. faults[0])`},
		{quotas, []Setting{{"limits[nope].rate", "5/s", "--set limits[nope].rate"}},
			`--set limits[nope].rate: limits: unknown name "nope" (want per-second or hourly)`},
		{quotas, []Setting{{"rate", "5/s", "--rate"}},
			`--rate: this file has limits:, not limit: (want limits[NAME].rate, NAME one of per-second or hourly)`},
		{base, []Setting{{"clients[web].traffic", "{pattern: constant, rate: 5/s", "--set clients[web].traffic"}},
			`--set clients[web].traffic: "{pattern: constant, rate: 5/s" is not a YAML value`},
		// A setting that breaks another field names both, and the line.
		{partition, []Setting{{"burst", "30", "--burst"}, {"faults[0].start", "25s", "--set faults[0].start"}},
			`--set faults[0].start=25s: faults[0].end (line `},
	} {
		_, err := Apply(tc.f, tc.sets)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%v:\n got %v\nwant %s…", tc.sets, err, tc.want)
		}
	}
	if err := CheckSettingName("limit.brust"); err == nil || !strings.Contains(err.Error(), `did you mean "burst"?`) {
		t.Errorf("CheckSettingName(limit.brust) = %v, want did you mean burst", err)
	}
	for _, ok := range []string{"rate", "burst", "window", "on_error", "on-error", "servers", "limits[hourly].rate", "limits[1].rate", "clients[web].traffic[1].rate", "topology.failover-after", "faults[0].groups"} {
		if err := CheckSettingName(ok); err != nil {
			t.Errorf("CheckSettingName(%s) = %v, want nil", ok, err)
		}
	}
}

// TestApplyEqualsEditingTheFile: a setting gives the scenario the file
// gives with the value written in it.
func TestApplyEqualsEditingTheFile(t *testing.T) {
	base, err := Parse("set-base.yaml", []byte(setBase))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		sets       []Setting
		line, edit string
	}{
		{[]Setting{{Name: "burst", Value: "7"}}, "  burst: 20", "  burst: 7"},
		{[]Setting{{Name: "limit.rate", Value: "3/m"}}, "  rate: 10/s", "  rate: 3/m"},
		{[]Setting{{Name: "clients[batch-{i}].traffic", Value: "{pattern: burst, count: 30, at: 1s}"}}, "{pattern: constant, rate: 50/s}", "{pattern: burst, count: 30, at: 1s}"},
		{[]Setting{{Name: "topology.rtt", Value: "2ms"}}, "faults:", "topology: {rtt: 2ms}\nfaults:"},
		{[]Setting{{Name: "clients[1].api_key", Value: "b-{i}"}}, "    api_key: batch", "    api_key: b-{i}"},
	} {
		got, err := Apply(base, tc.sets)
		if err != nil {
			t.Errorf("%v: %v", tc.sets, err)
			continue
		}
		want, err := Parse("set-base.yaml", []byte(strings.Replace(setBase, tc.line, tc.edit, 1)))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Scenario, want.Scenario) || !reflect.DeepEqual(got.Expect, want.Expect) {
			t.Errorf("%v:\n got %+v\nwant %+v", tc.sets, got.Scenario, want.Scenario)
		}
		if reflect.DeepEqual(got.Scenario, base.Scenario) {
			t.Errorf("%v: changed nothing", tc.sets)
		}
	}
}

// TestApplySetsOneAliasedPlace: a field inside an anchor, an alias of it
// or a merge of it is set in that place alone.
func TestApplySetsOneAliasedPlace(t *testing.T) {
	const src = `name: aliases
duration: 10s
limit: {rate: 10/s, burst: 20}
clients:
  - &web
    name: web
    api_key: web
    traffic: &steady {pattern: constant, rate: 5/s}
  - <<: *web
    name: web2
    api_key: web2
  - name: api
    api_key: api
    traffic: *steady
`
	f, err := Parse("aliases.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	rates := func(f *File) []string {
		var out []string
		for _, c := range f.Scenario.Clients {
			out = append(out, c.Name+"="+c.Traffic[0].Rate.String())
		}
		return out
	}
	for _, tc := range []struct {
		name string
		want []string
	}{
		{"clients[web].traffic.rate", []string{"web=1/s", "web2=5/s", "api=5/s"}},  // the anchor itself
		{"clients[web2].traffic.rate", []string{"web=5/s", "web2=1/s", "api=5/s"}}, // a merged key
		{"clients[2].traffic.rate", []string{"web=5/s", "web2=5/s", "api=1/s"}},    // an alias
	} {
		got, err := Apply(f, []Setting{{Name: tc.name, Value: "1/s"}})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if g := rates(got); !reflect.DeepEqual(g, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, g, tc.want)
		}
	}
	if g := rates(f); !reflect.DeepEqual(g, []string{"web=5/s", "web2=5/s", "api=5/s"}) {
		t.Errorf("the file's own scenario changed: %v", g)
	}
}

// TestApplyOwnValueIsNoChange is a property: setting any scalar field of
// a built-in to the value the file gives it reads the same scenario.
func TestApplyOwnValueIsNoChange(t *testing.T) {
	type leaf struct{ path, value string }
	files := map[string]*File{}
	leaves := map[string][]leaf{}
	for _, name := range Builtin() {
		f, err := Open(name)
		if err != nil {
			t.Fatal(err)
		}
		var doc yaml.Node
		if err := yaml.Unmarshal(f.Source, &doc); err != nil {
			t.Fatal(err)
		}
		var walk func(n *yaml.Node, path string)
		walk = func(n *yaml.Node, path string) {
			n = resolve(n)
			switch n.Kind {
			case yaml.MappingNode:
				for i := 0; i+1 < len(n.Content); i += 2 {
					if k := n.Content[i]; k.ShortTag() != "!!merge" {
						walk(n.Content[i+1], join(path, k.Value))
					}
				}
			case yaml.SequenceNode:
				for i, c := range n.Content {
					walk(c, index(path, i))
				}
			case yaml.ScalarNode:
				bare := *n
				bare.HeadComment, bare.LineComment, bare.FootComment = "", "", ""
				out, err := yaml.Marshal(&bare)
				if err != nil {
					t.Fatal(err)
				}
				leaves[name] = append(leaves[name], leaf{path, strings.TrimSpace(string(out))})
			}
		}
		walk(doc.Content[0], "")
		files[name] = f
	}
	rapid.Check(t, func(t *rapid.T) {
		name := rapid.SampledFrom(Builtin()).Draw(t, "scenario")
		l := rapid.SampledFrom(leaves[name]).Draw(t, "field")
		f := files[name]
		got, err := Apply(f, []Setting{{Name: l.path, Value: l.value}})
		if msg := unread(f.Scenario, l.path, l.path); msg != "" {
			// A field the file writes and its run does not read (a
			// bucket's window, kept for --algorithm): refused when set.
			if err == nil || !strings.Contains(err.Error(), msg) {
				t.Fatalf("%s %s=%s: got %v, want %q", name, l.path, l.value, err, msg)
			}
			return
		}
		if err != nil {
			t.Fatalf("%s %s=%s: %v", name, l.path, l.value, err)
		}
		if !reflect.DeepEqual(got.Scenario, f.Scenario) {
			t.Fatalf("%s %s=%s changed the scenario", name, l.path, l.value)
		}
		// An expectation set from outside has no line in the file.
		if !reflect.DeepEqual(withoutLines(got.Expect), withoutLines(f.Expect)) {
			t.Fatalf("%s %s=%s changed the expectations", name, l.path, l.value)
		}
	})
}

func withoutLines(exps []Expectation) []Expectation {
	out := make([]Expectation, len(exps))
	for i, e := range exps {
		e.Line = 0
		out[i] = e
	}
	return out
}

// TestApplyScansALogOnce: reading a file again with a setting (a sweep's
// values, each) takes the trace's log as it was scanned, not scanning it
// again: a log changed without its size or time changing keeps the keys
// it was scanned with, and one whose time changed is scanned again.
func TestApplyScansALogOnce(t *testing.T) {
	path := traceScenario(t, `name: t
trace: {file: access.log}
limit: {algorithm: token-bucket, rate: 1/s, burst: 2, key: ip}
`)
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(filepath.Dir(path), "access.log")
	info, err := os.Stat(log)
	if err != nil {
		t.Fatal(err)
	}
	// The same size and time, one client: a scan would find one key.
	oneKey := strings.ReplaceAll(traceLines, "192.0.2.2", "192.0.2.1")
	if err := os.WriteFile(log, []byte(oneKey), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(log, info.ModTime(), info.ModTime()); err != nil {
		t.Fatal(err)
	}
	for burst := 1; burst <= 2*MaxFeeds; burst++ {
		got, err := Apply(f, []Setting{{Name: "burst", Value: strconv.Itoa(burst)}})
		if err != nil {
			t.Fatalf("burst %d: %v", burst, err)
		}
		if got.Scenario.Limit.Params.Burst != int64(burst) || len(got.Scenario.Clients) != 2 {
			t.Fatalf("burst %d: limit %+v, %d clients", burst, got.Scenario.Limit, len(got.Scenario.Clients))
		}
	}
	later := info.ModTime().Add(time.Second)
	if err := os.Chtimes(log, later, later); err != nil {
		t.Fatal(err)
	}
	got, err := Apply(f, []Setting{{Name: "burst", Value: "3"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Scenario.Clients) != 1 {
		t.Errorf("the log changed on disk: %d clients, want 1 (scanned again)", len(got.Scenario.Clients))
	}
}

// TestApplyLogCacheTellsInstantsApart: trace.from at 12:00+00:01 and at
// 12:00-00:01 are two minutes apart, though their wall clocks are the
// same; each keeps its own requests.
func TestApplyLogCacheTellsInstantsApart(t *testing.T) {
	path := traceScenario(t, `name: t
trace: {file: own.log}
limit: {algorithm: token-bucket, rate: 1/s, burst: 2, key: ip}
`)
	const lines = `192.0.2.1 - - [01/Mar/2026:11:59:30 +0000] "GET /a HTTP/1.1" 200 1 "-" "-"
192.0.2.2 - - [01/Mar/2026:12:01:30 +0000] "GET /a HTTP/1.1" 200 1 "-" "-"
`
	if err := os.WriteFile(filepath.Join(filepath.Dir(path), "own.log"), []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		from    string
		clients int
	}{
		{"2026-03-01T12:00:00+00:01", 2}, // 11:59 UTC: both requests
		{"2026-03-01T12:00:00-00:01", 1}, // 12:01 UTC: the second
		{"2026-03-01T12:00:00+00:01", 2},
	} {
		got, err := Apply(f, []Setting{{Name: "trace.from", Value: tc.from}})
		if err != nil {
			t.Fatalf("from %s: %v", tc.from, err)
		}
		if len(got.Scenario.Clients) != tc.clients {
			t.Errorf("from %s: %d clients, want %d", tc.from, len(got.Scenario.Clients), tc.clients)
		}
	}
}

// TestApplyComposesAndValue: Apply of a file Apply made adds to its
// settings, and Value reads a setting's value back, set or as written.
func TestApplyComposesAndValue(t *testing.T) {
	base, err := Parse("set-base.yaml", []byte(setBase))
	if err != nil {
		t.Fatal(err)
	}
	once, err := Apply(base, []Setting{{Name: "burst", Value: "7"}, {Name: "servers", Value: "3"}})
	if err != nil {
		t.Fatal(err)
	}
	first, err := Apply(base, []Setting{{Name: "burst", Value: "7"}})
	if err != nil {
		t.Fatal(err)
	}
	twice, err := Apply(first, []Setting{{Name: "servers", Value: "3"}})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(once.Scenario, twice.Scenario) || twice.Scenario.Limit.Params.Burst != 7 || twice.Scenario.Servers != 3 {
		t.Errorf("Apply twice gives burst %d servers %d, want what once gives (7, 3)", twice.Scenario.Limit.Params.Burst, twice.Scenario.Servers)
	}
	for _, tc := range []struct {
		f          *File
		name, want string
		ok         bool
	}{
		{base, "burst", "20", true},
		{base, "limit.rate", "10/s", true},
		{base, "servers", "2", true},
		{base, "clients[web].traffic", "{pattern: constant, rate: 5/s}", true},
		{base, "clients[1].count", "2", true},
		{base, "topology.failover_after", "", false},
		{base, "clients[nope].count", "", false},
		{twice, "limit.burst", "7", true},
		{twice, "servers", "3", true},
		{twice, "limit.rate", "10/s", true},
	} {
		got, ok := Value(tc.f, tc.name)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Value(%s) = %q, %v; want %q, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

// BenchmarkApply is one setting on a built-in: the file read again, as a
// sweep does per value.
func BenchmarkApply(b *testing.B) {
	f, err := Open("cluster-partition")
	if err != nil {
		b.Fatal(err)
	}
	sets := []Setting{{Name: "topology.node_timeout", Value: "5s"}}
	for b.Loop() {
		if _, err := Apply(f, sets); err != nil {
			b.Fatal(err)
		}
	}
}

// TestWithRefusesAnAlias: an alias in a with: path's value is refused
// before it is written out as a setting's text, where nine nested
// anchors of ten aliases each (testdata/laughs.yaml, 700 bytes) would be
// a billion nodes; and settingText writes out no more than
// maxSettingNodes.
func TestWithRefusesAnAlias(t *testing.T) {
	_, err := Load(filepath.Join("testdata", "laughs.yaml"))
	want := `expect[0].with.clients[0].traffic: the value refers to an anchor (want the value written out)`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Load(laughs.yaml) = %v, want %s", err, want)
	}
	src, err := os.ReadFile(filepath.Join("testdata", "laughs.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		t.Fatal(err)
	}
	laughs := lookup(lookup(resolve(lookup(doc.Content[0], "expect", 0)).Content[0], "with", 0), "clients[0].traffic", 0)
	if text, ok := settingText(laughs); ok || text != "" {
		t.Errorf("settingText of a billion laughs = %d bytes, %v; want refused", len(text), ok)
	}
}

// TestApplyRefusesAFieldSetTwice: two settings of one field, however
// spelled, or one of a field that holds the other's, are refused; a
// with: is read the same way.
func TestApplyRefusesAFieldSetTwice(t *testing.T) {
	base, err := Parse("set-base.yaml", []byte(setBase))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		sets []Setting
		want string
	}{
		{[]Setting{{"burst", "5", "--vs burst"}, {"limit.burst", "6", "--vs limit.burst"}},
			"--vs limit.burst: --vs burst already sets it (want it once)"},
		{[]Setting{{"on_error", "fail-closed", "--vs on_error"}, {"topology.on_error", "fail-open", "--vs topology.on_error"}},
			"--vs topology.on_error: --vs on_error already sets it (want it once)"},
		{[]Setting{{"topology.on_error", "fail-closed", "--set topology.on_error"}, {"on-error", "fail-open", "--on-error"}},
			"--on-error: --set topology.on_error already sets it (want it once)"},
		{[]Setting{{"clients[0].traffic.rate", "1/s", "--vs clients[0].traffic.rate"}, {"clients[web].traffic.rate", "2/s", "--vs clients[web].traffic.rate"}},
			"--vs clients[web].traffic.rate: --vs clients[0].traffic.rate already sets it (want it once)"},
		{[]Setting{{"limit", "{rate: 1/s, burst: 3}", "--set limit"}, {"burst", "9", "--burst"}},
			"--burst: --set limit already sets limit, which holds it (want one of them)"},
		{[]Setting{{"clients[web].traffic.rate", "1/s", "--set clients[web].traffic.rate"}, {"clients[0]", "{name: w, api_key: w, traffic: {pattern: constant, rate: 1/s}}", "--set clients[0]"}},
			"--set clients[0]: --set clients[web].traffic.rate already sets clients[0].traffic.rate, within it (want one of them)"},
		{[]Setting{{"seed", "1", "--vs seed"}, {"seed", "2", "--vs seed"}},
			"--vs seed: given twice (want it once)"},
	} {
		_, err := Apply(base, tc.sets)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%v:\n got %v\nwant %s", tc.sets, err, tc.want)
		}
	}
	// A setting of a file Apply made replaces the one it was made with:
	// a --vs goes on top of the flags.
	first, err := Apply(base, []Setting{{Name: "burst", Value: "5"}})
	if err != nil {
		t.Fatal(err)
	}
	if again, err := Apply(first, []Setting{{Name: "limit.burst", Value: "6"}}); err != nil || again.Scenario.Limit.Params.Burst != 6 {
		t.Errorf("a setting on top of another: %v", err)
	}
	with := strings.Replace(setBase, "faults:", "expect:\n  - {client: web, allowed: {min: 1}, with: {burst: 5, limit.burst: 6}}\nfaults:", 1)
	_, err = Parse("set-base.yaml", []byte(with))
	if want := "expect[0].with.limit.burst: expect[0].with.burst already sets it (want it once)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("with: {burst: 5, limit.burst: 6}: %v, want %s", err, want)
	}
	for name, want := range map[string]string{
		"burst": "limit.burst", "on_error": "topology.on_error", "on-error": "topology.on_error",
		"clients[web].traffic.rate": "clients[0].traffic.rate", "clients[batch-{i}].count": "clients[1].count",
		"topology.failover-after": "topology.failover_after", "clients[nope].count": "clients[nope].count",
	} {
		if got, err := SettingTarget(base, name); got != want || err != nil {
			t.Errorf("SettingTarget(%s) = %q, %v; want %q", name, got, err, want)
		}
	}
}

// TestValueReadsWhatApplySet: a setting's value, as the runs used it,
// whatever name set it.
func TestValueReadsWhatApplySet(t *testing.T) {
	base, err := Parse("set-base.yaml", []byte(setBase))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		sets       []Setting
		name, want string
	}{
		{[]Setting{{Name: "limit", Value: "{algorithm: token-bucket, rate: 10/s, burst: 3}"}}, "burst", "3"},
		{[]Setting{{Name: "clients[web].traffic", Value: "{pattern: constant, rate: 1/s}"}}, "clients[0].traffic.rate", "1/s"},
		{[]Setting{{Name: "clients[0].traffic.rate", Value: "2/s"}}, "clients[web].traffic.rate", "2/s"},
		{[]Setting{{Name: "on_error", Value: "fail-closed"}}, "topology.on_error", "fail-closed"},
	} {
		f, err := Apply(base, tc.sets)
		if err != nil {
			t.Fatalf("%v: %v", tc.sets, err)
		}
		if got, ok := Value(f, tc.name); got != tc.want || !ok {
			t.Errorf("%v: Value(%s) = %q, %v; want %q", tc.sets, tc.name, got, ok, tc.want)
		}
	}
}

// TestApplyToAListTheFileLacks: an entry of a list the file does not
// have is refused as missing, never called a mapping.
func TestApplyToAListTheFileLacks(t *testing.T) {
	src := strings.Replace(setBase, "faults:\n  - kind: latency\n    start: 2s\n    end: 4s\n    rtt: 5ms\n", "", 1)
	base, err := Parse("no-faults.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		set  Setting
		want string
	}{
		{Setting{"faults[0].start", "1s", "--set faults[0].start"},
			"--set faults[0].start: faults: the file has none (want faults added to the file, or --set faults=[{…}])"},
		{Setting{"topology.regions[0].name", "x", "--vs topology.regions[0].name"},
			"--vs topology.regions[0].name: topology.regions: the file has none (want topology.regions added to the file, or --vs topology.regions=[{…}])"},
		{Setting{"limits[-1].rate", "1/s", "--set limits[-1].rate"},
			"--set limits[-1].rate: this file has limit:, not limits: (want limit.rate)"},
		{Setting{"limits[0].rate", "1/s", "with.limits[0].rate"},
			"with.limits[0].rate: this file has limit:, not limits: (want limit.rate)"},
		{Setting{"faults[0]", "{kind: latency, start: 1s, end: 2s, rtt: 1ms}", "with.faults[0]"},
			"with.faults[0]: faults: the file has none (want faults added to the file, or faults: [{…}] given whole)"},
	} {
		_, err := Apply(base, []Setting{tc.set})
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s:\n got %v\nwant %s", tc.set.Flag, err, tc.want)
		}
	}
}

// TestApplyValueWithAKeyTwice: a setting's value has no lines, so a key
// given twice in it is not said to be at line 0.
func TestApplyValueWithAKeyTwice(t *testing.T) {
	base, err := Parse("set-base.yaml", []byte(setBase))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Apply(base, []Setting{{"limit", "{algorithm: gcra, rate: 1/s, burst: 3, rate: 2/s}", "--set limit"}})
	if want := "--set limit: limit.rate: given twice in the value (want it once)"; err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

// TestApplyValueOfOneDocument: a value of several YAML documents is
// refused, not cut to the first.
func TestApplyValueOfOneDocument(t *testing.T) {
	base, err := Parse("set-base.yaml", []byte(setBase))
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"5\n---\n6", "5\n---\n", "{rate: 1/s}\n--- x"} {
		_, err := Apply(base, []Setting{{"limit.burst", text, "--set limit.burst"}})
		if err == nil || !strings.HasSuffix(err.Error(), "holds more than one YAML document (want one value)") {
			t.Errorf("%q: %v, want more than one document refused", text, err)
		}
	}
	if got, err := Apply(base, []Setting{{"limit.burst", "5\n", "--set limit.burst"}}); err != nil || got.Scenario.Limit.Params.Burst != 5 {
		t.Errorf("5 and a newline: %v", err)
	}
}

// TestApplyReadsEveryValueAsYAML: a flag's value is read as the file's
// field is, whether it is set in the tree or over the scenario: spaces
// around it are YAML's, a quoted number a string, nothing missing. And an
// index out of range says "before count: expands them" of clients alone.
func TestApplyReadsEveryValueAsYAML(t *testing.T) {
	base, err := Parse("set-base.yaml", []byte(setBase))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		set  Setting
		want string // the error, or "" for none
	}{
		{Setting{"servers", " 3", "--servers"}, ""},
		{Setting{"limit.burst", " 5", "--set limit.burst"}, ""},
		{Setting{"servers", "'3'", "--servers"}, `--servers: "3" is not a whole number (want e.g. 4)`},
		{Setting{"limit.burst", "'5'", "--set limit.burst"}, `--set limit.burst: "5" is not a whole number (want e.g. 50)`},
		{Setting{"seed", "", "--vs seed"}, "--vs seed: missing value (want a whole number from 0 to 2^64-1, e.g. 1)"},
		{Setting{"burst", "", "--vs burst"}, "--vs burst: missing value (want a whole number, e.g. 50)"},
		{Setting{"faults[2].rtt", "1ms", "--set faults[2].rtt"}, "--set faults[2].rtt: faults[2] is out of range: the file has 1 (want faults[0])"},
	} {
		_, err := Apply(base, []Setting{tc.set})
		if got := fmt.Sprint(err); (tc.want == "" && err != nil) || (tc.want != "" && got != tc.want) {
			t.Errorf("%s %q:\n got %v\nwant %s", tc.set.Flag, tc.set.Value, err, tc.want)
		}
	}
}

// TestOpenWithIsApplyOfOpen: reading a file once with its settings gives
// what Open then Apply gives, keeps the file as read as its text alone,
// and says the file's own error as Open does.
func TestOpenWithIsApplyOfOpen(t *testing.T) {
	for _, tc := range []struct {
		name string
		sets []Setting
	}{
		{"partition", []Setting{{Name: "burst", Value: "30"}, {Name: "topology.failover_after", Value: "5s"}}},
		{"api-quotas", []Setting{{Name: "limits[hourly].rate", Value: "500/h"}, {Name: "servers", Value: "3"}}},
		{"nat", []Setting{{Name: "seed", Value: "7"}}}, // an override alone
	} {
		once, err := OpenWith(tc.name, tc.sets)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		f, err := Open(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		twice, err := Apply(f, tc.sets)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(once.Scenario, twice.Scenario) || !reflect.DeepEqual(once.Expect, twice.Expect) || once.Path != twice.Path {
			t.Errorf("%s %v: OpenWith differs from Apply of Open", tc.name, tc.sets)
		}
		if !once.base.unread || once.base.Scenario.Clients != nil {
			t.Errorf("%s: OpenWith keeps the file as read, not its text alone", tc.name)
		}
		// A --vs on top: as Apply of the file read whole.
		vs := []Setting{{Name: "seed", Value: "9"}}
		a, errA := Apply(once, vs)
		b, errB := Apply(twice, vs)
		if errA != nil || errB != nil || !reflect.DeepEqual(a.Scenario, b.Scenario) {
			t.Errorf("%s: a setting on top differs: %v, %v", tc.name, errA, errB)
		}
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte(strings.Replace(setBase, "burst: 20", "burst: x", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, want := Load(bad)
	_, got := OpenWith(bad, []Setting{{Name: "servers", Value: "3"}, {Name: "topology.rtt", Value: "1ms"}})
	if want == nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("a file that is wrong as written: %v, want the file's own %v", got, want)
	}
}

// TestApplyBlamesTheSettingThatBreaks: of many settings, the one that
// breaks another field is named, found by halving the settings.
func TestApplyBlamesTheSettingThatBreaks(t *testing.T) {
	partition, err := Open("partition")
	if err != nil {
		t.Fatal(err)
	}
	var sets []Setting
	for i := range 9 {
		sets = append(sets, Setting{Name: "limit.burst", Value: strconv.Itoa(30 + i), Flag: "--vs burst"})
		if i == 5 {
			sets = append(sets, Setting{Name: "faults[0].start", Value: "25s", Flag: "--set faults[0].start"})
		}
	}
	// One call refuses a field set twice; a file Apply made takes the
	// settings it was made with, as they were.
	f := partition
	for _, s := range sets[:len(sets)-1] {
		if f, err = Apply(f, []Setting{s}); err != nil && s.Name != "faults[0].start" {
			t.Fatalf("%v: %v", s, err)
		} else if err != nil {
			break
		}
	}
	if err == nil || !strings.HasPrefix(err.Error(), "--set faults[0].start=25s: faults[0].end (line ") {
		t.Errorf("got %v, want the fault's start blamed", err)
	}
}
