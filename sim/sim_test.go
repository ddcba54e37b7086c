package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/store"
)

var perSecond = func(n int64) algorithms.Rate { return algorithms.Rate{N: n, Per: time.Second} }

// hammer is one client sending 1000/s for 10 s at a token bucket of 10/s
// with burst 20, on the given topology.
func hammer(kind TopologyKind, servers int, balancer Balancer) Scenario {
	return Scenario{
		Name: "hammer", Duration: 10 * time.Second, Step: time.Second, Seed: 1,
		Servers: servers, Balancer: balancer,
		Limit:    Limit{Algorithm: "token-bucket", Params: algorithms.Params{Rate: perSecond(10), Burst: 20}, Key: KeyAuto},
		Topology: Topology{Kind: kind, RTT: 500 * time.Microsecond, OnError: store.FailOpen, Clock: ServerClock, PrimaryStopsAfter: PrimaryNeverStops},
		Clients:  []Client{{Name: "c", APIKey: "k", Traffic: []Traffic{{Pattern: Constant, Rate: perSecond(1000)}}, Retry: Retry{Policy: RetryNone}}},
	}
}

// ownKeys are n clients, c0 on key k0 to c(n-1) on key k(n-1), each
// sending tr and retrying nothing: the many-clients runs of the tests and
// benchmarks.
func ownKeys(n int, tr Traffic) []Client {
	cs := make([]Client, n)
	for i := range cs {
		cs[i] = Client{Name: fmt.Sprint("c", i), APIKey: fmt.Sprint("k", i), Traffic: []Traffic{tr}, Retry: Retry{Policy: RetryNone}}
	}
	return cs
}

