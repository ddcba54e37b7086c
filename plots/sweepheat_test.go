package plots

import (
	"bytes"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// sweepHeatData is a two-field sweep written out by hand: rejections by
// burst (rows) and rate (columns), one run with no value.
func sweepHeatData() SweepHeatData {
	d := SweepHeatData{
		Scenario: "login-stuffing", Figure: "rejected_pct", Unit: "%",
		RowField: "burst", ColField: "rate",
		Rows:       []string{"1", "5", "10", "50"},
		Cols:       []string{"1/s", "2/s", "5/s", "10/s", "1200/m"},
		CurrentRow: 2, CurrentCol: 1,
	}
	for r := range d.Rows {
		var row []float64
		for c := range d.Cols {
			row = append(row, math.Round(800/float64((r+1)*(c+2)))/10)
		}
		d.Values = append(d.Values, row)
	}
	d.Values[3][4] = math.NaN()
	return d
}

func TestSweepHeatGolden(t *testing.T) {
	var b bytes.Buffer
	if err := SweepHeat(&b, sweepHeatData(), Options{Format: "svg"}); err != nil {
		t.Fatal(err)
	}
	wantGolden(t, "sweep-heat.golden.svg", b.Bytes())
	checkSVG(t, "sweep heat", b.Bytes(), nil)
	got := texts(b.Bytes())
	// The axes titled with the fields, the values as typed, the cells
	// labelled, the scale's ends stated, the current cell named.
	for _, want := range []string{"burst", "rate", "1200/m", "40%", "4%", "rejected_pct", "linear", "outlined: the scenario as given, the file and its flags (burst 10, rate 2/s)", "colour: linear from 4% (palest) to 40% (vermillion)"} {
		if !slices.Contains(got, want) && !strings.Contains(strings.Join(got, " "), want) {
			t.Errorf("the SVG has no text %q", want)
		}
	}
	var p bytes.Buffer
	if err := SweepHeat(&p, sweepHeatData(), Options{}); err != nil {
		t.Fatal(err)
	}
	img := checkPNG(t, "sweep heat", p.Bytes(), 0, 0)
	if !hasColour(img, vermillion) {
		t.Error("the hottest cell is not vermillion")
	}
	review(t, "sweep-heat.png", p.Bytes())

	// A ratio is drawn on CompareGrid's scale; 32 × 32 fits.
	big := SweepHeatData{Scenario: "runaway-healthcheck", Figure: "admitted_ratio", Unit: "×", RowField: "servers", ColField: "limit.burst", CurrentRow: 0, CurrentCol: 9}
	for i := range 32 {
		big.Rows = append(big.Rows, strconv.Itoa(i+1))
		big.Cols = append(big.Cols, strconv.Itoa((i+1)*5))
	}
	for r := range big.Rows {
		var row []float64
		for c := range big.Cols {
			row = append(row, 1+float64(r)*float64(c+1)/64)
		}
		big.Values = append(big.Values, row)
	}
	p.Reset()
	if err := SweepHeat(&p, big, Options{}); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, "32 × 32", p.Bytes(), 0, 0)
	review(t, "sweep-heat-32.png", p.Bytes())

	// No current cell: none outlined, and the subtitle names none; one
	// value everywhere still draws (the middle of the scale).
	flat := sweepHeatData()
	flat.CurrentRow, flat.CurrentCol = -1, -1
	for r := range flat.Values {
		for c := range flat.Values[r] {
			flat.Values[r][c] = 7
		}
	}
	var s bytes.Buffer
	if err := SweepHeat(&s, flat, Options{Format: "svg"}); err != nil {
		t.Fatal(err)
	}
	if all := strings.Join(texts(s.Bytes()), " "); strings.Contains(all, "outlined") || !strings.Contains(all, "colour: every run has 7%") {
		t.Errorf("a flat map without a current cell: %s", all)
	}
	// The drawing too: the current cell's outline (currentOutline, black
	// 2.5 pt) once in the golden's map, never without a current cell.
	const outline = "fill:none;stroke:#000000;stroke-width:2.5"
	if n := strings.Count(b.String(), outline); n != 1 {
		t.Errorf("the map with a current cell has %d outlines, want 1", n)
	}
	if n := strings.Count(s.String(), outline); n != 0 {
		t.Errorf("the map without a current cell has %d outlines", n)
	}
}

