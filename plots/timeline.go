package plots

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ratelim/ratelim/sim"
)

// Timeline draws what each client of r experienced, step by step, on one
// time axis in seconds:
//
//   - a Faults lane, when there are faults: each fault a labelled bar, its
//     window shaded down through every panel below;
//   - one panel per client (or per limiter key, with Options.By "key"):
//     requests allowed, rejected, and the parts of those the fail policy
//     decided while the store was failing, retries, and the configured
//     limit per step. At most 12 panels: past that the remaining clients
//     are added up into one "others" panel that names them;
//   - a State panel: each key's remaining allowance in each copy of the
//     store ("shared", "server-0", "primary", "replica"), so per-server
//     jars, or a split brain's two copies drifting apart, show as
//     separate lines. At most the 8 busiest keys, and it says so;
//   - a Latency panel, when any request waited: the worst client's p50
//     and p99 in each step, in milliseconds.
//
// The title names the scenario, algorithm, topology, store, servers and
// seed. Counts use a log scale when rejections dwarf admissions, so that
// the admitted line can still be read against the limit.
func Timeline(w io.Writer, r *sim.Result, opts Options) error {
	if r == nil {
		return errors.New("plots: no result to draw")
	}
	format, err := opts.format()
	if err != nil {
		return err
	}
	by := strings.ToLower(opts.By)
	switch by {
	case "":
		by = "client"
	case "client", "key":
	default:
		return fmt.Errorf("plots: cannot draw a panel per %q (want client or key)", opts.By)
	}
	d, err := newTimelineData(r, by)
	if err != nil {
		return err
	}
	width := opts.Width
	if width == 0 {
		width = 10 * vg.Inch
	}
	if width < 0 || opts.Height < 0 {
		return fmt.Errorf("plots: figure size %v × %v is not positive", width, opts.Height)
	}
	h, panels := timelineFigure(d, width)
	fixed := 2*margin + h.height(width-2*margin) + panelGap
	height := opts.Height
	if height == 0 {
		height = fixed
		for _, p := range panels {
			height += p.height + panelGap
		}
	}
	if least := fixed + vg.Length(len(panels))*(minPanel+panelGap); height < least {
		return fmt.Errorf("plots: a figure %.1fin high has no room for %d panels (want at least %.1fin)", height/vg.Inch, len(panels), least/vg.Inch)
	}
	return render(w, format, width, height, func(dc draw.Canvas) { drawStack(dc, h, panels) })
}

// minPanel is the least height a panel is drawn in.
const minPanel = 0.3 * vg.Inch

// timelineFigure builds the title block and the panels of d for a figure
// width wide.
func timelineFigure(d *timelineData, width vg.Length) (header, []panel) {
	r := d.r
	var panels []panel
	if len(r.Faults) > 0 {
		panels = append(panels, faultsPanel(d, width))
	}

	// One kind of y axis for every traffic panel: a log scale when what
	// was sent dwarfs what was admitted, so the admitted line can still be
	// read against the limit. Each panel has its own range.
	tops := make([]float64, len(d.panels))
	top, low := 1.0, math.Max(d.limitStep, 1)
	for i, t := range d.panels {
		tops[i] = math.Max(1, d.limitStep*float64(max(len(t.keys), 1)))
		for _, s := range t.steps {
			tops[i] = math.Max(tops[i], float64(max(s.sent, s.retries)))
			low = math.Max(low, float64(s.allowed))
		}
		top = math.Max(top, tops[i])
	}
	logScale := top > 8*low && top > 20

	used := map[string]bool{}
	h := len(d.panels)
	tall := 1.1 * vg.Inch
	switch {
	case h <= 3:
		tall = 1.7 * vg.Inch
	case h <= 6:
		tall = 1.35 * vg.Inch
	}
	for i, t := range d.panels {
		p := trafficPlot(d, t, tops[i], logScale, used)
		heading := t.name
		if d.by == "key" && !t.folded {
			heading = "key " + t.name
		}
		note := sideNote{heading: heading, lead: t.lead, names: t.members, lines: t.notes}
		panels = append(panels, panel{plot: p, height: max(tall, note.height(noteWidth(width))+0.2*vg.Inch), side: note})
	}
	if s := newStateData(r); s != nil {
		panels = append(panels, statePanel(d, s, width))
	}
	if l := newLatencyData(d); l != nil {
		panels = append(panels, latencyPanel(d, l))
	}

	// Only the bottom panel labels the shared time axis.
	last := panels[len(panels)-1].plot
	last.X.Tick.Marker = timeTicks{}
	last.X.Label.Text = "time (s)"
	panels[len(panels)-1].height += 0.4 * vg.Inch

	hd := header{
		title:    fmt.Sprintf("%s · %s · %s on %s · %d %s · seed %d", or(r.Scenario, "unnamed scenario"), r.Algorithm, r.Topology, r.Store, r.Servers, plural(r.Servers, "server", "servers"), r.Seed),
		subtitle: subtitle(d, logScale),
		legend:   trafficLegend(used),
	}
	return hd, panels
}

