package scenarios_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ratelim/ratelim/report"
	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/sim"
)

// runJSON is what `ratelim sim --format json` writes for sc.
func runJSON(t *testing.T, sc sim.Scenario) []byte {
	t.Helper()
	r, err := sim.Run(context.Background(), sc, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := report.WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// writtenSettings are the settings TestWrittenRunsAsApplied writes into
// every built-in: paths, short forms, and overrides of each kind. {client}
// is the built-in's first client as its file names it.
var writtenSettings = []scenarios.Setting{
	{Name: "limit.burst", Value: "7"},
	{Name: "limit.rate", Value: "7/s"},
	{Name: "rate", Value: "25/s"},
	{Name: "burst", Value: "33"},
	{Name: "algorithm", Value: "gcra"},
	{Name: "algorithm", Value: "sliding-log"},
	{Name: "on-error", Value: "fail-closed"},
	{Name: "topology.kind", Value: "local"},
	{Name: "topology", Value: "shared"},
	{Name: "servers", Value: "3"},
	{Name: "balancer", Value: "random"},
	{Name: "seed", Value: "7"},
	{Name: "duration", Value: "20s"},
	{Name: "step", Value: "2s"},
	{Name: "shadow", Value: "true"},
	{Name: "faults[0].start", Value: "2s"},
	{Name: "clients[{client}].traffic.rate", Value: "3/s"},
	{Name: "clients[{client}].retry", Value: "retry-after"},
}

// TestWrittenRunsAsApplied is Written's property: for every built-in and
// every setting Apply accepts, the file Written gives back runs to the
// same JSON, byte for byte, as the applied file; or Written refuses a
// whole-scenario override, naming it and the flag to use instead.
func TestWrittenRunsAsApplied(t *testing.T) {
	written, refused := map[string]int{}, map[string]int{}
	for _, name := range scenarios.Builtin() {
		f, err := scenarios.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		// A file made by no Apply is its text, unchanged.
		if got, err := scenarios.Written(f); err != nil || !bytes.Equal(got, f.Source) {
			t.Errorf("%s: Written of the file as read: %v, or not its Source", name, err)
		}
		if none, err := scenarios.Apply(f, nil); err != nil {
			t.Errorf("%s: Apply of no settings: %v", name, err)
		} else if got, err := scenarios.Written(none); err != nil || !bytes.Equal(got, f.Source) {
			t.Errorf("%s: Written of Apply of no settings: %v, or not its Source", name, err)
		}
		first := firstClient(t, f.Source)
		for _, s := range writtenSettings {
			label := s.Name + "=" + s.Value
			s.Name = strings.ReplaceAll(s.Name, "{client}", first)
			applied, err := scenarios.Apply(f, []scenarios.Setting{s})
			if err != nil {
				continue // no run to write: refused as the CLI refuses it
			}
			text, err := scenarios.Written(applied)
			if err != nil {
				var e *scenarios.Error
				if !errors.As(err, &e) || e.Field != s.Name || !strings.Contains(e.Msg, "(want the CLI's flag: --") {
					t.Errorf("%s %s: %v (want an *Error naming the setting and the CLI's flag)", name, label, err)
				}
				if !isTransform(s.Name) {
					t.Errorf("%s %s: a setting of one field refused: %v", name, label, err)
				}
				refused[label]++
				t.Logf("%s: %v", name, err)
				continue
			}
			back, err := scenarios.Parse(name+".yaml", text)
			if err != nil {
				t.Errorf("%s %s: Written's text does not read: %v\n%s", name, label, err, text)
				continue
			}
			// Compared whole: the name too (the files name themselves);
			// but a parameter the algorithm's setting filled by default
			// is written as given, and the run no longer says defaulted.
			sc := applied.Scenario
			sc.Limit.DefaultWindow, sc.Limit.DefaultBurst = false, false
			if got, want := runJSON(t, back.Scenario), runJSON(t, sc); !bytes.Equal(got, want) {
				t.Errorf("%s %s: Written's file runs otherwise than the applied one", name, label)
			}
			written[label]++
		}
	}
	for _, s := range writtenSettings {
		label := s.Name + "=" + s.Value
		t.Logf("%-32s written %2d, refused %2d", label, written[label], refused[label])
	}
}

// isTransform says whether a setting's name is an override that Apply
// applies to the whole scenario rather than set in the file's tree.
func isTransform(name string) bool {
	switch name {
	case "algorithm", "topology", "key", "duration", "shadow", "step", "store", "rtt", "on-error", "sync-interval", "replication-lag":
		return true
	}
	return false
}

// firstClient is the name: of the first client in a built-in's text.
func firstClient(t *testing.T, src []byte) string {
	t.Helper()
	_, rest, ok := strings.Cut(string(src), "\nclients:\n")
	if !ok {
		t.Fatal("no clients: in the file")
	}
	_, rest, ok = strings.Cut(rest, "name: ")
	if !ok {
		t.Fatal("no client name in the file")
	}
	name, _, _ := strings.Cut(rest, "\n")
	name, _, _ = strings.Cut(name, " ")
	return strings.TrimSuffix(name, ",")
}

// TestWrittenKeepsTheFile checks that a written file keeps the file's
// comments and holds the settings at their fields.
func TestWrittenKeepsTheFile(t *testing.T) {
	f, err := scenarios.Open("runaway-healthcheck")
	if err != nil {
		t.Fatal(err)
	}
	g, err := scenarios.Apply(f, []scenarios.Setting{
		{Name: "burst", Value: "20"},
		{Name: "clients[bastion-{i}].count", Value: "2"},
		{Name: "on_error", Value: "fail-closed"},
		{Name: "question.client", Value: "bastion-2"},
	})
	if err != nil {
		t.Fatal(err)
	}
	text, err := scenarios.Written(g)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"# runaway-healthcheck: a health-check loop goes wrong on every bastion at once.",
		"burst: 20 # bucket size: what a quiet key may send at once",
		"count: 2",
		"on_error: fail-closed",
		"client: bastion-2",
		"# The well-behaved callers never see a 429.",
	} {
		if !strings.Contains(string(text), want) {
			t.Errorf("Written lacks %q:\n%s", want, text)
		}
	}
	back, err := scenarios.Parse("runaway-healthcheck.yaml", text)
	if err != nil {
		t.Fatal(err)
	}
	if back.Question.Subject != "bastion-2" || len(back.Scenario.Clients) != 4 {
		t.Errorf("read back: question %+v, %d clients (want bastion-2's, 4)", back.Question, len(back.Scenario.Clients))
	}
	// Settings on settings: Apply of an applied file writes them all.
	h, err := scenarios.Apply(g, []scenarios.Setting{{Name: "servers", Value: "2"}})
	if err != nil {
		t.Fatal(err)
	}
	text, err = scenarios.Written(h)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(text), "servers: 2") || !strings.Contains(string(text), "burst: 20") {
		t.Errorf("Written of Apply of Apply lacks a setting:\n%s", text)
	}
}

