package probe

import (
	"math"
	"slices"
	"time"
)

// decision is one observed request the fit judges: the instant it left
// (wall-clock µs) and whether the limiter let it through.
type decision struct {
	t        int64
	admitted bool
}

// mismatches counts the decisions a model of c with p decides otherwise,
// giving up once there are more than limit of them (it then returns
// limit + 1): a fit only needs to know whether a candidate beats the best
// so far.
func mismatches(c candidate, p params, ds []decision, limit int) int {
	m := newModel(c, p)
	wrong := 0
	for _, d := range ds {
		if m.decide(d.t) != d.admitted {
			wrong++
			if wrong > limit {
				return wrong
			}
		}
	}
	return wrong
}

// fit is a candidate's best parameters on the observed decisions: how many
// decisions they get wrong, and the interval of the continuous parameter
// (the bucket's rate, a window's length in µs) over which they get no
// more wrong, from which the value reported was chosen.
type fit struct {
	candidate  candidate
	params     params
	mismatches int
	lo, hi     float64
}

// gridPoints is how many values of the continuous parameter a fit tries
// for each value of the discrete one, spaced evenly on a log scale: over
// the 64-fold range fitCandidate searches, about 0.8% apart.
const gridPoints = 520

// searchSpan is how far either side of its estimate a fit searches the
// continuous parameter: a factor of 8.
const searchSpan = 8

// fitCandidate finds c's parameters that get the fewest decisions wrong.
// The discrete parameter (burst, limit) is tried at each of discrete; the
// continuous one on a log grid around est. Among grid points that tie,
// the interval they span (half a step beyond at each end) is kept, and the
// value reported is the simplest number in it: limits are configured as
// round numbers, and any value in the interval explains the answers
// equally well.
func fitCandidate(c candidate, ds []decision, discrete []int64, est float64) fit {
	best := fit{candidate: c, mismatches: math.MaxInt}
	if est <= 0 || math.IsInf(est, 0) || math.IsNaN(est) || len(discrete) == 0 {
		return best
	}
	grid := logGrid(est/searchSpan, est*searchSpan, gridPoints)
	step := math.Pow(searchSpan*searchSpan, 1.0/float64(gridPoints-1))
	if c.family.clockAligned() {
		// Windows on the clock's multiples are where they are only for
		// their exact length: a window 0.1% longer puts every edge of
		// today's elsewhere. Try the lengths a clock-aligned window has.
		grid, step = clockWindows, 1
	}
	for _, k := range discrete {
		bestHere, first, last := math.MaxInt, -1, -1
		for i, v := range grid {
			limit := min(bestHere, best.mismatches)
			if limit == math.MaxInt {
				limit = len(ds)
			}
			w := mismatches(c, paramsFor(c.family, k, v), ds, limit)
			switch {
			case w < bestHere:
				bestHere, first, last = w, i, i
			case w == bestHere && last == i-1:
				last = i // the interval of the first minimum only: the fit is unimodal where the data constrain it
			}
		}
		if first < 0 {
			continue
		}
		lo, hi := grid[first]/math.Sqrt(step), grid[last]*math.Sqrt(step)
		if c.family.clockAligned() {
			lo, hi = grid[first], grid[first]
		}
		better := bestHere < best.mismatches ||
			bestHere == best.mismatches && hi/lo > best.hi/best.lo // the same fit over a wider range: the steadier value
		if better {
			best = fit{candidate: c, params: paramsFor(c.family, k, simplest(lo, hi)), mismatches: bestHere, lo: lo, hi: hi}
		}
	}
	// The simplest value is inside an interval of tied grid points, but
	// between them the fit may differ: count it as reported.
	if best.mismatches != math.MaxInt {
		best.mismatches = mismatches(c, best.params, ds, len(ds))
	}
	return best
}

// clockWindows are the window lengths (µs) a window aligned to the clock
// is tried at: those that divide a minute, an hour or a day, and their
// multiples up to a day.
var clockWindows = func() []float64 {
	var out []float64
	for _, d := range []time.Duration{
		100 * time.Millisecond, 200 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond,
		time.Second, 2 * time.Second, 3 * time.Second, 4 * time.Second, 5 * time.Second, 6 * time.Second,
		10 * time.Second, 12 * time.Second, 15 * time.Second, 20 * time.Second, 30 * time.Second,
		time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
		time.Hour, 24 * time.Hour,
	} {
		out = append(out, float64(d/time.Microsecond))
	}
	return out
}()

// paramsFor builds a family's params from its discrete parameter k and its
// continuous one v.
func paramsFor(f family, k int64, v float64) params {
	if f.windowed() {
		return params{limit: k, window: max(int64(math.Round(v)), 1)}
	}
	return params{rate: v, burst: k}
}

// logGrid is n values from lo to hi, evenly spaced on a log scale.
func logGrid(lo, hi float64, n int) []float64 {
	out := make([]float64, n)
	ratio := math.Log(hi / lo)
	for i := range out {
		out[i] = lo * math.Exp(ratio*float64(i)/float64(n-1))
	}
	return out
}

// simplest returns the number in [lo, hi] with the fewest significant
// digits (the one nearest the interval's geometric middle among those),
// or that middle when the interval is too narrow for six digits.
func simplest(lo, hi float64) float64 {
	mid := math.Sqrt(lo * hi)
	if lo <= 0 || hi < lo {
		return mid
	}
	top := math.Floor(math.Log10(hi))
	for digits := 0.0; digits < 6; digits++ {
		unit := math.Pow(10, top-digits)
		// Halves too: 1.5 s and 2.5/s are configured as often as 2 s.
		for _, u := range []float64{unit, unit / 2} {
			first, last := math.Ceil(lo/u-1e-9), math.Floor(hi/u+1e-9)
			if first > last {
				continue
			}
			k := math.Min(math.Max(math.Round(mid/u), first), last)
			return k * u
		}
	}
	return mid
}

// discreteRange is the values from lo to hi, at most cap of them, evenly
// spaced, always including lo and hi.
func discreteRange(lo, hi int64, cap int) []int64 {
	lo = max(lo, 1)
	if hi < lo {
		hi = lo
	}
	n := hi - lo + 1
	if n <= int64(cap) {
		out := make([]int64, 0, n)
		for k := lo; k <= hi; k++ {
			out = append(out, k)
		}
		return out
	}
	out := make([]int64, 0, cap)
	for i := range cap {
		out = append(out, lo+int64(i)*(hi-lo)/int64(cap-1))
	}
	return slices.Compact(out)
}
