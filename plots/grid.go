package plots

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Cell is one run of `ratelim compare`: an algorithm on a topology, and
// what it admitted as a multiple of what it should have — the configured
// limit, or what one exact limiter admits on the same arrivals; the
// caller's title says which. 1 is exact, 2 is twice as much.
type Cell struct {
	Algorithm, Topology string
	AdmittedRatio       float64
	// Why, when set, says in a sentence why the cell is what it is (the
	// run's sim.Headline). The grid numbers each distinct sentence, marks
	// the cells it explains with its number, and lists them under the
	// grid, so that a hot column comes with its reason.
	Why string
}

// CompareGrid draws cells as a heat map: one row per algorithm and one
// column per topology, in the order each is first seen in cells, every
// cell coloured by its admitted ÷ limit and labelled with it ("2.00×").
//
// The colour scale is the same for every grid, so that a ratio has one
// colour whichever scenario it came from: logarithmic, from 0.25× (blue)
// through 1× (white, exact) to 4× (vermillion), through yellow and
// orange, hotter the more was admitted, and saturating beyond either end.
// A cell that is missing, or NaN, is grey and says so. Cells with a Why
// carry a footnote number; the notes are listed under the grid.
func CompareGrid(w io.Writer, title string, cells []Cell, opts Options) error {
	format, err := opts.format()
	if err != nil {
		return err
	}
	if len(cells) == 0 {
		return errors.New("plots: no cells to draw")
	}
	g, err := newGrid(cells)
	if err != nil {
		return err
	}
	if err := opts.checkSize(); err != nil {
		return err
	}
	h := header{title: title, subtitle: "each cell: what was admitted ÷ what one exact limiter admits on the same arrivals · one colour scale for every grid: white is exact, hotter admitted more, blue less"}
	if h.title == "" {
		h.title = "admitted ÷ limit, by algorithm and topology"
	}
	width, height := opts.Width, opts.Height
	if width == 0 {
		width = max(6*vg.Inch, 2*margin+g.rowLabelWidth()+0.5*vg.Inch+vg.Length(len(g.cols))*1.25*vg.Inch+barRoom)
	}
	if height == 0 {
		height = max(3.5*vg.Inch, 2*margin+h.height(width-2*margin)+vg.Length(len(g.rows))*0.5*vg.Inch+0.75*vg.Inch+g.notesHeight(width-2*margin))
	}
	return render(w, format, width, height, func(dc draw.Canvas) { g.draw(dc, h) })
}

// barRoom is the width the colour scale takes at the right.
const barRoom = 1.1 * vg.Inch

// scaleSpan is how far the colour scale reaches either side of 1×, in
// powers of two: 2^-2 = 0.25× to 2^2 = 4×. Fixed, not fitted to the data:
// a grid's colours must mean the same in every scenario, or a mild
// excess in one looks as alarming as jars per server in another.
const scaleSpan = 2

// grid is cells arranged by row (algorithm) and column (topology).
type grid struct {
	rows, cols []string
	v          [][]float64 // v[row][col]; NaN where no cell was given
	given      [][]bool
	note       [][]int  // the footnote of each cell, 1-based; 0 for none
	notes      []string // the distinct Why texts, in order of first use

	// rowTitle and colTitle are the axes' titles: what the rows and the
	// columns are values of.
	rowTitle, colTitle string
	// scale colours and labels the cells and draws the colour bar.
	scale heatScale
	// blankNaN leaves a cell with no value (NaN) unfilled, outlined in
	// grid grey and hatched faintly (so that it is not read as the scale's
	// palest colour), rather than grey and labelled "n/a": in a sweep it
	// is a figure the run has not got, not a failure.
	blankNaN bool
	// currentRow and currentCol, when both are 0 or more, is the cell
	// outlined as the scenario as given (the file and its flags).
	currentRow, currentCol int
}

