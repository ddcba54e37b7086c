package sim

// Traffic patterns: the shapes of a client's arrivals, one file each
// (pattern_*.go), listed here once, in the order they are taught.

import (
	"math/rand/v2"
	"time"
)

// patternKind is one shape of arrivals: the fields a scenario gives it,
// its arrivals one by one, how many it sends, and what no one field of it
// shows is wrong.
type patternKind struct {
	name Pattern
	// fields are the fields it reads besides pattern, in the order the
	// reference lists them; needs, those it cannot do without.
	fields, needs []string
	// at is the stream's next arrival (its s.k-th), at or after its
	// previous one, and false when it has no more; stream.next stops it
	// at the stream's stop.
	at func(s *stream, rng *rand.Rand) (int64, bool)
	// estimate is how many arrivals it sends over span seconds: what the
	// request budget is checked against before a run.
	estimate func(tr Traffic, span float64) float64
	// check, if set, says what is wrong with tr as a whole in a run of
	// duration end, naming the field to blame; "" when nothing is.
	check func(tr Traffic, end time.Duration) (field, problem string)
	// internal is set for a pattern no scenario file writes (times).
	internal bool
}

// patternKinds are the patterns, in the order they are taught: the one
// list the parser, the reference and the simulator read.
var patternKinds = []*patternKind{&constantPattern, &poissonPattern, &burstPattern, &rampPattern, &onOffPattern, &timesPattern}

// patternOf is the kind named p, or nil.
func patternOf(p Pattern) *patternKind {
	for _, k := range patternKinds {
		if k.name == p {
			return k
		}
	}
	return nil
}

// PatternSpec is what a scenario file gives a traffic pattern: its name,
// the fields it reads besides pattern, and those it needs.
type PatternSpec struct {
	Name          Pattern
	Fields, Needs []string
}

// Patterns are the patterns a scenario file may name, in the order they
// are taught.
func Patterns() []PatternSpec {
	var out []PatternSpec
	for _, k := range patternKinds {
		if !k.internal {
			out = append(out, PatternSpec{Name: k.name, Fields: k.fields, Needs: k.needs})
		}
	}
	return out
}

// PatternProblem says what is wrong with traffic tr as a whole, of its
// pattern's own rules, in a run of duration end: the field to blame and
// the problem, or "" when nothing is.
func PatternProblem(tr Traffic, end time.Duration) (field, problem string) {
	if k := patternOf(tr.Pattern); k != nil && k.check != nil {
		return k.check(tr, end)
	}
	return "", ""
}
