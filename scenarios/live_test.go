package scenarios

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/ratelim/ratelim/sim"
)

// Every figure an expectation may bound, every finding and every with:
// setting is placed in the live tables, and nothing else is: a figure
// added to the results (read from their fields) must be decided on
// before a live check can meet it.
func TestLiveSightCoversEveryFigure(t *testing.T) {
	all := union(figures, keyFigures)
	if got, want := slices.Sorted(maps.Keys(liveFigures)), slices.Sorted(slices.Values(all)); !slices.Equal(got, want) {
		t.Errorf("liveFigures has %v, want every figure: %v", got, want)
	}
	if got, want := slices.Sorted(maps.Keys(liveFindings)), slices.Sorted(slices.Values(sim.FindingKinds())); !slices.Equal(got, want) {
		t.Errorf("liveFindings has %v, want every finding kind: %v", got, want)
	}
	if got, want := slices.Sorted(maps.Keys(liveWith)), slices.Sorted(slices.Values(OverrideNames())); !slices.Equal(got, want) {
		t.Errorf("liveWith has %v, want every setting: %v", got, want)
	}
	// What is not seen says why.
	for name, s := range liveFigures {
		if (s.sight == told || s.sight == internal) != (s.why != "") {
			t.Errorf("%s: sight %d with reason %q: a reason for each figure not seen, and only for those", name, s.sight, s.why)
		}
	}
	for kind, s := range liveFindings {
		if (s.sight == told || s.sight == internal) != (s.why != "") {
			t.Errorf("%s: sight %d with reason %q", kind, s.sight, s.why)
		}
	}
}

func TestLiveCheckSkip(t *testing.T) {
	tests := []struct {
		e    Expectation
		told bool
		want string // in the reason; "" for checked
	}{
		{Expectation{Client: "a", Figure: "allowed"}, false, ""},
		{Expectation{Client: "a", Figure: "p99_ms"}, false, ""},
		{Expectation{Key: "k", Figure: "max_allowed_1s"}, false, ""},
		{Expectation{Client: "a", Figure: "false_allows"}, false, ""},
		{Expectation{Key: "k", Figure: "ideal_max_allowed_1s"}, false, ""},
		{Expectation{Key: "k", Figure: "design_bound_1s"}, false, "design_bound_1s: derived from the scenario's topology"},
		{Expectation{Key: "k", Figure: "design_bound_1s"}, true, "design_bound_1s: derived"},
		{Expectation{Client: "a", Figure: "failed_open"}, false, "X-RateLimit-Decided-By"},
		{Expectation{Client: "a", Figure: "failed_open"}, true, ""},
		{Expectation{Client: "a", Figure: "failed_closed"}, false, "--httplimit-headers"},
		{Expectation{Client: "a", Figure: "would_reject"}, false, "X-RateLimit-Shadow"},
		{Expectation{Client: "a", Figure: "served"}, false, "X-RateLimit-Delay"},
		{Expectation{Figure: "finding", Finding: sim.FindingOverAdmitted}, false, ""},
		{Expectation{Figure: "lesson", Finding: sim.FindingWorstWindow}, false, ""},
		{Expectation{Figure: "finding", Finding: sim.FindingRetriesWasted}, false, ""},
		{Expectation{Figure: "finding", Finding: sim.FindingCopiesDiverged}, true, "finding copies-diverged: the store's copies"},
		{Expectation{Figure: "lesson", Finding: sim.FindingDesignBound}, false, "finding design-bound"},
		{Expectation{Figure: "finding", Finding: sim.FindingFenced}, true, "Redis Cluster"},
		{Expectation{Figure: "finding", Finding: sim.FindingFailedClosed}, false, "503"},
		{Expectation{Figure: "finding", Finding: sim.FindingFailedClosed}, true, ""},
		{Expectation{Figure: "finding", Finding: "made-up"}, true, "no live run is known"},
	}
	for _, tt := range tests {
		got := LiveCheck{Told: tt.told}.Skip(&tt.e)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s %s (told %v): skip %q, want %q", tt.e.Figure, tt.e.Finding, tt.told, got, tt.want)
		}
	}
}

func TestLiveCheckSkipWith(t *testing.T) {
	tests := []struct {
		with map[string]string
		want string
	}{
		{nil, ""},
		{map[string]string{"seed": "3", "duration": "2s"}, ""},
		{map[string]string{"balancer": "random", "step": "100ms"}, ""},
		{map[string]string{"on_error": "fail-closed"}, "with: on_error: it changes the limiter's fail policy"},
		{map[string]string{"seed": "3", "algorithm": "gcra"}, "with: algorithm: it changes the limiter's algorithm"},
		{map[string]string{"wall_clock": "2026-01-01T00:00:00Z"}, "windows"},
		{map[string]string{"servers": "8"}, "the targets given"},
		{map[string]string{"colour": "blue"}, "no setting"},
	}
	for _, tt := range tests {
		got := LiveCheck{}.SkipWith(tt.with)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%v: skip %q, want %q", tt.with, got, tt.want)
		}
	}
}

// A live run's findings keep their order, less those it cannot show: a
// lesson is the first that remains.
func TestLiveCheckFindings(t *testing.T) {
	fs := []sim.Finding{{Kind: sim.FindingFailedOpen}, {Kind: sim.FindingWorstWindow}, {Kind: sim.FindingDesignBound}, {Kind: sim.FindingRetriesWasted}}
	kinds := func(fs []sim.Finding) []sim.FindingKind {
		var out []sim.FindingKind
		for _, f := range fs {
			out = append(out, f.Kind)
		}
		return out
	}
	if got, want := kinds(LiveCheck{}.Findings(fs)), []sim.FindingKind{sim.FindingWorstWindow, sim.FindingRetriesWasted}; !slices.Equal(got, want) {
		t.Errorf("findings %v, want %v", got, want)
	}
	if got, want := kinds(LiveCheck{Told: true}.Findings(fs)), []sim.FindingKind{sim.FindingFailedOpen, sim.FindingWorstWindow, sim.FindingRetriesWasted}; !slices.Equal(got, want) {
		t.Errorf("told: findings %v, want %v", got, want)
	}
}
