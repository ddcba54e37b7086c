package live

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/scenarios/scenariotest"
	"github.com/ratelim/ratelim/sim"
)

// startAtPhase waits until the wall clock is phase past a whole second, so
// that a run started now has its wall-clock second boundaries at phase
// before each whole second of run time. It is not a timing assertion: a
// late wake-up moves the boundaries a little, and the simulator fed the
// observed arrivals takes the run's real start (LoadResult.Started).
func startAtPhase(phase time.Duration) {
	now := time.Now()
	wait := (phase - time.Duration(now.UnixNano())%time.Second + time.Second) % time.Second
	time.Sleep(wait)
}

// liveAndObserved runs sc for real against an in-process fleet on the
// memory store and in the simulator fed the arrivals the load run achieved.
func liveAndObserved(t *testing.T, sc sim.Scenario) (live *LoadResult, observed *sim.Result) {
	t.Helper()
	fleet := startFleet(t, sc, "memory")
	// Whole wall-clock seconds fall half a second into each second of the
	// run: far from the scenarios' bursts and step ends, so that the loop
	// back's latency cannot move a request across one.
	startAtPhase(500 * time.Millisecond)
	live, observed = loadAndReplay(t, sc, fleet, fleet.URLs)
	t.Logf("%s; run started at %s", live.Audit.Lateness(), live.Started.Format(time.RFC3339Nano))
	if b := live.Audit.Breaches(); b != 0 || live.Audit.TransportErrors != 0 {
		t.Errorf("audit: %+v", live.Audit)
	}
	return live, observed
}

// within reports whether live is within 5% of simulated, or one request.
func within(live, simulated int64) bool {
	diff := float64(live - simulated)
	return diff <= max(0.05*float64(simulated), 1) && -diff <= max(0.05*float64(simulated), 1)
}

// TestFixedWindowLiveAgreesOnTheWallClock: a live fleet's fixed windows
// are whole wall-clock seconds, and the simulator fed the observed
// arrivals puts its windows in the same places (its WallClock is the run's
// start), so the two admit the same. window-boundary's bursts at 1.90–1.95s
// and 2.00–2.05s of run time straddle the simulator's boundary at 2s when
// windows are aligned to the run's start (200 admitted), and fall in one
// wall-clock second when the run starts half a second into one (100
// admitted live).
func TestFixedWindowLiveAgreesOnTheWallClock(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the live run takes 5 s of wall time")
	}
	wallClock(t)
	sc := scenariotest.Builtin(t, "window-boundary")
	live, observed := liveAndObserved(t, sc)
	for i, c := range live.Clients {
		o := observed.Clients[i]
		t.Logf("%s: allowed %d live, %d simulated on the observed arrivals (wall clock %s)", c.Name, c.Allowed, o.Allowed, observed.WallClock)
		if !within(c.Allowed, o.Allowed) {
			t.Errorf("%s: allowed %d live, %d simulated on the same arrivals: more than 5%% apart", c.Name, c.Allowed, o.Allowed)
		}
	}
}

// TestLeakyBucketServedLiveAgrees: a leaky bucket admits a burst at once
// and serves it at its rate, each request held its Delay by the
// middleware; the load run reads the hold from the answer
// (httplimit.DelayHeader), so its timeline's served column is the
// simulator's on the same arrivals: 20 requests at 0.45s into a 10/s
// queue are served at 0.45s, 0.55s, ..., 2.35s, 6, 10 and 4 in the run's
// three seconds, not 20 in the first.
func TestLeakyBucketServedLiveAgrees(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the live run takes 3 s of wall time")
	}
	wallClock(t)
	sc := scenariotest.Builtin(t, "window-boundary")
	sc.Name, sc.Duration, sc.Step = "leaky-served", 3*time.Second, time.Second
	sc.Limit.Algorithm = "leaky-bucket"
	sc.Limit.Params = algorithms.Params{Rate: algorithms.Rate{N: 10, Per: time.Second}, Burst: 20}
	sc.Clients[0].Traffic = []sim.Traffic{{Pattern: sim.Burst, Count: 20, At: 450 * time.Millisecond, Spread: 10 * time.Millisecond}}
	live, observed := liveAndObserved(t, sc)
	steps := len(live.Timeline) / len(live.Clients)
	if steps != 3 || len(observed.Timeline) != len(live.Timeline) {
		t.Fatalf("timelines of %d and %d rows, want 3 steps of %d clients", len(live.Timeline), len(observed.Timeline), len(live.Clients))
	}
	var liveServed, simServed []int64
	for _, row := range live.Timeline {
		liveServed = append(liveServed, row.Served)
	}
	for _, row := range observed.Timeline {
		simServed = append(simServed, row.Served)
	}
	t.Logf("served per step: %v live, %v simulated on the observed arrivals", liveServed, simServed)
	for i := range liveServed {
		if !within(liveServed[i], simServed[i]) {
			t.Errorf("step %d: served %d live, %d simulated on the same arrivals: more than one request or 5%% apart", i, liveServed[i], simServed[i])
		}
	}
	if c, o := live.Clients[0], observed.Clients[0]; c.Allowed != o.Allowed {
		t.Errorf("allowed %d live, %d simulated", c.Allowed, o.Allowed)
	}
}

