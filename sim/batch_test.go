package sim_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/store"
	"pgregory.net/rapid"
)

// TestBatchedRedisDecidesAsMemory: on a Redis store, requests on different
// keys within a round trip are decided in one pipeline. That must change
// nothing but speed: every built-in, on the topologies that batch (shared,
// local), gives on miniredis (and on a real Redis with REDIS_URL) the
// Result the memory store gives, which decides one request at a time,
// field for field but the store's name.
func TestBatchedRedisDecidesAsMemory(t *testing.T) {
	stores := []string{"miniredis"}
	if url := os.Getenv("REDIS_URL"); url != "" {
		stores = append(stores, url)
	}
	for _, name := range scenarios.Builtin() {
		f, err := scenarios.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, kind := range []sim.TopologyKind{sim.Shared, sim.Local} {
			sc := f.Scenario
			sc.Topology.Kind = kind
			if sim.Placement(&sc) != nil {
				continue // a regions scenario runs on regions alone
			}
			// Seven seconds hold every built-in's first bursts, retries
			// and faults; miniredis takes ~0.3 ms a script.
			sc.Duration = min(sc.Duration, 7*time.Second)
			want := runJSON(t, sc)
			for _, st := range stores {
				sc.Topology.Store = st
				if got := runJSON(t, sc); got != want {
					t.Errorf("%s on %s, %s: the batched Redis run differs from memory's", name, kind, sc.Topology.StoreLabel())
				}
			}
		}
	}
}

// runJSON is sc's Result as JSON, its store's name left out.
func runJSON(t interface {
	Helper()
	Fatalf(string, ...any)
}, sc sim.Scenario) string {
	t.Helper()
	r, err := sim.Run(context.Background(), sc, sim.Options{})
	if err != nil {
		t.Fatalf("%s: %v", sc.Name, err)
	}
	r.Store = ""
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return string(b)
}

// TestPropertyBatchedRedisDecidesAsMemory: random small runs, with clients
// sharing keys, retrying at once or after Retry-After, bursting, on every
// algorithm and both batching topologies: the batched miniredis run is the
// memory run, field for field. A batch that held a request past the first
// instant a member's retry or lease release could be due, and so decided it
// before that retry or release, or that drew a random number out of turn,
// would show here.
func TestPropertyBatchedRedisDecidesAsMemory(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		algorithm := rapid.SampledFrom(append(algorithms.ExactNames(), "concurrency")).Draw(t, "algorithm")
		params, _ := algorithms.WithDefaults(algorithm, algorithms.Params{Rate: algorithms.Rate{N: rapid.Int64Range(1, 50).Draw(t, "rate"), Per: time.Second}, Burst: rapid.Int64Range(1, 20).Draw(t, "burst")})
		if algorithm == "concurrency" {
			// At most burst in flight, leases that outlive the run or
			// expire inside it.
			params = algorithms.Params{Burst: rapid.Int64Range(1, 8).Draw(t, "max_in_flight"),
				Window: time.Duration(rapid.IntRange(50, 2000).Draw(t, "lease_ttl_ms")) * time.Millisecond}
		}
		sc := sim.Scenario{
			Name: "batch", Duration: time.Second, Step: 250 * time.Millisecond, Seed: rapid.Uint64().Draw(t, "seed"),
			Servers: rapid.IntRange(1, 3).Draw(t, "servers"), Balancer: rapid.SampledFrom([]sim.Balancer{sim.RoundRobin, sim.Random, sim.KeyHash}).Draw(t, "balancer"),
			Limit: sim.Limit{Algorithm: algorithm, Params: params, Key: sim.KeyAPIKey},
			Topology: sim.Topology{Kind: rapid.SampledFrom([]sim.TopologyKind{sim.Shared, sim.Local}).Draw(t, "kind"),
				RTT: time.Duration(rapid.IntRange(0, 3000).Draw(t, "rtt_us")) * time.Microsecond, OnError: store.FailOpen, Clock: sim.ServerClock, PrimaryStopsAfter: sim.PrimaryNeverStops},
		}
		for i := range rapid.IntRange(1, 4).Draw(t, "clients") {
			c := sim.Client{Name: fmt.Sprintf("c%d", i), APIKey: fmt.Sprintf("k%d", rapid.IntRange(0, 1).Draw(t, "key")),
				Retry: sim.Retry{Policy: rapid.SampledFrom([]sim.RetryPolicy{sim.RetryNone, sim.RetryImmediate, sim.RetryAfter}).Draw(t, "retry"), Max: 3}}
			switch rapid.IntRange(0, 2).Draw(t, "pattern") {
			case 0:
				c.Traffic = []sim.Traffic{{Pattern: sim.Constant, Rate: algorithms.Rate{N: rapid.Int64Range(1, 150).Draw(t, "per_s"), Per: time.Second}}}
			case 1:
				c.Traffic = []sim.Traffic{{Pattern: sim.Poisson, Rate: algorithms.Rate{N: rapid.Int64Range(1, 150).Draw(t, "per_s"), Per: time.Second}}}
			default:
				c.Traffic = []sim.Traffic{{Pattern: sim.Burst, Count: rapid.IntRange(1, 40).Draw(t, "count"),
					At: time.Duration(rapid.IntRange(0, 900).Draw(t, "at_ms")) * time.Millisecond, Spread: time.Duration(rapid.IntRange(0, 50).Draw(t, "spread_ms")) * time.Millisecond}}
			}
			if algorithm == "concurrency" {
				// A fixed service time bounds a batch; a drawn one keeps
				// the client's requests out of batches.
				c.Service = sim.Service{Mean: time.Duration(rapid.IntRange(0, 400).Draw(t, "service_ms")) * time.Millisecond,
					Exponential: rapid.Bool().Draw(t, "exponential")}
			}
			sc.Clients = append(sc.Clients, c)
		}
		want := runJSON(t, sc)
		sc.Topology.Store = "miniredis"
		if got := runJSON(t, sc); got != want {
			t.Fatalf("the batched miniredis run differs from memory's:\n%s\n%s", got, want)
		}
	})
}

