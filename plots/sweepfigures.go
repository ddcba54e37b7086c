package plots

import (
	"errors"
	"fmt"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ratelim/ratelim/internal/words"
)

// SweepFigure is one figure of every run of a sweep: its name as `ratelim
// check` and `ratelim sweep --figure` write it ("rejected_pct",
// "max_allowed_1s:web"), its unit ("%", "req", "×" for a ratio to the
// exact limiter), and its value in each run, in the order of the sweep's
// values; NaN where the run has none.
type SweepFigure struct {
	Name, Unit string
	Values     []float64
}

// SweepFiguresData is a sweep over one field and the figures drawn of it.
type SweepFiguresData struct {
	// Scenario and Field name the run and what it varied; the title.
	Scenario, Field string
	// Values are the field's values as typed, in the order given.
	Values []string
	// Current is the index in Values of the scenario as given (the file
	// and its flags), marked in every panel; -1 when it is no run.
	Current int
	// Figures are drawn a panel each, top down, at most maxSweepFigures.
	Figures []SweepFigure
}

// maxSweepFigures is the most panels SweepFigures stacks: past six, each
// is too short to read at any height the CLI picks.
const maxSweepFigures = 6

// SweepFigures draws a sweep of one field as a stack of panels, one per
// figure, on one x axis: the values in the order given, spaced evenly and
// labelled as typed (as Sweep does: "0" to "never" is no numeric axis).
// Each panel is the figure's line through its points, every point
// labelled with its value, the panel named with the figure and its unit
// beside it; a run with no value (NaN) breaks the line. The value of the
// scenario as given (the file and its flags) is a dashed vertical line
// through every panel, labelled "as given", so that which way a change
// moves a figure reads at a glance.
// The default size is 8 inches wide, more past a dozen values, and as
// tall as the panels need.
func SweepFigures(w io.Writer, d SweepFiguresData, opts Options) error {
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
	n := len(d.Values)
	width := opts.Width
	if width == 0 {
		width = max(8*vg.Inch, 2*margin+sideWidth(8*vg.Inch)+0.9*vg.Inch+vg.Length(n)*0.42*vg.Inch)
	}
	field := or(d.Field, "the field")
	h := header{
		title:    fmt.Sprintf("%s: what a sweep of %s does to %d %s", or(d.Scenario, "unnamed scenario"), field, len(d.Figures), words.Plural(len(d.Figures), "figure", "figures")),
		subtitle: fmt.Sprintf("x: each value of %s, in the order given, evenly spaced · each panel: one figure of each run, labelled · a gap: the run has no value", field),
	}
	if opts.Caption != nil && opts.Caption.Limit != "" {
		// The limit every run had (or which part of it the sweep set).
		h.subtitle = opts.Caption.Limit + " · " + h.subtitle
	}
	if d.Current >= 0 {
		h.legend = []legendEntry{{label: fmt.Sprintf("as given: the file and its flags, %s %s", field, d.Values[d.Current]), thumb: lineThumb{style: sweepCurrent}}}
	}
	panels := sweepFigurePanels(d, width)
	fixed := 2*margin + h.height(width-2*margin) + panelGap
	height, err := figureHeight(opts.Height, fixed, panels, "figures")
	if err != nil {
		return err
	}
	return renderFigure(w, format, width, height, h, func(body draw.Canvas) {
		drawStack(body, sideWidth(width), panels)
	})
}

// check refuses what SweepFigures cannot draw, saying what is wrong.
func (d SweepFiguresData) check() error {
	switch {
	case len(d.Values) == 0:
		return errors.New("plots: a sweep with no values to draw")
	case len(d.Values) > maxSweepPoints:
		return fmt.Errorf("plots: %d sweep values (at most %d)", len(d.Values), maxSweepPoints)
	case len(d.Figures) == 0:
		return errors.New("plots: a sweep with no figures to draw")
	case len(d.Figures) > maxSweepFigures:
		return fmt.Errorf("plots: %d sweep figures (at most %d, a panel each)", len(d.Figures), maxSweepFigures)
	case d.Current < -1 || d.Current >= len(d.Values):
		return fmt.Errorf("plots: the current value %d is not one of the %d values (want 0 to %d, or -1 for none)", d.Current, len(d.Values), len(d.Values)-1)
	}
	some := false
	for _, f := range d.Figures {
		if len(f.Values) != len(d.Values) {
			return fmt.Errorf("plots: figure %s has %d values for %d runs (want one each, NaN for none)", or(f.Name, "(unnamed)"), len(f.Values), len(d.Values))
		}
		for i, v := range f.Values {
			if math.IsInf(v, 0) {
				return fmt.Errorf("plots: figure %s at %s is %g (want a finite value, or NaN for none)", or(f.Name, "(unnamed)"), d.Values[i], v)
			}
			some = some || !math.IsNaN(v)
		}
	}
	if !some {
		return errors.New("plots: no run has a value of any figure to draw")
	}
	return nil
}