func or(s, otherwise string) string {
	if s == "" {
		return otherwise
	}
	return s
}

// subtitle says what the limit and the run's settings were.
func subtitle(d *timelineData, logScale bool) string {
	r := d.r
	l := r.Limit
	var parts []string
	rate := fmt.Sprintf("%s/s", trimFloat(l.RatePerS))
	switch {
	case l.WindowS > 0:
		parts = append(parts, fmt.Sprintf("limit %s per %s window (%s)", trimFloat(l.RatePerS*l.WindowS), trimFloat(l.WindowS)+"s", rate))
	case r.Algorithm == "leaky-bucket":
		parts = append(parts, fmt.Sprintf("drains %s, queue %d", rate, l.Burst))
	default:
		parts = append(parts, fmt.Sprintf("limit %s, burst %d", rate, l.Burst))
	}
	if l.Key != "" {
		parts = append(parts, "key "+l.Key)
	}
	parts = append(parts, "step "+trimFloat(d.stepS)+"s")
	for _, kv := range [][2]string{{"balancer", r.Balancer}, {"on error", r.OnError}, {"clock", r.Clock}} {
		if kv[1] != "" {
			parts = append(parts, kv[0]+" "+kv[1])
		}
	}
	if r.RTTMs > 0 {
		parts = append(parts, "store round trip "+trimFloat(r.RTTMs)+" ms")
	}
	scale := "counts per step"
	if logScale {
		scale += " on a log scale"
	}
	parts = append(parts, scale)
	return strings.Join(parts, " · ")
}

func trimFloat(v float64) string { return fmt.Sprintf("%.4g", v) }

// timePlot returns a panel's plot with the shared time axis (unlabelled:
// the bottom panel labels it) and the fault windows shaded.
func timePlot(d *timelineData, yTicks plot.Ticker) *plot.Plot {
	p := newPlot()
	p.X.Min, p.X.Max = 0, d.endS
	p.X.Tick.Marker = unlabelled{timeTicks{}}
	p.Y.Tick.Marker = yTicks
	if len(d.r.Faults) > 0 {
		p.Add(faultShade{d.r.Faults})
	}
	p.Add(gridLines{x: timeTicks{}, y: yTicks})
	return p
}

// The names of the series in the shared legend, which lists only those
// drawn somewhere.
const (
	serAllowed      = "allowed"
	serRejected     = "rejected"
	serFailedOpen   = "failed open (part of allowed)"
	serFailedClosed = "failed closed (part of rejected)"
	serRetries      = "retries"
	serLimit        = "limit (rate × step)"
)

var trafficOrder = []string{serAllowed, serRejected, serFailedOpen, serFailedClosed, serRetries, serLimit}

