package plots

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"path/filepath"
	"strings"
	"time"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/ratelim/ratelim/internal/escape"
	"github.com/ratelim/ratelim/sim"
)

// Options says how big a figure is, in which format, and how Timeline
// groups the traffic.
type Options struct {
	// Width and Height are the figure's size. Zero picks a size from the
	// content: Timeline is 10 inches wide and as tall as its panels need;
	// CompareGrid grows with its rows and columns. A PNG has 96 pixels to
	// the inch.
	Width, Height vg.Length
	// Format is "png" (the default when empty) or "svg". SVG keeps its text
	// as text, so client names and fault kinds can be searched for.
	Format string
	// By is what Timeline draws a panel for: "client" (the default), or
	// "key", which adds up the clients sharing a limiter key.
	By string
	// Layout, when set, is the result whose figure Timeline lays r out
	// as: the same clients put in one panel, the same y ranges, the same
	// State and Latency panels. An animation passes the whole run, so that
	// each frame (the run cut short) keeps the last frame's layout instead
	// of, say, putting every client in one panel while all are still at
	// zero. Nil: r's own.
	Layout *sim.Result
	// Focus, when set, names the clients (or keys, with By "key") that
	// Timeline gives a panel each, in this order, at most 11; every other
	// is added up into one "others" panel. A replay of an access log names
	// its most throttled keys, so that hundreds of untouched ones do not
	// bury them.
	Focus []string
	// AxisEndS, when after the result's end, is where the time axis ends:
	// a frame of an animation draws its run so far on the whole run's
	// axis, the data stopping at the frame's instant.
	AxisEndS float64
	// Clock, when set, marks Timeline's and TimelineVs's time axis in
	// wall-clock time in this location, from the result's WallClock (the
	// instant time 0 stood for: a replayed log's first request), on round
	// tenths, seconds, minutes, hours or days as the span suits, titled
	// with the zone's name ("time (Europe/Paris)"), or, for time.Local or
	// an unnamed zone, its abbreviation or offset at the start ("time
	// (CET)", "time (UTC+05:30)").
	// Nil: seconds from the run's start.
	Clock *time.Location
	// Caption, when set, titles a replay's timeline with what the user
	// chose (the limit as given, the key, the log, the window) in place of
	// the simulator's settings a replay did not choose: no seed,
	// balancer, on-error or clock, and the topology only when it is not a
	// replay's own: one server, shared, on the in-memory store (Store
	// "memory").
	Caption *Caption
}

// by returns the validated grouping of Timeline's panels.
func (o Options) by() (string, error) {
	switch by := strings.ToLower(o.By); by {
	case "":
		return "client", nil
	case "client", "key":
		return by, nil
	}
	return "", fmt.Errorf("plots: cannot draw a panel per %q (want client or key)", o.By)
}

// format returns the validated output format.
func (o Options) format() (string, error) {
	switch f := strings.ToLower(o.Format); f {
	case "":
		return "png", nil
	case "png", "svg":
		return f, nil
	}
	return "", fmt.Errorf("plots: unknown format %q (want png or svg)", o.Format)
}

// checkSize refuses a negative width or height (0 is the figure's
// default).
func (o Options) checkSize() error {
	if o.Width < 0 || o.Height < 0 {
		return fmt.Errorf("plots: figure size %v × %v is not positive", o.Width, o.Height)
	}
	return nil
}

// FormatFor returns the format a file name asks for by its extension,
// "png" or "svg", whatever its case.
func FormatFor(path string) (string, error) {
	switch ext := filepath.Ext(path); strings.ToLower(ext) {
	case ".png":
		return "png", nil
	case ".svg":
		return "svg", nil
	default:
		return "", fmt.Errorf("plots: unknown image format %q (want .png or .svg)", ext)
	}
}

// canvas is a drawing surface that writes itself out as an image.
type canvas interface {
	vg.CanvasSizer
	io.WriterTo
}

// newCanvas returns a white canvas of the given size and format. PNG is
// drawn by newPNGCanvas (png.go), which the browser build lacks
// (png_js.go).
func newCanvas(format string, w, h vg.Length) (canvas, error) {
	if format == "svg" {
		// Fonts are named, not embedded: the output is small, byte-for-byte
		// the same for the same input, and its text stays searchable.
		return vgsvg.New(w, h), nil
	}
	return newPNGCanvas(w, h)
}

