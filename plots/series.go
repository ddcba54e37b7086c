package plots

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot/plotter"

	"github.com/ratelim/ratelim/sim"
)

// This file adapts a sim.Result to what the panels draw: per-step counts
// of a client, a key or a fold of several, state lines per key and store
// copy, and per-step latency. Nothing here draws.

// maxPanels is the most traffic panels a timeline shows; past it, the rest
// are added up into one "others" panel so that every panel stays tall
// enough to read.
const maxPanels = 12

// counts is what happened to one panel's requests in one step.
// failedOpen is part of allowed and failedClosed part of rejected, as in
// sim.TimelineRow.
type counts struct {
	sent, allowed, rejected, failedOpen, failedClosed, retries int64
}

func (c *counts) add(o counts) {
	c.sent += o.sent
	c.allowed += o.allowed
	c.rejected += o.rejected
	c.failedOpen += o.failedOpen
	c.failedClosed += o.failedClosed
	c.retries += o.retries
}

// traffic is one traffic panel: a client, a key, or the fold of those
// that did not get a panel of their own.
type traffic struct {
	name    string   // the panel's heading
	notes   []string // lines under the heading: what to read off the panel
	lead    string   // what the members are ("2 clients:")
	members []string // the clients of a key, or those folded into "others"
	keys    []string // the limiter keys the panel's traffic is spread over
	folded  bool     // the "others" panel
	steps   []counts // one per step
	total   counts
}

// timelineData is everything Timeline draws, taken from a Result.
type timelineData struct {
	r         *sim.Result
	stepS     float64
	nSteps    int
	endS      float64 // the time axis runs from 0 to endS
	by        string  // "client" or "key"
	panels    []traffic
	groups    int // clients (or keys) before folding
	limitStep float64
}

// stepIndex returns the step a timeline row's start time falls in.
func (d *timelineData) stepIndex(ts float64) int { return int(math.Round(ts / d.stepS)) }

// stepTimes returns the start of every step and, last, the end of the last
// one: the x values of a step line that holds each value for its step.
func (d *timelineData) stepTimes() []float64 {
	ts := make([]float64, d.nSteps+1)
	for i := range ts {
		ts[i] = math.Min(float64(i)*d.stepS, d.endS)
	}
	return ts
}

// newTimelineData groups r's timeline into panels, by client or by key.
func newTimelineData(r *sim.Result, by string) (*timelineData, error) {
	if len(r.Clients) == 0 {
		return nil, fmt.Errorf("plots: the result has no clients to draw")
	}
	if !(r.StepS > 0) || math.IsInf(r.StepS, 0) {
		return nil, fmt.Errorf("plots: the result's step is %gs; want a positive step", r.StepS)
	}
	d := &timelineData{r: r, stepS: r.StepS, by: by, limitStep: r.Limit.RatePerS * r.StepS}
	maxTS := -1.0
	for _, row := range r.Timeline {
		if math.IsNaN(row.TS) || math.IsInf(row.TS, 0) || row.TS < 0 {
			return nil, fmt.Errorf("plots: timeline row of %q starts at %gs", row.Client, row.TS)
		}
		maxTS = math.Max(maxTS, row.TS)
	}
	d.nSteps = int(math.Ceil(r.DurationS/r.StepS - 1e-9))
	if maxTS >= 0 {
		d.nSteps = max(d.nSteps, d.stepIndex(maxTS)+1)
	}
	if d.nSteps <= 0 {
		return nil, fmt.Errorf("plots: the result has no steps to draw (duration %gs)", r.DurationS)
	}
	if d.nSteps > 1_000_000 {
		return nil, fmt.Errorf("plots: %d steps are too many to draw; use a longer step", d.nSteps)
	}
	// The axis ends with the run, which may end part way through a step.
	d.endS = float64(d.nSteps) * d.stepS
	if r.DurationS > float64(d.nSteps-1)*d.stepS && r.DurationS < d.endS {
		d.endS = r.DurationS
	}

	// One row of counts per client, per step.
	perClient := make(map[string][]counts, len(r.Clients))
	for _, c := range r.Clients {
		perClient[c.Name] = make([]counts, d.nSteps)
	}
	for _, row := range r.Timeline {
		steps, ok := perClient[row.Client]
		if !ok {
			continue // a row of no listed client: nothing to hang it on
		}
		steps[d.stepIndex(row.TS)].add(counts{row.Sent, row.Allowed, row.Rejected, row.FailedOpen, row.FailedClosed, row.Retries})
	}

	var all []traffic
	switch by {
	case "key":
		all = d.byKey(perClient)
	default:
		all = d.byClient(perClient)
	}
	d.groups = len(all)
	d.panels = fold(all, d.by, d.nSteps)
	return d, nil
}

