package tui

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/sim"
)

// column is one figure of a client's row, right-aligned.
type column struct {
	head  string
	width int
	value func(sim.ClientSnapshot) string
}

// clientTable is the clients' columns sized for a width: the name, two
// sparklines (admitted, rejected) of one cell per step, then the figures.
type clientTable struct {
	nameW, sparkW int
	cols          []column
}

// overLimit is how far over the limit's rate a step's admissions must be to
// be drawn as over it: clear of the one extra request a step boundary lets
// through, as a doubling (split brain) or worse (per-server jars) is.
const overLimit = 1.5

func (m Model) clientTable(w int) clientTable {
	longest := len("client")
	widest := int64(0)
	for _, c := range m.snap.Clients {
		longest = max(longest, lipgloss.Width(c.Name))
		widest = max(widest, c.Total.Sent)
	}
	t := clientTable{nameW: min(longest, max(8, w/6))}
	numW := max(7, len(compact(widest)))
	num := func(f func(sim.ClientResult) int64) func(sim.ClientSnapshot) string {
		return func(c sim.ClientSnapshot) string { return compact(f(c.Total)) }
	}
	t.cols = []column{
		{"admit/s ×lim", 12, m.rateCell},
		{"allowed", numW, num(func(r sim.ClientResult) int64 { return r.Allowed })},
		{"rejected", max(numW, 8), num(func(r sim.ClientResult) int64 { return r.Rejected })},
	}
	extras := []column{
		{"sent", numW, num(func(r sim.ClientResult) int64 { return r.Sent })},
		{"fail-open", 9, num(func(r sim.ClientResult) int64 { return r.FailedOpen })},
		{"fail-closed", 11, num(func(r sim.ClientResult) int64 { return r.FailedClosed })},
		{"retries", numW, num(func(r sim.ClientResult) int64 { return r.Retries })},
	}
	steps := int(math.Ceil(m.sc.Duration.Seconds() / m.sc.Step.Seconds()))
	spark := func(cols []column) int {
		used := t.nameW + 2
		for _, c := range cols {
			used += c.width + 1
		}
		return min((w-used-1)/2, steps, 60)
	}
	for _, x := range extras {
		if more := append(slices.Clone(t.cols), x); spark(more) >= 24 || spark(more) >= steps {
			t.cols = more
		}
	}
	t.sparkW = spark(t.cols)
	if t.sparkW < 3 {
		t.sparkW = 0
	}
	return t
}

// clientLines are the clients' title, then the rows that fit from the
// scroll position.
func (m Model) clientLines(l layout) []string {
	t := m.clientTable(l.width)
	detail := limitText(m.sc)
	n := len(m.snap.Clients)
	first := m.clampScroll(m.scroll)
	if l.clientRows < n {
		detail += fmt.Sprintf(" · %d–%d of %d ↑↓", first+1, first+l.clientRows, n)
	}
	head := m.st.dim.Render(padRight("client", t.nameW)) + " "
	if t.sparkW > 0 {
		head += m.st.dim.Render(padRight("admitted █=limit", t.sparkW) + "  " + padRight("rejected", t.sparkW))
	}
	for _, c := range t.cols {
		head += " " + m.st.dim.Render(padLeft(c.head, c.width))
	}
	lines := []string{m.title("CLIENTS", detail, l.width), trunc(head, l.width)}
	for _, c := range m.snap.Clients[first:min(n, first+l.clientRows)] {
		lines = append(lines, m.clientRow(t, c, l.width))
	}
	return lines
}

func (m Model) clientRow(t clientTable, c sim.ClientSnapshot, w int) string {
	row := padRight(truncMiddle(c.Name, t.nameW), t.nameW) + " "
	if t.sparkW > 0 {
		recent := c.Recent
		if n := len(recent); n > 1 && recent[n-1].TS >= m.snap.TS {
			recent = recent[:n-1] // a step just begun has nothing to show yet
		}
		row += m.admittedSpark(recent, t.sparkW) + "  " + m.rejectedSpark(recent, t.sparkW)
	}
	for _, col := range t.cols {
		row += " " + padLeft(col.value(c), col.width)
	}
	return trunc(row, w)
}