// render draws a figure of size w × h onto a new canvas and writes it to
// out. gonum panics on some inputs it cannot draw; render turns that into
// an error, so a bad figure is never a crash.
func render(out io.Writer, format string, w, h vg.Length, paint func(draw.Canvas)) (err error) {
	if w <= 0 || h <= 0 {
		return fmt.Errorf("plots: figure size %v × %v is not positive", w, h)
	}
	// A PNG this size is already 100 megapixels.
	if w > 120*vg.Inch || h > 120*vg.Inch {
		return fmt.Errorf("plots: figure size %.0fin × %.0fin is too big (at most 120in a side)", w/vg.Inch, h/vg.Inch)
	}
	c, err := newCanvas(format, w, h)
	if err != nil {
		return err
	}
	dc := draw.New(escapedText{c})
	if format == "png" {
		dc = draw.New(escapedText{digitsApart{c}})
	}
	func() {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("plots: cannot draw the figure: %v", r)
			}
		}()
		dc.SetColor(color.White)
		dc.Fill(dc.Rectangle.Path())
		paint(dc)
	}()
	if err != nil {
		return err
	}
	if format == "svg" {
		var b bytes.Buffer
		if _, err := c.WriteTo(&b); err != nil {
			return fmt.Errorf("plots: write %s: %w", format, err)
		}
		if _, err := out.Write(svgFonts(b.Bytes())); err != nil {
			return fmt.Errorf("plots: write %s: %w", format, err)
		}
		return nil
	}
	if _, err := c.WriteTo(out); err != nil {
		return fmt.Errorf("plots: write %s: %w", format, err)
	}
	return nil
}

// svgFonts gives every text of an SVG written by vgsvg fallbacks for its
// font, which vgsvg names alone ("Liberation Sans"): a viewer without it
// would pick its default, often a serif. Arial and Helvetica have
// Liberation Sans's metrics; sans-serif is whatever the viewer has, which
// widthSlack leaves room for. Kerning is turned off: Liberation Sans (as
// Arial) kerns "11" so tightly that it reads "1l", and a figure is mostly
// numbers.
func svgFonts(svg []byte) []byte {
	return bytes.ReplaceAll(svg, []byte("font-family:Liberation Sans;"),
		[]byte("font-family:'Liberation Sans',Arial,Helvetica,sans-serif;font-kerning:none;"))
}

// escapedText is a canvas that draws every text escaped (escape.Text):
// panel labels, titles, legends and notes name clients and keys, which
// came from input (a YAML name, an access log's key), and no control or
// bidi character of one may reach the SVG (where NUL is not even XML) or
// the PNG (where it would be a box). Escaping where text is drawn, the
// one place all of it passes, leaves none out; textWidth measures the
// same escaped text, so that the layout makes room for it.
type escapedText struct{ vg.CanvasSizer }

// FillString implements vg.Canvas.
func (c escapedText) FillString(f font.Face, pt vg.Point, s string) {
	c.CanvasSizer.FillString(f, pt, escape.Text(s))
}

// digitsApart is a canvas that draws text without kerning between two
// digits. gonum's PNG canvas kerns every pair, and Liberation Sans kerns
// "11" so tightly (by 0.07 em) that "113" reads "1l3". So text is drawn
// in pieces split between every two digits, each piece where the one
// before ends as the canvas itself measures it (in its pixels, as it
// draws): a piece measured in the font's own units would drift from
// where the canvas put the one before. (A zero-width character between
// the digits would break the kerning pair too, but the PNG canvas draws
// it as a hairline.)
type digitsApart struct{ vg.CanvasSizer }

// FillString implements vg.Canvas.
func (c digitsApart) FillString(f font.Face, pt vg.Point, s string) {
	pieces := splitDigitPairs(s)
	if len(pieces) == 1 {
		c.CanvasSizer.FillString(f, pt, s)
		return
	}
	advance := f.Width
	if d, ok := c.CanvasSizer.(interface{ DPI() float64 }); ok {
		face := f.FontFace(d.DPI())
		defer face.Close()
		advance = func(s string) vg.Length {
			return vg.Length(float64(xfont.MeasureString(face, s)) / 64 / d.DPI() * 72)
		}
	}
	for _, p := range pieces {
		c.CanvasSizer.FillString(f, pt, p)
		pt.X += advance(p)
	}
}

// splitDigitPairs splits s between every two digits.
func splitDigitPairs(s string) []string {
	var out []string
	start, prev := 0, rune(-1)
	for i, r := range s {
		if isDigit(prev) && isDigit(r) {
			out = append(out, s[start:i])
			start = i
		}
		prev = r
	}
	return append(out, s[start:])
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }
