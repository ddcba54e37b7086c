package main

import (
	"strings"
	"testing"

	"github.com/ratelim/ratelim/sim"
)

// TestDifferenceSaysWhyRacyDiffers: on the racy topology the difference
// table is followed by why live and simulated need not agree; on any other
// it is the table alone.
func TestDifferenceSaysWhyRacyDiffers(t *testing.T) {
	result := func(topology string, allowed int64) *sim.Result {
		return &sim.Result{Topology: topology, RTTMs: 0.5, Clients: []sim.ClientResult{{Name: "burst", Counts: sim.Counts{Allowed: allowed}}}}
	}
	for _, tt := range []struct {
		topology string
		note     bool
	}{{"racy", true}, {"shared", false}} {
		var out strings.Builder
		if err := writeDifference(&out, result(tt.topology, 78), result(tt.topology, 100), result(tt.topology, 100)); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(out.String(), "racy: the simulator writes each read back one rtt (0.5ms) after it"); got != tt.note {
			t.Errorf("%s: note printed %v, want %v:\n%s", tt.topology, got, tt.note, out.String())
		}
		if !strings.Contains(out.String(), "-22%") {
			t.Errorf("%s: the table lacks the difference:\n%s", tt.topology, out.String())
		}
	}
}
