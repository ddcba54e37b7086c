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
			// Compared whole: the name too (the files name themselves).
			if got, want := runJSON(t, back.Scenario), runJSON(t, applied.Scenario); !bytes.Equal(got, want) {
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

// TestWrittenRefuses names cases Written cannot write, each with the
// setting and the flag that makes the same run.
func TestWrittenRefuses(t *testing.T) {
	tests := []struct {
		builtin string
		set     scenarios.Setting
		want    string
	}{
		// Apply fills the window sliding-log needs; the file has none.
		{"race", scenarios.Setting{Name: "algorithm", Value: "sliding-log", Flag: "--algorithm"}, "--algorithm: written so, race.yaml:"},
		// A duration that cuts the outage short: the file's fault ends after it.
		{"store-outage", scenarios.Setting{Name: "duration", Value: "15s", Flag: "--duration"}, "--duration: written so, store-outage.yaml:"},
		// The file's sync_interval: is on a kind that reads none.
		{"sync-interval", scenarios.Setting{Name: "topology", Value: "shared", Flag: "--topology"}, "--topology: written so, sync-interval.yaml:"},
		// A file of limits: has no limit.shadow to write.
		{"api-quotas", scenarios.Setting{Name: "shadow", Value: "true", Flag: "--shadow"}, "--shadow: written as limit.shadow: this file has limits:"},
		// Renamed, the clients no longer match the file's own expectations.
		{"runaway-healthcheck", scenarios.Setting{Name: "clients[bastion-{i}].name", Value: "b-{i}", Flag: "--set clients[bastion-{i}].name"}, "--set clients[bastion-{i}].name: written so, runaway-healthcheck.yaml:"},
	}
	for _, tt := range tests {
		f, err := scenarios.Open(tt.builtin)
		if err != nil {
			t.Fatal(err)
		}
		g, err := scenarios.Apply(f, []scenarios.Setting{tt.set})
		if err != nil {
			t.Fatalf("%s %s: %v", tt.builtin, tt.set.Name, err)
		}
		_, err = scenarios.Written(g)
		wantFlag := fmt.Sprintf("(want the CLI's flag: --%s %s)", tt.set.Name, tt.set.Value)
		if strings.Contains(tt.set.Name, ".") {
			wantFlag = fmt.Sprintf("(want the CLI's flag: --set %s=%s)", tt.set.Name, tt.set.Value)
		}
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) || !strings.HasSuffix(err.Error(), wantFlag) {
			t.Errorf("%s %s=%s: %v (want %s... %s)", tt.builtin, tt.set.Name, tt.set.Value, err, tt.want, wantFlag)
		}
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