func newGrid(cells []Cell) (*grid, error) {
	g := &grid{rowTitle: "algorithm", colTitle: "topology", scale: ratioScale{}, currentRow: -1, currentCol: -1}
	ri, ci := map[string]int{}, map[string]int{}
	for _, c := range cells {
		if _, ok := ri[c.Algorithm]; !ok {
			ri[c.Algorithm] = len(g.rows)
			g.rows = append(g.rows, c.Algorithm)
		}
		if _, ok := ci[c.Topology]; !ok {
			ci[c.Topology] = len(g.cols)
			g.cols = append(g.cols, c.Topology)
		}
	}
	g.v = make([][]float64, len(g.rows))
	g.given = make([][]bool, len(g.rows))
	g.note = make([][]int, len(g.rows))
	for r := range g.v {
		g.v[r] = make([]float64, len(g.cols))
		g.given[r] = make([]bool, len(g.cols))
		g.note[r] = make([]int, len(g.cols))
		for c := range g.v[r] {
			g.v[r][c] = math.NaN()
		}
	}
	for _, c := range cells {
		r, col := ri[c.Algorithm], ci[c.Topology]
		if g.given[r][col] {
			return nil, fmt.Errorf("plots: two cells for %s on %s", c.Algorithm, c.Topology)
		}
		g.given[r][col] = true
		g.v[r][col] = c.AdmittedRatio
	}
	// Footnotes are numbered reading the grid row by row, as a reader
	// meets the marks; one sentence explaining many cells is one note.
	why := map[[2]int]string{}
	for _, c := range cells {
		why[[2]int{ri[c.Algorithm], ci[c.Topology]}] = strings.TrimSpace(c.Why)
	}
	seen := map[string]int{}
	for r := range g.rows {
		for col := range g.cols {
			text := why[[2]int{r, col}]
			if text == "" {
				continue
			}
			if seen[text] == 0 {
				g.notes = append(g.notes, text)
				seen[text] = len(g.notes)
			}
			g.note[r][col] = seen[text]
		}
	}
	return g, nil
}

// shade is where v falls on the colour scale, -1 (0.25× or less) to 1
// (4× or more); NaN for a value with no place on it.
func shade(v float64) float64 {
	switch {
	case math.IsNaN(v) || v < 0:
		return math.NaN()
	case v == 0:
		return -1
	}
	return math.Max(-1, math.Min(1, math.Log2(v)/scaleSpan))
}

// heatStops are the colours of the warm half of the scale: near-white at
// 1×, Okabe–Ito yellow, orange and vermillion at 4×. Four stops rather
// than a straight blend to vermillion, so that 1.25× and 1.4× differ at a
// glance; all stay distinct for the common colour blindnesses.
var heatStops = []struct {
	at float64
	c  color.NRGBA
}{{0, paleWhite}, {0.3, yellow}, {0.65, orange}, {1, vermillion}}

// heat is the colour at t in [-1, 1]: Okabe–Ito blue at -1, near-white at
// 0, through yellow and orange to vermillion at 1.
func heat(t float64) color.Color {
	if math.IsNaN(t) {
		return gridGrey
	}
	lerp := func(a, b color.NRGBA, f float64) color.Color {
		l := func(x, y uint8) uint8 { return uint8(math.Round(float64(x) + (float64(y)-float64(x))*f)) }
		return color.NRGBA{l(a.R, b.R), l(a.G, b.G), l(a.B, b.B), 0xff}
	}
	if t < 0 {
		return lerp(paleWhite, blue, -t)
	}
	for i := 1; i < len(heatStops); i++ {
		if a, b := heatStops[i-1], heatStops[i]; t <= b.at {
			return lerp(a.c, b.c, (t-a.at)/(b.at-a.at))
		}
	}
	return vermillion
}

// inkOn returns black or white, whichever reads better on c.
func inkOn(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	if 0.2126*float64(r)+0.7152*float64(g)+0.0722*float64(b) < 0.45*0xffff {
		return color.White
	}
	return black
}

func ratioLabel(v float64) string {
	switch {
	case math.IsNaN(v) || v < 0:
		return "n/a"
	case math.IsInf(v, 1):
		return "∞"
	}
	return strconv.FormatFloat(v, 'f', 2, 64) + "×"
}

// rowLabelWidth is the width of the widest algorithm name.
func (g *grid) rowLabelWidth() vg.Length {
	var w vg.Length
	for _, a := range g.rows {
		w = max(w, textWidth(textStyle(sizeLabel, false, black), a))
	}
	return w
}

var footStyle = textStyle(sizeNote+0.5, false, textGrey)

// noteLines are the footnotes, numbered and wrapped to width, each
// continuation indented under its text.
func (g *grid) noteLines(width vg.Length) []string {
	var out []string
	for i, n := range g.notes {
		mark := strconv.Itoa(i+1) + "  "
		for j, line := range wrapText(footStyle, n, width-textWidth(footStyle, mark)) {
			if j == 0 {
				line = mark + line
			} else {
				line = "     " + line
			}
			out = append(out, line)
		}
	}
	return out
}

// notesHeight is how tall the footnotes are at width.
func (g *grid) notesHeight(width vg.Length) vg.Length {
	if len(g.notes) == 0 {
		return 0
	}
	return vg.Points(6) + vg.Length(len(g.noteLines(width)))*lineHeight(footStyle)
}

// fitLabel returns label in the largest size from size down to 6 points
// that fits width, broken at its hyphens onto lines if it must be: at a
// narrow --plot-width the column names would otherwise run into each
// other.
func fitLabel(label string, size float64, bold bool, width vg.Length) (string, draw.TextStyle) {
	tries := []string{label}
	if strings.Contains(label, "-") {
		tries = append(tries, strings.ReplaceAll(label, "-", "-\n"))
	}
	for s := size; s >= 6; s -= 0.5 {
		sty := textStyle(vg.Length(s), bold, black)
		for _, t := range tries {
			if widest(sty, t) <= width {
				return t, sty
			}
		}
	}
	t := tries[len(tries)-1]
	return t, textStyle(6, bold, black)
}