// TestWrittenDropsNumberedComments: a value Written changes loses a line
// comment that states a number (it is about the old value), and keeps
// one that does not.
func TestWrittenDropsNumberedComments(t *testing.T) {
	tests := []struct {
		builtin string
		set     scenarios.Setting
		want    string // the line as written
		stale   string // the old comment, which must be gone
		kept    string // a comment of a value the setting did not change
	}{
		{"dark-launch", scenarios.Setting{Name: "shadow", Value: "20s"}, "shadow: {until: 20s}\n", "until 15s", "# the one the new limit is for"},
		{"window-boundary", scenarios.Setting{Name: "limit.window", Value: "2s"}, "window: 2s\n", "100/s × 1s = 100", "# for the bucket algorithms, if you switch"},
		{"runaway-healthcheck", scenarios.Setting{Name: "limit.burst", Value: "20"}, "burst: 20 # bucket size: what a quiet key may send at once\n", "\x00", "# refill: the sustained rate per key"},
	}
	for _, tt := range tests {
		f, err := scenarios.Open(tt.builtin)
		if err != nil {
			t.Fatal(err)
		}
		g, err := scenarios.Apply(f, []scenarios.Setting{tt.set})
		if err != nil {
			t.Fatal(err)
		}
		text, err := scenarios.Written(g)
		if err != nil {
			t.Fatalf("%s %s: %v", tt.builtin, tt.set.Name, err)
		}
		if s := string(text); !strings.Contains(s, tt.want) || strings.Contains(s, tt.stale) || !strings.Contains(s, tt.kept) {
			t.Errorf("%s %s=%s: want %q, not %q, and %q kept:\n%s", tt.builtin, tt.set.Name, tt.set.Value, tt.want, tt.stale, tt.kept, text)
		}
	}
}

