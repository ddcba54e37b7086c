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

// What the State and Latency panels draw, taken from a Result.

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
	lines  []stateLine
	hidden int      // lines past maxStateLines, not drawn
	keys   []string // shown, busiest first
	copies []string // in order of appearance
	// totalKeys is every key with state; busiest and quietest, how many of
	// the busiest and of the least busy kinds of key are shown when not
	// all are (0 when all are).
	totalKeys, busiest, quietest int
	unanswered                   bool // some samples are missing: the store did not answer
	max                          float64
}

// maxStateKeys and maxStateLines cap the State panel: past a dozen or two
// lines it is a scribble, and its legend would not fit. quietStateKeys of
// the shown keys are the least busy: the contrast (a scheduler's bucket
// full while a runaway's is empty) is often the lesson.
const (
	maxStateKeys   = 8
	quietStateKeys = 3
	maxStateLines  = 16
)

// stateView is what one State panel draws from: the run's state series
// for one of a key's several limits (each has a panel and a scale of its
// own: an hourly quota of 1,000 would flatten a bucket of 20), or all of
// them for a key with one limit.
type stateView struct {
	heading string // "State", or "State of hourly"
	policy  string // the limit as people write it: "1,000 per 1h"; "" for one limit
	r       *sim.Result
}

// stateViews splits r's state by limit; one view of r itself when its key
// has one limit.
func stateViews(r *sim.Result) []stateView {
	if len(r.Limit.Limits) == 0 {
		return []stateView{{heading: "State", r: r}}
	}
	views := make([]stateView, len(r.Limit.Limits))
	for i, p := range r.Limit.Limits {
		own := *r
		own.State = nil
		for _, ser := range r.State {
			if ser.Limit == p.Name {
				own.State = append(own.State, ser)
			}
		}
		views[i] = stateView{heading: "State of " + p.Name, policy: p.Text(), r: &own}
	}
	return views
}

func newStateData(r *sim.Result, stepS float64) *stateData {
	if len(r.State) == 0 {
		return nil
	}
	s := &stateData{}
	var keys []string
	keys, s.copies = stateKeys(r)
	s.totalKeys = len(keys)
	byKeyCopy := map[[2]string]stateSeries{}
	for i, ser := range r.State {
		n := min(len(ser.TS), len(ser.Remaining))
		byKeyCopy[[2]string{ser.Key, ser.Copy}] = stateSeries{ser.TS[:n], ser.Remaining[:n], i}
	}
	s.keys = s.chooseKeys(keys, byKeyCopy)
	s.drawLines(r, byKeyCopy, stepS)
	return s
}

// stateSeries is one key's state in one copy, sample by sample, as the
// Result has it (sparse when the Result is: the samples where the room
// changed), and its index in the Result's State.
type stateSeries struct {
	ts    []float64
	rem   []int64
	index int
}

// stateKeys returns the keys that have a state series, busiest first (ties
// keep the result's order), and the copies in the order the series name
// them.
func stateKeys(r *sim.Result) (keys, copies []string) {
	sent := map[string]int64{}
	order := map[string]int{}
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
			copies = append(copies, ser.Copy)
		}
	}
	keys = slices.DeleteFunc(keys, func(k string) bool { return !hasState[k] })
	slices.SortStableFunc(keys, func(a, b string) int { return cmp.Compare(sent[b], sent[a]) })
	return keys, copies
}

// chooseKeys returns the keys the panel draws. Keys whose every copy says
// the same (eight runaways, each held to its own bucket) are one kind of
// key: it chooses among kinds, the busiest and the quietest, so that eight
// identical lines do not crowd out the one that differs.
func (s *stateData) chooseKeys(keys []string, byKeyCopy map[[2]string]stateSeries) []string {
	sig := func(k string) string {
		var b strings.Builder
		for _, cp := range s.copies {
			ser := byKeyCopy[[2]string{k, cp}]
			fmt.Fprint(&b, cp, ser.ts, ser.rem, ";")
		}
		return b.String()
	}
	var kinds []string // the first key of each kind, busiest first
	seenSig := map[string]bool{}
	for _, k := range keys {
		if g := sig(k); !seenSig[g] {
			seenSig[g] = true
			kinds = append(kinds, k)
		}
	}
	if len(kinds) <= maxStateKeys {
		return keys
	}
	s.busiest, s.quietest = maxStateKeys-quietStateKeys, quietStateKeys
	chosen := append(slices.Clip(kinds[:s.busiest]), kinds[len(kinds)-s.quietest:]...)
	return slices.DeleteFunc(keys, func(k string) bool {
		g := sig(k)
		return !slices.ContainsFunc(chosen, func(c string) bool { return sig(c) == g })
	})
}

// drawLines makes a line of each chosen key's copies, in key order, then
// copy order: a series the same as one already drawn is named beside it,
// and past maxStateLines a series is counted hidden.
func (s *stateData) drawLines(r *sim.Result, byKeyCopy map[[2]string]stateSeries, stepS float64) {
	var drawn []stateSeries
	for _, k := range s.keys {
		for _, cp := range s.copies {
			ser, ok := byKeyCopy[[2]string{k, cp}]
			if !ok {
				continue
			}
			same := slices.IndexFunc(drawn, func(o stateSeries) bool {
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
			// Drawn from every step's sample: a sparse series' value
			// holds until its next point, which a step drawn from each
			// point to the next would not show.
			dense := r.StateAs(ser.index, true)
			line.runs = s.steps(stateSeries{ts: dense.TS, rem: dense.Remaining}, stepS)
			drawn = append(drawn, ser)
			s.lines = append(s.lines, line)
		}
	}
}

// steps draws ser as steps: runs of samples, broken where a sample is
// negative (no answer); it widens the panel's maximum to the samples.
func (s *stateData) steps(ser stateSeries, stepS float64) []plotter.XYs {
	var runs []plotter.XYs
	var run plotter.XYs
	for i, rem := range ser.rem {
		if rem < 0 {
			s.unanswered = true
			if len(run) > 0 {
				runs = append(runs, run)
				run = nil
			}
			continue
		}
		// A sample is the state at the end of its step: held over the
		// step it ends, drawn as a step, so that a window's reset is a
		// cliff and not a slope.
		if len(run) == 0 {
			run = append(run, plotter.XY{X: math.Max(0, ser.ts[i]-stepS), Y: float64(rem)})
		}
		run = append(run, plotter.XY{X: ser.ts[i], Y: float64(rem)})
		s.max = math.Max(s.max, float64(rem))
	}
	if len(run) > 0 {
		runs = append(runs, run)
	}
	return runs
}

// latencyData is the per-step latency of the worst client: the only
// honest way to combine per-client percentiles without the requests.
type latencyData struct {
	p50, p99 []float64
	has      []bool // the step had requests
	max      float64
}

// newLatencyData returns d's latency per step, or nil when there is none
// to draw: no step with a p99, or, unless always, none that waited
// noticeably longer than the store's round trip.
func newLatencyData(d *timelineData, always bool) *latencyData {
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
	// A flat round trip says nothing the subtitle does not: the panel is
	// drawn only when some step waited noticeably longer than the store's
	// round trip (a queue, a latency spike, retries' back-off).
	if !always && (!anyP99 || l.max <= d.r.RTTMs*1.2+0.05) {
		return nil
	}
	return l
}
