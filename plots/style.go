package plots

import (
	"image/color"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ratelim/ratelim/sim"
)

// The Okabe–Ito palette: eight colours that stay distinct under the common
// kinds of colour blindness. Each meaning keeps its colour in every panel
// and every plot: allowed is always bluish green, and nothing else is.
var (
	black         = color.NRGBA{0x00, 0x00, 0x00, 0xff}
	orange        = color.NRGBA{0xe6, 0x9f, 0x00, 0xff}
	skyBlue       = color.NRGBA{0x56, 0xb4, 0xe9, 0xff}
	bluishGreen   = color.NRGBA{0x00, 0x9e, 0x73, 0xff}
	yellow        = color.NRGBA{0xf0, 0xe4, 0x42, 0xff}
	blue          = color.NRGBA{0x00, 0x72, 0xb2, 0xff}
	vermillion    = color.NRGBA{0xd5, 0x5e, 0x00, 0xff}
	reddishPurple = color.NRGBA{0xcc, 0x79, 0xa7, 0xff}

	grey      = color.NRGBA{0x99, 0x99, 0x99, 0xff}
	gridGrey  = color.NRGBA{0xe3, 0xe3, 0xe3, 0xff}
	textGrey  = color.NRGBA{0x44, 0x44, 0x44, 0xff}
	paleWhite = color.NRGBA{0xf7, 0xf7, 0xf7, 0xff}
)

// What each series is drawn in.
var (
	colAllowed      = bluishGreen
	colRejected     = vermillion
	colFailedOpen   = orange
	colFailedClosed = reddishPurple
	colRetries      = blue
	colLimit        = black
	colP50          = skyBlue
	colP99          = blue
)

// seriesPalette colours the lines of the State panel (one per key, or one
// per store copy when there is one key). Bluish green is left out: it
// means "allowed"; yellow is left out: it is too faint for a thin line.
var seriesPalette = []color.Color{blue, orange, skyBlue, vermillion, reddishPurple, black, grey}

// seriesDashes tell apart store copies of one key when colour already
// names the key.
var seriesDashes = [][]vg.Length{
	nil,
	{vg.Points(5), vg.Points(2.5)},
	{vg.Points(1.5), vg.Points(1.5)},
	{vg.Points(6), vg.Points(2), vg.Points(1.5), vg.Points(2)},
}

// faultColour is the shading of a fault window: the hue its kind names
// (sim.FaultKind.Shade), and sky blue for a limit's shadow window.
func faultColour(kind string) color.Color {
	switch kind {
	case "shadow":
		return skyBlue
	case spanFence:
		return reddishPurple
	case spanElection:
		return grey
	}
	return faultShades[sim.FaultKind(kind).Shade()]
}

// faultShades are the colours of the hues fault kinds name.
var faultShades = map[sim.FaultShade]color.Color{
	sim.ShadeOrange:        orange,
	sim.ShadeYellow:        yellow,
	sim.ShadeGrey:          grey,
	sim.ShadeSkyBlue:       skyBlue,
	sim.ShadeReddishPurple: reddishPurple,
}

// withAlpha returns c at opacity a (0–255).
func withAlpha(c color.Color, a uint8) color.Color {
	r, g, b, _ := c.RGBA()
	return color.NRGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), a}
}

// sans is the face of every text: Liberation Sans is compiled into gonum,
// so a plot looks the same on every machine.
func sans(size vg.Length, bold bool) font.Font {
	f := font.Font{Typeface: "Liberation", Variant: "Sans"}
	if bold {
		f.Weight = xfont.WeightBold
	}
	return font.From(f, size)
}

// textStyle returns a left-aligned, baseline-at-bottom text style.
func textStyle(size vg.Length, bold bool, c color.Color) text.Style {
	return text.Style{
		Color:   c,
		Font:    sans(size, bold),
		XAlign:  draw.XLeft,
		YAlign:  draw.YBottom,
		Handler: plot.DefaultTextHandler,
	}
}

// Font sizes, in points.
const (
	sizeTitle    = 13
	sizeHeadline = 10.5
	sizeSubtitle = 9
	sizeLabel    = 9
	sizeTick     = 8
	sizeNote     = 8
)

// newPlot returns a plot in the house style: sans-serif axes, no title,
// no gonum legend (legends are drawn beside the panels, never on the data).
func newPlot() *plot.Plot {
	p := plot.New()
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		ax.Label.TextStyle.Font = sans(sizeLabel, false)
		ax.Tick.Label.Font = sans(sizeTick, false)
		ax.Tick.Length = vg.Points(4)
		ax.Padding = vg.Points(2)
		ax.Label.Padding = vg.Points(2)
	}
	return p
}