// TestWrittenRefuses names cases Written cannot write, each an *Error at
// the file and line of why, on the setting, with one want: the flag that
// makes the same run.
func TestWrittenRefuses(t *testing.T) {
	const renamed = "name: q\nduration: 10s\nlimits:\n  - {name: per-second, algorithm: token-bucket, rate: 10/s, burst: 10, key: api-key}\nclients:\n  - {name: 'web-{i}', count: 2, api_key: web, traffic: {pattern: constant, rate: 5/s}}\nquestion: {ask: 'How many?', figure: allowed, client: web-1}\n"
	tests := []struct {
		name   string
		file   string // a built-in's name, or a file's text (q.yaml)
		sets   []scenarios.Setting
		blamed int    // which of sets is blamed
		at     string // the error's file
		why    string // what the message says after "cannot be written into the file: "
		flag   string // the want's flag
	}{
		// A duration that cuts the outage short: the file's fault ends after it.
		{"a duration before a fault's end", "store-outage", []scenarios.Setting{{Name: "duration", Value: "15s", Flag: "--duration"}}, 0, "store-outage.yaml", "faults[0]", "--duration 15s"},
		// The file's expectation reads sync_interval, which a shared
		// topology has not.
		{"a kind under an expectation of the old kind's field", "sync-interval", []scenarios.Setting{{Name: "topology", Value: "shared", Flag: "--topology"}}, 0, "sync-interval.yaml", "expect[2].with.sync_interval: only a synced topology has it", "--topology shared"},
		// A file of limits: has no limit.shadow to write.
		{"shadow on limits:", "api-quotas", []scenarios.Setting{{Name: "shadow", Value: "true", Flag: "--shadow"}}, 0, "", "written as limit.shadow: this file has limits:", "--shadow true"},
		// Renamed, the clients no longer match the file's own expectations.
		{"a rename under the file's expectations", "runaway-healthcheck", []scenarios.Setting{{Name: "clients[bastion-{i}].name", Value: "b-{i}", Flag: "--set clients[bastion-{i}].name"}}, 0, "runaway-healthcheck.yaml", "", "--set 'clients[bastion-{i}].name=b-{i}'"},
		// The review's case: the rename writes, with question.client
		// after it; --shadow, on a file of limits:, does not.
		{"a transform after paths that need each other", renamed, []scenarios.Setting{
			{Name: "clients[0].name", Value: "app-{i}", Flag: "--set clients[0].name"},
			{Name: "question.client", Value: "app-1", Flag: "--set question.client"},
			{Name: "shadow", Value: "true", Flag: "--shadow"},
		}, 2, "", "written as limit.shadow: this file has limits:", "--shadow true"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := scenarios.Open(tt.file)
			if strings.Contains(tt.file, "\n") {
				f, err = scenarios.Parse("q.yaml", []byte(tt.file))
			}
			if err != nil {
				t.Fatal(err)
			}
			g, err := scenarios.Apply(f, tt.sets)
			if err != nil {
				t.Fatal(err)
			}
			_, err = scenarios.Written(g)
			var e *scenarios.Error
			if !errors.As(err, &e) {
				t.Fatalf("%v (want an *Error)", err)
			}
			wantEnd := "(want the CLI's flag: " + tt.flag + ")"
			if e.File != tt.at || (tt.at != "" && e.Line == 0) || e.Field != tt.sets[tt.blamed].Flag ||
				!strings.HasPrefix(e.Msg, "cannot be written into the file: "+tt.why) || !strings.HasSuffix(e.Msg, wantEnd) ||
				strings.Count(e.Msg, "(want") != 1 {
				t.Errorf("got %#v\nwant file %q with a line, field %s, cannot be written into the file: %s... %s, one want", e, tt.at, tt.sets[tt.blamed].Flag, tt.why, wantEnd)
			}
		})
	}
}

