package plots

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ratelim/ratelim/internal/words"
	"github.com/ratelim/ratelim/sim"
)

// The panels of a timeline other than the traffic panels: the faults
// lane, the State panel and the Latency panel, and the time axis's ticks.

// faultsPanel draws the faults as labelled bars in lanes.
func faultsPanel(d *timelineData, width vg.Length) panel {
	label := func(sp sim.FaultSpan) string {
		s := sp.Kind
		if sp.Detail != "" {
			s += ": " + sp.Detail
		}
		return s
	}
	// Where a label ends, in seconds, on a data area about this wide.
	dataW := width - 2*margin - sideWidth(width) - sideGap - 0.6*vg.Inch
	perPoint := d.axisS / math.Max(float64(dataW), 1)
	sty := textStyle(sizeNote, false, black)
	lane, lanes := assignLanes(d.spans, func(sp sim.FaultSpan) (float64, float64) {
		return labelSpan(sp.StartS, float64(textWidth(sty, label(sp))+vg.Points(6))*perPoint, 0, d.axisS)
	})
	p := timePlot(d, nil)
	p.Add(faultLanes{faults: d.spans, lane: lane, lanes: lanes, label: label})
	p.X.Min, p.X.Max = 0, d.axisS
	p.Y.Min, p.Y.Max = 0, float64(lanes)
	p.HideY()
	return panel{
		plot:   p,
		height: 0.12*vg.Inch + vg.Length(lanes)*0.24*vg.Inch,
		side:   sideNote{heading: lanesHeading(d), lines: []string{"shaded in every panel"}},
	}
}

// statePanel draws each shown key's remaining allowance per store copy.
func statePanel(d *timelineData, s *stateData, v stateView, top float64, width vg.Length) panel {
	p := timePlot(d, countTicks{})
	// Line i gets the i-th colour and the i-th dash pattern (7 colours and
	// 4 patterns make 28 distinct lines). Where two lines coincide for a
	// while, the dashed one lets the other show through its gaps.
	style := func(i int) draw.LineStyle {
		return draw.LineStyle{Color: seriesPalette[i%len(seriesPalette)], Width: vg.Points(1.4), Dashes: seriesDashes[i%len(seriesDashes)]}
	}
	oneKey, oneCopy := len(s.keys) == 1, len(s.copies) == 1
	note := sideNote{heading: v.heading}
	if v.policy != "" {
		note.lines = append(note.lines, v.policy)
	}
	switch {
	case oneKey && v.policy == "":
		note.heading = "State of key " + s.keys[0]
		note.lines = append(note.lines, "remaining per store copy")
	case oneKey:
		note.lines = append(note.lines, "remaining of key "+s.keys[0]+" per store copy")
	case oneCopy:
		note.lines = append(note.lines, "remaining per key in the "+s.copies[0]+" store")
	default:
		note.lines = append(note.lines, "remaining per key and store copy")
	}
	if s.busiest > 0 {
		note.lines = append(note.lines, fmt.Sprintf("%d busiest, %d least busy of %d keys", s.busiest, s.quietest, s.totalKeys))
	}
	if s.hidden > 0 {
		note.lines = append(note.lines, fmt.Sprintf("%d more %s not drawn", s.hidden, words.Plural(s.hidden, "line", "lines")))
	}
	if s.unanswered {
		note.lines = append(note.lines, "gaps: the store did not answer")
	}
	for i, line := range s.lines {
		for _, run := range line.runs {
			p.Add(&plotter.Line{XYs: run, StepStyle: plotter.PreStep, LineStyle: style(i)})
		}
		name := func(key, cp string) string {
			switch {
			case oneKey:
				return cp
			case oneCopy:
				return key
			}
			return key + " · " + cp
		}
		label := name(line.key, line.copy)
		if n := len(line.same); n > 0 {
			all := label
			for _, o := range line.same {
				all += " = " + name(o[0], o[1])
			}
			label += fmt.Sprintf(" (+%d alike)", n)
			if n <= 3 && textWidth(legendStyle, all) <= noteWidth(width)-vg.Points(thumbW+4) {
				label = all
			}
		}
		note.legend = append(note.legend, legendEntry{label: label, thumb: &plotter.Line{LineStyle: style(i)}})
	}
	p.X.Min, p.X.Max = 0, d.axisS
	p.Y.Min, p.Y.Max = 0, top
	p.Y.Label.Text = "remaining (req)"
	switch {
	case d.weighted:
		p.Y.Label.Text = "remaining (quota)"
	case d.r.Limit.MaxInFlight > 0:
		p.Y.Label.Text = "free slots"
	}
	if d.r.Shedder != nil {
		note.lines = append(note.lines, fmt.Sprintf("%s: the shedder's capacity left (normal leaves %s, sheddable %s)",
			sim.FleetKey, words.Thousands(d.r.Shedder.Reserve["normal"]), words.Thousands(d.r.Shedder.Reserve["sheddable"])))
	}
	return panel{plot: p, height: max(1.5*vg.Inch, note.height(noteWidth(width))+0.15*vg.Inch), side: note}
}

