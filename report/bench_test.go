package report

import (
	"bytes"
	"io"
	"testing"

	"github.com/ratelim/ratelim/plots"
)

// The figures in the issue note come from
//
//	go test ./report -run '^$' -bench . -benchmem -count 5
//
// on runaway-healthcheck: ten clients, 30 one-second steps, a 960 × 1559
// px timeline.

// BenchmarkReportHTML is the page alone, the plot already drawn.
func BenchmarkReportHTML(b *testing.B) {
	r := run(b, "runaway-healthcheck")
	var plot bytes.Buffer
	if err := plots.Timeline(&plot, r, plots.Options{}); err != nil {
		b.Fatal(err)
	}
	opts := Options{Plot: Image{Format: "png", Data: plot.Bytes()}, Source: make([]byte, 3000)}
	b.ReportAllocs()
	for b.Loop() {
		if err := HTML(io.Discard, r, opts); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReportWithPlot is what `ratelim report` does after the run:
// draw the timeline, then the page.
func BenchmarkReportWithPlot(b *testing.B) {
	r := run(b, "runaway-healthcheck")
	for b.Loop() {
		var plot bytes.Buffer
		if err := plots.Timeline(&plot, r, plots.Options{}); err != nil {
			b.Fatal(err)
		}
		if err := HTML(io.Discard, r, Options{Plot: Image{Format: "png", Data: plot.Bytes()}}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGIF is `--plot run.gif`: 30 frames, each a timeline drawn,
// decoded and quantized, then encoded.
func BenchmarkGIF(b *testing.B) {
	r := run(b, "runaway-healthcheck")
	var size int
	for b.Loop() {
		var buf bytes.Buffer
		if err := GIF(&buf, r, GIFOptions{}); err != nil {
			b.Fatal(err)
		}
		size = buf.Len()
	}
	b.ReportMetric(float64(size), "bytes/gif")
}

func BenchmarkTruncate(b *testing.B) {
	r := run(b, "runaway-healthcheck")
	b.ReportAllocs()
	for b.Loop() {
		Truncate(r, 15)
	}
}
