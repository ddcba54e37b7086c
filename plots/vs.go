package plots

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ratelim/ratelim/sim"
)

// TimelineVs draws two runs of one scenario side by side, as `ratelim sim
// --vs FIELD=VALUE` makes them: a in the left column and b in the right,
// each titled by its label ("on-error=fail-open", "on-error=fail-closed")
// and its lesson (sim.Headline). Row by row the columns show the same
// client (or key) on one shared y axis, so that a difference in height
// is a difference in what happened: with a store outage, the fail-open
// column admits everything in the outage and the fail-closed one refuses
// even the client that was well under its limit.
//
// Each column is drawn as Timeline draws one run. Clients are put in one
// panel only where they are alike in both runs, so the rows stay paired;
// a client one run has and the other has not gets an empty place that
// says so. The default size is 14 inches wide and as tall as the rows
// need.
func TimelineVs(w io.Writer, a, b *sim.Result, labelA, labelB string, opts Options) error {
	if a == nil || b == nil {
		return errors.New("plots: no result to draw")
	}
	format, err := opts.format()
	if err != nil {
		return err
	}
	by, err := opts.by()
	if err != nil {
		return err
	}
	da, err := newTimelineData(a, by)
	if err != nil {
		return err
	}
	db, err := newTimelineData(b, by)
	if err != nil {
		return err
	}
	da.focus, db.focus = opts.Focus, opts.Focus
	for _, d := range []*timelineData{da, db} {
		if d.axis, err = axisFor(d.r, opts); err != nil {
			return err
		}
	}
	pairSignatures(da, db)
	if err := opts.checkSize(); err != nil {
		return err
	}
	width := opts.Width
	if width == 0 {
		width = 14 * vg.Inch
	}
	colW := (width - 2*margin - colGap) / 2
	if colW < 3*vg.Inch {
		return fmt.Errorf("plots: a figure %.1fin wide has no room for two columns (want at least %.1fin)", width/vg.Inch, (2*3*vg.Inch+2*margin+colGap)/vg.Inch)
	}

	rows := pairRows(da, db)
	axA, axB := rowAxes(da, rows), rowAxes(db, rows)
	shared := axes{log: axA.log || axB.log, stateMax: maxEach(axA.stateMax, axB.stateMax), latencyMax: math.Max(axA.latencyMax, axB.latencyMax)}
	for i := range rows {
		shared.tops = append(shared.tops, math.Max(axA.tops[i], axB.tops[i]))
	}
	usedA, usedB := map[string]bool{}, map[string]bool{}
	faults := len(a.Faults) > 0 || len(b.Faults) > 0
	pa := columnPanels(da, rows, shared, faults, colW, usedA)
	pb := columnPanels(db, rows, shared, faults, colW, usedB)
	for i := range pa { // a row is as tall as the taller of its pair
		pa[i].height = max(pa[i].height, pb[i].height)
		pb[i].height = pa[i].height
	}

	h := header{
		title:    fmt.Sprintf("%s · %s vs %s", or(a.Scenario, "unnamed scenario"), labelA, labelB),
		subtitle: commonParts(runTitle(a)+" · "+subtitle(da, shared.log), runTitle(b)+" · "+subtitle(db, shared.log)) + " · left and right share each row's y axis",
		legend:   pairLegend(da, db, usedA, usedB, labelA, labelB),
	}
	if c := opts.Caption; c != nil {
		// One caption for two runs: its limit is said only when both
		// limits are the same, the labels saying how they differ.
		ca, cb := *c, *c
		if limitPart(da) != limitPart(db) {
			ca.Limit, cb.Limit = limitText(da), limitText(db)
		}
		h.subtitle = commonParts(captionTitle(da, &ca)+" · "+captionSubtitle(da, &ca, shared.log), captionTitle(db, &cb)+" · "+captionSubtitle(db, &cb, shared.log)) + " · left and right share each row's y axis"
	}
	ca := header{title: "left: " + labelA, headline: sim.Headline(a)}
	cb := header{title: "right: " + labelB, headline: sim.Headline(b)}
	colHead := max(ca.columnHeight(colW), cb.columnHeight(colW))

	fixed := 2*margin + h.height(width-2*margin) + panelGap + colHead + panelGap
	height, err := figureHeight(opts.Height, fixed, pa, "rows")
	if err != nil {
		return err
	}
	return renderFigure(w, format, width, height, h, func(body draw.Canvas) {
		left := draw.Crop(body, 0, -(colW + colGap), 0, 0)
		right := draw.Crop(body, colW+colGap, 0, 0, 0)
		// A rule between the columns: two runs, not one wide one.
		mid := body.Min.X + colW + colGap/2
		body.StrokeLine2(draw.LineStyle{Color: gridGrey, Width: vg.Points(1)}, mid, body.Min.Y, mid, body.Max.Y)
		for _, col := range []struct {
			c      draw.Canvas
			head   header
			panels []panel
		}{{left, ca, pa}, {right, cb, pb}} {
			col.head.drawColumn(col.c)
			drawStack(draw.Crop(col.c, 0, 0, 0, -(colHead+panelGap)), sideWidth(colW), col.panels)
		}
	})
}

