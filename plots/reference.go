package plots

import (
	"fmt"
	"math"

	"github.com/ratelim/ratelim/sim"
)

// reference is what a traffic panel measures admissions against: the most
// the configured limit lets through in any interval of one window.
//
// A per-step line (rate × step) is the wrong yardstick. A limit of 100 per
// 1 s window drawn per 0.1 s step reads 10, and a legal burst of 100 looks
// ten times over, while the real excess of a fixed window — 200 admitted
// within one second across a boundary — is invisible, because no single
// step holds more than 100. So the panels draw a rolling count: what was
// admitted in the last window's length, step by step, against what the
// limit allows in that length.
//
// What a limit allows in an interval W depends on the algorithm:
//
//   - a window algorithm (fixed-window, sliding-log, sliding-window) means
//     rate × window per window; W is the window, and a fixed window can
//     still let twice that through across one of its boundaries, which the
//     rolling count shows;
//   - a token bucket or GCRA lets a quiet key spend its burst at once and
//     then refill at the rate, so the most in any W is burst + rate × W
//     (W = 1 s, the unit of the rate); rate × W is what it sustains;
//   - a leaky bucket lets requests leave its queue at the rate, so what it
//     serves (counted when they leave) is at most about rate × W.
type reference struct {
	kind    string  // "window", "bucket" or "leaky"
	k       int     // steps in the rolling count
	windowS float64 // the rolling count's length: k steps
	// limit is the most the limit allows in any windowS; refill the part a
	// bucket sustains (rate × windowS), zero for the other kinds.
	limit, refill float64
	// boundaryS is a fixed window's length: its boundaries are marked,
	// where its double burst happens. Zero for every other algorithm.
	boundaryS float64
}

// newReference returns the reference of d's limit.
func newReference(d *timelineData) reference {
	l := d.r.Limit
	ref := reference{kind: "bucket"}
	w := 1.0 // a bucket's rate is per second
	switch sim.Family(d.r.Algorithm) {
	case "fixed-window", "sliding-log", "sliding-window":
		ref.kind = "window"
		if l.WindowS > 0 {
			w = l.WindowS
		}
		// Boundaries where the clock puts them: not a peer's whose
		// windows start at each key's first hit (ulule, go-limiter).
		if d.r.Algorithm == "fixed-window" || d.r.Algorithm == "envoy-ratelimit" {
			ref.boundaryS = w
		}
	case "leaky-bucket":
		ref.kind = "leaky"
	}
	// The rolling count adds whole steps, so its length is the nearest
	// whole number of steps: exact for the built-ins (1 s in 0.1 s steps).
	ref.k = max(1, int(math.Round(w/d.stepS)))
	ref.windowS = float64(ref.k) * d.stepS
	rate := l.RatePerS * ref.windowS
	if onlyShed(d.r) {
		// Every refusal was the load shedder's: the key's limit never
		// bound, and its lines would only hide the fleet's lesson.
		return ref
	}
	switch ref.kind {
	case "window":
		// The limit per window, stretched if the step is longer than it.
		ref.limit = l.RatePerS * math.Max(w, ref.windowS)
	case "bucket":
		ref.limit, ref.refill = float64(l.Burst)+rate, rate
	case "leaky":
		ref.limit = rate
	}
	return ref
}

// per names the interval of the rolling count: "1 s", "0.5 s".
func (ref reference) per() string { return trimFloat(ref.windowS) + " s" }

// limitLabel says what the limit line is, for the legend.
func (ref reference) limitLabel() string {
	switch ref.kind {
	case "bucket":
		return fmt.Sprintf("limit: the most in any %s (burst + rate × %s)", ref.per(), ref.per())
	case "leaky":
		return fmt.Sprintf("limit: what the queue drains in %s (rate × %s)", ref.per(), ref.per())
	}
	return fmt.Sprintf("limit per %s window", ref.per())
}

// refillLabel says what the refill line is, for the legend.
func (ref reference) refillLabel() string {
	return fmt.Sprintf("refill: what a bucket sustains per %s (rate × %s)", ref.per(), ref.per())
}

// rollingLabel says what the rolling count is, for the legend.
func (ref reference) rollingLabel() string {
	return fmt.Sprintf("admitted in the last %s (rolling)", ref.per())
}

// rolling returns, for every step i, the sum of v over the k steps that
// end with i: what was admitted in the last window's length.
func rolling(v []float64, k int) []float64 {
	out := make([]float64, len(v))
	sum := 0.0
	for i, x := range v {
		sum += x
		if i >= k {
			sum -= v[i-k]
		}
		out[i] = sum
	}
	return out
}

// over returns, step by step, the band of a count that the limit does not
// allow: from lo[i] to hi[i] where hi[i] > lo[i].
//
// For a window algorithm the count is the rolling count over the window,
// and what passes the limit per window is over.
//
// For a token bucket or GCRA a one-second window is too short: a split
// brain admitting 20/s against a refill of 10/s never passes burst + rate
// in any one second, yet it admits twice what it should. So the steps'
// admissions are replayed through one exact bucket, full at the start:
// in a step it can admit at most what it held plus a step's refill, and
// anything past that is over. The replay is generous — it caps at the
// burst only at a step's end — so an exact limiter never shows over;
// what shows was let through by copies that each thought they had tokens
// (jars per server, a race, the two sides of a partition).
func (ref reference) over(served []float64, burst, ratePerS, stepS float64, keys int) (lo, hi []float64) {
	n := float64(keys)
	lo, hi = make([]float64, len(served)), make([]float64, len(served))
	if ref.kind != "bucket" {
		// A queue draining at the rate can let one more go in a window
		// than rate × window (one at each end): not an excess.
		slack := 0.0
		if ref.kind == "leaky" {
			slack = n
		}
		count := rolling(served, ref.k)
		for i := range count {
			lo[i], hi[i] = ref.limit*n+slack, count[i]
		}
		return lo, hi
	}
	level := burst * n
	for i, s := range served {
		// What the step began with, and what flowed in during it: tokens
		// spent in the step make room for the refill, so the burst caps
		// only what is left at its end.
		room := level + ratePerS*stepS*n
		hi[i] = s
		lo[i] = math.Min(s, room)
		level = math.Min(burst*n, math.Max(0, room-s))
	}
	return lo, hi
}

// overLabel says what the over band is, for the legend.
func (ref reference) overLabel() string {
	if ref.kind == "bucket" {
		return "admitted beyond what one exact bucket holds"
	}
	return fmt.Sprintf("over the limit in the last %s", ref.per())
}

// onlyShed reports whether r ran a load shedder and every request it
// refused was the shedder's 503, none the limit's 429.
func onlyShed(r *sim.Result) bool {
	if r.Shedder == nil {
		return false
	}
	for _, c := range r.Clients {
		if c.Rejected != c.Shed {
			return false
		}
	}
	return true
}
