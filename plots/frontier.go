package plots

import (
	"cmp"
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

	"github.com/ratelim/ratelim/internal/words"
)

// FrontierPoint is one limit on the frontier `ratelim replay --suggest`
// finds: at Rate (per second), the smallest Burst that throttles no
// ordinary key of the log. Chosen marks the one it suggests.
type FrontierPoint struct {
	Rate   float64
	Burst  int
	Chosen bool
}

// FrontierKey is one key of the log: its mean rate over the log (per
// second, positive: a key of a log has at least one request; Frontier
// refuses 0, which a log axis has no place for), the burst it needs at the
// chosen point's rate not to be throttled, and whether the outlier rule
// set it apart from the bulk.
type FrontierKey struct {
	Name     string
	MeanRate float64
	Burst    int
	Outlier  bool
}

// FrontierData is what Frontier draws. Title names the log; Subtitle,
// when set, states the outlier rule as the caller applied it ("outliers:
// keys whose busiest minute is more than 3.5 robust deviations above the
// bulk's"), drawn under the title.
type FrontierData struct {
	Title, Subtitle string
	Points          []FrontierPoint
	Keys            []FrontierKey
}

// maxOutlierLabels is the most outliers Frontier names on the plot; the
// rest are counted in the side note.
const maxOutlierLabels = 12

// Frontier draws the limits that spare a log's ordinary keys: rate on a
// log x axis (labelled as a limit is written, 30/m, 2/s), burst on y (a
// log scale when the bursts span more than a factor of 20). The frontier
// is a step line through its points, each labelled with its burst: at a
// rate from one point to the next, that point's burst spares every
// ordinary key, so every limit on or above the line does.
// The chosen point is ringed and named. Each key is a dot at its mean
// rate and the burst it needs at the chosen rate, so that the chosen
// burst, drawn across as a dashed line, splits the keys it throttles
// (above) from those it spares: the bulk in grey, outliers in vermillion
// and named. The default size is 10 inches wide and as tall as the
// header above a 5.5-inch plot.
func Frontier(w io.Writer, d FrontierData, opts Options) error {
	format, err := opts.format()
	if err != nil {
		return err
	}
	if err := d.check(); err != nil {
		return err
	}
	if err := opts.checkSize(); err != nil {
		return err
	}
	pts := slices.Clone(d.Points)
	slices.SortFunc(pts, func(a, b FrontierPoint) int { return cmp.Compare(a.Rate, b.Rate) })
	chosen := slices.IndexFunc(pts, func(p FrontierPoint) bool { return p.Chosen })
	width := opts.Width
	if width == 0 {
		width = 10 * vg.Inch
	}
	h := header{
		title:    or(d.Title, "the limits that spare every ordinary key"),
		headline: d.Subtitle,
		subtitle: "x: rate (log scale) · y: burst · the line: at each rate, the smallest burst that throttles no ordinary key; every limit on or above it spares them all",
	}
	if chosen >= 0 {
		h.subtitle += fmt.Sprintf(" · each dot: a key at its mean rate, and the burst it needs at the chosen %s; above the dashed line, the chosen limit throttles it", words.Rate(pts[chosen].Rate))
	} else {
		h.subtitle += " · each dot: a key at its mean rate"
	}
	pn := frontierPanel(d, pts, chosen, width)
	fixed := 2*margin + h.height(width-2*margin) + panelGap
	height := opts.Height
	if height == 0 {
		height = fixed + 5.5*vg.Inch
	}
	height, err = figureHeight(height, fixed, []panel{pn}, "plots")
	if err != nil {
		return err
	}
	return renderFigure(w, format, width, height, h, func(body draw.Canvas) {
		drawStack(body, sideWidth(width), []panel{pn})
	})
}

