package tui

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// BenchmarkFrameRunawayHealthcheck is one frame of runaway-healthcheck
// (the busiest built-in: 10 clients at 8,000 requests a second in all)
// at 80×24 and 160×48: a tick playing 50 ms of virtual time at 1×, or a
// whole step at max speed, then the View. A
// frame comes every 50 ms of wall time; for 20 frames a second it must
// take well under that. Played to its end the run starts again, so every
// part of the run is in the figure.
func BenchmarkFrameRunawayHealthcheck(b *testing.B) {
	for _, tc := range []struct {
		w, h  int
		speed float64
	}{{80, 24, 1}, {160, 48, 1}, {160, 48, math.Inf(1)}} {
		b.Run(fmt.Sprintf("%dx%d-%s", tc.w, tc.h, speedLabel(tc.speed)), func(b *testing.B) {
			t := &testing.T{}
			sc := builtin(b, "runaway-healthcheck")
			m, err := NewModel(sc, Options{Speed: tc.speed})
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = m.Close() }()
			m = send(t, m, size(tc.w, tc.h))
			wall := t0
			m = send(t, m, tickMsg(wall))
			b.ResetTimer()
			for range b.N {
				wall = wall.Add(frame)
				m = send(t, m, tickMsg(wall))
				if m.player.Done() {
					m = send(t, m, keyMsg("r"))
				}
				_ = m.View()
			}
			b.ReportMetric(float64(b.Elapsed())/float64(b.N)/float64(time.Millisecond), "ms/frame")
		})
	}
}