// admittedSpark draws the last w steps' admissions, one cell each, the
// newest on the right: a full cell is the limit's rate over a step.
func (m Model) admittedSpark(rows []sim.TimelineRow, w int) string {
	perStep := m.sc.Limit.Params.Rate.PerSecond() * m.sc.Step.Seconds()
	var b strings.Builder
	b.WriteString(strings.Repeat(" ", max(0, w-len(rows))))
	for _, r := range rows[max(0, len(rows)-w):] {
		switch {
		case r.Sent == 0:
			b.WriteString(m.st.dim.Render(string(glyphIdle)))
		case r.Allowed == 0:
			b.WriteString(" ")
		case 2*r.FailedOpen >= r.Allowed:
			g := level(float64(r.Allowed) / perStep)
			if m.st.noColor {
				g = glyphFailedOpen
			}
			b.WriteString(m.st.failedOpen.Render(string(g)))
		case float64(r.Allowed) >= overLimit*perStep:
			g := heights[8]
			if m.st.noColor {
				g = glyphOver
			}
			b.WriteString(m.st.over.Render(string(g)))
		default:
			b.WriteString(m.st.allowed.Render(string(level(float64(r.Allowed) / perStep))))
		}
	}
	return b.String()
}

// rejectedSpark draws the share of each of the last w steps' requests that
// was rejected.
func (m Model) rejectedSpark(rows []sim.TimelineRow, w int) string {
	var b strings.Builder
	b.WriteString(strings.Repeat(" ", max(0, w-len(rows))))
	for _, r := range rows[max(0, len(rows)-w):] {
		share := float64(r.Rejected) / float64(max(r.Sent, 1))
		switch {
		case r.Sent == 0:
			b.WriteString(m.st.dim.Render(string(glyphIdle)))
		case r.Rejected == 0:
			b.WriteString(" ")
		case 2*r.FailedClosed >= r.Rejected:
			g := level(share)
			if m.st.noColor {
				g = glyphFailedClosed
			}
			b.WriteString(m.st.failedClosed.Render(string(g)))
		case m.st.noColor:
			b.WriteRune(shades[min(int(share*3), 2)])
		default:
			b.WriteString(m.st.rejected.Render(string(level(share))))
		}
	}
	return b.String()
}

// level is the block for a fraction of a cell: at least ▁ for anything
// above 0, █ for 1 or more.
func level(f float64) rune {
	return heights[min(max(int(math.Ceil(f*8)), 1), 8)]
}

// rateCell is the client's admissions per second over the last whole
// step, and that as a multiple of the limit's rate.
func (m Model) rateCell(c sim.ClientSnapshot) string {
	stepS := m.sc.Step.Seconds()
	now := m.snap.TS
	for i := len(c.Recent) - 1; i >= 0; i-- {
		r := c.Recent[i]
		end := math.Min(r.TS+stepS, m.sc.Duration.Seconds())
		if end > now+1e-9 {
			continue // the step in progress
		}
		rate := float64(r.Allowed) / (end - r.TS)
		ratio := rate / m.sc.Limit.Params.Rate.PerSecond()
		rs := padLeft(strconv.FormatFloat(ratio, 'f', 1, 64)+"×", 5)
		switch {
		case ratio >= overLimit:
			rs = m.st.over.Render(rs)
		case r.FailedOpen > 0 && 2*r.FailedOpen >= r.Allowed:
			rs = m.st.failedOpen.Render(rs)
		}
		return padLeft(strconv.FormatFloat(rate, 'f', 1, 64), 6) + " " + rs
	}
	return "–"
}

// limitText is the limit as the scenario sets it, with what the algorithm
// reads of it.
func limitText(sc sim.Scenario) string {
	p := sc.Limit.Params
	text := "limit " + p.Rate.String()
	for _, info := range algorithms.Catalog {
		if info.Name != sc.Limit.Algorithm {
			continue
		}
		if slices.Contains(info.Params, "burst") {
			text += fmt.Sprintf(" burst %d", p.Burst)
		}
		if slices.Contains(info.Params, "window") {
			text += " window " + p.Window.String()
		}
	}
	key := string(sc.Limit.Key)
	if key == "" {
		key = string(sim.KeyAuto)
	}
	return text + " per " + key + " key"
}

// compact writes a count in at most 7 cells: 19750, 1.25M, 3.1G.
func compact(n int64) string {
	switch {
	case n < 1_000_000:
		return strconv.FormatInt(n, 10)
	case n < 1_000_000_000:
		return strconv.FormatFloat(float64(n)/1e6, 'f', 2, 64) + "M"
	default:
		return strconv.FormatFloat(float64(n)/1e9, 'f', 2, 64) + "G"
	}
}
