package plots

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// SweepPoint is one run of a sweep (`ratelim sim --sweep FIELD=V1,V2,...`):
// the value it ran with and what it admitted, each as a ratio to what one
// exact limiter admits on the same arrivals (1 is exact, 2 twice as
// much). A ratio of 0 or NaN is one the run has not got (the exact
// limiter admitted nothing; no design bound is derived), and is not drawn.
type SweepPoint struct {
	// Label is the value as the user typed it: "0", "100ms", "never".
	Label string
	// PeakRatio is the worst key's most admitted in one second ÷ the exact
	// limiter's most in one second on that key.
	PeakRatio float64
	// AdmittedRatio is everything the run admitted ÷ what the exact
	// limiter admitted.
	AdmittedRatio float64
	// BoundRatio is the most the design lets the worst key admit in one
	// second (design_bound_1s) ÷ the exact limiter's most in one second.
	BoundRatio float64
}

// SweepData is what Sweep draws.
type SweepData struct {
	// Scenario and Field name the run and what it varied; the title.
	Scenario, Field string
	// Finding, when set, says in a line what the sweep shows; it is drawn
	// under the title.
	Finding string
	// Over, when above 1, shades the values whose PeakRatio passes it:
	// where the worst second has left the exact one.
	Over float64
	// Points are the runs, in the order the values were given.
	Points []SweepPoint
}

// maxSweepPoints is the most points Sweep draws: past it the value labels
// would not fit under their ticks at any width the CLI allows.
const maxSweepPoints = 64

// Sweep draws a sweep as lines over its values: x the values in the order
// given, spaced evenly and labelled as typed (a sweep of durations runs
// from "0" to "never", which no numeric axis holds), y the ratio to the
// exact limiter, 1 drawn across as "exact". The worst key's worst second
// is the thick vermillion line, each point labelled with its ratio;
// everything admitted the blue one; the design's bound the dashed black
// one, where there is one. Values whose worst second is over d.Over are
// shaded, so that where the curve leaves 1 shows without reading a
// number. The default size is 8 inches wide, more past nine values, and
// 5.5 tall.
func Sweep(w io.Writer, d SweepData, opts Options) error {
	format, err := opts.format()
	if err != nil {
		return err
	}
	if len(d.Points) == 0 {
		return errors.New("plots: no sweep points to draw")
	}
	if len(d.Points) > maxSweepPoints {
		return fmt.Errorf("plots: %d sweep points (at most %d)", len(d.Points), maxSweepPoints)
	}
	for i, pt := range d.Points {
		for _, v := range []float64{pt.PeakRatio, pt.AdmittedRatio, pt.BoundRatio} {
			if v < 0 || math.IsInf(v, 0) {
				return fmt.Errorf("plots: sweep point %d (%s): ratio %g is not a ratio (want 0 or more, finite)", i+1, pt.Label, v)
			}
		}
	}
	if err := opts.checkSize(); err != nil {
		return err
	}
	width, height := opts.Width, opts.Height
	if width == 0 {
		width = max(8*vg.Inch, 2*margin+1.2*vg.Inch+vg.Length(len(d.Points))*0.8*vg.Inch)
	}
	h := header{
		title:    fmt.Sprintf("%s: what a sweep of %s admits, ÷ the exact limiter", or(d.Scenario, "unnamed scenario"), or(d.Field, "a field")),
		headline: d.Finding,
		subtitle: fmt.Sprintf("x: each value of %s, in the order given · y: the run's figure ÷ one exact limiter's on the same arrivals (1 = exact, 2 = twice as much)", or(d.Field, "the field")),
		legend: []legendEntry{
			{label: "worst second ÷ exact's (the worst key)", thumb: lineThumb{sweepPeak, true}},
			{label: "all admitted ÷ exact", thumb: lineThumb{sweepAdmitted, true}},
			{label: "the design's bound on a second ÷ exact's", thumb: lineThumb{sweepBound, false}},
		},
	}
	if slices.ContainsFunc(d.Points, func(pt SweepPoint) bool { return d.Over > 1 && pt.PeakRatio > d.Over }) {
		h.legend = append(h.legend, legendEntry{label: fmt.Sprintf("worst second over %s exact", ratioLabel(d.Over)), thumb: swatch{fill: sweepShade}})
	}
	if height == 0 {
		height = 2*margin + h.height(width-2*margin) + panelGap + 4*vg.Inch
	}
	return render(w, format, width, height, func(dc draw.Canvas) { drawSweep(dc, d, h) })
}