// check refuses what Frontier cannot draw, saying what is wrong.
func (d FrontierData) check() error {
	if len(d.Points) == 0 {
		return errors.New("plots: a frontier with no points to draw")
	}
	chosen := 0
	seen := map[float64]bool{}
	for i, p := range d.Points {
		if !(p.Rate > 0) || math.IsInf(p.Rate, 0) {
			return fmt.Errorf("plots: frontier point %d: rate %g/s (want a positive, finite rate)", i+1, p.Rate)
		}
		if p.Burst < 0 {
			return fmt.Errorf("plots: frontier point %d (%s): burst %d (want 0 or more)", i+1, words.Rate(p.Rate), p.Burst)
		}
		if seen[p.Rate] {
			return fmt.Errorf("plots: frontier point %d: rate %s twice (want one burst per rate)", i+1, words.Rate(p.Rate))
		}
		seen[p.Rate] = true
		if p.Chosen {
			chosen++
		}
	}
	if chosen > 1 {
		return fmt.Errorf("plots: %d frontier points chosen (want at most one)", chosen)
	}
	for i, k := range d.Keys {
		if !(k.MeanRate > 0) || math.IsInf(k.MeanRate, 0) {
			return fmt.Errorf("plots: key %d (%s): mean rate %g/s (want a positive, finite rate: a key of the log has a request)", i+1, k.Name, k.MeanRate)
		}
		if k.Burst < 0 {
			return fmt.Errorf("plots: key %d (%s): burst %d (want 0 or more)", i+1, k.Name, k.Burst)
		}
	}
	return nil
}

// The frontier's marks: the line and its points in blue, the chosen
// burst a dashed black line, keys grey or, for outliers, vermillion (the
// colour of trouble).
var (
	frontierLine   = draw.LineStyle{Color: blue, Width: vg.Points(2)}
	frontierChosen = draw.LineStyle{Color: black, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(5), vg.Points(3)}}
	frontierBulk   = withAlpha(grey, 0xa0)
)

