package sim_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/store"
)

// TestSyncedAtItsLimitsIsSharedAndLocal: a synced topology that syncs at
// every request decides as the shared store, and one that never syncs as
// the local jars, on every built-in: the Result field for field but the
// topology's name and the sync's own figures.
func TestSyncedAtItsLimitsIsSharedAndLocal(t *testing.T) {
	everyBuiltin(t, false, func(name string, sc sim.Scenario) {
		for _, limit := range []struct {
			interval time.Duration
			as       sim.TopologyKind
		}{{0, sim.Shared}, {sim.SyncNever, sim.Local}} {
			sc.Topology.Kind = limit.as
			want := decisionsJSON(t, runFor(t, sc))
			sc.Topology.Kind, sc.Topology.SyncInterval = sim.Synced, limit.interval
			if got := decisionsJSON(t, runFor(t, sc)); got != want {
				t.Errorf("%s: synced every %v differs from %s", name, limit.interval, limit.as)
			}
		}
	})
}

// syncedScenario is a run on a synced topology of servers pushing every
// interval, alg's limit, and clients each on a key of its own.
func syncedScenario(servers int, interval time.Duration, alg string, p algorithms.Params, balancer sim.Balancer, traffic ...[]sim.Traffic) sim.Scenario {
	sc := sim.Scenario{
		Name: "synced", Duration: 6 * time.Second, Step: time.Second, Servers: servers, Seed: 1, Balancer: balancer,
		Limit:    sim.Limit{Algorithm: alg, Params: p, Key: sim.KeyAPIKey},
		Topology: sim.Topology{Kind: sim.Synced, SyncInterval: interval, RTT: 500 * time.Microsecond, OnError: store.FailOpen, Clock: sim.ServerClock, PrimaryStopsAfter: sim.PrimaryNeverStops},
	}
	for i, tr := range traffic {
		sc.Clients = append(sc.Clients, sim.Client{Name: fmt.Sprintf("c%d", i), APIKey: fmt.Sprintf("k%d", i), Traffic: tr})
	}
	return sc
}

// TestPropertySyncedStaysWithinItsBound: on random fleets, intervals,
// limits and traffic, no key of a synced run admits more within one
// second than SyncedBound allows it (topology.Synced's derivation).
func TestPropertySyncedStaysWithinItsBound(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		alg := rapid.SampledFrom(algorithms.ExactNames()).Draw(t, "algorithm")
		p, _ := algorithms.WithDefaults(alg, algorithms.Params{
			Rate:   algorithms.Rate{N: rapid.Int64Range(1, 200).Draw(t, "rate"), Per: time.Second},
			Burst:  rapid.Int64Range(1, 100).Draw(t, "burst"),
			Window: time.Duration(rapid.SampledFrom([]int{1, 2, 5}).Draw(t, "window")) * time.Second,
		})
		servers := rapid.IntRange(1, 6).Draw(t, "servers")
		interval := time.Duration(rapid.Int64Range(1, 1500).Draw(t, "interval ms")) * time.Millisecond
		balancer := rapid.SampledFrom([]sim.Balancer{sim.RoundRobin, sim.Random}).Draw(t, "balancer")
		var clients [][]sim.Traffic
		for i := range rapid.IntRange(1, 3).Draw(t, "clients") {
			rate := algorithms.Rate{N: rapid.Int64Range(1, 3000).Draw(t, fmt.Sprintf("rate %d", i)), Per: time.Second}
			tr := sim.Traffic{Pattern: rapid.SampledFrom([]sim.Pattern{"constant", "poisson", "on-off"}).Draw(t, fmt.Sprintf("pattern %d", i)), Rate: rate}
			if tr.Pattern == "on-off" {
				tr.On = time.Duration(rapid.IntRange(1, 20).Draw(t, fmt.Sprintf("on %d", i))) * 100 * time.Millisecond
				tr.Off = time.Duration(rapid.IntRange(1, 30).Draw(t, fmt.Sprintf("off %d", i))) * 100 * time.Millisecond
			}
			clients = append(clients, []sim.Traffic{tr})
		}
		sc := syncedScenario(servers, interval, alg, p, balancer, clients...)
		sc.Seed = rapid.Uint64().Draw(t, "seed")
		withinBound(t, sc, fmt.Sprintf("every %v, %s %+v", interval, alg, p))
	})
}

// TestSyncedBoundIsReached: the bound is tight, not only safe. An
// adversary that bursts on every server at once at the end of a second
// and again at its start (each server reading a full shared copy, or a
// fresh window, before any push) and then floods, reaches at least 40%
// of SyncedBound on every exact algorithm, fleet of 2 to 8, interval of
// 1 ms to 1 s, and limit tried; 41.7% is the least measured, where the
// refill within two intervals dominates (the unseen span is 2I at the
// worst, I on average).
func TestSyncedBoundIsReached(t *testing.T) {
	const least = 0.40
	for _, alg := range algorithms.ExactNames() {
		for _, n := range []int{2, 4, 8} {
			for _, interval := range []time.Duration{time.Millisecond, 100 * time.Millisecond, time.Second} {
				for _, rb := range [][2]int64{{10, 100}, {100, 100}, {1000, 10}, {100, 10}} {
					rate, burst := rb[0], rb[1]
					p, _ := algorithms.WithDefaults(alg, algorithms.Params{Rate: algorithms.Rate{N: rate, Per: time.Second}, Burst: burst, Window: time.Second})
					// Every server's share of what a copy admits in two
					// intervals, and one more.
					each := max(burst, rate) + rate*int64(2*interval/time.Millisecond)/1000 + 1
					sc := syncedScenario(n, interval, alg, p, sim.RoundRobin, []sim.Traffic{
						{Pattern: sim.Burst, Count: n * int(each), At: time.Second - time.Millisecond},
						{Pattern: sim.Burst, Count: n * int(each), At: time.Second},
						{Pattern: sim.Constant, Rate: algorithms.Rate{N: min(50_000, 50*(rate+burst)), Per: time.Second}, Start: time.Second},
					})
					sc.Duration = 3 * time.Second
					r, err := sim.Run(context.Background(), sc, sim.Options{})
					if err != nil {
						t.Fatal(err)
					}
					k := r.Keys[0]
					if reached := float64(k.MaxAllowed1s) / float64(k.DesignBound1s); reached < least || reached > 1 {
						t.Errorf("%s, %d servers every %v, rate %d burst %d: %d within 1 s of a bound of %d (%.2f, want %.2f to 1)", alg, n, interval, rate, burst, k.MaxAllowed1s, k.DesignBound1s, reached, least)
					}
				}
			}
		}
	}
}

// TestBlindBoundAtHugeRates: a bucket's most in a span is computed in
// 128 bits, not saturated before its division: 10¹¹/s over a second is
// 10¹¹ and its burst.
func TestBlindBoundAtHugeRates(t *testing.T) {
	alg, err := algorithms.New("token-bucket", algorithms.Params{Rate: algorithms.Rate{N: 100_000_000_000, Per: time.Second}, Burst: 5})
	if err != nil {
		t.Skip("the token bucket refuses the rate:", err)
	}
	got, ok := sim.SyncedBoundOf(alg, time.Second, 0, 1)
	if !ok || got != 100_000_000_005 {
		t.Errorf("C(1s) = %d, %v; want 100,000,000,005", got, ok)
	}
}
