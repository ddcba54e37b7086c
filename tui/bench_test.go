package tui

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/scenarios/scenariotest"
	"github.com/ratelim/ratelim/sim"
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
			benchFrames(b, scenariotest.Builtin(b, "runaway-healthcheck"), tc.w, tc.h, tc.speed, true)
		})
	}
}

// BenchmarkFrame10k is a frame of a run of 10,000 clients, each a Poisson
// 1/s on its own key (a token bucket of 10/s, burst 20), at 160×48: the
// job a tick starts (Advance, the snapshot with the state of the keys
// shown, the history and the rows) and the View. At 1× a frame plays
// 50 ms (about 500 clients send a request), and one in 20 ends a step; at
// max every frame plays a step of every client. The view- cases leave the
// simulation out (the Advance is not timed): what the TUI adds to it, a
// Snapshot and the View. worst-ms is the slowest frame: a job and the
// View drawn after it (the verdict, at a run's end, is a job of its own).
//
//	go test -run '^$' -bench Frame10k -benchtime 100x ./tui
func BenchmarkFrame10k(b *testing.B) {
	for _, speed := range []float64{1, math.Inf(1)} {
		for _, sim := range []bool{true, false} {
			name := "160x48-" + speedLabel(speed)
			if !sim {
				name = "view-" + name
			}
			b.Run(name, func(b *testing.B) {
				benchFrames(b, clients10k(10_000), 160, 48, speed, sim)
			})
		}
	}
}

// clients10k is n quiet clients c-1…c-n, each on its own key k-1…k-n, for
// 30 s in steps of 1 s.
func clients10k(n int) sim.Scenario {
	sc := sim.Scenario{
		Name: "clients10k", Duration: 30 * time.Second, Step: time.Second, Seed: 1, Servers: 1, Balancer: sim.RoundRobin,
		Limit:    sim.Limit{Algorithm: "token-bucket", Params: algorithms.Params{Rate: perSecond(10), Burst: 20}, Key: sim.KeyAPIKey},
		Topology: sim.Topology{Kind: sim.Shared, RTT: 500 * time.Microsecond, Clock: sim.ServerClock},
	}
	for i := 1; i <= n; i++ {
		sc.Clients = append(sc.Clients, sim.Client{Name: fmt.Sprint("c-", i), APIKey: fmt.Sprint("k-", i),
			Traffic: []sim.Traffic{{Pattern: sim.Poisson, Rate: perSecond(1)}}})
	}
	return sc
}

// benchFrames plays sc a frame an iteration at w×h and speed: a tick, the
// job it starts, and the View; without sim, the Player is first moved to
// where the tick takes it, untimed. Played to its end the run starts
// again (untimed), so every part of the run is in the figure.
func benchFrames(b *testing.B, sc sim.Scenario, w, h int, speed float64, sim bool) {
	t := &testing.T{}
	m, err := NewModel(sc, Options{Speed: speed})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = m.Close() }()
	m = send(t, m, size(w, h))
	wall := t0
	m = send(t, m, tickMsg(wall))
	// worst is the slowest job and View of any kind; worstFrame of the
	// ticks' frames alone, worstVerdict of the verdicts' (reported apart
	// so that a figure says which kind the worst was).
	var worst, worstFrame, worstVerdict time.Duration
	b.ResetTimer()
	for range b.N {
		wall = wall.Add(frame)
		if !sim || m.done {
			b.StopTimer()
			if m.done {
				m = send(t, m, keyMsg("r"))
			}
			if !sim {
				if err := m.player.Advance(m.ctx, m.onTick(wall).clock); err != nil {
					b.Fatal(err)
				}
			}
			b.StartTimer()
		}
		// A frame is a job and the View after it: the tick's frame, and
		// at a run's end the verdict's job, each drawn when it is done.
		start := time.Now()
		next, _ := m.Update(tickMsg(wall))
		m = next.(Model)
		for m.job != nil {
			msg := m.job()
			next, _ = m.Update(msg)
			m = next.(Model)
			_ = m.View()
			took := time.Since(start)
			worst = max(worst, took)
			if _, ok := msg.(verdictMsg); ok {
				worstVerdict = max(worstVerdict, took)
			} else {
				worstFrame = max(worstFrame, took)
			}
			start = time.Now()
		}
	}
	b.ReportMetric(float64(b.Elapsed())/float64(b.N)/float64(time.Millisecond), "ms/frame")
	b.ReportMetric(float64(worst)/float64(time.Millisecond), "worst-ms")
	b.ReportMetric(float64(worstFrame)/float64(time.Millisecond), "worst-frame-ms")
	b.ReportMetric(float64(worstVerdict)/float64(time.Millisecond), "verdict-ms")
}
