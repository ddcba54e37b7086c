package plots

import (
	"bytes"
	"math"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/ratelim/ratelim/sim"
)

// An animation's frame (a result cut part way, drawn with AxisEndS at the
// run's end) keeps the whole run's time axis: its last tick is the run's
// end, not the cut.
func TestAxisEndSKeepsTheWholeRunsAxis(t *testing.T) {
	r := builtin(t, "window-boundary", nil)
	cut := *r
	cut.DurationS = 2.3
	cut.Timeline = slices.DeleteFunc(slices.Clone(r.Timeline), func(row sim.TimelineRow) bool { return row.TS >= 2.3-1e-9 })
	cut.State = nil
	lastTick := func(opts Options) string {
		var b bytes.Buffer
		opts.Format = "svg"
		if err := Timeline(&b, &cut, opts); err != nil {
			t.Fatal(err)
		}
		// The time axis' labels are the figure's lowest numbers (y is
		// negated under scale(1, -1): the lowest is the nearest 0); the
		// last is the rightmost.
		re := regexp.MustCompile(`<text x="([0-9.]+)" y="(-[0-9.]+)"[^>]*\n?[^>]*>([0-9.]+)</text>`)
		low, right, label := math.Inf(-1), math.Inf(-1), ""
		for _, m := range re.FindAllStringSubmatch(b.String(), -1) {
			x, _ := strconv.ParseFloat(m[1], 64)
			y, _ := strconv.ParseFloat(m[2], 64)
			if y > low+0.01 || (math.Abs(y-low) <= 0.01 && x > right) {
				low, right, label = max(y, low), x, m[3]
			}
		}
		return label
	}
	if got := lastTick(Options{}); got == "5" {
		t.Fatalf("the cut result alone ends its axis at %s, want before the run's end", got)
	}
	if got := lastTick(Options{AxisEndS: r.DurationS}); got != "5" {
		t.Errorf("with AxisEndS %g the axis ends at %q, want 5", r.DurationS, got)
	}
}