// TestParseHeld: the hold an answer states is read as decimal seconds, and
// nothing a server writes there can make it negative or absurd.
func TestParseHeld(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"", 0},
		{"0.1", 100 * time.Millisecond},
		{" 1.9 ", 1900 * time.Millisecond},
		{"0.000001", time.Microsecond},
		{"-1", 0},
		{"NaN", 0},
		{"+Inf", 0},
		{"1e300", 24 * time.Hour},
		{"soon", 0},
	}
	for _, tt := range tests {
		if got := parseHeld(tt.in); got != tt.want {
			t.Errorf("parseHeld(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// A client whose service times are drawn (exponential) under a limit on
// requests in flight: the load run draws one per request it sends, the
// simulator one per request it admits, so the two hold different leases
// unless the simulator of the run's arrivals holds each for what it asked
// live (Observation.Service, ObservedScenario's Traffic.Services).
func TestDrawnServiceTimesLiveAgree(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a 4 s live run")
	}
	wallClock(t)
	sc := slowClient(3, 30*time.Second, 20, 0, 4*time.Second)
	sc.Clients[0].Service = sim.Service{Mean: 300 * time.Millisecond, Exponential: true}
	fleet := startFleet(t, sc, "memory")
	res, observed := loadAndReplay(t, sc, fleet, fleet.URLs)
	c, o := res.Clients[0], observed.Clients[0]
	t.Logf("%s; %s; allowed %d live, %d simulated on the observed arrivals and service times", res.Audit.Lateness(), res.Audit.Deciding(), c.Allowed, o.Allowed)
	if diff := c.Allowed - o.Allowed; diff > o.Allowed/20+1 || -diff > o.Allowed/20+1 {
		t.Errorf("allowed %d live, %d simulated on the same arrivals and service times: more than 5%% apart", c.Allowed, o.Allowed)
	}
}

// A lease is held from its decision until the server gives it back, which
// is later than the service time asked (the server returns from the
// request first): the answer's ReleasedAtHeader trailer says when, and the
// load run gives the simulator that hold, never the asked one, for every
// request admitted on a fleet that gives leases back.
func TestLoadRecordsTheHoldTheFleetHad(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a 1 s live run")
	}
	wallClock(t)
	const asked = 200 * time.Millisecond
	sc := slowClient(3, 30*time.Second, 5, asked, time.Second)
	fleet := startFleet(t, sc, "memory")
	res, err := Load(context.Background(), sc, LoadOptions{Targets: fleet.URLs})
	if err != nil {
		t.Fatal(err)
	}
	admitted := 0
	for _, o := range res.Observations {
		if !o.Decision.Allowed || o.NoAnswer {
			continue
		}
		admitted++
		if o.Service <= asked || o.Service > asked+time.Minute {
			t.Errorf("request %d: held %v, want the fleet's hold: over the %v asked (the trailer %s unread?)", o.Seq, o.Service, asked, ReleasedAtHeader)
		}
	}
	if admitted == 0 {
		t.Fatal("nothing admitted")
	}
	t.Logf("%d admitted, each held longer than the %v asked", admitted, asked)
}

// TestSimulatedClusterLiveAgrees: a live fleet on a simulated Redis
// Cluster (cluster-partition made short: node_timeout 1 s, the partition
// from 1 s to 5 s) routes each key to its slot's master as the simulator
// does, fences, fails over at the instants it drew and waits the timeout
// for a master across the partition; the simulator fed the arrivals the
// load run achieved and the fleet's draws admits and fails open what the
// fleet did, client by client, with a circuit breaker in front of each
// server's store calls or without, and every client that waited for a master
// across the partition (the 100 ms timeout) or retried CLUSTERDOWN waited
// live too.
func TestSimulatedClusterLiveAgrees(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the live runs take 12 s of wall time")
	}
	wallClock(t)
	for _, breaker := range []*sim.Breaker{nil, {Failures: 5, Cooldown: time.Second}} {
		name := "no breaker"
		if breaker != nil {
			name = "a breaker of 5 failures and 1s"
		}
		t.Run(name, func(t *testing.T) {
			sc := scenariotest.Builtin(t, "cluster-partition")
			sc.Duration, sc.Topology.NodeTimeout, sc.Topology.Breaker = 6*time.Second, time.Second, breaker
			sc.Faults[0].Start, sc.Faults[0].End = time.Second, 5*time.Second
			live, observed := liveAndObserved(t, sc)
			for i, c := range live.Clients {
				o := observed.Clients[i]
				t.Logf("%s: allowed %d live, %d simulated; failed open %d and %d; p99 %gms and %gms", c.Name, c.Allowed, o.Allowed, c.FailedOpen, o.FailedOpen, c.LatencyMs.P99, o.LatencyMs.P99)
				// A breaker opens when its fifth wait ends, live when the
				// wall clock says, simulated a timeout (or CLUSTERDOWN's
				// drawn retries) after the request: which few requests
				// meet it open is not in the arrivals. So with one, the
				// two agree within 10% or 5 requests, and the waits are
				// not compared.
				close := within
				if breaker != nil {
					close = func(a, b int64) bool { d := max(a-b, b-a); return d <= 5 || float64(d) <= 0.1*float64(b) }
				}
				if !close(c.Allowed, o.Allowed) || !close(c.FailedOpen, o.FailedOpen) {
					t.Errorf("%s: allowed %d and failed open %d live, %d and %d simulated on the same arrivals: too far apart", c.Name, c.Allowed, c.FailedOpen, o.Allowed, o.FailedOpen)
				}
				// What a request waited (the timeout, CLUSTERDOWN's
				// retries) is the least its answer took live: a loaded
				// machine only adds.
				if breaker == nil && o.LatencyMs.P99 >= 50 && c.LatencyMs.P99 < 0.9*o.LatencyMs.P99 {
					t.Errorf("%s's p99 %gms live, want at least the %gms it waited in the simulator", c.Name, c.LatencyMs.P99, o.LatencyMs.P99)
				}
			}
		})
	}
}