func mustRun(t *testing.T, sc Scenario) *Result {
	t.Helper()
	r, err := Run(context.Background(), sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func near(got, want, tolerance int64) bool { return got >= want-tolerance && got <= want+tolerance }

// The single figure: burst + rate × t = 20 + 10 × 10 (the first request at
// 0 takes from a full bucket; the last arrives just before 10 s).
const single = 20 + 10*10

func TestTokenBucketOnOneServerAdmitsBurstPlusRateTimesT(t *testing.T) {
	r := mustRun(t, hammer(Shared, 1, RoundRobin))
	if c := r.Clients[0]; !near(c.Allowed, single, 1) || c.Sent != 10_000 || c.Rejected != c.Sent-c.Allowed {
		t.Fatalf("sent %d allowed %d rejected %d, want 10000 sent and %d ±1 allowed", c.Sent, c.Allowed, c.Rejected, single)
	}
}

func TestTopologiesAndTheTheory(t *testing.T) {
	tests := []struct {
		name     string
		kind     TopologyKind
		servers  int
		balancer Balancer
		want     int64
		tol      int64
	}{
		{"local jars, round-robin, 4 servers: 4 ×", Local, 4, RoundRobin, 4 * single, 4},
		{"local jars, key-hash: one jar sees the key", Local, 4, KeyHash, single, 1},
		{"shared atomic store, 1 server", Shared, 1, RoundRobin, single, 1},
		{"shared atomic store, 8 servers", Shared, 8, RoundRobin, single, 1},
		{"shared atomic store, random balancer", Shared, 8, Random, single, 1},
		{"split-brain without a partition is the shared store", SplitBrain, 4, RoundRobin, single, 1},
	}
	for _, tt := range tests {
		r := mustRun(t, hammer(tt.kind, tt.servers, tt.balancer))
		if got := r.Clients[0].Allowed; !near(got, tt.want, tt.tol) {
			t.Errorf("%s: admitted %d, want %d ±%d", tt.name, got, tt.want, tt.tol)
		}
	}
}

func TestRacyOverAdmitsUnderConcurrentLoad(t *testing.T) {
	// 1000/s over 4 servers with a 5 ms round trip: five requests are in
	// flight between every read and its write.
	sc := hammer(Racy, 4, RoundRobin)
	sc.Topology.RTT = 5 * time.Millisecond
	r := mustRun(t, sc)
	if got := r.Clients[0].Allowed; got < 2*single {
		t.Fatalf("racy admitted %d, want clearly more than the %d an atomic store admits", got, single)
	}
	if r.Clients[0].FalseAllows == 0 {
		t.Fatalf("racy shows no false allows against the exact limiter: %+v", r.Clients[0])
	}
	sc.Topology.RTT = 0 // no gap, no race
	if got := mustRun(t, sc).Clients[0].Allowed; !near(got, single, 1) {
		t.Fatalf("racy with no round trip admitted %d, want %d", got, single)
	}
}

func TestFixedWindowDoubleBurstAtTheBoundary(t *testing.T) {
	// 100 requests in the 100 ms before 1 s and 100 in the 100 ms after, at
	// a limit of 100 per 1 s window.
	sc := Scenario{
		Name: "boundary", Duration: 3 * time.Second, Step: 100 * time.Millisecond, Seed: 1, Servers: 1, Balancer: RoundRobin,
		Limit:    Limit{Algorithm: "fixed-window", Params: algorithms.Params{Rate: perSecond(100), Window: time.Second}, Key: KeyAuto},
		Topology: Topology{Kind: Shared, OnError: store.FailOpen, Clock: ServerClock, PrimaryStopsAfter: PrimaryNeverStops},
		Clients: []Client{{Name: "c", APIKey: "k", Traffic: []Traffic{
			{Pattern: Burst, Count: 100, At: 900 * time.Millisecond, Spread: 100 * time.Millisecond},
			{Pattern: Burst, Count: 100, At: time.Second, Spread: 100 * time.Millisecond},
		}}},
	}
	fixed := mustRun(t, sc).Clients[0]
	sc.Limit.Algorithm = "sliding-log"
	log := mustRun(t, sc).Clients[0]
	if fixed.Allowed != 200 || fixed.MaxAllowed1s != 200 {
		t.Errorf("fixed-window: allowed %d, peak %d in a second; want 200 and 200 (2 × the limit)", fixed.Allowed, fixed.MaxAllowed1s)
	}
	if log.Allowed != 100 || log.MaxAllowed1s != 100 {
		t.Errorf("sliding-log: allowed %d, peak %d; want 100 and 100", log.Allowed, log.MaxAllowed1s)
	}
	if fixed.FalseAllows != 100 || log.FalseAllows != 0 {
		t.Errorf("false allows against the exact log: fixed %d, sliding-log %d; want 100 and 0", fixed.FalseAllows, log.FalseAllows)
	}
}

func TestSplitBrainPartitionDoublesTheAdmittedRate(t *testing.T) {
	sc := hammer(SplitBrain, 4, RoundRobin)
	sc.Duration = 30 * time.Second
	sc.Faults = []Fault{{Kind: Partition, Start: 10 * time.Second, End: 20 * time.Second, Groups: [][]int{{0, 1}, {2, 3}}}}
	r := mustRun(t, sc)
	inPartition := int64(0)
	before := int64(0)
	for _, row := range r.Timeline {
		switch {
		case row.TS >= 11 && row.TS < 20: // a second after the cut, both jars steady
			inPartition += row.Allowed
		case row.TS >= 1 && row.TS < 10:
			before += row.Allowed
		}
	}
	// 9 s at 10/s is 90 on one store; two copies each admit that.
	if before < 85 || before > 95 || inPartition < 170 || inPartition > 190 {
		t.Fatalf("admitted %d in 9 s before the partition (want ~90) and %d in 9 s during it (want ~180, both sides writing)", before, inPartition)
	}
	// The replica's copy starts the partition from the primary's state and
	// is resynchronised at heal: both copies are in the state series.
	copies := map[string]bool{}
	for _, s := range r.State {
		copies[s.Copy] = true
	}
	if !copies["primary"] || !copies["replica"] {
		t.Fatalf("state series copies = %v, want primary and replica", copies)
	}
}

func TestOutageIsDecidedByThePolicy(t *testing.T) {
	for _, policy := range []store.Policy{store.FailOpen, store.FailClosed} {
		sc := hammer(Shared, 2, RoundRobin)
		sc.Topology.OnError = policy
		sc.Faults = []Fault{{Kind: Outage, Start: 4 * time.Second, End: 6 * time.Second}}
		r := mustRun(t, sc)
		for _, row := range r.Timeline {
			inOutage := row.TS >= 4 && row.TS < 6
			decided := row.FailedOpen + row.FailedClosed
			if inOutage && decided != row.Sent {
				t.Errorf("%s, t=%gs: %d of %d decided by the policy, want all", policy, row.TS, decided, row.Sent)
			}
			if !inOutage && decided != 0 {
				t.Errorf("%s, t=%gs: %d decided by the policy outside the outage", policy, row.TS, decided)
			}
			if inOutage && policy == store.FailOpen && (row.FailedClosed != 0 || row.Allowed != row.Sent) {
				t.Errorf("fail-open, t=%gs: %+v, want every request failed open", row.TS, row)
			}
			if inOutage && policy == store.FailClosed && (row.FailedOpen != 0 || row.Rejected != row.Sent) {
				t.Errorf("fail-closed, t=%gs: %+v, want every request failed closed", row.TS, row)
			}
		}
	}
}

func TestRetryAfterClientsStopHammering(t *testing.T) {
	base := hammer(Shared, 1, RoundRobin)
	base.Clients = []Client{
		{Name: "impatient", APIKey: "a", Traffic: []Traffic{{Pattern: Constant, Rate: perSecond(50)}}, Retry: Retry{Policy: RetryImmediate}},
		{Name: "polite", APIKey: "b", Traffic: []Traffic{{Pattern: Constant, Rate: perSecond(50)}}, Retry: Retry{Policy: RetryAfter}},
	}
	r := mustRun(t, base)
	imp, pol := r.Clients[0], r.Clients[1]
	if imp.Retries <= pol.Retries || imp.Retries == 0 {
		t.Fatalf("retries: immediate %d, retry-after %d; want the immediate client to retry far more", imp.Retries, pol.Retries)
	}
	if pol.Allowed < imp.Allowed-5 {
		t.Fatalf("allowed: immediate %d, retry-after %d; honouring Retry-After should cost nothing", imp.Allowed, pol.Allowed)
	}
}

func TestClockSkewUnderServerAndStoreClocks(t *testing.T) {
	// From 3 s on, server 1's clock runs 2 s ahead: under the server clock
	// the bucket refills for 2 s that did not pass; under the store's clock
	// the skew does not reach the decision. (A skew that ends before the
	// run does gives it all back: the bucket does not refill again until
	// the true time catches up with the skewed one.)
	sc := hammer(Shared, 2, RoundRobin)
	sc.Faults = []Fault{{Kind: ClockSkew, Start: 3 * time.Second, End: 10 * time.Second, Servers: []int{1}, Offset: 2 * time.Second}}
	server := mustRun(t, sc).Clients[0].Allowed
	sc.Topology.Clock = StoreClock
	storeClock := mustRun(t, sc).Clients[0].Allowed
	if !near(storeClock, single, 1) {
		t.Errorf("store clock: admitted %d, want %d whatever the servers' clocks say", storeClock, single)
	}
	if !near(server, single+20, 1) {
		t.Errorf("server clock 2 s ahead: admitted %d, want %d: 2 s of refill (20) that did not happen", server, single+20)
	}
}

func TestDeterminism(t *testing.T) {
	sc := hammer(Local, 3, Random)
	sc.Clients[0].Traffic = []Traffic{{Pattern: Poisson, Rate: perSecond(300)}}
	encode := func(sc Scenario) string {
		b, err := json.Marshal(mustRun(t, sc))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	a, b := encode(sc), encode(sc)
	if a != b {
		t.Fatal("the same scenario and seed gave different results")
	}
	sc.Seed = 2
	if encode(sc) == a {
		t.Fatal("another seed gave the same poisson traffic")
	}
}

func TestBudgetRefusesBeforeRunning(t *testing.T) {
	_, err := Run(context.Background(), hammer(Shared, 1, RoundRobin), Options{MaxRequests: 9_999})
	if err == nil {
		t.Fatal("a 10000-request run under a budget of 9999 ran")
	}
}

func TestEveryTopologyOnEveryStoreDecidesAlike(t *testing.T) {
	stores := []string{"memory", "miniredis"}
	if url := os.Getenv("REDIS_URL"); url != "" {
		stores = append(stores, url)
	} else {
		t.Log("REDIS_URL not set: comparing memory with miniredis only (.ci/run sets it)")
	}
	for _, kind := range []TopologyKind{Local, Shared, Racy, SplitBrain} {
		var want string
		for _, st := range stores {
			sc := hammer(kind, 2, RoundRobin)
			sc.Duration = 2 * time.Second
			sc.Clients[0].Traffic = []Traffic{{Pattern: Constant, Rate: perSecond(60)}}
			sc.Topology.Store = st
			sc.Faults = []Fault{{Kind: Partition, Start: 500 * time.Millisecond, End: 1500 * time.Millisecond, Groups: [][]int{{0}, {1}}}}
			r := mustRun(t, sc)
			got, _ := json.Marshal(struct {
				C []ClientResult
				T []TimelineRow
				S []StateSeries
			}{r.Clients, r.Timeline, r.State})
			if want == "" {
				want = string(got)
			} else if string(got) != want {
				t.Errorf("%s on %s decided differently from memory:\n got %s\nwant %s", kind, st, got, want)
			}
		}
	}
}

func TestPlayerFrameByFrameGivesRunsResult(t *testing.T) {
	sc := hammer(SplitBrain, 4, Random)
	sc.Clients[0].Traffic = []Traffic{{Pattern: Poisson, Rate: perSecond(200)}}
	sc.Faults = []Fault{{Kind: Partition, Start: 3 * time.Second, End: 6 * time.Second, Groups: [][]int{{0, 1}, {2, 3}}}}
	want, _ := json.Marshal(mustRun(t, sc))
	p, err := NewPlayer(context.Background(), sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	sawBanner := false
	for !p.Done() {
		if err := p.Advance(context.Background(), p.Now()+33*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		snap := p.Snapshot(context.Background())
		if len(snap.Active) > 0 && snap.Active[0].Kind == "partition" {
			sawBanner = true
			if snap.TS < 3 || snap.TS >= 6 {
				t.Fatalf("partition active at %gs", snap.TS)
			}
		}
		if len(snap.State) != 2 || len(snap.Clients) != 1 {
			t.Fatalf("snapshot: %d state rows, %d clients; want 2 copies of 1 key and 1 client", len(snap.State), len(snap.Clients))
		}
	}
	got, _ := json.Marshal(p.Result())
	if string(got) != string(want) {
		t.Fatal("played frame by frame, the result differs from Run's")
	}
	if !sawBanner {
		t.Fatal("no snapshot showed the partition")
	}
	log := p.Snapshot(context.Background()).Log
	var texts []string
	for _, e := range log {
		texts = append(texts, e.Text)
	}
	joined := strings.Join(texts, "\n")
	for _, want := range []string{"partition begins", "failover", "heal", "c: first rejection"} {
		if !strings.Contains(joined, want) {
			t.Errorf("log lacks %q:\n%s", want, joined)
		}
	}
}

func TestRunAllInParallelEqualsSequential(t *testing.T) {
	var scs []Scenario
	for _, kind := range []TopologyKind{Local, Shared, Racy, SplitBrain} {
		sc := hammer(kind, 3, Random)
		sc.Clients[0].Traffic = []Traffic{{Pattern: Poisson, Rate: perSecond(500)}}
		scs = append(scs, sc)
	}
	results, errs := RunAll(context.Background(), scs, Options{}, 4)
	for i, sc := range scs {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		got, _ := json.Marshal(results[i])
		want, _ := json.Marshal(mustRun(t, sc))
		if string(got) != string(want) {
			t.Errorf("%s: the parallel run differs from the sequential one", sc.Topology.Kind)
		}
	}
}

func TestReplayOfObservationsIsTheRunsResult(t *testing.T) {
	sc := hammer(Local, 3, Random)
	sc.Clients = append(sc.Clients, Client{Name: "d", APIKey: "d", Traffic: []Traffic{{Pattern: Poisson, Rate: perSecond(40)}}, Retry: Retry{Policy: RetryAfter}})
	sc.Faults = []Fault{{Kind: Latency, Start: 2 * time.Second, End: 4 * time.Second, RTT: 20 * time.Millisecond}}
	var seen []Observation
	r, err := Run(context.Background(), sc, Options{Observe: func(o Observation) { seen = append(seen, o) }})
	if err != nil {
		t.Fatal(err)
	}
	// Shuffled, as a live run's goroutines would report them.
	for i := range seen {
		j := (i * 7919) % len(seen)
		seen[i], seen[j] = seen[j], seen[i]
	}
	replayed, err := Replay(sc, seen, r.Events)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(struct {
		C []ClientResult
		K []KeyResult
		T []TimelineRow
		F []FaultSpan
	}{r.Clients, r.Keys, r.Timeline, r.Faults})
	got, _ := json.Marshal(struct {
		C []ClientResult
		K []KeyResult
		T []TimelineRow
		F []FaultSpan
	}{replayed.Clients, replayed.Keys, replayed.Timeline, replayed.Faults})
	if string(got) != string(want) {
		t.Fatalf("replayed observations differ from the run:\n got %s\nwant %s", got, want)
	}
}

func TestArrivalsAreTheRunsArrivals(t *testing.T) {
	sc := hammer(Shared, 2, RoundRobin)
	sc.Clients = append(sc.Clients, Client{Name: "p", APIKey: "p", Traffic: []Traffic{{Pattern: Poisson, Rate: perSecond(50)}, {Pattern: Burst, Count: 10, At: time.Second}}})
	counts := make([]int64, len(sc.Clients))
	last := time.Duration(-1)
	Arrivals(sc, func(a Arrival) bool {
		if a.At < last {
			t.Fatalf("arrival at %s after one at %s", a.At, last)
		}
		last = a.At
		counts[a.Client]++
		return true
	})
	r := mustRun(t, sc)
	for i, c := range r.Clients {
		if c.Sent-c.Retries != counts[i] {
			t.Errorf("%s: %d arrivals, the run sent %d first tries", c.Name, counts[i], c.Sent-c.Retries)
		}
	}
}

func TestRetryWait(t *testing.T) {
	half := func(n int64) int64 { return n / 2 }
	tests := []struct {
		r          Retry
		attempt    int
		retryAfter time.Duration
		want       time.Duration
		again      bool
	}{
		{Retry{Policy: RetryNone}, 0, time.Second, 0, false},
		{Retry{Policy: RetryImmediate}, 0, time.Second, 0, true},
		{Retry{Policy: RetryImmediate}, DefaultMaxRetry, time.Second, 0, false},
		{Retry{Policy: RetryAfter}, 0, 1500 * time.Millisecond, 1500 * time.Millisecond, true},
		{Retry{Policy: RetryAfter}, 0, algorithms.Never, 0, false},
		{Retry{Policy: RetryAfter}, 0, 0, 0, false}, // no Retry-After to honour
		// 100ms × 2^2 = 400ms; half of the 400001 µs draw, plus 1 µs.
		{Retry{Policy: RetryBackoff}, 2, 0, 200001 * time.Microsecond, true},
		// Long runs of retries stop doubling at the cap instead of overflowing.
		{Retry{Policy: RetryBackoff, Base: 10 * time.Second, Cap: time.Minute, Max: 1000}, 999, 0, 30*time.Second + time.Microsecond, true},
	}
	for _, tt := range tests {
		got, again := tt.r.Wait(tt.attempt, tt.retryAfter, half)
		if got != tt.want || again != tt.again {
			t.Errorf("%+v attempt %d: Wait = %v, %v; want %v, %v", tt.r, tt.attempt, got, again, tt.want, tt.again)
		}
	}
}

// Pattern times sends at exactly the instants given, so a run fed the
// arrivals a live run achieved decides the same requests the same way as a
// run of the traffic that scheduled them, when they were on time.
func TestTimesReplaysGivenArrivals(t *testing.T) {
	scheduled := hammer(Shared, 1, RoundRobin)
	var times []time.Duration
	Arrivals(scheduled, func(a Arrival) bool {
		times = append(times, a.At)
		return true
	})
	replayed := scheduled
	replayed.Clients = []Client{scheduled.Clients[0]}
	replayed.Clients[0].Traffic = []Traffic{{Pattern: Times, Times: times}}
	want, got := mustRun(t, scheduled), mustRun(t, replayed)
	if got.Clients[0].Sent != int64(len(times)) || got.Clients[0].Allowed != want.Clients[0].Allowed {
		t.Errorf("times: sent %d allowed %d; want %d sent, %d allowed as scheduled", got.Clients[0].Sent, got.Clients[0].Allowed, len(times), want.Clients[0].Allowed)
	}
	if e := Estimate(replayed); e != int64(len(times)) {
		t.Errorf("Estimate = %d, want %d", e, len(times))
	}
	// Late by 50 ms each, the arrivals that fall past the run's end are not sent.
	late := replayed
	late.Clients = []Client{replayed.Clients[0]}
	shifted := make([]time.Duration, len(times))
	for i, at := range times {
		shifted[i] = at + 50*time.Millisecond
	}
	late.Clients[0].Traffic = []Traffic{{Pattern: Times, Times: shifted}}
	if r := mustRun(t, late); r.Clients[0].Sent >= int64(len(times)) {
		t.Errorf("shifted past the end, %d of %d still sent", r.Clients[0].Sent, len(times))
	}
}

// A leaky bucket queues what it admits: a burst decided in one step is
// served over the following ones at the rate, and Served says so, where
// every other algorithm serves in the step it decides.
func TestServedFollowsTheLeakyBucketsQueue(t *testing.T) {
	sc := hammer(Shared, 1, RoundRobin)
	sc.Clients[0].Traffic = []Traffic{{Pattern: Burst, Count: 20, At: 0}}
	for _, alg := range []string{"leaky-bucket", "token-bucket"} {
		s, err := WithAlgorithm(sc, alg)
		if err != nil {
			t.Fatal(err)
		}
		r := mustRun(t, s)
		var allowed, served int64
		var servedAt []int64
		for _, row := range r.Timeline {
			allowed += row.Allowed
			served += row.Served
			servedAt = append(servedAt, row.Served)
			if alg == "token-bucket" && row.Served != row.Allowed {
				t.Errorf("%s at %gs: served %d, allowed %d, want them equal without a queue", alg, row.TS, row.Served, row.Allowed)
			}
		}
		if allowed != 20 || served != 20 {
			t.Errorf("%s: allowed %d, served %d, want all 20 of the burst", alg, allowed, served)
		}
		// Burst 20 at 10/s: 20 decided at 0, served ~10 a second over 2 s.
		if alg == "leaky-bucket" && (r.Timeline[0].Allowed != 20 || servedAt[0] > 11 || servedAt[1] < 9) {
			t.Errorf("%s: served per step %v, want the burst spread over two seconds", alg, servedAt)
		}
	}
}

// A split brain whose replica is never promoted (FailoverNever): the
// cut-off servers reach no copy for the whole partition, so their
// requests fail open from its start to its end, the replica takes
// nothing, no failover is logged, and the banner says so. With the
// failover at once (the default 0) the same servers use the replica.
func TestFailoverNeverLeavesTheCutOffSideWithoutAStore(t *testing.T) {
	run := func(failover time.Duration) *Result {
		sc := hammer(SplitBrain, 2, RoundRobin)
		sc.Topology.FailoverAfter = failover
		sc.Faults = []Fault{{Kind: Partition, Start: 2 * time.Second, End: 6 * time.Second, Groups: [][]int{{0}, {1}}}}
		if got := partitionBanner(sc, sc.Faults[0], 3*time.Second); failover == FailoverNever && !strings.Contains(got, "no failover") {
			t.Errorf("banner %q, want it to say there is no failover", got)
		}
		return mustRun(t, sc)
	}
	never, atOnce := run(FailoverNever), run(0)
	// Server 1 takes every other request: 500/s for the 4 s cut off.
	if got := never.Clients[0].FailedOpen; got != 2000 {
		t.Errorf("failover never: %d failed open, want the cut-off server's 2,000", got)
	}
	if got := atOnce.Clients[0].FailedOpen; got != 0 {
		t.Errorf("failover at once: %d failed open, want 0 (the replica answers)", got)
	}
	for _, e := range never.Events {
		if strings.Contains(e.Text, "failover") {
			t.Errorf("failover never logged %q", e.Text)
		}
	}
	// The replica took no write of its own: its copy trailed the
	// primary's, it did not count apart (issue 30's false finding). With
	// the failover, both sides took writes and counted apart.
	for name, r := range map[string]*Result{"never": never, "never, read back": readBack(t, never)} {
		for _, f := range r.Findings {
			if f.Kind == FindingCopiesDiverged {
				t.Errorf("failover %s: %q, though the replica took no write", name, f.Text)
			}
		}
	}
	decided := func(r *Result) (from []string) {
		for _, ser := range r.State {
			if ser.DecidedFromS != nil {
				from = append(from, fmt.Sprintf("%s@%g", ser.Copy, *ser.DecidedFromS))
			}
		}
		return from
	}
	if got, want := decided(never), []string{"primary@2"}; !slices.Equal(got, want) {
		t.Errorf("failover never: copies decided %v, want %v", got, want)
	}
	if got, want := decided(atOnce), []string{"primary@2", "replica@2.001"}; !slices.Equal(got, want) {
		t.Errorf("failover at once: copies decided %v, want %v", got, want)
	}
}

// readBack is r as Findings reads it back from its JSON: the copies' gap
// from its state series, every step's point put back, its findings
// worked out again.
func readBack(t *testing.T, r *Result) *Result {
	t.Helper()
	rb := *r
	rb.copyGap = nil
	rb.State = r.denseState(true)
	rb.Findings = Findings(&rb)
	return &rb
}
