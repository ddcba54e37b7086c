package sim

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/store"
	"github.com/ratelim/ratelim/topology"
)

// clusterRun is a 3-master cluster of 2 servers, its partition from 2 s
// to 12 s leaving s0-master alone with server 0, and a client on a key of
// each shard through each server (key-hash keeps a key on one server).
func clusterScenario(t testing.TB) Scenario {
	t.Helper()
	sc := Scenario{
		Name: "cluster", Duration: 15 * time.Second, Step: time.Second, Seed: 1,
		Servers: 2, Balancer: RoundRobin,
		Limit: Limit{Algorithm: "token-bucket", Params: algorithms.Params{Rate: perSecond(10), Burst: 10}, Key: KeyAuto},
		Topology: Topology{Kind: Cluster, RTT: 500 * time.Microsecond, OnError: store.FailClosed, Clock: ServerClock,
			PrimaryStopsAfter: PrimaryNeverStops, Masters: 3, Replicas: 1, NodeTimeout: 5 * time.Second, Timeout: 50 * time.Millisecond},
		Faults: []Fault{{Kind: Partition, Start: 2 * time.Second, End: 12 * time.Second, Groups: [][]int{{0}, {1}},
			Nodes: [][]string{{"s0-master"}, {"s1-master", "s2-master", "s0-replica", "s1-replica", "s2-replica"}}}},
	}
	for _, key := range []string{"orders", "search", "checkout"} { // slots 105, 6958, 14149: shards 0, 1, 2
		sc.Clients = append(sc.Clients, Client{Name: key, APIKey: key, Traffic: []Traffic{{Pattern: Constant, Rate: perSecond(20)}}, Retry: Retry{Policy: RetryNone}})
	}
	return sc
}

// TestClusterJitterPlacesTheObservedInstants: a comparison with a live
// cluster gives the instants it saw as the draws, and the run's FAIL and
// election land there.
func TestClusterJitterPlacesTheObservedInstants(t *testing.T) {
	sc := clusterScenario(t)
	var asked []int64
	draws := []int64{300_000, 120_000} // FAIL 0.3 s past node_timeout, election 0.5 + 0.12 s after
	r, err := Run(context.Background(), sc, Options{ClusterJitter: func(n int64) int64 {
		asked = append(asked, n)
		d := draws[0]
		draws = draws[1:]
		return d
	}})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(asked) != "[1000000 700000]" {
		t.Errorf("asked for draws of %v µs, want the gossip's 1 s then the election's 700 ms", asked)
	}
	var got []string
	for _, e := range r.Shards[0].Events {
		got = append(got, fmt.Sprintf("%s %s@%g", e.What, e.Node, e.TS))
	}
	want := "[fenced s0-master@7 failed s0-master@7.3 promoted s0-replica@7.92 rejoined s0-master@12]"
	if fmt.Sprint(got) != want {
		t.Errorf("shard 0's events %v, want %s", got, want)
	}
	for m := 1; m < 3; m++ {
		if len(r.Shards[m].Events) != 0 || r.Shards[m].EndMaster != r.Shards[m].Master {
			t.Errorf("shard %d, whose master stayed with the majority: %+v", m, r.Shards[m])
		}
	}
}

// TestClusterFates: what each of the three keys meets, request by
// request, on the two servers: orders (s0-master, with server 0) is
// decided on its own side until the fence at 7 s, search and checkout
// wait on server 0 for the whole partition; on server 1 orders waits
// until the election, and everyone waits the timeout.
func TestClusterFates(t *testing.T) {
	sc := clusterScenario(t)
	r := mustRun(t, sc)
	byKey := map[string]ShardKey{}
	for _, sh := range r.Shards {
		for _, k := range sh.Affected {
			byKey[k.Key] = k
		}
	}
	// Round robin: each client's 20/s alternate servers, 10/s each.
	promoted := r.Shards[0].Events[2].TS
	failed := r.Shards[0].Events[1].TS
	within := func(name string, got, want int64) {
		t.Helper()
		if got < want-1 || got > want+1 {
			t.Errorf("%s: %d, want %d ± 1", name, got, want)
		}
	}
	within("orders fenced on server 0, 7–12 s", byKey["orders"].Fenced, 50)
	within("orders timed out on server 1 until the election", byKey["orders"].TimedOut, int64((promoted-2)*10+0.999))
	within("search timed out on server 0, 2–12 s", byKey["search"].TimedOut, 100)
	within("checkout timed out on server 0, 2–12 s", byKey["checkout"].TimedOut, 100)
	uncovered := int64((promoted - failed) * 10 * 2) // search and checkout on server 1
	if got := byKey["search"].Uncovered + byKey["checkout"].Uncovered; got < uncovered-2 || got > uncovered+2 {
		t.Errorf("uncovered %d, want about %d (full coverage, %g–%gs)", got, uncovered, failed, promoted)
	}
	// A request that waits costs the timeout.
	for _, c := range r.Clients {
		if c.Name == "search" && c.LatencyMs.P99 < 49 {
			t.Errorf("search's p99 %gms, want the 50ms timeout", c.LatencyMs.P99)
		}
	}
	for _, want := range []FindingKind{FindingFailedOver, FindingFenced, FindingMasterUnreachable, FindingUncovered} {
		found := false
		for _, f := range r.Findings {
			found = found || f.Kind == want
		}
		if !found {
			t.Errorf("no %s finding in %+v", want, r.Findings)
		}
	}
	// Without full coverage, no key is refused for another's failover.
	sc.Topology.PartialCoverage = true
	if r := mustRun(t, sc); r.Shards[1].Uncovered+r.Shards[2].Uncovered != 0 {
		t.Errorf("partial coverage: %d + %d uncovered", r.Shards[1].Uncovered, r.Shards[2].Uncovered)
	}
}

