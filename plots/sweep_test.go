package plots

import (
	"bytes"
	"image"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// sweepData is a sync-interval sweep written out by hand, so that the
// golden changes only when the drawing does: exact at 0, over from 50ms,
// no bound at 0 and never.
func sweepData() SweepData {
	return SweepData{
		Scenario: "sync-interval", Field: "sync-interval", Over: 1.05,
		Finding: "the worst second is within 5% of the exact limiter's up to sync-interval 10ms, and more from 50ms on",
		Points: []SweepPoint{
			{Label: "0", PeakRatio: 1, AdmittedRatio: 1},
			{Label: "10ms", PeakRatio: 1.02, AdmittedRatio: 1.01, BoundRatio: 3.4},
			{Label: "50ms", PeakRatio: 1.73, AdmittedRatio: 1.44, BoundRatio: 3.56},
			{Label: "1s", PeakRatio: 4, AdmittedRatio: 2.03, BoundRatio: 5.37},
			{Label: "never", PeakRatio: 4, AdmittedRatio: 2.8},
		},
	}
}

func TestSweepGolden(t *testing.T) {
	var b bytes.Buffer
	if err := Sweep(&b, sweepData(), Options{Format: "svg"}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "sweep.golden.svg")
	if *update {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./plots -run Golden -update to create it)", err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Fatalf("%s differs (go test ./plots -run Golden -update rewrites it)", path)
	}
	checkSVG(t, "sweep", b.Bytes(), nil)
	got := texts(b.Bytes())
	// The values as typed, in the order given, 0 first and never last;
	// the worst second's ratio at each point; the lines' legend.
	var ticks []string
	for _, s := range got {
		if slices.Contains([]string{"0", "10ms", "50ms", "1s", "never"}, s) {
			ticks = append(ticks, s)
		}
	}
	if want := []string{"0", "10ms", "50ms", "1s", "never"}; !slices.Equal(ticks, want) {
		t.Errorf("the x axis reads %v, want %v", ticks, want)
	}
	for _, want := range []string{"1.00×", "1.02×", "1.73×", "4.00×", "1× = exact", "worst second ÷ exact's (the worst key)", "all admitted ÷ exact", "the design's bound on a second ÷ exact's", "worst second over 1.05× exact"} {
		if !slices.Contains(got, want) {
			t.Errorf("the sweep's SVG has no text %q", want)
		}
	}
	if all := strings.Join(got, " "); !strings.Contains(all, "more from 50ms on") || !strings.Contains(all, "sync-interval: what a sweep of sync-interval admits") {
		t.Error("the sweep's SVG lacks its title or its finding")
	}

	var p bytes.Buffer
	if err := Sweep(&p, sweepData(), Options{}); err != nil {
		t.Fatal(err)
	}
	img := checkPNG(t, "sweep", p.Bytes(), 0, 0)
	// The worst second's line, and the shading where it is over.
	if !hasColour(img, vermillion) {
		t.Error("the sweep's PNG has no worst-second line")
	}
	if n := countColour(img, blendOnWhite(sweepShade)); n < 20000 {
		t.Errorf("the sweep's PNG has %d pixels of the shade: no value shaded as over the exact limiter", n)
	}
	if dir := reviewDir(t); dir != "" {
		os.WriteFile(filepath.Join(dir, "sweep.png"), p.Bytes(), 0o644)
	}

	// Nothing over: no shading.
	flat := sweepData()
	for i := range flat.Points {
		flat.Points[i].PeakRatio = 1
	}
	p.Reset()
	if err := Sweep(&p, flat, Options{Width: 6 * vg.Inch, Height: 4 * vg.Inch}); err != nil {
		t.Fatal(err)
	}
	if n := countColour(checkPNG(t, "flat sweep", p.Bytes(), 6*96, 4*96), blendOnWhite(sweepShade)); n > 500 {
		t.Errorf("a sweep at 1× everywhere has %d pixels of the shade, as if over", n)
	}
}

func TestSweepRefusesWhatItCannotDraw(t *testing.T) {
	many := SweepData{Points: make([]SweepPoint, maxSweepPoints+1)}
	neg := sweepData()
	neg.Points[1].AdmittedRatio = -1
	for _, tt := range []struct {
		name string
		d    SweepData
		opts Options
		msg  string
	}{
		{"no points", SweepData{}, Options{}, "no sweep points"},
		{"too many", many, Options{}, "at most 64"},
		{"a negative ratio", neg, Options{}, "point 2 (10ms)"},
		{"a negative width", sweepData(), Options{Width: -1}, "not positive"},
		{"a format", sweepData(), Options{Format: "gif"}, "unknown format"},
	} {
		var b bytes.Buffer
		err := Sweep(&b, tt.d, tt.opts)
		if err == nil || !strings.HasPrefix(err.Error(), "plots: ") || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s: %v, want a plots: error saying %q", tt.name, err, tt.msg)
		}
	}
}

// segments break a line where a value has none, never drop it to 0.
func TestSweepSegments(t *testing.T) {
	got := segments([]float64{0, 1, 2, 0, 3}, noRatio)
	if len(got) != 2 || len(got[0]) != 2 || got[0][0].X != 1 || len(got[1]) != 1 || got[1][0].X != 4 {
		t.Errorf("segments %v, want x 1–2 and x 4", got)
	}
	// A sweep panel breaks at NaN only: 0 and below are values.
	got = segments([]float64{math.NaN(), 0, 1, math.NaN(), math.NaN(), -2}, math.IsNaN)
	if len(got) != 2 || len(got[0]) != 2 || got[0][0].X != 1 || got[0][0].Y != 0 || len(got[1]) != 1 || got[1][0] != (plotter.XY{X: 5, Y: -2}) {
		t.Errorf("segments at NaN %v, want x 1–2 and x 5", got)
	}
}

// blendOnWhite is c, translucent, as drawn on white.
func blendOnWhite(c color.Color) color.NRGBA {
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	mix := func(v uint8) uint8 { return uint8((int(v)*int(n.A) + 255*(255-int(n.A)) + 127) / 255) }
	return color.NRGBA{mix(n.R), mix(n.G), mix(n.B), 0xff}
}

// countColour is how many pixels of img are within a few levels of c.
func countColour(img image.Image, c color.NRGBA) int {
	near := func(a, b uint8) bool { return a+3 >= b && b+3 >= a }
	n := 0
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y++ {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
			p := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
			if near(p.R, c.R) && near(p.G, c.G) && near(p.B, c.B) {
				n++
			}
		}
	}
	return n
}
