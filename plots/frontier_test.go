package plots

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/ratelim/ratelim/internal/words"
)

// frontierData is the frontier of the research log (62 keys, a credential
// stuffer and a scraper among them; issue 33): the points are peaks.py's,
// the keys testdata/frontier-keys.csv, each at the burst it needs at 1/s.
func frontierData(t *testing.T) FrontierData {
	t.Helper()
	d := FrontierData{
		Title:    "access.log: the limits that spare every ordinary key",
		Subtitle: "outliers: keys whose busiest 1 m is more than 3.5 robust deviations above the bulk's (median 18, 33 at most): 2 keys · chosen: the frontier at 1/s",
	}
	for _, p := range []struct {
		rate  float64
		burst int
	}{{0.1, 61}, {0.2, 29}, {0.5, 13}, {1, 11}, {2, 9}, {5, 8}, {10, 8}, {20, 8}} {
		d.Points = append(d.Points, FrontierPoint{Rate: p.rate, Burst: p.burst, Chosen: p.rate == 1})
	}
	f, err := os.Open(filepath.Join("testdata", "frontier-keys.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "#") {
			continue
		}
		fs := strings.Split(sc.Text(), ",")
		rate, err1 := strconv.ParseFloat(fs[1], 64)
		burst, err2 := strconv.Atoi(fs[2])
		if err1 != nil || err2 != nil {
			t.Fatalf("frontier-keys.csv: %q", sc.Text())
		}
		d.Keys = append(d.Keys, FrontierKey{Name: fs[0], MeanRate: rate, Burst: burst, Outlier: fs[3] == "1"})
	}
	return d
}

func TestFrontierGolden(t *testing.T) {
	d := frontierData(t)
	var b bytes.Buffer
	if err := Frontier(&b, d, Options{Format: "svg"}); err != nil {
		t.Fatal(err)
	}
	wantGolden(t, "frontier.golden.svg", b.Bytes())
	checkSVG(t, "frontier", b.Bytes(), nil)
	got := texts(b.Bytes())
	// Rates as a limit is written, the outliers named, the chosen point
	// named, each frontier point's burst, and the count it throttles.
	for _, want := range []string{"6/m", "30/m", "1/s", "2/s", "10/s", "chosen: 1/s, burst 11", "203.0.113.9", "198.51.100.7", "61", "29", "the chosen burst, 11: a key", "throttles 2, spares 60", "62 keys, 2 outliers", "rate (log scale)", "burst (log scale)"} {
		if !slices.Contains(got, want) {
			t.Errorf("the SVG has no text %q", want)
		}
	}
	// The bulk is not named.
	if slices.Contains(got, "10.0.0.4") {
		t.Error("a key of the bulk is named")
	}
	if all := strings.Join(got, " "); !strings.Contains(all, "3.5 robust deviations") {
		t.Error("the rule is not stated")
	}

	var p bytes.Buffer
	if err := Frontier(&p, d, Options{}); err != nil {
		t.Fatal(err)
	}
	img := checkPNG(t, "frontier", p.Bytes(), 0, 0)
	if !hasColour(img, vermillion) || !hasColour(img, blue) {
		t.Error("the PNG lacks the outliers or the frontier")
	}
	review(t, "frontier.png", p.Bytes())

	// Without outliers and at a narrow range the y axis is linear and
	// nothing is vermillion.
	d.Keys = slices.DeleteFunc(d.Keys, func(k FrontierKey) bool { return k.Outlier })
	d.Points = d.Points[2:6]
	b.Reset()
	if err := Frontier(&b, d, Options{Format: "svg"}); err != nil {
		t.Fatal(err)
	}
	if got := texts(b.Bytes()); !slices.Contains(got, "burst") || !slices.Contains(got, "throttles 0, spares 60") {
		t.Errorf("without outliers: %q", got)
	}
	p.Reset()
	if err := Frontier(&p, d, Options{}); err != nil {
		t.Fatal(err)
	}
	if img := checkPNG(t, "frontier without outliers", p.Bytes(), 0, 0); hasColour(img, vermillion) || !hasColour(img, blue) {
		t.Error("without outliers, something is vermillion, or the frontier is missing")
	}
	review(t, "frontier-bulk.png", p.Bytes())
}