func (d *timelineData) byClient(perClient map[string][]counts) []traffic {
	var out []traffic
	for _, c := range d.r.Clients {
		t := traffic{name: c.Name, keys: []string{c.Key}, steps: perClient[c.Name]}
		for _, s := range t.steps {
			t.total.add(s)
		}
		if c.Key != c.Name && c.Key != "" {
			t.notes = append(t.notes, "key "+c.Key)
		}
		t.notes = append(t.notes, admittedNotes(t.total, c.IdealAllowed, c.MaxAllowed1s, true)...)
		out = append(out, t)
	}
	return out
}

func (d *timelineData) byKey(perClient map[string][]counts) []traffic {
	keys := make([]sim.KeyResult, 0, len(d.r.Keys))
	seen := map[string]bool{}
	for _, k := range d.r.Keys {
		if !seen[k.Key] {
			seen[k.Key] = true
			keys = append(keys, k)
		}
	}
	for _, c := range d.r.Clients { // a key the result did not total
		if !seen[c.Key] {
			seen[c.Key] = true
			keys = append(keys, sim.KeyResult{Key: c.Key})
		}
	}
	var out []traffic
	for _, k := range keys {
		t := traffic{name: k.Key, keys: []string{k.Key}, steps: make([]counts, d.nSteps)}
		var names []string
		for _, c := range d.r.Clients {
			if c.Key != k.Key {
				continue
			}
			names = append(names, c.Name)
			for i, s := range perClient[c.Name] {
				t.steps[i].add(s)
			}
		}
		for _, s := range t.steps {
			t.total.add(s)
		}
		if len(names) != 1 || names[0] != k.Key {
			t.members = names
			t.lead = fmt.Sprintf("%d %s:", len(names), plural(len(names), "client", "clients"))
		}
		t.notes = append(t.notes, admittedNotes(t.total, k.IdealAllowed, k.MaxAllowed1s, true)...)
		out = append(out, t)
	}
	return out
}

// admittedNotes are the lines that say what a panel's totals mean.
func admittedNotes(t counts, ideal, peak int64, exact bool) []string {
	notes := []string{fmt.Sprintf("allowed %s of %s sent", thousands(t.allowed), thousands(t.sent))}
	if exact {
		// Zero is what a result without the comparison holds too: say
		// nothing rather than something wrong.
		if ideal > 0 {
			notes = append(notes, fmt.Sprintf("%.2f× an exact limiter (%s)", float64(t.allowed)/float64(ideal), thousands(ideal)))
		}
		if peak > 0 {
			notes = append(notes, fmt.Sprintf("peak %s in any 1 s", thousands(peak)))
		}
	}
	if t.failedOpen > 0 {
		notes = append(notes, "failed open "+thousands(t.failedOpen))
	}
	if t.failedClosed > 0 {
		notes = append(notes, "failed closed "+thousands(t.failedClosed))
	}
	if t.retries > 0 {
		notes = append(notes, "retries "+thousands(t.retries))
	}
	return notes
}

