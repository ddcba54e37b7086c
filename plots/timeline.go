package plots

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ratelim/ratelim/internal/words"
	"github.com/ratelim/ratelim/sim"
)

// Timeline draws what each client of r experienced, step by step, on one
// time axis in seconds:
//
//   - a Faults lane, when there are faults: each fault a labelled bar, its
//     window shaded down through every panel below;
//   - one panel per client (or per limiter key, with Options.By "key"):
//     requests allowed and rejected per step, hatched where the fail
//     policy decided them while the store was failing, retries, and the
//     yardstick of the limit: a rolling count of what was admitted in the
//     last window's length against the most the limit allows in that
//     length (see reference), with a fixed window's boundaries marked.
//     Where clients share a limiter key (users behind one NAT), their
//     panels draw the key's count too and say who used the shared quota.
//     Clients with the same figures step by step share one panel
//     ("bastion-1…8 ×8"); past 12 panels the rest are added up into one
//     "others" panel that names them;
//   - a State panel: each key's remaining allowance in each copy of the
//     store ("shared", "server-0", "primary", "replica"), as steps, so a
//     window's reset shows as a cliff and per-server jars or a split
//     brain's two copies as lines that part. Past 8 kinds of key it keeps
//     the busiest and the least busy, the contrast that is often the point;
//   - a Latency panel, when some step waited noticeably longer than the
//     store's round trip: the worst client's p50 and p99, in milliseconds.
//
// The title names the scenario, algorithm, topology, store, servers and
// seed; under it, the run's lesson (sim.Headline) and its settings. A
// replay of a log passes Options.Clock, to read the axis on the log's
// clock, and Options.Caption, to be titled with what the user chose. Counts
// use a log scale when rejections dwarf admissions, so that the admitted
// line can still be read against the limit. A leaky bucket's admissions
// are drawn when they leave its queue, so its smoothing shows.
func Timeline(w io.Writer, r *sim.Result, opts Options) error {
	if r == nil {
		return errors.New("plots: no result to draw")
	}
	format, err := opts.format()
	if err != nil {
		return err
	}
	by, err := opts.by()
	if err != nil {
		return err
	}
	d, err := newTimelineData(r, by)
	if err != nil {
		return err
	}
	d.axisS = max(d.axisS, opts.AxisEndS)
	d.focus = opts.Focus
	if d.axis, err = axisFor(r, opts); err != nil {
		return err
	}
	d.caption = opts.Caption
	ax, err := layOut(d, opts.Layout, by)
	if err != nil {
		return err
	}
	if err := opts.checkSize(); err != nil {
		return err
	}
	width := opts.Width
	if width == 0 {
		width = 10 * vg.Inch
	}
	used := map[string]bool{}
	panels := figurePanels(d, ax, width, used)
	h := runHeader(d, ax.log, used)
	fixed := 2*margin + h.height(width-2*margin) + panelGap
	height, err := figureHeight(opts.Height, fixed, panels, "panels")
	if err != nil {
		return err
	}
	return renderFigure(w, format, width, height, h, func(body draw.Canvas) {
		drawStack(body, sideWidth(width), panels)
	})
}

// renderFigure draws a figure of width × height: its header h inside the
// margins, and body below it.
func renderFigure(w io.Writer, format string, width, height vg.Length, h header, body func(draw.Canvas)) error {
	return render(w, format, width, height, func(dc draw.Canvas) {
		inner := draw.Crop(dc, margin, -margin, margin, -margin)
		hh := h.height(inner.Max.X - inner.Min.X)
		h.draw(inner)
		body(draw.Crop(inner, 0, 0, 0, -(hh + panelGap)))
	})
}

// figureHeight is a figure's height: the one asked for, or, for 0, fixed
// (margins and headings) plus each panel's own. A height that leaves a
// panel (a row of them, side by side) under minPanel is an error naming
// what (panels, rows) did not fit.
func figureHeight(asked, fixed vg.Length, panels []panel, what string) (vg.Length, error) {
	height := asked
	if height == 0 {
		height = fixed
		for _, p := range panels {
			height += p.height + panelGap
		}
	}
	if least := fixed + vg.Length(len(panels))*(minPanel+panelGap); height < least {
		return 0, fmt.Errorf("plots: a figure %.1fin high has no room for %d %s (want at least %.1fin)", height/vg.Inch, len(panels), what, least/vg.Inch)
	}
	return height, nil
}

