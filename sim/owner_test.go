package sim_test

import (
	"testing"

	"github.com/ratelim/ratelim/sim"
)

// TestOwnerOfOneNodeIsLocal: with one server, its node owns every key and
// has no peer to hear from: every built-in decides as on one local jar,
// the Result field for field but the topology's name and the sends'
// figures.
func TestOwnerOfOneNodeIsLocal(t *testing.T) {
	everyBuiltin(t, true, func(name string, sc sim.Scenario) {
		sc.Servers, sc.Faults = 1, nil
		sc.Topology.Kind = sim.Local
		want := decisionsJSON(t, runFor(t, sc))
		sc.Topology.Kind = sim.Owner
		r := runFor(t, sc)
		if r.Owner == nil || r.Owner.Sent != 0 || r.Owner.Dropped != 0 {
			t.Errorf("%s: owner figures %+v, want nothing sent", name, r.Owner)
		}
		if got := decisionsJSON(t, r); got != want {
			t.Errorf("%s: an owner of one node differs from one local jar", name)
		}
	})
}