// commonParts keeps the " · "-separated parts of a that b has too: the
// settings the two runs share, leaving out those the labels say differ.
func commonParts(a, b string) string {
	inB := map[string]bool{}
	for _, p := range strings.Split(b, " · ") {
		inB[p] = true
	}
	var out []string
	for _, p := range strings.Split(a, " · ") {
		if inB[p] {
			out = append(out, p)
		}
	}
	return strings.Join(out, " · ")
}

// colGap is the room between the two columns of TimelineVs.
const colGap = 0.3 * vg.Inch

// columnTitleStyle is a column's label in TimelineVs.
var columnTitleStyle = textStyle(sizeTitle-1, true, black)

// columnHeight is how tall a column's heading is at width: its label and
// its headline, wrapped.
func (h header) columnHeight(width vg.Length) vg.Length {
	n := len(wrapText(columnTitleStyle, h.title, width))
	ht := vg.Length(n) * lineHeight(columnTitleStyle)
	return ht + vg.Length(len(wrapText(headlineStyle, h.headline, width)))*lineHeight(headlineStyle)
}

// drawColumn draws a column's heading from the top of c down.
func (h header) drawColumn(c draw.Canvas) {
	width := c.Max.X - c.Min.X
	y := c.Max.Y
	for _, b := range []textBlock{{columnTitleStyle, h.title}, {headlineStyle, h.headline}} {
		for _, line := range wrapText(b.sty, b.text, width) {
			y -= lineHeight(b.sty)
			c.FillText(b.sty, vg.Point{X: c.Min.X, Y: y}, line)
		}
	}
}

// pairSignatures arranges the panels of two runs so that clients share a
// panel only if they are alike in both: otherwise eight bastions alike in
// one run and not in the other would make rows that do not pair.
func pairSignatures(da, db *timelineData) {
	sa, sb := da.signatures(), db.signatures()
	of := func(d *timelineData, sigs []string) map[string]string {
		m := make(map[string]string, len(d.all))
		for i, t := range d.all {
			m[t.name] = sigs[i]
		}
		return m
	}
	ma, mb := of(da, sa), of(db, sb)
	both := func(d *timelineData) []string {
		out := make([]string, len(d.all))
		for i, t := range d.all {
			ia, okA := ma[t.name]
			ib, okB := mb[t.name]
			if !okA || !okB {
				ia = "only " + t.name // in one run only: alike with nothing
			}
			out[i] = ia + "\x00" + ib
		}
		return out
	}
	da.arrange(both(da))
	db.arrange(both(db))
}

// pairRows are the names of the traffic rows of two runs: a's panels in
// order, then any only b has.
func pairRows(da, db *timelineData) []string {
	var rows []string
	seen := map[string]bool{}
	for _, d := range []*timelineData{da, db} {
		for _, t := range d.panels {
			if !seen[t.name] {
				seen[t.name] = true
				rows = append(rows, t.name)
			}
		}
	}
	return rows
}

// panelNamed returns d's traffic panel called name.
func panelNamed(d *timelineData, name string) (traffic, bool) {
	for _, t := range d.panels {
		if t.name == name {
			return t, true
		}
	}
	return traffic{}, false
}

