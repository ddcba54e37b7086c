package report

import (
	"bytes"
	"image"
	"image/draw"
	"image/gif"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratelim/ratelim/plots"
	"github.com/ratelim/ratelim/sim"
)

func TestFrameTimes(t *testing.T) {
	tests := []struct {
		name           string
		duration, step float64
		n              int
		want           []float64
	}{
		{name: "a frame a step", duration: 5, step: 1, want: []float64{1, 2, 3, 4, 5}},
		{name: "fewer frames than steps, the last the end", duration: 10, step: 1, n: 7, want: []float64{2, 3, 5, 6, 8, 9, 10}},
		{name: "a last step cut short", duration: 2.5, step: 1, want: []float64{1, 2, 2.5}},
		{name: "more asked than steps", duration: 3, step: 1, n: 50, want: []float64{1, 2, 3}},
		{name: "no step", duration: 3, step: 0, want: nil},
		{name: "no duration", duration: 0, step: 1, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := FrameTimes(&sim.Result{DurationS: tt.duration, StepS: tt.step}, tt.n)
			if !slices.Equal(got, tt.want) {
				t.Errorf("FrameTimes = %v, want %v", got, tt.want)
			}
		})
	}
	// 300 steps: at most MaxFrames, evenly spaced, ending at the end.
	got := FrameTimes(&sim.Result{DurationS: 30, StepS: 0.1}, 0)
	if len(got) != MaxFrames || got[0] != 0.5 || got[len(got)-1] != 30 {
		t.Errorf("300 steps: %d frames from %g to %g, want %d from 0.5 to 30", len(got), got[0], got[len(got)-1], MaxFrames)
	}
}

func TestGIF(t *testing.T) {
	r := run(t, "window-boundary")
	const frames = 6
	var buf bytes.Buffer
	if err := GIF(&buf, r, GIFOptions{Frames: frames}); err != nil {
		t.Fatal(err)
	}
	g, err := gif.DecodeAll(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("the GIF does not decode: %v", err)
	}
	if len(g.Image) != frames {
		t.Fatalf("%d frames, want %d", len(g.Image), frames)
	}
	if g.LoopCount != 0 {
		t.Errorf("LoopCount = %d, want 0 (forever)", g.LoopCount)
	}
	if last := g.Delay[frames-1]; last <= g.Delay[0] {
		t.Errorf("the last frame is shown %d/100 s, no longer than the others' %d", last, g.Delay[0])
	}
	// Compose the frames as a viewer does (each frame is the rectangle
	// that changed, drawn over the last), and count what is drawn: the ink.
	screen := image.NewRGBA(image.Rect(0, 0, g.Config.Width, g.Config.Height))
	var ink []int
	for i, fr := range g.Image {
		if !fr.Bounds().In(screen.Bounds()) {
			t.Fatalf("frame %d %v lies outside the %v screen", i, fr.Bounds(), screen.Bounds())
		}
		draw.Draw(screen, fr.Bounds(), fr, fr.Bounds().Min, draw.Over)
		ink = append(ink, inkPixels(screen))
	}
	if ink[0] >= ink[frames-1] {
		t.Errorf("the first frame draws %d pixels, the last %d: want the run to grow", ink[0], ink[frames-1])
	}
	// Determinism: the same result, the same bytes.
	var again bytes.Buffer
	if err := GIF(&again, r, GIFOptions{Frames: frames}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Error("a second GIF of the same result differs")
	}
}

// The final frame of the animation is the still plot of the whole run
// (titled "at" its end), quantized: every pixel within a small distance of the PNG's.
func TestGIFLastFrameIsThePlot(t *testing.T) {
	r := run(t, "store-outage")
	var buf bytes.Buffer
	if err := GIF(&buf, r, GIFOptions{Frames: 2}); err != nil {
		t.Fatal(err)
	}
	g, err := gif.DecodeAll(&buf)
	if err != nil {
		t.Fatal(err)
	}
	screen := image.NewRGBA(image.Rect(0, 0, g.Config.Width, g.Config.Height))
	for _, fr := range g.Image {
		draw.Draw(screen, fr.Bounds(), fr, fr.Bounds().Min, draw.Over)
	}
	still, err := frame(frameResult(r, r.DurationS, nil), GIFOptions{}.Plot)
	if err != nil {
		t.Fatal(err)
	}
	if still.Bounds() != screen.Bounds() {
		t.Fatalf("animation %v, still plot %v", screen.Bounds(), still.Bounds())
	}
	far := 0
	for i := 0; i < len(still.Pix); i += 4 {
		d := 0
		for c := range 3 {
			d = max(d, absDiff(still.Pix[i+c], screen.Pix[i+c]))
		}
		if d > 48 {
			far++
		}
	}
	// Anti-aliased edges blend colours the palette may lack; the lines,
	// fills and text are the plot's own colours.
	if share := float64(far) / float64(len(still.Pix)/4); share > 0.005 {
		t.Errorf("%.2f%% of the last frame's pixels are far from the plot's", 100*share)
	}
}