// TestTwoTierLiveAgrees: a two-tier fleet's local buckets answer before
// the shared store (memory, and a real redis-server when installed), live
// as in the simulator fed the observed arrivals: each client's admissions
// within 5% (or one request) of the simulator's, with both tiers
// refusing.
func TestTwoTierLiveAgrees(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the live run takes 4 s of wall time")
	}
	sc := sim.Scenario{Name: "two-tier", Duration: 4 * time.Second, Step: time.Second, Servers: 2, Seed: 1, Balancer: sim.RoundRobin,
		Limit: sim.Limit{Algorithm: "token-bucket", Params: algorithms.Params{Rate: algorithms.Rate{N: 20, Per: time.Second}, Burst: 10}, Key: sim.KeyAPIKey},
		Topology: sim.Topology{Kind: sim.TwoTier, RTT: 0, OnError: "fail-open", Clock: sim.ServerClock, PrimaryStopsAfter: sim.PrimaryNeverStops,
			Local: &sim.LocalTier{Rate: algorithms.Rate{N: 15, Per: time.Second}, Burst: 5}},
		Clients: []sim.Client{
			{Name: "flood", APIKey: "flood", Traffic: []sim.Traffic{{Pattern: sim.Constant, Rate: algorithms.Rate{N: 40, Per: time.Second}}}},
			{Name: "calm", APIKey: "calm", Traffic: []sim.Traffic{{Pattern: sim.Constant, Rate: algorithms.Rate{N: 4, Per: time.Second}}}},
		},
	}
	agreeOnStores(t, sc, func(t *testing.T, observed *sim.Result) {
		// Both tiers refuse: the flood's 20/s a server is past its
		// local 15/s, and the 30/s they pass past the shared 20/s.
		if r := observed.Totals(); observed.TwoTier == nil || observed.TwoTier.RefusedLocally == 0 || r.Rejected <= observed.TwoTier.RefusedLocally {
			t.Fatalf("the simulator's two-tier figures %+v, %d refused in all: want refusals by both tiers", observed.TwoTier, r.Rejected)
		}
	})
}

