package plots

import (
	"fmt"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// A figure here is a title block over a stack of panels that share the
// time axis, each with a side note to its right: the panel's name, its
// totals, its legend. Legends live in the title block or beside a panel,
// never on the data.

const (
	margin   = 0.15 * vg.Inch // around the figure
	panelGap = 0.07 * vg.Inch // between stacked panels
	sideGap  = 0.15 * vg.Inch // between a panel's data and its side note
	thumbW   = 20             // points: a legend thumbnail's width
)

// sideWidth is the width of the column of side notes.
func sideWidth(figure vg.Length) vg.Length {
	return max(1.6*vg.Inch, min(2.5*vg.Inch, 0.23*figure))
}

// noteWidth is about how wide the text of a side note can be: the column
// less the gap before it.
func noteWidth(figure vg.Length) vg.Length { return sideWidth(figure) - sideGap }

// legendEntry is one item of a legend: a thumbnail and what it means.
type legendEntry struct {
	label string
	thumb plot.Thumbnailer
}

// header is a figure's title block: a bold title, a subtitle of settings,
// and a legend laid out in as many rows as it needs.
type header struct {
	title, subtitle string
	legend          []legendEntry
}

var (
	titleStyle    = textStyle(sizeTitle, true, black)
	subtitleStyle = textStyle(sizeSubtitle, false, textGrey)
	legendStyle   = textStyle(sizeNote+0.5, false, black)
	headingStyle  = textStyle(sizeLabel, true, black)
	noteStyle     = textStyle(sizeNote, false, textGrey)
)

// lineHeight is the distance between the baselines of two lines of sty.
func lineHeight(sty draw.TextStyle) vg.Length {
	return vg.Length(sty.FontExtents().Height) * 1.15
}

// legendRows splits the legend into rows no wider than width.
func (h header) legendRows(width vg.Length) [][]legendEntry {
	var rows [][]legendEntry
	var row []legendEntry
	x := vg.Length(0)
	for _, e := range h.legend {
		w := entryWidth(e)
		if len(row) > 0 && x+w > width {
			rows = append(rows, row)
			row, x = nil, 0
		}
		row = append(row, e)
		x += w
	}
	if len(row) > 0 {
		rows = append(rows, row)
	}
	return rows
}

func entryWidth(e legendEntry) vg.Length {
	return vg.Points(thumbW+4) + legendStyle.Width(e.label) + vg.Points(14)
}

// height is how tall the header is when drawn width wide.
func (h header) height(width vg.Length) vg.Length {
	ht := lineHeight(titleStyle)
	for range wrapText(subtitleStyle, h.subtitle, width) {
		ht += lineHeight(subtitleStyle)
	}
	ht += vg.Points(3) + vg.Length(len(h.legendRows(width)))*lineHeight(legendStyle)*1.2
	return ht
}

// draw draws the header from the top of c down.
func (h header) draw(c draw.Canvas) {
	width := c.Max.X - c.Min.X
	y := c.Max.Y - lineHeight(titleStyle)
	c.FillText(titleStyle, vg.Point{X: c.Min.X, Y: y}, truncate(titleStyle, h.title, width))
	for _, line := range wrapText(subtitleStyle, h.subtitle, width) {
		y -= lineHeight(subtitleStyle)
		c.FillText(subtitleStyle, vg.Point{X: c.Min.X, Y: y}, line)
	}
	y -= vg.Points(3)
	for _, row := range h.legendRows(width) {
		y -= lineHeight(legendStyle) * 1.2
		x := c.Min.X
		for _, e := range row {
			drawEntry(c, x, y, e)
			x += entryWidth(e)
		}
	}
}

// drawEntry draws a legend entry with its text's baseline at y.
func drawEntry(c draw.Canvas, x, y vg.Length, e legendEntry) {
	ext := legendStyle.FontExtents()
	thumb := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
		Min: vg.Point{X: x, Y: y - vg.Length(ext.Descent)/2},
		Max: vg.Point{X: x + vg.Points(thumbW), Y: y + vg.Length(ext.Ascent)*0.9},
	}}
	e.thumb.Thumbnail(&thumb)
	c.FillText(legendStyle, vg.Point{X: x + vg.Points(thumbW+4), Y: y}, e.label)
}

// sideNote is what is written beside a panel.
type sideNote struct {
	heading string
	// names are flowed under the heading, comma-separated, after lead
	// ("2 clients:"): the clients of a key, or those folded into "others".
	lead   string
	names  []string
	lines  []string
	legend []legendEntry
}

// maxNameLines is the most lines of names a side note flows; past it the
// rest are counted ("and 12 more").
const maxNameLines = 6

// flowed returns the note's lines of text: the names, then the lines.
func (s sideNote) flowed(width vg.Length) []string {
	var out []string
	if len(s.names) > 0 {
		wrap := func(n int) []string {
			txt := s.lead + " " + strings.Join(s.names[:n], ", ")
			if n < len(s.names) {
				txt += fmt.Sprintf(" and %d more", len(s.names)-n)
			}
			return wrapText(noteStyle, strings.TrimSpace(txt), width)
		}
		out = wrap(len(s.names))
		if len(out) > maxNameLines {
			// The most names that fit, with the count of the rest.
			n := sort.Search(len(s.names), func(n int) bool { return len(wrap(n+1)) > maxNameLines })
			out = wrap(n)
		}
	}
	return append(out, s.lines...)
}