func TestFrontierRefusesWhatItCannotDraw(t *testing.T) {
	good := func() FrontierData {
		return FrontierData{Points: []FrontierPoint{{Rate: 1, Burst: 11, Chosen: true}, {Rate: 2, Burst: 9}}, Keys: []FrontierKey{{Name: "a", MeanRate: 0.5, Burst: 3}}}
	}
	mod := func(f func(*FrontierData)) FrontierData { d := good(); f(&d); return d }
	for _, tt := range []struct {
		name string
		d    FrontierData
		opts Options
		msg  string
	}{
		{"nothing", FrontierData{}, Options{}, "no points"},
		{"a NaN rate", mod(func(d *FrontierData) { d.Points[0].Rate = math.NaN() }), Options{}, "point 1: rate NaN/s (want a positive"},
		{"a zero rate", mod(func(d *FrontierData) { d.Points[1].Rate = 0 }), Options{}, "point 2: rate 0/s"},
		{"an infinite rate", mod(func(d *FrontierData) { d.Points[1].Rate = math.Inf(1) }), Options{}, "rate +Inf/s"},
		{"a negative burst", mod(func(d *FrontierData) { d.Points[1].Burst = -1 }), Options{}, "point 2 (2/s): burst -1"},
		{"a rate twice", mod(func(d *FrontierData) { d.Points[1].Rate = 1 }), Options{}, "rate 1/s twice"},
		{"two chosen", mod(func(d *FrontierData) { d.Points[1].Chosen = true }), Options{}, "2 frontier points chosen"},
		{"a NaN key", mod(func(d *FrontierData) { d.Keys[0].MeanRate = math.NaN() }), Options{}, "key 1 (a): mean rate NaN/s"},
		{"a key at rate 0", mod(func(d *FrontierData) { d.Keys[0].MeanRate = 0 }), Options{}, "key 1 (a): mean rate 0/s (want a positive"},
		{"a key's negative rate", mod(func(d *FrontierData) { d.Keys[0].MeanRate = -1 }), Options{}, "key 1 (a): mean rate -1/s"},
		{"a key's negative burst", mod(func(d *FrontierData) { d.Keys[0].Burst = -2 }), Options{}, "key 1 (a): burst -2"},
		{"a format", good(), Options{Format: "gif"}, "unknown format"},
		{"a negative width", good(), Options{Width: -1}, "not positive"},
	} {
		var b bytes.Buffer
		err := Frontier(&b, tt.d, tt.opts)
		if err == nil || !strings.HasPrefix(err.Error(), "plots: ") || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s: %v, want a plots: error saying %q", tt.name, err, tt.msg)
		}
	}
	// No keys at all still draw.
	for _, d := range []FrontierData{mod(func(d *FrontierData) { d.Keys = nil })} {
		var b bytes.Buffer
		if err := Frontier(&b, d, Options{}); err != nil {
			t.Error(err)
		}
	}
}

// A rate axis over many decades labels few enough powers of ten not to
// run together: at most 7, evenly spaced.
func TestRateTicksOverManyDecades(t *testing.T) {
	for _, tt := range []struct {
		lo, hi float64
		most   int
	}{
		{0.5, 20, 12}, {1e-3, 1e3, 7}, {1e-7, 1e10, 7}, {6e-7, 1.6e9, 7}, {1e-300, 1e300, 7},
	} {
		var labelled []float64
		for _, tk := range (rateTicks{}).Ticks(tt.lo, tt.hi) {
			if tk.Label != "" {
				labelled = append(labelled, math.Log10(tk.Value))
			}
		}
		if len(labelled) < 2 || len(labelled) > tt.most {
			t.Errorf("%g to %g: %d labels, want 2 to %d", tt.lo, tt.hi, len(labelled), tt.most)
			continue
		}
		for i := 2; i < len(labelled) && tt.lo < 0.1; i++ {
			if a, b := labelled[i]-labelled[i-1], labelled[1]-labelled[0]; math.Abs(a-b) > 1e-6 {
				t.Errorf("%g to %g: labels at 10^%v, unevenly spaced", tt.lo, tt.hi, labelled)
				break
			}
		}
	}
	// Drawn: keys from 1e-6 to 1e9/s, the axis's labels apart.
	var b bytes.Buffer
	d := FrontierData{Points: []FrontierPoint{{Rate: 1e-6, Burst: 1 << 20}, {Rate: 1e6, Burst: 0, Chosen: true}}, Keys: []FrontierKey{{Name: "k", MeanRate: 1e9, Burst: 5}}}
	if err := Frontier(&b, d, Options{Format: "svg"}); err != nil {
		t.Fatal(err)
	}
	var axis []svgText
	for _, tx := range svgTexts(t, b.Bytes()) {
		for e := -8; e <= 10; e++ {
			if tx.s == words.Rate(math.Pow(10, float64(e))) {
				axis = append(axis, tx)
			}
		}
	}
	if len(axis) < 3 {
		t.Errorf("only %d rate labels on the axis", len(axis))
	}
	if bad := overprinted(axis); len(bad) > 0 {
		t.Errorf("the rate labels overprint: %q", bad)
	}
}

