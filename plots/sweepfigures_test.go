package plots

import (
	"bytes"
	"encoding/xml"
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
	for _, want := range []string{"rejected_pct (%)", "max_allowed_1s (req)", "p99_ms (ms)", "66.7%", "30.1%", "9.9%", "lowest 9.9% at 50", "51", "2.25", "burst, as typed", "as given: 30.1%"} {
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
	if n := strings.Count(strings.Join(got, "\n")+"\n", "as given\n"); n != 3 {
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
	if all := strings.Join(texts(b.Bytes()), " "); strings.Contains(all, "as given") {
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

// svgText is one <text> of an SVG: where it starts, its size and weight.
type svgText struct {
	x, y, size float64
	bold       bool
	s          string
}

// svgTexts returns an SVG's texts with where gonum wrote them (x is the
// left end: gonum aligns before it writes; y grows upwards).
func svgTexts(t *testing.T, b []byte) []svgText {
	t.Helper()
	var out []svgText
	dec := xml.NewDecoder(bytes.NewReader(b))
	var cur *svgText
	for {
		tok, err := dec.Token()
		if err != nil {
			return out
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			cur = nil
			if tok.Name.Local != "text" {
				continue
			}
			cur = &svgText{}
			for _, a := range tok.Attr {
				switch a.Name.Local {
				case "x":
					cur.x, _ = strconv.ParseFloat(a.Value, 64)
				case "y":
					cur.y, _ = strconv.ParseFloat(a.Value, 64)
					cur.y = -cur.y // drawn under scale(1, -1)
				case "style":
					cur.bold = strings.Contains(a.Value, "font-weight:bold")
					if _, after, ok := strings.Cut(a.Value, "font-size:"); ok {
						cur.size, _ = strconv.ParseFloat(strings.TrimSuffix(strings.Split(after, ";")[0], "px"), 64)
					}
				}
			}
		case xml.CharData:
			if cur != nil {
				cur.s += string(tok)
			}
		case xml.EndElement:
			if cur != nil {
				out = append(out, *cur)
			}
			cur = nil
		}
	}
}

// overprinted returns the pairs of texts among ts whose boxes overlap.
func overprinted(ts []svgText) []string {
	box := func(t svgText) (x0, x1, y0, y1 float64) {
		w := float64(textStyle(vg.Length(t.size*0.75), t.bold, black).Width(t.s)) / 0.75 // px from pt
		return t.x, t.x + w, t.y - t.size*0.25, t.y + t.size*0.75
	}
	var out []string
	for i := range ts {
		for j := i + 1; j < len(ts); j++ {
			ax0, ax1, ay0, ay1 := box(ts[i])
			bx0, bx1, by0, by1 := box(ts[j])
			if ax0 < bx1 && bx0 < ax1 && ay0 < by1 && by0 < ay1 {
				out = append(out, ts[i].s+" / "+ts[j].s)
			}
		}
	}
	return out
}

func TestStrideLabels(t *testing.T) {
	mark := func(n int, on ...int) []bool {
		out := make([]bool, n)
		for _, i := range on {
			out[i] = true
		}
		return out
	}
	for _, tt := range []struct {
		name         string
		n, current   int
		widest, colW vg.Length
		want         []bool
	}{
		{"each fits", 6, 3, 10, 12, mark(6, 0, 1, 2, 3, 4, 5)},
		{"every other, the current odd", 8, 3, 20, 12, mark(8, 0, 3, 7)},
		{"every third", 10, -1, 30, 12, mark(10, 0, 3, 6, 9)},
		{"every third, the last off the stride", 11, -1, 30, 12, mark(11, 0, 3, 6, 10)},
		{"every fourth, the current near the first", 32, 3, 45, 12, mark(32, 3, 8, 12, 16, 20, 24, 31)},
		{"wider than the plot", 3, 1, 100, 12, mark(3, 1)},
	} {
		got := strideLabels(tt.n, tt.current, tt.widest, tt.colW)
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
		// No two shown labels are nearer than the stride.
		k := max(1, int(math.Ceil(float64(tt.widest/tt.colW))))
		last := -len(got)
		for i, on := range got {
			if on && i-last < min(k, tt.n) {
				t.Errorf("%s: labels %d and %d are %d columns apart (stride %d)", tt.name, last, i, i-last, k)
			}
			if on {
				last = i
			}
		}
	}
}

// Where the values' labels do not fit their columns, those written do
// not overprint one another, the current's and the last's included.
func TestSweepFiguresLabelsDoNotOverprint(t *testing.T) {
	for _, tt := range []struct {
		name    string
		width   vg.Length
		current int
		value   func(i int) float64
	}{
		{"millions at 8 in", 8 * vg.Inch, 3, func(i int) float64 { return 1e6 + float64(i)*123457 }},
		{"percentages", 0, 3, func(i int) float64 { return 99.9 - float64(i)*0.01 }},
		{"millions, the current near the end", 8 * vg.Inch, 29, func(i int) float64 { return 1e6 + float64(i)*123457 }},
	} {
		d := SweepFiguresData{Scenario: "s", Field: "burst", Current: tt.current}
		f := SweepFigure{Name: "max_allowed_1s", Unit: "req"}
		for i := range 32 {
			d.Values = append(d.Values, strconv.Itoa(i+1))
			f.Values = append(f.Values, tt.value(i))
		}
		d.Figures = []SweepFigure{f}
		var b bytes.Buffer
		if err := SweepFigures(&b, d, Options{Format: "svg", Width: tt.width}); err != nil {
			t.Fatal(err)
		}
		var labels []svgText
		want := map[string]bool{}
		for _, v := range f.Values {
			want[figureLabel(v, f.Unit)] = true
		}
		for _, tx := range svgTexts(t, b.Bytes()) {
			if want[tx.s] {
				labels = append(labels, tx)
			}
		}
		if len(labels) < 4 {
			t.Errorf("%s: only %d values labelled", tt.name, len(labels))
		}
		if bad := overprinted(labels); len(bad) > 0 {
			t.Errorf("%s: labels overprint: %q", tt.name, bad)
		}
		// The current always; the last unless it is within a stride of
		// the current.
		for _, i := range []int{tt.current, len(f.Values) - 1} {
			if i == len(f.Values)-1 && i-tt.current < 4 {
				continue
			}
			if !slices.ContainsFunc(labels, func(s svgText) bool { return s.s == figureLabel(f.Values[i], f.Unit) }) {
				t.Errorf("%s: value %d (%s) is not labelled", tt.name, i, figureLabel(f.Values[i], f.Unit))
			}
		}
	}
}

// The room above a panel's points is for their labels: no tick there
// says a value the figure does not reach ("120%").
func TestSweepFiguresLabelNoTickAboveTheData(t *testing.T) {
	var b bytes.Buffer
	if err := SweepFigures(&b, sweepFiguresData(), Options{Format: "svg"}); err != nil {
		t.Fatal(err)
	}
	got := texts(b.Bytes())
	// rejected_pct tops at 66.7%, max_allowed_1s at 51, p99_ms at 3.1.
	for _, not := range []string{"80%", "100%", "60", "4"} {
		if slices.Contains(got, not) {
			t.Errorf("a tick above the data is labelled %q", not)
		}
	}
	for _, want := range []string{"60%", "50", "3"} {
		if !slices.Contains(got, want) {
			t.Errorf("no tick labelled %q: %q", want, got)
		}
	}
	// Near 100%, the axis is labelled to 100% and no further.
	d := SweepFiguresData{Scenario: "s", Field: "burst", Values: []string{"1", "2", "3"}, Current: 0,
		Figures: []SweepFigure{{Name: "rejected_pct", Unit: "%", Values: []float64{99.9, 99.5, 97}}}}
	b.Reset()
	if err := SweepFigures(&b, d, Options{Format: "svg"}); err != nil {
		t.Fatal(err)
	}
	got = texts(b.Bytes())
	if slices.Contains(got, "120%") || !slices.Contains(got, "100%") {
		t.Errorf("a panel of 97%% to 99.9%%: ticks %q, want 100%% and no 120%%", got)
	}
}
