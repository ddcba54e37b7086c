package plots

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// rasterize renders svg with rsvg-convert under a fontconfig that knows
// only DejaVu, the fonts Debian installs by default: how an SVG looks
// where Liberation Sans (and Arial) are missing.
func rasterize(t *testing.T, svg []byte) image.Image {
	t.Helper()
	bin, err := exec.LookPath("rsvg-convert")
	if err != nil {
		t.Skip("rsvg-convert is not installed (Debian: apt-get install librsvg2-bin); the SVG font test needs a real rasterizer")
	}
	const dejavu = "/usr/share/fonts/truetype/dejavu"
	if _, err := os.Stat(dejavu); err != nil {
		t.Skipf("no DejaVu fonts at %s (Debian: apt-get install fonts-dejavu-core)", dejavu)
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "fonts.conf")
	os.WriteFile(conf, []byte(fmt.Sprintf(`<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig>
  <dir>%s</dir>
  <cachedir>%s</cachedir>
  <alias><family>sans-serif</family><prefer><family>DejaVu Sans</family></prefer></alias>
</fontconfig>
`, dejavu, filepath.Join(dir, "cache"))), 0o644)
	in := filepath.Join(dir, "in.svg")
	if err := os.WriteFile(in, svg, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--background-color", "white", in)
	cmd.Env = append(os.Environ(), "FONTCONFIG_FILE="+conf)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("rsvg-convert: %v: %s", err, stderr.String())
	}
	img, err := png.Decode(&out)
	if err != nil {
		t.Fatalf("rsvg-convert wrote no PNG: %v", err)
	}
	return img
}

// inkAtEdges returns how many pixels of the outermost band columns at
// the left and right, and rows at the top and bottom, are not white:
// anything drawn there ran into the figure's margin and, a few pixels
// further, off the canvas.
func inkAtEdges(img image.Image, band int) (left, right, top, bottom int) {
	b := img.Bounds()
	inked := func(x, y int) bool {
		c := color.GrayModel.Convert(img.At(x, y)).(color.Gray)
		return c.Y < 0xe0
	}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for i := range band {
			if inked(b.Min.X+i, y) {
				left++
			}
			if inked(b.Max.X-1-i, y) {
				right++
			}
		}
	}
	for x := b.Min.X; x < b.Max.X; x++ {
		for i := range band {
			if inked(x, b.Min.Y+i) {
				top++
			}
			if inked(x, b.Max.Y-1-i) {
				bottom++
			}
		}
	}
	return
}

func TestSVGTextFitsInAWiderFont(t *testing.T) {
	nat := builtin(t, "nat", nil)
	cases := []struct {
		name string
		draw func(*bytes.Buffer) error
	}{
		// Subtitle and headline wrap across the whole width; the side notes
		// are flowed client names and long lines at the right edge.
		{"golden", func(b *bytes.Buffer) error {
			return Timeline(b, goldenResult(), Options{Format: "svg", Width: 8 * vg.Inch})
		}},
		{"nat-by-key", func(b *bytes.Buffer) error { return Timeline(b, nat, Options{Format: "svg", By: "key"}) }},
		{"nat-narrow", func(b *bytes.Buffer) error { return Timeline(b, nat, Options{Format: "svg", Width: 6 * vg.Inch}) }},
		{"vs", func(b *bytes.Buffer) error {
			return TimelineVs(b, goldenResult(), nat, "a-long-label=with-a-value", "another-label=and-its-value", Options{Format: "svg", Width: 9 * vg.Inch})
		}},
		{"grid", func(b *bytes.Buffer) error {
			cells := compareCells()
			cells[0].Why = "admitted 4.00× what one exact limiter would on the same arrivals: 4 servers, each with its own jar, and a long tail"
			return CompareGrid(b, "runaway-healthcheck: every algorithm × topology, admitted ÷ what one exact limiter admits", cells, Options{Format: "svg", Width: 5 * vg.Inch})
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.draw(&b); err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(b.Bytes(), []byte("font-family:'Liberation Sans',Arial,Helvetica,sans-serif;font-kerning:none;")) {
				t.Error("the SVG's text has no font fallback, or kerns")
			}
			img := rasterize(t, b.Bytes())
			if dir := reviewDir(t); dir != "" {
				f, _ := os.Create(filepath.Join(dir, "dejavu-"+tc.name+".png"))
				png.Encode(f, img)
				f.Close()
			}
			// The margin is 0.15in, 14 pixels at rsvg's 96 dpi: text that
			// reaches the outer 6 has spilled most of the way off.
			if l, r, tp, bt := inkAtEdges(img, 6); l+r+tp+bt > 0 {
				t.Errorf("ink in the outer 6 pixels: %d left, %d right, %d top, %d bottom: text is clipped in DejaVu Sans", l, r, tp, bt)
			}
		})
	}
}

