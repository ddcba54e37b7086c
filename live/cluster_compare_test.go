package live

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/internal/redistest"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/store"
	"github.com/ratelim/ratelim/topology"
)

// The comparison of a live fleet on a real Redis Cluster whose master is
// frozen with the simulator's cluster fed what the live run observed.
const (
	// compareNodeTimeout is the cluster's cluster-node-timeout: 1 s keeps
	// the failover (FAIL 1.3–1.6 s after the freeze, the promotion
	// 0.6–1.1 s after that, measured here) well inside a short run.
	compareNodeTimeout = time.Second
	// compareDuration is the load run's length: the freeze at
	// compareFreezeAt, the promotion about 2.5 s later, the thaw
	// compareThawAfter after that, and a few seconds after it.
	compareDuration  = 13 * time.Second
	compareFreezeAt  = 3 * time.Second
	compareThawAfter = 2 * time.Second
	// compareVictim is the shard whose master is frozen: the middle one,
	// so that a wrong mapping from the real cluster's masters to the
	// simulator's shards (by slot range) names a node that is not it.
	compareVictim    = 1
	compareKeysShard = 3 // keys per shard, a client each
	// compareStoreTimeout is how long the fleet's Redis store waits for a
	// node that does not answer before the fail policy decides: the
	// FailFast read timeout (store/redisstore/redis.go, failFastTimeout),
	// one attempt (failover.go, once). The simulator's topology.timeout.
	compareStoreTimeout = 200 * time.Millisecond
	// compareStopMargin is how long after the freeze's SIGSTOP returned
	// the master may still answer a request already in its socket: the
	// signal stops it before it next runs (on a loaded machine a request
	// read just before may still be answered).
	compareStopMargin = 5 * time.Millisecond
)