// TestBatchedRedisWaitsForLeases: one request in flight at most, each
// served in 50 ms, sent every 100 ms. Every request finds the previous
// one's lease given back, so all are admitted; a batch that gathered the
// next request before deciding the previous one would refuse it.
func TestBatchedRedisWaitsForLeases(t *testing.T) {
	sc := sim.Scenario{
		Name: "leases", Duration: 2 * time.Second, Step: time.Second, Seed: 1, Servers: 1, Balancer: sim.RoundRobin,
		Limit:    sim.Limit{Algorithm: "concurrency", Params: algorithms.Params{Burst: 1, Window: 10 * time.Second}, Key: sim.KeyAPIKey},
		Topology: sim.Topology{Kind: sim.Shared, OnError: store.FailOpen, Clock: sim.ServerClock, PrimaryStopsAfter: sim.PrimaryNeverStops},
		Clients: []sim.Client{{Name: "c", APIKey: "k", Service: sim.Service{Mean: 50 * time.Millisecond},
			Traffic: []sim.Traffic{{Pattern: sim.Constant, Rate: algorithms.Rate{N: 10, Per: time.Second}}}}},
	}
	want := runJSON(t, sc)
	sc.Topology.Store = "miniredis"
	if got := runJSON(t, sc); got != want {
		t.Fatalf("the batched miniredis run differs from memory's:\n%s\n%s", got, want)
	}
	r, err := sim.Run(context.Background(), sc, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c := r.Clients[0]; c.Rejected != 0 || c.Allowed != 20 {
		t.Errorf("memory run: %d allowed, %d rejected; want 20 and 0", c.Allowed, c.Rejected)
	}
}

// TestBatchedRedisReleasesBeforeRetries: one in flight, two clients at the
// same instant, served at once, the second retrying at once. The first's
// lease comes back a round trip later, at the very instant the second's
// retry is due: decided alone, the release is scheduled first and the
// retry is admitted. A batch that reserved the retry's place in the order
// and not the release's would refuse it again (the case rapid found).
func TestBatchedRedisReleasesBeforeRetries(t *testing.T) {
	sc := sim.Scenario{
		Name: "release-first", Duration: time.Second, Step: 250 * time.Millisecond, Servers: 1, Balancer: sim.RoundRobin,
		Limit: sim.Limit{Algorithm: "concurrency", Params: algorithms.Params{Burst: 1, Window: 50 * time.Millisecond}, Key: sim.KeyAPIKey},
		Topology: sim.Topology{Kind: sim.Shared, RTT: time.Microsecond, OnError: store.FailOpen, Clock: sim.ServerClock,
			PrimaryStopsAfter: sim.PrimaryNeverStops},
		Clients: []sim.Client{
			{Name: "c0", APIKey: "k", Retry: sim.Retry{Policy: sim.RetryNone, Max: 3},
				Traffic: []sim.Traffic{{Pattern: sim.Constant, Rate: algorithms.Rate{N: 1, Per: time.Second}}}},
			{Name: "c1", APIKey: "k", Retry: sim.Retry{Policy: sim.RetryImmediate, Max: 3},
				Traffic: []sim.Traffic{{Pattern: sim.Constant, Rate: algorithms.Rate{N: 1, Per: time.Second}}}},
		},
	}
	want := runJSON(t, sc)
	sc.Topology.Store = "miniredis"
	if got := runJSON(t, sc); got != want {
		t.Fatalf("the batched miniredis run differs from memory's:\n%s\n%s", got, want)
	}
	r, err := sim.Run(context.Background(), sc, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c := r.Clients[1]; c.Allowed != 1 || c.Retries != 1 {
		t.Errorf("c1: %d allowed after %d retries; want its first retry admitted, the lease back before it", c.Allowed, c.Retries)
	}
}
