package sim

import (
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
)

// A fleet of 100/s: critical traffic at 50/s, sheddable at 100/s. The
// sheddable must leave half the bucket; the critical traffic is never shed,
// and the fleet serves no more than its capacity.
func TestShedderKeepsCriticalTraffic(t *testing.T) {
	sc := hammer(Shared, 2, RoundRobin)
	sc.Limit.Params = algorithms.Params{Rate: perSecond(1000), Burst: 1000}
	sc.Shedder = &Shedder{Capacity: perSecond(100), Burst: 100, Reserve: [3]float64{0, 0.2, 0.5}}
	sc.Clients = []Client{
		{Name: "pay", APIKey: "pay", Priority: "critical", Traffic: []Traffic{{Pattern: Constant, Rate: perSecond(50)}}, Retry: Retry{Policy: RetryNone}},
		{Name: "crawl", APIKey: "crawl", Priority: "sheddable", Traffic: []Traffic{{Pattern: Constant, Rate: perSecond(100)}}, Retry: Retry{Policy: RetryNone}},
	}
	r := mustRun(t, sc)
	pay, crawl := r.Clients[0], r.Clients[1]
	if pay.Rejected != 0 || pay.Shed != 0 {
		t.Errorf("critical traffic refused %d (shed %d), want none", pay.Rejected, pay.Shed)
	}
	if crawl.Shed == 0 || crawl.Shed != crawl.Rejected {
		t.Errorf("sheddable: shed %d of %d refused, want every refusal a 503", crawl.Shed, crawl.Rejected)
	}
	// burst + capacity × t: 100 + 100 × 10 s.
	if served := pay.Allowed + crawl.Allowed; served > 1100 {
		t.Errorf("the fleet served %d, more than its capacity of 1,100 in 10 s", served)
	}
	if r.Shedder == nil || r.Shedder.Reserve["sheddable"] != 50 || pay.Priority != "critical" {
		t.Errorf("the result's shedder %+v and priority %q, want the reserves and the client's priority", r.Shedder, pay.Priority)
	}
	if f := Findings(r); f[0].Kind != FindingShed || f[0].Client != "crawl" {
		t.Errorf("findings %+v, want shed about crawl first", f)
	}
	var fleet []int64
	for i, s := range r.State {
		if s.Key == FleetKey {
			fleet = r.StateAs(i, true).Remaining // every step's point
		}
	}
	if len(fleet) != 10 || fleet[9] < 50 || fleet[9] > 60 {
		t.Errorf("the fleet's series %v, want it to settle at the sheddable reserve, 50", fleet)
	}
}

func TestShedderRefusedByCheck(t *testing.T) {
	sc := hammer(Shared, 1, RoundRobin)
	sc.Clients[0].Priority = "urgent"
	if _, err := Run(t.Context(), sc, Options{}); err == nil {
		t.Error("an unknown priority ran")
	}
	sc = hammer(Shared, 1, RoundRobin)
	sc.Shedder = &Shedder{Capacity: perSecond(100), Burst: 100, Reserve: [3]float64{0, 0.6, 0.5}}
	if _, err := Run(t.Context(), sc, Options{}); err == nil {
		t.Error("a sheddable reserve below the normal one ran")
	}
}

// A request the concurrency limit admits and the shedder then turns away
// is not served: its lease comes back at once, as the middleware gives it
// back, and the next request finds the slot free. One in flight, 10/s
// served in 50 ms, a fleet of 1/s: every refusal is the shedder's 503,
// none the limit's 429. A shed request that kept its lease for its TTL
// would fill the one slot for 10 s.
func TestShedRequestGivesItsLeaseBack(t *testing.T) {
	for _, store := range []string{"memory", "miniredis"} {
		sc := hammer(Shared, 1, RoundRobin)
		sc.Topology.Store = store
		sc.Limit = Limit{Algorithm: "concurrency", Params: algorithms.Params{Burst: 1, Window: 10 * time.Second}, Key: KeyAPIKey}
		sc.Shedder = &Shedder{Capacity: perSecond(1), Burst: 1}
		sc.Clients = []Client{{Name: "c", APIKey: "c", Service: Service{Mean: 50 * time.Millisecond},
			Traffic: []Traffic{{Pattern: Constant, Rate: perSecond(10)}}, Retry: Retry{Policy: RetryNone}}}
		c := mustRun(t, sc).Clients[0]
		if c.Shed == 0 || c.Rejected != c.Shed {
			t.Errorf("%s: %d refused, %d of them shed; want every refusal shed, none by the limit", store, c.Rejected, c.Shed)
		}
		if want := int64(sc.Duration / time.Second); c.Allowed < want || c.Allowed > want+1 {
			t.Errorf("%s: %d served, want about the fleet's 1/s over %s", store, c.Allowed, sc.Duration)
		}
	}
}

// A key of several limits behind a load shedder: a shed request was
// admitted by every limit, so it is in no limit's rejected_by; the limits'
// refusals and the shedder's 503s add up to the rejected. Issue 27 counted
// the shed in the first limit's (46 where 0 is right).
func TestShedIsNoLimitsRefusal(t *testing.T) {
	for _, tc := range []struct {
		name     string
		bucket   algorithms.Params
		refusing bool // whether the limits refuse some requests themselves
	}{
		{"limits that never refuse", algorithms.Params{Rate: perSecond(1000), Burst: 1000}, false},
		{"limits that refuse too", algorithms.Params{Rate: perSecond(150), Burst: 20}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := quota(Shared, 1)
			sc.Limit.Params = tc.bucket
			sc.Also[0].Params.Rate.N = 100_000 // the per-minute quota never binds
			sc.Clients[0].Traffic[0].Rate = perSecond(200)
			sc.Clients[0].Priority = "sheddable"
			sc.Shedder = &Shedder{Capacity: perSecond(100), Burst: 100, Reserve: [3]float64{0, 0.2, 0.5}}
			c := mustRun(t, sc).Clients[0]
			if c.Shed == 0 {
				t.Fatalf("nothing shed: %+v", c.Counts)
			}
			limits := c.RejectedBy["per-second"] + c.RejectedBy["per-minute"]
			if limits+c.Shed != c.Rejected {
				t.Errorf("rejected_by %v (%d) and %d shed, but %d rejected: want them to add up", c.RejectedBy, limits, c.Shed, c.Rejected)
			}
			if (limits > 0) != tc.refusing || c.RejectedBy["per-minute"] != 0 {
				t.Errorf("rejected_by %v, want the per-second limit's refusals only (refusing: %v)", c.RejectedBy, tc.refusing)
			}
		})
	}
}
