package tui

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

// layout is how a frame shares the terminal's lines: the header on top,
// the footer at the bottom, and between them the rows (clients or keys),
// the gauges, a chart of the selected row when there is room, and the
// event log or, once the run is done, its verdict; each under a title.
type layout struct {
	width, height int
	header        int // lines
	ruler         bool
	clientRows    int
	keys          bool // whether the gauges are drawn
	keyLines      int
	chart         bool
	chartRows     int
	bottom        bool // whether the log or the verdict is drawn
	bottomRows    int
}

// minWidth and minHeight are the smallest terminal drawn as designed;
// below them the frame is cut to fit.
const (
	minWidth  = 40
	minHeight = 8
)

// Shares of the lines: the log wants a few lines at least, the verdict
// more, and the log no more than logMax; a chart is drawn only when it
// gets minChart lines, and none taller than maxChart.
const (
	logMin     = 3
	verdictMin = 6
	logMax     = 10
	minChart   = 4
	maxChart   = 32
)

// plan lays the frame out for the terminal's size. The rows come first,
// as many as fit once the log (or verdict) and one key's gauges have
// their minimum; what is left goes to the log or verdict up to what it
// has to say, then the gauges up to every key, then a chart of the
// selected row, then the log again.
func (m Model) plan() layout {
	l := layout{width: max(m.width, minWidth), height: max(m.height, minHeight)}
	l.header = 2 + max(1, min(len(m.snap.Active), 2))
	rest := l.height - l.header - 1 - 2 // the footer, the rows' title and column heads
	if rest < 1 {
		return l
	}
	l.ruler = len(m.sc.Faults) > 0 && rest >= 8
	if l.ruler {
		rest--
	}
	perKey := m.gaugeGeometry(l.width).linesPerKey
	keyNeed := perKey * m.keyCount() * m.perRow()
	l.keys = keyNeed > 0 && rest >= 4
	if l.keys {
		rest--
	}
	l.bottom = rest >= 6
	if l.bottom {
		rest--
	}
	bottomNeed, bottomMin, bottomMax := 0, 0, 0
	if l.bottom {
		bottomNeed = m.bottomNeed(l.width)
		bottomMin, bottomMax = min(bottomNeed, logMin), logMax
		if m.showVerdict() {
			bottomMin, bottomMax = min(bottomNeed, verdictMin), bottomNeed
		}
		bottomMin = max(bottomMin, 1)
	}
	keyMin := 0
	if l.keys {
		keyMin = perKey * m.perRow()
	}
	l.clientRows = max(0, min(m.rowCount()*m.perRow(), rest-bottomMin-keyMin))
	l.clientRows -= l.clientRows % m.perRow() // whole rows, both runs' lines
	l.bottomRows, l.keyLines = bottomMin, keyMin
	spare := rest - l.clientRows - bottomMin - keyMin
	if spare < 0 {
		// Not even the minimums fit: the gauges go first, then the log.
		l.keyLines = max(0, l.keyLines+spare)
		l.bottomRows = max(0, rest-l.clientRows-l.keyLines)
		return l
	}
	grow := min(spare, max(0, min(bottomNeed, bottomMax)-l.bottomRows))
	l.bottomRows += grow
	spare -= grow
	if l.keys {
		grow = min(spare, keyNeed-l.keyLines) / (perKey * m.perRow()) * perKey * m.perRow()
		l.keyLines += grow
		spare -= grow
	}
	if spare >= minChart+1 && m.rowCount() > 0 {
		l.chart, l.chartRows = true, min(spare-1, maxChart)
		spare -= l.chartRows + 1
	}
	if l.bottom {
		l.bottomRows += spare
	}
	return l
}

// rowCount is how many rows the table has.
func (m Model) rowCount() int {
	if m.byKey {
		return m.keyCount()
	}
	return len(m.snap.Clients)
}

// showVerdict reports whether the bottom pane is the verdict.
func (m Model) showVerdict() bool { return m.verdict != nil && !m.showLog }

// bottomNeed is how many lines the bottom pane has to show: the verdict's,
// or every log entry's.
func (m Model) bottomNeed(w int) int {
	if m.showVerdict() {
		n := len(m.verdictBody(w))
		if m.vs != nil {
			n += len(m.other().verdictBody(w)) + 2 // each under its run's label
		}
		return n
	}
	n := 0
	for _, e := range m.events() {
		n += len(m.logEntry(e, w))
	}
	return n
}

// View draws the frame: never wider than the terminal nor taller.
func (m Model) View() string {
	l := m.plan()
	lines := m.headerLines(l.width, l.header)
	bodyH := l.height - len(lines) - 1
	if m.help {
		box := m.helpBox()
		lines = append(lines, strings.Split(lipgloss.PlaceHorizontal(l.width, lipgloss.Center, box), "\n")...)
	} else {
		lines = append(lines, m.clientLines(l)...)
		if l.keys {
			lines = append(lines, m.gaugeLines(l)...)
		}
		if l.chart {
			lines = append(lines, m.chartLines(l)...)
		}
		switch {
		case l.bottom && m.showVerdict():
			lines = append(lines, m.verdictLines(l)...)
		case l.bottom:
			lines = append(lines, m.logLines(l)...)
		}
	}
	lines = lines[:min(len(lines), l.header+max(bodyH, 0))]
	for len(lines) < l.height-1 {
		lines = append(lines, "")
	}
	lines = append(lines, m.footerLine(l.width))
	return fit(lines, m.width, m.height)
}

// fit cuts lines to w cells and h lines (a zero size does not cut).
func fit(lines []string, w, h int) string {
	if h > 0 && len(lines) > h {
		lines = lines[:h]
	}
	if w > 0 {
		for i, line := range lines {
			if lipgloss.Width(line) > w {
				lines[i] = ansi.Truncate(line, w, "")
			}
		}
	}
	return strings.Join(lines, "\n")
}

// trunc cuts s to n cells, ending it with … when cut.
func trunc(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if lipgloss.Width(s) <= n {
		return s
	}
	return ansi.Truncate(s, n, "…")
}

// truncMiddle cuts a name to n cells keeping its end, where names made
// from a template differ: bastion-12 in 8 cells is bas…-12.
func truncMiddle(s string, n int) string {
	w := lipgloss.Width(s)
	if w <= n {
		return s
	}
	if n < 5 {
		return trunc(s, n)
	}
	tail := (n - 1) / 2
	return ansi.Truncate(s, n-1-tail, "") + "…" + ansi.TruncateLeft(s, w-tail, "")
}

// padRight cuts or pads s to exactly n cells.
func padRight(s string, n int) string {
	s = trunc(s, n)
	return s + strings.Repeat(" ", max(0, n-lipgloss.Width(s)))
}

// padLeft right-aligns s in n cells.
func padLeft(s string, n int) string {
	s = trunc(s, n)
	return strings.Repeat(" ", max(0, n-lipgloss.Width(s))) + s
}

// title is a section's title line: the name, then dim detail.
func (m Model) title(name, detail string, w int) string {
	return trunc(m.st.section.Render(name)+"  "+m.st.dim.Render(detail), w)
}
