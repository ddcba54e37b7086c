package live

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/topology"
)

// hangGuard bounds a wait for something that must happen: a failure when
// exceeded, never a schedule the test asserts on.
const hangGuard = 10 * time.Second

// slowClient is a key limited to maxInFlight requests in flight (leases of
// ttl), on two servers sharing one memory store, and one client sending
// rate a second for d, each request taking service at the server: about
// rate × service in flight if nothing refused them.
func slowClient(maxInFlight int64, ttl time.Duration, rate int64, service, d time.Duration) sim.Scenario {
	sc := bucketScenario(sim.Shared, 2)
	sc.Duration = d
	sc.Limit = sim.Limit{Algorithm: "concurrency", Key: sim.KeyAPIKey,
		Params: algorithms.Params{Burst: maxInFlight, Window: ttl}}
	sc.Clients = []sim.Client{{Name: "slow", APIKey: "slow",
		Traffic: []sim.Traffic{{Pattern: sim.Constant, Rate: perSecond(rate)}},
		Retry:   sim.Retry{Policy: sim.RetryNone}, Service: sim.Service{Mean: service}}}
	return sc
}

// A client that keeps about ten requests in flight against a limit of
// three, over real HTTP on loopback, each request held at the server for
// its service time: the demo API never serves more than three at once;
// every request that had to be refused, because three leases were held
// for certain across its whole decision, was; the 429s keep the header
// rules (no audit breach). With a crash of one server in the middle, its
// leases held until their TTL, the bound holds as well. Only what was
// observed is asserted: on a loaded machine fewer
// requests leave, and fewer overlap.
func TestConcurrencyLimitOverHTTP(t *testing.T) {
	wallClock(t)
	t.Run("steady", func(t *testing.T) { checkConcurrencyOverHTTP(t, false) })
	t.Run("crash", func(t *testing.T) { checkConcurrencyOverHTTP(t, true) })
}

func checkConcurrencyOverHTTP(t *testing.T, crash bool) {
	const n, service = 3, 500 * time.Millisecond
	sc := slowClient(n, 30*time.Second, 20, service, 3*time.Second)
	if crash {
		sc.Faults = []sim.Fault{{Kind: sim.Crash, Servers: []int{1}, Start: time.Second, End: 2 * time.Second}}
	}
	fleet := startFleet(t, sc, "memory")
	res, err := Load(context.Background(), sc, LoadOptions{Targets: fleet.URLs, OnFault: fleet.Fault})
	if err != nil {
		t.Fatal(err)
	}
	a, c := res.Audit, res.Clients[0]
	t.Logf("%s; %d sent, %d allowed, %d rejected, %d transport errors; peak %d in flight at the servers, %d leases abandoned",
		a.Lateness(), c.Sent, c.Allowed, c.Rejected, a.TransportErrors, fleet.PeakInFlight(), fleet.Abandoned())
	if p := fleet.PeakInFlight(); p > n || p < 1 {
		t.Errorf("the demo API served %d requests at once; want 1 to %d", p, n)
	}
	if a.Breaches() != 0 || a.Redirects != 0 || (!crash && a.TransportErrors != 0) {
		t.Errorf("audit: %+v", a)
	}
	if c.Allowed < 1 {
		t.Errorf("nothing admitted: %+v", c.Counts)
	}
	// An admitted request held its lease from its decision, no later than
	// its answer's arrival less the service time, for at least the
	// service time after it was sent. A request decided, for certain,
	// while n such leases were held must have been refused.
	var held []sim.Observation
	for _, o := range res.Observations {
		if o.Decision.Allowed {
			held = append(held, o)
		}
	}
	forced := 0
	if crash {
		// Each request the crash abandoned was admitted, and its client
		// saw the 200 and then its answer cut off: counted admitted, as
		// the simulator counts it.
		if a.Cut != fleet.Abandoned() {
			t.Errorf("%d answers cut off, %d leases abandoned by the crash: want one cut answer per abandoned lease", a.Cut, fleet.Abandoned())
		}
		return
	}
	for _, r := range res.Observations {
		covering := 0
		for _, h := range held {
			if h.Seq != r.Seq && h.At+h.Latency-service <= r.At && r.At+r.Latency <= h.At+service {
				covering++
			}
		}
		if covering >= n {
			forced++
			if r.Decision.Allowed {
				t.Errorf("request at %s admitted while %d leases were held throughout its decision", r.At, covering)
			}
		}
	}
	t.Logf("%d requests were decided while %d leases were certainly held", forced, n)
	if forced > 0 && c.Rejected == 0 {
		t.Error("no refusal")
	}
}

// A client sends its service time in ServiceHeader, and the demo API
// holds the request that long: a request of 300 ms is served (its body
// ends) no sooner; one asking more than MaxService is held MaxService at most;
// nonsense is served at once.
func TestServiceHeader(t *testing.T) {
	for _, tt := range []struct {
		header string
		want   time.Duration
	}{
		{"", 0}, {"300ms", 300 * time.Millisecond}, {"2h", MaxService}, {"-1s", 0}, {"soon", 0}, {"0", 0},
	} {
		r, _ := http.NewRequest(http.MethodGet, "/", nil)
		if tt.header != "" {
			r.Header.Set(ServiceHeader, tt.header)
		}
		if got := serviceOf(r); got != tt.want {
			t.Errorf("serviceOf(%q) = %s; want %s", tt.header, got, tt.want)
		}
	}
	fleet := startFleet(t, slowClient(5, time.Minute, 1, 0, time.Second), "memory")
	req, _ := http.NewRequest(http.MethodGet, fleet.URLs[0]+"/api", nil)
	req.Header.Set(APIKeyHeader, "k")
	req.Header.Set(ServiceHeader, "300ms")
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	// The status comes at once (admitted), the body when served.
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if took := time.Since(start); resp.StatusCode != http.StatusOK || err != nil || took < 300*time.Millisecond {
		t.Errorf("status %d, body %q (%v) after %s; want 200 and a body after at least 300ms", resp.StatusCode, body, err, took)
	}
}

