package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/topology"
)

// slow is a client at 20/s whose requests take 1 s each, against at most
// 5 in flight: 20 would be in flight, 5 are.
func slow(kind TopologyKind, servers int) Scenario {
	sc := hammer(kind, servers, RoundRobin)
	sc.Limit = Limit{Algorithm: "concurrency", Params: algorithms.Params{Burst: 5, Window: 30 * time.Second}, Key: KeyAuto}
	sc.Clients[0].Traffic[0].Rate = perSecond(20)
	sc.Clients[0].Service = Service{Mean: time.Second}
	return sc
}

// At most 5 in flight, each for 1 s: every second 5 are admitted, as the
// 5 before them complete. A request arrives every 50 ms, so each freed
// slot is taken within 50 ms plus the round trip.
func TestConcurrencyHoldsRequestsInFlight(t *testing.T) {
	for _, kind := range []TopologyKind{Shared, Local} {
		r := mustRun(t, slow(kind, 1))
		c := r.Clients[0]
		if c.Allowed != 50 || c.Sent != 200 {
			t.Errorf("%s: allowed %d of %d, want 5 in flight × 10 s = 50 of 200", kind, c.Allowed, c.Sent)
		}
		if c.FalseDenies != 0 || c.FalseAllows != 0 {
			t.Errorf("%s: %d false denies and %d false allows against the exact limiter, want none", kind, c.FalseDenies, c.FalseAllows)
		}
		for _, s := range r.State {
			for i, free := range s.Remaining {
				if free < 0 || free > 5 {
					t.Fatalf("%s: %d free slots at %gs, want 0 to 5", kind, free, s.TS[i])
				}
			}
		}
		if r.Limit.MaxInFlight != 5 || r.Limit.LeaseTTLS != 30 || r.Limit.Burst != 0 || r.Limit.RatePerS != 0 {
			t.Errorf("%s: limit %+v, want max_in_flight 5 and lease_ttl_s 30 alone", kind, r.Limit)
		}
	}
}

// Jars per server: each of 2 servers holds 5 of its own.
func TestConcurrencyInJarsPerServer(t *testing.T) {
	if c := mustRun(t, slow(Local, 2)).Clients[0]; c.Allowed != 100 {
		t.Errorf("allowed %d, want 2 servers × 5 in flight × 10 s = 100", c.Allowed)
	}
}

// A crash at 3.5 s kills the server key-hash sends the client to, which
// holds all 5 leases (the balancer routes to the other while it is down,
// which reaches the same store, where the leases still count). The
// leases are never given back: nothing is admitted until they expire, 30 s
// after they were taken, past the end of the run.
func TestCrashLeaksLeasesUntilTheirTTL(t *testing.T) {
	sc := slow(Shared, 2)
	sc.Balancer = KeyHash
	sc.Faults = []Fault{{Kind: Crash, Servers: []int{keyHashServer(sc)}, Start: 3500 * time.Millisecond, End: 4 * time.Second}}
	r := mustRun(t, sc)
	var before, after Counts
	for _, row := range r.Timeline {
		if row.TS < 3 {
			before.Add(row.Counts)
		} else if row.TS >= 4 {
			after.Add(row.Counts)
		}
	}
	if before.Allowed != 15 {
		t.Errorf("before the crash: %d admitted, want 5 a second", before.Allowed)
	}
	if after.Allowed != 0 {
		t.Errorf("after the crash: %d admitted, want none: the 5 leases leak till 33 s", after.Allowed)
	}
	f := r.Faults[0]
	if f.Leaked != 5 || f.LeakedUntilS < 30 {
		t.Errorf("the crash's span %+v, want 5 leaked until past 30 s", f)
	}
	if got := Findings(r)[0]; got.Kind != FindingLeaked {
		t.Errorf("the lesson is %s, want leaked: %+v", got.Kind, Findings(r))
	}

	// With a lease of 2 s, the leak ends 2 s after the last lease was
	// taken, and the client is admitted again.
	sc.Limit.Params.Window = 2 * time.Second
	r = mustRun(t, sc)
	var late Counts
	for _, row := range r.Timeline {
		if row.TS >= 6 {
			late.Add(row.Counts)
		}
	}
	if late.Allowed == 0 {
		t.Error("with a 2 s lease nothing was admitted after 6 s: the leak should have ended")
	}
}