// layOut arranges d's panels and returns their y ranges: d's own, or,
// with a layout result, that result's (see Options.Layout).
func layOut(d *timelineData, layout *sim.Result, by string) (axes, error) {
	if layout == nil {
		d.arrange(d.signatures())
		return newAxes(d), nil
	}
	dl, err := newTimelineData(layout, by)
	if err != nil {
		return axes{}, fmt.Errorf("plots: the layout result: %s", strings.TrimPrefix(err.Error(), "plots: "))
	}
	dl.arrange(dl.signatures())
	// A client is grouped with those it is grouped with in the layout;
	// those the layout folded into "others" are folded again by fold,
	// which decides from the names alone.
	group := map[string]int{}
	for i, t := range dl.panels {
		if t.count > 1 {
			for _, m := range t.members {
				group[m] = i
			}
		}
	}
	sigs := make([]string, len(d.all))
	for i, t := range d.all {
		if g, ok := group[t.name]; ok {
			sigs[i] = fmt.Sprint("layout ", g)
		} else {
			sigs[i] = "only " + t.name
		}
	}
	// Folding must not depend on the frame's figures either: the layout
	// kept the panels it kept.
	d.panels = fold(collapse(d.all, sigs), d.by, d.nSteps)
	var names []string
	for _, t := range d.panels {
		names = append(names, t.name)
	}
	ax := rowAxes(dl, names)
	for i, t := range d.panels { // a frame's data past the layout's: still drawn
		ax.tops[i] = math.Max(ax.tops[i], panelTop(d, t))
	}
	return ax, nil
}

// minPanel is the least height a panel is drawn in.
const minPanel = 0.3 * vg.Inch

// axes are the y ranges of a figure's panels, decided before any is drawn
// so that two runs side by side can share them.
type axes struct {
	tops       []float64 // each traffic panel's top
	log        bool      // counts on a log scale
	stateMax   []float64 // each State panel's top (stateViews); nil: no State panel
	latencyMax float64   // the Latency panel's top; 0: no Latency panel
}

// newAxes returns the y ranges of d's panels.
//
// One kind of y axis for every traffic panel: a log scale when what was
// sent dwarfs what was admitted, so the admitted line can still be read
// against the limit. Each panel has its own range.
func newAxes(d *timelineData) axes {
	ax := axes{tops: make([]float64, len(d.panels))}
	top, low := 1.0, math.Max(d.ref.limit, 1)
	sliver := false
	for i, t := range d.panels {
		ax.tops[i] = panelTop(d, t)
		own := 0.0
		for _, s := range t.steps {
			low = math.Max(low, float64(s.served))
			own = math.Max(own, float64(s.Sent))
		}
		top = math.Max(top, ax.tops[i])
		// A light user behind a NAT: its own requests are a sliver at the
		// foot of the key's count, and its rejections would be invisible.
		sliver = sliver || (t.share != nil && own > 0 && own*8 < ax.tops[i])
	}
	ax.log = top > 20 && (top > 8*low || sliver)
	// Panels of about one size share their range, so that clients can be
	// compared by height (retry-storm's three policies); panels that
	// differ more keep their own, or the small ones would lie flat.
	if least := slices.Min(ax.tops); least > 0 && top <= 2*least {
		for i := range ax.tops {
			ax.tops[i] = top
		}
	}
	for _, v := range stateViews(d.r) {
		s := newStateData(v.r, d.stepS)
		if s == nil {
			ax.stateMax = nil
			break
		}
		ax.stateMax = append(ax.stateMax, math.Max(1, s.max*1.08))
	}
	if l := newLatencyData(d, false); l != nil {
		ax.latencyMax = math.Max(l.max, d.r.RTTMs) * 1.1
	}
	return ax
}

// panelTop is the highest thing a traffic panel draws.
func panelTop(d *timelineData, t traffic) float64 {
	top := math.Max(1, d.ref.limit*float64(limitKeys(t)))
	for _, s := range t.steps {
		top = math.Max(top, float64(max(s.Sent, s.retries, s.served, s.Allowed)))
	}
	for _, v := range rolling(values(t.steps, servedOf), d.ref.k) {
		top = math.Max(top, v)
	}
	if t.share != nil {
		for _, v := range rolling(values(t.share.steps, servedOf), d.ref.k) {
			top = math.Max(top, v)
		}
	}
	return top
}

