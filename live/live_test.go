package live

import (
	"context"
	"io"
	"net/http"
	"net/netip"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/scenarios/scenariotest"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/store"
)

var loopbackProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

func startFleet(t *testing.T, sc sim.Scenario, storeKind string) *Fleet {
	t.Helper()
	// The load generator runs in this process and sends each client's IP
	// in X-Forwarded-For: trust loopback, as an operator would say.
	f, err := Serve(context.Background(), ServeOptions{Scenario: sc, Store: storeKind, Listen: "127.0.0.1:0", TrustedProxies: loopbackProxies})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := f.Close(ctx); err != nil {
			t.Error(err)
		}
	})
	return f
}

// TestSimAndLiveAgree runs two built-ins for real, over HTTP against an
// in-process fleet on the shared topology, and in the simulator fed the
// arrivals the load run achieved: what each client was allowed must agree
// within 5%. On a loaded machine the schedule slips (requests leave late,
// some not at all); the simulator then decides the traffic that was really
// sent, so the check holds however busy the machine is. The comparison with
// the scheduled arrivals, and how late the schedule ran, are logged as
// measurements. Each takes its scenario's 30 s.
func TestSimAndLiveAgree(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the live runs take 30 s of wall time each")
	}
	if raceDetector {
		t.Skip("-race slows HTTP on loopback several times over; the plain go test ./... checks this")
	}
	wallClock(t)
	for _, name := range []string{"runaway-healthcheck", "store-outage", "nat"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			sc := scenariotest.Builtin(t, name)
			sc.Topology.Kind = sim.Shared
			fleet := startFleet(t, sc, "memory")
			live, observed := loadAndReplay(t, sc, fleet, fleet.URLs)
			scheduled, err := sim.Run(context.Background(), sc, sim.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s; %s; faults took effect up to %s late", live.Audit.Lateness(), live.Audit.Deciding(), live.FaultLateness(sc).Round(time.Millisecond))
			for i, c := range live.Clients {
				o, s := observed.Clients[i], scheduled.Clients[i]
				if o.Sent != c.Sent-c.Retries+o.Retries {
					t.Errorf("%s: the simulator was fed %d first tries, the load run sent %d", c.Name, o.Sent-o.Retries, c.Sent-c.Retries)
				}
				if diff := float64(c.Allowed - o.Allowed); diff > 0.05*float64(o.Allowed)+1 || -diff > 0.05*float64(o.Allowed)+1 {
					t.Errorf("%s: allowed %d live, %d simulated on the same arrivals: more than 5%% apart", c.Name, c.Allowed, o.Allowed)
				}
				t.Logf("%s: allowed %d live, %d simulated on the observed arrivals, %d on the scheduled ones; failed open %d / %d / %d",
					c.Name, c.Allowed, o.Allowed, s.Allowed, c.FailedOpen, o.FailedOpen, s.FailedOpen)
			}
			if b := live.Audit.Breaches(); b != 0 || live.Audit.TransportErrors != 0 || live.Audit.Redirects != 0 {
				t.Errorf("audit: %+v", live.Audit)
			}
		})
	}
}

