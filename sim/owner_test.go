package sim_test

import (
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/ratelim/ratelim/algorithms"
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

// TestPropertyOwnerStaysWithinItsBound: on random owner topologies of
// gubernator's token bucket (nodes, sync waits, batch limits, windows,
// traffic), no key admits more within one second than DesignBound1s:
// (⌈T/D⌉ + 1) × (3N + 1) × Limit (topology.Owner's derivation).
func TestPropertyOwnerStaysWithinItsBound(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		window := time.Duration(rapid.SampledFrom([]int{200, 500, 1000, 3000, 60000}).Draw(t, "window ms")) * time.Millisecond
		limit := rapid.Int64Range(1, 50).Draw(t, "limit")
		p := algorithms.Params{Rate: algorithms.Rate{N: limit, Per: window}, Window: window}
		servers := rapid.IntRange(1, 6).Draw(t, "servers")
		var clients [][]sim.Traffic
		for i := range rapid.IntRange(1, 3).Draw(t, "clients") {
			rate := algorithms.Rate{N: rapid.Int64Range(1, 3000).Draw(t, fmt.Sprintf("rate %d", i)), Per: time.Second}
			tr := sim.Traffic{Pattern: rapid.SampledFrom([]sim.Pattern{sim.Constant, sim.Poisson, sim.OnOff}).Draw(t, fmt.Sprintf("pattern %d", i)), Rate: rate}
			if tr.Pattern == sim.OnOff {
				tr.On = time.Duration(rapid.IntRange(1, 10).Draw(t, fmt.Sprintf("on %d", i))) * 50 * time.Millisecond
				tr.Off = time.Duration(rapid.IntRange(1, 20).Draw(t, fmt.Sprintf("off %d", i))) * 50 * time.Millisecond
			}
			clients = append(clients, []sim.Traffic{tr})
		}
		sc := syncedScenario(servers, 0, "gubernator", p, rapid.SampledFrom([]sim.Balancer{sim.RoundRobin, sim.Random}).Draw(t, "balancer"), clients...)
		sc.Topology.Kind = sim.Owner
		sc.Topology.SyncWait = time.Duration(rapid.IntRange(1, 500).Draw(t, "sync wait ms")) * time.Millisecond
		sc.Topology.BatchLimit = rapid.IntRange(1, 1000).Draw(t, "batch limit")
		sc.Seed = rapid.Uint64().Draw(t, "seed")
		withinBound(t, sc, fmt.Sprintf("sync wait %v, limit %d per %v", sc.Topology.SyncWait, limit, window))
	})
}

// TestOwnerBoundIsReachedInPart: bursts that fill every node's fresh item
// on gubernator's token bucket reach at least 14% of the owner bound,
// (⌈T/D⌉ + 1) × (3N + 1) × Limit, on 2 to 8 nodes, limits of 1 to 50 and
// sync waits of 10 to 100 ms: the bound is safe, and loose by up to 7×
// against this adversary (topology.Owner's doc says why).
func TestOwnerBoundIsReachedInPart(t *testing.T) {
	const least = 0.14
	for _, n := range []int{2, 4, 8} {
		for _, limit := range []int64{1, 5, 50} {
			for _, w := range []time.Duration{10 * time.Millisecond, 100 * time.Millisecond} {
				p := algorithms.Params{Rate: algorithms.Rate{N: limit, Per: time.Minute}, Window: time.Minute}
				var tr []sim.Traffic
				for b := range 4 {
					tr = append(tr, sim.Traffic{Pattern: sim.Burst, Count: n * int(limit+1), At: 500*time.Millisecond + time.Duration(b)*(2*w+w/2)})
				}
				sc := syncedScenario(n, 0, "gubernator", p, sim.RoundRobin, tr)
				sc.Topology.Kind, sc.Topology.SyncWait, sc.Duration = sim.Owner, w, 2*time.Second
				k := runFor(t, sc).Keys[0]
				if reached := float64(k.MaxAllowed1s) / float64(k.DesignBound1s); reached < least || reached > 1 {
					t.Errorf("%d nodes, limit %d, sync wait %v: %d within 1 s of a bound of %d (%.2f, want %.2f to 1)", n, limit, w, k.MaxAllowed1s, k.DesignBound1s, reached, least)
				}
			}
		}
	}
}

// TestOwnerNodeCrash: while the server of a key's owner is down, the
// hits the other nodes send it and the broadcasts it would send are
// dropped, and the nodes answer from their caches: more is admitted than
// with every node up.
func TestOwnerNodeCrash(t *testing.T) {
	p := algorithms.Params{Rate: algorithms.Rate{N: 10, Per: time.Second}, Window: time.Second}
	sc := syncedScenario(3, 0, "gubernator", p, sim.RoundRobin, []sim.Traffic{{Pattern: sim.Constant, Rate: algorithms.Rate{N: 60, Per: time.Second}}})
	sc.Topology.Kind, sc.Topology.SyncWait, sc.Duration = sim.Owner, 50*time.Millisecond, 10*time.Second
	up := runFor(t, sc)
	owner := -1
	for i := range 3 {
		if sim.NewTopology(sc).OwnerOf(up.Keys[0].Key) == i {
			owner = i
		}
	}
	sc.Faults = []sim.Fault{{Kind: sim.Crash, Servers: []int{owner}, Start: 3 * time.Second, End: 6 * time.Second}}
	crashed := runFor(t, sc)
	if up.Owner.Dropped != 0 || crashed.Owner.Dropped == 0 {
		t.Errorf("dropped %d with every node up, %d with the owner's down: want none, then some", up.Owner.Dropped, crashed.Owner.Dropped)
	}
	if crashed.Keys[0].Allowed <= up.Keys[0].Allowed {
		t.Errorf("admitted %d with the owner's node down, %d with it up: want more", crashed.Keys[0].Allowed, up.Keys[0].Allowed)
	}
}
