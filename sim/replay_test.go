package sim

import (
	"context"
	"slices"
	"testing"
	"time"
)

// FindingsShown decides exact on the findings shown: a run whose only
// findings are not shown finds exact, with Findings' own figure, and one
// whose findings are shown keeps them, in order, without exact.
func TestFindingsShownDecidesExactAfterTheFilter(t *testing.T) {
	r := mustRun(t, hammer(Local, 3, Random))
	all := Findings(r)
	if len(all) == 0 || slices.ContainsFunc(all, func(f Finding) bool { return f.Kind == FindingExact }) {
		t.Fatalf("findings %v: want some, none of them exact", kinds(all))
	}
	onlyExact := func(k FindingKind) bool { return k == FindingExact }
	got := FindingsShown(r, onlyExact)
	if want := exactFinding(r.Totals()); len(got) != 1 || got[0] != want {
		t.Errorf("none of %v shown: findings %+v, want %+v alone", kinds(all), got, want)
	}
	shown := map[FindingKind]bool{all[0].Kind: true, FindingExact: true}
	if got := FindingsShown(r, func(k FindingKind) bool { return shown[k] }); len(got) != 1 || got[0].Kind != all[0].Kind {
		t.Errorf("%s shown: findings %v, want it alone", all[0].Kind, kinds(got))
	}
}

// A replay of a concurrency limit's observations gives the exact
// limiter's leases back when each request was served (its At plus its
// Service), as a run does: the figures it compares with are the run's
// (at most 5 in flight, 20/s; 1 s each: 50 of 200; 50 ms each: every
// one), not an exact limiter that fills with its first 5 admissions and
// refuses the rest.
func TestReplayReleasesTheExactLimitersLeases(t *testing.T) {
	for _, service := range []time.Duration{time.Second, 50 * time.Millisecond} {
		sc := slow(Shared, 1)
		sc.Clients[0].Service = Service{Mean: service}
		var seen []Observation
		r, err := Run(context.Background(), sc, Options{Observe: func(o Observation) {
			// Served after its answer's round trip, as the lease
			// stage holds it (Observe does not say it).
			o.Service = o.Latency + service
			seen = append(seen, o)
		}})
		if err != nil {
			t.Fatal(err)
		}
		replayed, err := Replay(sc, seen, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, want := replayed.Clients[0], r.Clients[0]
		if got.Allowed != want.Allowed || got.IdealAllowed != want.IdealAllowed || got.FalseAllows != want.FalseAllows || got.FalseDenies != want.FalseDenies {
			t.Errorf("service %s: replayed allowed %d, ideal %d, false allows %d, false denies %d; the run's %d, %d, %d, %d",
				service, got.Allowed, got.IdealAllowed, got.FalseAllows, got.FalseDenies, want.Allowed, want.IdealAllowed, want.FalseAllows, want.FalseDenies)
		}
	}
}
