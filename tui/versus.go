package tui

import (
	"context"
	"errors"

	"github.com/ratelim/ratelim/sim"
)

// versusRun is the second run of a side-by-side (Options.Versus): the
// same traffic under another policy, algorithm or topology, played by the
// first run's clock and drawn under each of its rows on the first run's
// scale. It is replaced, never changed in place, so that a Model copy
// keeps the run it was made with.
type versusRun struct {
	sc      sim.Scenario
	player  *sim.Player
	snap    sim.Snapshot
	hist    history
	verdict *verdict
	labels  [2]string
}

func newVersus(ctx context.Context, sc sim.Scenario, opts sim.Options, labels [2]string) (*versusRun, error) {
	p, err := sim.NewPlayer(ctx, sc, opts)
	if err != nil {
		return nil, err
	}
	if labels[0] == "" {
		labels[0] = "A"
	}
	if labels[1] == "" {
		labels[1] = "B"
	}
	v := &versusRun{sc: sc, player: p, snap: p.Snapshot(ctx), labels: labels}
	v.hist.update(v.snap, sc.Step.Seconds(), p.Result)
	return v, nil
}

// versusTo is v played to m's clock (within its own duration), with its
// verdict once m's run is done, and the error that stopped it, if one
// did.
func versusTo(v *versusRun, m Model) (*versusRun, error) {
	next := *v
	err := next.player.Advance(m.ctx, min(m.clock, next.sc.Duration))
	next.snap = next.player.Snapshot(m.ctx)
	next.hist.update(next.snap, next.sc.Step.Seconds(), next.player.Result)
	if m.player.Done() && next.verdict == nil && err == nil {
		// The file's expectations are for the scenario as written: the
		// first run's.
		next.verdict = newVerdict(next.player.Result(), nil, false)
	}
	return &next, err
}

// other is m drawing the second run in place of the first: every part of
// the frame reads the run it draws from the Model, so the second run's
// rows, gauges and chart are the first's code. The scale stays the
// first's.
func (m Model) other() Model {
	b := m
	v := m.vs
	b.sc, b.player, b.snap, b.hist, b.verdict = v.sc, v.player, v.snap, v.hist, v.verdict
	b.vs = nil
	b.fullRate = m.scaleRate()
	return b
}

// scaleRate is the rate that fills a strip's cell: the limit's, or the
// first run's when m draws the second.
func (m Model) scaleRate() float64 {
	if m.fullRate > 0 {
		return m.fullRate
	}
	return m.sc.Limit.Params.Rate.PerSecond()
}

// perRow is how many lines a row takes: two side by side.
func (m Model) perRow() int {
	if m.vs != nil {
		return 2
	}
	return 1
}

// tags are the letters that mark the two runs' lines.
func (m Model) tags() (a, b string) {
	if m.vs == nil {
		return "", ""
	}
	return "A", "B"
}

// closeVersus releases the second run's stores.
func (m Model) closeVersus() error {
	if m.vs == nil {
		return nil
	}
	return m.vs.player.Close()
}

var errVersusKeys = errors.New("a and t change one run of the two: with --vs, quit and choose both on the command line")