// The sweep's figure lines and the mark of the scenario as given.
var (
	sweepFigureLine = draw.LineStyle{Color: blue, Width: vg.Points(1.75)}
	sweepCurrent    = draw.LineStyle{Color: black, Width: vg.Points(1.25), Dashes: []vg.Length{vg.Points(5), vg.Points(3)}}
)

// sweepFigurePanels lays out a panel per figure, the bottom one labelling
// the shared x axis with the values.
func sweepFigurePanels(d SweepFiguresData, width vg.Length) []panel {
	n := len(d.Values)
	// The values' labels must fit their columns: one size for all.
	colW := (width - 2*margin - sideWidth(width) - 0.9*vg.Inch) / vg.Length(n)
	labelSize := vg.Length(sizeLabel)
	labels := make([]string, n)
	for i, v := range d.Values {
		l, sty := fitLabel(v, sizeLabel, false, colW-vg.Points(3))
		labels[i] = l
		labelSize = min(labelSize, sty.Font.Size)
	}
	// Two slices: unlabelled blanks the labels of the ticks it is given,
	// in place.
	var ticks, marks []plot.Tick
	for i := range d.Values {
		ticks = append(ticks, plot.Tick{Value: float64(i), Label: labels[i]})
		marks = append(marks, plot.Tick{Value: float64(i)})
	}
	tall := 1.6 * vg.Inch
	if len(d.Figures) <= 2 {
		tall = 2.2 * vg.Inch
	}
	var panels []panel
	for _, f := range d.Figures {
		p := newPlot()
		p.X.Min, p.X.Max = -0.5, float64(n)-0.5
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, v := range f.Values {
			if !math.IsNaN(v) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
		if math.IsInf(lo, 1) { // no value at all: an empty panel that says so
			lo, hi = 0, 1
		}
		lo = math.Min(lo, 0)
		hi = math.Max(hi, 0)
		if hi == lo {
			hi = lo + 1
		}
		p.Y.Min, p.Y.Max = lo, hi+(hi-lo)*0.22 // room for the labels above
		var yt plot.Ticker = figureTicks{unit: f.Unit}
		if f.Unit == "×" {
			yt = ratioTicks{} // 0.5×, 1×, 1.5×: steps a ratio is read in
		}
		// The room above is for the points' labels: a tick there would
		// read as a value the figure reaches ("120%"). 100% is labelled
		// where the axis reaches it.
		top := hi
		if f.Unit == "%" && hi < 100 && 100 <= p.Y.Max {
			top = 100
		}
		yt = labelledUpTo{ticks: yt, top: top}
		p.Y.Tick.Marker = yt
		p.X.Tick.Marker = plot.ConstantTicks(marks)
		p.Add(gridLines{y: yt})
		if f.Unit == "×" && hi >= 1 {
			// A ratio to the exact limiter: 1 is the line to read it by.
			exact, _ := plotter.NewLine(plotter.XYs{{X: p.X.Min, Y: 1}, {X: p.X.Max, Y: 1}})
			exact.LineStyle = sweepExact
			p.Add(exact, lineLabel{y: 1, text: "1× = exact", below: true})
		}
		if d.Current >= 0 {
			p.Add(currentLine{x: float64(d.Current)})
		}
		runs := segments(f.Values, math.IsNaN) // a run with no value breaks the line
		for _, r := range runs {
			if len(r) > 1 {
				l, _ := plotter.NewLine(r)
				l.LineStyle = sweepFigureLine
				p.Add(l)
			}
			sc, _ := plotter.NewScatter(r)
			sc.GlyphStyle = draw.GlyphStyle{Color: blue, Radius: vg.Points(2.75), Shape: draw.CircleGlyph{}}
			p.Add(sc)
		}
		p.Add(figureLabels{values: f.Values, unit: f.Unit, current: d.Current})
		heading := or(f.Name, "(unnamed)")
		if f.Unit != "" {
			heading += " (" + f.Unit + ")"
		}
		note := sideNote{heading: heading}
		if d.Current >= 0 && !math.IsNaN(f.Values[d.Current]) {
			note.lines = append(note.lines, "as given: "+figureLabel(f.Values[d.Current], f.Unit))
		}
		if lo, hi, ok := extremes(f.Values); ok && lo != hi {
			note.lines = append(note.lines,
				fmt.Sprintf("lowest %s at %s", figureLabel(f.Values[lo], f.Unit), d.Values[lo]),
				fmt.Sprintf("highest %s at %s", figureLabel(f.Values[hi], f.Unit), d.Values[hi]))
		}
		if runs == nil {
			note.lines = append(note.lines, "no run has this figure")
		}
		panels = append(panels, panel{plot: p, height: max(tall, note.height(noteWidth(width))+0.2*vg.Inch), side: note})
	}
	last := panels[len(panels)-1]
	last.plot.X.Tick.Marker = plot.ConstantTicks(ticks)
	last.plot.X.Tick.Label.Font = sans(labelSize, false)
	last.plot.X.Label.Text = or(d.Field, "the field") + ", as typed"
	panels[len(panels)-1].height += 0.4 * vg.Inch
	return panels
}

// extremes are the indexes of the smallest and the largest value that is
// not NaN, the first of each; ok is false when every value is NaN.
func extremes(values []float64) (lo, hi int, ok bool) {
	lo, hi = -1, -1
	for i, v := range values {
		if math.IsNaN(v) {
			continue
		}
		if lo < 0 || v < values[lo] {
			lo = i
		}
		if hi < 0 || v > values[hi] {
			hi = i
		}
	}
	return lo, hi, lo >= 0
}

// figureTicks are a figure panel's y ticks: gonum's, labelled as the
// figure's values are ("12.5%", "1.5×", "4,960").
type figureTicks struct{ unit string }

// Ticks implements plot.Ticker.
func (t figureTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ticks {
		if ticks[i].Label != "" {
			// Ticks are round: "1.5×", not a cell's "1.50×".
			ticks[i].Label = compactNumber(ticks[i].Value)
			if t.unit == "×" || t.unit == "%" {
				ticks[i].Label += t.unit
			}
		}
	}
	return ticks
}

// labelledUpTo is ticks spaced for the axis up to top and none above it:
// the axis's room above top is left unmarked.
type labelledUpTo struct {
	ticks plot.Ticker
	top   float64
}

// Ticks implements plot.Ticker.
func (t labelledUpTo) Ticks(lo, hi float64) []plot.Tick {
	if t.top > lo && t.top < hi {
		hi = t.top
	}
	return t.ticks.Ticks(lo, hi)
}

// currentLine is the dashed vertical line at the value of the scenario
// as given, labelled "as given" at its top.
type currentLine struct{ x float64 }

// Plot implements plot.Plotter.
func (l currentLine) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	x := trX(l.x)
	c.StrokeLine2(sweepCurrent, x, c.Min.Y, x, c.Max.Y)
	sty := textStyle(sizeNote-0.5, true, black)
	sty.YAlign = draw.YTop
	sty.XAlign = draw.XLeft
	text := "as given"
	w := sty.Width(text)
	tx := x + vg.Points(3)
	if tx+w > c.Max.X { // no room to the right: to the left of the line
		tx = x - vg.Points(3) - w
	}
	ext := sty.FontExtents()
	top := c.Max.Y - vg.Points(1.5)
	labelBacking(c, vg.Rectangle{Min: vg.Point{X: tx - vg.Points(1), Y: top - vg.Length(ext.Height)}, Max: vg.Point{X: tx + w + vg.Points(1), Y: top}})
	c.FillText(sty, vg.Point{X: tx, Y: top}, text)
}

