package sim

import "testing"

// A run whose requests cost more than 1 counts the quota asked for and
// given beside the requests: a search costing 5 against a bucket of 20 at
// 10/s is given 5 per admission; a run of unit costs counts none (its
// costs are its counts, and its JSON stays as it was).
func TestCostIsCountedBesideRequests(t *testing.T) {
	sc := hammer(Shared, 1, RoundRobin)
	sc.Clients[0].Traffic[0].Cost = 5
	c := mustRun(t, sc).Clients[0]
	if c.CostSent != 5*c.Sent || c.CostAllowed != 5*c.Allowed {
		t.Errorf("cost sent %d and allowed %d for %d sent and %d allowed, want 5 each", c.CostSent, c.CostAllowed, c.Sent, c.Allowed)
	}
	// 4 searches from the full bucket at 0, then one each 0.5 s as 5
	// tokens refill: at 0.5 s … 9.5 s, 19 more (the run ends before 10 s).
	if want := int64(4 + 19); c.Allowed != want {
		t.Errorf("admitted %d searches, want %d", c.Allowed, want)
	}
	sc.Clients[0].Traffic[0].Cost = 1
	if c := mustRun(t, sc).Clients[0]; c.CostSent != 0 || c.CostAllowed != 0 {
		t.Errorf("a run of unit costs counted cost %d and %d, want none", c.CostSent, c.CostAllowed)
	}
}