// trafficLine returns a line of a traffic panel in its series' style; the
// shared legend draws its thumbnails from the same lines, without points.
func trafficLine(name string, xy plotter.XYs) *plotter.Line {
	l := &plotter.Line{XYs: xy, StepStyle: plotter.PostStep}
	switch name {
	case serAllowed:
		l.LineStyle = draw.LineStyle{Color: colAllowed, Width: vg.Points(1.6)}
		l.FillColor = withAlpha(colAllowed, 0x38)
	case serRejected:
		l.LineStyle = draw.LineStyle{Color: colRejected, Width: vg.Points(1.1)}
	case serFailedOpen:
		// A wide translucent band under the line it is part of, like a
		// highlighter: both stay visible where they coincide.
		l.LineStyle = draw.LineStyle{Color: withAlpha(colFailedOpen, 0xa0), Width: vg.Points(6)}
	case serFailedClosed:
		l.LineStyle = draw.LineStyle{Color: withAlpha(colFailedClosed, 0xa0), Width: vg.Points(6)}
	case serRetries:
		l.LineStyle = draw.LineStyle{Color: colRetries, Width: vg.Points(1.1), Dashes: []vg.Length{vg.Points(3), vg.Points(2)}}
	case serLimit:
		l.StepStyle = plotter.NoStep
		l.LineStyle = draw.LineStyle{Color: colLimit, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(5), vg.Points(3)}}
	}
	return l
}

func trafficLegend(used map[string]bool) []legendEntry {
	var out []legendEntry
	for _, name := range trafficOrder {
		if used[name] {
			out = append(out, legendEntry{label: name, thumb: trafficLine(name, nil)})
		}
	}
	return out
}

// trafficPlot draws one traffic panel, noting in used which series it drew.
func trafficPlot(d *timelineData, t traffic, top float64, logScale bool, used map[string]bool) *plot.Plot {
	var yTicks plot.Ticker = countTicks{}
	if logScale {
		yTicks = log1pTicks{}
	}
	p := timePlot(d, yTicks)
	ts := d.stepTimes()
	add := func(name string, xys ...plotter.XYs) {
		for _, xy := range xys {
			p.Add(trafficLine(name, xy))
			used[name] = true
		}
	}
	fo, fc := values(t, func(c counts) int64 { return c.failedOpen }), values(t, func(c counts) int64 { return c.failedClosed })
	add(serFailedOpen, stepRuns(ts, fo, func(i int) bool { return fo[i] > 0 })...)
	add(serFailedClosed, stepRuns(ts, fc, func(i int) bool { return fc[i] > 0 })...)
	add(serAllowed, stepLine(ts, values(t, func(c counts) int64 { return c.allowed })))
	if t.total.rejected > 0 {
		add(serRejected, stepLine(ts, values(t, func(c counts) int64 { return c.rejected })))
	}
	re := values(t, func(c counts) int64 { return c.retries })
	add(serRetries, stepRuns(ts, re, func(i int) bool { return re[i] > 0 })...)
	if d.limitStep > 0 {
		limit := d.limitStep * float64(max(len(t.keys), 1))
		add(serLimit, plotter.XYs{{X: 0, Y: limit}, {X: d.endS, Y: limit}})
	}

	p.X.Min, p.X.Max = 0, d.endS
	p.Y.Min = 0
	if logScale {
		p.Y.Scale = log1pScale{}
		p.Y.Max = math.Expm1(math.Log1p(top) * 1.04)
	} else {
		p.Y.Max = top * 1.06
	}
	p.Y.Label.Text = "req / step"
	return p
}

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
	perPoint := d.endS / math.Max(float64(dataW), 1)
	sty := textStyle(sizeNote, false, black)
	lane, lanes := assignLanes(d.r.Faults, func(sp sim.FaultSpan) (float64, float64) {
		return labelSpan(sp.StartS, float64(sty.Width(label(sp))+vg.Points(6))*perPoint, 0, d.endS)
	})
	p := timePlot(d, nil)
	p.Add(faultLanes{faults: d.r.Faults, lane: lane, lanes: lanes, label: label})
	p.X.Min, p.X.Max = 0, d.endS
	p.Y.Min, p.Y.Max = 0, float64(lanes)
	p.HideY()
	return panel{
		plot:   p,
		height: 0.12*vg.Inch + vg.Length(lanes)*0.24*vg.Inch,
		side:   sideNote{heading: "Faults", lines: []string{"shaded in every panel"}},
	}
}

