package sim

import (
	"slices"
	"testing"
)

// TestEveryPatternIsWhole: each pattern in the one list has its
// arrivals and its estimate, a name of its own, needs only fields it
// reads, and every Pattern the package declares is in the list.
func TestEveryPatternIsWhole(t *testing.T) {
	seen := map[Pattern]bool{}
	for _, k := range patternKinds {
		if k.at == nil || k.estimate == nil {
			t.Errorf("pattern %s: arrivals or estimate missing", k.name)
		}
		if seen[k.name] {
			t.Errorf("pattern %s listed twice", k.name)
		}
		seen[k.name] = true
		for _, n := range k.needs {
			if !slices.Contains(k.fields, n) {
				t.Errorf("pattern %s needs %s, which it does not read", k.name, n)
			}
		}
		if !k.internal && len(k.needs) == 0 {
			t.Errorf("pattern %s needs no field: a file could write it alone and send nothing", k.name)
		}
	}
	for _, p := range []Pattern{Constant, Poisson, Burst, Ramp, OnOff, Times} {
		if !seen[p] {
			t.Errorf("pattern %s is declared but not in patternKinds", p)
		}
	}
}
