package live

import (
	"context"
	"testing"
	"time"

	"github.com/ratelim/ratelim/sim"
)

// The fleet's load shedder over real HTTP: one capacity for both servers,
// 100/s with a burst of 100, of which a sheddable request must leave half.
// A crawler at 150/s is shed, every one of its refusals a 503 that says so
// with a Retry-After; checkout at 30/s is never shed, since the crawler can
// only take the bucket down to the 50 it must leave; the fleet serves no
// more than its capacity. The simulator, fed the arrivals the load run
// really made, sheds the crawler within a few percent of the fleet.
func TestShedderOverHTTP(t *testing.T) {
	wallClock(t)
	sc := bucketScenario(sim.Shared, 2)
	sc.Duration = 2 * time.Second
	sc.Limit.Params.Rate, sc.Limit.Params.Burst = perSecond(1000), 1000 // nobody's own limit binds
	sc.Shedder = &sim.Shedder{Capacity: perSecond(100), Burst: 100, Reserve: [3]float64{0, 0.2, 0.5}}
	sc.Clients = []sim.Client{
		{Name: "checkout", APIKey: "checkout", Priority: "critical", Traffic: []sim.Traffic{{Pattern: sim.Constant, Rate: perSecond(30)}}, Retry: sim.Retry{Policy: sim.RetryNone}},
		{Name: "crawler", APIKey: "crawler", Priority: "sheddable", Traffic: []sim.Traffic{{Pattern: sim.Constant, Rate: perSecond(150)}}, Retry: sim.Retry{Policy: sim.RetryNone}},
	}
	fleet := startFleet(t, sc, "memory")
	live, err := Load(context.Background(), sc, LoadOptions{Targets: fleet.URLs})
	if err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(fleet.started).Seconds()
	checkout, crawler := live.Clients[0], live.Clients[1]
	if checkout.Rejected != 0 || checkout.Shed != 0 {
		t.Errorf("checkout: %d refused, %d shed; want none: critical traffic keeps its reserve", checkout.Rejected, checkout.Shed)
	}
	if crawler.Shed == 0 || crawler.Rejected != crawler.Shed || crawler.FailedClosed != 0 {
		t.Errorf("crawler: %d refused, %d shed, %d failed closed; want every refusal the shedder's 503", crawler.Rejected, crawler.Shed, crawler.FailedClosed)
	}
	if served, bound := checkout.Allowed+crawler.Allowed, int64(100+100*elapsed); served > bound {
		t.Errorf("the fleet served %d in %.2f s, more than its capacity allows (%d)", served, elapsed, bound)
	}
	var shed int64
	for _, o := range live.Observations {
		if o.Shed {
			shed++
			if o.Decision.Allowed || o.Decision.Policy != "" || o.Decision.RetryAfter < time.Second {
				t.Errorf("a shed answer at %s observed as %+v; want a refusal of the limiter's kind with Retry-After ≥ 1 s", o.At, o.Decision)
			}
		}
	}
	if shed != crawler.Shed {
		t.Errorf("%d shed answers observed, the result counts %d", shed, crawler.Shed)
	}
	if b := live.Audit.Breaches(); b != 0 || live.Audit.TransportErrors != 0 {
		t.Errorf("audit: %+v", live.Audit)
	}
	if raceDetector {
		return // -race slows HTTP: the arrivals still replay, the timing of the servers' clocks less so
	}
	observed, err := sim.Run(context.Background(), ObservedScenario(sc, live), sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	o := observed.Clients[1]
	if diff := crawler.Shed - o.Shed; diff > o.Shed/20+5 || -diff > o.Shed/20+5 {
		t.Errorf("crawler shed %d live, %d simulated on the same arrivals: more than 5%% apart", crawler.Shed, o.Shed)
	}
	t.Logf("crawler: shed %d live, %d simulated on the observed arrivals; %s", crawler.Shed, o.Shed, live.Audit.Lateness())
}