// frontierPanel is the frontier's one plot and the note beside it.
func frontierPanel(d FrontierData, pts []FrontierPoint, chosen int, width vg.Length) panel {
	lo, hi := math.Inf(1), math.Inf(-1)
	topB, lowB := 0, math.MaxInt
	for _, p := range pts {
		lo, hi = math.Min(lo, p.Rate), math.Max(hi, p.Rate)
		topB, lowB = max(topB, p.Burst), min(lowB, p.Burst)
	}
	for _, k := range d.Keys {
		lo, hi = math.Min(lo, k.MeanRate), math.Max(hi, k.MeanRate)
		topB = max(topB, k.Burst)
	}
	pad := 1.6
	if hi/lo < 3 {
		pad = 3
	}
	lo, hi = lo/pad, hi*pad

	p := newPlot()
	p.X.Scale = plot.LogScale{}
	p.X.Min, p.X.Max = lo, hi
	xt := rateTicks{}
	p.X.Tick.Marker = xt
	p.X.Label.Text = "rate (log scale)"
	var yt plot.Ticker = plot.DefaultTicks{}
	logY := float64(topB) > 20*math.Max(float64(lowB), 1)
	p.Y.Min, p.Y.Max = 0, math.Max(float64(topB), 1)*1.12
	if logY {
		p.Y.Scale = log1pScale{}
		yt = log1pTicks{}
		p.Y.Max = math.Expm1(math.Log1p(float64(topB)) * 1.08)
		p.Y.Label.Text = "burst (log scale)"
	} else {
		yt = burstTicks{}
		p.Y.Label.Text = "burst"
	}
	p.Y.Tick.Marker = yt
	p.Add(gridLines{x: xt, y: yt})

	// The frontier as steps: from each point's rate to the next, its
	// burst; past the last, the last's to the axis's end.
	var steps plotter.XYs
	for i, pt := range pts {
		if i > 0 {
			steps = append(steps, plotter.XY{X: pt.Rate, Y: float64(pts[i-1].Burst)})
		}
		steps = append(steps, plotter.XY{X: pt.Rate, Y: float64(pt.Burst)})
	}
	steps = append(steps, plotter.XY{X: hi, Y: float64(pts[len(pts)-1].Burst)})
	if chosen >= 0 {
		b := float64(pts[chosen].Burst)
		l, _ := plotter.NewLine(plotter.XYs{{X: lo, Y: b}, {X: hi, Y: b}})
		l.LineStyle = frontierChosen
		p.Add(l)
	}

	var bulk, outliers plotter.XYs
	var outlierNames []string
	spare, throttled := 0, 0
	for _, k := range d.Keys {
		xy := plotter.XY{X: k.MeanRate, Y: float64(k.Burst)}
		if chosen >= 0 {
			if k.Burst > pts[chosen].Burst {
				throttled++
			} else {
				spare++
			}
		}
		if k.Outlier {
			outliers = append(outliers, xy)
			outlierNames = append(outlierNames, k.Name)
			continue
		}
		bulk = append(bulk, xy)
	}
	if len(bulk) > 0 {
		sc, _ := plotter.NewScatter(bulk)
		sc.GlyphStyle = draw.GlyphStyle{Color: frontierBulk, Radius: vg.Points(2.5), Shape: draw.CircleGlyph{}}
		p.Add(sc)
	}
	line, _ := plotter.NewLine(steps)
	line.LineStyle = frontierLine
	p.Add(line)
	fp := make(plotter.XYs, len(pts))
	for i, pt := range pts {
		fp[i] = plotter.XY{X: pt.Rate, Y: float64(pt.Burst)}
	}
	sc, _ := plotter.NewScatter(fp)
	sc.GlyphStyle = draw.GlyphStyle{Color: blue, Radius: vg.Points(3), Shape: draw.CircleGlyph{}}
	p.Add(sc, frontierLabels{points: pts, chosen: chosen})
	var unnamed *string // how many outliers the plot had no room to name
	if len(outliers) > 0 {
		sc, _ := plotter.NewScatter(outliers)
		sc.GlyphStyle = draw.GlyphStyle{Color: vermillion, Radius: vg.Points(3.5), Shape: draw.CircleGlyph{}}
		unnamed = new(string)
		names := nameLabels{at: outliers, names: outlierNames, unnamed: unnamed}
		if chosen >= 0 {
			names.chosen = &pts[chosen]
		}
		p.Add(sc, names)
	}

	note := sideNote{heading: "Keys"}
	note.lines = append(note.lines, fmt.Sprintf("%s, %d %s", words.Count(len(d.Keys), "key", "keys"), len(outliers), words.Plural(len(outliers), "outlier", "outliers")))
	if chosen >= 0 {
		c := pts[chosen]
		note.lines = append(note.lines, fmt.Sprintf("chosen: %s, burst %d", words.Rate(c.Rate), c.Burst), fmt.Sprintf("throttles %d, spares %d", throttled, spare))
	}
	note.late = unnamed
	note.legend = []legendEntry{
		{label: "frontier: least burst sparing the bulk", thumb: lineThumb{frontierLine, true}},
		{label: "a key of the bulk", thumb: dotThumb{frontierBulk, vg.Points(2.5)}},
	}
	if len(outliers) > 0 {
		note.legend = append(note.legend, legendEntry{label: "an outlier", thumb: dotThumb{vermillion, vg.Points(3.5)}})
	}
	if chosen >= 0 {
		note.legend = append(note.legend, legendEntry{label: fmt.Sprintf("the chosen burst, %d: a key above it is throttled", pts[chosen].Burst), thumb: lineThumb{style: frontierChosen}})
	}
	return panel{plot: p, height: 5.5 * vg.Inch, side: note}
}

// rateTicks mark a log rate axis at 1, 2 and 5 × 10ⁿ per second, each
// labelled as a limit is written (30/m, 2/s); past three decades only the
// powers of ten are labelled, and past six every ⌈decades/6⌉-th of them,
// so that the labels never run together.
type rateTicks struct{}

// Ticks implements plot.Ticker.
func (rateTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) || math.IsInf(hi, 0) {
		return nil
	}
	decades := math.Log10(hi) - math.Log10(lo) // hi/lo may overflow
	sparse := decades > 3
	every := max(1, int(math.Ceil(decades/6)))
	var out []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)) && len(out) < 200; e++ {
		for _, m := range []float64{1, 2, 5} {
			v := m * math.Pow(10, e)
			if v < lo || v > hi {
				continue
			}
			offStride := int(math.Mod(math.Abs(e), float64(every))) != 0
			if (every > 1 && m != 1) || (decades > 100 && offStride) {
				continue // marks too dense to read: the powers of ten, then only the labelled ones
			}
			t := plot.Tick{Value: v, Label: words.Rate(v)}
			if sparse && (m != 1 || offStride) {
				t.Label = ""
			}
			out = append(out, t)
		}
	}
	return out
}

