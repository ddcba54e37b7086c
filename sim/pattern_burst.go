package sim

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/internal/sat"
)

// burstPattern sends Count requests at At, spaced evenly over Spread (all
// at once when Spread is 0).
var burstPattern = patternKind{
	name:   Burst,
	fields: []string{"count", "at", "spread", "cost"},
	needs:  []string{"count", "at"},
	at: func(s *stream, _ *rand.Rand) (int64, bool) {
		count := int64(s.tr.Count)
		if s.k >= count {
			return 0, false
		}
		base := int64(algorithms.At(s.tr.At))
		spread := int64(algorithms.At(s.tr.Spread))
		return sat.Add(base, int64(mulDivFloor(uint64(s.k), uint64(spread), uint64(max(count, 1))))), true
	},
	estimate: func(tr Traffic, _ float64) float64 { return float64(tr.Count) },
	check: func(tr Traffic, end time.Duration) (string, string) {
		if tr.At+tr.Spread > end {
			return "spread", fmt.Sprintf("the burst at %s spread over %s ends after the run, at %s (want at + spread ≤ %s)", tr.At, tr.Spread, tr.At+tr.Spread, end)
		}
		return "", ""
	},
}
