package tui

import (
	"cmp"
	"math"
	"slices"

	"github.com/ratelim/ratelim/sim"
)

// history is every step a run has played, per client: the steps that
// ended, gathered from the snapshots (a snapshot carries only the last
// steps, and a strip that shows the whole run needs them all); the step
// in progress is the snapshot's own. It costs what the simulator's own
// timeline costs, steps × clients rows.
//
// A history is never written once built. The next frame's is built from
// it, off the UI goroutine while this one is drawn, by appending to its
// rows past their ends and copying only the slices' headers; and only
// when a step has ended.
type history struct {
	ended [][]sim.TimelineRow // per client (the snapshot's order), per step from 0
	// first is each client's first ended step with a rejection, and how
	// many it rejected; step -1 while none has.
	first []rejection
	steps int // how many steps have ended: every client's rows
}

// rejection is a row's first step with a rejection and how many that
// step rejected; step math.MaxInt for a row never rejected.
type rejection struct {
	step int
	n    int64
}

var neverRejected = rejection{step: math.MaxInt}

// next is h with the steps snap says have ended. A frame that played
// more steps than a snapshot carries leaves a gap, filled from the run's
// Result (the whole timeline so far); that happens only at high speeds on
// long runs, once a frame.
func (h history) next(snap sim.Snapshot, stepS float64, result func() *sim.Result) history {
	n := len(snap.Clients)
	switch {
	case len(h.ended) != n:
		h = history{ended: make([][]sim.TimelineRow, n), first: make([]rejection, n)}
		for i := range h.first {
			h.first[i].step = -1
		}
	case h.steps == snap.Step:
		return h
	default:
		h.ended, h.first = slices.Clone(h.ended), slices.Clone(h.first)
	}
	h.steps = snap.Step
	var gaps [][]sim.TimelineRow // per client, the rows of its gap
	for ci, c := range snap.Clients {
		if len(c.Recent) == 0 {
			continue
		}
		rows := h.ended[ci]
		had := len(rows)
		first := stepIndex(c.Recent[0].TS, stepS)
		if first > len(rows) {
			if gaps == nil {
				gaps = gapRows(h, snap, stepS, result())
			}
			rows = append(rows, gaps[ci]...)
		}
		if from, to := len(rows)-first, snap.Step-first; from >= 0 && to > from {
			rows = append(rows, c.Recent[from:to]...)
		}
		if h.first[ci].step < 0 {
			for st := had; st < len(rows); st++ {
				if rows[st].Rejected > 0 {
					h.first[ci] = rejection{st, rows[st].Rejected}
					break
				}
			}
		}
		h.ended[ci] = rows
	}
	return h
}

// gapRows are, per client of snap, its rows of the steps between those h
// has and the first its Recent carries, from r (the run so far): an empty
// row where r, sparse, has none. One pass over r's rows, which a run's
// Result holds only where something happened.
func gapRows(h history, snap sim.Snapshot, stepS float64, r *sim.Result) [][]sim.TimelineRow {
	stepUs := int64(math.Round(stepS * 1e6))
	steps := int(math.Ceil(r.DurationS/stepS - 1e-9))
	gaps := make([][]sim.TimelineRow, len(snap.Clients))
	from := make([]int, len(snap.Clients))
	index := make(map[string]int, len(snap.Clients))
	for ci, c := range snap.Clients {
		index[c.Name] = ci
		if len(c.Recent) == 0 {
			continue
		}
		from[ci] = len(h.ended[ci])
		to := min(stepIndex(c.Recent[0].TS, stepS), steps)
		for st := from[ci]; st < to; st++ {
			// The instant as the run writes it: microseconds, in seconds.
			gaps[ci] = append(gaps[ci], sim.TimelineRow{TS: float64(int64(st)*stepUs) / 1e6, Client: c.Name})
		}
	}
	for _, row := range r.Timeline {
		ci, ok := index[row.Client]
		if !ok {
			continue
		}
		if i := stepIndex(row.TS, stepS) - from[ci]; i >= 0 && i < len(gaps[ci]) {
			gaps[ci][i] = row
		}
	}
	return gaps
}

// of is client ci's steps: those ended, then the snapshot's step in
// progress.
func (h history) of(ci int, snap sim.Snapshot) stepRows {
	var s stepRows
	if ci < len(h.ended) {
		s.ended = h.ended[ci]
	}
	if recent := snap.Clients[ci].Recent; len(recent) > 0 {
		s.last = &recent[len(recent)-1]
	}
	return s
}

// rejectedAt is client ci's first rejection, in the steps ended or the
// step in progress.
func (h history) rejectedAt(ci int, snap sim.Snapshot) rejection {
	if ci < len(h.first) && h.first[ci].step >= 0 {
		return h.first[ci]
	}
	if recent := snap.Clients[ci].Recent; len(recent) > 0 && recent[len(recent)-1].Rejected > 0 {
		return rejection{snap.Step, recent[len(recent)-1].Rejected}
	}
	return neverRejected
}

// stepIndex is the step that starts at ts.
func stepIndex(ts, stepS float64) int { return int(math.Round(ts / stepS)) }

// stepRows are a row's figures per step from step 0: the steps that
// ended, then the step in progress. They are read where they are, never
// copied whole: a long run has many steps.
type stepRows struct {
	ended []sim.TimelineRow
	last  *sim.TimelineRow // the step in progress; nil for none
}

func (s stepRows) len() int {
	if s.last == nil {
		return len(s.ended)
	}
	return len(s.ended) + 1
}

func (s stepRows) at(i int) sim.TimelineRow {
	if i < len(s.ended) {
		return s.ended[i]
	}
	return *s.last
}

// head is the first n steps.
func (s stepRows) head(n int) stepRows {
	if n <= len(s.ended) {
		return stepRows{ended: s.ended[:n]}
	}
	return s
}

// series is one row of the table: a client, or in the per-key view a
// limiter key with every client that shares it.
type series struct {
	name    string
	key     string
	clients int               // the clients it adds up: 1 for a client's row
	total   *sim.ClientResult // a client's row: the snapshot's own, never written
	members []int             // the clients it adds up, by index in the snapshot
	first   rejection
	// steps are from step 0, the last possibly in progress: a client's
	// from the start, a key's added up when its row is drawn (withSteps).
	steps stepRows
}

// rowsOf are the table's rows for the view chosen, clients or keys, the
// telling ones first (see telling).
func rowsOf(snap sim.Snapshot, h history, info *runInfo, byKey bool) []series {
	if byKey {
		return telling(keySeries(snap, h, info))
	}
	return telling(clientSeries(snap, h, info))
}

// clientSeries are the clients' rows in the snapshot's order.
func clientSeries(snap sim.Snapshot, h history, info *runInfo) []series {
	out := make([]series, len(snap.Clients))
	for i, c := range snap.Clients {
		out[i] = series{name: c.Name, key: c.Key, clients: 1, total: &snap.Clients[i].Total,
			members: info.self[i : i+1], first: h.rejectedAt(i, snap), steps: h.of(i, snap)}
	}
	return out
}

// keySeries are the keys' rows, each the sum of its clients, in the order
// of the keys' first clients. Their steps are added up when drawn.
func keySeries(snap sim.Snapshot, h history, info *runInfo) []series {
	out := make([]series, len(info.keys))
	for k, key := range info.keys {
		s := series{name: key, key: key, members: info.members[k], first: neverRejected, total: &sim.ClientResult{}}
		for _, ci := range s.members {
			s.clients++
			addResult(s.total, snap.Clients[ci].Total)
			// A client rejected later rejected nothing in the key's first
			// rejected step: the key's count there is its first ones'.
			switch r := h.rejectedAt(ci, snap); {
			case r.step < s.first.step:
				s.first = r
			case r.step == s.first.step && r != neverRejected:
				s.first.n += r.n
			}
		}
		out[k] = s
	}
	return out
}

// sumSteps are the steps of the clients members added up, as a key's row
// draws them.
func sumSteps(members []int, key string, snap sim.Snapshot, h history) stepRows {
	var out stepRows
	for i, ci := range members {
		rows := h.of(ci, snap)
		if i == 0 {
			out.ended = make([]sim.TimelineRow, len(rows.ended))
			for st, r := range rows.ended {
				out.ended[st] = sim.TimelineRow{TS: r.TS, Client: key}
			}
			if rows.last != nil {
				out.last = &sim.TimelineRow{TS: rows.last.TS, Client: key}
			}
		}
		for st := range min(len(rows.ended), len(out.ended)) {
			addRow(&out.ended[st], rows.ended[st])
		}
		if rows.last != nil && out.last != nil {
			addRow(out.last, *rows.last)
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
	type ranked struct {
		first rejection
		index int
	}
	rs := make([]ranked, len(rows))
	for i, s := range rows {
		rs[i] = ranked{s.first, i}
	}
	slices.SortFunc(rs, func(a, b ranked) int {
		switch {
		case a.first.step != b.first.step:
			return cmp.Compare(a.first.step, b.first.step)
		case a.first.n != b.first.n:
			return cmp.Compare(b.first.n, a.first.n)
		}
		return cmp.Compare(a.index, b.index)
	})
	out := make([]series, len(rs))
	for i, r := range rs {
		out[i] = rows[r.index]
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
	a.windowed = l.Reads("window") && a.window > 0
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
func cells(rows stepRows, k int, stepS float64, a allowance) []cell {
	n := rows.len()
	out := make([]cell, 0, (n+k-1)/k)
	for i := 0; i < n; i += k {
		c := cell{TimelineRow: rows.at(i)}
		c.Sent, c.Allowed, c.Rejected, c.FailedOpen, c.FailedClosed, c.Retries, c.Served = 0, 0, 0, 0, 0, 0, 0
		for j := i; j < min(n, i+k); j++ {
			addRow(&c.TimelineRow, rows.at(j))
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