func TestSweepHeatRefusesWhatItCannotDraw(t *testing.T) {
	nan := sweepHeatData()
	for r := range nan.Values {
		for c := range nan.Values[r] {
			nan.Values[r][c] = math.NaN()
		}
	}
	ragged := sweepHeatData()
	ragged.Values[1] = ragged.Values[1][:3]
	short := sweepHeatData()
	short.Values = short.Values[:2]
	inf := sweepHeatData()
	inf.Values[0][0] = math.Inf(-1)
	cur := sweepHeatData()
	cur.CurrentCol = 5
	wide := sweepHeatData()
	wide.Cols = make([]string, 33)
	negRatio := sweepHeatData()
	negRatio.Unit = "×"
	negRatio.Values[0][1] = -1
	for _, tt := range []struct {
		name string
		d    SweepHeatData
		opts Options
		msg  string
	}{
		{"nothing", SweepHeatData{}, Options{}, "at least one row and one column"},
		{"all NaN", nan, Options{}, "no run has a value of rejected_pct"},
		{"ragged", ragged, Options{}, "row 2 (5) has 3 values for 5 columns"},
		{"short", short, Options{}, "2 rows of values for 4 values of burst"},
		{"infinite", inf, Options{}, "the cell at 1, 1/s is -Inf"},
		{"current outside", cur, Options{}, "current cell 2, 5 is outside the 4 × 5 map"},
		{"33 columns", wide, Options{}, "4 × 33 values (at most 32 a side)"},
		{"a negative ratio", negRatio, Options{}, "the cell at 1, 2/s is -1× (want a ratio of 0 or more"},
		{"a negative height", sweepHeatData(), Options{Height: -1}, "not positive"},
		{"a format", sweepHeatData(), Options{Format: "gif"}, "unknown format"},
	} {
		var b bytes.Buffer
		err := SweepHeat(&b, tt.d, tt.opts)
		if err == nil || !strings.HasPrefix(err.Error(), "plots: ") || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s: %v, want a plots: error saying %q", tt.name, err, tt.msg)
		}
	}
}

// A cell with no value is hatched, so that it is not read as the scale's
// palest colour (the smallest value, or 1× for a ratio): the one NaN
// cell of sweepHeatData has hatch lines, a map without one none.
func TestSweepHeatHatchesCellsWithNoValue(t *testing.T) {
	const hatchStroke = "stroke-opacity:0.25098;stroke-width:1.1" // textGrey at 0x40, hatch's width
	for _, unit := range []string{"%", "×"} {
		d := sweepHeatData()
		d.Unit = unit
		var b bytes.Buffer
		if err := SweepHeat(&b, d, Options{Format: "svg"}); err != nil {
			t.Fatal(err)
		}
		if n := hatchLines(b.String(), hatchStroke); n < 3 {
			t.Errorf("unit %q: %d hatch lines in the one cell with no value", unit, n)
		}
		if all := strings.Join(texts(b.Bytes()), " "); !strings.Contains(all, "hatched: the run has no value") {
			t.Errorf("unit %q: the subtitle does not say what hatched is: %s", unit, all)
		}
		d.Values[3][4] = 1
		b.Reset()
		if err := SweepHeat(&b, d, Options{Format: "svg"}); err != nil {
			t.Fatal(err)
		}
		if n := hatchLines(b.String(), hatchStroke); n != 0 {
			t.Errorf("unit %q: %d hatch lines with every cell a value", unit, n)
		}
	}
}

// hatchLines counts the lines of the SVG's paths stroked with style: a
// path's every M (move) starts one.
func hatchLines(svg, style string) int {
	n := 0
	for _, m := range regexp.MustCompile(`<path d="([^"]*)" style="[^"]*`+regexp.QuoteMeta(style)).FindAllStringSubmatch(svg, -1) {
		n += strings.Count(m[1], "M")
	}
	return n
}
