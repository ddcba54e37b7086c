package tui

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ratelim/ratelim/internal/escape"
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

// keyGroups are the keys whose state the frame carries: those the gauges
// show (gaugeKeys), not every key of the run.
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

// keyCount is how many keys the run has.
func (m Model) keyCount() int { return len(m.info.keys) }

// gaugeGeometry sizes the gauges for every key of the run (the widest
// key's name, every copy), and their figures for the widest the frame
// carries: every key has the same limit.
func (m Model) gaugeGeometry(w int) gaugeGeometry {
	if m.keyCount() == 0 || len(m.info.copies) == 0 {
		return gaugeGeometry{linesPerKey: 1}
	}
	longest, limit := max(len("key"), m.info.keyW), int64(1)
	for _, c := range m.snap.State {
		limit = max(limit, c.Limit, c.Remaining)
	}
	n := len(m.info.copies)
	g := gaugeGeometry{keyW: min(longest, max(8, w/6)), numW: 2*len(strconv.FormatInt(limit, 10)) + 1}
	fits := func(short bool) gaugeGeometry {
		g := g
		g.short = short
		for _, c := range m.info.copies {
			g.labelW = max(g.labelW, len(copyLabel(c, short)))
		}
		room := w - 2*m.perRow() - g.keyW - 1
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
	return escape.Text(name) // a region's store is named by the file
}

// followed are the first n keys in the order the STORE section shows
// them: the selected row's key first, then the keys of rows never
// rejected (the contrast: the scheduler's full bucket beside the
// bastions' empty ones), then the others in the order their rows are
// listed.
func (m Model) followed(rows []series, n int) []string {
	out := make([]string, 0, n)
	seen := map[string]bool{}
	add := func(key string) {
		if len(out) < n && !seen[key] {
			seen[key] = true
			out = append(out, key)
		}
	}
	if len(rows) > 0 {
		add(rows[m.selected(rows)].key)
	}
	for _, r := range rows {
		if len(out) == n {
			return out
		}
		if r.total.Rejected == 0 {
			add(r.key)
		}
	}
	for _, r := range rows {
		if len(out) == n {
			return out
		}
		add(r.key)
	}
	for _, k := range m.info.keys {
		add(k)
	}
	return out
}

// shownKeys is how many keys' gauges the layout has lines for, of how
// many keys: at least one, whose first line is drawn when no whole key
// fits.
func (m Model) shownKeys(l layout, geo gaugeGeometry) (shown, of int) {
	of = m.keyCount()
	return min(of, l.keyLines/(geo.linesPerKey*m.perRow())), of
}

// gaugeKeys are the keys the gauges show, whose state a frame reads: at
// least the first, when the run has keys.
func (m Model) gaugeKeys() []string {
	l := m.plan()
	shown, _ := m.shownKeys(l, m.gaugeGeometry(l.width))
	return m.followed(m.rows(), max(shown, 1))
}

// keysRead reports whether the frame carries the state of every key the
// gauges show.
func (m Model) keysRead() bool {
	for _, k := range m.gaugeKeys() {
		if !slices.Contains(m.loaded, k) {
			return false
		}
	}
	return true
}

// gaugeLines are the gauges' title, then whole keys' gauges in the lines
// the layout gives them, the selected row's key first and marked.
func (m Model) gaugeLines(l layout) []string {
	geo := m.gaugeGeometry(l.width)
	rows := m.rows()
	shown, keys := m.shownKeys(l, geo)
	// The keys to show whose state the frame carries: all of them, but
	// for a frame between a new selection and its state.
	byKey := map[string]keyGroup{}
	for _, g := range m.keyGroups() {
		byKey[g.key] = g
	}
	var groups []keyGroup
	for _, k := range m.followed(rows, max(shown, 1)) {
		if g, ok := byKey[k]; ok {
			groups = append(groups, g)
		}
	}
	detail := "what each copy of the limiter state would still admit now"
	if len(rows) > 0 {
		detail = "following ▸ " + escape.Text(rows[m.selected(rows)].name) + " · what each copy would still admit now"
	}
	if shown < keys {
		detail = fmt.Sprintf("%d of %d keys · ", max(shown, 1), keys) + detail
	}
	lines := []string{m.title("STORE", detail, l.width)}
	var b Model
	bGroups := map[string]keyGroup{}
	bGeo := geo
	if m.vs != nil {
		b = m.other()
		for _, g := range b.keyGroups() {
			bGroups[g.key] = g
		}
		bGeo = b.gaugeGeometry(l.width)
		bGeo.keyW = geo.keyW
	}
	tagA, tagB := m.tags()
	copyLines := func(m Model, geo gaugeGeometry, g keyGroup, mark bool, tag string) {
		for i := 0; i < len(g.copies); i += geo.perLine {
			lines = append(lines, m.gaugeLine(geo, g, g.copies[i:min(len(g.copies), i+geo.perLine)], i == 0, mark, tag, l.width))
		}
	}
	selKey := ""
	if len(rows) > 0 {
		selKey = rows[m.selected(rows)].key
	}
	for gi, g := range groups[:min(shown, len(groups))] {
		copyLines(m, geo, g, gi == 0 && (selKey == "" || g.key == selKey), tagA)
		if bg, ok := bGroups[g.key]; ok {
			copyLines(b, bGeo, bg, false, tagB)
		}
	}
	if shown == 0 && l.keyLines > 0 && len(groups) > 0 {
		// Not one key's gauges fit whole: the first key's first line.
		g := groups[0]
		lines = append(lines, m.gaugeLine(geo, g, g.copies[:min(len(g.copies), geo.perLine)], true, true, tagA, l.width))
	}
	return lines
}

// gaugeLine is one line of a key's gauges, copies, at most width wide:
// the key's name on its first line (blank on the others, and on run B's
// lines beside run A's), marked ▸ when selected, and the tag of the run
// it shows when two are side by side.
func (m Model) gaugeLine(geo gaugeGeometry, g keyGroup, copies []sim.StateNow, first, mark bool, tag string, width int) string {
	name := ""
	if first {
		name = truncMiddle(escape.Text(g.key), geo.keyW)
	}
	cells := make([]string, 0, geo.perLine)
	for _, c := range copies {
		cells = append(cells, m.gauge(c, geo))
	}
	lead := "  "
	name = padRight(name, geo.keyW)
	if tag == "B" {
		name = strings.Repeat(" ", geo.keyW)
	}
	if mark && first {
		lead, name = m.st.selected.Render("▸")+" ", m.st.selected.Render(name)
	}
	if tag != "" {
		if first {
			lead += m.st.bold.Render(tag) + " "
		} else {
			lead += "  "
		}
	}
	return trunc(lead+name+" "+strings.Join(cells, "  "), width)
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