// rowAxes are d's y ranges with one top per row of rows.
func rowAxes(d *timelineData, rows []string) axes {
	ax := newAxes(d)
	ax.tops = make([]float64, len(rows))
	for i, name := range rows {
		if t, ok := panelNamed(d, name); ok {
			ax.tops[i] = panelTop(d, t)
		}
	}
	return ax
}

// columnPanels builds one column of TimelineVs: the panels of d in the
// order of rows, on the shared ranges of ax.
func columnPanels(d *timelineData, rows []string, ax axes, faults bool, width vg.Length, used map[string]bool) []panel {
	var panels []panel
	if faults {
		if len(d.spans) > 0 {
			panels = append(panels, faultsPanel(d, width))
		} else {
			panels = append(panels, panel{height: 0.36 * vg.Inch, side: sideNote{heading: "Faults", lines: []string{"none in this run"}}})
		}
	}
	tall := 1.1 * vg.Inch
	switch {
	case len(rows) <= 3:
		tall = 1.7 * vg.Inch
	case len(rows) <= 6:
		tall = 1.35 * vg.Inch
	}
	for i, name := range rows {
		t, ok := panelNamed(d, name)
		if !ok {
			panels = append(panels, panel{height: tall, side: sideNote{heading: name, lines: []string{"not in this run"}}})
			continue
		}
		p := trafficPlot(d, t, ax.tops[i], ax.log, used)
		heading := t.name
		if d.by == "key" && !t.folded && t.count <= 1 {
			heading = "key " + t.name
		}
		note := sideNote{heading: heading, lead: t.lead, names: t.members, lines: t.notes}
		panels = append(panels, panel{plot: p, height: max(tall, note.height(noteWidth(width))+0.2*vg.Inch), side: note})
	}
	for i, v := range stateViews(d.r) {
		if i >= len(ax.stateMax) {
			break
		}
		if s := newStateData(v.r, d.stepS); s != nil {
			panels = append(panels, statePanel(d, s, v, ax.stateMax[i], width))
		} else {
			panels = append(panels, panel{height: 1.5 * vg.Inch, side: sideNote{heading: "State", lines: []string{"not recorded in this run"}}})
		}
	}
	if ax.latencyMax > 0 {
		if l := newLatencyData(d, true); l != nil {
			panels = append(panels, latencyPanel(d, l, ax.latencyMax))
		} else {
			panels = append(panels, panel{height: 1.5 * vg.Inch, side: sideNote{heading: "Latency", lines: []string{"nothing waited in this run"}}})
		}
	}
	// Only the bottom panel labels the time axis; a placeholder has none.
	for i := len(panels) - 1; i >= 0; i-- {
		if p := panels[i].plot; p != nil {
			p.X.Tick.Marker = d.axis.ticks
			p.X.Label.Text = d.axis.label
			break
		}
	}
	panels[len(panels)-1].height += 0.4 * vg.Inch
	return panels
}

// pairLegend is the legend of two runs: each series drawn in either,
// once where it means the same on both sides, and once per side where it
// does not (the limit of a token bucket and of a sliding log).
func pairLegend(da, db *timelineData, usedA, usedB map[string]bool, labelA, labelB string) []legendEntry {
	var out []legendEntry
	for _, name := range trafficOrder {
		la, lb := seriesLabel(da, name), seriesLabel(db, name)
		switch {
		case usedA[name] && usedB[name] && la == lb, usedA[name] && !usedB[name]:
			out = append(out, legendEntry{label: la, thumb: trafficThumb(name)})
		case !usedA[name] && usedB[name]:
			out = append(out, legendEntry{label: lb, thumb: trafficThumb(name)})
		case usedA[name] && usedB[name]:
			out = append(out,
				legendEntry{label: labelA + ": " + la, thumb: trafficThumb(name)},
				legendEntry{label: labelB + ": " + lb, thumb: trafficThumb(name)})
		}
	}
	return out
}

// maxEach is the larger of a[i] and b[i] for each i, as long as the longer.
func maxEach(a, b []float64) []float64 {
	if len(a) < len(b) {
		a, b = b, a
	}
	out := slices.Clone(a)
	for i, v := range b {
		out[i] = math.Max(out[i], v)
	}
	return out
}
