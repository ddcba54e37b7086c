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
// keeps the frame it was made with.
type versusRun struct {
	run
	labels [2]string
}

// newVersus opens sc, the second run, and takes its first frame with the
// state of keys.
func newVersus(ctx context.Context, sc sim.Scenario, opts sim.Options, labels [2]string, byKey bool, keys []string) (*versusRun, error) {
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
	return &versusRun{run: startRun(ctx, sc, p, byKey, keys), labels: labels}, nil
}

// other is m drawing the second run in place of the first: every part of
// the frame reads the run it draws from the Model, so the second run's
// rows, gauges and chart are the first's code. The scale stays the
// first's.
func (m Model) other() Model {
	b := m
	b.run = m.vs.run
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

var errVersusKeys = errors.New("a and t change one run of the two: with --vs, quit and choose both on the command line")
