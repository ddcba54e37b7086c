package plots

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ratelim/ratelim/internal/words"
)

// SweepHeatData is a sweep over two fields (`ratelim sweep SCENARIO
// F1=VALUES F2=VALUES`) and one figure of each run.
type SweepHeatData struct {
	// Scenario names the run; Figure and Unit what each cell holds
	// ("rejected_pct", "%"; a Unit of "×" is a ratio to the exact
	// limiter, drawn on CompareGrid's fixed scale).
	Scenario, Figure, Unit string
	// RowField and ColField are the fields swept down the rows and across
	// the columns, and title the axes.
	RowField, ColField string
	// Rows and Cols are the values as typed, in the order given.
	Rows, Cols []string
	// Values are the figure of each run, [row][col]; NaN where the run
	// has none (the cell is left unfilled, hatched). A ratio ("×") is 0
	// or more.
	Values [][]float64
	// CurrentRow and CurrentCol are the cell of the scenario's own values,
	// outlined; -1 in either when the scenario's value is not among them.
	CurrentRow, CurrentCol int
}

// maxHeatSide is the most rows or columns SweepHeat draws: a sweep's most
// values on one axis.
const maxHeatSide = 32

// SweepHeat draws a two-field sweep as a heat map: a row per value of
// RowField, a column per value of ColField, each cell coloured by the
// figure and labelled with it, NaN cells unfilled and hatched faintly
// (so that no blank reads as the palest colour, 1× or the smallest
// value) and the cell of the scenario as given outlined. A ratio (Unit
// "×") is coloured on CompareGrid's scale, the same for every figure
// (white is exact, hotter admitted more); any
// other figure on a linear scale from its smallest value (near-white) to
// its largest (vermillion), the bar beside the map stating both ends.
// The default size grows with the rows and columns.
func SweepHeat(w io.Writer, d SweepHeatData, opts Options) error {
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
	g := &grid{
		rows: d.Rows, cols: d.Cols, v: d.Values,
		rowTitle: or(d.RowField, "rows"), colTitle: or(d.ColField, "columns"),
		blankNaN: true, currentRow: d.CurrentRow, currentCol: d.CurrentCol,
	}
	g.given = make([][]bool, len(d.Rows))
	g.note = make([][]int, len(d.Rows))
	for r := range d.Rows {
		g.given[r] = make([]bool, len(d.Cols))
		g.note[r] = make([]int, len(d.Cols))
		for c := range g.given[r] {
			g.given[r][c] = true
		}
	}
	var scaleText string
	if d.Unit == "×" {
		g.scale = ratioScale{name: d.Figure}
		scaleText = "colour: one scale for every ratio, white is exact (1×), hotter admitted more, blue less"
	} else {
		ls := newLinearScale(d.Values, d.Unit, d.Figure)
		g.scale = ls
		scaleText = fmt.Sprintf("colour: linear from %s (palest) to %s (vermillion)", ls.label(ls.lo), ls.label(ls.hi))
		if ls.lo == ls.hi {
			scaleText = "colour: every run has " + ls.label(ls.lo)
		}
	}
	figure := or(d.Figure, "the figure")
	if d.Unit != "" {
		figure += " (" + d.Unit + ")"
	}
	h := header{
		title:    fmt.Sprintf("%s: %s over %s × %s", or(d.Scenario, "unnamed scenario"), figure, g.rowTitle, g.colTitle),
		subtitle: fmt.Sprintf("each cell: one run's %s · %s · hatched: the run has no value", or(d.Figure, "figure"), scaleText),
	}
	if opts.Caption != nil && opts.Caption.Limit != "" {
		// The limit every run had (or which part of it the sweep set).
		h.subtitle = opts.Caption.Limit + " · " + h.subtitle
	}
	if d.CurrentRow >= 0 && d.CurrentCol >= 0 {
		h.subtitle += fmt.Sprintf(" · outlined: the scenario as given, the file and its flags (%s %s, %s %s)", g.rowTitle, d.Rows[d.CurrentRow], g.colTitle, d.Cols[d.CurrentCol])
	}
	// A column as wide as its widest label needs, at least half an inch.
	colW := 0.55 * vg.Inch
	for _, c := range d.Cols {
		colW = max(colW, textWidth(textStyle(sizeLabel, false, black), c)+vg.Points(8))
	}
	for _, row := range d.Values {
		for _, v := range row {
			colW = max(colW, textWidth(textStyle(sizeLabel+1, true, black), g.scale.label(v))+vg.Points(16))
		}
	}
	colW = min(colW, 1.25*vg.Inch)
	rowH := 0.5 * vg.Inch
	if len(d.Rows) > 8 {
		rowH = 0.3 * vg.Inch
	}
	width, height := opts.Width, opts.Height
	if width == 0 {
		width = max(6*vg.Inch, 2*margin+g.rowLabelWidth()+0.5*vg.Inch+vg.Length(len(d.Cols))*colW+barRoom)
	}
	if height == 0 {
		height = max(3.5*vg.Inch, 2*margin+h.height(width-2*margin)+vg.Length(len(d.Rows))*rowH+0.75*vg.Inch)
	}
	return render(w, format, width, height, func(dc draw.Canvas) { g.draw(dc, h) })
}

