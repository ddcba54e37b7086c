package plots

import (
	"context"
	"flag"
	"io"
	"path/filepath"
	"testing"

	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/store"
)

var docs = flag.Bool("docs", false, "write the side-by-side pictures under ../docs/")

// TestDocsPictures writes docs/store-outage-vs.png, the picture of
// `ratelim sim store-outage --vs on_error=fail-closed`, when run with
// -docs (go test ./plots -run DocsPictures -docs). The one-run pictures
// are `ratelim sim NAME --plot docs/NAME.png`.
func TestDocsPictures(t *testing.T) {
	if !*docs {
		t.Skip("writes docs/*.png only with -docs")
	}
	open := builtin(t, "store-outage", nil)
	closed := builtin(t, "store-outage", func(sc *sim.Scenario) { sc.Topology.OnError = store.FailClosed })
	path := filepath.Join("..", "docs", "store-outage-vs.png")
	if err := WriteFile(path, func(w io.Writer) error {
		return TimelineVs(w, open, closed, "on-error=fail-open", "on-error=fail-closed", Options{})
	}); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkBuiltinPNG times drawing each built-in scenario's timeline as
// a PNG at the default size, as `ratelim sim NAME --plot out.png` does;
// the simulation runs once, outside the timer.
func BenchmarkBuiltinPNG(b *testing.B) {
	for _, name := range scenarios.Builtin() {
		f, err := scenarios.Open(name)
		if err != nil {
			b.Fatal(err)
		}
		r, err := sim.Run(context.Background(), f.Scenario, sim.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if err := Timeline(io.Discard, r, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