// fold keeps at most maxPanels panels. Past that, maxPanels-1 keep their
// own and the rest are added up into one "others" panel, which names them.
//
// Which ones keep a panel: clients generated from one template
// (bastion-1 … bastion-16) look alike, so each family — the name without
// its trailing digits — gets a panel in turn, in order of first
// appearance, until the panels run out. Sixteen bastions and a scheduler
// give bastion-1 … bastion-10, the scheduler, and "others: 6 clients".
func fold(all []traffic, by string, nSteps int) []traffic {
	if len(all) <= maxPanels {
		return all
	}
	budget := maxPanels - 1
	var families []string
	members := map[string][]int{}
	for i, t := range all {
		f := strings.TrimRight(t.name, "0123456789")
		if _, ok := members[f]; !ok {
			families = append(families, f)
		}
		members[f] = append(members[f], i)
	}
	keep := make([]bool, len(all))
	for round, kept := 0, 0; kept < budget; round++ {
		progressed := false
		for _, f := range families {
			if round < len(members[f]) && kept < budget {
				keep[members[f][round]] = true
				kept++
				progressed = true
			}
		}
		if !progressed {
			break
		}
	}
	var out []traffic
	others := traffic{steps: make([]counts, nSteps), folded: true}
	for i, t := range all {
		if keep[i] {
			out = append(out, t)
			continue
		}
		others.members = append(others.members, t.name)
		for _, k := range t.keys {
			if !slices.Contains(others.keys, k) {
				others.keys = append(others.keys, k)
			}
		}
		for j, s := range t.steps {
			others.steps[j].add(s)
		}
		others.total.add(t.total)
	}
	noun := plural(len(others.members), by, by+"s")
	others.name = fmt.Sprintf("others: %d %s", len(others.members), noun)
	others.notes = admittedNotes(others.total, 0, 0, false)
	if len(others.keys) > 1 {
		others.notes = append(others.notes, fmt.Sprintf("limit line × %d keys", len(others.keys)))
	}
	return append(out, others)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// values returns one figure of every step of t.
func values(t traffic, f func(counts) int64) []float64 {
	v := make([]float64, len(t.steps))
	for i, s := range t.steps {
		v[i] = float64(f(s))
	}
	return v
}

// stepLine returns the points of a step line holding v[i] from ts[i] to
// ts[i+1] (ts has one more entry than v).
func stepLine(ts, v []float64) plotter.XYs {
	xy := make(plotter.XYs, 0, len(v)+1)
	for i, y := range v {
		xy = append(xy, plotter.XY{X: ts[i], Y: y})
	}
	if len(v) > 0 {
		xy = append(xy, plotter.XY{X: ts[len(v)], Y: v[len(v)-1]})
	}
	return xy
}

// stepRuns returns the step lines of the runs of consecutive steps where
// keep holds: a series that is zero most of the time is drawn only where
// it is not.
func stepRuns(ts, v []float64, keep func(i int) bool) []plotter.XYs {
	var runs []plotter.XYs
	for i := 0; i < len(v); {
		if !keep(i) {
			i++
			continue
		}
		j := i
		for j < len(v) && keep(j) {
			j++
		}
		runs = append(runs, stepLine(ts[i:j+1], v[i:j]))
		i = j
	}
	return runs
}

// stateLine is one drawn line of the State panel: one key's remaining
// allowance in one store copy, or in several when their series are
// identical (per-server jars that are all empty, say) and would otherwise
// hide each other.
type stateLine struct {
	key, copy string
	same      [][2]string   // the other (key, copy) series it stands for
	runs      []plotter.XYs // broken where the store did not answer
}

// stateData is what the State panel draws.
type stateData struct {
	lines      []stateLine
	hidden     int      // lines past maxStateLines, not drawn
	keys       []string // shown, busiest first
	copies     []string // in order of appearance
	totalKeys  int
	unanswered bool // some samples are missing: the store did not answer
	max        float64
}

// maxStateKeys and maxStateLines cap the State panel: past a dozen or two
// lines it is a scribble, and its legend would not fit.
const (
	maxStateKeys  = 8
	maxStateLines = 16
)

func newStateData(r *sim.Result) *stateData {
	if len(r.State) == 0 {
		return nil
	}
	s := &stateData{}
	sent := map[string]int64{}
	order := map[string]int{}
	var keys []string
	addKey := func(k string) {
		if _, ok := order[k]; !ok {
			order[k] = len(keys)
			keys = append(keys, k)
		}
	}
	for _, k := range r.Keys {
		addKey(k.Key)
		sent[k.Key] += k.Sent
	}
	seenCopy := map[string]bool{}
	hasState := map[string]bool{}
	for _, ser := range r.State {
		addKey(ser.Key)
		hasState[ser.Key] = true
		if !seenCopy[ser.Copy] {
			seenCopy[ser.Copy] = true
			s.copies = append(s.copies, ser.Copy)
		}
	}
	keys = slices.DeleteFunc(keys, func(k string) bool { return !hasState[k] })
	s.totalKeys = len(keys)
	// Busiest first; ties keep the result's order.
	slices.SortStableFunc(keys, func(a, b string) int { return cmp.Compare(sent[b], sent[a]) })
	if len(keys) > maxStateKeys {
		keys = keys[:maxStateKeys]
	}
	s.keys = keys

	type series struct {
		ts  []float64
		rem []int64
	}
	byKeyCopy := map[[2]string]series{}
	for _, ser := range r.State {
		n := min(len(ser.TS), len(ser.Remaining))
		byKeyCopy[[2]string{ser.Key, ser.Copy}] = series{ser.TS[:n], ser.Remaining[:n]}
	}
	var drawn []series
	for _, k := range keys { // lines in key order, then copy order
		for _, cp := range s.copies {
			ser, ok := byKeyCopy[[2]string{k, cp}]
			if !ok {
				continue
			}
			same := slices.IndexFunc(drawn, func(o series) bool {
				return slices.Equal(o.ts, ser.ts) && slices.Equal(o.rem, ser.rem)
			})
			if same >= 0 {
				s.lines[same].same = append(s.lines[same].same, [2]string{k, cp})
				continue
			}
			if len(s.lines) == maxStateLines {
				s.hidden++
				continue
			}
			line := stateLine{key: k, copy: cp}
			var run plotter.XYs
			for i, rem := range ser.rem {
				if rem < 0 {
					s.unanswered = true
					if len(run) > 0 {
						line.runs = append(line.runs, run)
						run = nil
					}
					continue
				}
				run = append(run, plotter.XY{X: ser.ts[i], Y: float64(rem)})
				s.max = math.Max(s.max, float64(rem))
			}
			if len(run) > 0 {
				line.runs = append(line.runs, run)
			}
			drawn = append(drawn, ser)
			s.lines = append(s.lines, line)
		}
	}
	return s
}

// latencyData is the per-step latency of the worst client: the only
// honest way to combine per-client percentiles without the requests.
type latencyData struct {
	p50, p99 []float64
	has      []bool // the step had requests
	max      float64
}

func newLatencyData(d *timelineData) *latencyData {
	l := &latencyData{p50: make([]float64, d.nSteps), p99: make([]float64, d.nSteps), has: make([]bool, d.nSteps)}
	anyP99 := false
	for _, row := range d.r.Timeline {
		if row.Sent == 0 {
			continue
		}
		i := d.stepIndex(row.TS)
		l.has[i] = true
		l.p50[i] = math.Max(l.p50[i], row.P50Ms)
		l.p99[i] = math.Max(l.p99[i], row.P99Ms)
		l.max = math.Max(l.max, math.Max(row.P99Ms, row.P50Ms))
		anyP99 = anyP99 || row.P99Ms > 0
	}
	if !anyP99 {
		return nil
	}
	return l
}
