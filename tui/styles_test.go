package tui

import (
	"math"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/ratelim/ratelim/sim"
)

// The strips draw each cell from glyphs rendered once (sparkCells); drawn
// so, they are what rendering every cell in its style writes, in colour
// and without: each kind of cell (idle, nothing admitted or rejected,
// failed open, failed closed, over, every height and shade).
func TestSparkCellsAreTheirStylesRendering(t *testing.T) {
	// reference draws the strips as rendering every cell in its style does.
	reference := func(m Model, cs []cell, w int) (admitted, rejected string) {
		perStep := m.scaleRate() * m.sc.Step.Seconds()
		for _, c := range cs {
			switch full := perStep * float64(c.steps); {
			case c.Sent == 0:
				admitted += m.st.dim.Render(string(glyphIdle))
			case c.Allowed == 0:
				admitted += " "
			case 2*c.FailedOpen >= c.Allowed:
				admitted += m.st.failedOpen.Render(string(glyphFailedOpen))
			case c.over:
				admitted += m.st.over.Render(string(glyphOver))
			default:
				admitted += m.st.allowed.Render(string(heights[min(max(int(math.Ceil(float64(c.Allowed)/full*8)), 1), 8)]))
			}
			share := float64(c.Rejected) / float64(max(c.Sent, 1))
			switch {
			case c.Sent == 0:
				rejected += m.st.dim.Render(string(glyphIdle))
			case c.Rejected == 0:
				rejected += " "
			case 2*c.FailedClosed >= c.Rejected:
				rejected += m.st.failedClosed.Render(string(glyphFailedClosed))
			default:
				rejected += m.st.rejected.Render(string(shades[min(int(share*3), 2)]))
			}
		}
		return padRight(admitted, w), padRight(rejected, w)
	}
	var cs []cell
	add := func(sent, allowed, rejected, failedOpen, failedClosed int64, over bool) {
		cs = append(cs, cell{TimelineRow: sim.TimelineRow{Counts: sim.Counts{Sent: sent, Allowed: allowed, Rejected: rejected,
			FailedOpen: failedOpen, FailedClosed: failedClosed}}, steps: 1, over: over})
	}
	add(0, 0, 0, 0, 0, false) // idle
	add(5, 0, 5, 0, 5, false) // failed closed, nothing admitted
	add(8, 6, 2, 4, 0, false) // failed open
	add(40, 30, 10, 0, 0, true)
	for allowed := int64(1); allowed <= 12; allowed++ { // every height (a limit of 10/s)
		add(allowed+allowed%4, allowed, allowed%4, 0, 0, false)
	}
	add(3, 1, 2, 0, 0, false) // shades: a third, two thirds, all
	add(9, 1, 8, 0, 0, false)
	add(9, 0, 9, 0, 0, false)
	for _, noColor := range []bool{false, true} {
		r := lipgloss.NewRenderer(nil)
		r.SetColorProfile(termenv.ANSI256)
		m := newTestModel(t, clients10k(3), noColor)
		m.st = newStyles(r, noColor)
		w := len(cs) + 3
		wantA, wantR := reference(m, cs, w)
		if got := m.admittedSpark(cs, 1, w); got != wantA {
			t.Errorf("noColor %v: admitted strip\n%q\nwant\n%q", noColor, got, wantA)
		}
		if got := m.rejectedSpark(cs, w); got != wantR {
			t.Errorf("noColor %v: rejected strip\n%q\nwant\n%q", noColor, got, wantR)
		}
	}
}
