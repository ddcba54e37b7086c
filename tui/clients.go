package tui

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratelim/ratelim/internal/escape"
	"github.com/ratelim/ratelim/sim"
)

// column is one figure of a row, right-aligned.
type column struct {
	head  string
	width int
	value func(series) string
}

// clientTable is the rows' columns sized for a width: the selection mark
// and the name, two strips (admitted, rejected) of one cell per stride of
// steps, then the figures.
type clientTable struct {
	gutter        int // the selection mark, and side by side the run's letter
	nameW, sparkW int
	cols          []column
}

// overLimit is how far over the limit's rate the last step's admissions
// must be for the admit/s column to be marked: clear of the one extra
// request a step boundary lets through, as a doubling (split brain) or
// worse (per-server jars) is.
const overLimit = 1.5

// rows are the table's rows for the view chosen, clients or keys, the
// telling ones first (see telling): the frame's, worked out when it was
// taken.
func (m Model) rows() []series { return m.run.rows }

// withSteps is s with its steps, a key's added up from its clients'.
func (m Model) withSteps(s series) series {
	if s.steps.len() == 0 && len(s.members) > 0 {
		s.steps = sumSteps(s.members, s.key, m.snap, m.hist)
	}
	return s
}

// exercises reports which of the optional figures the scenario can make
// other than zero, or has: a fail-open column only where a store can fail
// and the policy admits, retries only where a client retries.
func (m Model) exercises() (failOpen, failClosed, retries bool) {
	// A split brain that fails over at once, to a primary that keeps
	// taking writes, gives no server an error: each side has a copy.
	topo := m.sc.Topology
	splitErrors := topo.Kind != sim.SplitBrain || topo.FailoverAfter != 0 || topo.PrimaryStopsAfter != sim.PrimaryNeverStops
	storeCanFail := false
	for _, f := range m.sc.Faults {
		if topo.Kind != sim.Local && (f.Kind == sim.Outage || (f.Kind == sim.Partition && splitErrors)) {
			storeCanFail = true
		}
	}
	closed := topo.FailsClosed()
	failOpen, failClosed = storeCanFail && !closed, storeCanFail && closed
	for _, c := range m.sc.Clients {
		retries = retries || (c.Retry.Policy != "" && c.Retry.Policy != sim.RetryNone)
	}
	failOpen = failOpen || m.stats.failedOpen
	failClosed = failClosed || m.stats.failedClosed
	retries = retries || m.stats.retries
	if m.vs != nil {
		// Side by side, a column either run needs.
		o, c, r := m.other().exercises()
		failOpen, failClosed, retries = failOpen || o, failClosed || c, retries || r
	}
	return failOpen, failClosed, retries
}

// shedsOrShadows reports whether the run (or the one beside it) has a
// load shedder, and whether any of its limits is in shadow mode.
func (m Model) shedsOrShadows() (shed, shadow bool) {
	shed = m.sc.Shedder != nil
	shadow = slices.ContainsFunc(m.sc.Limits(), func(l sim.Limit) bool { return l.Shadow })
	if m.vs != nil {
		s, w := m.other().shedsOrShadows()
		shed, shadow = shed || s, shadow || w
	}
	return shed, shadow
}

