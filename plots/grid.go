package plots

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"strconv"

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
}

// CompareGrid draws cells as a heat map: one row per algorithm and one
// column per topology, in the order each is first seen in cells, every
// cell coloured by its admitted ÷ limit and labelled with it ("2.00×").
// The colour scale is logarithmic and centred on 1×: twice and half the
// limit are equally strong, warm above the limit and blue below. A cell
// that is missing, or NaN, is grey and says so.
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
	if opts.Width < 0 || opts.Height < 0 {
		return fmt.Errorf("plots: figure size %v × %v is not positive", opts.Width, opts.Height)
	}
	h := header{title: title, subtitle: "each cell: what was admitted ÷ what one exact limiter admits on the same arrivals · warm: more, blue: less"}
	if h.title == "" {
		h.title = "admitted ÷ limit, by algorithm and topology"
	}
	width, height := opts.Width, opts.Height
	if width == 0 {
		var labels vg.Length
		for _, a := range g.rows {
			labels = max(labels, textStyle(sizeLabel, false, black).Width(a))
		}
		width = max(6*vg.Inch, 2*margin+labels+0.5*vg.Inch+vg.Length(len(g.cols))*1.25*vg.Inch+barRoom)
	}
	if height == 0 {
		height = max(3.5*vg.Inch, 2*margin+h.height(width-2*margin)+vg.Length(len(g.rows))*0.5*vg.Inch+0.75*vg.Inch)
	}
	return render(w, format, width, height, func(dc draw.Canvas) { g.draw(dc, h) })
}

// barRoom is the width the colour scale takes at the right.
const barRoom = 1.1 * vg.Inch

// grid is cells arranged by row (algorithm) and column (topology).
type grid struct {
	rows, cols []string
	v          [][]float64 // v[row][col]; NaN where no cell was given
	given      [][]bool
	span       float64 // the colour scale runs from 2^-span to 2^span
}

func newGrid(cells []Cell) (*grid, error) {
	g := &grid{}
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
	for r := range g.v {
		g.v[r] = make([]float64, len(g.cols))
		g.given[r] = make([]bool, len(g.cols))
		for c := range g.v[r] {
			g.v[r][c] = math.NaN()
		}
	}
	g.span = 1
	for _, c := range cells {
		r, col := ri[c.Algorithm], ci[c.Topology]
		if g.given[r][col] {
			return nil, fmt.Errorf("plots: two cells for %s on %s", c.Algorithm, c.Topology)
		}
		g.given[r][col] = true
		g.v[r][col] = c.AdmittedRatio
		if l := math.Abs(math.Log2(c.AdmittedRatio)); c.AdmittedRatio > 0 && !math.IsInf(l, 0) && !math.IsNaN(l) {
			g.span = math.Max(g.span, math.Ceil(l-1e-9))
		}
	}
	g.span = math.Min(g.span, 10) // past 1024× the colour cannot get warmer
	return g, nil
}

// shade is where v falls on the colour scale, -1 (far below the limit)
// to 1 (far above); NaN for a value with no place on it.
func (g *grid) shade(v float64) float64 {
	switch {
	case math.IsNaN(v) || v < 0:
		return math.NaN()
	case v == 0:
		return -1
	}
	return math.Max(-1, math.Min(1, math.Log2(v)/g.span))
}

// diverging is the colour at t in [-1, 1]: Okabe–Ito blue, through a
// near-white at 0, to vermillion. Both ends stay distinct for the common
// colour blindnesses.
func diverging(t float64) color.Color {
	if math.IsNaN(t) {
		return gridGrey
	}
	to := color.NRGBA(vermillion)
	if t < 0 {
		to, t = color.NRGBA(blue), -t
	}
	lerp := func(a, b uint8) uint8 { return uint8(math.Round(float64(a) + (float64(b)-float64(a))*t)) }
	return color.NRGBA{lerp(paleWhite.R, to.R), lerp(paleWhite.G, to.G), lerp(paleWhite.B, to.B), 0xff}
}

