package plots

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot/plotter"

	"github.com/ratelim/ratelim/internal/words"
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
//
// served is what left the limiter in the step: for a leaky bucket, the
// admissions in the step their queue let them go (sim.TimelineRow.Served);
// for every other algorithm the same as allowed.
type counts struct {
	sim.Counts
	retries, served int64
}

func (c *counts) add(o counts) {
	c.Counts.Add(o.Counts)
	c.retries += o.retries
	c.served += o.served
}

// traffic is one traffic panel: a client, a key, clients with the same
// figures step by step, or the fold of those that did not get a panel of
// their own.
type traffic struct {
	name    string   // the panel's heading
	notes   []string // lines under the heading: what to read off the panel
	lead    string   // what the members are ("2 clients:")
	members []string // the clients of a key, of a group, or folded into "others"
	keys    []string // the limiter keys the panel's traffic is spread over
	folded  bool     // the "others" panel
	steps   []counts // one per step (each client's, for a group)
	total   counts
	// share is set when the panel's one key is shared with other
	// clients: what the limit counts is theirs and its together.
	share *keyShare
	// topUser is, on a key's panel, the client admitted most of it.
	topUser *topUser
	// figures are the client's (or key's) totals, names left out: equal
	// figures and steps make two clients one panel.
	figures string
	// count is how many clients (or keys) have exactly these figures each
	// (see collapse); 0 or 1 for one.
	count int
}

// keyShare is a limiter key that several clients share: a NAT's IP, an
// orchestrator's one API key. The limit holds them all together, so a
// client's panel draws the key's count beside its own, and says who used
// the shared quota.
type keyShare struct {
	key     string
	clients []string
	steps   []counts // all the key's clients, per step
	total   counts
	// top is the client that was admitted most of the key's allowance.
	top        string
	topAllowed int64
}

// topUser is the client of a key that was admitted most of its
// allowance, and its counts per step.
type topUser struct {
	name  string
	steps []counts
}

// timelineData is everything Timeline draws, taken from a Result.
type timelineData struct {
	r *sim.Result
	// spans are the run's faults, and a limit's shadow mode as one more
	// span: each is shaded in every panel and labelled in the Faults lane.
	spans  []sim.FaultSpan
	stepS  float64
	nSteps int
	endS   float64 // the data runs from 0 to endS
	// axisS is where the time axis ends: endS, or later for a frame of
	// an animation that shares the whole run's axis (Options.AxisEndS).
	axisS  float64
	by     string    // "client" or "key"
	focus  []string  // Options.Focus
	all    []traffic // every client (or key), before grouping and folding
	panels []traffic
	ref    reference
	// leaky is set when admissions are drawn when they leave the queue.
	leaky bool
	// weighted is set when some request cost more than 1 (a search
	// costing 5): the panels then count quota, what the limit counts,
	// not requests, so that the limit's line and what it refused are in
	// one unit.
	weighted bool
	// axis marks and titles the time axis (Options.Clock).
	axis timeAxis
	// caption, when set, titles a replay (Options.Caption).
	caption *Caption
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
	d := &timelineData{r: r, stepS: r.StepS, by: by, spans: spansOf(r), axis: secondsAxis}
	maxTS := -1.0
	var served int64
	for _, row := range r.Timeline {
		if math.IsNaN(row.TS) || math.IsInf(row.TS, 0) || row.TS < 0 {
			return nil, fmt.Errorf("plots: timeline row of %q starts at %gs", row.Client, row.TS)
		}
		maxTS = math.Max(maxTS, row.TS)
		served += row.Served
	}
	// A leaky bucket admits a request when it joins the queue and lets it
	// go later, at the rate: drawn when they leave, its smoothing shows. A
	// result that does not count departures is drawn at decisions.
	d.leaky = sim.Family(r.Algorithm) == "leaky-bucket" && served > 0
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
	d.axisS = d.endS

	// One row of counts per client, per step.
	perClient := make(map[string][]counts, len(r.Clients))
	for _, c := range r.Clients {
		perClient[c.Name] = make([]counts, d.nSteps)
		d.weighted = d.weighted || c.CostSent > 0
	}
	for _, row := range r.Timeline {
		steps, ok := perClient[row.Client]
		if !ok {
			continue // a row of no listed client: nothing to hang it on
		}
		out := row.Allowed
		if d.leaky {
			out = row.Served
		}
		c := row.Counts
		if d.weighted {
			c.Sent, c.Allowed, c.Rejected = row.CostSent, row.CostAllowed, row.CostSent-row.CostAllowed
			if !d.leaky {
				out = row.CostAllowed
			}
		}
		steps[d.stepIndex(row.TS)].add(counts{c, row.Retries, out})
	}
	d.ref = newReference(d)

	switch by {
	case "key":
		d.all = d.byKey(perClient)
	default:
		d.all = d.byClient(perClient)
	}
	return d, nil
}

