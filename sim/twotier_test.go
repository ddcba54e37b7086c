package sim_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/sim"
)

// TestTwoTierWithRoomyLocalTiersIsShared: local tiers that never refuse
// leave every decision to the shared store, on every built-in the local
// tier can stand in front of: the Result field for field but the
// topology's name and the tier's own figures.
func TestTwoTierWithRoomyLocalTiersIsShared(t *testing.T) {
	everyBuiltin(t, true, func(name string, sc sim.Scenario) {
		sc.Topology.Kind = sim.Shared
		want := decisionsJSON(t, runFor(t, sc))
		sc.Topology.Kind = sim.TwoTier
		sc.Topology.Local = &sim.LocalTier{Rate: algorithms.Rate{N: 1 << 30, Per: time.Second}, Burst: 1 << 30}
		r := runFor(t, sc)
		if r.TwoTier == nil || r.TwoTier.RefusedLocally != 0 {
			t.Errorf("%s: two-tier figures %+v, want none refused locally", name, r.TwoTier)
		}
		if got := decisionsJSON(t, r); got != want {
			t.Errorf("%s: two-tier with roomy local tiers differs from shared", name)
		}
	})
}

// TestPropertyTwoTierStaysWithinItsBound: with random local tiers, store
// outages and traffic, no key admits more within one second than
// DesignBound1s: the shared limit and the local tiers, or the local tiers
// alone for a key that failed open.
func TestPropertyTwoTierStaysWithinItsBound(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		alg := rapid.SampledFrom(algorithms.ExactNames()).Draw(t, "algorithm")
		p, _ := algorithms.WithDefaults(alg, algorithms.Params{
			Rate:   algorithms.Rate{N: rapid.Int64Range(1, 200).Draw(t, "rate"), Per: time.Second},
			Burst:  rapid.Int64Range(1, 100).Draw(t, "burst"),
			Window: time.Second,
		})
		servers := rapid.IntRange(1, 6).Draw(t, "servers")
		var clients [][]sim.Traffic
		for i := range rapid.IntRange(1, 3).Draw(t, "clients") {
			rate := algorithms.Rate{N: rapid.Int64Range(1, 3000).Draw(t, fmt.Sprintf("rate %d", i)), Per: time.Second}
			clients = append(clients, []sim.Traffic{{Pattern: rapid.SampledFrom([]sim.Pattern{sim.Constant, sim.Poisson}).Draw(t, fmt.Sprintf("pattern %d", i)), Rate: rate}})
		}
		sc := syncedScenario(servers, 0, alg, p, rapid.SampledFrom([]sim.Balancer{sim.RoundRobin, sim.Random}).Draw(t, "balancer"), clients...)
		sc.Topology.Kind = sim.TwoTier
		sc.Topology.Local = &sim.LocalTier{Rate: algorithms.Rate{N: rapid.Int64Range(1, 300).Draw(t, "local rate"), Per: time.Second}, Burst: rapid.Int64Range(1, 100).Draw(t, "local burst")}
		if rapid.Bool().Draw(t, "outage") {
			sc.Faults = []sim.Fault{{Kind: sim.Outage, Start: 2 * time.Second, End: 4 * time.Second}}
		}
		sc.Seed = rapid.Uint64().Draw(t, "seed")
		withinBound(t, sc, fmt.Sprintf("local %+v, %s %+v", *sc.Topology.Local, alg, p))
	})
}

// TestTwoTierLocalTiersHoldAnOutage: failing open through an outage, a
// flood spread over the servers is held by their local tiers to what
// the design allows, and reaches it: N × (burst + rate × 1 s).
func TestTwoTierLocalTiersHoldAnOutage(t *testing.T) {
	p, _ := algorithms.WithDefaults("token-bucket", algorithms.Params{Rate: algorithms.Rate{N: 100, Per: time.Second}, Burst: 100})
	sc := syncedScenario(4, 0, "token-bucket", p, sim.RoundRobin, []sim.Traffic{{Pattern: sim.Constant, Rate: algorithms.Rate{N: 4000, Per: time.Second}}})
	sc.Topology.Kind = sim.TwoTier
	sc.Topology.Local = &sim.LocalTier{Rate: algorithms.Rate{N: 30, Per: time.Second}, Burst: 30}
	sc.Faults = []sim.Fault{{Kind: sim.Outage, Start: 2 * time.Second, End: 5 * time.Second}}
	r, err := sim.Run(context.Background(), sc, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	k := r.Keys[0]
	// 4 × (30 + 30/s × 1 s); the local buckets were emptied before the
	// outage, so a second of it admits 4 × 30 and at most 4 × 60.
	if k.DesignBound1s != 240 || k.MaxAllowed1s < 120 || k.MaxAllowed1s > 240 || k.FailedOpen < 3*120-4 {
		t.Errorf("most within 1 s %d, bound %d, failed open %d; want at most the bound of 240, at least 120, and 3 s × 120 failed open", k.MaxAllowed1s, k.DesignBound1s, k.FailedOpen)
	}
	if !hasKind(r.Findings, sim.FindingDesignBound) {
		t.Errorf("findings %v, want design-bound", r.Findings)
	}
}

func hasKind(fs []sim.Finding, kind sim.FindingKind) bool {
	for _, f := range fs {
		if f.Kind == kind {
			return true
		}
	}
	return false
}
