package sim

import (
	"slices"
	"testing"
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