func (m Model) clientTable(w int, rows []series) clientTable {
	// The widest name and count of every row, not only those shown, so
	// that the columns stay put as the rows scroll.
	longest := max(len("client"), m.info.nameW)
	if m.byKey {
		longest = max(len("client"), m.info.keyW)
	}
	widest := m.widest
	if m.vs != nil {
		widest = max(widest, m.vs.widest)
	}
	t := clientTable{nameW: min(longest, max(8, w/6)), gutter: 2}
	if m.vs != nil {
		t.gutter = 4 // "▸ A "
	}
	numW := max(7, len(compact(widest)))
	num := func(f func(sim.ClientResult) int64) func(series) string {
		return func(s series) string { return compact(f(*s.total)) }
	}
	rate := column{"admit/s ×lim ", 13, m.rateCell}
	if m.verdict != nil {
		rate = column{"peak1s ×exact", 13, m.peakCell}
	}
	t.cols = []column{
		rate,
		{"allowed", numW, num(func(r sim.ClientResult) int64 { return r.Allowed })},
		{"rejected", max(numW, 8), num(func(r sim.ClientResult) int64 { return r.Rejected })},
	}
	// The figures the scenario exercises come first, even at some cost to
	// the strips (retries are retry-storm's lesson); then, where the
	// strips keep their width, what was sent and what one exact limiter
	// would have admitted on the same arrivals (the error of the limiter
	// playing).
	exercised := m.exercisedColumns(numW, num)
	extras := []column{
		{"sent", numW, num(func(r sim.ClientResult) int64 { return r.Sent })},
		{"exact", numW, num(func(r sim.ClientResult) int64 { return r.IdealAllowed })},
	}
	steps := int(math.Ceil(m.sc.Duration.Seconds() / m.sc.Step.Seconds()))
	spark := func(cols []column) int {
		used := t.gutter + t.nameW + 2
		for _, c := range cols {
			used += c.width + 1
		}
		return min((w-used-1)/2, steps, 60)
	}
	for _, x := range exercised {
		if more := append(slices.Clone(t.cols), x); spark(more) >= 10 || spark(more) >= steps {
			t.cols = more
		}
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

// exercisedColumns are the columns of the figures the scenario exercises,
// numW wide, each cell written by num: the fail policies' decisions, the
// retries, a load shedder's 503s (among the rejected: a column of their
// own tells them from the limit's 429s) and what a limit in shadow mode
// would have refused (it refuses nothing; that is its lesson).
func (m Model) exercisedColumns(numW int, num func(func(sim.ClientResult) int64) func(series) string) []column {
	failOpen, failClosed, retries := m.exercises()
	var cols []column
	if failOpen {
		cols = append(cols, column{"fail-open", 9, num(func(r sim.ClientResult) int64 { return r.FailedOpen })})
	}
	if failClosed {
		cols = append(cols, column{"fail-closed", 11, num(func(r sim.ClientResult) int64 { return r.FailedClosed })})
	}
	if retries {
		cols = append(cols, column{"retries", numW, num(func(r sim.ClientResult) int64 { return r.Retries })})
	}
	shed, shadow := m.shedsOrShadows()
	if shed {
		cols = append(cols, column{"shed", numW, num(func(r sim.ClientResult) int64 { return r.Shed })})
	}
	if shadow {
		cols = append(cols, column{"would-rej", 9, num(func(r sim.ClientResult) int64 { return r.WouldReject })})
	}
	return cols
}

// played is the steps the strips draw: those played, with the step in
// progress once it has begun.
func (m Model) played(s series) stepRows {
	rows := s.steps
	if n := rows.len(); n > 1 && rows.at(n-1).TS >= m.snap.TS {
		rows = rows.head(n - 1) // a step just begun has nothing to show yet
	}
	return rows
}

// strideFor is the steps per cell for the run so far in w cells.
func (m Model) strideFor(w int) int { return stride(m.playedSteps(), w) }

// playedSteps is how many steps the strips draw.
func (m Model) playedSteps() int {
	if len(m.snap.Clients) == 0 {
		return 0
	}
	return m.played(series{steps: m.hist.of(0, m.snap)}).len()
}

// cellText is the virtual time one cell of the strips spans: 2s, 0.3s.
func cellText(k int, step time.Duration) string { return secs(time.Duration(k) * step) }

// clientLines are the rows' title, their column heads, a ruler of the
// faults when the scenario has any, then the rows that fit, the selected
// one always among them.
func (m Model) clientLines(l layout) []string {
	rows := m.rows()
	t := m.clientTable(l.width, rows)
	k := m.strideFor(t.sparkW)
	name, what := "CLIENTS", "client"
	if m.byKey {
		name, what = "KEYS", "key"
	}
	detail := limitText(m.sc)
	if t.sparkW > 0 {
		detail += " · a cell is " + cellText(k, m.sc.Step)
	}
	n := len(rows)
	visible := l.clientRows / m.perRow()
	first := m.firstRow(rows, visible)
	if visible < n {
		detail += fmt.Sprintf(" · %d–%d of %d ↑↓", first+1, first+visible, n)
	}
	head := strings.Repeat(" ", t.gutter) + m.st.dim.Render(padRight(what, t.nameW)) + " "
	if t.sparkW > 0 {
		head += m.st.dim.Render(padRight("admitted", t.sparkW) + "  " + padRight("rejected", t.sparkW))
	}
	for _, c := range t.cols {
		head += " " + m.st.dim.Render(padLeft(c.head, c.width))
	}
	lines := []string{m.title(name, detail, l.width), trunc(head, l.width)}
	if l.ruler {
		lines = append(lines, m.ruler(t, k))
	}
	sel := m.selected(rows)
	shown := rows[first:min(n, first+visible)]
	var b Model
	others := map[string]series{}
	if m.vs != nil {
		b = m.other()
		names := map[string]bool{}
		for _, s := range shown {
			names[s.name] = true
		}
		for _, r := range b.rows() {
			if names[r.name] {
				others[r.name] = r
			}
		}
	}
	tagA, tagB := m.tags()
	for i, s := range shown {
		lines = append(lines, m.clientRow(t, m.withSteps(s), k, first+i == sel, tagA, l.width))
		if m.vs != nil {
			o, ok := others[s.name]
			if !ok {
				o = series{name: s.name, total: &sim.ClientResult{}}
			}
			lines = append(lines, b.clientRow(t, b.withSteps(o), k, false, tagB, l.width))
		}
	}
	return lines
}

// ruler marks, under the strips, the cells in which a fault was in force.
func (m Model) ruler(t clientTable, k int) string {
	if t.sparkW == 0 {
		return ""
	}
	stepS := m.sc.Step.Seconds()
	n := m.playedSteps()
	var b strings.Builder
	for c := 0; c*k < n && c < t.sparkW; c++ {
		from, to := float64(c*k)*stepS, float64(min((c+1)*k, n))*stepS
		hit := ""
		for _, f := range m.sc.Faults {
			if f.Start.Seconds() < to && f.End.Seconds() > from {
				hit = string(f.Kind)
			}
		}
		if hit == "" {
			b.WriteString(" ")
		} else {
			b.WriteString(m.st.timeFault.Render("▬"))
		}
	}
	strip := padRight(b.String(), t.sparkW)
	return m.st.dim.Render(padRight("  faults", t.gutter+t.nameW+1)) + strip + "  " + strip
}

// selected is the index of the selected row in rows: the one named
// m.sel, else the first.
func (m Model) selected(rows []series) int {
	for i, s := range rows {
		if s.name == m.sel {
			return i
		}
	}
	return 0
}

// firstRow is the first row shown of n in a window of h rows: the scroll
// position, moved as little as keeps the selected row in view.
func (m Model) firstRow(rows []series, h int) int {
	if h <= 0 {
		return 0
	}
	sel := m.selected(rows)
	first := max(0, min(m.scroll, len(rows)-h))
	switch {
	case sel < first:
		first = sel
	case sel >= first+h:
		first = sel - h + 1
	}
	return first
}

// clientRow is one row's line. Side by side, tag is the run's letter: the
// first run's line names the row, the second's under it only its letter.
func (m Model) clientRow(t clientTable, s series, k int, selected bool, tag string, w int) string {
	mark := "  "
	name := padRight(truncMiddle(escape.Text(s.name), t.nameW), t.nameW)
	if tag == "B" {
		name = strings.Repeat(" ", t.nameW)
	}
	if selected {
		mark = m.st.selected.Render("▸") + " "
		name = m.st.selected.Render(name)
	}
	if tag != "" {
		mark += m.st.bold.Render(tag) + " "
	}
	row := mark + name + " "
	if t.sparkW > 0 {
		cs := cells(m.played(s), k, m.sc.Step.Seconds(), newAllowance(m.sc.Limit))
		row += m.admittedSpark(cs, k, t.sparkW) + "  " + m.rejectedSpark(cs, t.sparkW)
	}
	for _, col := range t.cols {
		row += " " + padLeft(col.value(s), col.width)
	}
	return trunc(row, w)
}

// admittedSpark draws each cell's admissions, the run's start on the
// left: a full cell is the limit's rate over the cell's time. A cell
// over what the limit allows is ▲, one mostly failed open o, in colour
// too, so colour is never the only thing that tells them apart.
func (m Model) admittedSpark(cs []cell, k int, w int) string {
	perStep := m.scaleRate() * m.sc.Step.Seconds()
	var b strings.Builder
	for _, c := range cs[:min(len(cs), w)] {
		full := perStep * float64(c.steps)
		switch {
		case c.Sent == 0:
			b.WriteString(m.st.cells.idle)
		case c.Allowed == 0:
			b.WriteString(" ")
		case 2*c.FailedOpen >= c.Allowed:
			b.WriteString(m.st.cells.failedOpen)
		case c.over:
			b.WriteString(m.st.cells.over)
		default:
			b.WriteString(m.st.cells.levels[levelIndex(float64(c.Allowed)/full)])
		}
	}
	return padRight(b.String(), w)
}

// rejectedSpark draws the share of each cell's requests that was
// rejected, in shades that say it without colour too: ░ under a third,
// ▒, ▓ over two thirds; x where most were failed closed.
func (m Model) rejectedSpark(cs []cell, w int) string {
	var b strings.Builder
	for _, c := range cs[:min(len(cs), w)] {
		share := float64(c.Rejected) / float64(max(c.Sent, 1))
		switch {
		case c.Sent == 0:
			b.WriteString(m.st.cells.idle)
		case c.Rejected == 0:
			b.WriteString(" ")
		case 2*c.FailedClosed >= c.Rejected:
			b.WriteString(m.st.cells.failedClosed)
		default:
			b.WriteString(m.st.cells.shades[min(int(share*3), 2)])
		}
	}
	return padRight(b.String(), w)
}

// levelIndex is the block in heights for a fraction of a cell: at least
// ▁ for anything above 0, █ for 1 or more.
func levelIndex(f float64) int { return min(max(int(math.Ceil(f*8)), 1), 8) }

// rateCell is the row's admissions per second over the last whole step,
// and that as a multiple of the limit's rate.
func (m Model) rateCell(s series) string {
	stepS := m.sc.Step.Seconds()
	now := m.snap.TS
	for i := s.steps.len() - 1; i >= 0; i-- {
		r := s.steps.at(i)
		end := math.Min(r.TS+stepS, m.sc.Duration.Seconds())
		if end > now+1e-9 {
			continue // the step in progress
		}
		rate := float64(r.Allowed) / (end - r.TS)
		ratio := rate / m.sc.Limit.Params.Rate.PerSecond()
		rs := padLeft(strconv.FormatFloat(ratio, 'f', 1, 64)+"×", 5)
		switch {
		case r.FailedOpen > 0 && 2*r.FailedOpen >= r.Allowed:
			rs = m.st.failedOpen.Render(rs)
		case ratio >= overLimit && m.overAt(s, i):
			// Marked only past what the limit allows: the scheduler's
			// 42 at once, which its bucket's burst covers, is 4.2× the
			// rate and not over the limit.
			return padLeft(strconv.FormatFloat(rate, 'f', 1, 64), 6) + " " + m.st.over.Render(rs+string(glyphOver))
		}
		return padLeft(strconv.FormatFloat(rate, 'f', 1, 64), 6) + " " + rs + " "
	}
	return "–"
}

// overAt reports whether step i of the row admitted more than the limit
// allows (see cells).
func (m Model) overAt(s series, i int) bool {
	cs := cells(s.steps.head(i+1), 1, m.sc.Step.Seconds(), newAllowance(m.sc.Limit))
	return cs[i].over
}

// peakCell, once the run is done, is the most the row had admitted in
// any one second, and that against what one exact limiter's worst second
// would have been on the same arrivals: window-boundary's 200 is 2.0×.
func (m Model) peakCell(s series) string {
	peak, ideal := s.total.MaxAllowed1s, s.total.IdealMaxAllowed1s
	if m.byKey {
		peak, ideal = 0, 0
		for _, k := range m.verdict.result.Keys {
			if k.Key == s.key {
				peak, ideal = k.MaxAllowed1s, k.IdealMaxAllowed1s
			}
		}
	}
	if ideal == 0 {
		return padLeft(strconv.FormatInt(peak, 10), 6) + "      "
	}
	ratio := float64(peak) / float64(ideal)
	rs := padLeft(strconv.FormatFloat(ratio, 'f', 1, 64)+"×", 6)
	if ratio >= overLimit {
		rs = m.st.over.Render(rs)
	}
	return padLeft(strconv.FormatInt(peak, 10), 6) + " " + rs
}

// limitText is the limit as the scenario sets it, with what the algorithm
// reads of it.
func limitText(sc sim.Scenario) string {
	p := sc.Limit.Params
	text := "limit " + p.Rate.String()
	if sc.Limit.Reads("burst") {
		text += fmt.Sprintf(" burst %d", p.Burst)
	}
	if sc.Limit.Reads("window") {
		text += " window " + p.Window.String()
	}
	key := string(sc.Limit.Key)
	if key == "" {
		key = string(sim.KeyAuto)
	}
	return text + " per " + key
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