// height is how tall the note is at width.
func (s sideNote) height(width vg.Length) vg.Length {
	h := lineHeight(headingStyle) + vg.Length(len(s.flowed(width)))*lineHeight(noteStyle)
	h += vg.Length(len(s.legend)) * lineHeight(legendStyle)
	return h + vg.Points(4)
}

// draw writes the note from the top of c down, as much as fits.
func (s sideNote) draw(c draw.Canvas) {
	width := c.Max.X - c.Min.X
	y := c.Max.Y - vg.Length(headingStyle.FontExtents().Ascent)
	c.FillText(headingStyle, vg.Point{X: c.Min.X, Y: y}, truncate(headingStyle, s.heading, width))
	fits := func(sty draw.TextStyle) bool {
		return y-lineHeight(sty) >= c.Min.Y-vg.Length(sty.FontExtents().Descent)
	}
	lines := s.flowed(width)
	for i, line := range lines {
		if !fits(noteStyle) {
			break
		}
		y -= lineHeight(noteStyle)
		if i+1 < len(lines) && !fits(noteStyle) {
			line += " …" // the last line that fits, and there is more
		}
		c.FillText(noteStyle, vg.Point{X: c.Min.X, Y: y}, truncate(noteStyle, line, width))
	}
	for _, e := range s.legend {
		if !fits(legendStyle) {
			break
		}
		y -= lineHeight(legendStyle)
		e.label = truncate(legendStyle, e.label, width-vg.Points(thumbW+4))
		drawEntry(c, c.Min.X, y, e)
	}
}

// panel is one plot of a stack and the note beside it.
type panel struct {
	plot   *plot.Plot
	height vg.Length // wanted; scaled with the others to fit the figure
	side   sideNote
}

// drawStack draws h at the top of dc and the panels under it, their data
// areas aligned on one time axis.
//
// plot.Align with draw.Tiles does this alignment for a grid of equal
// tiles; the panels here have different heights (the State panel needs
// room for its legend), so the same two steps are done by hand: measure
// each plot's data area inside its tile, then crop every tile so that all
// data areas start and end at the same x.
func drawStack(dc draw.Canvas, h header, panels []panel) {
	inner := draw.Crop(dc, margin, -margin, margin, -margin)
	width := inner.Max.X - inner.Min.X
	side := sideWidth(dc.Max.X - dc.Min.X)
	hh := h.height(width)
	h.draw(inner)

	stack := draw.Crop(inner, 0, -side, 0, -(hh + panelGap))
	var want vg.Length
	for _, p := range panels {
		want += p.height
	}
	room := stack.Max.Y - stack.Min.Y - vg.Length(len(panels)-1)*panelGap
	if room <= 0 || want <= 0 {
		return
	}
	scale := room / want
	tiles := make([]draw.Canvas, len(panels))
	y := stack.Max.Y
	for i, p := range panels {
		ph := p.height * scale
		tiles[i] = draw.Canvas{Canvas: stack.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: stack.Min.X, Y: y - ph},
			Max: vg.Point{X: stack.Max.X, Y: y},
		}}
		y -= ph + panelGap
	}

	var left, right vg.Length
	for i, p := range panels {
		da := p.plot.DataCanvas(tiles[i])
		left = max(left, da.Min.X-tiles[i].Min.X)
		right = max(right, tiles[i].Max.X-da.Max.X)
	}
	for i, p := range panels {
		da := p.plot.DataCanvas(tiles[i])
		tiles[i] = draw.Crop(tiles[i], left-(da.Min.X-tiles[i].Min.X), -(right - (tiles[i].Max.X - da.Max.X)), 0, 0)
		p.plot.Draw(tiles[i])
		da = p.plot.DataCanvas(tiles[i])
		p.side.draw(draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: da.Max.X + sideGap, Y: da.Min.Y},
			Max: vg.Point{X: inner.Max.X, Y: da.Max.Y},
		}})
	}
}

// wrapText breaks s into lines no wider than width, at spaces.
func wrapText(sty draw.TextStyle, s string, width vg.Length) []string {
	words := strings.Fields(s)
	var lines []string
	line := ""
	for _, w := range words {
		try := w
		if line != "" {
			try = line + " " + w
		}
		if line != "" && sty.Width(try) > width {
			lines = append(lines, line)
			line = w
			continue
		}
		line = try
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// truncate shortens s with an ellipsis until it fits width.
func truncate(sty draw.TextStyle, s string, width vg.Length) string {
	if sty.Width(s) <= width {
		return s
	}
	r := []rune(s)
	for len(r) > 1 {
		r = r[:len(r)-1]
		if t := string(r) + "…"; sty.Width(t) <= width {
			return t
		}
	}
	return "…"
}
