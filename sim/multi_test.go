package sim

import (
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
)

// quota is hammer with a second limit on the key: 60 a minute beside
// 10/s burst 20. At 1000/s for 10 s the bucket alone would admit 120; the
// quota stops the key at 60, and its refusals spend nothing of the bucket.
func quota(kind TopologyKind, servers int) Scenario {
	sc := hammer(kind, servers, RoundRobin)
	sc.Limit.Name = "per-second"
	sc.Also = []Limit{{Name: "per-minute", Algorithm: "fixed-window", Params: algorithms.Params{Rate: algorithms.Rate{N: 60, Per: time.Minute}, Window: time.Minute}, Key: sc.Limit.Key}}
	return sc
}

func TestSeveralLimitsEachBinds(t *testing.T) {
	r := mustRun(t, quota(Shared, 2))
	c := r.Clients[0]
	if c.Allowed != 60 {
		t.Errorf("allowed %d, want the per-minute quota's 60 (the bucket alone admits %d)", c.Allowed, single)
	}
	if got := c.RejectedBy["per-second"] + c.RejectedBy["per-minute"]; got != c.Rejected {
		t.Errorf("rejected_by %v sums to %d, rejected %d", c.RejectedBy, got, c.Rejected)
	}
	// The burst of 20 passes, then the bucket binds at 10/s until the
	// quota's 60 are spent at 4 s; from then on the quota refuses, and the
	// bucket, full again, refuses nothing.
	if c.RejectedBy["per-second"] == 0 || c.RejectedBy["per-minute"] == 0 {
		t.Errorf("rejected_by %v, want both limits to have refused", c.RejectedBy)
	}
	if len(r.Limit.Limits) != 2 || r.Limit.Limits[1].Name != "per-minute" || r.Limit.Limits[1].WindowS != 60 || r.Limit.Limits[1].Burst != 0 {
		t.Errorf("limit.limits %+v, want per-second then per-minute with its window", r.Limit.Limits)
	}
	if f := Findings(r); f[0].Kind != FindingQuota || f[0].Client != "c" {
		t.Errorf("findings %+v, want quota about c first", f)
	}
	// A series per limit, each its own: the quota's room ends at 0, the
	// bucket's is back near full.
	byLimit := map[string][]int64{}
	for _, s := range r.State {
		byLimit[s.Limit] = s.Remaining
	}
	if q := byLimit["per-minute"]; len(q) == 0 || q[len(q)-1] != 0 {
		t.Errorf("per-minute's series %v, want it to end at 0", q)
	}
	if b := byLimit["per-second"]; len(b) == 0 || b[len(b)-1] != 20 {
		t.Errorf("per-second's series %v, want it to end full (20): the quota's refusals spent none of it", b)
	}
}

// A jar per server: each of the two servers has its own copy of both
// limits, so the key gets each limit twice over.
func TestSeveralLimitsInJarsPerServer(t *testing.T) {
	c := mustRun(t, quota(Local, 2)).Clients[0]
	if c.Allowed != 120 {
		t.Errorf("allowed %d, want 2 × 60: each server's own quota", c.Allowed)
	}
}

// Per-limit shadow: the quota shadowed until 6 s lets through what it
// would refuse, counting it, while the bucket enforces throughout; from
// 6 s the quota refuses.
func TestShadowOneOfSeveralLimits(t *testing.T) {
	sc := quota(Shared, 1)
	sc.Also[0].Shadow, sc.Also[0].ShadowUntil = true, 6*time.Second
	r := mustRun(t, sc)
	var before, after Counts
	for _, row := range r.Timeline {
		if row.TS < 6 {
			before.Add(row.Counts)
		} else {
			after.Add(row.Counts)
		}
	}
	// Until 6 s the bucket alone decides: 20 + 59 admitted (the last
	// arrival, at 5.999 s, finds 59 tokens refilled), of which those past
	// the quota's 60 are would-be refusals.
	if before.Allowed != 79 || before.WouldReject != 19 {
		t.Errorf("before 6 s: %+v, want 79 allowed (the bucket's) of which 19 over the quota", before)
	}
	if after.Allowed != 0 || after.WouldReject != 0 {
		t.Errorf("after 6 s: %+v, want nothing admitted: the quota, enforced, is spent", after)
	}
	c := r.Clients[0]
	if c.RejectedBy["per-minute"] == 0 || c.RejectedBy["per-second"] == 0 {
		t.Errorf("rejected_by %v: want the bucket's refusals before 6 s and the quota's after", c.RejectedBy)
	}
	if !r.Limit.Limits[1].Shadow || r.Limit.Limits[1].ShadowUntilS != 6 || r.Limit.Shadow {
		t.Errorf("limit %+v: want per-minute shadowed until 6 s and the first limit not", r.Limit)
	}
	found := false
	for _, f := range Findings(r) {
		found = found || (f.Kind == FindingShadow && f.Value == 19)
	}
	if !found {
		t.Errorf("no shadow finding of 19: %+v", Findings(r))
	}
}

func TestSeveralLimitsRefusedByCheck(t *testing.T) {
	sc := quota(Shared, 1)
	sc.Also[0].Name = sc.Limit.Name
	if _, err := Run(t.Context(), sc, Options{}); err == nil {
		t.Error("two limits with one name ran")
	}
	sc = quota(Shared, 1)
	sc.Also[0].Key = KeyIP
	if _, err := Run(t.Context(), sc, Options{}); err == nil {
		t.Error("a second limit with a key of its own ran")
	}
}
