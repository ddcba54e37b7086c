package plots

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"
)

// log1pScale is a logarithmic axis that also has room for zero: it places
// y at log(1 + y). A client sending 1000 requests a second to a limit of
// 10 is the common case here, and on a linear axis its 10 admitted
// requests would be a line lying on the floor. Negative values are drawn
// at zero.
type log1pScale struct{}

// Normalize implements plot.Normalizer.
func (log1pScale) Normalize(min, max, x float64) float64 {
	f := func(v float64) float64 { return math.Log1p(math.Max(v, 0)) }
	lo, hi := f(min), f(max)
	if hi == lo {
		return 0
	}
	return (f(x) - lo) / (hi - lo)
}

// log1pTicks marks 0, 1, 10, 100, … with minor ticks at 2–9 × each decade.
type log1pTicks struct{}

// Ticks implements plot.Ticker.
func (log1pTicks) Ticks(min, max float64) []plot.Tick {
	ticks := []plot.Tick{{Value: 0, Label: "0"}}
	for decade := 1.0; decade <= max; decade *= 10 {
		label := countLabel(decade)
		if decade == 1 && max > 100 {
			label = "" // 0 and 1 sit close together on a tall axis
		}
		ticks = append(ticks, plot.Tick{Value: decade, Label: label})
		for m := 2.0; m <= 9 && m*decade <= max; m++ {
			ticks = append(ticks, plot.Tick{Value: m * decade})
		}
	}
	return ticks
}

// countTicks is gonum's default ticker without fractional labels: the
// values on a counts axis are whole requests.
type countTicks struct{}

// Ticks implements plot.Ticker.
func (countTicks) Ticks(min, max float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(min, max)
	for i, t := range ticks {
		if t.Label != "" {
			if t.Value != math.Trunc(t.Value) {
				ticks[i].Label = ""
			} else {
				ticks[i].Label = countLabel(t.Value)
			}
		}
	}
	return ticks
}

// unlabelled keeps another ticker's marks but drops their labels: the
// panels above the bottom one share its time axis and need not repeat it.
type unlabelled struct{ plot.Ticker }

// Ticks implements plot.Ticker.
func (u unlabelled) Ticks(min, max float64) []plot.Tick {
	ticks := u.Ticker.Ticks(min, max)
	for i := range ticks {
		ticks[i].Label = ""
	}
	return ticks
}

// countLabel writes a count compactly: 950, 1k, 12k, 1.5M.
func countLabel(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', -1, 64) + "M"
	case a >= 1e4 || (a >= 1e3 && math.Mod(a, 1e3) == 0):
		return strconv.FormatFloat(v/1e3, 'f', -1, 64) + "k"
	}
	if v != math.Trunc(v) {
		return strconv.FormatFloat(v, 'g', 4, 64) // a rate's share of a step: 1.667, not 1.6666666666666667
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}
