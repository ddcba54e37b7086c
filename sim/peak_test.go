package sim

import (
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// The peak window's ring against counting every window outright: the most
// admissions in any (t-w, t] that ends at an admission.
func TestPropertyPeakWindowIsTheBusiestWindow(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := rapid.Int64Range(1, 200).Draw(t, "w")
		gaps := rapid.SliceOfN(rapid.Int64Range(0, 10), 0, 300).Draw(t, "gaps")
		p := peakWindow{w: w}
		var times []int64
		at := rapid.Int64Range(-100, 100).Draw(t, "start")
		for _, g := range gaps {
			at += g
			times = append(times, at)
			p.add(at)
		}
		var want int64
		for _, ti := range times {
			var n int64
			for _, tj := range times {
				if tj > ti-w && tj <= ti {
					n++
				}
			}
			want = max(want, n)
		}
		if p.peak != want {
			t.Fatalf("peak %d, want %d (w %d, times %v)", p.peak, want, w, times)
		}
	})
}

// A pair of peak windows that share one ring until they disagree against
// two windows kept apart from the start.
func TestPropertyPeakPairIsTwoWindows(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 300).Draw(t, "n")
		pair := newPeakPair()
		pair.actual.w = rapid.Int64Range(1, 100).Draw(t, "w")
		actual, ideal := peakWindow{w: pair.actual.w}, peakWindow{w: pair.actual.w}
		var at int64
		for i := range n {
			at += rapid.Int64Range(0, 10).Draw(t, "gap")
			a, id := rapid.Bool().Draw(t, "allowed"), rapid.Bool().Draw(t, "ideal")
			if i < n/2 {
				id = a // agreeing for a while, as most runs do
			}
			pair.add(at, a, id)
			if a {
				actual.add(at)
			}
			if id {
				ideal.add(at)
			}
		}
		if pair.actual.peak != actual.peak || pair.idealPeak() != ideal.peak {
			t.Fatalf("pair %d/%d, apart %d/%d", pair.actual.peak, pair.idealPeak(), actual.peak, ideal.peak)
		}
	})
}

// The histogram, inline while it has few buckets and in blocks past that,
// against the quantile read off every value counted, sorted: the smallest
// bucket value with at least q of the values at or below it. Values are
// drawn from a handful of latencies (inline), or from everywhere (blocks),
// with resets between steps as the recorder's step histogram has.
func TestPropertyHistogramQuantileIsTheSortedValues(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pool := rapid.SliceOfN(rapid.Int64Range(-5, 1<<40), 1, 12).Draw(t, "pool")
		steps := rapid.SliceOfN(rapid.SliceOfN(rapid.IntRange(0, len(pool)-1), 0, 40), 1, 4).Draw(t, "steps")
		var h histogram
		for si, picks := range steps {
			if si > 0 {
				h.reset()
			}
			var buckets []int
			for _, p := range picks {
				i := histIndex(pool[p])
				h.addAt(i)
				buckets = append(buckets, i)
			}
			slices.Sort(buckets)
			for _, q := range []float64{0, 0.01, 0.5, 0.9, 0.99, 1} {
				var want int64
				if n := len(buckets); n > 0 {
					rank := min(max(int(q*float64(n)+0.9999999), 1), n)
					want = histValue(buckets[rank-1])
				}
				if got := h.quantile(q); got != want {
					t.Fatalf("step %d: quantile(%v) = %d, want %d (buckets %v)", si, q, got, want, buckets)
				}
			}
		}
	})
}

// A histogram of a bucket or two, what most clients' requests fall in,
// allocates nothing past the client's run.
func TestHistogramOfFewBucketsAllocatesNothing(t *testing.T) {
	var h histogram
	allocs := testing.AllocsPerRun(100, func() {
		h.addAt(histIndex(500))
		h.addAt(histIndex(0))
		_ = h.quantile(0.99)
	})
	if allocs != 0 || h.blocked != nil {
		t.Fatalf("%v allocations a run, blocked %v: want none", allocs, h.blocked != nil)
	}
}
