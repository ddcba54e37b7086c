package simrun

import (
	"slices"
	"testing"

	"github.com/ratelim/ratelim/scenarios"
)

// Command writes the settings in the order ratelim sim applies them,
// whatever order they are given in: paths as given, then the flags in
// FlagNames' order; and quotes what a shell would split.
func TestCommandIsInTheOrderApplied(t *testing.T) {
	t.Parallel()
	sets := []scenarios.Setting{
		{Name: "burst", Value: "20"},
		{Name: "seed", Value: "7"},
		{Name: "clients[web].traffic.rate", Value: "20/s"},
		{Name: "topology", Value: "local"},
		{Name: "faults[0].start", Value: "5s"},
	}
	given := slices.Clone(sets)
	want := "ratelim sim 'my lab.yaml' --set 'clients[web].traffic.rate=20/s' --set 'faults[0].start=5s' --topology local --seed 7 --burst 20 --vs on-error=fail-closed --vs 'limit.rate=5 / s'"
	if got := Command("my lab.yaml", sets, []string{"on-error=fail-closed", "limit.rate=5 / s"}); got != want {
		t.Errorf("Command:\n got %s\nwant %s", got, want)
	}
	if !slices.Equal(sets, given) {
		t.Errorf("Command reordered its argument: %v", sets)
	}
	CLIOrder(sets)
	for i, s := range sets {
		if i > 0 && IsFlag(sets[i-1].Name) && !IsFlag(s.Name) {
			t.Errorf("CLIOrder: path %s after flag %s", s.Name, sets[i-1].Name)
		}
	}
	for _, tc := range []struct {
		sets []scenarios.Setting
		want bool
	}{
		{nil, false},
		{[]scenarios.Setting{{Name: "duration", Value: "1m"}}, false},
		{[]scenarios.Setting{{Name: "seed", Value: "1"}, {Name: "step", Value: "1ms"}}, true},
	} {
		if got := StepAsked(tc.sets); got != tc.want {
			t.Errorf("StepAsked(%v) = %v, want %v", tc.sets, got, tc.want)
		}
	}
}