// keyHashServer is the server a key-hash balancer sends sc's only client to.
func keyHashServer(sc Scenario) int {
	return int(topology.HashKey(KeyOf(sc.Clients[0], sc.Limit.Key)) % uint64(sc.Servers))
}

func TestConcurrencyRefusedOnTopologiesWithoutLeases(t *testing.T) {
	for _, kind := range []TopologyKind{Racy, SplitBrain} {
		if _, err := Run(t.Context(), slow(kind, 2), Options{}); err == nil {
			t.Errorf("a concurrency limit ran on %s", kind)
		}
	}
}

// A key's rate limit and its concurrency limit together, as Stripe runs
// them: 20/s burst 20 and at most 5 in flight for 1 s each. The
// concurrency limit binds (5 a second), and its refusals spend nothing of
// the bucket; each lease is given back through the Multi.
func TestConcurrencyBesideARateLimit(t *testing.T) {
	sc := slow(Shared, 1)
	sc.Limit = Limit{Name: "rate", Algorithm: "token-bucket", Params: algorithms.Params{Rate: perSecond(20), Burst: 20}, Key: KeyAuto}
	sc.Also = []Limit{{Name: "in-flight", Algorithm: "concurrency", Params: algorithms.Params{Burst: 5, Window: 30 * time.Second}, Key: KeyAuto}}
	r := mustRun(t, sc)
	c := r.Clients[0]
	if c.Allowed != 50 {
		t.Errorf("allowed %d, want 5 in flight × 10 s = 50", c.Allowed)
	}
	if c.RejectedBy["in-flight"] != c.Rejected || c.RejectedBy["rate"] != 0 {
		t.Errorf("rejected_by %v, want every refusal the concurrency limit's (the bucket refills faster than 5/s spends it)", c.RejectedBy)
	}
}

// A times stream's Services hold each admitted request for the time given,
// not a draw: one request every 100 ms against 1 in flight, the first held
// 250 ms, the rest 50 ms, admits the first and then every request from
// 300 ms on (those at 100 and 200 ms find the slot taken). Without
// Services the client's Service (1 s) would hold each.
func TestTimesStreamGivesServiceTimes(t *testing.T) {
	sc := slow(Shared, 1)
	sc.Topology.RTT = 0
	sc.Limit.Params.Burst = 1
	sc.Clients[0].Service = Service{Mean: time.Second, Exponential: true}
	var times, services []time.Duration
	for i := range 10 {
		times = append(times, time.Duration(i)*100*time.Millisecond)
		services = append(services, 50*time.Millisecond)
	}
	services[0] = 250 * time.Millisecond
	sc.Clients[0].Traffic = []Traffic{{Pattern: Times, Times: times, Services: services}}
	r := mustRun(t, sc)
	if c := r.Clients[0]; c.Allowed != 8 || c.Rejected != 2 {
		t.Errorf("allowed %d, rejected %d; want 8 and 2 (the requests at 100 and 200 ms)", c.Allowed, c.Rejected)
	}
	// Given for the first arrivals only: the rest draw (mean 1 s), and
	// one in flight then refuses most of them.
	sc.Clients[0].Traffic[0].Services = services[:1]
	if c := mustRun(t, sc).Clients[0]; c.Allowed >= 8 {
		t.Errorf("with one service time given, allowed %d; want fewer than 8 (the rest drawn, mean 1 s)", c.Allowed)
	}
}