// burstTicks are gonum's ticks on whole bursts only.
type burstTicks struct{}

// Ticks implements plot.Ticker.
func (burstTicks) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for _, t := range (plot.DefaultTicks{}).Ticks(lo, hi) {
		if t.Value != math.Trunc(t.Value) {
			continue
		}
		if t.Label != "" {
			t.Label = strconv.FormatFloat(t.Value, 'f', 0, 64)
		}
		out = append(out, t)
	}
	return out
}

// frontierLabels writes each frontier point's burst beside it, on a white
// backing: above right, or below right where the step comes down into the
// point (the corner above is the line's), and names the chosen one,
// ringed.
type frontierLabels struct {
	points []FrontierPoint
	chosen int
}

// Plot implements plot.Plotter.
func (l frontierLabels) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	sty := textStyle(sizeNote, false, blue)
	sty.XAlign = draw.XLeft
	h := vg.Length(sty.FontExtents().Height)
	for i, pt := range l.points {
		if i == l.chosen {
			continue
		}
		x, y := trX(pt.Rate), trY(float64(pt.Burst))
		text := strconv.Itoa(pt.Burst)
		box := vg.Rectangle{Min: vg.Point{X: x + vg.Points(2), Y: y + vg.Points(3)}}
		box.Max = vg.Point{X: box.Min.X + sty.Width(text) + vg.Points(2), Y: box.Min.Y + h}
		if i > 0 && l.points[i-1].Burst > pt.Burst {
			box.Max.Y, box.Min.Y = y-vg.Points(3), y-vg.Points(3)-h
		}
		labelBacking(c, box)
		sty.YAlign = draw.YBottom
		c.FillText(sty, vg.Point{X: box.Min.X + vg.Points(1), Y: box.Min.Y}, text)
	}
	if l.chosen < 0 {
		return
	}
	pt := l.points[l.chosen]
	x, y := trX(pt.Rate), trY(float64(pt.Burst))
	// A ring, as gonum's draw.RingGlyph draws one, but 1.5 pt wide (its is
	// a fixed 0.5 pt).
	var ring vg.Path
	ring.Move(vg.Point{X: x + vg.Points(7), Y: y})
	ring.Arc(vg.Point{X: x, Y: y}, vg.Points(7), 0, 2*math.Pi)
	ring.Close()
	c.SetLineStyle(draw.LineStyle{Color: black, Width: vg.Points(1.5)})
	c.Stroke(ring)
	sty, at, box, text := chosenLabel(c, vg.Point{X: x, Y: y}, pt)
	labelBacking(c, box)
	c.FillText(sty, at, text)
}

// chosenLabel is how the chosen point, drawn at dot, is named: the text
// ("chosen: 1/s, burst 11") in its style, where it is written (above
// right of the ring, or above left near the right edge), and the box it
// covers with its backing.
func chosenLabel(c draw.Canvas, dot vg.Point, pt FrontierPoint) (sty draw.TextStyle, at vg.Point, box vg.Rectangle, text string) {
	sty = textStyle(sizeLabel, true, black)
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YBottom
	text = fmt.Sprintf("chosen: %s, burst %d", words.Rate(pt.Rate), pt.Burst)
	w := sty.Width(text)
	at = vg.Point{X: dot.X + vg.Points(8), Y: dot.Y + vg.Points(8)}
	if at.X+w > c.Max.X {
		at.X = dot.X - vg.Points(8) - w
	}
	ext := sty.FontExtents()
	box = vg.Rectangle{
		Min: vg.Point{X: at.X - vg.Points(1), Y: at.Y - vg.Length(ext.Descent)},
		Max: vg.Point{X: at.X + w + vg.Points(1), Y: at.Y + vg.Length(ext.Ascent)},
	}
	return sty, at, box, text
}

