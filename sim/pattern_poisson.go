package sim

import "math/rand/v2"

// poissonPattern sends with exponential gaps of mean 1/Rate, drawn from
// the run's one random source.
var poissonPattern = patternKind{
	name:   Poisson,
	fields: []string{"rate", "start", "stop", "cost"},
	needs:  []string{"rate"},
	at: func(s *stream, rng *rand.Rand) (int64, bool) {
		rate := s.rate.PerSecond() / 1e6 // per µs
		if rate <= 0 {
			return 0, false
		}
		if s.k == 0 {
			s.last = s.start
		}
		return s.last + int64(rng.ExpFloat64()/rate), true
	},
	estimate: func(tr Traffic, span float64) float64 { return tr.Rate.PerSecond() * span },
}
