package plots

import (
	"fmt"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ratelim/ratelim/internal/escape"
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

// header is a figure's title block: a bold title, the run's lesson in a
// line (or a few), a subtitle of settings, and a legend, each wrapped in
// as many rows as it needs.
type header struct {
	title, headline, subtitle string
	legend                    []legendEntry
}

var (
	titleStyle    = textStyle(sizeTitle, true, black)
	subtitleStyle = textStyle(sizeSubtitle, false, textGrey)
	legendStyle   = textStyle(sizeNote+0.5, false, black)
	headlineStyle = textStyle(sizeHeadline, false, black)
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
	return vg.Points(thumbW+4) + textWidth(legendStyle, e.label) + vg.Points(14)
}

// height is how tall the header is when drawn width wide.
func (h header) height(width vg.Length) vg.Length {
	var ht vg.Length
	for _, b := range h.blocks() {
		ht += vg.Length(len(wrapText(b.sty, b.text, width))) * lineHeight(b.sty)
	}
	ht += vg.Points(3) + vg.Length(len(h.legendRows(width)))*lineHeight(legendStyle)*1.2
	return ht
}

// textBlock is a run of wrapped text in one style.
type textBlock struct {
	sty  draw.TextStyle
	text string
}

// blocks are the header's texts, top down.
func (h header) blocks() []textBlock {
	out := []textBlock{{titleStyle, h.title}}
	if h.headline != "" {
		out = append(out, textBlock{headlineStyle, h.headline})
	}
	return append(out, textBlock{subtitleStyle, h.subtitle})
}

// draw draws the header from the top of c down.
func (h header) draw(c draw.Canvas) {
	width := c.Max.X - c.Min.X
	y := c.Max.Y
	for _, b := range h.blocks() {
		for _, line := range wrapText(b.sty, b.text, width) {
			y -= lineHeight(b.sty)
			c.FillText(b.sty, vg.Point{X: c.Min.X, Y: y}, line)
		}
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
	lead  string
	names []string
	lines []string
	// late, when set, is a line known only once the plot beside the note
	// is drawn (drawStack draws the plot first): how many outliers the
	// plot had no room to name. The note's height counts a line for it.
	late   *string
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
	for _, line := range s.lines {
		// A long line wraps, its continuation indented, rather than lose
		// its end: the end of "shared by 11 clients on ip 203.0.113.7"
		// is the point.
		for i, part := range wrapText(noteStyle, line, width-vg.Points(6)) {
			if i > 0 {
				part = "  " + part
			}
			out = append(out, part)
		}
	}
	return out
}

// headingLines is the heading wrapped to width, on at most two lines.
func (s sideNote) headingLines(width vg.Length) []string {
	lines := wrapText(headingStyle, s.heading, width)
	if len(lines) > 2 {
		lines = append(lines[:1], strings.Join(lines[1:], " ")) // truncated when drawn
	}
	if len(lines) == 0 {
		lines = []string{""}
	}
	return lines
}

// height is how tall the note is at width.
func (s sideNote) height(width vg.Length) vg.Length {
	lines := len(s.flowed(width))
	if s.late != nil {
		lines++
	}
	h := vg.Length(len(s.headingLines(width)))*lineHeight(headingStyle) + vg.Length(lines)*lineHeight(noteStyle)
	for _, e := range s.legend {
		h += vg.Length(len(legendLines(e.label, width))) * lineHeight(legendStyle)
	}
	return h + vg.Points(4)
}

// draw writes the note from the top of c down, as much as fits.
func (s sideNote) draw(c draw.Canvas) {
	width := c.Max.X - c.Min.X
	y := c.Max.Y - vg.Length(headingStyle.FontExtents().Ascent)
	for i, line := range s.headingLines(width) {
		if i > 0 {
			y -= lineHeight(headingStyle)
		}
		c.FillText(headingStyle, vg.Point{X: c.Min.X, Y: y}, truncate(headingStyle, line, width))
	}
	fits := func(sty draw.TextStyle) bool {
		return y-lineHeight(sty) >= c.Min.Y-vg.Length(sty.FontExtents().Descent)
	}
	lines := s.flowed(width)
	if s.late != nil && *s.late != "" {
		lines = append(lines, wrapText(noteStyle, *s.late, width)...)
	}
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
		for i, line := range legendLines(e.label, width) {
			if !fits(legendStyle) {
				return
			}
			y -= lineHeight(legendStyle)
			line = truncate(legendStyle, line, width-vg.Points(thumbW+4))
			if i == 0 {
				drawEntry(c, c.Min.X, y, legendEntry{label: line, thumb: e.thumb})
				continue
			}
			c.FillText(legendStyle, vg.Point{X: c.Min.X + vg.Points(thumbW+4), Y: y}, line)
		}
	}
}

// legendLines is a side note's legend label wrapped beside its thumbnail,
// on at most two lines.
func legendLines(label string, width vg.Length) []string {
	lines := wrapText(legendStyle, label, width-vg.Points(thumbW+4))
	if len(lines) > 2 {
		lines = append(lines[:1], strings.Join(lines[1:], " ")) // truncated when drawn
	}
	if len(lines) == 0 {
		lines = []string{""}
	}
	return lines
}

// panel is one plot of a stack and the note beside it.
type panel struct {
	plot   *plot.Plot
	height vg.Length // wanted; scaled with the others to fit the figure
	side   sideNote
}

// drawStack draws the panels down dc, each with its side note in a
// column side wide at the right, their data areas aligned on one time
// axis.
//
// plot.Align with draw.Tiles does this alignment for a grid of equal
// tiles; the panels here have different heights (the State panel needs
// room for its legend), so the same two steps are done by hand: measure
// each plot's data area inside its tile, then crop every tile so that all
// data areas start and end at the same x.
func drawStack(dc draw.Canvas, side vg.Length, panels []panel) {
	stack := draw.Crop(dc, 0, -side, 0, 0)
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
		if p.plot == nil {
			continue
		}
		da := p.plot.DataCanvas(tiles[i])
		left = max(left, da.Min.X-tiles[i].Min.X)
		right = max(right, tiles[i].Max.X-da.Max.X)
	}
	for i, p := range panels {
		if p.plot == nil { // a row the other run of a pair has and this one not
			x := stack.Max.X - right
			p.side.draw(draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
				Min: vg.Point{X: x + sideGap, Y: tiles[i].Min.Y},
				Max: vg.Point{X: dc.Max.X, Y: tiles[i].Max.Y},
			}})
			continue
		}
		da := p.plot.DataCanvas(tiles[i])
		tiles[i] = draw.Crop(tiles[i], left-(da.Min.X-tiles[i].Min.X), -(right - (tiles[i].Max.X - da.Max.X)), 0, 0)
		p.plot.Draw(tiles[i])
		da = p.plot.DataCanvas(tiles[i])
		p.side.draw(draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: da.Max.X + sideGap, Y: da.Min.Y},
			Max: vg.Point{X: dc.Max.X, Y: da.Max.Y},
		}})
	}
}

// widthSlack is how much wider than Liberation Sans (whose metrics lay
// out every text here) a text may be drawn. An SVG names its fonts and
// the viewer picks one: where Liberation Sans (or Arial, with the same
// metrics) is missing, DejaVu Sans is the common stand-in, and it is up
// to about 15% wider. Text is fitted as if it were that wide, so it stays
// inside the figure in either.
const widthSlack = 1.16

// textWidth is the width to fit s in: its width in sty, with slack, as
// it is drawn (escaped: see escapedText).
func textWidth(sty draw.TextStyle, s string) vg.Length {
	return sty.Width(escape.Text(s)) * widthSlack
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
		if line != "" && textWidth(sty, try) > width {
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
	if textWidth(sty, s) <= width {
		return s
	}
	r := []rune(s)
	for len(r) > 1 {
		r = r[:len(r)-1]
		if t := string(r) + "…"; textWidth(sty, t) <= width {
			return t
		}
	}
	return "…"
}
