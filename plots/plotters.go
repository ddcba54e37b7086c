package plots

import (
	"image/color"
	"math"
	"slices"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ratelim/ratelim/sim"
)

// The small plot.Plotters gonum does not have: shaded time windows, the
// labelled fault bars, and grid lines that do not depend on tick labels.

// faultShade shades every fault's time window over the whole height of a
// panel, behind the data, so one glance down the figure shows what each
// client saw while the fault lasted.
type faultShade struct{ faults []sim.FaultSpan }

// Plot implements plot.Plotter.
func (f faultShade) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	for _, sp := range f.faults {
		x0 := max(trX(sp.StartS), c.Min.X)
		x1 := min(trX(sp.EndS), c.Max.X)
		if x1 <= x0 || laneOnly(sp.Kind) {
			continue
		}
		colour := faultColour(sp.Kind)
		c.FillPolygon(withAlpha(colour, shadeAlpha(colour)), []vg.Point{
			{X: x0, Y: c.Min.Y}, {X: x1, Y: c.Min.Y}, {X: x1, Y: c.Max.Y}, {X: x0, Y: c.Max.Y},
		})
	}
}

// shadeAlpha makes each colour's shading about as visible as the others:
// pale yellow needs more opacity than grey to show at all.
func shadeAlpha(c color.Color) uint8 {
	switch c {
	case yellow:
		return 0x58
	case grey:
		return 0x40
	}
	return 0x38
}

// faultLanes draws each fault as a labelled bar in its own lane, so
// overlapping faults and long labels never sit on each other or on data.
type faultLanes struct {
	faults []sim.FaultSpan
	lane   []int // lane of each fault, 0 at the top
	lanes  int
	label  func(sim.FaultSpan) string
}

// Plot implements plot.Plotter.
func (f faultLanes) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	sty := textStyle(sizeNote, false, black)
	sty.YAlign = draw.YCenter
	for i, sp := range f.faults {
		top := float64(f.lanes - f.lane[i])
		y0, y1 := trY(top-0.85), trY(top-0.15)
		x0 := max(trX(sp.StartS), c.Min.X)
		x1 := min(trX(sp.EndS), c.Max.X)
		if x1 < x0+vg.Points(1) {
			x1 = x0 + vg.Points(1) // an instant still shows
		}
		box := []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
		c.FillPolygon(withAlpha(faultColour(sp.Kind), 0xb0), box)
		c.StrokeLines(draw.LineStyle{Color: faultColour(sp.Kind), Width: vg.Points(0.75)}, append(box, box[0]))
		lbl := f.label(sp)
		from, _ := labelSpan(float64(x0+vg.Points(3)), float64(textWidth(sty, lbl)), float64(c.Min.X), float64(c.Max.X))
		c.FillText(sty, vg.Point{X: vg.Length(from), Y: (y0 + y1) / 2}, lbl)
	}
}

// labelSpan is where a label of width w that wants to start at x goes
// between lo and hi: at x, or moved left so that it ends by hi.
func labelSpan(x, w, lo, hi float64) (from, to float64) {
	from = math.Max(lo, math.Min(x, hi-w))
	return from, from + w
}

// assignLanes puts each fault in the first lane where its bar and its
// label (which may be wider than the bar) overlap nothing already there;
// label returns where a fault's label starts and ends, in seconds.
func assignLanes(faults []sim.FaultSpan, label func(sim.FaultSpan) (from, to float64)) (lane []int, lanes int) {
	type span struct{ from, to float64 }
	var taken [][]span // per lane
	lane = make([]int, len(faults))
	order := make([]int, len(faults))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return faults[order[a]].StartS < faults[order[b]].StartS })
	for _, i := range order {
		sp := faults[i]
		lf, lt := label(sp)
		s := span{math.Min(sp.StartS, lf), math.Max(sp.EndS, lt)}
		l := 0
		for ; l < len(taken); l++ {
			free := true
			for _, o := range taken[l] {
				if s.from < o.to && o.from < s.to {
					free = false
					break
				}
			}
			if free {
				break
			}
		}
		if l == len(taken) {
			taken = append(taken, nil)
		}
		taken[l] = append(taken[l], s)
		lane[i] = l
	}
	return lane, max(1, len(taken))
}

