package tui

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/ratelim/ratelim/internal/escape"
)

// chart is the selected row drawn over the whole run, on a terminal with
// lines to spare: a bar per cell against the limit, on a time axis that
// marks the faults. The bar is what the limit is about: for a window
// algorithm the most admitted in any window's length ending in the cell,
// against the limit per window (so a fixed window's boundary burst stands
// at 2× the line); for a bucket the rate admitted over the cell, against
// the rate (a burst the bucket allows rises above it, drawn as allowed).
type chart struct {
	values []float64 // per cell, NaN for cells not yet played
	over   []bool
	open   []bool // mostly failed open
	line   float64
	unit   string
}

func (m Model) chartFor(s series, w int) chart {
	stepS := m.sc.Step.Seconds()
	total := int(math.Ceil(m.sc.Duration.Seconds() / stepS))
	k := stride(total, w)
	a := newAllowance(m.sc.Limit)
	played := m.played(s)
	cs := cells(played, k, stepS, a)
	n := (total + k - 1) / k
	c := chart{values: make([]float64, n), over: make([]bool, n), open: make([]bool, n)}
	perWindow := 0
	if a.windowed {
		perWindow = max(1, int(math.Round(a.window/stepS)))
		c.line, c.unit = a.rate*a.window, "admitted per "+strconv.FormatFloat(a.window, 'f', -1, 64)+"s window"
	} else {
		c.line, c.unit = a.rate, "admitted per second"
	}
	// A leaky bucket queues what it admits: what leaves the queue, the
	// smoothed flow the backend sees, is its lesson.
	served := m.sc.Limit.Algorithm == "leaky-bucket"
	if served {
		c.unit = "served per second, as they leave the queue"
	}
	for i := range n {
		c.values[i] = math.NaN()
		if i >= len(cs) {
			continue
		}
		c.over[i] = cs[i].over
		c.open[i] = cs[i].Allowed > 0 && 2*cs[i].FailedOpen >= cs[i].Allowed
		if !a.windowed {
			n := cs[i].Allowed
			if served {
				n = cs[i].Served
			}
			c.values[i] = float64(n) / (float64(cs[i].steps) * stepS)
			continue
		}
		best := 0.0
		for end := i * k; end < min(played.len(), (i+1)*k); end++ {
			sum := 0.0
			for st := max(0, end-perWindow+1); st <= end; st++ {
				sum += float64(played.at(st).Allowed)
			}
			best = math.Max(best, sum)
		}
		c.values[i] = best
		// Every window's length that holds more than the limit is over
		// it, not only the cell the burst ended in.
		c.over[i] = c.over[i] || best > overSlack*c.line+overExtra
	}
	return c
}

// chartLines are the chart's title, its bars and its time axis; side by
// side, a chart of each run, each half as tall, the second on the
// first's scale.
func (m Model) chartLines(l layout) []string {
	if m.vs == nil {
		return m.chartOf(l, "", 0)
	}
	// Two titles in the lines of one: chartRows counts one.
	half := l
	half.chartRows = (l.chartRows - 1) / 2
	b := m.other()
	top := max(m.chartTop(l), b.chartTop(l))
	rest := l
	rest.chartRows = l.chartRows - 1 - half.chartRows
	return append(m.chartOf(half, "A", top), b.chartOf(rest, "B", top)...)
}

// chartTop is the top of the selected row's chart's scale.
func (m Model) chartTop(l layout) float64 {
	rows := m.rows()
	if len(rows) == 0 {
		return 0
	}
	c := m.chartFor(m.withSteps(rows[m.selected(rows)]), chartWidth(l, m.sc.Duration))
	top := c.line * 2
	for _, v := range c.values {
		if !math.IsNaN(v) {
			top = math.Max(top, v)
		}
	}
	return niceCeil(top)
}