// TestSyncedLiveAgrees: a synced fleet (each server on its own memory,
// pushing to the shared store every 200 ms on the wall clock's grid, as
// the simulator does) admits, client by client, what the simulator fed
// the observed arrivals admits, within 5% or one request, on memory and on
// a real redis-server when installed; and more than one exact store
// would, which is the design's point.
func TestSyncedLiveAgrees(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the live run takes 4 s of wall time")
	}
	sc := sim.Scenario{Name: "synced", Duration: 4 * time.Second, Step: time.Second, Servers: 2, Seed: 1, Balancer: sim.RoundRobin,
		Limit:    sim.Limit{Algorithm: "token-bucket", Params: algorithms.Params{Rate: algorithms.Rate{N: 20, Per: time.Second}, Burst: 10}, Key: sim.KeyAPIKey},
		Topology: sim.Topology{Kind: sim.Synced, SyncInterval: 200 * time.Millisecond, OnError: "fail-open", Clock: sim.ServerClock, PrimaryStopsAfter: sim.PrimaryNeverStops},
		Clients: []sim.Client{
			{Name: "flood", APIKey: "flood", Traffic: []sim.Traffic{{Pattern: sim.OnOff, Rate: algorithms.Rate{N: 200, Per: time.Second}, On: 300 * time.Millisecond, Off: 700 * time.Millisecond}}},
			{Name: "calm", APIKey: "calm", Traffic: []sim.Traffic{{Pattern: sim.Constant, Rate: algorithms.Rate{N: 4, Per: time.Second}}}},
		},
	}
	agreeOnStores(t, sc, func(t *testing.T, observed *sim.Result) {
		if observed.Synced == nil || observed.Synced.Pushes == 0 {
			t.Fatalf("the simulator's synced figures %+v: want pushes", observed.Synced)
		}
		if f := observed.Clients[0]; f.Allowed <= f.IdealAllowed {
			t.Errorf("flood: %d admitted, an exact store %d: the sync admitted nothing more", f.Allowed, f.IdealAllowed)
		}
	})
}

// agreeOnStores runs sc for real on a fleet whose store is memory, and a
// real redis-server when one is installed, and in the simulator fed the
// arrivals each load run achieved: each client's admissions must agree
// within 5% (or one request); check looks at the simulator's figures.
func agreeOnStores(t *testing.T, sc sim.Scenario, check func(t *testing.T, observed *sim.Result)) {
	t.Helper()
	stores := []string{"memory"}
	if _, err := exec.LookPath("redis-server"); err == nil {
		stores = append(stores, "redis-server")
	}
	for _, kind := range stores {
		t.Run(kind, func(t *testing.T) {
			fleet := startFleet(t, sc, kind)
			live, observed := loadAndReplay(t, sc, fleet, fleet.URLs)
			t.Logf("%s", live.Audit.Lateness())
			check(t, observed)
			for i, c := range live.Clients {
				o := observed.Clients[i]
				t.Logf("%s: allowed %d live, %d simulated on the observed arrivals (exact: %d)", c.Name, c.Allowed, o.Allowed, o.IdealAllowed)
				if !within(c.Allowed, o.Allowed) {
					t.Errorf("%s: allowed %d live, %d simulated on the same arrivals: more than 5%% apart", c.Name, c.Allowed, o.Allowed)
				}
			}
		})
	}
}