// TestClusterLiveAgainstSimulator: two servers share a real Redis Cluster
// of three masters with a replica each, fail-open, a token bucket, three
// keys per shard at constant rates. Mid-run the master of shard 1 is
// frozen (SIGSTOP: a partition with it alone on a side no server is on);
// it is let go two seconds after its replica is seen promoted. The
// simulator's cluster is then fed the arrivals the run achieved, the
// freeze and thaw as a partition, and the FAIL and promotion instants the
// watcher saw (Options.ClusterJitter), and the two are held side by side
// key by key: requests failed open, the last of them, their latency, the
// admissions over the exact limiter.
//
// What is asserted holds whatever the machine's load, from what was
// observed. The simulator: its FAIL and promotion land at the observed
// instants; a victim key fails open exactly for its arrivals from the
// freeze to the promotion, the other shards' keys exactly for theirs from
// FAIL to the promotion (full coverage: every node answers CLUSTERDOWN
// while slots have no master), and nothing else. The live fleet: every
// victim request decided while the master was stopped and its replica not
// yet master failed open; a victim key failed open from the freeze (less
// a store timeout, for a request asked before it and answered after it),
// a key of another shard from the first FAIL, each until the promotion
// plus fleetFailoverBound, and outside that only while the watcher too
// got no answer from the node serving it (a stray timeout of a node or a
// process stalled, counted in the table). The exact limiter admits as
// many of the arrivals in both. The difference, live less simulated, is
// the fleet's: it follows the promotion when its store reloads the slot
// map (followTopology), up to 0.95 s after it here, and a call to the
// frozen master waits for one of its pool's connections as well as its
// read timeout. Each key has a hash tag (clusterKeysUnder says why).
func TestClusterLiveAgainstSimulator(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a six-node Redis Cluster and a 13 s load run")
	}
	wallClock(t)
	c := redistest.StartCluster(t, 3, 1, compareNodeTimeout) // skips without redis-server

	sc := clusterCompareScenario(nil)
	shape := clusterShape(sc)
	topo := sim.NewTopology(shape)
	// The simulator's shard m is the real master serving the same slots
	// (redis-cli --cluster create assigns FirstSlots' ranges).
	shards := c.Shards(t)
	if len(shards) != 3 {
		t.Fatalf("the cluster has %d masters serving slots, want 3: %+v", len(shards), shards)
	}
	for m, sh := range shards {
		first, last := topo.ShardSlots(m)
		if !slices.Equal(sh.Ranges, [][2]int{{first, last}}) || sh.Replica == nil {
			t.Fatalf("master %s serves slots %v (a replica: %v); the simulator's shard %d is %d–%d with a replica",
				sh.Master.Addr(), sh.Ranges, sh.Replica != nil, m, first, last)
		}
	}
	victim := shards[compareVictim]

	f, logs := serveOnCluster(t, sc, c)
	// The fleet's store writes key K as prefix + K, hashed whole: its
	// slot is HashSlot(K), where the simulator puts it, only for a key
	// with a hash tag.
	prefix := fleetKeyPrefix(t, f, c)
	sc = clusterCompareScenario(clusterKeysUnder(t, c, topo, prefix))
	w := redistest.WatchCluster(t, c, 10*time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type loaded struct {
		res *LoadResult
		err error
	}
	done := make(chan loaded, 1)
	go func() {
		res, err := Load(ctx, sc, LoadOptions{Targets: f.URLs})
		done <- loaded{res, err}
	}()

	time.Sleep(compareFreezeAt)
	frozeAt := w.Freeze(victim.Master)
	stopSent := time.Now() // SIGSTOP sent: the master runs no more after it
	thawed := false
	thaw := func() time.Time {
		thawed = true
		return w.Thaw(victim.Master)
	}
	defer func() {
		if !thawed {
			thaw()
		}
	}()
	replica := victim.Replica.Addr()
	w.Wait(compareDuration, "the frozen master's replica promoted", func(v redistest.View) bool {
		for _, o := range v {
			if nf := o.Nodes[replica]; nf.Master && nf.Slots > 0 {
				return true
			}
		}
		return false
	})
	time.Sleep(compareThawAfter)
	thawAt := thaw()
	out := <-done
	if out.err != nil {
		t.Fatal(out.err)
	}
	res := out.res
	tl := w.Stop()

	// The instants observed, from the run's start.
	at := func(x time.Time) time.Duration { return x.Sub(res.Started).Truncate(time.Microsecond) }
	fail, promoted := tl.FirstFail(victim.Master.Addr()), tl.Promoted(replica)
	if fail.IsZero() || promoted.IsZero() {
		var b strings.Builder
		tl.Format(&b, frozeAt)
		t.Fatalf("the watcher saw FAIL at %v and the promotion at %v; its timeline:\n%s", fail, promoted, b.String())
	}
	o := clusterInstants{freeze: at(frozeAt), stopSent: at(stopSent), fail: at(fail), promoted: at(promoted), thaw: at(thawAt),
		failAfter: at(fail), stillReplica: at(frozeAt)}
	// A node's FAIL happened after its poll before the first that showed
	// it: the first FAIL of any, after the earliest such poll. The
	// promotion happened after the replica's own last poll that showed it
	// a replica.
	for _, e := range tl.Events {
		if e.Kind == redistest.Fail && e.Subject == victim.Master.Addr() {
			o.failAfter = min(o.failAfter, at(e.After), at(e.At))
		}
		if e.Kind == redistest.BecameMaster && e.Subject == replica && e.Observer == replica {
			o.stillReplica = max(o.stillReplica, at(e.After))
		}
	}
	o.failAfter = max(o.failAfter, o.freeze)

	// The simulator on the same shape: the observed arrivals on a
	// cluster, the freeze as a partition, FAIL and the election where
	// they were seen.
	simSc := ObservedScenario(sc, res)
	simSc.Topology = shape.Topology
	victimName := fmt.Sprintf("s%d-master", compareVictim)
	var others []string
	for _, n := range sim.NodeNames(simSc) {
		if n != victimName {
			others = append(others, n)
		}
	}
	if len(others) != len(sim.NodeNames(simSc))-1 {
		t.Fatalf("no node %s among %v", victimName, sim.NodeNames(simSc))
	}
	simSc.Faults = []sim.Fault{{Kind: sim.Partition, Start: o.freeze, End: min(o.thaw, simSc.Duration),
		Groups: [][]int{{0, 1}, {}}, Nodes: [][]string{others, {victimName}}}}
	// topology.cluster.start draws the gossip's delay past node_timeout,
	// then the election's past FAIL + 500 ms.
	draws := []int64{(o.fail - o.freeze - compareNodeTimeout).Microseconds(), (o.promoted - o.fail - 500*time.Millisecond).Microseconds()}
	var asked []int64
	var simObs []sim.Observation
	simRes, err := sim.Run(context.Background(), simSc, sim.Options{
		Observe: func(ob sim.Observation) { simObs = append(simObs, ob) },
		ClusterJitter: func(n int64) int64 {
			asked = append(asked, n)
			if len(asked) > len(draws) {
				return 0
			}
			return max(draws[len(asked)-1], 0)
		}})
	if err != nil {
		t.Fatal(err)
	}
	if len(asked) != 2 {
		t.Fatalf("the simulator asked for %d draws (%v µs), want the one shard's gossip and election", len(asked), asked)
	}

	keyShard := make([]int, len(sc.Clients))
	for i, cl := range sc.Clients {
		keyShard[i], _ = topo.ShardOf(cl.APIKey)
	}
	cmp := compareCluster(sc, keyShard, res, simRes, simObs)
	// The live fleet fails a key open within what the failover explains:
	// a victim key from the freeze (less a store timeout: asked before
	// it, timed out after it), another shard's from the first FAIL
	// (CLUSTERDOWN: its master had learnt it), each until fleetFailoverBound
	// after the promotion (the store reloads the slot map). Outside that
	// only stray: a store call timed out while the watcher too got no
	// answer from the node serving the key (a Silence: that node stalled,
	// or this process did), as the thaw can make it (measured once under
	// two looping builds: a healthy shard's three keys timed out together
	// 2.3 s after the promotion, 270 ms after the thaw).
	var unexplained []string
	for _, ob := range res.Observations {
		if ob.Attempt != 0 || ob.NoAnswer || ob.Decision.Policy != store.FailOpen {
			continue
		}
		m := keyShard[ob.Client]
		from, serving := o.failAfter, shards[m].Master.Addr()
		if m == compareVictim {
			from, serving = o.freeze-compareStoreTimeout, replica
			if ob.At < o.freeze {
				serving = victim.Master.Addr()
			}
		}
		if ob.At >= from && ob.At <= o.promoted+fleetFailoverBound {
			k := &cmp.keys[ob.Client].live
			k.lastInFailover = max(k.lastInFailover, ob.At)
			continue
		}
		if start := res.Started.Add(ob.At); tl.SilentDuring(serving, start, start.Add(ob.Latency)) {
			cmp.keys[ob.Client].live.stray++
			continue
		}
		unexplained = append(unexplained, fmt.Sprintf("%s (shard %d) at %v, %v after it was sent; want within [%v, promotion %v + %v] or during a silence of %s",
			sc.Clients[ob.Client].Name, m, ob.At, ob.Latency, from, o.promoted, fleetFailoverBound, serving))
	}
	var b strings.Builder
	cmp.write(&b, o, draws, asked)
	var silences []string
	for _, n := range c.Nodes {
		if ss := tl.Silences[n.Addr()]; len(ss) > 0 && n != victim.Master {
			silences = append(silences, fmt.Sprintf("%s %d", n.Addr(), len(ss)))
		}
	}
	fmt.Fprintf(&b, "silences of the nodes up (> %v without an answer to the watcher): %v\n", redistest.SilenceMin, silences)
	t.Logf("SIGSTOP of %s (shard %d, %s), replica %s; keys under %q\n%s", victim.Master.Addr(), compareVictim, victimName, replica, prefix, b.String())
	if testing.Verbose() {
		t.Logf("the fleet logged:\n%s", logs.String())
	}

	// The simulator: FAIL and the promotion where they were seen.
	sh := simRes.Shards[compareVictim]
	for _, want := range []struct {
		what string
		at   time.Duration
	}{{"failed", o.fail}, {"promoted", o.promoted}} {
		e, ok := shardEvent(sh, want.what)
		if !ok || math.Abs(e.TS-want.at.Seconds()) > 1e-6 {
			t.Errorf("simulated %s %s at %+v, want at the observed %v", victimName, want.what, e, want.at)
		}
	}
	for m, s := range simRes.Shards {
		if m != compareVictim && len(s.Events) != 0 {
			t.Errorf("simulated shard %d, its master on the majority side, met %+v", m, s.Events)
		}
	}
	// The simulator fails a victim key open for exactly its arrivals
	// from the freeze to the promotion, another shard's for exactly
	// theirs from FAIL to the promotion (uncovered), and nothing else.
	for i, k := range cmp.keys {
		from := o.freeze
		if keyShard[i] != compareVictim {
			from = o.fail
		}
		want := 0
		for _, a := range simSc.Clients[i].Traffic[0].Times {
			if a >= from && a < o.promoted {
				want++
			}
		}
		if k.sim.failedOpen != want {
			t.Errorf("%s (shard %d): simulated %d failed open, want its %d arrivals in [%v, %v)", k.key, keyShard[i], k.sim.failedOpen, want, from, o.promoted)
		}
		if k.sim.failedOpen > 0 && (k.sim.first < from || k.sim.last >= o.promoted) {
			t.Errorf("%s: simulated failed open from %v to %v, outside [%v, %v)", k.key, k.sim.first, k.sim.last, from, o.promoted)
		}
	}
	// The live fleet: every victim request decided while its master was
	// stopped and the replica not yet master failed open.
	if len(unexplained) > 0 {
		t.Errorf("%d requests failed open live outside the failover, with their node answering the watcher:\n%s",
			len(unexplained), strings.Join(unexplained[:min(len(unexplained), 10)], "\n"))
	}
	victimOpen := 0
	for _, k := range cmp.keys {
		if k.shard == compareVictim {
			victimOpen += k.live.failedOpen
		}
	}
	if victimOpen == 0 {
		t.Errorf("no request of shard %d's keys failed open live: the freeze did not reach the fleet", compareVictim)
	}
	for _, ob := range res.Observations {
		if keyShard[ob.Client] == compareVictim && ob.Attempt == 0 && !ob.NoAnswer &&
			ob.At > o.stopSent+compareStopMargin && ob.At < o.stillReplica && ob.Decision.Policy != store.FailOpen {
			t.Errorf("%s: decided at %v by the store (%+v), while its master was stopped (from %v) and no replica was master (until after %v)",
				sc.Clients[ob.Client].Name, ob.At, ob.Decision, o.stopSent, o.stillReplica)
		}
	}
	// The exact limiter saw the same arrivals in both.
	if !slices.ContainsFunc(res.Observations, func(ob sim.Observation) bool { return ob.NoAnswer }) {
		for i, k := range cmp.keys {
			if k.live.ideal != k.sim.ideal {
				t.Errorf("%s: the exact limiter admits %d of the live arrivals and %d of the same simulated", sc.Clients[i].Name, k.live.ideal, k.sim.ideal)
			}
		}
	}
}