// Load draws each request's service time from its client's Service: the
// mean, or an exponential draw of it, never over MaxService.
func TestLoadServiceTimes(t *testing.T) {
	l := &loader{rng: newRand(1)}
	if d := l.serviceTime(sim.Client{}); d != 0 {
		t.Errorf("no Service: %s; want 0", d)
	}
	if d := l.serviceTime(sim.Client{Service: sim.Service{Mean: 2 * time.Second}}); d != 2*time.Second {
		t.Errorf("a fixed Service of 2s: %s", d)
	}
	if d := l.serviceTime(sim.Client{Service: sim.Service{Mean: time.Hour}}); d != MaxService {
		t.Errorf("a Service of 1h: %s; want MaxService", d)
	}
	var sum time.Duration
	const draws = 2000
	for range draws {
		d := l.serviceTime(sim.Client{Service: sim.Service{Mean: 100 * time.Millisecond, Exponential: true}})
		if d < 0 || d > 5*time.Second {
			t.Fatalf("exponential draw %s outside 0 to 50 means", d)
		}
		sum += d
	}
	if mean := sum / draws; mean < 80*time.Millisecond || mean > 120*time.Millisecond {
		t.Errorf("mean of %d exponential draws %s; want about 100ms", draws, mean)
	}
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 7)) }

// A crashed server is out of the load run's rotation: every pick lands on
// a live server, the next one up.
func TestLoadRoutesAroundCrashedServers(t *testing.T) {
	var targets []*url.URL
	for i := range 3 {
		targets = append(targets, &url.URL{Scheme: "http", Host: "127.0.0.1:" + string(rune('0'+i))})
	}
	l := &loader{targets: targets, down: []bool{false, true, false}, keyHashes: []uint64{0}, rng: newRand(1),
		spread: topology.Spreader{Balancer: sim.RoundRobin, Servers: 3}}
	var got []string
	for range 6 {
		got = append(got, l.target(0).Host)
	}
	if slices.Contains(got, targets[1].Host) {
		t.Errorf("picked the crashed server: %v", got)
	}
}

// getHeld sends a GET to url with the client's key and a service time, and
// returns its status, or 0 and the error if no answer came.
func getHeld(client *http.Client, url, service string) (int, error) {
	code, _, err := getHeaders(client, url, service)
	return code, err
}

// getHeaders is getHeld with the answer's header.
func getHeaders(client *http.Client, url, service string) (int, http.Header, error) {
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set(APIKeyHeader, "slow")
	if service != "" {
		req.Header.Set(ServiceHeader, service)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	// A body cut short is a request the server abandoned (a crash).
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header, err
}

// A crash, applied through the fleet's control listener: the crashed
// server cuts the connections of the requests it was holding and never
// gives their leases back, so the key's slots stay taken (a request to the
// other server is refused) until their TTL, after the crash has ended
// too; meanwhile the crashed server answers nothing.
func TestCrashAbandonsLeases(t *testing.T) {
	const ttl = 60 * time.Second
	sc := slowClient(2, ttl, 1, 0, time.Minute)
	fleet := startFleet(t, sc, "memory")
	client := &http.Client{Timeout: hangGuard + MaxService, Transport: &http.Transport{DisableKeepAlives: true}}
	crash := RemoteFaults(client, fleet.ControlURL, fleet.Token)
	fault := sim.Fault{Kind: sim.Crash, Servers: []int{1}}

	leased := time.Now()
	cut := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := getHeld(client, fleet.URLs[1]+"/api", "50s")
			cut <- err
		}()
	}
	for deadline := time.Now().Add(hangGuard); fleet.inFlight[1].Load() < 2; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("server 1 holds %d requests; want 2", fleet.inFlight[1].Load())
		}
	}
	code, h, err := getHeaders(client, fleet.URLs[0]+"/api", "")
	if code != http.StatusTooManyRequests {
		t.Fatalf("a third request while two are held: %d %v; want 429", code, err)
	}
	// Two in flight, no window; a slot frees when a request completes, so
	// the limiter says to try again in a second.
	if p, ra := h.Get("RateLimit-Policy"), h.Get("Retry-After"); p != `"default";q=2` || ra != "1" {
		t.Errorf("429 with RateLimit-Policy %q, Retry-After %q; want \"default\";q=2 and 1", p, ra)
	}
	if err := crash(fault, true); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		select {
		case err := <-cut:
			if err == nil {
				t.Error("a request held by the crashed server was answered")
			}
		case <-time.After(hangGuard):
			t.Fatal("the crashed server still holds its requests")
		}
	}
	if got := fleet.Abandoned(); got != 2 {
		t.Errorf("%d leases abandoned; want 2", got)
	}
	if code, err := getHeld(client, fleet.URLs[1]+"/api", ""); err == nil {
		t.Errorf("the crashed server answered %d", code)
	}
	if err := crash(fault, false); err != nil {
		t.Fatal(err)
	}
	for _, u := range fleet.URLs {
		code, err := getHeld(client, u+"/api", "")
		if time.Since(leased) >= ttl {
			t.Skip("the machine took longer than the lease TTL: the leaked leases have expired")
		}
		if code != http.StatusTooManyRequests {
			t.Errorf("%s after the crash: %d %v; want 429 (the crashed server's leases are held until their TTL)", u, code, err)
		}
	}
}