// TestWrittenFillsWhatApplyFilled: an algorithm is written with the
// window Apply filled for it, a kind without the fields only the old
// kind reads; the file then runs as the applied one.
func TestWrittenFillsWhatApplyFilled(t *testing.T) {
	const synced = "name: synced\nduration: 10s\nlimit: {rate: 10/s, burst: 10, key: api-key}\ntopology:\n  kind: synced\n  sync_interval: 100ms\n  rtt: 1ms\nclients:\n  - {name: a, api_key: a, traffic: {pattern: constant, rate: 20/s}}\n"
	tests := []struct {
		builtin string
		set     scenarios.Setting
		has     string // in the text written
		lacks   string // and not
	}{
		{"race", scenarios.Setting{Name: "algorithm", Value: "sliding-log"}, "window: 1s", ""},
		{synced, scenarios.Setting{Name: "topology", Value: "shared"}, "kind: shared", "sync_interval"},
		{synced, scenarios.Setting{Name: "topology", Value: "local"}, "kind: local", "sync_interval"},
	}
	for _, tt := range tests {
		f, err := scenarios.Open(tt.builtin)
		if tt.builtin == synced {
			f, err = scenarios.Parse("synced.yaml", []byte(synced))
		}
		if err != nil {
			t.Fatal(err)
		}
		g, err := scenarios.Apply(f, []scenarios.Setting{tt.set})
		if err != nil {
			t.Fatalf("%s=%s: %v", tt.set.Name, tt.set.Value, err)
		}
		text, err := scenarios.Written(g)
		if err != nil {
			t.Errorf("%s %s=%s: %v", tt.builtin, tt.set.Name, tt.set.Value, err)
			continue
		}
		if !strings.Contains(string(text), tt.has) || (tt.lacks != "" && strings.Contains(string(text), tt.lacks)) {
			t.Errorf("%s %s=%s: want %q, not %q, in\n%s", tt.builtin, tt.set.Name, tt.set.Value, tt.has, tt.lacks, text)
		}
		back, err := scenarios.Parse("back.yaml", text)
		if err != nil {
			t.Fatal(err)
		}
		sc := g.Scenario
		sc.Limit.DefaultWindow, sc.Limit.DefaultBurst = false, false
		if !bytes.Equal(runJSON(t, back.Scenario), runJSON(t, sc)) {
			t.Errorf("%s %s=%s: Written's file runs otherwise than the applied one", tt.builtin, tt.set.Name, tt.set.Value)
		}
	}
}

// TestWrittenSearchIsBounded: past MaxWrittenSearch settings, Written
// does not look for the one to blame (each look reads the file again).
func TestWrittenSearchIsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("name: many\nduration: 10s\nlimits:\n  - {name: per-second, algorithm: token-bucket, rate: 10/s, burst: 10, key: api-key}\nclients:\n")
	var sets []scenarios.Setting
	for i := range scenarios.MaxWrittenSearch {
		fmt.Fprintf(&b, "  - {name: c%d, api_key: c%d, traffic: {pattern: constant, rate: 1/s}}\n", i, i)
		sets = append(sets, scenarios.Setting{Name: fmt.Sprintf("clients[c%d].traffic.rate", i), Value: "2/s"})
	}
	f, err := scenarios.Parse("many.yaml", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	g, err := scenarios.Apply(f, append(sets, scenarios.Setting{Name: "shadow", Value: "true", Flag: "--shadow"}))
	if err != nil {
		t.Fatal(err)
	}
	_, err = scenarios.Written(g)
	var e *scenarios.Error
	if !errors.As(err, &e) || e.Field != "" || !strings.Contains(e.Msg, "65 settings") || !strings.Contains(e.Msg, "at most 64") {
		t.Errorf("%v (want an error naming no setting, past 64)", err)
	}
}

// TestWrittenAliases writes settings around retry-storm's anchor
// (eager's traffic: &traffic, which the others alias): the copies Apply
// makes drop their anchors, and the text must still name what each alias
// stands for.
func TestWrittenAliases(t *testing.T) {
	f, err := scenarios.Open("retry-storm")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []scenarios.Setting{
		{Name: "clients[patient].retry", Value: "immediate"},     // beside an alias
		{Name: "clients[eager].retry", Value: "none"},            // beside the anchor
		{Name: "clients[eager].traffic[0].rate", Value: "3/s"},   // in the anchor: the aliases keep the file's
		{Name: "clients[jittery].traffic[0].rate", Value: "3/s"}, // in an alias: that client's alone
	} {
		applied, err := scenarios.Apply(f, []scenarios.Setting{s})
		if err != nil {
			t.Fatal(err)
		}
		text, err := scenarios.Written(applied)
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		back, err := scenarios.Parse("retry-storm.yaml", text)
		if err != nil {
			t.Fatalf("%s: %v\n%s", s.Name, err, text)
		}
		if !bytes.Equal(runJSON(t, back.Scenario), runJSON(t, applied.Scenario)) {
			t.Errorf("%s: Written's file runs otherwise than the applied one", s.Name)
		}
	}
}

