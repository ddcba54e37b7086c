package tui

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

// layout is how a frame shares the terminal's lines: the header on top,
// the footer at the bottom, and between them the clients, the gauges and
// the event log, each under a title line.
type layout struct {
	width, height int
	header        int // lines
	clientRows    int
	keys          bool // whether the gauges are drawn
	keyLines      int
	log           bool // whether the event log is drawn
	logRows       int
}

// minWidth and minHeight are the smallest terminal drawn as designed;
// below them the frame is cut to fit.
const (
	minWidth  = 40
	minHeight = 8
)

// plan lays the frame out for the terminal's size: every client if they
// fit (else a scrolling window of them), whole keys' gauges up to about a
// third of what is left, and the rest for the log.
func (m Model) plan() layout {
	l := layout{width: max(m.width, minWidth), height: max(m.height, minHeight)}
	l.header = 2 + max(1, min(len(m.snap.Active), 2))
	rest := l.height - l.header - 1 - 2 // the footer, the clients' title and column heads
	if rest < 1 {
		return l
	}
	perKey := m.gaugeGeometry(l.width).linesPerKey
	keyNeed := perKey * m.keyCount()
	l.keys = keyNeed > 0 && rest >= 3
	l.log = rest >= 5
	if l.keys {
		rest--
	}
	if l.log {
		rest--
		l.logRows = min(max(rest/4, 1), 8)
	}
	if l.keys {
		l.keyLines = min(keyNeed, max(perKey, (rest-l.logRows)/3/perKey*perKey), rest-l.logRows-1)
		if l.keyLines >= perKey {
			l.keyLines = l.keyLines / perKey * perKey
		}
	}
	l.clientRows = min(len(m.snap.Clients), rest-l.logRows-l.keyLines)
	spare := rest - l.logRows - l.keyLines - l.clientRows
	if l.keys && l.keyLines >= perKey {
		grow := min(spare, keyNeed-l.keyLines) / perKey * perKey
		l.keyLines += grow
		spare -= grow
	}
	if l.log {
		l.logRows += spare
	}
	return l
}

// clampScroll keeps the first client row shown within the clients.
func (m Model) clampScroll(first int) int {
	return max(0, min(first, len(m.snap.Clients)-m.plan().clientRows))
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
		if l.log {
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
