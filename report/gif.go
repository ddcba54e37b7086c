package report

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/gif"
	"image/png"
	"io"
	"math"
	"runtime"
	"slices"
	"strconv"
	"time"

	"gonum.org/v1/plot/vg"

	"github.com/ratelim/ratelim/plots"
	"github.com/ratelim/ratelim/sim"
)

// MaxFrames bounds an animation's frames: enough for the eye to follow a
// run, few enough that the file stays a few megabytes and renders in
// seconds (each frame is a whole timeline plot).
const MaxFrames = 60

// GIF timing, in hundredths of a second (the unit of the format). The
// whole run plays in about playTime, each frame shown at least minDelay
// and at most maxDelay, and the last frame — the finished run, the one a
// viewer wants to read — is held for holdDelay before the loop restarts.
const (
	playTime  = 500
	minDelay  = 8
	maxDelay  = 50
	holdDelay = 400
)

// pixelsPerInch is a PNG's resolution in package plots.
const pixelsPerInch = 96

// GIFOptions say how an animated timeline is drawn.
type GIFOptions struct {
	// Plot is passed to plots.Timeline for every frame. Its Format is
	// ignored (frames are drawn as PNG); its Width and Height, when zero,
	// are the size plots picks for the whole run, kept for every frame.
	Plot plots.Options
	// Frames is the most frames to draw, at most MaxFrames (and the
	// default when zero). There are never more frames than steps.
	Frames int
}