// gridLines draws light lines at the labelled ticks of its own tickers,
// under the data. (plotter.Grid follows the axes' tick labels, and the
// stacked panels have none on their shared time axis.)
type gridLines struct {
	x, y plot.Ticker // nil: no lines that way
}

// Plot implements plot.Plotter.
func (g gridLines) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	var lines vg.Path
	if g.x != nil {
		for _, t := range g.x.Ticks(p.X.Min, p.X.Max) {
			if t.IsMinor() || t.Value < p.X.Min || t.Value > p.X.Max {
				continue
			}
			x := trX(t.Value)
			lines.Move(vg.Point{X: x, Y: c.Min.Y})
			lines.Line(vg.Point{X: x, Y: c.Max.Y})
		}
	}
	if g.y != nil {
		for _, t := range g.y.Ticks(p.Y.Min, p.Y.Max) {
			if t.IsMinor() || t.Value < p.Y.Min || t.Value > p.Y.Max {
				continue
			}
			y := trY(t.Value)
			lines.Move(vg.Point{X: c.Min.X, Y: y})
			lines.Line(vg.Point{X: c.Max.X, Y: y})
		}
	}
	strokePath(c, draw.LineStyle{Color: gridGrey, Width: vg.Points(0.5)}, lines)
}

// swatch is a legend thumbnail: a filled box, optionally outlined.
type swatch struct {
	fill, line color.Color
}

// Thumbnail implements plot.Thumbnailer.
func (s swatch) Thumbnail(c *draw.Canvas) {
	box := []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y}}
	if s.fill != nil {
		c.FillPolygon(s.fill, box)
	}
	if s.line != nil {
		c.StrokeLines(draw.LineStyle{Color: s.line, Width: vg.Points(0.75)}, append(box, box[0]))
	}
}

// hatchSpacing is the distance between a hatch's lines.
const hatchSpacing = 4.5 // points

// hatchFill fills v[i] from 0 up over each step ts[i]–ts[i+1] with a pale
// wash of colour and diagonal lines (dir +1: rising, -1: falling), over
// whatever is drawn under it: the requests the fail policy decided stand
// out from those the limiter did, in colour and, for a reader who cannot
// tell the colours apart or a grey-scale print, in texture. The lines are
// laid on one grid for the whole panel, so neighbouring steps join up.
type hatchFill struct {
	ts, v  []float64
	colour color.Color
	dir    int
}

// Plot implements plot.Plotter.
func (h hatchFill) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	edge := draw.LineStyle{Color: h.colour, Width: vg.Points(1.2)}
	for i, v := range h.v {
		if !(v > 0) || i+1 >= len(h.ts) {
			continue
		}
		r := vg.Rectangle{
			Min: vg.Point{X: trX(h.ts[i]), Y: trY(0)},
			Max: vg.Point{X: trX(h.ts[i+1]), Y: min(trY(v), c.Max.Y)},
		}
		if r.Max.X <= r.Min.X || r.Max.Y <= r.Min.Y {
			continue
		}
		c.FillPolygon(withAlpha(h.colour, 0x50), []vg.Point{r.Min, {X: r.Max.X, Y: r.Min.Y}, r.Max, {X: r.Min.X, Y: r.Max.Y}})
		hatch(c, r, h.colour, h.dir)
		c.StrokeLine2(edge, r.Min.X, r.Max.Y, r.Max.X, r.Max.Y)
	}
}