// clusterCompareScenario is the live run: two servers sharing one store
// (the real cluster, by its URL), a token bucket of 10/s, burst 5,
// fail-open, and a client on each key at 20/s, so that each is limited
// and a failed-open admission is one the limiter would have refused.
func clusterCompareScenario(keys []string) sim.Scenario {
	sc := sim.Scenario{
		Name: "cluster-compare", Duration: compareDuration, Step: time.Second, Seed: 1, Servers: 2, Balancer: sim.RoundRobin,
		Limit: sim.Limit{Algorithm: "token-bucket", Params: algorithms.Params{Rate: algorithms.Rate{N: 10, Per: time.Second}, Burst: 5}, Key: sim.KeyAPIKey},
		Topology: sim.Topology{Kind: sim.Shared, OnError: store.FailOpen, Clock: sim.ServerClock,
			PrimaryStopsAfter: sim.PrimaryNeverStops},
	}
	if keys == nil {
		keys = []string{"probe"} // a fleet's scenario: its clients are the load's
	}
	for _, key := range keys {
		sc.Clients = append(sc.Clients, sim.Client{Name: key, APIKey: key, Retry: sim.Retry{Policy: sim.RetryNone},
			Traffic: []sim.Traffic{{Pattern: sim.Constant, Rate: algorithms.Rate{N: 20, Per: time.Second}}}})
	}
	return sc
}

