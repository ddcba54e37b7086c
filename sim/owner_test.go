package sim_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/sim"
)

// TestOwnerOfOneNodeIsLocal: with one server, its node owns every key and
// has no peer to hear from: every built-in decides as on one local jar,
// the Result field for field but the topology's name and the sends'
// figures.
func TestOwnerOfOneNodeIsLocal(t *testing.T) {
	for _, name := range scenarios.Builtin() {
		f, err := scenarios.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := f.Scenario
		if sc.Topology.Breaker != nil || sc.Limit.Algorithm == "concurrency" || sc.Topology.Kind == sim.Regions {
			continue
		}
		sc.Duration = min(sc.Duration, 20*time.Second)
		sc.Servers, sc.Faults = 1, nil
		sc.Topology.Kind = sim.Local
		want := syncedJSON(t, sc)
		sc.Topology.Kind = sim.Owner
		r, err := sim.Run(context.Background(), sc, sim.Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if r.Owner == nil || r.Owner.Sent != 0 || r.Owner.Dropped != 0 {
			t.Errorf("%s: owner figures %+v, want nothing sent", name, r.Owner)
		}
		r.Owner = nil
		for i := range r.Keys {
			r.Keys[i].DesignBound1s, r.Keys[i].DesignServers = 0, 0
		}
		for i := range r.Findings {
			r.Findings[i].Text = ""
		}
		// A node's cache is named for the node.
		if got := strings.ReplaceAll(resultJSON(t, r), `"node-0"`, `"server-0"`); got != want {
			t.Errorf("%s: an owner of one node differs from one local jar", name)
		}
	}
}