// The sweep's lines: the worst second thick and in the colour of
// over-admission, the total thinner in blue, the bound dashed.
var (
	sweepPeak     = draw.LineStyle{Color: vermillion, Width: vg.Points(2.5)}
	sweepAdmitted = draw.LineStyle{Color: blue, Width: vg.Points(1.5)}
	sweepBound    = draw.LineStyle{Color: black, Width: vg.Points(1.75), Dashes: []vg.Length{vg.Points(6), vg.Points(3)}}
	sweepExact    = draw.LineStyle{Color: grey, Width: vg.Points(1)}
	sweepShade    = withAlpha(vermillion, 0x26)
)

// drawSweep draws the header and the chart into dc.
func drawSweep(dc draw.Canvas, d SweepData, h header) {
	inner := draw.Crop(dc, margin, -margin, margin, -margin)
	width := inner.Max.X - inner.Min.X
	hh := h.height(width)
	h.draw(inner)

	n := len(d.Points)
	p := newPlot()
	p.X.Min, p.X.Max = -0.5, float64(n)-0.5
	top := 1.0
	for _, pt := range d.Points {
		top = math.Max(top, math.Max(finite(pt.PeakRatio), math.Max(finite(pt.AdmittedRatio), finite(pt.BoundRatio))))
	}
	p.Y.Min, p.Y.Max = 0, top*1.12
	p.Y.Label.Text = "÷ exact limiter (1 = exact)"
	p.X.Label.Text = d.Field + ", as given"

	// The values' labels must fit their columns: one size for all.
	colW := (width - 0.8*vg.Inch) / vg.Length(n)
	labelSize := vg.Length(sizeLabel)
	labels := make([]string, n)
	for i, pt := range d.Points {
		l, sty := fitLabel(pt.Label, sizeLabel, false, colW-vg.Points(4))
		labels[i] = l
		labelSize = min(labelSize, sty.Font.Size)
	}
	var xt []plot.Tick
	for i := range d.Points {
		xt = append(xt, plot.Tick{Value: float64(i), Label: labels[i]})
	}
	p.X.Tick.Marker = plot.ConstantTicks(xt)
	p.X.Tick.Label.Font = sans(labelSize, false)

	if d.Over > 1 {
		p.Add(overColumns{points: d.Points, over: d.Over})
	}
	p.Y.Tick.Marker = ratioTicks{}
	p.Add(gridLines{y: ratioTicks{}})
	exact, _ := plotter.NewLine(plotter.XYs{{X: p.X.Min, Y: 1}, {X: p.X.Max, Y: 1}})
	exact.LineStyle = sweepExact
	p.Add(exact, lineLabel{y: 1, text: "1× = exact", below: true})

	for _, s := range []struct {
		value  func(SweepPoint) float64
		style  draw.LineStyle
		glyph  bool
		labels bool
	}{
		{func(pt SweepPoint) float64 { return pt.BoundRatio }, sweepBound, false, false},
		{func(pt SweepPoint) float64 { return pt.AdmittedRatio }, sweepAdmitted, true, false},
		{func(pt SweepPoint) float64 { return pt.PeakRatio }, sweepPeak, true, true},
	} {
		vals := make([]float64, n)
		for i, pt := range d.Points {
			vals[i] = s.value(pt)
		}
		for _, seg := range segments(vals, noRatio) {
			if len(seg) > 1 {
				l, _ := plotter.NewLine(seg)
				l.LineStyle = s.style
				p.Add(l)
			}
			sc, _ := plotter.NewScatter(seg)
			sc.GlyphStyle = draw.GlyphStyle{Color: s.style.Color, Radius: vg.Points(3), Shape: draw.CircleGlyph{}}
			if !s.glyph {
				sc.GlyphStyle = draw.GlyphStyle{Color: s.style.Color, Radius: vg.Points(4), Shape: dashGlyph{}}
			}
			p.Add(sc)
		}
		if s.labels {
			p.Add(pointLabels{values: vals})
		}
	}

	area := draw.Crop(inner, 0, 0, 0, -(hh + panelGap))
	if area.Max.Y <= area.Min.Y || area.Max.X <= area.Min.X {
		return
	}
	p.Draw(area)
}