// widest is the width of the widest line of s.
func widest(sty draw.TextStyle, s string) vg.Length {
	var w vg.Length
	for _, line := range strings.Split(s, "\n") {
		w = max(w, textWidth(sty, line))
	}
	return w
}

// cellsPlotter draws the grid's cells, their labels and footnote marks.
type cellsPlotter struct{ g *grid }

// Plot implements plot.Plotter.
func (cp cellsPlotter) Plot(c draw.Canvas, p *plot.Plot) {
	g := cp.g
	trX, trY := p.Transforms(&c)
	gap := vg.Points(1)
	colW := trX(1) - trX(0)
	sizes := []float64{}
	for r := range g.rows {
		for col := range g.cols {
			_, sty := fitLabel(g.scale.label(g.v[r][col]), sizeLabel+1, true, colW-vg.Points(16))
			sizes = append(sizes, float64(sty.Font.Size))
		}
	}
	// One size for every cell's label: the largest that fits them all.
	size := sizeLabel + 1.0
	for _, s := range sizes {
		size = math.Min(size, s)
	}
	sty := textStyle(vg.Length(size), true, black)
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YCenter
	mark := textStyle(sizeNote-0.5, false, black)
	mark.XAlign, mark.YAlign = draw.XRight, draw.YTop
	for r := range g.rows {
		y := float64(len(g.rows) - 1 - r) // the first algorithm at the top
		for col := range g.cols {
			v := g.v[r][col]
			fill := heat(g.scale.at(v))
			x0, x1 := trX(float64(col)-0.5)+gap, trX(float64(col)+0.5)-gap
			y0, y1 := trY(y-0.5)+gap, trY(y+0.5)-gap
			box := []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
			if g.blankNaN && math.IsNaN(v) {
				hatch(c, vg.Rectangle{Min: box[0], Max: box[2]}, withAlpha(textGrey, 0x40), 1)
				c.StrokeLines(draw.LineStyle{Color: gridGrey, Width: vg.Points(0.75)}, append(box, box[0]))
				continue
			}
			c.FillPolygon(fill, box)
			label := g.scale.label(v)
			if !g.given[r][col] {
				label = "not run"
			}
			sty.Color = inkOn(fill)
			c.FillText(sty, vg.Point{X: (x0 + x1) / 2, Y: (y0 + y1) / 2}, label)
			if n := g.note[r][col]; n > 0 {
				mark.Color = inkOn(fill)
				c.FillText(mark, vg.Point{X: x1 - vg.Points(2.5), Y: y1 - vg.Points(2)}, strconv.Itoa(n))
			}
		}
	}
	if r, col := g.currentRow, g.currentCol; r >= 0 && col >= 0 && r < len(g.rows) && col < len(g.cols) {
		// Outlined outside the cell's gap, so that the ink never covers
		// the cell's own colour or label.
		y := float64(len(g.rows) - 1 - r)
		x0, x1 := trX(float64(col)-0.5), trX(float64(col)+0.5)
		y0, y1 := trY(y-0.5), trY(y+0.5)
		c.StrokeLines(currentOutline, []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}, {X: x0, Y: y0}})
	}
}

// currentOutline marks the cell of the scenario as given.
var currentOutline = draw.LineStyle{Color: black, Width: vg.Points(2.5)}