// Outliers crowded at one point are named down from it, each moved one
// with a leader line to its dot, none below the plot: those with no room
// are counted in the side note.
func TestFrontierNamesCrowdedOutliers(t *testing.T) {
	var keys []FrontierKey
	for i := range 30 {
		keys = append(keys, FrontierKey{Name: fmt.Sprintf("10.0.0.%d", i), MeanRate: 1, Burst: 100 + i, Outlier: true})
	}
	d := FrontierData{Points: []FrontierPoint{{Rate: 1, Burst: 5, Chosen: true}, {Rate: 2, Burst: 3}}, Keys: keys}
	for _, tt := range []struct {
		name        string
		height      vg.Length
		named, more int
	}{
		{"the default size", 0, maxOutlierLabels, 30 - maxOutlierLabels},
		{"a short plot", 3 * vg.Inch, 5, 25},
	} {
		var b bytes.Buffer
		if err := Frontier(&b, d, Options{Format: "svg", Height: tt.height}); err != nil {
			t.Fatal(err)
		}
		got := texts(b.Bytes())
		named := 0
		for _, k := range keys {
			if slices.Contains(got, k.Name) {
				named++
			}
		}
		more := fmt.Sprintf("%d more outliers not named", 30-named)
		if named < tt.named || named > maxOutlierLabels || !slices.Contains(got, more) {
			t.Errorf("%s: %d named and the note %q, want at least %d named and %q", tt.name, named, got, tt.named, more)
		}
		// Every label but the first is moved down: a leader line each.
		if leaders := strings.Count(b.String(), "stroke-opacity:0.627"); leaders != named-1 {
			t.Errorf("%s: %d leader lines for %d names", tt.name, leaders, named)
		}
		// None is below the plot: the lowest name is above the axis's
		// lowest tick label ("0").
		var lowest, zero float64 = math.Inf(1), math.Inf(1)
		for _, tx := range svgTexts(t, b.Bytes()) {
			if strings.HasPrefix(tx.s, "10.0.0.") {
				lowest = min(lowest, tx.y)
			}
			if tx.s == "0" {
				zero = tx.y
			}
		}
		if lowest < zero {
			t.Errorf("%s: a name at y %g, below the axis's 0 at %g", tt.name, lowest, zero)
		}
		// Nor over the chosen point's name, nor one over another.
		var drawn []svgText
		for _, tx := range svgTexts(t, b.Bytes()) {
			if strings.HasPrefix(tx.s, "10.0.0.") || strings.HasPrefix(tx.s, "chosen: ") {
				drawn = append(drawn, tx)
			}
		}
		if bad := overprinted(drawn); len(bad) > 0 {
			t.Errorf("%s: names overprint: %q", tt.name, bad)
		}
	}
}

// textAt is a canvas that records where each text is written and how
// many shapes are filled, drawing nothing.
type textAt struct {
	vg.Canvas
	at    map[string][]vg.Point
	fills int
}

func (r *textAt) FillString(_ font.Face, pt vg.Point, s string) { r.at[s] = append(r.at[s], pt) }
func (r *textAt) Fill(vg.Path)                                  { r.fills++ }

// A point's burst is written on a white backing, above right of it, or
// below right where the step comes down into it (the line is above).
func TestFrontierBurstLabels(t *testing.T) {
	pts := []FrontierPoint{{Rate: 0.1, Burst: 61}, {Rate: 1, Burst: 11, Chosen: true}, {Rate: 2, Burst: 9}, {Rate: 5, Burst: 8}, {Rate: 10, Burst: 8}}
	p := newPlot()
	p.X.Scale = plot.LogScale{}
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0.05, 20, 0, 70
	rec := &textAt{Canvas: vgimg.New(6*vg.Inch, 4*vg.Inch), at: map[string][]vg.Point{}}
	c := draw.Canvas{Canvas: rec, Rectangle: vg.Rectangle{Max: vg.Point{X: 6 * vg.Inch, Y: 4 * vg.Inch}}}
	frontierLabels{points: pts, chosen: 1}.Plot(c, p)
	_, trY := p.Transforms(&c)
	for _, tt := range []struct {
		text  string
		burst float64
		below bool
	}{
		{"61", 61, false}, {"9", 9, true}, {"8", 8, true}, // 5/s, from 9
	} {
		at := rec.at[tt.text]
		if len(at) == 0 {
			t.Errorf("no label %q", tt.text)
			continue
		}
		if below := at[0].Y < trY(tt.burst); below != tt.below {
			t.Errorf("label %q at y %v, its point at %v: below %v, want %v", tt.text, at[0].Y, trY(tt.burst), below, tt.below)
		}
	}
	if at := rec.at["8"]; len(at) != 2 || at[1].Y < trY(8) {
		t.Errorf("the 8 at 10/s (after an 8) is not above its point: %v", at)
	}
	// A backing each of the four, the chosen's, and its ring.
	if rec.fills < 5 {
		t.Errorf("%d shapes filled, want a backing under each of 5 labels", rec.fills)
	}
}
