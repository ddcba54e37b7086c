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

// A shadowed limit is measured against its exact limiter enforcing, alone
// or among several: what shadow mode let through that the exact limiter
// refuses is a false allow. The same shadowed bucket beside a quota that
// never binds (shadowed or not, for good or for a while) gives the same
// ideal and false allows as the bucket alone. Issue 27: alone, ideal 54
// and 71 false allows; among several, the exact limiters kept the shadow
// flags and admitted all 125, with no false allow.
func TestShadowedLimitsMeasuredAgainstTheEnforcingExactLimiter(t *testing.T) {
	for _, until := range []time.Duration{0, 6 * time.Second} {
		alone := hammer(Shared, 1, RoundRobin)
		alone.Limit.Shadow, alone.Limit.ShadowUntil = true, until
		want := mustRun(t, alone).Clients[0]
		if want.FalseAllows == 0 || want.IdealAllowed >= want.Allowed {
			t.Fatalf("shadowed alone (until %s): ideal %d, false allows %d of %d allowed: the test needs false allows", until, want.IdealAllowed, want.FalseAllows, want.Allowed)
		}
		for _, quotaShadowed := range []bool{false, true} {
			sc := quota(Shared, 1)
			sc.Limit.Shadow, sc.Limit.ShadowUntil = true, until
			sc.Also[0].Params.Rate.N = 1_000_000 // never binds
			sc.Also[0].Shadow = quotaShadowed
			got := mustRun(t, sc).Clients[0]
			if got.Allowed != want.Allowed || got.IdealAllowed != want.IdealAllowed || got.FalseAllows != want.FalseAllows {
				t.Errorf("shadowed until %s beside a quota (shadowed %v): allowed %d, ideal %d, false allows %d; alone %d, %d, %d",
					until, quotaShadowed, got.Allowed, got.IdealAllowed, got.FalseAllows, want.Allowed, want.IdealAllowed, want.FalseAllows)
			}
		}
	}
}