// GIF writes r as an animated timeline: the run unrolling, one frame per
// instant from FrameTimes, each frame the timeline plot of r truncated at
// that instant (see Truncate) and titled with it, the last one the whole
// run, held longer.
// It loops forever.
//
// The frames share one palette: the up to 255 colours the whole run's
// plot uses most, each pixel mapped to its nearest. A plot is flat colour
// with anti-aliased edges, so this keeps lines and text crisp where
// dithering onto a general palette (palette.Plan9) would speckle them.
// After the first frame, each frame stores only the rectangle that changed
// since the previous one, and in it the pixels that did not change are
// the 256th, transparent, colour: the previous frame shows through, and
// the long runs of one index compress to almost nothing. The same r and
// options give the same bytes.
func GIF(w io.Writer, r *sim.Result, opts GIFOptions) error {
	if r == nil {
		return errors.New("report: no result to animate")
	}
	times := FrameTimes(r, opts.Frames)
	if len(times) == 0 {
		return fmt.Errorf("report: the run has no step to animate (duration %gs, step %gs)", r.DurationS, r.StepS)
	}
	popts := opts.Plot
	popts.Format = "png"
	// Every frame laid out as the whole run: early frames, where every
	// client is still at zero, would otherwise fold all into one panel.
	popts.Layout = r
	popts.AxisEndS = r.DurationS
	// The last frame first: it fixes the size every frame is drawn at
	// (the y-axes change as the counts grow; the figure must not) and
	// the palette.
	last, err := frame(frameResult(r, times[len(times)-1], popts.Clock), popts)
	if err != nil {
		return err
	}
	bounds := last.Bounds()
	popts.Width = vg.Length(bounds.Dx()) / pixelsPerInch * vg.Inch
	popts.Height = vg.Length(bounds.Dy()) / pixelsPerInch * vg.Inch
	q := newQuantizer(last)

	anim := &gif.GIF{Config: image.Config{ColorModel: q.gifPalette, Width: bounds.Dx(), Height: bounds.Dy()}}
	delay := min(max(playTime/len(times), minDelay), maxDelay)
	frames := drawFrames(r, times[:len(times)-1], popts)
	defer frames.stop()
	var prev *image.Paletted
	for i := range times {
		img := last
		if i < len(times)-1 {
			f := frames.take(i)
			if f.err != nil {
				return f.err
			}
			img = f.img
		}
		cur := q.paletted(img, bounds)
		sub := cur
		if prev != nil {
			sub = delta(prev, cur, changed(prev, cur), q.transparent)
		}
		anim.Image = append(anim.Image, sub)
		anim.Delay = append(anim.Delay, delay)
		// Each frame is drawn over the one before, which it leaves.
		anim.Disposal = append(anim.Disposal, gif.DisposalNone)
		prev = cur
	}
	anim.Delay[len(anim.Delay)-1] = holdDelay
	if err := gif.EncodeAll(w, anim); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// FrameTimes are the instants, in seconds, an animation of r shows: the
// ends of evenly spaced steps, at most n of them (MaxFrames when n is
// zero or more than that), the last the end of the run. A run of 30 one-
// second steps gives 1, 2, … 30; one of 300 steps gives every fifth.
func FrameTimes(r *sim.Result, n int) []float64 {
	if n <= 0 || n > MaxFrames {
		n = MaxFrames
	}
	if !(r.StepS > 0) || !(r.DurationS > 0) || math.IsInf(r.DurationS, 0) {
		return nil
	}
	steps := int(math.Ceil(r.DurationS/r.StepS - 1e-9))
	n = min(n, steps)
	times := make([]float64, 0, n)
	for i := 1; i <= n; i++ {
		// The i-th of n evenly spaced step ends, rounded up to a whole
		// step, so the last is the run's end.
		s := (i*steps + n - 1) / n
		times = append(times, min(float64(s)*r.StepS, r.DurationS))
	}
	return times
}

// drawnFrame is one frame drawn, or why it could not be.
type drawnFrame struct {
	img *image.RGBA
	err error
}

// frameSource draws an animation's frames in the background, one per
// core at a time, each onto its own channel, so the caller takes them in
// order whatever order they finish in: the bytes do not depend on the
// scheduling. At most one frame per core is drawn ahead of the caller, so
// memory stays a few frames whatever their number.
type frameSource struct {
	frames []chan drawnFrame
	ahead  chan struct{}
	done   chan struct{}
}

func drawFrames(r *sim.Result, times []float64, opts plots.Options) *frameSource {
	s := &frameSource{
		frames: make([]chan drawnFrame, len(times)),
		ahead:  make(chan struct{}, runtime.GOMAXPROCS(0)),
		done:   make(chan struct{}),
	}
	for i := range s.frames {
		s.frames[i] = make(chan drawnFrame, 1) // a drawer never waits on the caller
	}
	go func() {
		for i, t := range times {
			select {
			case s.ahead <- struct{}{}:
			case <-s.done:
				return
			}
			go func() {
				img, err := frame(frameResult(r, t, opts.Clock), opts)
				s.frames[i] <- drawnFrame{img, err}
			}()
		}
	}()
	return s
}

// take waits for frame i, and lets the next one start.
func (s *frameSource) take(i int) drawnFrame {
	f := <-s.frames[i]
	<-s.ahead
	return f
}

// stop starts no more frames; those being drawn finish and are dropped.
func (s *frameSource) stop() { close(s.done) }

// frameResult is what frame t of an animation of r draws: r truncated at
// t, with the instant in the title ("partition at 12 s"), so that a
// viewer, or a slide's audience, knows where the run is. Drawn with
// plots.Options.AxisEndS at the run's end, every frame has the same time
// axis and the run is seen unrolling across it, its data stopping at t,
// rather than the axis stretching under it. With a clock (a replay drawn
// on its log's clock, plots.Options.Clock) the instant is the clock's
// ("replay of access.log at 10:03:20"), as the axis reads.
func frameResult(r *sim.Result, t float64, clock *time.Location) *sim.Result {
	f := Truncate(r, t)
	// Rounded to the µs: a cut is a sum of float steps (2.3000000000000003).
	cut := math.Round(f.DurationS*1e6) / 1e6
	f.Scenario = fmt.Sprintf("%s at %s s", r.Scenario, strconv.FormatFloat(cut, 'f', -1, 64))
	if origin, err := time.Parse(time.RFC3339Nano, r.WallClock); clock != nil && err == nil {
		// Rounded, not truncated: 1.001 s is 1000999999.9999999 ns.
		at := origin.Add(time.Duration(math.Round(cut * 1e9))).In(clock).Round(time.Millisecond)
		layout := "15:04:05"
		if at.Nanosecond() != 0 {
			layout = "15:04:05.000"
		}
		f.Scenario = fmt.Sprintf("%s at %s", r.Scenario, at.Format(layout))
	}
	return f
}

// frame draws r's timeline as a PNG and decodes it: the frame is exactly
// the picture `--plot run.png` would draw.
func frame(r *sim.Result, opts plots.Options) (*image.RGBA, error) {
	var buf bytes.Buffer
	if err := plots.Timeline(&buf, r, opts); err != nil {
		return nil, err
	}
	img, err := png.Decode(&buf)
	if err != nil {
		return nil, fmt.Errorf("report: decoding a frame: %w", err)
	}
	if rgba, ok := img.(*image.RGBA); ok && rgba.Bounds().Min == (image.Point{}) {
		return rgba, nil
	}
	rgba := image.NewRGBA(image.Rect(0, 0, img.Bounds().Dx(), img.Bounds().Dy()))
	draw.Draw(rgba, rgba.Bounds(), img, img.Bounds().Min, draw.Src)
	return rgba, nil
}

// quantizer maps the colours of a plot onto a palette of at most 255,
// remembering each colour's index: a plot has a few thousand distinct
// colours (its edges' blends), so the search runs once per colour, not
// per pixel.
type quantizer struct {
	// palette is the opaque colours, the ones a pixel may be mapped to;
	// gifPalette is them and, last, the transparent colour at index
	// transparent, which a frame uses for "as before".
	palette     color.Palette
	gifPalette  color.Palette
	transparent uint8
	index       map[uint32]uint8
}

// newQuantizer builds the palette from img's most used colours, most used
// first; ties go to the lower colour value, so the palette depends on the
// pixels alone.
func newQuantizer(img *image.RGBA) *quantizer {
	counts := map[uint32]int{}
	for y := 0; y < img.Rect.Dy(); y++ {
		row := img.Pix[y*img.Stride : y*img.Stride+4*img.Rect.Dx()]
		for x := 0; x < len(row); x += 4 {
			counts[pack(row[x:x+4])]++
		}
	}
	colours := make([]uint32, 0, len(counts))
	for c := range counts {
		colours = append(colours, c)
	}
	slices.SortFunc(colours, func(a, b uint32) int {
		return cmp.Or(cmp.Compare(counts[b], counts[a]), cmp.Compare(a, b))
	})
	// White is the page: a frame whose blank parts are not exactly white
	// would flicker.
	if !slices.Contains(colours, white) {
		colours = append([]uint32{white}, colours...)
	}
	q := &quantizer{index: make(map[uint32]uint8, len(colours))}
	for _, c := range colours[:min(len(colours), 255)] {
		q.palette = append(q.palette, unpack(c))
	}
	q.transparent = uint8(len(q.palette))
	q.gifPalette = append(slices.Clone(q.palette), color.RGBA{})
	return q
}

const white = 0xffffffff

// paletted returns img on q's palette, in a frame of the given bounds: a
// smaller image is drawn at its top left on white, a larger one cut.
func (q *quantizer) paletted(img *image.RGBA, bounds image.Rectangle) *image.Paletted {
	out := image.NewPaletted(bounds, q.gifPalette)
	whiteIndex := q.lookup(white)
	for i := range out.Pix {
		out.Pix[i] = whiteIndex
	}
	w, h := min(bounds.Dx(), img.Rect.Dx()), min(bounds.Dy(), img.Rect.Dy())
	for y := 0; y < h; y++ {
		row := img.Pix[y*img.Stride:]
		dst := out.Pix[y*out.Stride:]
		for x := 0; x < w; x++ {
			dst[x] = q.lookup(pack(row[4*x : 4*x+4]))
		}
	}
	return out
}

func (q *quantizer) lookup(c uint32) uint8 {
	if i, ok := q.index[c]; ok {
		return i
	}
	i := uint8(q.palette.Index(unpack(c)))
	q.index[c] = i
	return i
}

// changed is the smallest rectangle holding every pixel in which a and b
// (of the same bounds) differ; a one-pixel rectangle when none do, since
// a GIF frame cannot be empty.
func changed(a, b *image.Paletted) image.Rectangle {
	r := image.Rectangle{}
	bounds := a.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		ra := a.Pix[(y-bounds.Min.Y)*a.Stride : (y-bounds.Min.Y)*a.Stride+bounds.Dx()]
		rb := b.Pix[(y-bounds.Min.Y)*b.Stride : (y-bounds.Min.Y)*b.Stride+bounds.Dx()]
		if bytes.Equal(ra, rb) {
			continue
		}
		x0 := 0
		for ra[x0] == rb[x0] {
			x0++
		}
		x1 := len(ra)
		for ra[x1-1] == rb[x1-1] {
			x1--
		}
		r = r.Union(image.Rect(bounds.Min.X+x0, y, bounds.Min.X+x1, y+1))
	}
	if r.Empty() {
		return image.Rect(bounds.Min.X, bounds.Min.Y, bounds.Min.X+1, bounds.Min.Y+1)
	}
	return r
}

// delta is the rectangle r of cur as a frame of its own, drawn over prev:
// a pixel as it was in prev is the transparent index, so that the frame
// holds only what changed.
func delta(prev, cur *image.Paletted, r image.Rectangle, transparent uint8) *image.Paletted {
	out := image.NewPaletted(r, cur.Palette)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		dst := out.Pix[out.PixOffset(r.Min.X, y):]
		was := prev.Pix[prev.PixOffset(r.Min.X, y):]
		now := cur.Pix[cur.PixOffset(r.Min.X, y):]
		for x := range r.Dx() {
			if now[x] == was[x] {
				dst[x] = transparent
			} else {
				dst[x] = now[x]
			}
		}
	}
	return out
}

func pack(p []uint8) uint32 {
	return uint32(p[0])<<24 | uint32(p[1])<<16 | uint32(p[2])<<8 | uint32(p[3])
}

func unpack(c uint32) color.RGBA {
	return color.RGBA{R: uint8(c >> 24), G: uint8(c >> 16), B: uint8(c >> 8), A: uint8(c)}
}
