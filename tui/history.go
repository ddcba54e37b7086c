package tui

import (
	"cmp"
	"math"
	"slices"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/sim"
)

// history is every step a run has played, per client, gathered from the
// snapshots: a snapshot carries only the last steps, and a strip that
// shows the whole run needs them all. It costs what the simulator's own
// timeline costs, steps × clients rows.
type history struct {
	steps [][]sim.TimelineRow // per client (the snapshot's order), per step from 0
}

// update adds what snap says of the steps played. A frame that played more
// steps than a snapshot carries leaves a gap, filled from the run's Result
// (the whole timeline so far); that happens only at high speeds on long
// runs, once a frame.
func (h *history) update(snap sim.Snapshot, stepS float64, result func() *sim.Result) {
	if len(h.steps) != len(snap.Clients) {
		h.steps = make([][]sim.TimelineRow, len(snap.Clients))
	}
	var r *sim.Result
	for ci, c := range snap.Clients {
		if len(c.Recent) == 0 {
			continue
		}
		first := stepIndex(c.Recent[0].TS, stepS)
		if first > len(h.steps[ci]) {
			if r == nil {
				r = result()
			}
			n := len(snap.Clients)
			for st := len(h.steps[ci]); st < first && st*n+ci < len(r.Timeline); st++ {
				h.steps[ci] = append(h.steps[ci], r.Timeline[st*n+ci])
			}
		}
		h.steps[ci] = append(h.steps[ci][:min(first, len(h.steps[ci]))], c.Recent...)
	}
}

// stepIndex is the step that starts at ts.
func stepIndex(ts, stepS float64) int { return int(math.Round(ts / stepS)) }

// series is one row of the table: a client, or in the per-key view a
// limiter key with every client that shares it.
type series struct {
	name    string
	key     string
	clients int // the clients it adds up: 1 for a client's row
	total   sim.ClientResult
	steps   []sim.TimelineRow // from step 0, the last possibly in progress
}

// clientSeries are the clients' rows in the snapshot's order.
func clientSeries(snap sim.Snapshot, h history) []series {
	out := make([]series, len(snap.Clients))
	for i, c := range snap.Clients {
		out[i] = series{name: c.Name, key: c.Key, clients: 1, total: c.Total}
		if i < len(h.steps) {
			out[i].steps = h.steps[i]
		}
	}
	return out
}

// keySeries are the keys' rows, each the sum of its clients, in the order
// of the keys' first clients.
func keySeries(snap sim.Snapshot, h history) []series {
	var out []series
	index := map[string]int{}
	for ci, c := range snap.Clients {
		i, ok := index[c.Key]
		if !ok {
			i = len(out)
			index[c.Key] = i
			out = append(out, series{name: c.Key, key: c.Key})
		}
		s := &out[i]
		s.clients++
		addResult(&s.total, c.Total)
		if ci >= len(h.steps) {
			continue
		}
		for st, row := range h.steps[ci] {
			if st == len(s.steps) {
				s.steps = append(s.steps, sim.TimelineRow{TS: row.TS, Client: c.Key})
			}
			addRow(&s.steps[st], row)
		}
	}
	return out
}

func addResult(to *sim.ClientResult, c sim.ClientResult) {
	to.Counts.Add(c.Counts)
	to.Retries += c.Retries
	to.IdealAllowed += c.IdealAllowed
	to.MaxAllowed1s = max(to.MaxAllowed1s, c.MaxAllowed1s)
}

func addRow(to *sim.TimelineRow, r sim.TimelineRow) {
	to.Counts.Add(r.Counts)
	to.Retries += r.Retries
	to.Served += r.Served
}

// telling orders rows so that the ones with the lesson come first: rows
// that have had a rejection, in the order of their first (a step's ties
// by how many that step rejected), then the rest as the scenario lists
// them. The order changes only when a row is first rejected, so the rows
// do not shuffle while the viewer reads them.
func telling(rows []series) []series {
	first := func(s series) (int, int64) {
		for st, r := range s.steps {
			if r.Rejected > 0 {
				return st, r.Rejected
			}
		}
		return math.MaxInt, 0
	}
	type ranked struct {
		s        series
		step     int
		rejected int64
		index    int
	}
	rs := make([]ranked, len(rows))
	for i, s := range rows {
		st, n := first(s)
		rs[i] = ranked{s, st, n, i}
	}
	slices.SortStableFunc(rs, func(a, b ranked) int {
		switch {
		case a.step != b.step:
			return cmp.Compare(a.step, b.step)
		case a.rejected != b.rejected:
			return cmp.Compare(b.rejected, a.rejected)
		}
		return cmp.Compare(a.index, b.index)
	})
	out := make([]series, len(rs))
	for i, r := range rs {
		out[i] = r.s
	}
	return out
}