// TestPropertyClusterOverAdmissionBound: over random clusters,
// placements, partitions and traffic, with no replication lag, what a
// cluster admitted less the admissions a failover lost is one token
// bucket's history, key by key: the promoted replica starts from its old
// master's state at the cut, and the heal resyncs the old master from it.
// So the over-admission a partition causes is at most the lost
// admissions (ShardResult.Lost, which the failed-over finding states),
// and, since the exact limiter's greedy history admits the most a bucket
// can, the excess of a shard's keys over it at most that too.
func TestPropertyClusterOverAdmissionBound(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		masters := rapid.IntRange(1, 5).Draw(rt, "masters")
		replicas := rapid.IntRange(0, 2).Draw(rt, "replicas")
		servers := rapid.IntRange(1, 4).Draw(rt, "servers")
		rate, burst := perSecond(5), int64(rapid.IntRange(1, 10).Draw(rt, "burst"))
		sc := Scenario{
			Name: "bound", Duration: 20 * time.Second, Step: time.Second, Seed: rapid.Uint64().Draw(rt, "seed"),
			Servers: servers, Balancer: KeyHash,
			Limit: Limit{Algorithm: "token-bucket", Params: algorithms.Params{Rate: rate, Burst: burst}, Key: KeyAuto},
			Topology: Topology{Kind: Cluster, OnError: store.FailClosed, Clock: ServerClock, PrimaryStopsAfter: PrimaryNeverStops,
				Masters: masters, Replicas: replicas, NodeTimeout: time.Duration(rapid.IntRange(1, 5).Draw(rt, "nt")) * time.Second,
				Timeout: 10 * time.Millisecond},
		}
		names := NodeNames(sc)
		f := Fault{Kind: Partition, Start: time.Duration(rapid.IntRange(0, 5).Draw(rt, "start")) * time.Second,
			Groups: [][]int{{}, {}}, Nodes: [][]string{{}, {}}}
		f.End = f.Start + time.Duration(rapid.IntRange(1, 14).Draw(rt, "length"))*time.Second
		serverSide := make([]int, servers)
		for s := range servers {
			serverSide[s] = rapid.IntRange(0, 1).Draw(rt, "server side")
			f.Groups[serverSide[s]] = append(f.Groups[serverSide[s]], s)
		}
		nodeSide := map[string]int{}
		for _, n := range names {
			nodeSide[n] = rapid.IntRange(0, 1).Draw(rt, "node side")
			f.Nodes[nodeSide[n]] = append(f.Nodes[nodeSide[n]], n)
		}
		if len(f.Groups[0]) == 0 && len(f.Nodes[0]) == 0 || len(f.Groups[1]) == 0 && len(f.Nodes[1]) == 0 {
			rt.Skip("a side with nothing on it")
		}
		sc.Faults = []Fault{f}
		for i := range rapid.IntRange(1, 6).Draw(rt, "clients") {
			key := fmt.Sprintf("k%d", rapid.IntRange(0, 9).Draw(rt, "key"))
			sc.Clients = append(sc.Clients, Client{Name: fmt.Sprintf("c%d", i), APIKey: key,
				Traffic: []Traffic{{Pattern: Poisson, Rate: perSecond(int64(rapid.IntRange(1, 30).Draw(rt, "rate")))}}, Retry: Retry{Policy: RetryNone}})
		}
		if err := sc.check(); err != nil {
			rt.Fatal(err)
		}
		var seen []Observation
		r, err := Run(context.Background(), sc, Options{Observe: func(o Observation) { seen = append(seen, o) }})
		if err != nil {
			rt.Fatal(err)
		}
		topo := NewTopology(sc)
		// A shard's admissions lost: those its old master decided from
		// the cut until the election, when a replica was elected; or,
		// when the election came after the heal (which copied the old
		// master's state to its replicas), from the heal.
		lostFrom := map[int][2]time.Duration{} // shard → [cut or heal, election)
		for m, sh := range r.Shards {
			if e, ok := eventOf(sh, "promoted"); ok {
				from, at := f.Start, time.Duration(e.TS*float64(time.Second))
				if at >= f.End {
					from = f.End
				}
				lostFrom[m] = [2]time.Duration{from, at}
			}
		}
		alg, err := sc.NewAlgorithm()
		if err != nil {
			rt.Fatal(err)
		}
		buckets := map[string]algorithms.State{}
		lost := make([]int64, len(r.Shards))
		for _, o := range seen {
			if !o.Decision.Allowed || o.Decision.Policy != "" {
				continue
			}
			key := sc.Clients[o.Client].APIKey
			m, _ := topo.ShardOf(key)
			server := int(topology.HashKey(key) % uint64(servers))
			window, failed := lostFrom[m]
			onItsSide := serverSide[server] == nodeSide[r.Shards[m].Master] || window[0] == f.End
			if failed && o.At >= window[0] && o.At < window[1] && onItsSide {
				lost[m]++
				continue // the old master's, on its own side: lost
			}
			st, d := alg.Step(buckets[key], algorithms.At(o.At), o.Cost)
			if !d.Allowed {
				rt.Fatalf("key %s (shard %d) admitted at %s beyond one bucket's history, the lost admissions (%d) left out\nevents %+v%s",
					key, m, o.At, lost[m], r.Shards[m].Events, logText(r))
			}
			buckets[key] = st
		}
		excess := make([]int64, len(r.Shards))
		for _, k := range r.Keys {
			m, _ := topo.ShardOf(k.Key)
			excess[m] += k.Allowed - k.IdealAllowed
		}
		for m, sh := range r.Shards {
			if lost[m] != sh.Lost {
				rt.Fatalf("shard %d: %d admissions on its old master in the partition, the result says %d lost", m, lost[m], sh.Lost)
			}
			if excess[m] > sh.Lost {
				rt.Fatalf("shard %d admitted %d past the exact limiter, more than the %d admissions its failover lost", m, excess[m], sh.Lost)
			}
		}
	})
}