// hatch draws diagonal lines across r: y = x − k·s (dir +1) or
// y = k·s − x (dir −1) for every whole k, clipped to r.
func hatch(c draw.Canvas, r vg.Rectangle, colour color.Color, dir int) {
	sty := draw.LineStyle{Color: colour, Width: vg.Points(1.1)}
	s := vg.Points(hatchSpacing)
	var lines vg.Path
	if dir >= 0 {
		for k := math.Floor(float64((r.Min.X - r.Max.Y) / s)); vg.Length(k)*s <= r.Max.X-r.Min.Y; k++ {
			off := vg.Length(k) * s // y = x − off
			x0, x1 := max(r.Min.X, r.Min.Y+off), min(r.Max.X, r.Max.Y+off)
			if x1 > x0 {
				lines.Move(vg.Point{X: x0, Y: x0 - off})
				lines.Line(vg.Point{X: x1, Y: x1 - off})
			}
		}
	} else {
		for k := math.Floor(float64((r.Min.X + r.Min.Y) / s)); vg.Length(k)*s <= r.Max.X+r.Max.Y; k++ {
			off := vg.Length(k) * s // y = off − x
			x0, x1 := max(r.Min.X, off-r.Max.Y), min(r.Max.X, off-r.Min.Y)
			if x1 > x0 {
				lines.Move(vg.Point{X: x0, Y: off - x0})
				lines.Line(vg.Point{X: x1, Y: off - x1})
			}
		}
	}
	strokePath(c, sty, lines)
}

// strokePath strokes every line of path at once: one element of an
// SVG, where a stroke per line made a run's timeline thousands of them
// (cluster-partition's hatching alone was 1,176 of its 1,619 paths), each
// one for a browser to parse, copy and lay out again on every re-run.
// A hatch's lines are parallel, and a grid's, which cross, are opaque
// (gridGrey): where lines of one path meet, the picture is the same.
func strokePath(c draw.Canvas, sty draw.LineStyle, path vg.Path) {
	if len(path) == 0 || sty.Color == nil || sty.Width <= 0 {
		return
	}
	c.SetLineStyle(sty)
	c.Stroke(path)
}

// hatchSwatch is the legend thumbnail of a hatchFill.
type hatchSwatch struct {
	colour color.Color
	dir    int
}

// Thumbnail implements plot.Thumbnailer.
func (h hatchSwatch) Thumbnail(c *draw.Canvas) {
	r := c.Rectangle
	c.FillPolygon(withAlpha(h.colour, 0x50), []vg.Point{r.Min, {X: r.Max.X, Y: r.Min.Y}, r.Max, {X: r.Min.X, Y: r.Max.Y}})
	hatch(*c, r, h.colour, h.dir)
}

// boundaryLines marks every multiple of a fixed window's length: where
// its count resets, and where a burst either side of a boundary gets
// twice the limit through.
type boundaryLines struct{ every float64 }

var boundaryStyle = draw.LineStyle{Color: withAlpha(black, 0x70), Width: vg.Points(0.8), Dashes: []vg.Length{vg.Points(2), vg.Points(2)}}

// Plot implements plot.Plotter.
func (b boundaryLines) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	for i := 1.0; i*b.every < p.X.Max; i++ {
		x := trX(i * b.every)
		c.StrokeLine2(boundaryStyle, x, c.Min.Y, x, c.Max.Y)
	}
}

// Thumbnail implements plot.Thumbnailer.
func (boundaryLines) Thumbnail(c *draw.Canvas) {
	x := (c.Min.X + c.Max.X) / 2
	c.StrokeLine2(boundaryStyle, x, c.Min.Y, x, c.Max.Y)
}

// overFill shades, step by step, where a count rose above what the limit
// allows — from lo[i] up to hi[i] wherever hi[i] > lo[i] — in the colour
// of trouble: the requests the limiter should not have let through.
type overFill struct {
	ts, lo, hi []float64
}

// over reports whether the count passes the limit anywhere (by more than
// rounding).
func (o overFill) over() bool {
	for i := range o.hi {
		if o.hi[i] > o.lo[i]+1e-9 {
			return true
		}
	}
	return false
}