// arrange groups d's panels and folds them: clients whose signatures
// (sigs[i] for d.all[i]) are equal share one panel, and past maxPanels
// the rest are added up into "others".
func (d *timelineData) arrange(sigs []string) {
	if len(d.focus) > 0 {
		d.panels = focusOn(d.all, d.focus, d.by, d.nSteps)
		return
	}
	d.panels = fold(collapse(d.all, sigs), d.by, d.nSteps)
}

// signatures returns, for each of d.all, a string equal for two panels
// exactly when they have the same figures step by step and in total (and,
// on a shared key, the same key: its count is drawn too).
func (d *timelineData) signatures() []string {
	sigs := make([]string, len(d.all))
	for i, t := range d.all {
		sigs[i] = fmt.Sprint(t.steps, t.figures)
		if t.share != nil {
			sigs[i] += "|" + t.share.key
		}
	}
	return sigs
}

func (d *timelineData) byClient(perClient map[string][]counts) []traffic {
	// The keys several clients share, with their count per step.
	byKey := map[string]*keyShare{}
	for _, c := range d.r.Clients {
		ks := byKey[c.Key]
		if ks == nil {
			ks = &keyShare{key: c.Key, steps: make([]counts, d.nSteps)}
			byKey[c.Key] = ks
		}
		ks.clients = append(ks.clients, c.Name)
		for i, s := range perClient[c.Name] {
			ks.steps[i].add(s)
		}
		ks.total.add(sumCounts(perClient[c.Name]))
		if c.Allowed > ks.topAllowed {
			ks.top, ks.topAllowed = c.Name, c.Allowed
		}
	}
	var out []traffic
	for _, c := range d.r.Clients {
		t := traffic{name: c.Name, keys: []string{c.Key}, steps: perClient[c.Name]}
		t.total = sumCounts(t.steps)
		fig := c
		fig.Name, fig.Key = "", ""
		t.figures = fmt.Sprint(fig)
		if ks := byKey[c.Key]; c.Key != "" && len(ks.clients) > 1 {
			t.share = ks
			t.notes = append(t.notes, d.shareNotes(c.Name, ks)...)
		} else if c.Key != c.Name && c.Key != "" {
			t.notes = append(t.notes, "key "+c.Key)
		}
		if d.weighted {
			t.notes = append(t.notes, costNotes(c)...)
		} else {
			t.notes = append(t.notes, admittedNotes(t.total, c.IdealAllowed, c.MaxAllowed1s, true)...)
		}
		t.notes = append(t.notes, rejectedByNotes(d.r, c)...)
		t.notes = append(t.notes, shardNotes(d.r, c.Key)...)
		if c.Priority != "" {
			t.notes = append(t.notes, fmt.Sprintf("priority %s: shed %s (503)", c.Priority, words.Thousands(c.Shed)))
		}
		if t.total.retries > 0 {
			// What retrying won: the lesson of a retry storm.
			t.notes[len(t.notes)-1] += fmt.Sprintf(", %s admitted", words.Thousands(c.RetriesAllowed))
		}
		out = append(out, t)
	}
	return out
}

// shareNotes say that a client's limit is shared, with how many, and who
// used most of it.
func (d *timelineData) shareNotes(client string, ks *keyShare) []string {
	kind := d.r.Limit.Key
	if kind == "" || kind == "auto" {
		kind = "key"
	}
	notes := []string{fmt.Sprintf("limit shared by %d clients on %s %s", len(ks.clients), kind, ks.key)}
	if ks.total.Allowed > 0 {
		who := ks.top
		if who == client {
			who = "it"
		}
		notes = append(notes, fmt.Sprintf("%s took %s of the key's %s admitted", who, words.Thousands(ks.topAllowed), words.Thousands(ks.total.Allowed)))
	}
	return notes
}