func TestTimesStreamServicesChecked(t *testing.T) {
	for _, tt := range []struct {
		name string
		tr   Traffic
		want string
	}{
		{"not times", Traffic{Pattern: Constant, Rate: perSecond(1), Services: []time.Duration{time.Second}}, "want pattern times"},
		{"more than times", Traffic{Pattern: Times, Times: []time.Duration{0}, Services: []time.Duration{1, 2}}, "at most one per arrival"},
		{"negative", Traffic{Pattern: Times, Times: []time.Duration{0}, Services: []time.Duration{-1}}, "negative"},
	} {
		sc := slow(Shared, 1)
		sc.Clients[0].Traffic = []Traffic{tt.tr}
		if err := sc.check(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error saying %q", tt.name, err, tt.want)
		}
	}
}

// Every limit of a key in shadow mode, a concurrency limit among them:
// the leases it takes are given back when each request is served, also
// for a request the shadowed rate limit would have refused. A client at
// 100/s served in 10 ms has one request in flight, so the concurrency
// limit of 5 would refuse nothing, and the key would refuse what its rate
// limit alone would. Issue 27: such leases were never given back, and
// held the slots until their TTL.
func TestEveryLimitShadowedGivesLeasesBack(t *testing.T) {
	rateOnly := hammer(Shared, 1, RoundRobin)
	rateOnly.Limit.Shadow = true
	rateOnly.Clients[0].Traffic[0].Rate = perSecond(100)
	rateOnly.Clients[0].Service = Service{Mean: 10 * time.Millisecond}
	want := mustRun(t, rateOnly).Clients[0]
	if want.WouldReject == 0 {
		t.Fatal("the rate limit alone would refuse nothing: the test needs would-be refusals")
	}
	sc := rateOnly
	sc.Limit.Name = "per-second"
	sc.Also = []Limit{{Name: "in-flight", Algorithm: "concurrency", Params: algorithms.Params{Burst: 5, Window: 30 * time.Second}, Key: KeyAuto, Shadow: true}}
	got := mustRun(t, sc).Clients[0]
	if got.WouldReject != want.WouldReject || got.Allowed != got.Sent {
		t.Errorf("every limit shadowed: would_reject %d, allowed %d of %d; want %d, the rate limit's alone, and all allowed", got.WouldReject, got.Allowed, got.Sent, want.WouldReject)
	}
	if got.RejectedBy["in-flight"] != 0 {
		t.Errorf("rejected_by %v, want nothing refused", got.RejectedBy)
	}
}

// A request that ends while an outage keeps its server from the store
// cannot give its lease back, as a live fleet's server cannot: the lease
// is held until it expires, and counted against the outage. Five leases
// taken at 2 s end at 3 s, inside an outage from 2.5 s to 3.5 s: the
// client is refused from the outage's end until they expire at 32 s,
// past the end of the run, and a finding says so.
func TestOutageKeepsTheLeasesItsRequestsCouldNotGiveBack(t *testing.T) {
	sc := slow(Shared, 1)
	sc.Topology.OnError = "fail-closed"
	sc.Faults = []Fault{{Kind: Outage, Start: 2500 * time.Millisecond, End: 3500 * time.Millisecond}}
	r := mustRun(t, sc)
	var after Counts
	for _, row := range r.Timeline {
		if row.TS >= 4 {
			after.Add(row.Counts)
		}
	}
	if after.Allowed != 0 {
		t.Errorf("after the outage: %d admitted, want none: the 5 leases its requests could not give back leak till 32 s", after.Allowed)
	}
	if f := r.Faults[0]; f.Leaked != 5 || f.LeakedUntilS < 30 {
		t.Errorf("the outage's span %+v, want 5 leaked until past 30 s", f)
	}
	var leak Finding
	for _, f := range Findings(r) {
		if f.Kind == FindingLeaked {
			leak = f
		}
	}
	if !strings.HasPrefix(leak.Text, "an outage at 2.5s left 5 leases held") {
		t.Errorf("the leak's finding is %q, want it said of the outage (findings: %+v)", leak.Text, Findings(r))
	}
}
