package live

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/sim"
)

func TestDecidedAt(t *testing.T) {
	const ms = time.Millisecond
	end := 30 * time.Second
	tests := []struct {
		name                string
		s                   seen
		sent, latency, want time.Duration
	}{
		{"no stamp: the send instant", seen{}, 100 * ms, 50 * ms, 100 * ms},
		{"stamped inside the span", seen{decided: 120 * ms, stamped: true}, 100 * ms, 50 * ms, 120 * ms},
		{"stamped before sending: another clock", seen{decided: 90 * ms, stamped: true}, 100 * ms, 50 * ms, 100 * ms},
		{"stamped after the answer: another clock", seen{decided: 400 * ms, stamped: true}, 100 * ms, 50 * ms, 150 * ms},
		{"decided after the scenario's end", seen{decided: end + 5*ms, stamped: true}, end - 10*ms, 20 * ms, end - time.Microsecond},
		{"a wild stamp", seen{decided: -1 << 62, stamped: true}, 100 * ms, 50 * ms, 100 * ms},
	}
	for _, tt := range tests {
		if got := tt.s.decidedAt(tt.sent, tt.latency, end); got != tt.want {
			t.Errorf("%s: decidedAt = %s, want %s", tt.name, got, tt.want)
		}
	}
}

// A request that waits between leaving the client and reaching the
// limiter (here a proxy holds each for 500 ms, as a backlog on a loaded
// machine does) and crosses the start of an outage is decided by the fail
// policy. The load run records each request at the instant the server
// decided it (DecidedAtHeader), so the simulator fed those instants agrees
// with the live figures; fed the send instants, it would refuse the ~50
// requests sent in the half second before the outage that fail-open let
// through.
func TestLiveRecordsTheInstantOfDecision(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a 6 s live run")
	}
	wallClock(t)
	sc := bucketScenario(sim.Shared, 1)
	sc.Duration = 6 * time.Second
	sc.Topology.OnError = "fail-open"
	sc.Limit = sim.Limit{Algorithm: "token-bucket", Key: sim.KeyAPIKey,
		Params: algorithms.Params{Rate: perSecond(10), Burst: 20}}
	sc.Clients = []sim.Client{{Name: "scraper", APIKey: "scraper",
		Traffic: []sim.Traffic{{Pattern: sim.Constant, Rate: perSecond(100)}}, Retry: sim.Retry{Policy: sim.RetryNone}}}
	// Until the end: only the outage's start is crossed.
	sc.Faults = []sim.Fault{{Kind: sim.Outage, Start: 2 * time.Second, End: 6 * time.Second}}
	fleet := startFleet(t, sc, "memory")
	backend, err := url.Parse(fleet.URLs[0])
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(backend)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(500 * time.Millisecond)
		proxy.ServeHTTP(w, r)
	}))
	defer slow.Close()
	res, observed := loadAndReplay(t, sc, fleet, []string{slow.URL})
	c, o := res.Clients[0], observed.Clients[0]
	t.Logf("%s; %s; scraper allowed %d live, %d simulated on the observed instants; failed open %d / %d",
		res.Audit.Lateness(), res.Audit.Deciding(), c.Allowed, o.Allowed, c.FailedOpen, o.FailedOpen)
	if res.Audit.DecideP50Ms < 400 {
		t.Fatalf("requests were decided %.0f ms after sending at the median, want the proxy's 500: the stamp is not read", res.Audit.DecideP50Ms)
	}
	if diff := c.Allowed - o.Allowed; diff > c.Allowed/20+1 || -diff > c.Allowed/20+1 {
		t.Errorf("allowed %d live, %d simulated on the observed instants: more than 5%% apart", c.Allowed, o.Allowed)
	}
}