// finite is v, or 0 where v is NaN or infinite.
func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// segments splits values (one per x, from 0) into the runs of points that
// have one: a value that breaks (noRatio, math.IsNaN) says is none
// breaks the line rather than drop it to 0.
func segments(values []float64, breaks func(float64) bool) []plotter.XYs {
	var out []plotter.XYs
	var cur plotter.XYs
	for i, v := range values {
		if breaks(v) {
			if len(cur) > 0 {
				out = append(out, cur)
			}
			cur = nil
			continue
		}
		cur = append(cur, plotter.XY{X: float64(i), Y: v})
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// noRatio is a ratio the sweep has none of: 0 (nothing to compare) or
// not a number.
func noRatio(v float64) bool { return !(v > 0) || math.IsInf(v, 0) }

// overColumns shades the column of each point whose PeakRatio is over over.
type overColumns struct {
	points []SweepPoint
	over   float64
}

// Plot implements plot.Plotter.
func (o overColumns) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	for i, pt := range o.points {
		if !(pt.PeakRatio > o.over) {
			continue
		}
		x0, x1 := trX(float64(i)-0.5), trX(float64(i)+0.5)
		c.FillPolygon(sweepShade, []vg.Point{{X: x0, Y: c.Min.Y}, {X: x1, Y: c.Min.Y}, {X: x1, Y: c.Max.Y}, {X: x0, Y: c.Max.Y}})
	}
}

// pointLabels writes each value's ratio above its point ("2.54×"), on a
// white backing so that it reads over the other lines.
type pointLabels struct{ values []float64 }

// Plot implements plot.Plotter.
func (l pointLabels) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	sty := textStyle(sizeNote+0.5, true, vermillion)
	for i, v := range l.values {
		if !(v > 0) || math.IsInf(v, 0) {
			continue
		}
		pointLabel(c, sty, vg.Point{X: trX(float64(i)), Y: trY(v)}, vg.Points(6), vg.Points(1.5), ratioLabel(v))
	}
}

// pointLabel writes text centred gap above the point at (below it where
// there is no room above), on a white backing pad wider than the text
// each side, so that it reads over the lines under it.
func pointLabel(c draw.Canvas, sty draw.TextStyle, at vg.Point, gap, pad vg.Length, text string) {
	sty.XAlign = draw.XCenter
	ext := sty.FontExtents()
	y := at.Y + gap
	if y+vg.Length(ext.Height) > c.Max.Y { // no room above: below
		y = at.Y - gap - vg.Length(ext.Height)
	}
	half := sty.Width(text)/2 + pad
	labelBacking(c, vg.Rectangle{Min: vg.Point{X: at.X - half, Y: y - vg.Length(ext.Descent)}, Max: vg.Point{X: at.X + half, Y: y + vg.Length(ext.Ascent)}})
	c.FillText(sty, vg.Point{X: at.X, Y: y}, text)
}

// labelBacking is the translucent white box a label is written on, so
// that it reads over the lines under it.
func labelBacking(c draw.Canvas, b vg.Rectangle) {
	c.FillPolygon(withAlpha(color.White, 0xd0), []vg.Point{b.Min, {X: b.Max.X, Y: b.Min.Y}, b.Max, {X: b.Min.X, Y: b.Max.Y}})
}

// lineThumb is a legend thumbnail of a line, with a point on it if glyph.
type lineThumb struct {
	style draw.LineStyle
	glyph bool
}

// Thumbnail implements plot.Thumbnailer.
func (t lineThumb) Thumbnail(c *draw.Canvas) {
	y := (c.Min.Y + c.Max.Y) / 2
	c.StrokeLine2(t.style, c.Min.X, y, c.Max.X, y)
	if t.glyph {
		c.DrawGlyph(draw.GlyphStyle{Color: t.style.Color, Radius: vg.Points(2.5), Shape: draw.CircleGlyph{}}, vg.Point{X: (c.Min.X + c.Max.X) / 2, Y: y})
	}
}

// dashGlyph is a short horizontal bar: the bound's points, which a
// dashed line joins, and which stand alone where a neighbour has none.
type dashGlyph struct{}

// DrawGlyph implements draw.GlyphDrawer.
func (dashGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: vg.Points(2)})
	var path vg.Path
	path.Move(vg.Point{X: pt.X - sty.Radius*1.5, Y: pt.Y})
	path.Line(vg.Point{X: pt.X + sty.Radius*1.5, Y: pt.Y})
	c.Stroke(path)
}

// ratioTicks are the y axis's ticks: five to ten, at 0.25, 0.5, 1, 2, 5 or
// 10 apart, each labelled as a ratio ("1×", "2.5×").
type ratioTicks struct{}

// Ticks implements plot.Ticker.
func (ratioTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return nil
	}
	step := 0.25
	for _, s := range []float64{0.25, 0.5, 1, 2, 5, 10, 20, 50, 100} {
		step = s
		if (hi-lo)/s <= 8 {
			break
		}
	}
	var out []plot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi+1e-9 && len(out) < 100; v += step {
		out = append(out, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64) + "×"})
	}
	return out
}