// latencyPanel draws the worst client's p50 and p99 in each step.
func latencyPanel(d *timelineData, l *latencyData, top float64) panel {
	p := timePlot(d, plot.DefaultTicks{})
	ts := d.stepTimes()
	has := func(i int) bool { return l.has[i] }
	p50 := draw.LineStyle{Color: colP50, Width: vg.Points(1.2)}
	p99 := draw.LineStyle{Color: colP99, Width: vg.Points(3)}
	rtt := draw.LineStyle{Color: grey, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(1), vg.Points(2)}}
	note := sideNote{heading: "Latency", lines: []string{"the worst client in each step"}}
	if d.r.RTTMs > 0 {
		p.Add(&plotter.Line{XYs: plotter.XYs{{X: 0, Y: d.r.RTTMs}, {X: d.axisS, Y: d.r.RTTMs}}, LineStyle: rtt})
	}
	// p99 under p50, wider: where they are equal both still show.
	for _, run := range stepRuns(ts, l.p99, has) {
		p.Add(&plotter.Line{XYs: run, StepStyle: plotter.PostStep, LineStyle: p99})
	}
	for _, run := range stepRuns(ts, l.p50, has) {
		p.Add(&plotter.Line{XYs: run, StepStyle: plotter.PostStep, LineStyle: p50})
	}
	note.legend = append(note.legend,
		legendEntry{label: "p50", thumb: &plotter.Line{LineStyle: p50}},
		legendEntry{label: "p99", thumb: &plotter.Line{LineStyle: p99}})
	if d.r.RTTMs > 0 {
		note.legend = append(note.legend, legendEntry{label: "store round trip", thumb: &plotter.Line{LineStyle: rtt}})
	}
	p.X.Min, p.X.Max = 0, d.axisS
	p.Y.Min, p.Y.Max = 0, math.Max(top, 1e-3)
	p.Y.Label.Text = "latency (ms)"
	return panel{plot: p, height: 1.5 * vg.Inch, side: note}
}

// timeTicks marks the time axis every 1, 2 or 5 × 10ⁿ seconds, 5 to 12
// marks in all, with a minor mark between.
type timeTicks struct{}

// Ticks implements plot.Ticker.
func (timeTicks) Ticks(min, max float64) []plot.Tick {
	span := max - min
	if !(span > 0) {
		return nil
	}
	step := math.Pow10(int(math.Floor(math.Log10(span / 10))))
	for _, m := range []float64{1, 2, 5, 10, 20, 50} {
		if span/(step*m) <= 12 {
			step *= m
			break
		}
	}
	var ticks []plot.Tick
	for i := math.Ceil(min / step * 2); i/2*step <= max+step*1e-9; i++ {
		v := i / 2 * step
		if math.Mod(i, 2) == 0 {
			ticks = append(ticks, plot.Tick{Value: v, Label: trimFloat(v)})
		} else {
			ticks = append(ticks, plot.Tick{Value: v})
		}
	}
	return ticks
}

// lanesHeading names the lane of spans: Faults, or Shadow mode when the
// limit's shadow mode is all there is.
func lanesHeading(d *timelineData) string {
	if len(d.r.Faults) == 0 && len(d.spans) > 0 {
		return "Shadow mode"
	}
	return "Faults"
}