// clusterShape is sc on the simulator's cluster of the real one: three
// masters with a replica each, its node timeout, and the fleet store's
// wait for a node that does not answer.
func clusterShape(sc sim.Scenario) sim.Scenario {
	sc.Topology = sim.Topology{Kind: sim.Cluster, Masters: 3, Replicas: 1, NodeTimeout: compareNodeTimeout,
		Timeout: compareStoreTimeout, OnError: store.FailOpen, Clock: sim.ServerClock, PrimaryStopsAfter: sim.PrimaryNeverStops}
	return sc
}

// fleetKeyPrefix is what the fleet's store puts before every key it
// writes (live/stores.go, openStores: a random one per fleet): one
// request for a key of its own, then the cluster's nodes asked for the
// Redis key it made.
func fleetKeyPrefix(t *testing.T, f *Fleet, c *redistest.Cluster) string {
	t.Helper()
	const probe = "prefix-probe"
	req, err := http.NewRequest(http.MethodGet, f.URLs[0]+"/api", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(APIKeyHeader, probe)
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get(DecidedByHeader) != "" {
		t.Fatalf("the probe got %s, decided by %q; want 200 from the store", resp.Status, resp.Header.Get(DecidedByHeader))
	}
	for _, n := range c.Nodes {
		keys, err := n.Client().Keys(context.Background(), "*"+probe).Result()
		if err == nil && len(keys) == 1 {
			return strings.TrimSuffix(keys[0], probe)
		}
	}
	t.Fatalf("no cluster node holds a key ending in %s", probe)
	return ""
}

// clusterKeysUnder names compareKeysShard keys in each shard as the
// simulator places them (topology.HashSlot), "{key-0}", "{key-1}", … as
// they fall, each checked against the real cluster: the Redis key the
// fleet's store writes for it, prefix + key, is in the same slot (CLUSTER
// KEYSLOT). The store hashes prefix + key whole, so only a key's hash tag
// puts it where the simulator puts it: without one the slot is
// HashSlot(prefix + key), and since CRC-16 is linear that is
// HashSlot(key) XOR a constant of the prefix and the key's length, which
// for some prefixes keeps every key of a length out of a shard.
func clusterKeysUnder(t *testing.T, c *redistest.Cluster, topo *topology.Topology, prefix string) []string {
	t.Helper()
	byShard := make([][]string, 3)
	node := c.Nodes[0].Client()
	for i, filled := 0, 0; filled < len(byShard); i++ {
		key := fmt.Sprintf("{key-%d}", i)
		m, slot := topo.ShardOf(key)
		if len(byShard[m]) == compareKeysShard {
			continue
		}
		real, err := node.ClusterKeySlot(context.Background(), prefix+key).Result()
		if err != nil {
			t.Fatal(err)
		}
		if int(real) != slot {
			t.Fatalf("CLUSTER KEYSLOT %s is %d; topology.HashSlot(%s) is %d", prefix+key, real, key, slot)
		}
		byShard[m] = append(byShard[m], key)
		if len(byShard[m]) == compareKeysShard {
			filled++
		}
	}
	return slices.Concat(byShard...)
}

// clusterInstants are what the run observed, from its start.
type clusterInstants struct {
	freeze, stopSent, fail, promoted, thaw time.Duration
	// failAfter: no node had flagged the master FAIL before it (the send
	// of the poll before the first that showed FAIL). stillReplica: the
	// replica called itself a replica at the poll sent then.
	failAfter, stillReplica time.Duration
}

// keyFate is what one key's requests met in one run.
type keyFate struct {
	sent, allowed, ideal int64
	failedOpen           int
	stray                int             // live: failed open outside the failover, in a silence of its node
	first, last          time.Duration   // of the failed-open requests
	latency              []time.Duration // of the failed-open requests, sorted
	// lastInFailover is the last failed-open request live within the
	// failover's window, strays left out.
	lastInFailover time.Duration
}

// keyComparison is one key, live and simulated on the live arrivals.
type keyComparison struct {
	key       string
	shard     int
	live, sim keyFate
}

type clusterComparison struct{ keys []keyComparison }

// compareCluster gathers each key's fate live (res) and simulated (r, its
// observations obs).
func compareCluster(sc sim.Scenario, shard []int, res *LoadResult, r *sim.Result, obs []sim.Observation) clusterComparison {
	var c clusterComparison
	for i, cl := range sc.Clients {
		c.keys = append(c.keys, keyComparison{key: cl.Name, shard: shard[i]})
	}
	fate := func(side func(*keyComparison) *keyFate, obs []sim.Observation, keys []sim.KeyResult) {
		for _, o := range obs {
			k := side(&c.keys[o.Client])
			if o.Attempt != 0 || o.NoAnswer || o.Decision.Policy != store.FailOpen {
				continue
			}
			if k.failedOpen == 0 || o.At < k.first {
				k.first = o.At
			}
			k.last = max(k.last, o.At)
			k.failedOpen++
			k.latency = append(k.latency, o.Latency)
		}
		for _, kr := range keys {
			for i := range c.keys {
				if c.keys[i].key == kr.Key {
					k := side(&c.keys[i])
					k.sent, k.allowed, k.ideal = kr.Sent, kr.Allowed, kr.IdealAllowed
				}
			}
		}
		for i := range c.keys {
			slices.Sort(side(&c.keys[i]).latency)
		}
	}
	fate(func(k *keyComparison) *keyFate { return &k.live }, res.Observations, res.Keys)
	fate(func(k *keyComparison) *keyFate { return &k.sim }, obs, r.Keys)
	return c
}

// write prints the instants and the table.
func (c clusterComparison) write(b *strings.Builder, o clusterInstants, draws, asked []int64) {
	ms := func(d time.Duration) string { return fmt.Sprintf("%.0f", float64(d.Microseconds())/1000) }
	fmt.Fprintf(b, "observed (ms from the run's start): freeze %s, first FAIL %s (+%s; no FAIL before %s), promotion %s (+%s after FAIL), thaw %s\n",
		ms(o.freeze), ms(o.fail), ms(o.fail-o.freeze), ms(o.failAfter), ms(o.promoted), ms(o.promoted-o.fail), ms(o.thaw))
	fmt.Fprintf(b, "simulator's draws: gossip %d µs of [0, %d), election %d µs of [0, %d)\n", draws[0], asked[0], draws[1], asked[1])
	tw := tabwriter.NewWriter(b, 0, 0, 1, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "key\tshard\tsent\tfailed open live\tsim\tlast live (ms)\tsim\tlast in failover−promotion\tlatency live p50/max (ms)\tsim\tallowed−ideal live\tsim\tstray live\t")
	lat := func(l []time.Duration) string {
		if len(l) == 0 {
			return "-"
		}
		return ms(l[len(l)/2]) + "/" + ms(l[len(l)-1])
	}
	last := func(k keyFate) string {
		if k.failedOpen == 0 {
			return "-"
		}
		return ms(k.last)
	}
	for _, k := range c.keys {
		behind := "-"
		if k.live.failedOpen > k.live.stray {
			behind = fmt.Sprintf("%+.0f", float64((k.live.lastInFailover-o.promoted).Microseconds())/1000)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%+d\t%+d\t%d\t\n", k.key, k.shard, k.live.sent,
			k.live.failedOpen, k.sim.failedOpen, last(k.live), last(k.sim), behind, lat(k.live.latency), lat(k.sim.latency),
			k.live.allowed-k.live.ideal, k.sim.allowed-k.sim.ideal, k.live.stray)
	}
	tw.Flush()
}

// shardEvent is sh's first event what.
func shardEvent(sh sim.ShardResult, what string) (sim.ShardEvent, bool) {
	for _, e := range sh.Events {
		if e.What == what {
			return e, true
		}
	}
	return sim.ShardEvent{}, false
}
