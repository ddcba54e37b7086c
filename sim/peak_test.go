package sim

import (
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