func sumCounts(steps []counts) counts {
	var t counts
	for _, s := range steps {
		t.add(s)
	}
	return t
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
		t.total = sumCounts(t.steps)
		// Who used the key's allowance: its biggest user, drawn inside it.
		if len(names) > 1 {
			var top sim.ClientResult
			for _, c := range d.r.Clients {
				if c.Key == k.Key && c.Allowed > top.Allowed {
					top = c
				}
			}
			if top.Allowed > 0 {
				t.topUser = &topUser{name: top.Name, steps: perClient[top.Name]}
				t.notes = append(t.notes, fmt.Sprintf("%s took %s of the %s admitted", top.Name, words.Thousands(top.Allowed), words.Thousands(t.total.Allowed)))
			}
		}
		fig := k
		fig.Key = ""
		t.figures = fmt.Sprint(fig)
		if len(names) != 1 || names[0] != k.Key {
			t.members = names
			t.lead = fmt.Sprintf("%d %s:", len(names), words.Plural(len(names), "client", "clients"))
		}
		t.notes = append(t.notes, admittedNotes(t.total, k.IdealAllowed, k.MaxAllowed1s, true)...)
		out = append(out, t)
	}
	return out
}

// costNotes say what a client's requests cost on a weighted run, whose
// panels count quota: the quota allowed of what was asked, and the
// requests behind it, which a request count would have shown instead.
func costNotes(c sim.ClientResult) []string {
	notes := []string{fmt.Sprintf("allowed %s of %s quota asked", words.Thousands(c.CostAllowed), words.Thousands(c.CostSent))}
	per := "cost 1 each"
	if c.Sent > 0 && c.CostSent != c.Sent {
		per = fmt.Sprintf("%s a request on average", strconv.FormatFloat(float64(c.CostSent)/float64(c.Sent), 'g', 3, 64))
		if c.CostSent%c.Sent == 0 {
			per = fmt.Sprintf("cost %d each", c.CostSent/c.Sent)
		}
	}
	notes = append(notes, fmt.Sprintf("%s of %s requests, %s", words.Thousands(c.Allowed), words.Thousands(c.Sent), per))
	if c.IdealAllowed > 0 {
		notes = append(notes, fmt.Sprintf("%.2f× an exact limiter (%s)", float64(c.Allowed)/float64(c.IdealAllowed), words.Thousands(c.IdealAllowed)))
	}
	return notes
}

// shardNotes say, on a cluster, whose slots a key is in and what waited or
// was refused for it: "in s0-master's slots", "waited 321, CLUSTERDOWN 0".
func shardNotes(r *sim.Result, key string) []string {
	for _, sh := range r.Shards {
		if !slices.Contains(sh.Keys, key) {
			continue
		}
		where := fmt.Sprintf("in %s's slots", sh.Master)
		if sh.EndMaster != sh.Master {
			where += fmt.Sprintf(", then %s's", sh.EndMaster)
		}
		notes := []string{where}
		for _, k := range sh.Affected {
			if k.Key == key {
				notes = append(notes, fmt.Sprintf("waited %s, CLUSTERDOWN %s", words.Thousands(k.TimedOut), words.Thousands(k.Fenced+k.Uncovered)))
			}
		}
		return notes
	}
	return nil
}

// rejectedByNotes say which of a key's several limits refused the
// client, and how often: "refused 1,400 by hourly, 0 by per-second".
func rejectedByNotes(r *sim.Result, c sim.ClientResult) []string {
	if len(r.Limit.Limits) == 0 || c.Rejected == 0 {
		return nil
	}
	parts := make([]string, len(r.Limit.Limits))
	for i, p := range r.Limit.Limits {
		parts[i] = words.Thousands(c.RejectedBy[p.Name]) + " by " + p.Name
	}
	return []string{"refused " + strings.Join(parts, ", ")}
}

