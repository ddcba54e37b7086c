package plots_test

import (
	"bytes"
	"context"
	"image/png"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"

	"github.com/ratelim/ratelim/plots"
	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/sim"
)

// TestEveryBuiltinRendersToPNGAndSVG draws each built-in scenario as a user
// would with `ratelim sim NAME --plot`: a PNG of the asked size with
// something on it, and an SVG that names every client and every fault.
func TestEveryBuiltinRendersToPNGAndSVG(t *testing.T) {
	for _, name := range scenarios.Builtin() {
		t.Run(name, func(t *testing.T) {
			f, err := scenarios.Open(name)
			if err != nil {
				t.Fatal(err)
			}
			r, err := sim.Run(context.Background(), f.Scenario, sim.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var pngBuf bytes.Buffer
			if err := plots.Timeline(&pngBuf, r, plots.Options{Format: "png", Width: 10 * vg.Inch}); err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(&pngBuf)
			if err != nil {
				t.Fatal(err)
			}
			if w := img.Bounds().Dx(); w != 960 {
				t.Errorf("PNG is %d px wide, want 960 (10in at 96 dpi)", w)
			}
			colours := map[uint32]bool{}
			b := img.Bounds()
			for y := b.Min.Y; y < b.Max.Y; y += 3 {
				for x := b.Min.X; x < b.Max.X; x += 3 {
					r, g, bl, _ := img.At(x, y).RGBA()
					colours[r>>8<<16|g>>8<<8|bl>>8] = true
				}
			}
			if len(colours) < 20 {
				t.Errorf("PNG has %d colours: blank or nearly", len(colours))
			}
			var svg bytes.Buffer
			if err := plots.Timeline(&svg, r, plots.Options{Format: "svg"}); err != nil {
				t.Fatal(err)
			}
			text := svg.String()
			for _, c := range r.Clients {
				if !strings.Contains(text, ">"+c.Name+"<") && !strings.Contains(text, c.Name) {
					t.Errorf("SVG does not name client %q", c.Name)
				}
			}
			for _, fault := range r.Faults {
				if !strings.Contains(text, fault.Kind) {
					t.Errorf("SVG does not name fault %q", fault.Kind)
				}
			}
		})
	}
}