// statePanel draws each shown key's remaining allowance per store copy.
func statePanel(d *timelineData, s *stateData, width vg.Length) panel {
	p := timePlot(d, countTicks{})
	// Line i gets the i-th colour and the i-th dash pattern (7 colours and
	// 4 patterns make 28 distinct lines). Where two lines coincide for a
	// while, the dashed one lets the other show through its gaps.
	style := func(i int) draw.LineStyle {
		return draw.LineStyle{Color: seriesPalette[i%len(seriesPalette)], Width: vg.Points(1.4), Dashes: seriesDashes[i%len(seriesDashes)]}
	}
	oneKey, oneCopy := len(s.keys) == 1, len(s.copies) == 1
	note := sideNote{heading: "State"}
	switch {
	case oneKey:
		note.heading = "State of key " + s.keys[0]
		note.lines = append(note.lines, "remaining per store copy")
	case oneCopy:
		note.lines = append(note.lines, "remaining per key in the "+s.copies[0]+" store")
	default:
		note.lines = append(note.lines, "remaining per key and store copy")
	}
	if len(s.keys) < s.totalKeys {
		note.lines = append(note.lines, fmt.Sprintf("the %d busiest of %d keys shown", len(s.keys), s.totalKeys))
	}
	if s.hidden > 0 {
		note.lines = append(note.lines, fmt.Sprintf("%d more %s not drawn", s.hidden, plural(s.hidden, "line", "lines")))
	}
	if s.unanswered {
		note.lines = append(note.lines, "gaps: the store did not answer")
	}
	for i, line := range s.lines {
		for _, run := range line.runs {
			p.Add(&plotter.Line{XYs: run, LineStyle: style(i)})
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
			label += fmt.Sprintf(" (+%d the same)", n)
			if n <= 3 && legendStyle.Width(all) <= noteWidth(width)-vg.Points(thumbW+4) {
				label = all
			}
		}
		note.legend = append(note.legend, legendEntry{label: label, thumb: &plotter.Line{LineStyle: style(i)}})
	}
	p.X.Min, p.X.Max = 0, d.endS
	p.Y.Min, p.Y.Max = 0, math.Max(1, s.max*1.08)
	p.Y.Label.Text = "remaining (req)"
	return panel{plot: p, height: max(1.5*vg.Inch, note.height(noteWidth(width))+0.15*vg.Inch), side: note}
}

// latencyPanel draws the worst client's p50 and p99 in each step.
func latencyPanel(d *timelineData, l *latencyData) panel {
	p := timePlot(d, plot.DefaultTicks{})
	ts := d.stepTimes()
	has := func(i int) bool { return l.has[i] }
	p50 := draw.LineStyle{Color: colP50, Width: vg.Points(1.2)}
	p99 := draw.LineStyle{Color: colP99, Width: vg.Points(3)}
	rtt := draw.LineStyle{Color: grey, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(1), vg.Points(2)}}
	note := sideNote{heading: "Latency", lines: []string{"the worst client in each step"}}
	if d.r.RTTMs > 0 {
		p.Add(&plotter.Line{XYs: plotter.XYs{{X: 0, Y: d.r.RTTMs}, {X: d.endS, Y: d.r.RTTMs}}, LineStyle: rtt})
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
	p.X.Min, p.X.Max = 0, d.endS
	p.Y.Min, p.Y.Max = 0, math.Max(l.max, d.r.RTTMs)*1.1
	if p.Y.Max <= 0 {
		p.Y.Max = 1
	}
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