// limitKeys is how many keys' limits a panel's traffic may use: one for
// a client or for a group of alike clients (each has its own), the number
// of keys for "others".
func limitKeys(t traffic) int {
	if t.count > 1 {
		return 1
	}
	return max(len(t.keys), 1)
}

// figurePanels builds the panels of d for a figure width wide, on the
// ranges of ax, noting in used which traffic series they draw.
func figurePanels(d *timelineData, ax axes, width vg.Length, used map[string]bool) []panel {
	r := d.r
	var panels []panel
	if len(d.spans) > 0 {
		panels = append(panels, faultsPanel(d, width))
	}
	h := len(d.panels)
	tall := 1.1 * vg.Inch
	switch {
	case h <= 3:
		tall = 1.7 * vg.Inch
	case h <= 6:
		tall = 1.35 * vg.Inch
	}
	for i, t := range d.panels {
		p := trafficPlot(d, t, ax.tops[i], ax.log, used)
		heading := t.name
		if d.by == "key" && !t.folded && t.count <= 1 {
			heading = "key " + t.name
		}
		note := sideNote{heading: heading, lead: t.lead, names: t.members, lines: t.notes}
		panels = append(panels, panel{plot: p, height: max(tall, note.height(noteWidth(width))+0.2*vg.Inch), side: note})
	}
	for i, v := range stateViews(r) {
		if i >= len(ax.stateMax) {
			break
		}
		s := newStateData(v.r, d.stepS)
		if s == nil { // laid out as a run with state (Options.Layout)
			s = &stateData{}
		}
		panels = append(panels, statePanel(d, s, v, ax.stateMax[i], width))
	}
	if ax.latencyMax > 0 {
		if l := newLatencyData(d, true); l != nil {
			panels = append(panels, latencyPanel(d, l, ax.latencyMax))
		}
	}

	// Only the bottom panel labels the shared time axis.
	last := panels[len(panels)-1].plot
	last.X.Tick.Marker = d.axis.ticks
	last.X.Label.Text = d.axis.label
	panels[len(panels)-1].height += 0.4 * vg.Inch
	return panels
}

// runHeader is the title block of one run: what ran, what it teaches, its
// settings, and the legend of the series drawn.
func runHeader(d *timelineData, logScale bool, used map[string]bool) header {
	h := header{
		title:    runTitle(d.r),
		headline: sim.Headline(d.r),
		subtitle: subtitle(d, logScale),
		legend:   trafficLegend(d, used),
	}
	if d.caption != nil {
		h.title, h.subtitle = captionTitle(d, d.caption), captionSubtitle(d, d.caption, logScale)
	}
	return h
}

func runTitle(r *sim.Result) string {
	return fmt.Sprintf("%s · %s · %s on %s · %d %s · seed %d", or(r.Scenario, "unnamed scenario"), r.Algorithm, r.Topology, r.Store, r.Servers, words.Plural(r.Servers, "server", "servers"), r.Seed)
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
	parts := []string{limitPart(d)}
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
	parts = append(parts, countsScale(logScale))
	return strings.Join(parts, " · ")
}

// limitPart says the run's limit: "limit 1/s, burst 10", "drains 5/s,
// queue 20", "limits …".
func limitPart(d *timelineData) string {
	l := d.r.Limit
	rate := words.Rate(l.RatePerS)
	switch {
	case l.MaxInFlight > 0:
		return "limit " + words.Concurrency(l.MaxInFlight, l.LeaseTTLS)
	case len(l.Limits) > 0:
		var each []string
		for _, p := range l.Limits {
			each = append(each, p.Name+" "+p.Text())
		}
		return "limits " + strings.Join(each, " and ")
	case d.ref.kind == "window":
		return fmt.Sprintf("limit %s per %s window (%s)", trimFloat(l.RatePerS*math.Max(l.WindowS, d.ref.windowS)), trimFloat(math.Max(l.WindowS, d.ref.windowS))+"s", rate)
	case d.ref.kind == "leaky":
		return fmt.Sprintf("drains %s, queue %d", rate, l.Burst)
	}
	return fmt.Sprintf("limit %s, burst %d", rate, l.Burst)
}