// figureLabels writes each point's value above it, on a white backing so
// that it reads over the line. The labels share one size, the largest
// that fits a column; where even 6 points does not fit, only every k-th
// is written, k the fewest columns the widest label fits (see
// strideLabels): the scenario as given's value and the last always.
type figureLabels struct {
	values  []float64
	unit    string
	current int
}

// Plot implements plot.Plotter.
func (l figureLabels) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	colW := trX(1) - trX(0)
	size := vg.Length(sizeNote + 0.5)
	widest := func(sty draw.TextStyle) vg.Length {
		var w vg.Length
		for _, v := range l.values {
			w = max(w, sty.Width(figureLabel(v, l.unit)))
		}
		return w
	}
	for size > 6 && widest(textStyle(size, true, textGrey)) > colW-vg.Points(2) {
		size -= 0.5
	}
	sty := textStyle(size, true, black)
	shown := strideLabels(len(l.values), l.current, widest(sty)+vg.Points(2), colW)
	for i, v := range l.values {
		if math.IsNaN(v) || !shown[i] {
			continue
		}
		pointLabel(c, sty, vg.Point{X: trX(float64(i)), Y: trY(v)}, vg.Points(5), vg.Points(1), figureLabel(v, l.unit))
	}
}

// strideLabels says which of n columns colW wide get a label widest wide:
// every k-th from the first, k the smallest stride at which a label fits
// (widest <= k·colW), and always the current (when not -1) and the last,
// the k-th labels within k columns of either left out so that none
// overprints them.
func strideLabels(n, current int, widest, colW vg.Length) []bool {
	k := 1
	if colW > 0 {
		k = max(1, int(math.Ceil(float64(widest/colW)-1e-9)))
	}
	k = min(k, max(n, 1))
	shown := make([]bool, n)
	near := func(i, j int) bool { return j >= 0 && i != j && i > j-k && i < j+k }
	for i := 0; i < n; i += k {
		shown[i] = !near(i, current) && !near(i, n-1)
	}
	if n > 0 {
		shown[n-1] = !near(n-1, current)
	}
	if current >= 0 {
		shown[current] = true
	}
	return shown
}