// digitsApart draws text in pieces split between every two digits, so
// that no pair is kerned, each piece where the one before ends.
func TestDigitsApartSplitsDigitPairs(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"ip 203.0.113.7", []string{"ip 2", "0", "3.0.1", "1", "3.7"}},
		{"key shop", []string{"key shop"}},
		{"11 clients", []string{"1", "1 clients"}},
		{"", []string{""}},
	}
	face := plotFace(t, sans(10, false))
	for _, tt := range tests {
		rec := &textRecorder{}
		digitsApart{rec}.FillString(face, vg.Point{}, tt.in)
		if !slices.Equal(rec.got, tt.want) {
			t.Errorf("%q drawn as %q, want %q", tt.in, rec.got, tt.want)
		}
		for i := 1; i < len(rec.at); i++ {
			if want := rec.at[i-1] + face.Width(rec.got[i-1]); rec.at[i] != want {
				t.Errorf("%q: piece %d at %v, want %v", tt.in, i, rec.at[i], want)
			}
		}
	}
}

// On the PNG canvas, "11" drawn apart is as wide as two ones, where
// kerned it is narrower, and a long text's digits land where they would
// unsplit (no drift): its width matches the unkerned measure.
func TestDigitsApartOnThePNGCanvas(t *testing.T) {
	ink := func(s string, apart bool) (left, right int) {
		c := vgimg.NewWith(vgimg.UseWH(6*vg.Inch, 0.5*vg.Inch), vgimg.UseDPI(96))
		var cv vg.CanvasSizer = c
		if apart {
			cv = digitsApart{c}
		}
		dc := draw.New(cv)
		dc.FillText(textStyle(14, false, black), vg.Point{X: 4, Y: 10}, s)
		img := c.Image()
		left, right = -1, -1
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
			for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y++ {
				if r, _, _, _ := img.At(x, y).RGBA(); r < 0x8000 {
					if left < 0 {
						left = x
					}
					right = x
					break
				}
			}
		}
		return left, right
	}
	_, kerned := ink("11", false)
	_, apart := ink("11", true)
	if apart <= kerned {
		t.Errorf("\"11\" drawn apart ends at %d px, kerned at %d: the pair is still kerned", apart, kerned)
	}
	// A long text with one pair: drawn apart, it ends where the whole text
	// ends plus the pair's kerning, not pixels away.
	long := "all clients on the shared key, in the last 10 s"
	_, whole := ink(long, false)
	_, split := ink(long, true)
	if d := split - whole; d < 0 || d > 2 {
		t.Errorf("drawn apart, the text ends %d px from where it ends whole: the pieces drift", d)
	}
}

// textRecorder is a canvas that only records the text drawn on it.
type textRecorder struct {
	vg.CanvasSizer
	got []string
	at  []vg.Length
}

func (r *textRecorder) FillString(_ font.Face, pt vg.Point, s string) {
	r.got = append(r.got, s)
	r.at = append(r.at, pt.X)
}

func plotFace(t *testing.T, f font.Font) font.Face {
	t.Helper()
	return font.DefaultCache.Lookup(f, f.Size)
}