// FuzzWritten holds Written to its word on any file and setting Apply
// accepts: the text it gives reads to the applied file (the question and
// the expectations' text too) and runs to the same report.WriteJSON
// bytes, or it says which setting it cannot write and the flag to use;
// it never panics. The check is not Written's own (readsAs): a blind
// spot there would hide here too.
//
// Run it with a short minimization:
//
//	go test ./scenarios -run '^$' -fuzz FuzzWritten -fuzztime 1m -fuzzminimizetime 50x
//
// Without it the fuzzer reports 0 execs/s after its first few dozen:
// it is minimizing each new input of several KB (a built-in), for up to
// a minute by default, and counts none of those runs (measured: 58 execs
// in 45 s with the default, 70,000 and 414 new inputs in 40 s with 50x;
// 4,500/s without coverage instrumentation). Written is not the slow part.
func FuzzWritten(f *testing.F) {
	for _, name := range scenarios.Builtin() {
		g, _ := scenarios.Open(name)
		f.Add(g.Source, "burst", "7")
		f.Add(g.Source, "algorithm", "gcra")
		f.Add(g.Source, "clients[0].retry", "immediate")
	}
	const small = "name: t\nduration: 2s\nlimit: {rate: 10/s, burst: 10, key: api-key}\nclients:\n  - {name: a, api_key: a, traffic: {pattern: constant, rate: 5/s}}\nquestion: {ask: 'At {limit.rate}?', figure: allowed, client: a}\n"
	f.Add([]byte(small), "topology", "{kind: shared, rtt: 1ms}")
	f.Add([]byte(small), "shadow", "1s")
	f.Add([]byte(small), "question.pick", "most")
	f.Fuzz(func(t *testing.T, data []byte, name, value string) {
		file, err := scenarios.Parse("f.yaml", data)
		if err != nil {
			return
		}
		applied, err := scenarios.Apply(file, []scenarios.Setting{{Name: name, Value: value}})
		if err != nil {
			return
		}
		text, err := scenarios.Written(applied)
		if err != nil {
			var e *scenarios.Error
			if !errors.As(err, &e) || e.Field != name || !strings.HasSuffix(e.Msg, ")") || !strings.Contains(e.Msg, "(want the CLI's flag: --") {
				t.Fatalf("Written's error %q does not name the setting and the flag", err)
			}
			return
		}
		back, err := scenarios.Parse("f.yaml", text)
		if err != nil {
			t.Fatalf("Written's text does not read: %v\n%s", err, text)
		}
		if (back.Question == nil) != (applied.Question == nil) ||
			back.Question != nil && back.Question.Text(back) != applied.Question.Text(applied) {
			t.Fatalf("Written's text asks otherwise: %+v, not %+v\n%s", back.Question, applied.Question, text)
		}
		if len(back.Expect) != len(applied.Expect) {
			t.Fatalf("Written's text expects %d, not %d\n%s", len(back.Expect), len(applied.Expect), text)
		}
		for i := range back.Expect {
			if back.Expect[i].Text != applied.Expect[i].Text {
				t.Fatalf("expect[%d] reads %q, not %q\n%s", i, back.Expect[i].Text, applied.Expect[i].Text, text)
			}
		}
		// The runs, where they are small: the same bytes.
		sc := applied.Scenario
		sc.Limit.DefaultWindow, sc.Limit.DefaultBurst = false, false
		if got, want := boundedJSON(back.Scenario), boundedJSON(sc); !bytes.Equal(got, want) {
			t.Fatalf("Written's text runs otherwise\n%s", text)
		}
	})
}

// boundedJSON is report.WriteJSON of sc's run with its store in memory,
// nil for a run past a small budget (the fuzzer's inputs may ask for
// billions of requests) or one the simulator refuses.
func boundedJSON(sc sim.Scenario) []byte {
	sc.Topology.Store = "memory"
	if sim.Estimate(sc) > 20_000 || sim.MemoryEstimate(sc) > 32<<20 {
		return nil
	}
	r, err := sim.Run(context.Background(), sc, sim.Options{MaxRequests: 20_000, MaxMemory: 32 << 20})
	if err != nil {
		return []byte(err.Error())
	}
	var b bytes.Buffer
	if err := report.WriteJSON(&b, r); err != nil {
		return []byte(err.Error())
	}
	return b.Bytes()
}