// Plot implements plot.Plotter. Each run of steps over the limit is one
// polygon, stepping along its top and bottom: rectangles side by side
// would show their seams through a translucent fill.
func (o overFill) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	isOver := func(i int) bool { return i+1 < len(o.ts) && o.hi[i] > o.lo[i]+1e-9 }
	for i := 0; i < len(o.hi); i++ {
		if !isOver(i) {
			continue
		}
		j := i
		for j < len(o.hi) && isOver(j) {
			j++
		}
		var top, bottom []vg.Point
		for k := i; k < j; k++ {
			x0, x1 := trX(o.ts[k]), trX(o.ts[k+1])
			yt, yb := min(trY(o.hi[k]), c.Max.Y), trY(o.lo[k])
			top = append(top, vg.Point{X: x0, Y: yt}, vg.Point{X: x1, Y: yt})
			bottom = append(bottom, vg.Point{X: x0, Y: yb}, vg.Point{X: x1, Y: yb})
		}
		slices.Reverse(bottom)
		c.FillPolygon(overColour, append(top, bottom...))
		i = j
	}
}

var overColour = withAlpha(vermillion, 0x78)

// lineLabel writes a horizontal line's value at the right end of the
// data, just above it, so a limit can be read without the axis.
type lineLabel struct {
	y    float64
	text string
	// below puts the label under the line (the refill's, so that it never
	// meets the limit's label above the limit line).
	below bool
}

// Plot implements plot.Plotter.
func (l lineLabel) Plot(c draw.Canvas, p *plot.Plot) {
	_, trY := p.Transforms(&c)
	y := trY(l.y)
	sty := textStyle(sizeNote-0.5, true, textGrey)
	sty.XAlign = draw.XRight
	below := l.below && y-vg.Points(10) >= c.Min.Y // no room below: above
	if below || y+vg.Points(10) > c.Max.Y {        // no room above: below the line
		sty.YAlign = draw.YTop
		y -= vg.Points(2)
	} else {
		y += vg.Points(1.5)
	}
	// A white backing, so the value reads over the data.
	w, ext := sty.Width(l.text), sty.FontExtents()
	x0, x1 := c.Max.X-vg.Points(3)-w-vg.Points(1.5), c.Max.X-vg.Points(1.5)
	yb := y
	if sty.YAlign == draw.YTop {
		yb = y - vg.Length(ext.Height)
	}
	labelBacking(c, vg.Rectangle{Min: vg.Point{X: x0, Y: yb}, Max: vg.Point{X: x1, Y: yb + vg.Length(ext.Height)}})
	c.FillText(sty, vg.Point{X: c.Max.X - vg.Points(3), Y: y}, l.text)
}

// limitLines draws the limit (the most in any window) and the refill (what
// a bucket sustains) for n keys across the panel, each labelled at the
// right, drawing each line through line.
func limitLines(p *plot.Plot, d *timelineData, n float64, line func(string, ...plotter.XYs)) {
	limit := d.ref.limit * n
	line(serLimit, plotter.XYs{{X: 0, Y: limit}, {X: d.axisS, Y: limit}})
	p.Add(lineLabel{y: limit, text: countLabel(limit)})
	if d.ref.refill > 0 {
		line(serRefill, plotter.XYs{{X: 0, Y: d.ref.refill * n}, {X: d.axisS, Y: d.ref.refill * n}})
		p.Add(lineLabel{y: d.ref.refill * n, text: countLabel(d.ref.refill * n), below: true})
	}
}

// countAxes sets a traffic panel's axes: the run's time across, counts (or
// the quota they cost) up from 0 to a little over top, on a log scale when
// asked.
func countAxes(p *plot.Plot, d *timelineData, top float64, logScale bool) {
	p.X.Min, p.X.Max = 0, d.axisS
	p.Y.Min = 0
	if logScale {
		p.Y.Scale = log1pScale{}
		p.Y.Max = math.Expm1(math.Log1p(top) * 1.04)
	} else {
		p.Y.Max = top * 1.06
	}
	p.Y.Label.Text = "requests"
	if d.weighted {
		p.Y.Label.Text = "quota (cost)"
	}
}
