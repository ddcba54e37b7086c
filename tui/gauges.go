package tui

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/ratelim/ratelim/sim"
)

// gaugeGeometry is how a key's gauges, one per store copy, share a width:
// the key's name, then cells of a label, a bar and remaining/limit, as
// many to a line as fit.
type gaugeGeometry struct {
	keyW, labelW, barW, numW int
	perLine, linesPerKey     int
	short                    bool // labels s0, s1 for server-0, server-1
}

const (
	minBar = 6
	maxBar = 40
)

// keyGroup is one key's copies, in the snapshot's order.
type keyGroup struct {
	key    string
	copies []sim.StateNow
}

func (m Model) keyGroups() []keyGroup {
	var groups []keyGroup
	for _, s := range m.snap.State {
		if n := len(groups); n == 0 || groups[n-1].key != s.Key {
			groups = append(groups, keyGroup{key: s.Key})
		}
		groups[len(groups)-1].copies = append(groups[len(groups)-1].copies, s)
	}
	return groups
}

func (m Model) keyCount() int { return len(m.keyGroups()) }

func (m Model) gaugeGeometry(w int) gaugeGeometry {
	groups := m.keyGroups()
	if len(groups) == 0 {
		return gaugeGeometry{linesPerKey: 1}
	}
	longest, limit := len("key"), int64(1)
	for _, g := range groups {
		longest = max(longest, lipgloss.Width(g.key))
		for _, c := range g.copies {
			limit = max(limit, c.Limit, c.Remaining)
		}
	}
	n := len(groups[0].copies)
	g := gaugeGeometry{keyW: min(longest, max(8, w/6)), numW: 2*len(strconv.FormatInt(limit, 10)) + 1}
	fits := func(short bool) gaugeGeometry {
		g := g
		g.short = short
		for _, c := range groups[0].copies {
			g.labelW = max(g.labelW, len(copyLabel(c.Copy, short)))
		}
		room := w - g.keyW - 1
		g.perLine = min(n, max(1, (room+2)/(g.labelW+minBar+g.numW+2+2)))
		g.barW = min(maxBar, (room-2*(g.perLine-1))/g.perLine-g.labelW-g.numW-2)
		g.linesPerKey = (n + g.perLine - 1) / g.perLine
		return g
	}
	full := fits(false)
	if short := fits(true); short.linesPerKey < full.linesPerKey {
		return short
	}
	return full
}

// copyLabel names a store copy: shared, primary, replica, server-0 (s0
// when short).
func copyLabel(name string, short bool) string {
	if short {
		if n, ok := strings.CutPrefix(name, "server-"); ok {
			return "s" + n
		}
	}
	return name
}

// gaugeLines are the gauges' title, then whole keys' gauges in the lines
// the layout gives them.
func (m Model) gaugeLines(l layout) []string {
	geo := m.gaugeGeometry(l.width)
	groups := m.keyGroups()
	shown := min(len(groups), l.keyLines/geo.linesPerKey)
	detail := "what each copy of the limiter state would still admit now"
	if shown < len(groups) {
		detail = fmt.Sprintf("%d of %d keys · ", shown, len(groups)) + detail
	}
	lines := []string{m.title("STORE", detail, l.width)}
	for _, g := range groups[:shown] {
		for i := 0; i < len(g.copies); i += geo.perLine {
			name := ""
			if i == 0 {
				name = truncMiddle(g.key, geo.keyW)
			}
			cells := make([]string, 0, geo.perLine)
			for _, c := range g.copies[i:min(len(g.copies), i+geo.perLine)] {
				cells = append(cells, m.gauge(c, geo))
			}
			lines = append(lines, trunc(padRight(name, geo.keyW)+" "+strings.Join(cells, "  "), l.width))
		}
	}
	if shown == 0 && l.keyLines > 0 && len(groups) > 0 {
		// Not one key's gauges fit whole: the first key's first line.
		g := groups[0]
		cells := []string{}
		for _, c := range g.copies[:min(len(g.copies), geo.perLine)] {
			cells = append(cells, m.gauge(c, geo))
		}
		lines = append(lines, trunc(padRight(truncMiddle(g.key, geo.keyW), geo.keyW)+" "+strings.Join(cells, "  "), l.width))
	}
	return lines
}

// gauge is one copy's cell: its label, a bar of remaining ÷ limit and the
// figures.
func (m Model) gauge(c sim.StateNow, geo gaugeGeometry) string {
	label := padRight(copyLabel(c.Copy, geo.short), geo.labelW)
	if c.Remaining < 0 {
		return label + " " + padRight(m.st.errText.Render("unreadable"), geo.barW+1+geo.numW)
	}
	frac := 0.0
	if c.Limit > 0 {
		frac = math.Min(float64(c.Remaining)/float64(c.Limit), 1)
	}
	filled := int(math.Round(frac * float64(geo.barW)))
	if c.Remaining > 0 {
		filled = max(filled, 1)
	}
	style := m.st.gaugeFull
	switch {
	case c.Remaining == 0:
		style = m.st.gaugeNo
	case frac <= 0.25:
		style = m.st.gaugeLow
	}
	bar := style.Render(strings.Repeat(string(glyphGaugeFull), filled)) +
		m.st.gaugeEmpty.Render(strings.Repeat(string(glyphGaugeEmpty), geo.barW-filled))
	return label + " " + bar + " " + padLeft(fmt.Sprintf("%d/%d", c.Remaining, c.Limit), geo.numW)
}
