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
	// 8× is past the top of the scale: vermillion; 0.5× is half way down
	// to blue.
	half := color.NRGBAModel.Convert(heat(-0.5)).(color.NRGBA)
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
	for _, want := range []string{"token-bucket", "sliding-window", "split-brain", "4.00×", "8.00×", "1.00×", "0.50×", "n/a", "not run", "admitted", "1×", "≥ 4×", "≤ 0.25×"} {
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
		{"duplicate", []Cell{{Algorithm: "gcra", Topology: "local", AdmittedRatio: 1}, {Algorithm: "gcra", Topology: "local", AdmittedRatio: 2}}, Options{}, "plots: two cells for gcra on local"},
		{"format", []Cell{{Algorithm: "gcra", Topology: "local", AdmittedRatio: 1}}, Options{Format: "jpeg"}, `plots: unknown format "jpeg"`},
	}
	for _, tt := range tests {
		err := CompareGrid(io.Discard, "t", tt.cells, tt.opts)
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.want)
		}
	}
}

func TestCompareGridScale(t *testing.T) {
	// One scale for every grid: log2 of the ratio over ±2, saturating.
	for _, tt := range []struct{ v, want float64 }{{1, 0}, {4, 1}, {0.25, -1}, {0, -1}, {16, 1}, {math.Inf(1), 1}, {2, 0.5}, {0.5, -0.5}} {
		if got := shade(tt.v); got != tt.want {
			t.Errorf("shade(%g) = %g, want %g", tt.v, got, tt.want)
		}
	}
	if !math.IsNaN(shade(math.NaN())) || !math.IsNaN(shade(-1)) {
		t.Error("NaN and negative ratios have a place on the scale")
	}
	if got := ratioLabel(2); got != "2.00×" {
		t.Errorf("ratioLabel(2) = %q", got)
	}
	// Hotter is more: from 1× up, each colour is darker than the last, so
	// 1.42× can never look paler than 1.26× (partition's shared and
	// split-brain columns).
	lum := func(c color.Color) float64 {
		r, g, b, _ := c.RGBA()
		return 0.2126*float64(r) + 0.7152*float64(g) + 0.0722*float64(b)
	}
	prev := math.Inf(1)
	for _, v := range []float64{1, 1.1, 1.26, 1.42, 2, 2.6, 3.5, 4} {
		l := lum(heat(shade(v)))
		if l >= prev {
			t.Errorf("%g× is not darker than the ratio before it", v)
		}
		prev = l
	}
	if heat(shade(4)) != heat(shade(40)) {
		t.Error("the scale does not saturate at 4×")
	}
}

// At a narrow width the column names are fitted (smaller, or broken at
// hyphens) so that no two overlap, and Why notes are numbered under the
// grid, one per distinct sentence.
func TestCompareGridFitsNarrowAndExplains(t *testing.T) {
	cells := compareCells()
	for i := range cells {
		if cells[i].Topology == "local" {
			cells[i].Why = "admitted 4× what one exact limiter would: 4 servers, each with its own jar"
		}
	}
	g, err := newGrid(cells)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.notes) != 1 || g.note[0][0] != 1 || g.note[0][1] != 0 {
		t.Errorf("notes %q, marks %v: want one note on the local column", g.notes, g.note)
	}
	for _, w := range []vg.Length{0.6 * vg.Inch, 1.2 * vg.Inch} {
		for _, name := range []string{"split-brain", "local", "a-very-long-topology-name"} {
			label, sty := fitLabel(name, sizeLabel, false, w)
			if got := widest(sty, label); got > w && sty.Font.Size > 6 {
				t.Errorf("%q fitted to %v is %v wide at %vpt", name, w, got, sty.Font.Size.Points())
			}
		}
	}
	var b bytes.Buffer
	if err := CompareGrid(&b, "narrow", cells, Options{Format: "svg", Width: 4 * vg.Inch}); err != nil {
		t.Fatal(err)
	}
	all := strings.Join(texts(b.Bytes()), "\n")
	if !strings.Contains(all, "1  admitted 4×") {
		t.Errorf("the grid does not list its note:\n%s", all)
	}
	b.Reset()
	if err := CompareGrid(&b, "narrow", cells, Options{Width: 4 * vg.Inch}); err != nil {
		t.Fatal(err)
	}
	if dir := reviewDir(t); dir != "" {
		os.WriteFile(filepath.Join(dir, "compare-grid-narrow.png"), b.Bytes(), 0o644)
	}
}
