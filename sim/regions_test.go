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

// TestOneRegionIsShared: a regions topology of one region, whose store is
// named shared, decides as the shared store on every built-in, with or
// without replication (there is no other region to send to): the Result
// field for field but the topology's name and the regions' figures.
func TestOneRegionIsShared(t *testing.T) {
	everyBuiltin(t, false, func(name string, sc sim.Scenario) {
		if sc.Limit.Algorithm == "concurrency" {
			return
		}
		base := sc
		for _, lag := range []time.Duration{sim.ReplicationNone, 0} {
			sc := base
			sc.Topology.Kind = sim.Shared
			want := decisionsJSON(t, runFor(t, sc))
			sc.Topology.Kind, sc.Topology.ReplicationLag = sim.Regions, lag
			sc.Topology.Regions = []sim.Region{{Name: "shared", Servers: sc.Servers}}
			sc.Clients = append([]sim.Client(nil), sc.Clients...)
			for i := range sc.Clients {
				sc.Clients[i].Region = "shared"
			}
			r := runFor(t, sc)
			if r.Regions == nil || r.Regions.Delivered+r.Regions.Lost+r.Regions.Moved != 0 {
				t.Errorf("%s: regions figures %+v, want nothing sent or moved", name, r.Regions)
			}
			if got := decisionsJSON(t, r); got != want {
				t.Errorf("%s, replication lag %v: one region differs from the shared store", name, lag)
			}
		}
	})
}

// TestPropertyRegionsStayWithinTheirBound: on random regions, lags and
// traffic, no key admits more within one second than DesignBound1s:
// C(T) + (R − 1) × C(min(lag, T)), R × C(T) without replication.
func TestPropertyRegionsStayWithinTheirBound(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		alg := rapid.SampledFrom(algorithms.ExactNames()).Draw(t, "algorithm")
		p, _ := algorithms.WithDefaults(alg, algorithms.Params{
			Rate:   algorithms.Rate{N: rapid.Int64Range(1, 200).Draw(t, "rate"), Per: time.Second},
			Burst:  rapid.Int64Range(1, 100).Draw(t, "burst"),
			Window: time.Second,
		})
		regions := rapid.IntRange(1, 4).Draw(t, "regions")
		sc := syncedScenario(1, 0, alg, p, sim.RoundRobin)
		sc.Topology.Kind, sc.Servers = sim.Regions, 0
		sc.Topology.ReplicationLag = time.Duration(rapid.Int64Range(-1, 1500).Draw(t, "lag ms")) * time.Millisecond
		if sc.Topology.ReplicationLag < 0 {
			sc.Topology.ReplicationLag = sim.ReplicationNone
		}
		for r := range regions {
			n := rapid.IntRange(1, 3).Draw(t, fmt.Sprintf("servers %d", r))
			sc.Topology.Regions = append(sc.Topology.Regions, sim.Region{Name: fmt.Sprintf("r%d", r), Servers: n})
			sc.Servers += n
		}
		for i := range rapid.IntRange(1, 4).Draw(t, "clients") {
			rate := algorithms.Rate{N: rapid.Int64Range(1, 2000).Draw(t, fmt.Sprintf("rate %d", i)), Per: time.Second}
			sc.Clients = append(sc.Clients, sim.Client{Name: fmt.Sprintf("c%d", i), APIKey: fmt.Sprintf("k%d", rapid.IntRange(0, 1).Draw(t, fmt.Sprintf("key %d", i))),
				Region:  fmt.Sprintf("r%d", rapid.IntRange(0, regions-1).Draw(t, fmt.Sprintf("region %d", i))),
				Traffic: []sim.Traffic{{Pattern: rapid.SampledFrom([]sim.Pattern{sim.Constant, sim.Poisson}).Draw(t, fmt.Sprintf("pattern %d", i)), Rate: rate}}})
		}
		sc.Seed = rapid.Uint64().Draw(t, "seed")
		r, err := sim.Run(context.Background(), sc, sim.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range r.Keys {
			if k.DesignBound1s == 0 || k.MaxAllowed1s > k.DesignBound1s {
				t.Fatalf("key %s admitted %d within 1 s, bound %d (%d regions reached, lag %v, %s %+v)", k.Key, k.MaxAllowed1s, k.DesignBound1s, k.DesignServers, sc.Topology.ReplicationLag, alg, p)
			}
		}
	})
}
