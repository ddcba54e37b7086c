package plots

import (
	"bytes"
	"image/color"
	"math"
	"slices"
	"sync"
	"testing"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/store"
)

func TestAssignLanes(t *testing.T) {
	// Labels 3 s wide on a 30 s axis.
	label := func(sp sim.FaultSpan) (float64, float64) { return labelSpan(sp.StartS, 3, 0, 30) }
	tests := []struct {
		name   string
		faults []sim.FaultSpan
		lane   []int
		lanes  int
	}{
		{"none", nil, []int{}, 1},
		{"apart", []sim.FaultSpan{{StartS: 1, EndS: 5}, {StartS: 10, EndS: 12}}, []int{0, 0}, 1},
		{"overlapping", []sim.FaultSpan{{StartS: 1, EndS: 10}, {StartS: 5, EndS: 8}, {StartS: 9, EndS: 20}}, []int{0, 1, 1}, 2},
		{"label wider than the bar", []sim.FaultSpan{{StartS: 1, EndS: 2}, {StartS: 3, EndS: 4}}, []int{0, 1}, 2},
		{"back in the first lane", []sim.FaultSpan{{StartS: 1, EndS: 10}, {StartS: 5, EndS: 8}, {StartS: 12, EndS: 14}}, []int{0, 1, 0}, 2},
		{"out of order", []sim.FaultSpan{{StartS: 20, EndS: 25}, {StartS: 1, EndS: 22}}, []int{1, 0}, 2},
		// At the end of the axis the label moves left, onto the fault before.
		{"at the end", []sim.FaultSpan{{StartS: 25, EndS: 27}, {StartS: 29, EndS: 30}}, []int{0, 1}, 2},
	}
	for _, tt := range tests {
		lane, lanes := assignLanes(tt.faults, label)
		if !slices.Equal(lane, tt.lane) || lanes != tt.lanes {
			t.Errorf("%s: lanes %v of %d, want %v of %d", tt.name, lane, lanes, tt.lane, tt.lanes)
		}
	}
	if from, to := labelSpan(29, 3, 0, 30); from != 27 || to != 30 {
		t.Errorf("a label at the end spans %g–%g, want 27–30", from, to)
	}
}

func TestTicks(t *testing.T) {
	var got []string
	for _, tk := range (timeTicks{}).Ticks(0, 30) {
		if !tk.IsMinor() {
			got = append(got, tk.Label)
		}
	}
	if want := []string{"0", "5", "10", "15", "20", "25", "30"}; !slices.Equal(got, want) {
		t.Errorf("time ticks 0–30 s: %v, want %v", got, want)
	}
	got = nil
	for _, tk := range (log1pTicks{}).Ticks(0, 5000) {
		if !tk.IsMinor() {
			got = append(got, tk.Label)
		}
	}
	if want := []string{"0", "10", "100", "1k"}; !slices.Equal(got, want) {
		t.Errorf("log ticks to 5000: %v, want %v", got, want)
	}
	for _, tt := range []struct {
		v    float64
		want string
	}{{0, "0"}, {950, "950"}, {1000, "1k"}, {1500, "1500"}, {12000, "12k"}, {1.5e6, "1.5M"}} {
		if got := countLabel(tt.v); got != tt.want {
			t.Errorf("countLabel(%g) = %q, want %q", tt.v, got, tt.want)
		}
	}
	if n := (log1pScale{}).Normalize(0, 99, 9); n != 0.5 {
		t.Errorf("log1p: 9 on 0–99 normalises to %g, want 0.5", n)
	}
}

func TestDrawingIsSafeConcurrently(t *testing.T) {
	r := mustRun(t, outage(store.FailOpen))
	var want bytes.Buffer
	if err := Timeline(&want, r, Options{Format: "svg"}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			var b bytes.Buffer
			if err := Timeline(&b, r, Options{Format: "svg"}); err != nil {
				t.Error(err)
			}
			if !bytes.Equal(b.Bytes(), want.Bytes()) {
				t.Error("a concurrent draw differs")
			}
			if err := CompareGrid(&bytes.Buffer{}, "one", []Cell{{Algorithm: "gcra", Topology: "shared", AdmittedRatio: 1}}, Options{}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}

// hatch's lines stay inside their rectangle, join up across neighbours
// (one grid for the panel) and are there at all.
func TestHatchStaysInside(t *testing.T) {
	for _, tt := range []struct {
		r   vg.Rectangle
		dir int
	}{
		{vg.Rectangle{Min: vg.Point{X: 0, Y: 0}, Max: vg.Point{X: 40, Y: 10}}, +1},
		{vg.Rectangle{Min: vg.Point{X: 13, Y: 7}, Max: vg.Point{X: 15, Y: 90}}, -1},
		{vg.Rectangle{Min: vg.Point{X: 100, Y: 50}, Max: vg.Point{X: 180, Y: 51}}, +1},
	} {
		rec := &lineRecorder{}
		hatch(draw.Canvas{Canvas: rec}, tt.r, black, tt.dir)
		if len(rec.lines) == 0 {
			t.Errorf("%v: no hatch lines", tt.r)
		}
		const eps = 1e-6
		for _, l := range rec.lines {
			for _, p := range l {
				if p.X < tt.r.Min.X-eps || p.X > tt.r.Max.X+eps || p.Y < tt.r.Min.Y-eps || p.Y > tt.r.Max.Y+eps {
					t.Errorf("%v dir %d: a hatch line reaches %v", tt.r, tt.dir, p)
				}
			}
			if dx, dy := l[1].X-l[0].X, l[1].Y-l[0].Y; math.Abs(float64(dx)-float64(dy)*float64(tt.dir)) > eps {
				t.Errorf("%v dir %d: line %v is not diagonal", tt.r, tt.dir, l)
			}
		}
	}
}

// lineRecorder is a canvas that records the lines stroked on it.
type lineRecorder struct {
	vg.Canvas
	lines [][2]vg.Point
}

func (r *lineRecorder) SetLineWidth(vg.Length)             {}
func (r *lineRecorder) SetLineDash([]vg.Length, vg.Length) {}
func (r *lineRecorder) SetColor(color.Color)               {}

// Stroke records each line of p: a path's every Move starts one, and
// a line of two points is kept.
func (r *lineRecorder) Stroke(p vg.Path) {
	var pts []vg.Point
	flush := func() {
		if len(pts) == 2 {
			r.lines = append(r.lines, [2]vg.Point{pts[0], pts[1]})
		}
		pts = pts[:0]
	}
	for _, c := range p {
		if c.Type == vg.MoveComp {
			flush()
		}
		pts = append(pts, c.Pos)
	}
	flush()
}