// check refuses what SweepHeat cannot draw, saying what is wrong.
func (d SweepHeatData) check() error {
	if len(d.Rows) == 0 || len(d.Cols) == 0 {
		return errors.New("plots: a sweep heat map needs at least one row and one column")
	}
	if len(d.Rows) > maxHeatSide || len(d.Cols) > maxHeatSide {
		return fmt.Errorf("plots: a sweep heat map of %d × %d values (at most %d a side)", len(d.Rows), len(d.Cols), maxHeatSide)
	}
	if len(d.Values) != len(d.Rows) {
		return fmt.Errorf("plots: %d rows of values for %d values of %s (want one row each)", len(d.Values), len(d.Rows), or(d.RowField, "the rows"))
	}
	some := false
	for r, row := range d.Values {
		if len(row) != len(d.Cols) {
			return fmt.Errorf("plots: row %d (%s) has %d values for %d columns (want one each)", r+1, d.Rows[r], len(row), len(d.Cols))
		}
		for c, v := range row {
			if math.IsInf(v, 0) {
				return fmt.Errorf("plots: the cell at %s, %s is %g (want a finite value, or NaN for none)", d.Rows[r], d.Cols[c], v)
			}
			if d.Unit == "×" && v < 0 {
				return fmt.Errorf("plots: the cell at %s, %s is %g× (want a ratio of 0 or more, or NaN for none)", d.Rows[r], d.Cols[c], v)
			}
			some = some || !math.IsNaN(v)
		}
	}
	if !some {
		return fmt.Errorf("plots: no run has a value of %s to draw", or(d.Figure, "the figure"))
	}
	if (d.CurrentRow < -1 || d.CurrentRow >= len(d.Rows)) || (d.CurrentCol < -1 || d.CurrentCol >= len(d.Cols)) {
		return fmt.Errorf("plots: the current cell %d, %d is outside the %d × %d map (want -1 for none)", d.CurrentRow, d.CurrentCol, len(d.Rows), len(d.Cols))
	}
	return nil
}

// linearScale colours a figure's values on the warm half of heat's scale,
// linearly from the smallest (near-white) to the largest (vermillion).
type linearScale struct {
	lo, hi       float64
	unit, figure string
}

func newLinearScale(values [][]float64, unit, figure string) linearScale {
	s := linearScale{lo: math.Inf(1), hi: math.Inf(-1), unit: unit, figure: figure}
	for _, row := range values {
		for _, v := range row {
			if !math.IsNaN(v) {
				s.lo, s.hi = math.Min(s.lo, v), math.Max(s.hi, v)
			}
		}
	}
	return s
}

func (s linearScale) at(v float64) float64 {
	switch {
	case math.IsNaN(v):
		return math.NaN()
	case s.hi == s.lo:
		return 0.5 // one value everywhere: the middle, neither end
	}
	return math.Max(0, math.Min(1, (v-s.lo)/(s.hi-s.lo)))
}

func (s linearScale) label(v float64) string { return figureLabel(v, s.unit) }

// drawBar draws the warm half of the scale, its two ends and middle
// labelled with the values they stand for.
func (s linearScale) drawBar(c draw.Canvas, bar vg.Rectangle) {
	if bar.Max.Y-bar.Min.Y < vg.Points(20) {
		return
	}
	const slices = 64
	hgt := (bar.Max.Y - bar.Min.Y) / slices
	for i := range slices {
		t := (float64(i) + 0.5) / slices
		y0 := bar.Min.Y + vg.Length(i)*hgt
		c.FillPolygon(heat(t), []vg.Point{{X: bar.Min.X, Y: y0}, {X: bar.Max.X, Y: y0}, {X: bar.Max.X, Y: y0 + hgt + 0.3}, {X: bar.Min.X, Y: y0 + hgt + 0.3}})
	}
	outline := draw.LineStyle{Color: textGrey, Width: vg.Points(0.5)}
	c.StrokeLines(outline, []vg.Point{bar.Min, {X: bar.Max.X, Y: bar.Min.Y}, bar.Max, {X: bar.Min.X, Y: bar.Max.Y}, bar.Min})
	sty := noteStyle
	sty.YAlign = draw.YCenter
	marks := []float64{0, 0.5, 1}
	if s.hi == s.lo {
		marks = []float64{0.5}
	}
	for _, f := range marks {
		y := bar.Min.Y + vg.Length(f)*(bar.Max.Y-bar.Min.Y)
		c.StrokeLine2(outline, bar.Max.X, y, bar.Max.X+vg.Points(3), y)
		c.FillText(sty, vg.Point{X: bar.Max.X + vg.Points(5), Y: y}, s.label(s.lo+f*(s.hi-s.lo)))
	}
	head := textStyle(sizeNote, true, black)
	c.FillText(head, vg.Point{X: bar.Min.X, Y: bar.Max.Y + lineHeight(noteStyle)*1.9}, truncate(head, or(s.figure, "figure"), barRoom-vg.Points(4)))
	c.FillText(noteStyle, vg.Point{X: bar.Min.X, Y: bar.Max.Y + lineHeight(noteStyle)*0.9}, "linear")
}

// figureLabel writes a figure's value for a label: a ratio as "1.25×", a
// percentage as "12.5%", a whole number with thousands separators
// ("4,960"), any other number to about three figures; "" for NaN.
func figureLabel(v float64, unit string) string {
	switch {
	case math.IsNaN(v):
		return ""
	case math.IsInf(v, 1):
		return "∞"
	case math.IsInf(v, -1):
		return "-∞"
	case unit == "×":
		return ratioLabel(v)
	}
	s := compactNumber(v)
	if unit == "%" {
		s += "%"
	}
	return s
}

// compactNumber writes v to three significant figures, trailing zeros
// dropped: whole numbers and anything from 100 up in full with thousands
// separators (123.4 as 123), 12.34 as 12.3, 1.5 as 1.5, 0.01234 as 0.0123.
func compactNumber(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e15:
		return strconv.FormatFloat(v, 'g', 3, 64)
	case v == math.Trunc(v) || a >= 100:
		return words.Thousands(int64(math.Round(v)))
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}
