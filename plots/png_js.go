//go:build js

package plots

import (
	"errors"

	"gonum.org/v1/plot/vg"
)

// errNoPNG is what the browser build says when asked for a PNG: it draws
// SVG alone, which the page shows as it is (png.go says why).
var errNoPNG = errors.New(`plots: this build (GOOS=js, the browser playground) draws SVG only (want Format "svg")`)

// newPNGCanvas refuses: see errNoPNG.
func newPNGCanvas(w, h vg.Length) (canvas, error) { return nil, errNoPNG }