func TestGIFErrors(t *testing.T) {
	tests := []struct {
		name string
		r    *sim.Result
	}{
		{"no result", nil},
		{"no steps", &sim.Result{Clients: []sim.ClientResult{{Name: "a"}}, DurationS: 0, StepS: 1}},
		{"no clients", &sim.Result{DurationS: 2, StepS: 1}},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		if err := GIF(&buf, tt.r, GIFOptions{}); err == nil {
			t.Errorf("%s: no error", tt.name)
		}
	}
}

func inkPixels(img *image.RGBA) int {
	n := 0
	for i := 0; i < len(img.Pix); i += 4 {
		if img.Pix[i] < 0xf0 || img.Pix[i+1] < 0xf0 || img.Pix[i+2] < 0xf0 {
			n++
		}
	}
	return n
}

func absDiff(a, b uint8) int {
	if a > b {
		return int(a - b)
	}
	return int(b - a)
}

func TestFrameResult(t *testing.T) {
	r := tiny()
	f := frameResult(r, 2.5, nil)
	// The data stops at the cut; the axis is the whole run's
	// (plots.Options.AxisEndS, set by GIF).
	if f.Scenario != "tiny at 2 s" || f.DurationS != 2 || len(f.Timeline) != 4 {
		t.Errorf("frame at 2.5 s: %q, %g s, %d rows; want \"tiny at 2 s\" cut at 2 s, 4 rows",
			f.Scenario, f.DurationS, len(f.Timeline))
	}
	if r.Scenario != "tiny" {
		t.Error("frameResult renamed the run itself")
	}

	// On a log's clock, the frame says the clock's time, as the axis
	// reads; without the run's wall clock, seconds still.
	r.WallClock = "2026-12-01T10:00:00Z"
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Skip(err)
	}
	for _, tt := range []struct {
		clock *time.Location
		wall  string
		at    float64
		want  string
	}{
		{time.UTC, "2026-12-01T10:00:00Z", 2.5, "tiny at 10:00:02"},
		{paris, "2026-12-01T10:00:00Z", 2.5, "tiny at 11:00:02"},
		{time.UTC, "2026-12-01T10:00:00.25Z", 2, "tiny at 10:00:02.250"},
		{nil, "2026-12-01T10:00:00Z", 2, "tiny at 2 s"},
		{time.UTC, "", 2, "tiny at 2 s"},
	} {
		r.WallClock = tt.wall
		if got := frameResult(r, tt.at, tt.clock).Scenario; got != tt.want {
			t.Errorf("clock %v, wall clock %q, at %gs: %q, want %q", tt.clock, tt.wall, tt.at, got, tt.want)
		}
	}
	// A run ending at a float sum ends at the instant it stands for, not
	// the nanosecond before (1.001 s is 1000999999.9999999 ns).
	for _, tt := range []struct {
		endS float64
		want string
	}{
		{1.001, "tiny at 10:00:01.001"},
		{0.7, "tiny at 10:00:00.700"},
		{4.35, "tiny at 10:00:04.350"},
		{2.0000000000000004, "tiny at 10:00:02"},
	} {
		r := tiny()
		r.WallClock, r.DurationS = "2026-12-01T10:00:00Z", tt.endS
		if got := frameResult(r, tt.endS, time.UTC).Scenario; got != tt.want {
			t.Errorf("a run of %v s: %q, want %q", tt.endS, got, tt.want)
		}
	}
}

// A replay's GIF passes the clock and the caption to every frame, and
// refuses a clock the run has no wall clock for.
func TestGIFOnALogsClock(t *testing.T) {
	r := tiny()
	r.WallClock = "2026-12-01T10:00:00Z"
	opts := GIFOptions{Plot: plots.Options{Clock: time.UTC, Caption: &plots.Caption{Limit: "60/m burst 5", Key: "ip"}}, Frames: 2}
	var buf bytes.Buffer
	if err := GIF(&buf, r, opts); err != nil {
		t.Fatal(err)
	}
	if _, err := gif.DecodeAll(bytes.NewReader(buf.Bytes())); err != nil {
		t.Fatalf("the GIF does not decode: %v", err)
	}
	r.WallClock = ""
	if err := GIF(&buf, r, opts); err == nil || !strings.Contains(err.Error(), "wall clock") {
		t.Errorf("a clock without the run's wall clock: %v", err)
	}
}