// chartOf is one chart, its title tagged with the run's letter; a scale
// of 0 is the chart's own.
func (m Model) chartOf(l layout, tag string, scale float64) []string {
	rows := m.rows()
	if len(rows) == 0 || l.chartRows < 3 {
		return nil
	}
	s := m.withSteps(rows[m.selected(rows)])
	c := m.chartFor(s, chartWidth(l, m.sc.Duration))
	w := chartWidth(l, m.sc.Duration)
	cw := max(1, w/max(len(c.values), 1)) // characters per cell: a short run fills the width too
	h := l.chartRows - 1                  // the axis
	top := c.line * 2
	for _, v := range c.values {
		if !math.IsNaN(v) {
			top = math.Max(top, v)
		}
	}
	top = math.Max(niceCeil(top), scale)
	lineRow := h - 1 - int(math.Floor(c.line/top*float64(h)-1e-9)) // the row the limit's line crosses
	legend := fmt.Sprintf("▸ %s · %s, ╌ limit %s · ▓%s over", escape.Text(s.name), c.unit, num(c.line), string(glyphOver))
	if failOpen, _, _ := m.exercises(); failOpen {
		legend += " · ▒ failed open"
	}
	name := "CHART"
	if tag != "" {
		name += " " + tag
	}
	title := m.title(name, legend, l.width)
	lines := []string{title}
	for r := range h {
		label := ""
		switch r {
		case 0:
			label = num(top)
		case lineRow:
			label = num(c.line)
		}
		var b strings.Builder
		for i, v := range c.values {
			b.WriteString(strings.Repeat(m.chartCell(c, i, v, top, h, r, lineRow), cw))
		}
		lines = append(lines, m.st.dim.Render(padLeft(label, labelW-1)+" ┤")+b.String())
	}
	return append(lines, m.chartAxis(len(c.values)*cw, labelW))
}

// chartCell is one character of the chart: row r (0 at the top) of h, for
// cell i's value v on a scale to top, the limit's line on row lineRow.
// An over cell's bar is ▓ above the line and capped with ▲, so that it
// differs from an allowed one without colour too.
func (m Model) chartCell(c chart, i int, v, top float64, h, r, lineRow int) string {
	blank := " "
	if r == lineRow {
		blank = m.st.dim.Render("╌")
	}
	if math.IsNaN(v) || v <= 0 {
		return blank
	}
	eighths := int(math.Ceil(v / top * float64(h*8)))
	fromBottom := h - 1 - r
	fill := min(max(eighths-fromBottom*8, 0), 8)
	style, glyph := m.st.allowed, heights[fill]
	switch {
	case c.open[i]:
		style = m.st.failedOpen
		if fill > 0 {
			glyph = '▒'
		}
	case c.over[i]:
		style = m.st.over
		if fill == 0 && (eighths-1)/8 == fromBottom-1 {
			return style.Render(string(glyphOver)) // on top of the bar
		}
		if fill > 0 && r < lineRow {
			glyph = '▓'
		}
	}
	if fill == 0 {
		return blank
	}
	return style.Render(string(glyph))
}

// labelW is the width of the chart's scale: "   1234 ┤".
const labelW = 8

// chartWidth is how many characters of the width the bars have: what is
// left of the scale and of the axis's end label.
func chartWidth(l layout, d time.Duration) int {
	return l.width - labelW - 1 - len(" "+secs(d))
}

// chartAxis is the time axis in n characters: the start and end of the
// run, the faults as ▬ under the cells they touch, and the time reached
// as │.
func (m Model) chartAxis(n, labelW int) string {
	total := m.sc.Duration.Seconds()
	var b strings.Builder
	now := m.snap.TS
	for i := range n {
		from, to := total*float64(i)/float64(n), total*float64(i+1)/float64(n)
		fault := false
		for _, f := range m.sc.Faults {
			fault = fault || (f.Start.Seconds() < to && f.End.Seconds() > from)
		}
		switch {
		case now >= from && now < to && now < total:
			b.WriteString(m.st.bold.Render("│"))
		case fault:
			b.WriteString(m.st.timeFault.Render("▬"))
		default:
			b.WriteString(m.st.dim.Render("─"))
		}
	}
	return m.st.dim.Render(padLeft("0s", labelW-1)+" └") + b.String() + m.st.dim.Render(" "+secs(m.sc.Duration))
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, f := range []float64{1, 2, 5, 10} {
		if f*p >= v-1e-9 {
			return f * p
		}
	}
	return 10 * p
}

// num writes a chart figure: 10, 2.5, 1200.
// num writes a chart figure: whole as it is, a fraction to four figures
// (1.667, not 1.6666666666666667), a large one to the unit.
func num(v float64) string {
	switch {
	case v == math.Trunc(v):
		return strconv.FormatFloat(v, 'f', -1, 64)
	case math.Abs(v) >= 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}
