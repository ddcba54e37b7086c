package scenarios

import (
	"strings"
	"testing"
)

// TestApplyRefusesAFieldTheRunDoesNotRead: a setting from outside the
// file whose field the run it makes never reads (its algorithm or its
// topology, as the settings leave them) is refused, saying what would
// read it; the same field the run reads is taken.
func TestApplyRefusesAFieldTheRunDoesNotRead(t *testing.T) {
	open := func(name string) *File {
		f, err := Open(name)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	partition, window, quotas := open("partition"), open("window-boundary"), open("api-quotas")
	for _, tc := range []struct {
		f    *File
		sets []Setting
		want string // "" taken
	}{
		{partition, []Setting{{"window", "1s", "sweep window"}},
			"sweep window: token-bucket reads no window (want rate or burst, or --algorithm fixed-window, or sweep algorithm=fixed-window)"},
		{partition, []Setting{{"burst", "10", "sweep burst"}, {"algorithm", "fixed-window", "--algorithm"}},
			"sweep burst: fixed-window reads no burst (want rate or window, or --algorithm token-bucket, or sweep algorithm=token-bucket)"},
		{partition, []Setting{{"topology.failover_after", "0s", "sweep topology.failover_after"}, {"topology", "shared", "--topology"}},
			"sweep topology.failover_after: shared reads no failover_after (want --topology split-brain, or sweep topology=split-brain)"},
		{partition, []Setting{{"topology.rtt", "5ms", "--set topology.rtt"}, {"topology", "local", "--topology"}},
			"--set topology.rtt: local reads no rtt: a local jar is in the server's memory, with no store (want --topology shared)"},
		{partition, []Setting{{"rtt", "5ms", "--rtt"}, {"topology", "local", "--topology"}},
			"--rtt: local reads no rtt"},
		{window, []Setting{{"burst", "5", "--burst"}},
			"--burst: fixed-window reads no burst (want rate or window, or --algorithm token-bucket)"},
		{window, []Setting{{"limit.burst", "5", "expect[0].with.limit.burst"}},
			"expect[0].with.limit.burst: fixed-window reads no burst (want rate or window, or with: {algorithm: token-bucket})"},
		{quotas, []Setting{{"limits[hourly].burst", "5", "--set limits[hourly].burst"}},
			"--set limits[hourly].burst: fixed-window reads no burst"},
		{window, []Setting{{"limit.delay", "5", "--set limit.delay"}},
			"--set limit.delay: fixed-window reads no delay"},
		// What the run reads is taken.
		{window, []Setting{{"burst", "5", "--burst"}, {"algorithm", "token-bucket", "--algorithm"}}, ""},
		{quotas, []Setting{{"limits[per-second].burst", "5", "--set limits[per-second].burst"}}, ""},
		{partition, []Setting{{"topology.failover_after", "5s", "--set topology.failover_after"}}, ""},
		{partition, []Setting{{"burst", "30", "--burst"}}, ""},
		{partition, []Setting{{"limit.name", "x", "--set limit.name"}, {"topology", "local", "--topology"}}, ""},
	} {
		_, err := Apply(tc.f, tc.sets)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v, want it taken", tc.sets, err)
		case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)):
			t.Errorf("%v:\n got %v\nwant %s…", tc.sets, err, tc.want)
		}
	}
	// Set in an Apply of a file Apply made (a --vs over the flags): the
	// run it makes is checked.
	flags, err := Apply(window, []Setting{{"algorithm", "token-bucket", "--algorithm"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Apply(flags, []Setting{{"burst", "5", "--vs burst"}}); err != nil {
		t.Errorf("--vs burst over --algorithm token-bucket: %v, want it taken", err)
	}
}

// TestApplyTakesTheFilesTopologyMapping: --set topology={…} is the
// file's topology: mapping, whole, as the file takes it (--topology KIND
// is the kind alone); an index past any int is out of range, not a name.
func TestApplyTakesTheFilesTopologyMapping(t *testing.T) {
	partition, err := Open("partition")
	if err != nil {
		t.Fatal(err)
	}
	got, err := Apply(partition, []Setting{{"topology", "{kind: split-brain, failover_after: 5s}", "--set topology"}})
	if err != nil {
		t.Fatal(err)
	}
	if k, fa := got.Scenario.Topology.Kind, got.Scenario.Topology.FailoverAfter; k != "split-brain" || fa.String() != "5s" {
		t.Errorf("topology %s, failover_after %s; want split-brain, 5s", k, fa)
	}
	got, err = Apply(partition, []Setting{{"topology", "{kind: shared}", "--set topology"}})
	if err != nil || got.Scenario.Topology.Kind != "shared" {
		t.Errorf("--set topology={kind: shared}: %v, want a shared topology", err)
	}
	_, err = Apply(partition, []Setting{{"faults[99999999999999999999].start", "1s", "--set faults[99999999999999999999].start"}})
	if err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("faults[99999999999999999999]: %v, want out of range", err)
	}
}