// limitText is limitPart without its leading word: what a caption's
// limit says when the caller gave none.
func limitText(d *timelineData) string {
	text := limitPart(d)
	for _, lead := range []string{"limits ", "limit "} {
		if strings.HasPrefix(text, lead) {
			return strings.TrimPrefix(text, lead)
		}
	}
	return text
}

// countsScale says how the traffic panels count.
func countsScale(logScale bool) string {
	if logScale {
		return "counts per step on a log scale"
	}
	return "counts per step"
}

func trimFloat(v float64) string { return fmt.Sprintf("%.4g", v) }

// timePlot returns a panel's plot with the shared time axis (unlabelled:
// the bottom panel labels it) and the fault windows shaded.
func timePlot(d *timelineData, yTicks plot.Ticker) *plot.Plot {
	p := newPlot()
	p.X.Min, p.X.Max = 0, d.axisS
	p.X.Tick.Marker = unlabelled{d.axis.ticks}
	p.Y.Tick.Marker = yTicks
	if len(d.spans) > 0 {
		p.Add(faultShade{d.spans})
	}
	p.Add(gridLines{x: d.axis.ticks, y: yTicks})
	return p
}

// The series of a traffic panel, in the order of the shared legend, which
// lists only those drawn somewhere. Their labels depend on the run (see
// seriesLabel).
const (
	serAllowed      = "allowed"
	serRejected     = "rejected"
	serFailedOpen   = "failed open"
	serFailedClosed = "failed closed"
	serRetries      = "retries"
	serShared       = "shared"
	serRolling      = "rolling"
	serLimit        = "limit"
	serRefill       = "refill"
	serBoundary     = "boundary"
	serOver         = "over"
	serTop          = "top"
)

var trafficOrder = []string{serAllowed, serTop, serRejected, serFailedOpen, serFailedClosed, serRetries, serShared, serRolling, serLimit, serOver, serRefill, serBoundary}

// seriesLabel is what the legend calls a series in d's figure.
func seriesLabel(d *timelineData, name string) string {
	switch name {
	case serAllowed:
		if d.leaky {
			return "served per step (as it left the queue)"
		}
		if d.weighted {
			return "quota allowed per step (requests × their cost)"
		}
		return "allowed per step"
	case serTop:
		return "of which the key's biggest user (named beside)"
	case serRejected:
		if d.weighted {
			return "quota refused per step"
		}
		if onlyShed(d.r) {
			return "shed per step (503: no capacity left at its priority)"
		}
		return "rejected per step"
	case serFailedOpen:
		return "failed open: admitted unchecked (part of allowed)"
	case serFailedClosed:
		return "failed closed: refused unchecked (part of rejected)"
	case serRetries:
		return "retries per step"
	case serShared:
		return fmt.Sprintf("all clients on the shared key, in the last %s", d.ref.per())
	case serRolling:
		return d.ref.rollingLabel()
	case serLimit:
		return d.ref.limitLabel()
	case serRefill:
		return d.ref.refillLabel()
	case serOver:
		return d.ref.overLabel()
	case serBoundary:
		return fmt.Sprintf("fixed-window boundaries (every %s s)", trimFloat(d.ref.boundaryS))
	}
	return name
}

// Colours of the series that have no meaning of their own elsewhere.
var (
	colRolling = color.NRGBA{0x00, 0x4d, 0x38, 0xff} // a dark bluish green: admitted, added up
	colShared  = color.NRGBA{0x70, 0x70, 0x70, 0xff}
)

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
	case serRetries:
		l.LineStyle = draw.LineStyle{Color: colRetries, Width: vg.Points(1.1), Dashes: []vg.Length{vg.Points(3), vg.Points(2)}}
	case serTop:
		l.LineStyle = draw.LineStyle{Color: colRolling, Width: vg.Points(1)}
		l.FillColor = withAlpha(colRolling, 0x50)
	case serShared:
		l.LineStyle = draw.LineStyle{Color: colShared, Width: vg.Points(1)}
		l.FillColor = withAlpha(colShared, 0x30)
	case serRolling:
		l.LineStyle = draw.LineStyle{Color: colRolling, Width: vg.Points(2)}
	case serLimit:
		l.StepStyle = plotter.NoStep
		l.LineStyle = draw.LineStyle{Color: colLimit, Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(5), vg.Points(3)}}
	case serRefill:
		l.StepStyle = plotter.NoStep
		l.LineStyle = draw.LineStyle{Color: textGrey, Width: vg.Points(1.1), Dashes: []vg.Length{vg.Points(1.5), vg.Points(2)}}
	}
	return l
}

