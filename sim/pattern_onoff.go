package sim

import (
	"math/rand/v2"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/internal/sat"
)

// onOffPattern sends evenly at Rate for On, is silent for Off, and
// repeats.
var onOffPattern = patternKind{
	name:   OnOff,
	fields: []string{"rate", "on", "off", "start", "stop", "cost"},
	needs:  []string{"rate", "on", "off"},
	at: func(s *stream, _ *rand.Rand) (int64, bool) {
		on, off := int64(algorithms.At(s.tr.On)), int64(algorithms.At(s.tr.Off))
		perCycle := evenlyCount(on, s.rate)
		if perCycle == 0 || on <= 0 {
			return 0, false
		}
		cycle, i := s.k/perCycle, s.k%perCycle
		return sat.Add(sat.Add(s.start, sat.Mul(cycle, on+off)), evenly(0, i, s.rate)), true
	},
	estimate: func(tr Traffic, span float64) float64 {
		on, off := tr.On.Seconds(), tr.Off.Seconds()
		if on+off <= 0 {
			return 0
		}
		return tr.Rate.PerSecond() * span * on / (on + off)
	},
}
