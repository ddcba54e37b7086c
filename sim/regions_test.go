package sim_test

import (
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
		withinBound(t, sc, fmt.Sprintf("lag %v, %s %+v", sc.Topology.ReplicationLag, alg, p))
	})
}

// TestRegionsBoundIsReached: the regions bound is tight, not only safe.
// Each region bursts at a second's end and at its start, before the
// others' admissions reach it, then floods: at least 60% of the bound on
// every exact algorithm, 2 to 4 regions and lags of 1 ms to 1 s, and
// without replication (62.5% the least measured).
func TestRegionsBoundIsReached(t *testing.T) {
	const least = 0.60
	worst := 1.0
	for _, alg := range algorithms.ExactNames() {
		for _, regions := range []int{2, 4} {
			for _, lag := range []time.Duration{time.Millisecond, 100 * time.Millisecond, time.Second, sim.ReplicationNone} {
				for _, rb := range [][2]int64{{10, 100}, {100, 100}, {1000, 10}, {100, 10}} {
					rate, burst := rb[0], rb[1]
					p, _ := algorithms.WithDefaults(alg, algorithms.Params{Rate: algorithms.Rate{N: rate, Per: time.Second}, Burst: burst, Window: time.Second})
					sc := syncedScenario(regions, 0, alg, p, sim.RoundRobin)
					sc.Topology.Kind, sc.Topology.ReplicationLag, sc.Duration = sim.Regions, lag, 3*time.Second
					each := max(burst, rate) + rate*int64(max(lag, 0)/time.Millisecond)/1000 + 1
					for r := range regions {
						name := fmt.Sprintf("r%d", r)
						sc.Topology.Regions = append(sc.Topology.Regions, sim.Region{Name: name, Servers: 1})
						sc.Clients = append(sc.Clients, sim.Client{Name: "c" + name, APIKey: "k", Region: name, Traffic: []sim.Traffic{
							{Pattern: sim.Burst, Count: int(each), At: time.Second - time.Millisecond},
							{Pattern: sim.Burst, Count: int(each), At: time.Second},
							{Pattern: sim.Constant, Rate: algorithms.Rate{N: min(20_000, 20*(rate+burst)), Per: time.Second}, Start: time.Second},
						}})
					}
					k := runFor(t, sc).Keys[0]
					reached := float64(k.MaxAllowed1s) / float64(k.DesignBound1s)
					worst = min(worst, reached)
					if reached < least || reached > 1 {
						t.Errorf("%s, %d regions, lag %v, rate %d burst %d: %d within 1 s of a bound of %d (%.2f, want %.2f to 1)", alg, regions, lag, rate, burst, k.MaxAllowed1s, k.DesignBound1s, reached, least)
					}
				}
			}
		}
	}
	t.Logf("the least reached: %.3f of the bound", worst)
}