// trafficThumb is the legend's thumbnail of a series.
func trafficThumb(name string) plot.Thumbnailer {
	switch name {
	case serFailedOpen:
		return hatchSwatch{colFailedOpen, +1}
	case serFailedClosed:
		return hatchSwatch{colFailedClosed, -1}
	case serBoundary:
		return boundaryLines{}
	case serOver:
		return swatch{fill: overColour}
	}
	return trafficLine(name, nil)
}

func trafficLegend(d *timelineData, used map[string]bool) []legendEntry {
	var out []legendEntry
	for _, name := range trafficOrder {
		if used[name] {
			out = append(out, legendEntry{label: seriesLabel(d, name), thumb: trafficThumb(name)})
		}
	}
	return out
}

// servedOf is what left the limiter in a step: allowed, or for a leaky
// bucket what left its queue.
func servedOf(c counts) int64 { return c.served }

// trafficPlot draws one traffic panel, noting in used which series it drew.
func trafficPlot(d *timelineData, t traffic, top float64, logScale bool, used map[string]bool) *plot.Plot {
	var yTicks plot.Ticker = countTicks{}
	if logScale {
		yTicks = log1pTicks{}
	}
	p := timePlot(d, yTicks)
	ts := d.stepTimes()
	add := func(name string, pl plot.Plotter) {
		p.Add(pl)
		used[name] = true
	}
	line := func(name string, xys ...plotter.XYs) {
		for _, xy := range xys {
			add(name, trafficLine(name, xy))
		}
	}
	if d.ref.boundaryS > 0 && d.ref.k >= 2 && d.axisS/d.ref.boundaryS <= 100 {
		add(serBoundary, boundaryLines{every: d.ref.boundaryS})
	}
	// Behind everything, the shared key's count: the client's own fill
	// sits at its foot, and what rises above it is its neighbours'.
	if t.share != nil {
		line(serShared, stepLine(ts, rolling(values(t.share.steps, servedOf), d.ref.k)))
	}
	served := values(t.steps, servedOf)
	line(serAllowed, stepLine(ts, served))
	if t.topUser != nil {
		line(serTop, stepLine(ts, values(t.topUser.steps, servedOf)))
	}
	// What the limiter let through beyond what the limit allows (see
	// reference.over) — the excess a fixed window's boundary, per-server
	// jars or a split brain let through — over the allowed fill and under
	// the fail policy's hatching.
	if d.ref.limit > 0 {
		count := served
		if t.share != nil {
			count = values(t.share.steps, servedOf)
		}
		l := d.r.Limit
		lo, hi := d.ref.over(count, float64(l.Burst), l.RatePerS, d.stepS, limitKeys(t))
		if o := (overFill{ts: ts, lo: lo, hi: hi}); o.over() {
			add(serOver, o)
		}
	}
	// The fail policy's decisions, hatched over what they are part of.
	if fo := values(t.steps, func(c counts) int64 { return c.FailedOpen }); t.total.FailedOpen > 0 {
		add(serFailedOpen, hatchFill{ts: ts, v: fo, colour: colFailedOpen, dir: +1})
	}
	if fc := values(t.steps, func(c counts) int64 { return c.FailedClosed }); t.total.FailedClosed > 0 {
		add(serFailedClosed, hatchFill{ts: ts, v: fc, colour: colFailedClosed, dir: -1})
	}
	if t.total.Rejected > 0 {
		line(serRejected, stepLine(ts, values(t.steps, func(c counts) int64 { return c.Rejected })))
	}
	re := values(t.steps, func(c counts) int64 { return c.retries })
	line(serRetries, stepRuns(ts, re, func(i int) bool { return re[i] > 0 })...)
	// When the window spans several steps, the per-step counts cannot be
	// read against it: their rolling sum can.
	if d.ref.k > 1 && t.total.served > 0 {
		line(serRolling, stepLine(ts, rolling(served, d.ref.k)))
	}
	if d.ref.limit > 0 {
		limitLines(p, d, float64(limitKeys(t)), line)
	}
	countAxes(p, d, top, logScale)
	return p
}