// cell is a run of consecutive steps drawn as one cell of a strip.
type cell struct {
	sim.TimelineRow
	steps int  // how many it adds up
	over  bool // whether some interval ending in it admitted more than the limit allows
}

// niceStrides are the steps a strip's cell may cover: numbers that read
// well on the scale ("a cell is 5 s").
var niceStrides = []int{1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40, 50, 60, 80, 100, 120, 150, 200, 250, 300, 400, 500, 600}

// stride is how many steps one cell covers for n steps played in w cells:
// one while they fit, then the next nice number that fits them. As the
// run grows the strip compresses, so the whole run stays in view.
func stride(n, w int) int {
	if w <= 0 || n <= w {
		return 1
	}
	need := (n + w - 1) / w
	for _, s := range niceStrides {
		if s >= need {
			return s
		}
	}
	return need
}

// allowance is how many requests the limit lets one key have in any
// interval of d seconds, as the limit means it: a bucket's burst plus its
// rate over d; a window's limit once per window's length (so that the 2×
// a fixed window admits across a boundary shows as over).
type allowance struct {
	rate, burst, window float64
	windowed            bool
}

func newAllowance(l sim.Limit) allowance {
	a := allowance{rate: l.Params.Rate.PerSecond(), burst: float64(l.Params.Burst), window: l.Params.Window.Seconds()}
	for _, info := range algorithms.Catalog() {
		if info.Name == l.Algorithm && slices.Contains(info.Params, "window") {
			a.windowed = a.window > 0
		}
	}
	return a
}

func (a allowance) in(d float64) float64 {
	if a.windowed {
		return a.rate * a.window * math.Ceil(d/a.window-1e-9)
	}
	return a.burst + a.rate*d
}

// overSlack is how far past the allowance a cell's admissions must be to
// count as over: clear of the one request a step boundary or a round
// trip lets slip through, and of the sliding-window counter's estimate,
// well short of the 2× of a boundary or a split brain.
const (
	overSlack = 1.1
	overExtra = 1
)

// cells adds up rows k steps a cell and marks the cells that admitted
// more than the limit allows. Admissions by the fail-open policy are not
// the limiter's doing: those cells are drawn as failed open, and count
// for nothing here.
//
// For a bucket the test is a policer's: a bucket of the limit's burst,
// full at the start, refilled at its rate; a cell may use what it holds
// at the cell's start plus the cell's refill, and what it takes beyond
// that is over. The excess is not carried on, so that once the limit
// holds again (a partition healed) the cells after are not marked. For a
// window the test is the window's: no interval of whole cells within one
// window's length, ending in the cell, may hold more than the limit per
// window; and the cell must itself have taken more than its share of the
// rate, so that an empty cell after a boundary burst is not marked.
func cells(rows []sim.TimelineRow, k int, stepS float64, a allowance) []cell {
	out := make([]cell, 0, (len(rows)+k-1)/k)
	for i := 0; i < len(rows); i += k {
		c := cell{TimelineRow: rows[i]}
		c.Sent, c.Allowed, c.Rejected, c.FailedOpen, c.FailedClosed, c.Retries, c.Served = 0, 0, 0, 0, 0, 0, 0
		for _, r := range rows[i:min(len(rows), i+k)] {
			addRow(&c.TimelineRow, r)
			c.steps++
		}
		out = append(out, c)
	}
	used := func(c cell) float64 { return float64(c.Allowed - c.FailedOpen) }
	limit := func(allowed float64) float64 { return overSlack*allowed + overExtra }
	tokens := a.burst
	for i := range out {
		d := float64(out[i].steps) * stepS
		if !a.windowed {
			avail := min(a.burst, tokens) + a.rate*d
			out[i].over = used(out[i]) > limit(avail)
			tokens = max(0, avail-used(out[i]))
			continue
		}
		if used(out[i]) <= limit(a.rate*d) {
			continue
		}
		sum, span := 0.0, 0.0
		for j := i; j >= 0; j-- {
			span += float64(out[j].steps) * stepS
			if j < i && span > a.window+1e-9 {
				break
			}
			sum += used(out[j])
			if sum > limit(a.in(span)) {
				out[i].over = true
				break
			}
		}
	}
	return out
}
