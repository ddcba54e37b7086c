package probe

import (
	"context"
	"math"
	"slices"
	"time"
)

// decision is one observed request the fit judges: the instant it left
// and the instant its answer came back (wall-clock µs), and whether the
// limiter let it through.
type decision struct {
	t, answered int64
	admitted    bool
}

// mismatches counts the decisions a model of c with p decides otherwise,
// giving up once there are more than limit of them (it then returns
// limit + 1): a fit only needs to know whether a candidate beats the best
// so far.
func mismatches(c candidate, p params, ds []decision, limit int) int {
	m := newModel(c, p)
	wrong := 0
	for _, d := range ds {
		if m.decide(d) != d.admitted {
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
	// fewest is the fewest mismatches any value tried got: families are
	// ranked by it, not by the simplest value's (up to fitSlack more),
	// which would hand a family that fits as well a lead it did not earn.
	fewest int
	lo, hi float64
}

// gridPoints is how many values of the continuous parameter a fit tries
// first for each value of the discrete one, spaced evenly on a log scale:
// over the 64-fold range fitCandidate searches, about 1% apart. A long
// probe pins a rate far closer than that, so the best of them are then
// searched again between their neighbours, twice (refinements).
const (
	gridPoints  = 400
	refineBest  = 8
	refinePts   = 24
	refinements = 2
)

// roundSpan is how far either side of the best value found the round
// values are tried: 3%, more than the noise of a loaded machine moves a
// fitted rate on a probe of a few seconds.
const roundSpan = 1.03

// seedSpan and seedPoints are the fine grid around the estimate and each
// seed: ±3% in steps of 0.1%.
const (
	seedSpan   = 1.03
	seedPoints = 61
)

// searchSpan is how far either side of its estimate a fit searches the
// continuous parameter: a factor of 8.
const searchSpan = 8

// fitCandidate finds c's parameters that get the fewest decisions wrong.
// The discrete parameter (burst, limit) is tried at each of discrete; the
// continuous one on a log grid around est, with the round values in its
// range, refined around its best points. Of the values that tie at the
// fewest, the simplest is reported (limits are configured as round
// numbers, and any of them explains the answers equally well), with the
// range they span.
func fitCandidate(ctx context.Context, c candidate, ds []decision, discrete []int64, est float64, seeds []float64) fit {
	best := fit{candidate: c, mismatches: math.MaxInt, fewest: math.MaxInt}
	if est <= 0 || math.IsInf(est, 0) || math.IsNaN(est) || len(discrete) == 0 {
		return best
	}
	bestK := int64(-1)
	try := func(k int64) {
		if ctx.Err() != nil {
			return
		}
		wrong, fewest, v, lo, hi, ok := fitContinuous(c, ds, k, est, best.mismatches, seeds)
		if !ok {
			return
		}
		defer func() { best.fewest = min(best.fewest, fewest) }()
		better := wrong < best.mismatches ||
			wrong == best.mismatches && hi/lo > best.hi/best.lo // the same fit over a wider range: the steadier value
		if better {
			best, bestK = fit{candidate: c, params: paramsFor(c.family, k, v), mismatches: wrong, fewest: best.fewest, lo: lo, hi: hi}, k
		}
	}
	for _, k := range discrete {
		try(k)
	}
	// discrete was thinned (a burst of hundreds): every value between
	// the best one's neighbours too.
	if i := slices.Index(discrete, bestK); i >= 0 && len(discrete) > 1 {
		lo, hi := discrete[max(i-1, 0)], discrete[min(i+1, len(discrete)-1)]
		for k := lo + 1; k < hi; k++ {
			if k != bestK {
				try(k)
			}
		}
	}
	return best
}

// scored is a value of the continuous parameter and its mismatches.
type scored struct {
	v     float64
	wrong int
}

// fitContinuous searches c's continuous parameter with the discrete one
// at k, and returns the fewest mismatches found, the simplest value that
// gives them and the range of the values that do. ok is false when
// nothing did better than bound.
func fitContinuous(c candidate, ds []decision, k int64, est float64, bound int, seeds []float64) (wrong, fewest int, v, lo, hi float64, ok bool) {
	count := func(v float64, limit int) int {
		if limit == math.MaxInt {
			limit = len(ds)
		}
		return mismatches(c, paramsFor(c.family, k, v), ds, limit)
	}
	var tried []scored
	if c.family.clockAligned() {
		// Windows on the clock's multiples are where they are only for
		// their exact length: a window 0.1% longer puts every edge of
		// today's elsewhere. Try the lengths a clock-aligned window has.
		for _, v := range clockWindows {
			tried = append(tried, scored{v, count(v, bound)})
		}
		return pickSimplest(tried, bound, fitSlack(len(ds)), false)
	}
	// The coarse grid counts well past the bound: the best basin is
	// narrow, and its nearest grid points may score worse than the best
	// found at another k before refining finds its floor.
	loose := bound
	if bound < len(ds) {
		loose = 2*bound + 20
	}
	// Around the estimate and each seed (the rates the gaps between
	// admissions imply), a fine grid too: the best basin may be
	// narrower than the coarse grid's step (1/s burst 1 fits 0.999/s
	// with none wrong, and no coarse point near it did).
	grid := logGrid(est/searchSpan, est*searchSpan, gridPoints)
	var centres []float64
	for _, s := range append([]float64{est}, seeds...) {
		// A seed within the fine grid of one before it adds nothing.
		if s > 0 && !math.IsInf(s, 0) && !slices.ContainsFunc(centres, func(c float64) bool { return s >= c/seedSpan && s <= c*seedSpan }) {
			centres = append(centres, s)
			grid = append(grid, logGrid(s/seedSpan, s*seedSpan, seedPoints)...)
		}
	}
	slices.Sort(grid)
	for _, v := range grid {
		tried = append(tried, scored{v, count(v, loose)})
	}
	order := slices.Clone(tried)
	for i := range order {
		order[i].v = float64(i) // the index, to refine between its neighbours
	}
	slices.SortStableFunc(order, func(a, b scored) int { return a.wrong - b.wrong })
	for _, o := range order[:min(refineBest, len(order))] {
		if o.wrong > loose {
			break
		}
		i := int(o.v)
		l, h := grid[max(i-1, 0)], grid[min(i+1, len(grid)-1)]
		for range refinements {
			step := (h - l) / float64(refinePts-1)
			at, least := 0.0, math.MaxInt
			for j := range refinePts {
				x := l + float64(j)*step
				w := count(x, loose)
				tried = append(tried, scored{x, w})
				if w < least {
					at, least = x, w
				}
			}
			l, h = at-step, at+step
		}
	}
	// The round values near the best found: one of them is most likely
	// what was configured, and if it fits as well it is the one to say.
	bestTried := slices.MinFunc(tried, func(a, b scored) int { return a.wrong - b.wrong })
	near := []float64{bestTried.v, est}
	if len(seeds) > 0 {
		near = append(near, seeds...)
	}
	var rounds []float64
	for _, x := range near {
		rounds = append(rounds, roundValues(c.family, x/roundSpan, x*roundSpan)...)
	}
	slices.Sort(rounds)
	for _, r := range slices.Compact(rounds) {
		tried = append(tried, scored{r, count(r, loose)})
	}
	return pickSimplest(tried, bound, fitSlack(len(ds)), !c.family.windowed())
}

// pickSimplest returns, of the values tried, the range of those that get
// the fewest decisions wrong, and in it the simplest value (fewest
// significant digits, then nearest the middle) that gets at most slack
// more wrong, with its count: the instant a request left is not quite
// the instant it was decided, and a configured 20/s is a better answer
// than the 19.99/s that explains one more decision of a loaded machine.
//
// A rate (perSecond) is as simple per minute or per hour as per second:
// 10/m is 10/60 per second, nine digits, and as simple as 10/s.
func pickSimplest(tried []scored, bound, slack int, perSecond bool) (wrong, fewest int, v, lo, hi float64, ok bool) {
	fewest = math.MaxInt
	for _, s := range tried {
		fewest = min(fewest, s.wrong)
	}
	if fewest > bound {
		return fewest, fewest, 0, 0, 0, false
	}
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, s := range tried {
		if s.wrong == fewest {
			lo, hi = math.Min(lo, s.v), math.Max(hi, s.v)
		}
	}
	mid := math.Sqrt(lo * hi)
	bestDigits := math.MaxInt
	for _, s := range tried {
		// Just outside the range is as good, within slack: a finer
		// search finds narrower basins, and a configured 20/s one
		// decision worse than the 19.99/s beside it is still 20/s.
		if s.wrong > fewest+slack || s.v < lo/simpleReach || s.v > hi*simpleReach {
			continue
		}
		d := significantDigits(s.v)
		if perSecond {
			d = min(d, significantDigits(s.v*60), significantDigits(s.v*3600))
		}
		if d < bestDigits || d == bestDigits && math.Abs(math.Log(s.v/mid)) < math.Abs(math.Log(v/mid)) {
			bestDigits, v, wrong = d, s.v, s.wrong
		}
	}
	return wrong, fewest, v, lo, hi, true
}

// simpleReach is how far outside the range of the best values a simpler
// one within fitSlack may lie: 0.5%.
const simpleReach = 1.005

// fitSlack is how many more decisions than the fewest a simpler value
// may get wrong: one in 100, at least two.
func fitSlack(n int) int { return max(2, n/100) }

// significantDigits counts the significant digits v needs (at most 9).
func significantDigits(v float64) int {
	if v == 0 {
		return 1
	}
	for d := 1; d < 9; d++ {
		scale := math.Pow(10, float64(d)-math.Ceil(math.Log10(math.Abs(v))))
		if math.Abs(math.Round(v*scale)/scale-v) <= 1e-9*math.Abs(v) {
			return d
		}
	}
	return 9
}

// roundValues are the values people configure, between lo and hi: for a
// rate, whole and half requests a second and whole requests a minute;
// for a window (µs), whole tenths of a second up to 10 s and the clock's
// lengths.
func roundValues(f family, lo, hi float64) []float64 {
	var out []float64
	add := func(v float64) {
		if v >= lo && v <= hi {
			out = append(out, v)
		}
	}
	if f.windowed() {
		for ms := 100; ms <= 10_000; ms += 100 {
			add(float64(ms) * 1000)
		}
		for _, w := range clockWindows {
			add(w)
		}
		return out
	}
	for n := 1; n <= 600; n++ {
		add(float64(n) / 60)
	}
	for n := 1; n <= 2*int(MaxMaxRate); n++ {
		add(float64(n) / 2)
	}
	return out
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
	if f == familyConcurrency {
		return params{limit: k}
	}
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