// admittedNotes are the lines that say what a panel's totals mean.
func admittedNotes(t counts, ideal, peak int64, exact bool) []string {
	notes := []string{fmt.Sprintf("allowed %s of %s sent", words.Thousands(t.Allowed), words.Thousands(t.Sent))}
	if exact {
		// Zero is what a result without the comparison holds too: say
		// nothing rather than something wrong.
		if ideal > 0 {
			notes = append(notes, fmt.Sprintf("%.2f× an exact limiter (%s)", float64(t.Allowed)/float64(ideal), words.Thousands(ideal)))
		}
		if peak > 0 {
			notes = append(notes, fmt.Sprintf("peak %s in any 1 s", words.Thousands(peak)))
		}
	}
	if t.FailedOpen > 0 {
		notes = append(notes, "failed open "+words.Thousands(t.FailedOpen))
	}
	if t.FailedClosed > 0 {
		notes = append(notes, "failed closed "+words.Thousands(t.FailedClosed))
	}
	if t.retries > 0 {
		notes = append(notes, "retries "+words.Thousands(t.retries))
	}
	return notes
}

// values returns one figure of every step.
func values(steps []counts, f func(counts) int64) []float64 {
	v := make([]float64, len(steps))
	for i, s := range steps {
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

// Span kinds of what a partition did to a cluster's shards: bars in the
// Faults lane, not shaded over the panels (the partition's window is).
const (
	spanFence    = "fence"
	spanElection = "election"
)

// laneOnly reports whether spans of kind are drawn in the Faults lane
// alone.
func laneOnly(kind string) bool { return kind == spanFence || kind == spanElection }

// clusterSpans are the fates of r's shards as spans, so the picture says
// when each master fenced and when each replica took over: a fence from
// its instant to the partition's end, an election from the master's
// FAIL to the end of the run.
func clusterSpans(r *sim.Result) []sim.FaultSpan {
	var spans []sim.FaultSpan
	for _, sh := range r.Shards {
		var failed float64
		for _, e := range sh.Events {
			switch e.What {
			case "fenced":
				end := r.DurationS
				for _, f := range r.Faults {
					if f.Kind == string(sim.Partition) && e.TS >= f.StartS && e.TS < f.EndS {
						end = f.EndS
					}
				}
				spans = append(spans, sim.FaultSpan{Kind: spanFence, StartS: e.TS, EndS: end,
					Detail: fmt.Sprintf("%s cut off from the majority: CLUSTERDOWN", e.Node)})
			case "failed":
				failed = e.TS
			case "promoted":
				spans = append(spans, sim.FaultSpan{Kind: spanElection, StartS: failed, EndS: r.DurationS,
					Detail: fmt.Sprintf("%s FAIL at %.2fs, %s master from %.2fs", sh.Master, failed, e.Node, e.TS)})
			}
		}
	}
	return spans
}

// spansOf is r's faults, and its limit's shadow mode as a span of kind
// "shadow" from 0 to when it began to enforce (the end of the run if it
// never did): what a dark launch's picture must show beside its data.
func spansOf(r *sim.Result) []sim.FaultSpan {
	var spans []sim.FaultSpan
	shadow := func(name string, untilS float64) {
		end := r.DurationS
		detail := "the limit decides and counts, refuses nothing"
		if name != "" {
			detail = name + " decides and counts, refuses nothing"
		}
		if untilS > 0 && untilS < end {
			end = untilS
			detail = fmt.Sprintf("nothing refused until %gs, enforced after", untilS)
			if name != "" {
				detail = fmt.Sprintf("%s refuses nothing until %gs, enforced after", name, untilS)
			}
		}
		spans = append(spans, sim.FaultSpan{Kind: "shadow", StartS: 0, EndS: end, Detail: detail})
	}
	if r.Limit.Shadow && len(r.Limit.Limits) == 0 {
		shadow("", r.Limit.ShadowUntilS)
	}
	for _, p := range r.Limit.Limits {
		if p.Shadow {
			shadow(p.Name, p.ShadowUntilS)
		}
	}
	spans = append(spans, r.Faults...)
	spans = append(spans, clusterSpans(r)...)
	// A crash that left leases held: the slots they hold until they
	// expire are the lesson, longer than the crash itself.
	for _, f := range r.Faults {
		if f.Leaked > 0 && f.LeakedUntilS > f.StartS {
			spans = append(spans, sim.FaultSpan{Kind: "leaked leases", StartS: f.StartS, EndS: math.Min(f.LeakedUntilS, r.DurationS),
				Detail: fmt.Sprintf("%d held by requests that died with the server", f.Leaked)})
		}
	}
	if spans == nil {
		return r.Faults
	}
	return spans
}