func TestObservedScenarioReplaysFirstTries(t *testing.T) {
	sc := scenariotest.Builtin(t, "retry-storm")
	obs := []sim.Observation{
		{Client: 0, At: 2 * time.Second, Cost: 1, Seq: 3},
		{Client: 0, At: time.Second, Cost: 1, Seq: 1},
		{Client: 0, At: time.Second + time.Millisecond, Attempt: 1, Cost: 1, Seq: 2}, // a retry: the policy makes its own
		{Client: 2, At: 5 * time.Second, Cost: 1, Seq: 4},
	}
	got := ObservedScenario(sc, &LoadResult{Observations: obs})
	if len(sc.Clients[0].Traffic) != 3 || sc.Clients[0].Traffic[0].Pattern != sim.Constant {
		t.Fatal("ObservedScenario changed the scenario it was given")
	}
	want := [][]time.Duration{{time.Second, 2 * time.Second}, nil, {5 * time.Second}}
	for i, c := range got.Clients {
		if len(c.Traffic) != 1 || c.Traffic[0].Pattern != sim.Times || !slices.Equal(c.Traffic[0].Times, want[i]) {
			t.Errorf("client %d traffic %+v, want times %v", i, c.Traffic, want[i])
		}
	}
	r, err := sim.Run(context.Background(), got, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if first := r.Clients[0].Sent - r.Clients[0].Retries; first != 2 {
		t.Errorf("client 0 sent %d first tries, want 2", first)
	}
}

// hammered is what hammerFleet saw: per key, how many the limiter
// admitted; per key and server, how many the limiter decided (admitted or
// refused, not a fail policy's answer: a store call that timed out on a
// loaded machine is not the limiter's decision, and no bound on the
// limiter counts it); and every answer by status ("200 fail-open" for
// the ones a fail policy admitted).
type hammered struct {
	admitted map[string]int64
	decided  map[string]map[int]int64
	statuses map[string]int64
	elapsed  time.Duration
}

// hammerFleet sends requests from goroutines, each with connections of its
// own, spread over the fleet's servers, for about d.
func hammerFleet(t *testing.T, f *Fleet, keys []string, goroutines int, d time.Duration) hammered {
	t.Helper()
	var mu sync.Mutex
	h := hammered{admitted: map[string]int64{}, decided: map[string]map[int]int64{}, statuses: map[string]int64{}}
	for _, k := range keys {
		h.decided[k] = map[int]int64{}
	}
	var next atomic.Uint64
	start := time.Now()
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}, Timeout: 5 * time.Second}
			defer client.CloseIdleConnections()
			for time.Since(start) < d {
				n := next.Add(1)
				key := keys[n%uint64(len(keys))]
				server := int(n/uint64(len(keys))) % len(f.URLs)
				req, _ := http.NewRequest(http.MethodGet, f.URLs[server]+"/api", nil)
				req.Header.Set(APIKeyHeader, key)
				resp, err := client.Do(req)
				if err != nil {
					t.Errorf("goroutine %d: %v", g, err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				status := strconv.Itoa(resp.StatusCode)
				byPolicy := resp.Header.Get(DecidedByHeader) != ""
				if byPolicy {
					status += " " + resp.Header.Get(DecidedByHeader)
				}
				mu.Lock()
				h.statuses[status]++
				if !byPolicy && (resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusTooManyRequests) {
					h.decided[key][server]++
				}
				if status == "200" {
					h.admitted[key]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	h.elapsed = time.Since(start)
	return h
}

// burstOr is at least what a fresh bucket of burst admits of the requests
// the limiter decided on each server's copy (jar), summed: the least a
// limiter admits however slowly this machine sent them.
func (h hammered) burstOr(key string, burst int64, servers []int) int64 {
	var least int64
	for _, s := range servers {
		least += min(burst, h.decided[key][s])
	}
	return least
}

func bucketScenario(kind sim.TopologyKind, servers int) sim.Scenario {
	return sim.Scenario{
		Name: "hammer", Duration: 10 * time.Second, Step: time.Second, Seed: 1, Servers: servers, Balancer: sim.RoundRobin,
		Limit:    sim.Limit{Algorithm: "token-bucket", Params: algorithms.Params{Rate: algorithms.Rate{N: 20, Per: time.Second}, Burst: 10}, Key: sim.KeyAPIKey},
		Topology: sim.Topology{Kind: kind, OnError: store.FailOpen, Clock: sim.ServerClock, PrimaryStopsAfter: sim.PrimaryNeverStops},
	}
}

func storesToTry(t *testing.T) []string {
	kinds := []string{"memory", "miniredis"}
	if _, err := exec.LookPath("redis-server"); err == nil {
		kinds = append(kinds, "redis-server")
	} else {
		t.Log("redis-server not installed: skipping the real-Redis fleet (.ci/run installs it)")
	}
	return kinds
}

// TestSharedStoreNeverOverAdmits: under concurrent load from many
// goroutines on many connections through four servers, an atomic shared
// store never admits more than burst + rate × elapsed for any key, and
// per-server jars no more than servers × that. The least each admits is
// judged on what the limiter was asked on this run (a fresh bucket's
// burst of it): on a loaded machine under -race the hammer sends fewer,
// and fail-open answers to timed-out store calls are not the limiter's.
func TestSharedStoreNeverOverAdmits(t *testing.T) {
	wallClock(t)
	keys := []string{"alpha", "beta", "gamma"}
	const burst, rate = 10, 20 // bucketScenario's
	for _, kind := range storesToTry(t) {
		f := startFleet(t, bucketScenario(sim.Shared, 4), kind)
		h := hammerFleet(t, f, keys, 16, 1500*time.Millisecond)
		bound := burst + int64(rate*h.elapsed.Seconds()) + 1
		for _, k := range keys {
			// The shared store is one bucket, whichever server asks:
			// at least its burst of what the limiter decided (judged on
			// what this machine managed to send), never more than the
			// bound.
			least := min(burst, h.burstOr(k, burst, []int{0, 1, 2, 3}))
			if h.admitted[k] > bound || h.admitted[k] < least {
				t.Errorf("%s shared: key %s admitted %d in %s, want at most burst + rate × t = %d (and at least %d of the %d the limiter decided)",
					kind, k, h.admitted[k], h.elapsed.Round(time.Millisecond), bound, least, sumOf(h.decided[k]))
			}
		}
		t.Logf("%s shared: admitted %v in %s (bound %d), answers %v", kind, h.admitted, h.elapsed.Round(time.Millisecond), bound, h.statuses)
	}
	f := startFleet(t, bucketScenario(sim.Local, 4), "memory")
	h := hammerFleet(t, f, keys, 16, 1500*time.Millisecond)
	single := burst + int64(rate*h.elapsed.Seconds())
	for _, k := range keys {
		// A jar per server: each admits its own burst of what it decided,
		// together more than one jar's bound could, and no more than four.
		least := h.burstOr(k, burst, []int{0, 1, 2, 3})
		if h.admitted[k] < least || h.admitted[k] > 4*single+4 {
			t.Errorf("local jars: key %s admitted %d, want at least the 4 jars' bursts of what each decided (%d) and at most 4 servers × %d", k, h.admitted[k], least, single)
		}
	}
	t.Logf("local jars: admitted %v in %s (one jar's bound %d), answers %v", h.admitted, h.elapsed.Round(time.Millisecond), single, h.statuses)
}

// sumOf is the sum of m's values.
func sumOf(m map[int]int64) (n int64) {
	for _, v := range m {
		n += v
	}
	return n
}

// TestRedisKilledMidRun kills the fleet's own redis-server during a load,
// with each fail policy: while it is down every answer is the policy's
// (all admitted and marked failed-open, or all 503), the servers stay up,
// and when it is back the limiter decides again. Every request gets one
// answer.
func TestRedisKilledMidRun(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not installed (.ci/run installs it)")
	}
	for _, policy := range []store.Policy{store.FailOpen, store.FailClosed} {
		sc := bucketScenario(sim.Shared, 2)
		sc.Topology.OnError = policy
		f := startFleet(t, sc, "redis-server")
		client := &http.Client{Timeout: 5 * time.Second}
		ask := func() (int, string) {
			req, _ := http.NewRequest(http.MethodGet, f.URLs[0]+"/api", nil)
			req.Header.Set(APIKeyHeader, "k")
			resp, err := client.Do(req)
			if err != nil {
				t.Fatalf("%s: the server did not answer: %v", policy, err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			return resp.StatusCode, resp.Header.Get(DecidedByHeader)
		}
		for range 30 {
			if code, by := ask(); by != "" || (code != 200 && code != 429) {
				t.Fatalf("%s before the outage: %d decided by %q", policy, code, by)
			}
		}
		if err := f.Fault(sim.Fault{Kind: sim.Outage}, true); err != nil {
			t.Fatal(err)
		}
		for i := range 30 {
			code, by := ask()
			switch {
			case policy == store.FailOpen && (code != 200 || by != string(store.FailOpen)):
				t.Fatalf("fail-open, request %d during the outage: %d decided by %q; want 200 by fail-open", i, code, by)
			case policy == store.FailClosed && code != http.StatusServiceUnavailable:
				t.Fatalf("fail-closed, request %d during the outage: %d; want 503", i, code)
			}
		}
		if err := f.Fault(sim.Fault{Kind: sim.Outage}, false); err != nil {
			t.Fatal(err)
		}
		// The client's pool redials in the background: give it a moment,
		// then every answer must be the limiter's again.
		deadline := time.Now().Add(5 * time.Second)
		for {
			if _, by := ask(); by == "" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: 5 s after redis-server came back, the policy still decides", policy)
			}
			time.Sleep(50 * time.Millisecond)
		}
		var limited int
		for range 60 {
			code, by := ask()
			if by != "" {
				t.Fatalf("%s after the outage: still decided by %q", policy, by)
			}
			if code == 429 {
				limited++
			}
		}
		if limited == 0 {
			t.Fatalf("%s after the outage: 60 requests at once and none limited: the limiter is not deciding", policy)
		}
	}
}

func TestLoadRefusesRemoteTargets(t *testing.T) {
	sc := bucketScenario(sim.Shared, 1)
	sc.Clients = []sim.Client{{Name: "c", APIKey: "c", Traffic: []sim.Traffic{{Pattern: sim.Constant, Rate: algorithms.Rate{N: 1, Per: time.Second}}}}}
	for _, target := range []string{"http://10.1.2.3:8080", "http://example.com", "ftp://127.0.0.1", "nonsense"} {
		if _, err := Load(context.Background(), sc, LoadOptions{Targets: []string{target}}); err == nil {
			t.Errorf("Load accepted target %q", target)
		}
	}
}

// TestLoadCountsEveryRequestOnce: a short live run on a local fleet, with
// retries, records each request it sent exactly once.
func TestLoadCountsEveryRequestOnce(t *testing.T) {
	wallClock(t)
	sc := bucketScenario(sim.Local, 2)
	sc.Duration = 2 * time.Second
	sc.Clients = []sim.Client{
		{Name: "steady", APIKey: "s", Traffic: []sim.Traffic{{Pattern: sim.Constant, Rate: algorithms.Rate{N: 100, Per: time.Second}}}},
		{Name: "polite", APIKey: "p", Traffic: []sim.Traffic{{Pattern: sim.Constant, Rate: algorithms.Rate{N: 50, Per: time.Second}}}, Retry: sim.Retry{Policy: sim.RetryImmediate, Max: 2}},
	}
	f := startFleet(t, sc, "memory")
	res, err := Load(context.Background(), sc, LoadOptions{Targets: f.URLs})
	if err != nil {
		t.Fatal(err)
	}
	var firstTries int64
	sim.Arrivals(sc, func(sim.Arrival) bool { firstTries++; return true })
	var sent, retries int64
	for _, c := range res.Clients {
		sent += c.Sent
		retries += c.Retries
		if c.Allowed+c.Rejected != c.Sent {
			t.Errorf("%s: %d allowed + %d rejected != %d sent", c.Name, c.Allowed, c.Rejected, c.Sent)
		}
	}
	// On a loaded machine the schedule slips, and a first try whose turn
	// comes after the scenario's end is not sent but counted as such: every
	// first try the scenario makes is one or the other, once.
	if sent-retries+res.Audit.NotSent != firstTries {
		t.Errorf("recorded %d first tries and %d not sent, the scenario makes %d", sent-retries, res.Audit.NotSent, firstTries)
	}
	// Whether the polite client is refused at all depends on how fast
	// this machine sent its first tries: judged on what was observed.
	switch polite := res.Clients[1]; {
	case polite.Rejected == 0:
		t.Logf("not judged: the polite client was never refused on this run (%d sent)", polite.Sent)
	case polite.Retries == 0 && res.Audit.NotSent == 0:
		t.Errorf("the polite client was refused %d times and never retried", polite.Rejected)
	}
}

// TestSplitBrainPartitionForReal: two copies of the state; during the
// partition the cut-off servers switch to the second, and both sides admit
// their rate.
func TestSplitBrainPartitionForReal(t *testing.T) {
	// A minute's refill is one token: nothing the machine's speed
	// decides. Each side of the partition is drained, then asked again.
	sc := bucketScenario(sim.SplitBrain, 4)
	sc.Limit.Params = algorithms.Params{Rate: algorithms.Rate{N: 1, Per: time.Minute}, Burst: 10}
	f := startFleet(t, sc, "memory")
	// take sends n requests for key to server i and returns how many the
	// limiter admitted (a fail policy's 200 is not counted).
	take := func(i int, key string, n int) (admitted int) {
		t.Helper()
		for range n {
			req, _ := http.NewRequest(http.MethodGet, f.URLs[i]+"/api", nil)
			req.Header.Set(APIKeyHeader, key)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && resp.Header.Get(DecidedByHeader) == "" {
				admitted++
			}
		}
		return admitted
	}
	// One store: what server 0 drained, server 2 finds drained.
	if got := take(0, "before", 12); got != 10 {
		t.Fatalf("before the partition, server 0 admitted %d of 12, want the burst, 10", got)
	}
	if got := take(2, "before", 5); got > 1 {
		t.Errorf("before the partition, server 2 admitted %d after server 0 drained the key, want at most the minute's 1", got)
	}
	partition := sim.Fault{Kind: sim.Partition, Groups: [][]int{{0, 1}, {2, 3}}}
	if err := f.Fault(partition, true); err != nil {
		t.Fatal(err)
	}
	// Split: servers 2 and 3 count on the replica, which never heard of
	// what the primary's side took.
	if got := take(0, "during", 12); got != 10 {
		t.Fatalf("during the partition, server 0 admitted %d of 12, want the burst, 10", got)
	}
	if got := take(2, "during", 12); got < 10 {
		t.Errorf("during the partition, server 2 admitted %d of 12 after server 0 drained the key, want its own copy's burst, 10: each side counts alone", got)
	}
	if err := f.Fault(partition, false); err != nil {
		t.Fatal(err)
	}
}

// TestSplitBrainRoutesAsTheSimulator: the fleet decides a split brain
// through the simulator's topology. A cut-off server fails closed until
// failover_after, then decides on the replica, which holds what the
// primary had replicated (an empty bucket), not a fresh one; the heal puts
// it back on the primary. The limit refills once a minute, so a loaded
// machine's delays cannot refill it; the one timing assertion (the request
// before failover) is made only when that request was observed in time.
func TestSplitBrainRoutesAsTheSimulator(t *testing.T) {
	wallClock(t)
	sc := bucketScenario(sim.SplitBrain, 4)
	sc.Limit.Params = algorithms.Params{Rate: algorithms.Rate{N: 1, Per: time.Minute}, Burst: 3}
	sc.Topology.OnError = store.FailClosed
	sc.Topology.FailoverAfter = 2 * time.Second
	f := startFleet(t, sc, "memory")
	status := func(server int) int {
		t.Helper()
		req, _ := http.NewRequest("GET", f.URLs[server]+"/", nil)
		req.Header.Set(APIKeyHeader, "k")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for i := range 3 {
		if got := status(0); got != http.StatusOK {
			t.Fatalf("request %d of the burst: %d", i+1, got)
		}
	}
	partition := sim.Fault{Kind: sim.Partition, Groups: [][]int{{0, 1}, {2, 3}}}
	cut := time.Now()
	if err := f.Fault(partition, true); err != nil {
		t.Fatal(err)
	}
	before := status(2)
	if time.Since(cut) < sc.Topology.FailoverAfter {
		if before != http.StatusServiceUnavailable {
			t.Errorf("a cut-off server before failover answered %d, want 503 (no store: fail closed)", before)
		}
	} else {
		t.Logf("the request meant for before failover came %s after the cut: not judged", time.Since(cut))
	}
	if got := status(0); got != http.StatusTooManyRequests {
		t.Errorf("the primary's side answered %d, want 429 (its bucket is empty)", got)
	}
	time.Sleep(time.Until(cut.Add(sc.Topology.FailoverAfter + 100*time.Millisecond)))
	if got := status(3); got != http.StatusTooManyRequests {
		t.Errorf("a failed-over server answered %d, want 429: the replica has the primary's empty bucket (a fresh replica would admit)", got)
	}
	// A key first seen on the replica, after failover: the heal must take
	// its write back too, as the simulator's heal does (every key), so
	// that the replica is the primary's copy again.
	req, _ := http.NewRequest("GET", f.URLs[3]+"/", nil)
	req.Header.Set(APIKeyHeader, "replica-only")
	if resp, err := http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	} else if resp.Body.Close(); resp.StatusCode != http.StatusOK {
		t.Fatalf("a new key on the failed-over replica answered %d, want 200", resp.StatusCode)
	}
	if err := f.Fault(partition, false); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	replica := f.copies[1].(*store.Memory)
	for _, key := range replica.Keys() {
		want, _ := f.copies[0].Load(ctx, key)
		got, _ := replica.Load(ctx, key)
		if got.T != want.T || got.N != want.N {
			t.Errorf("after the heal the replica holds %+v for %s, the primary %+v: the replica's write during the partition survived", got, key, want)
		}
	}
	if got := status(2); got != http.StatusTooManyRequests {
		t.Errorf("after the heal, server 2 answered %d, want 429 from the primary", got)
	}
}

// TestFaultsFromAnotherProcess: a load run that did not start the fleet
// applies the scenario's faults through FaultPath on the control listener,
// with the token; the API ports, the wrong token and no token are refused.
func TestFaultsFromAnotherProcess(t *testing.T) {
	sc := bucketScenario(sim.Shared, 2)
	sc.Topology.OnError = store.FailClosed
	f := startFleet(t, sc, "memory")
	client := &http.Client{Timeout: 5 * time.Second}
	status := func() int {
		req, _ := http.NewRequest(http.MethodGet, f.URLs[1]+"/api", nil)
		req.Header.Set(APIKeyHeader, "k")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, target := range f.URLs {
		if err := RemoteFaults(client, target, f.Token)(sim.Fault{Kind: sim.Outage}, true); err == nil || !strings.Contains(err.Error(), "404") {
			t.Errorf("a fault on API port %s: %v, want refused with 404", target, err)
		}
	}
	for _, token := range []string{"", "guess", f.Token + "0"} {
		if err := RemoteFaults(client, f.ControlURL, token)(sim.Fault{Kind: sim.Outage}, true); err == nil || !strings.Contains(err.Error(), "401") {
			t.Errorf("a fault with token %q: %v, want refused with 401", token, err)
		}
	}
	if got := status(); got != http.StatusOK {
		t.Fatalf("after refused faults: %d, want 200 (no outage)", got)
	}
	if !strings.HasPrefix(f.ControlURL, "http://127.0.0.1:") || len(f.Token) != 32 {
		t.Errorf("control %q token %q: want loopback and 128 random bits", f.ControlURL, f.Token)
	}
	apply := RemoteFaults(client, f.ControlURL, f.Token)
	if err := apply(sim.Fault{Kind: sim.Outage}, true); err != nil {
		t.Fatal(err)
	}
	if got := status(); got != http.StatusServiceUnavailable {
		t.Fatalf("during a remote outage, fail-closed: %d, want 503", got)
	}
	if err := apply(sim.Fault{Kind: sim.Outage}, false); err != nil {
		t.Fatal(err)
	}
	if got := status(); got != http.StatusOK {
		t.Fatalf("after the outage: %d, want 200", got)
	}
	if err := apply(sim.Fault{Kind: "earthquake"}, true); err == nil {
		t.Fatal("an unknown fault kind was accepted")
	}
}

// loadAndReplay runs sc's load against targets, its faults applied to
// fleet, and the simulator on the arrivals the load achieved
// (ObservedScenario): the pair every live-versus-simulated test compares.
func loadAndReplay(t *testing.T, sc sim.Scenario, fleet *Fleet, targets []string) (*LoadResult, *sim.Result) {
	t.Helper()
	res, err := Load(context.Background(), sc, LoadOptions{Targets: targets, OnFault: fleet.Fault})
	if err != nil {
		t.Fatal(err)
	}
	// A simulated cluster fails over at the instants the fleet drew.
	observed, err := sim.Run(context.Background(), ObservedScenario(sc, res), sim.Options{ClusterJitter: ReplayDraws(fleet.ClusterDraws())})
	if err != nil {
		t.Fatal(err)
	}
	return res, observed
}