func logText(r *Result) string {
	var b strings.Builder
	for _, e := range r.Events {
		fmt.Fprintf(&b, "\n  %gs %s", e.TS, e.Text)
	}
	return b.String()
}

// TestBreakerTradesWaitsForFailures: one server calls a store that is out
// from 2 s to 6 s, ten calls a second, each waiting a 100 ms timeout while
// it is out. A breaker of 3 failures and a 1 s cooldown lets 3 calls wait,
// then fails the calls at once but for a probe a second (3.3, 4.4, 5.5 s:
// each waits and fails, and opens it again); it is still open when the
// store comes back at 6 s, and fails 6 more calls the store would have
// decided, until its probe at 6.6 s closes it.
func TestBreakerTradesWaitsForFailures(t *testing.T) {
	sc := hammer(Shared, 1, RoundRobin)
	sc.Clients[0].Traffic = []Traffic{{Pattern: Constant, Rate: perSecond(10)}}
	sc.Topology.Timeout = 100 * time.Millisecond
	sc.Topology.Breaker = &Breaker{Failures: 3, Cooldown: time.Second}
	sc.Faults = []Fault{{Kind: Outage, Start: 2 * time.Second, End: 6 * time.Second}}
	var waited []string
	r, err := Run(context.Background(), sc, Options{Observe: func(o Observation) {
		if o.Latency == 100*time.Millisecond {
			waited = append(waited, fmt.Sprint(o.At.Seconds()))
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(waited, " "), "2 2.1 2.2 3.3 4.4 5.5"; got != want {
		t.Errorf("calls that waited the timeout at %s, want %s", got, want)
	}
	if b := r.Breaker; b == nil || b.Opened != 4 || b.ShortCircuited != 40 {
		t.Errorf("breaker %+v, want opened 4 times and 40 calls failed at once", b)
	}
	if got := r.Clients[0].FailedOpen; got != 46 {
		t.Errorf("failed open %d, want the 40 calls of the outage and 6 after it", got)
	}
	if !strings.Contains(r.Findings[0].Text, "the circuit breakers, opened 4 times, answered 40 of them at once instead of waiting 100ms") {
		t.Errorf("first finding %q, want it to say what the breakers did", r.Findings[0].Text)
	}
}

// TestHealBeforeTheElection: the partition heals between FAIL (7.3 s) and
// the election (7.92 s). The election still completes, and there the old
// master rejoins; the heal had copied its state to its replica, and the
// fenced master answered CLUSTERDOWN from the heal on (its rejoin delay),
// so the failover loses nothing.
func TestHealBeforeTheElection(t *testing.T) {
	sc := clusterScenario(t)
	sc.Faults[0].End = 7500 * time.Millisecond
	draws := []int64{300_000, 120_000}
	r, err := Run(context.Background(), sc, Options{ClusterJitter: func(int64) int64 {
		d := draws[0]
		draws = draws[1:]
		return d
	}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range r.Shards[0].Events {
		got = append(got, fmt.Sprintf("%s %s@%g", e.What, e.Node, e.TS))
	}
	if want := "[fenced s0-master@7 failed s0-master@7.3 promoted s0-replica@7.92 rejoined s0-master@7.92]"; fmt.Sprint(got) != want {
		t.Errorf("events %v, want %s", got, want)
	}
	if lost := r.Shards[0].Lost; lost != 0 {
		t.Errorf("%d admissions lost, want none: the heal copied them to the replica", lost)
	}
	for _, e := range r.Events {
		if strings.Contains(e.Text, "is elected master") && !strings.Contains(e.Text, "the 0 admissions s0-master took since the heal are lost") {
			t.Errorf("the election's log %q, want it to say none were lost since the heal", e.Text)
		}
	}
}

// TestWithTopologyCyclesBack: cycling a shared scenario through the
// kinds, as the TUI's t key does, gives a cluster its shape and takes it
// out again: the shared run after it is the file's, its timeout 0.
func TestWithTopologyCyclesBack(t *testing.T) {
	sc := hammer(Shared, 4, RoundRobin)
	next := sc
	for _, kind := range []TopologyKind{Racy, SplitBrain, Cluster, Synced, TwoTier, Owner, Local, Shared} {
		next = WithTopology(next, kind)
		if kind == Cluster && (next.Topology.Masters != 3 || next.Topology.Replicas != 1 || next.Topology.Timeout != DefaultClusterTimeout) {
			t.Fatalf("on cluster: %+v", next.Topology)
		}
	}
	if !reflect.DeepEqual(next.Topology, sc.Topology) {
		t.Errorf("cycled back to shared: %+v, want the scenario's %+v", next.Topology, sc.Topology)
	}
	// A cluster's own timeout stays.
	own := WithTopology(sc, Cluster)
	own.Topology.Timeout = 20 * time.Second
	if back := WithTopology(own, Shared); back.Topology.Timeout != 20*time.Second {
		t.Errorf("a timeout set on the cluster was taken out: %s", back.Topology.Timeout)
	}
}

// TestTwoFailovers: a second partition, once the first has settled,
// fails the shard over again, back to the node it started on; the
// finding counts both.
func TestTwoFailovers(t *testing.T) {
	sc := clusterScenario(t)
	sc.Duration = 60 * time.Second
	second := sc.Faults[0]
	second.Start, second.End = 30*time.Second, 45*time.Second
	second.Nodes = [][]string{{"s0-replica"}, {"s1-master", "s2-master", "s0-master", "s1-replica", "s2-replica"}}
	sc.Faults = append(sc.Faults, second)
	r := mustRun(t, sc)
	sh := r.Shards[0]
	if sh.EndMaster != "s0-master" || countEvents(sh, "promoted") != 2 {
		t.Fatalf("shard 0: end master %s, events %+v; want s0-master back after two failovers", sh.EndMaster, sh.Events)
	}
	f, ok := findingOf(r, FindingFailedOver)
	if !ok || !strings.Contains(f.Text, "2 failovers, the first at") {
		t.Errorf("failed-over finding %q, want it to count both", f.Text)
	}
}

func findingOf(r *Result, kind FindingKind) (Finding, bool) {
	for _, f := range r.Findings {
		if f.Kind == kind {
			return f, true
		}
	}
	return Finding{}, false
}
