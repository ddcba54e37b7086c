package plots

import (
	"bytes"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
)

// compareCells is what `ratelim compare` might find: every algorithm ×
// topology, with per-server jars at 4× and a racy store in between.
func compareCells() []Cell {
	ratios := map[string]float64{"local": 4, "shared": 1, "racy": 2.3, "split-brain": 1.5}
	var cells []Cell
	for _, a := range []string{"token-bucket", "gcra", "leaky-bucket", "fixed-window", "sliding-log", "sliding-window"} {
		for _, t := range []string{"local", "shared", "racy", "split-brain"} {
			r := ratios[t]
			switch {
			case a == "fixed-window":
				r *= 2 // the double burst at a window boundary
			case a == "leaky-bucket" && t == "shared":
				r = 0.5
			case a == "sliding-window" && t == "racy":
				continue // not run: the grid says so
			case a == "sliding-log" && t == "split-brain":
				r = math.NaN()
			}
			cells = append(cells, Cell{Algorithm: a, Topology: t, AdmittedRatio: r})
		}
	}
	return cells
}

func TestCompareGrid(t *testing.T) {
	cells := compareCells()
	var b bytes.Buffer
	if err := CompareGrid(&b, "runaway-healthcheck: every algorithm × topology", cells, Options{Width: 8 * vg.Inch, Height: 5 * vg.Inch}); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, "grid", b.Bytes(), 8*96, 5*96)

	b.Reset()
	if err := CompareGrid(&b, "runaway-healthcheck: every algorithm × topology", cells, Options{}); err != nil {
		t.Fatal(err)
	}
	img := checkPNG(t, "grid", b.Bytes(), 0, 0)
	// 8× is the top of the scale: vermillion; 0.5× is a third of the way
	// down to blue.
	half := color.NRGBAModel.Convert(diverging(-1.0 / 3)).(color.NRGBA)
	if !hasColour(img, vermillion) || !hasColour(img, half) {
		t.Error("the grid's cells are not coloured by the scale")
	}
	if dir := reviewDir(t); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, "compare-grid.png"), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	b.Reset()
	if err := CompareGrid(&b, "grid", cells, Options{Format: "svg"}); err != nil {
		t.Fatal(err)
	}
	got := texts(b.Bytes())
	for _, want := range []string{"token-bucket", "sliding-window", "split-brain", "4.00×", "8.00×", "1.00×", "0.50×", "n/a", "not run", "admitted", "1×", "8×", "0.125×"} {
		if !slices.Contains(got, want) {
			t.Errorf("the grid's SVG has no text %q", want)
		}
	}
	// Rows and columns come in the order first seen: token-bucket is the
	// top row, so it is drawn before gcra; local is the first column.
	all := strings.Join(got, "\n")
	if strings.Index(all, "local") > strings.Index(all, "shared") {
		t.Error("columns are not in the order first seen")
	}
	if !(slices.Index(got, "token-bucket") >= 0 && slices.Index(got, "gcra") >= 0) {
		t.Error("rows missing")
	}
}

func TestCompareGridRefusesWhatItCannotDraw(t *testing.T) {
	tests := []struct {
		name  string
		cells []Cell
		opts  Options
		want  string
	}{
		{"empty", nil, Options{}, "plots: no cells to draw"},
		{"duplicate", []Cell{{"gcra", "local", 1}, {"gcra", "local", 2}}, Options{}, "plots: two cells for gcra on local"},
		{"format", []Cell{{"gcra", "local", 1}}, Options{Format: "jpeg"}, `plots: unknown format "jpeg"`},
	}
	for _, tt := range tests {
		err := CompareGrid(io.Discard, "t", tt.cells, tt.opts)
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.want)
		}
	}
}

func TestCompareGridScale(t *testing.T) {
	g, err := newGrid([]Cell{{"a", "x", 0}, {"a", "y", 1}, {"a", "z", 3}, {"b", "x", math.Inf(1)}})
	if err != nil {
		t.Fatal(err)
	}
	if g.span != 2 { // 3× needs the scale to reach 4×
		t.Errorf("span = %g, want 2", g.span)
	}
	for _, tt := range []struct{ v, want float64 }{{1, 0}, {4, 1}, {0.25, -1}, {0, -1}, {16, 1}, {math.Inf(1), 1}, {2, 0.5}} {
		if got := g.shade(tt.v); got != tt.want {
			t.Errorf("shade(%g) = %g, want %g", tt.v, got, tt.want)
		}
	}
	if !math.IsNaN(g.shade(math.NaN())) || !math.IsNaN(g.shade(-1)) {
		t.Error("NaN and negative ratios have a place on the scale")
	}
	if got := ratioLabel(2); got != "2.00×" {
		t.Errorf("ratioLabel(2) = %q", got)
	}
}