// inkOn returns black or white, whichever reads better on c.
func inkOn(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	if 0.2126*float64(r)+0.7152*float64(g)+0.0722*float64(b) < 0.5*0xffff {
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

// cellsPlotter draws the grid's cells and their labels.
type cellsPlotter struct{ g *grid }

// Plot implements plot.Plotter.
func (cp cellsPlotter) Plot(c draw.Canvas, p *plot.Plot) {
	g := cp.g
	trX, trY := p.Transforms(&c)
	gap := vg.Points(1)
	sty := textStyle(sizeLabel+1, true, black)
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YCenter
	for r := range g.rows {
		y := float64(len(g.rows) - 1 - r) // the first algorithm at the top
		for col := range g.cols {
			v := g.v[r][col]
			fill := diverging(g.shade(v))
			x0, x1 := trX(float64(col)-0.5)+gap, trX(float64(col)+0.5)-gap
			y0, y1 := trY(y-0.5)+gap, trY(y+0.5)-gap
			c.FillPolygon(fill, []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}})
			label := ratioLabel(v)
			if !g.given[r][col] {
				label = "not run"
			}
			sty.Color = inkOn(fill)
			c.FillText(sty, vg.Point{X: (x0 + x1) / 2, Y: (y0 + y1) / 2}, label)
		}
	}
}

// draw draws the header, the heat map and its colour scale.
func (g *grid) draw(dc draw.Canvas, h header) {
	inner := draw.Crop(dc, margin, -margin, margin, -margin)
	hh := h.height(inner.Max.X - inner.Min.X)
	h.draw(inner)

	p := newPlot()
	p.Add(cellsPlotter{g})
	p.X.Min, p.X.Max = -0.5, float64(len(g.cols))-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(len(g.rows))-0.5
	var xt, yt []plot.Tick
	for i, c := range g.cols {
		xt = append(xt, plot.Tick{Value: float64(i), Label: c})
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
	p.X.Label.Text, p.Y.Label.Text = "topology", "algorithm"

	area := draw.Crop(inner, 0, -barRoom, 0, -(hh + panelGap))
	if area.Max.Y <= area.Min.Y || area.Max.X <= area.Min.X {
		return
	}
	p.Draw(area)
	da := p.DataCanvas(area)
	g.drawScale(dc, vg.Rectangle{
		Min: vg.Point{X: da.Max.X + 0.3*vg.Inch, Y: da.Min.Y},
		Max: vg.Point{X: da.Max.X + 0.3*vg.Inch + 0.2*vg.Inch, Y: da.Max.Y - lineHeight(noteStyle)*3},
	})
}

// drawScale draws the colour scale in bar, labelled at powers of two.
func (g *grid) drawScale(c draw.Canvas, bar vg.Rectangle) {
	if bar.Max.Y-bar.Min.Y < vg.Points(20) {
		return
	}
	const slices = 64
	hgt := (bar.Max.Y - bar.Min.Y) / slices
	for i := range slices {
		t := -1 + (float64(i)+0.5)*2/slices
		y0 := bar.Min.Y + vg.Length(i)*hgt
		c.FillPolygon(diverging(t), []vg.Point{{X: bar.Min.X, Y: y0}, {X: bar.Max.X, Y: y0}, {X: bar.Max.X, Y: y0 + hgt + 0.3}, {X: bar.Min.X, Y: y0 + hgt + 0.3}})
	}
	outline := draw.LineStyle{Color: textGrey, Width: vg.Points(0.5)}
	c.StrokeLines(outline, []vg.Point{bar.Min, {X: bar.Max.X, Y: bar.Min.Y}, bar.Max, {X: bar.Min.X, Y: bar.Max.Y}, bar.Min})

	sty := noteStyle
	sty.YAlign = draw.YCenter
	step := math.Max(1, math.Ceil(2*g.span/8))
	for k := -g.span; k <= g.span; k += step {
		y := bar.Min.Y + vg.Length((k+g.span)/(2*g.span))*(bar.Max.Y-bar.Min.Y)
		c.StrokeLine2(outline, bar.Max.X, y, bar.Max.X+vg.Points(3), y)
		c.FillText(sty, vg.Point{X: bar.Max.X + vg.Points(5), Y: y}, strconv.FormatFloat(math.Exp2(k), 'f', -1, 64)+"×")
	}
	head := textStyle(sizeNote, true, black)
	c.FillText(head, vg.Point{X: bar.Min.X, Y: bar.Max.Y + lineHeight(noteStyle)*1.9}, "admitted")
	c.FillText(noteStyle, vg.Point{X: bar.Min.X, Y: bar.Max.Y + lineHeight(noteStyle)*0.9}, "1× is exact")
}