// nameLabels names points (outliers) in vermillion, the highest first, to
// the right of each (to the left near the right edge), moved down past a
// label already placed where two would overlap, with a leader line to its
// point where moved more than a line; none covers the chosen point's ring
// or name. At most maxOutlierLabels are named,
// and none below the plot's bottom: unnamed, when set, is given the count
// of the rest ("3 more not named") for the side note.
type nameLabels struct {
	at      plotter.XYs
	names   []string
	chosen  *FrontierPoint // nil: none chosen
	unnamed *string
}

// Plot implements plot.Plotter.
func (l nameLabels) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	order := make([]int, len(l.at))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(l.at[b].Y, l.at[a].Y) })
	if len(order) > maxOutlierLabels {
		order = order[:maxOutlierLabels]
	}
	sty := textStyle(sizeNote+0.5, true, vermillion)
	sty.YAlign = draw.YCenter
	ext := sty.FontExtents()
	lineH := vg.Length(ext.Height)
	var placed []vg.Rectangle
	if l.chosen != nil { // the chosen point's ring and name, placed first
		dot := vg.Point{X: trX(l.chosen.Rate), Y: trY(float64(l.chosen.Burst))}
		_, _, name, _ := chosenLabel(c, dot, *l.chosen)
		ring := vg.Rectangle{Min: vg.Point{X: dot.X - vg.Points(8), Y: dot.Y - vg.Points(8)}, Max: vg.Point{X: dot.X + vg.Points(8), Y: dot.Y + vg.Points(8)}}
		placed = append(placed, ring, name)
	}
	avoid := len(placed)
	for _, i := range order {
		name := truncate(sty, or(l.names[i], "(no name)"), 2.5*vg.Inch)
		w := sty.Width(name)
		dot := vg.Point{X: trX(l.at[i].X), Y: trY(l.at[i].Y)}
		x, y := dot.X+vg.Points(6), dot.Y
		if x+w > c.Max.X {
			x = dot.X - vg.Points(6) - w
		}
		box := func() vg.Rectangle {
			return vg.Rectangle{Min: vg.Point{X: x, Y: y - lineH/2}, Max: vg.Point{X: x + w, Y: y + lineH/2}}
		}
		for moved := true; moved; {
			moved = false
			for _, r := range placed {
				b := box()
				if b.Min.X < r.Max.X && r.Min.X < b.Max.X && b.Min.Y < r.Max.Y && r.Min.Y < b.Max.Y {
					y = r.Min.Y - lineH/2 - vg.Points(1)
					moved = true
				}
			}
		}
		leader := dot.Y-y > lineH
		if leader {
			// Moved down out of its point's reach: set further out, and a
			// leader line says whose it is.
			if x > dot.X {
				x += vg.Points(12)
			} else {
				x -= vg.Points(12)
			}
		}
		b := box()
		if b.Min.Y < c.Min.Y {
			continue // no room left below: counted, not named
		}
		placed = append(placed, b)
		if leader {
			end := vg.Point{X: b.Min.X - vg.Points(1), Y: y}
			if b.Max.X < dot.X {
				end.X = b.Max.X + vg.Points(1)
			}
			c.StrokeLine2(nameLeader, dot.X, dot.Y, end.X, end.Y)
		}
		labelBacking(c, b)
		c.FillText(sty, vg.Point{X: x, Y: y}, name)
	}
	if l.unnamed != nil {
		*l.unnamed = ""
		if n := len(l.at) - (len(placed) - avoid); n > 0 {
			*l.unnamed = fmt.Sprintf("%d more %s not named", n, words.Plural(n, "outlier", "outliers"))
		}
	}
}

// nameLeader joins an outlier's name, moved down past others, to its dot.
var nameLeader = draw.LineStyle{Color: withAlpha(vermillion, 0xa0), Width: vg.Points(0.6)}

// dotThumb is a legend thumbnail of a dot.
type dotThumb struct {
	colour color.Color
	radius vg.Length
}

// Thumbnail implements plot.Thumbnailer.
func (t dotThumb) Thumbnail(c *draw.Canvas) {
	c.DrawGlyph(draw.GlyphStyle{Color: t.colour, Radius: t.radius, Shape: draw.CircleGlyph{}}, vg.Point{X: (c.Min.X + c.Max.X) / 2, Y: (c.Min.Y + c.Max.Y) / 2})
}
