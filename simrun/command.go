package simrun

// The command line that makes a run: what the playground shows under
// its run and `ratelim report` prints on its page, written from the
// settings as `ratelim sim` reads them back, in the order it applies
// them, so that the line reproduces the run byte for byte.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ratelim/ratelim/scenarios"
)

// ShortForms are `ratelim sim`'s flags that set a field of the limit:
// --rate is --set limit.rate.
var ShortForms = []string{"rate", "burst", "window"}

// FlagNames are the settings `ratelim sim` has a flag of its own for,
// in the order it applies them: the override names
// (scenarios.OverrideNames), then the short forms.
func FlagNames() []string { return append(scenarios.OverrideNames(), ShortForms...) }

// IsFlag reports whether name is a setting with a flag of its own
// (--servers, --burst); any other is a field's path, given as --set.
func IsFlag(name string) bool { return slices.Contains(FlagNames(), name) }

// CLIOrder puts sets in the order `ratelim sim` hands its flags to
// scenarios.Apply: the --set paths as given, then the flags in
// FlagNames' order. The order matters where two settings touch one
// field or entry (Apply refuses some such pairs, and a later one wins
// others), so a command that reproduces a run applies them in it.
func CLIOrder(sets []scenarios.Setting) {
	order := FlagNames()
	rank := func(s scenarios.Setting) int { return slices.Index(order, s.Name) } // -1: a path, first
	slices.SortStableFunc(sets, func(a, b scenarios.Setting) int { return rank(a) - rank(b) })
}

// StepAsked reports whether sets give the timeline's step: a run then
// keeps it, and one too big at it is refused (sim.Options.FitStep off)
// rather than coarsened.
func StepAsked(sets []scenarios.Setting) bool {
	return slices.ContainsFunc(sets, func(s scenarios.Setting) bool { return strings.TrimSpace(s.Name) == "step" })
}

// Command is the `ratelim sim` line that makes the run of the scenario
// name with sets (in CLIOrder, as given: each a flag of its own or
// --set PATH=VALUE) and, beside it, the run each of vs (FIELD=VALUE, as
// --vs takes it) changes; every word quoted for a POSIX shell.
func Command(name string, sets []scenarios.Setting, vs []string) string {
	sorted := slices.Clone(sets)
	CLIOrder(sorted)
	var b strings.Builder
	b.WriteString("ratelim sim ")
	b.WriteString(ShellWord(name))
	for _, s := range sorted {
		if IsFlag(s.Name) {
			fmt.Fprintf(&b, " --%s %s", s.Name, ShellWord(s.Value))
		} else {
			fmt.Fprintf(&b, " --set %s", ShellWord(s.Name+"="+s.Value))
		}
	}
	for _, v := range vs {
		fmt.Fprintf(&b, " --vs %s", ShellWord(v))
	}
	return b.String()
}