// draw draws the header, the heat map, its colour scale and the notes.
func (g *grid) draw(dc draw.Canvas, h header) {
	inner := draw.Crop(dc, margin, -margin, margin, -margin)
	width := inner.Max.X - inner.Min.X
	hh := h.height(width)
	h.draw(inner)

	notesH := g.notesHeight(width)
	if notesH > 0 {
		y := inner.Min.Y + notesH - vg.Points(6)
		for _, line := range g.noteLines(width) {
			y -= lineHeight(footStyle)
			dc.FillText(footStyle, vg.Point{X: inner.Min.X, Y: y + vg.Length(footStyle.FontExtents().Descent)}, line)
		}
	}

	p := newPlot()
	p.Add(cellsPlotter{g})
	p.X.Min, p.X.Max = -0.5, float64(len(g.cols))-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(len(g.rows))-0.5
	// The column names must fit their columns: measure the room a column
	// will have and fit every name to it, in one size.
	colW := (width - barRoom - g.rowLabelWidth() - 0.45*vg.Inch) / vg.Length(max(len(g.cols), 1))
	labelSize := vg.Length(sizeLabel)
	labels := make([]string, len(g.cols))
	for i, c := range g.cols {
		l, sty := fitLabel(c, sizeLabel, false, colW-vg.Points(4))
		labels[i] = l
		labelSize = min(labelSize, sty.Font.Size)
	}
	var xt, yt []plot.Tick
	for i := range g.cols {
		xt = append(xt, plot.Tick{Value: float64(i), Label: labels[i]})
	}
	for i, r := range g.rows {
		yt = append(yt, plot.Tick{Value: float64(len(g.rows) - 1 - i), Label: r})
	}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.ConstantTicks(xt), plot.ConstantTicks(yt)
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		ax.Tick.Label.Font = sans(sizeLabel, false)
		ax.Tick.Length = 0
		ax.Width = 0
		ax.Padding = vg.Points(2)
	}
	p.X.Tick.Label.Font = sans(labelSize, false)
	p.X.Label.Text, p.Y.Label.Text = g.colTitle, g.rowTitle

	area := draw.Crop(inner, 0, -barRoom, notesH, -(hh + panelGap))
	if area.Max.Y <= area.Min.Y || area.Max.X <= area.Min.X {
		return
	}
	p.Draw(area)
	da := p.DataCanvas(area)
	g.scale.drawBar(dc, vg.Rectangle{
		Min: vg.Point{X: da.Max.X + 0.3*vg.Inch, Y: da.Min.Y},
		Max: vg.Point{X: da.Max.X + 0.3*vg.Inch + 0.2*vg.Inch, Y: da.Max.Y - lineHeight(noteStyle)*3},
	})
}

// heatScale is how a heat map colours its cells: where a value falls on
// heat's scale, how a cell labels it, and the colour bar that says so.
type heatScale interface {
	// at is where v falls on heat's scale, -1 to 1; NaN for none.
	at(v float64) float64
	// label is a cell's text for v.
	label(v float64) string
	// drawBar draws the scale's colour bar in bar, labelled.
	drawBar(c draw.Canvas, bar vg.Rectangle)
}

// ratioScale is CompareGrid's scale, the same for every grid: a ratio to
// the exact limiter on a log scale from 0.25× (blue) through 1× (white)
// to 4× (vermillion). name heads its bar: the figure whose ratio it is,
// "admitted" when empty (CompareGrid's).
type ratioScale struct{ name string }

func (ratioScale) at(v float64) float64   { return shade(v) }
func (ratioScale) label(v float64) string { return ratioLabel(v) }
func (s ratioScale) drawBar(c draw.Canvas, bar vg.Rectangle) {
	drawScale(c, bar, or(s.name, "admitted"))
}

// drawScale draws the colour scale in bar, labelled at powers of two,
// headed by name.
func drawScale(c draw.Canvas, bar vg.Rectangle, name string) {
	if bar.Max.Y-bar.Min.Y < vg.Points(20) {
		return
	}
	const slices = 64
	hgt := (bar.Max.Y - bar.Min.Y) / slices
	for i := range slices {
		t := -1 + (float64(i)+0.5)*2/slices
		y0 := bar.Min.Y + vg.Length(i)*hgt
		c.FillPolygon(heat(t), []vg.Point{{X: bar.Min.X, Y: y0}, {X: bar.Max.X, Y: y0}, {X: bar.Max.X, Y: y0 + hgt + 0.3}, {X: bar.Min.X, Y: y0 + hgt + 0.3}})
	}
	outline := draw.LineStyle{Color: textGrey, Width: vg.Points(0.5)}
	c.StrokeLines(outline, []vg.Point{bar.Min, {X: bar.Max.X, Y: bar.Min.Y}, bar.Max, {X: bar.Min.X, Y: bar.Max.Y}, bar.Min})

	sty := noteStyle
	sty.YAlign = draw.YCenter
	for k := -scaleSpan; k <= scaleSpan; k++ {
		y := bar.Min.Y + vg.Length(float64(k+scaleSpan)/(2*scaleSpan))*(bar.Max.Y-bar.Min.Y)
		c.StrokeLine2(outline, bar.Max.X, y, bar.Max.X+vg.Points(3), y)
		label := strconv.FormatFloat(math.Exp2(float64(k)), 'f', -1, 64) + "×"
		switch k {
		case scaleSpan:
			label = "≥ " + label
		case -scaleSpan:
			label = "≤ " + label
		}
		c.FillText(sty, vg.Point{X: bar.Max.X + vg.Points(5), Y: y}, label)
	}
	head := textStyle(sizeNote, true, black)
	c.FillText(head, vg.Point{X: bar.Min.X, Y: bar.Max.Y + lineHeight(noteStyle)*1.9}, name)
	c.FillText(noteStyle, vg.Point{X: bar.Min.X, Y: bar.Max.Y + lineHeight(noteStyle)*0.9}, "1× is exact")
}
