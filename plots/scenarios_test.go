package plots

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/store"
)

// The scenarios the tests draw, built in Go as sim's own tests build them.

func perSecond(n int64) algorithms.Rate { return algorithms.Rate{N: n, Per: time.Second} }

// base is a 10 s run at a token bucket of 10/s with burst 20.
func base(name string, kind sim.TopologyKind, servers int) sim.Scenario {
	return sim.Scenario{
		Name: name, Duration: 10 * time.Second, Step: time.Second, Seed: 1,
		Servers: servers, Balancer: sim.RoundRobin,
		Limit:    sim.Limit{Algorithm: "token-bucket", Params: algorithms.Params{Rate: perSecond(10), Burst: 20}, Key: sim.KeyAuto},
		Topology: sim.Topology{Kind: kind, RTT: 500 * time.Microsecond, OnError: store.FailOpen, Clock: sim.ServerClock, PrimaryStopsAfter: sim.PrimaryNeverStops},
	}
}

func client(name, key string, rate int64, retry sim.RetryPolicy) sim.Client {
	return sim.Client{Name: name, APIKey: key, Traffic: []sim.Traffic{{Pattern: sim.Constant, Rate: perSecond(rate)}}, Retry: sim.Retry{Policy: retry}}
}

// localFour: one client hammering four servers, each with its own jar.
func localFour() sim.Scenario {
	sc := base("local-jars", sim.Local, 4)
	sc.Clients = []sim.Client{client("api-gateway", "gateway", 1000, sim.RetryNone)}
	return sc
}

// splitBrain: a partition cuts four servers in two; both sides admit.
// Two clients share the "shop" key; a latency spike follows.
func splitBrain() sim.Scenario {
	sc := base("split-brain-partition", sim.SplitBrain, 4)
	sc.Duration = 30 * time.Second
	sc.Balancer = sim.Random
	poisson := func(name, key string, rate int64) sim.Client {
		return sim.Client{Name: name, APIKey: key, Traffic: []sim.Traffic{{Pattern: sim.Poisson, Rate: perSecond(rate)}}}
	}
	sc.Clients = []sim.Client{
		poisson("checkout", "shop", 9),
		poisson("search", "shop", 6),
		poisson("batch-export", "batch", 40),
	}
	sc.Faults = []sim.Fault{
		{Kind: sim.Partition, Start: 10 * time.Second, End: 20 * time.Second, Groups: [][]int{{0, 1}, {2, 3}}},
		{Kind: sim.Latency, Start: 23 * time.Second, End: 26 * time.Second, RTT: 15 * time.Millisecond},
	}
	return sc
}

// outage: the shared store goes down for 2 s; the policy decides.
func outage(policy store.Policy) sim.Scenario {
	sc := base("store-outage-"+string(policy), sim.Shared, 2)
	sc.Topology.OnError = policy
	sc.Duration = 12 * time.Second
	sc.Clients = []sim.Client{
		client("mobile-app", "mobile", 30, sim.RetryBackoff),
		client("partner-sync", "partner", 8, sim.RetryNone),
	}
	sc.Faults = []sim.Fault{{Kind: sim.Outage, Start: 4 * time.Second, End: 6 * time.Second}}
	return sc
}

// leaky: a leaky bucket queues what a token bucket would reject, so the
// latency panel shows the queueing; a clock skew and a latency spike too.
func leaky() sim.Scenario {
	sc := base("leaky-queue", sim.Shared, 2)
	sc.Duration = 20 * time.Second
	sc.Limit = sim.Limit{Algorithm: "leaky-bucket", Params: algorithms.Params{Rate: perSecond(10), Burst: 20}, Key: sim.KeyAuto}
	sc.Clients = []sim.Client{
		{Name: "uploader", APIKey: "uploads", Traffic: []sim.Traffic{{Pattern: sim.Poisson, Rate: perSecond(12)}}, Retry: sim.Retry{Policy: sim.RetryAfter}},
		{Name: "cron", APIKey: "cron", Traffic: []sim.Traffic{{Pattern: sim.Burst, Count: 30, At: 7 * time.Second}}},
	}
	sc.Faults = []sim.Fault{
		{Kind: sim.Latency, Start: 12 * time.Second, End: 15 * time.Second, RTT: 20 * time.Millisecond},
		{Kind: sim.ClockSkew, Start: 13 * time.Second, End: 18 * time.Second, Servers: []int{1}, Offset: time.Second},
	}
	return sc
}

// runaway: sixteen bastions and a scheduler, the DESIGN.md example, on a
// fixed window with per-server jars: more clients than panels.
func runaway() sim.Scenario {
	sc := base("runaway-healthcheck", sim.Local, 4)
	sc.Duration = 30 * time.Second
	sc.Limit = sim.Limit{Algorithm: "fixed-window", Params: algorithms.Params{Rate: perSecond(10), Window: time.Second}, Key: sim.KeyAuto}
	for i := 1; i <= 16; i++ {
		name := fmt.Sprintf("bastion-%d", i)
		sc.Clients = append(sc.Clients, sim.Client{Name: name, APIKey: name,
			Traffic: []sim.Traffic{{Pattern: sim.Constant, Rate: perSecond(200), Start: 5 * time.Second, Stop: 25 * time.Second}},
			Retry:   sim.Retry{Policy: sim.RetryNone}})
	}
	sc.Clients = append(sc.Clients, sim.Client{Name: "scheduler", APIKey: "scheduler",
		Traffic: []sim.Traffic{{Pattern: sim.Burst, Count: 42, At: 12 * time.Second}}})
	sc.Faults = []sim.Fault{{Kind: sim.Outage, Start: 22 * time.Second, End: 25 * time.Second}}
	return sc
}

func mustRun(t testing.TB, sc sim.Scenario) *sim.Result {
	t.Helper()
	r, err := sim.Run(context.Background(), sc, sim.Options{})
	if err != nil {
		t.Fatalf("%s: %v", sc.Name, err)
	}
	return r
}

// reviewCases are the runs every figure test draws.
func reviewCases() []struct {
	name string
	sc   sim.Scenario
	by   string
} {
	return []struct {
		name string
		sc   sim.Scenario
		by   string
	}{
		{"local-4-servers", localFour(), ""},
		{"split-brain", splitBrain(), ""},
		{"split-brain-by-key", splitBrain(), "key"},
		{"outage-fail-closed", outage(store.FailClosed), ""},
		{"outage-fail-open", outage(store.FailOpen), ""},
		{"leaky-bucket-latency", leaky(), ""},
		{"runaway-17-clients", runaway(), ""},
	}
}
