package sim

import (
	"math"
	"math/rand/v2"
	"time"
)

// rampPattern sends at a rate going linearly from From at its start to To
// at its stop.
var rampPattern = patternKind{
	name:   Ramp,
	fields: []string{"from", "to", "start", "stop", "cost"},
	needs:  []string{"from", "to"},
	at: func(s *stream, _ *rand.Rand) (int64, bool) {
		return s.rampAt(s.k), true
	},
	estimate: func(tr Traffic, span float64) float64 {
		return (tr.From.PerSecond() + tr.To.PerSecond()) / 2 * span
	},
	check: func(tr Traffic, _ time.Duration) (string, string) {
		if tr.From.N == 0 && tr.To.N == 0 {
			return "to", "a ramp from 0 to 0 sends nothing (want a positive from or to, e.g. to: 100/s)"
		}
		return "", ""
	},
}

// rampAt returns the k-th arrival of a rate rising linearly from From at
// start to To at stop: the instant where the expected count Λ(t) reaches k,
// Λ(t) = a·t + (b − a)·t²/(2T), solved for t.
func (s *stream) rampAt(k int64) int64 {
	a := s.tr.From.PerSecond() / 1e6
	b := s.tr.To.PerSecond() / 1e6
	span := float64(s.stop - s.start)
	if span <= 0 {
		return math.MaxInt64
	}
	c := (b - a) / (2 * span)
	x := float64(k)
	var t float64
	if math.Abs(c) < 1e-18 {
		if a <= 0 {
			return math.MaxInt64
		}
		t = x / a
	} else {
		disc := a*a + 4*c*x
		if disc < 0 {
			return math.MaxInt64
		}
		t = (-a + math.Sqrt(disc)) / (2 * c)
	}
	if t < 0 || math.IsNaN(t) || t > span {
		return math.MaxInt64
	}
	return s.start + int64(t)
}
