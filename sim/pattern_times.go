package sim

import (
	"math/rand/v2"

	"github.com/ratelim/ratelim/algorithms"
)

// timesPattern sends at the instants listed in Traffic.Times: the arrivals
// a live load run achieved, replayed (live.ObservedScenario). No scenario
// file writes it.
var timesPattern = patternKind{
	name:     Times,
	internal: true,
	at: func(s *stream, _ *rand.Rand) (int64, bool) {
		if s.k >= int64(len(s.tr.Times)) {
			return 0, false
		}
		return int64(algorithms.At(s.tr.Times[s.k])), true
	},
	estimate: func(tr Traffic, _ float64) float64 { return float64(len(tr.Times)) },
}
