package sim

import (
	"testing"
	"time"
)

// In shadow mode the limit decides every request as it would enforcing,
// and refuses none: what it would have refused is let through and counted.
// A token bucket's refusal changes nothing, so with no retries the shadow
// run would refuse exactly what the enforcing run refuses.
func TestShadowModeRefusesNothingAndCountsWhatItWould(t *testing.T) {
	sc := hammer(Shared, 2, RoundRobin)
	enforced := mustRun(t, sc).Clients[0]
	if enforced.Rejected == 0 {
		t.Fatal("the enforcing run refused nothing: the test needs refusals")
	}
	sc.Limit.Shadow = true
	r := mustRun(t, sc)
	shadow := r.Clients[0]
	if shadow.Rejected != 0 || shadow.Allowed != shadow.Sent {
		t.Errorf("shadow mode refused %d of %d, want none", shadow.Rejected, shadow.Sent)
	}
	if shadow.WouldReject != enforced.Rejected {
		t.Errorf("shadow mode would have refused %d, the enforcing run refused %d: want the same", shadow.WouldReject, enforced.Rejected)
	}
	if k := r.Keys[0]; k.WouldReject != shadow.WouldReject {
		t.Errorf("the key counts %d would-be refusals, its one client %d", k.WouldReject, shadow.WouldReject)
	}
	if f := Findings(r); f[0].Kind != FindingShadow {
		t.Errorf("the lesson is %s, want shadow: %+v", f[0].Kind, f)
	}
	if !r.Limit.Shadow || r.Limit.ShadowUntilS != 0 {
		t.Errorf("the result's limit %+v does not say it ran in shadow mode", r.Limit)
	}
}

// A dark launch: shadow until 5 s, enforced after. Before, nothing is
// refused and what would have been is counted; after, the limit refuses.
func TestShadowUntilThenEnforce(t *testing.T) {
	sc := hammer(Shared, 1, RoundRobin)
	sc.Limit.Shadow, sc.Limit.ShadowUntil = true, 5*time.Second
	r := mustRun(t, sc)
	var before, after Counts
	for _, row := range r.Timeline {
		if row.TS < 5 {
			before.Add(row.Counts)
		} else {
			after.Add(row.Counts)
		}
	}
	if before.Rejected != 0 || before.WouldReject == 0 {
		t.Errorf("before 5 s: %+v, want no refusal and some would-be refusals", before)
	}
	if after.Rejected == 0 || after.WouldReject != 0 {
		t.Errorf("after 5 s: %+v, want refusals and no would-be refusal", after)
	}
	if r.Limit.ShadowUntilS != 5 {
		t.Errorf("shadow_until_s %v, want 5", r.Limit.ShadowUntilS)
	}
}
