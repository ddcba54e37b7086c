package sim

import "math/rand/v2"

// constantPattern sends evenly spaced at Rate, exactly: the k-th arrival
// is at start + k × per / N, with no drift however long the run.
var constantPattern = patternKind{
	name:   Constant,
	fields: []string{"rate", "start", "stop", "cost"},
	needs:  []string{"rate"},
	at: func(s *stream, _ *rand.Rand) (int64, bool) {
		return evenly(s.start, s.k, s.rate), true
	},
	estimate: func(tr Traffic, span float64) float64 { return tr.Rate.PerSecond() * span },
}
