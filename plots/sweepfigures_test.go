package plots

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
)

// sweepFiguresData is a burst sweep written out by hand, so that the
// golden changes only when the drawing does: rejections fall as the burst
// grows, the worst second rises, p99 has no value at burst 1.
func sweepFiguresData() SweepFiguresData {
	return SweepFiguresData{
		Scenario: "login-stuffing", Field: "burst",
		Values:  []string{"1", "2", "5", "10", "20", "50"},
		Current: 3,
		Figures: []SweepFigure{
			{Name: "rejected_pct", Unit: "%", Values: []float64{66.7, 59.7, 41.2, 30.05, 18.4, 9.9}},
			{Name: "max_allowed_1s", Unit: "req", Values: []float64{2, 3, 6, 11, 21, 51}},
			{Name: "p99_ms", Unit: "ms", Values: []float64{math.NaN(), 1.5, 1.5, 2.25, 3.1, 3.1}},
		},
	}
}

// wantGolden compares b with testdata/name, rewriting it under -update.
func wantGolden(t *testing.T, name string, b []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./plots -run Golden -update to create it)", err)
	}
	if !bytes.Equal(b, want) {
		t.Fatalf("%s differs (go test ./plots -run Golden -update rewrites it)", path)
	}
}

// review leaves a PNG for a person to look at (see reviewDir).
func review(t *testing.T, name string, png []byte) {
	if dir := reviewDir(t); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
			t.Log(err)
		}
	}
}

func TestSweepFiguresGolden(t *testing.T) {
	var b bytes.Buffer
	if err := SweepFigures(&b, sweepFiguresData(), Options{Format: "svg"}); err != nil {
		t.Fatal(err)
	}
	wantGolden(t, "sweep-figures.golden.svg", b.Bytes())
	checkSVG(t, "sweep figures", b.Bytes(), nil)
	got := texts(b.Bytes())
	// Every panel named with its unit, every point labelled, the values
	// as typed in order, the scenario's own value marked in each panel.
	for _, want := range []string{"rejected_pct (%)", "max_allowed_1s (req)", "p99_ms (ms)", "66.7%", "30.1%", "9.9%", "lowest 9.9% at 50", "51", "2.25", "burst, as given", "as written: 30.1%"} {
		if !slices.Contains(got, want) {
			t.Errorf("the SVG has no text %q", want)
		}
	}
	var ticks []string
	for _, s := range got {
		if slices.Contains(sweepFiguresData().Values, s) {
			ticks = append(ticks, s)
		}
	}
	if want := sweepFiguresData().Values; !strings.Contains(" "+strings.Join(ticks, " ")+" ", " "+strings.Join(want, " ")+" ") {
		t.Errorf("the texts that are values read %v, want %v in a row (the x axis)", ticks, want)
	}
	if n := strings.Count(strings.Join(got, "\n")+"\n", "as written\n"); n != 3 {
		t.Errorf("%d panels mark the scenario's own value, want 3", n)
	}

	var p bytes.Buffer
	if err := SweepFigures(&p, sweepFiguresData(), Options{}); err != nil {
		t.Fatal(err)
	}
	img := checkPNG(t, "sweep figures", p.Bytes(), 0, 0)
	if !hasColour(img, blue) {
		t.Error("the PNG has no figure line")
	}
	review(t, "sweep-figures.png", p.Bytes())
}

// 32 values stay legible: every value is a tick label.
func TestSweepFiguresManyValues(t *testing.T) {
	d := SweepFiguresData{Scenario: "runaway-healthcheck", Field: "limit.rate", Current: 9}
	f := SweepFigure{Name: "allowed", Unit: "req"}
	g := SweepFigure{Name: "admitted_ratio", Unit: "×"}
	for i := range 32 {
		d.Values = append(d.Values, strconv.Itoa((i+1)*5)+"/s")
		f.Values = append(f.Values, float64((i+1)*5*300+i*37))
		g.Values = append(g.Values, 1+float64(i%7)/10)
	}
	d.Figures = []SweepFigure{f, g}
	var b bytes.Buffer
	if err := SweepFigures(&b, d, Options{Format: "svg"}); err != nil {
		t.Fatal(err)
	}
	got := texts(b.Bytes())
	for _, v := range d.Values {
		if !slices.Contains(got, v) {
			t.Errorf("value %q is not labelled", v)
		}
	}
	var p bytes.Buffer
	if err := SweepFigures(&p, d, Options{}); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, "32 values", p.Bytes(), 0, 0)
	review(t, "sweep-figures-32.png", p.Bytes())

	// A scenario whose own value is none of the sweep's: nothing marked.
	d.Current = -1
	b.Reset()
	if err := SweepFigures(&b, d, Options{Format: "svg"}); err != nil {
		t.Fatal(err)
	}
	if all := strings.Join(texts(b.Bytes()), " "); strings.Contains(all, "as written") {
		t.Error("a sweep without the scenario's own value marks one")
	}
}

func TestSweepFiguresRefusesWhatItCannotDraw(t *testing.T) {
	nan := sweepFiguresData()
	for i := range nan.Figures {
		for j := range nan.Figures[i].Values {
			nan.Figures[i].Values[j] = math.NaN()
		}
	}
	short := sweepFiguresData()
	short.Figures[1].Values = short.Figures[1].Values[:2]
	inf := sweepFiguresData()
	inf.Figures[0].Values[2] = math.Inf(1)
	current := sweepFiguresData()
	current.Current = 6
	many := sweepFiguresData()
	for len(many.Figures) <= maxSweepFigures {
		many.Figures = append(many.Figures, many.Figures[0])
	}
	for _, tt := range []struct {
		name string
		d    SweepFiguresData
		opts Options
		msg  string
	}{
		{"nothing", SweepFiguresData{}, Options{}, "no values"},
		{"no figures", SweepFiguresData{Values: []string{"1"}}, Options{}, "no figures"},
		{"all NaN", nan, Options{}, "no run has a value"},
		{"a short figure", short, Options{}, "max_allowed_1s has 2 values for 6 runs"},
		{"infinite", inf, Options{}, "rejected_pct at 5 is +Inf"},
		{"current out of range", current, Options{}, "current value 6"},
		{"seven figures", many, Options{}, "7 sweep figures (at most 6"},
		{"a negative width", sweepFiguresData(), Options{Width: -1}, "not positive"},
		{"too short", sweepFiguresData(), Options{Height: vg.Inch}, "no room for 3 figures"},
		{"a format", sweepFiguresData(), Options{Format: "gif"}, "unknown format"},
	} {
		var b bytes.Buffer
		err := SweepFigures(&b, tt.d, tt.opts)
		if err == nil || !strings.HasPrefix(err.Error(), "plots: ") || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s: %v, want a plots: error saying %q", tt.name, err, tt.msg)
		}
	}
}
