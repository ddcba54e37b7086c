package live

import (
	"context"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/sim"
)

// A limit in shadow mode over real HTTP: the fleet refuses nothing while
// it is shadowed, says which requests it would have refused, and the load
// run counts them as would_reject; once it enforces, it refuses. Every
// assertion is on what was observed, not on a schedule: a shadowed answer
// can only come before the flip (the load run starts after the fleet, so
// its clock reads no later than the fleet's).
func TestShadowModeOverHTTP(t *testing.T) {
	wallClock(t)
	sc := bucketScenario(sim.Shared, 2)
	sc.Duration = 2 * time.Second
	sc.Limit.Shadow, sc.Limit.ShadowUntil = true, time.Second
	sc.Clients = []sim.Client{{Name: "batch", APIKey: "batch", Traffic: []sim.Traffic{{Pattern: sim.Constant, Rate: perSecond(100)}}, Retry: sim.Retry{Policy: sim.RetryNone}}}
	fleet := startFleet(t, sc, "memory")
	live, err := Load(context.Background(), sc, LoadOptions{Targets: fleet.URLs})
	if err != nil {
		t.Fatal(err)
	}
	c := live.Clients[0]
	if c.WouldReject == 0 || c.Rejected == 0 {
		t.Fatalf("batch: %+v; want requests let through in shadow mode and refused after it", c.Counts)
	}
	for _, o := range live.Observations {
		if o.Shadowed && o.At >= sc.Limit.ShadowUntil {
			t.Errorf("a request at %s was let through in shadow mode, after the limit began to enforce at %s", o.At, sc.Limit.ShadowUntil)
		}
		if o.Shadowed && !o.Decision.Allowed {
			t.Errorf("a shadowed request at %s was refused", o.At)
		}
	}
}

// A request's cost reaches the fleet (CostHeader) and is spent there: at
// 5 a request, a bucket of 10 refilling 20/s admits at most (10 + 20 × t)
// ÷ 5 in t, and the result counts the quota asked for and given.
func TestCostOverHTTP(t *testing.T) {
	wallClock(t)
	sc := bucketScenario(sim.Shared, 2)
	sc.Duration = 2 * time.Second
	sc.Clients = []sim.Client{{Name: "search", APIKey: "search", Traffic: []sim.Traffic{{Pattern: sim.Constant, Rate: perSecond(50), Cost: 5}}, Retry: sim.Retry{Policy: sim.RetryNone}}}
	fleet := startFleet(t, sc, "memory")
	live, err := Load(context.Background(), sc, LoadOptions{Targets: fleet.URLs})
	if err != nil {
		t.Fatal(err)
	}
	c := live.Clients[0]
	// The load run lasts the scenario's 2 s; the fleet started earlier and
	// its bucket began full, so it can have refilled for a little longer.
	elapsed := time.Since(fleet.started).Seconds()
	if bound := int64((10+20*elapsed)/5) + 1; c.Allowed > bound || c.Allowed == 0 {
		t.Errorf("admitted %d searches costing 5, want between 1 and %d", c.Allowed, bound)
	}
	if c.CostSent != 5*c.Sent || c.CostAllowed != 5*c.Allowed {
		t.Errorf("cost sent %d, allowed %d for %d sent, %d allowed: want 5 each", c.CostSent, c.CostAllowed, c.Sent, c.Allowed)
	}
}

func perSecond(perSecond int64) algorithms.Rate {
	return algorithms.Rate{N: perSecond, Per: time.Second}
}
