//go:build !js

package plots

import (
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/vgimg"
)

// newPNGCanvas returns a PNG canvas of size w × h at 96 pixels to the
// inch. It is apart from render.go so that the browser build (png_js.go)
// links no rasterizer: vgimg and what it pulls in (gg, freetype's raster,
// x/image/draw, image/png's encoder) are a page's weight for a format the
// page never draws.
func newPNGCanvas(w, h vg.Length) (canvas, error) {
	return vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(vgimg.DefaultDPI))}, nil
}
