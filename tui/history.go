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
// The rows are kept in blocks of a few steps of every client (stepRow: a
// row without its client's name, so that the collector has no pointer to
// follow in them). A step that ends fills its place in the last block, or
// starts a new one: no row is ever moved or copied again, and at 10,000
// clients a step is one allocation the collector does not scan, where a
// slice per client grew (and was copied) 10,000 times.
//
// A history is never written once built. The next frame's is built from
// it, off the UI goroutine while this one is drawn, by writing past the
// steps it has (in its last block, or in blocks appended past its end)
// and copying only the slices' headers; and only when a step has ended.
type history struct {
	// blocks hold the ended steps: block b is steps b·per … b·per+per-1,
	// client ci's at ci·per … ci·per+per-1 in it.
	blocks  [][]stepRow
	per     int // steps per block
	clients int
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

// stepRow is a sim.TimelineRow without its client's name: a history's
// row, which holds no pointer.
type stepRow struct {
	TS float64
	sim.Counts
	Retries, RetriesAllowed, Served int64
	P50Ms, P99Ms                    float64
}

func rowOf(r sim.TimelineRow) stepRow {
	return stepRow{TS: r.TS, Counts: r.Counts, Retries: r.Retries, RetriesAllowed: r.RetriesAllowed,
		Served: r.Served, P50Ms: r.P50Ms, P99Ms: r.P99Ms}
}

func (r stepRow) timelineRow() sim.TimelineRow {
	return sim.TimelineRow{TS: r.TS, Counts: r.Counts, Retries: r.Retries, RetriesAllowed: r.RetriesAllowed,
		Served: r.Served, P50Ms: r.P50Ms, P99Ms: r.P99Ms}
}

// blockRows is how many rows of all clients together a block is sized
// for: about 0.5 MB, a step a block from 4,096 clients on.
const blockRows = 4096

// stepsPerBlock is a block's steps for n clients: 1 to 64.
func stepsPerBlock(n int) int { return min(max(blockRows/max(n, 1), 1), 64) }

// at is client ci's row of ended step st.
func (h history) at(ci, st int) sim.TimelineRow {
	return h.blocks[st/h.per][ci*h.per+st%h.per].timelineRow()
}

// put writes client ci's row of step st, a step past those h has, in
// the block h.blocks already holds for it.
func (h history) put(ci, st int, r stepRow) { h.blocks[st/h.per][ci*h.per+st%h.per] = r }

// endedRows are client ci's ended steps, copied.
func (h history) endedRows(ci int) []sim.TimelineRow {
	out := make([]sim.TimelineRow, h.steps)
	for st := range out {
		out[st] = h.at(ci, st)
	}
	return out
}

// next is h with the steps snap says have ended. A frame that played
// more steps than a snapshot carries leaves a gap, filled from the run's
// Result (the whole timeline so far); that happens only at high speeds on
// long runs, once a frame.
func (h history) next(snap sim.Snapshot, stepS float64, result func() *sim.Result) history {
	n := len(snap.Clients)
	switch {
	case h.clients != n || h.per == 0:
		h = history{clients: n, per: stepsPerBlock(n), first: make([]rejection, n)}
		for i := range h.first {
			h.first[i].step = -1
		}
	case h.steps == snap.Step:
		return h
	default:
		h.first = slices.Clone(h.first)
	}
	had := h.steps
	// Room for the steps that ended, in blocks past the end of those
	// the frame on screen reads.
	for len(h.blocks)*h.per < snap.Step {
		h.blocks = append(h.blocks, make([]stepRow, n*h.per))
	}
	h.steps = snap.Step
	var gaps [][]sim.TimelineRow // per client, the rows of its gap
	for ci, c := range snap.Clients {
		first := snap.Step
		if len(c.Recent) > 0 {
			first = stepIndex(c.Recent[0].TS, stepS)
		}
		if first > had && len(c.Recent) > 0 {
			if gaps == nil {
				gaps = gapRows(had, snap, stepS, result())
			}
			for i, r := range gaps[ci] {
				h.put(ci, had+i, rowOf(r))
			}
		}
		for st := max(had, first); st < snap.Step; st++ {
			h.put(ci, st, rowOf(c.Recent[st-first]))
		}
		if h.first[ci].step < 0 {
			for st := had; st < snap.Step; st++ {
				if r := &h.blocks[st/h.per][ci*h.per+st%h.per]; r.Rejected > 0 {
					h.first[ci] = rejection{st, r.Rejected}
					break
				}
			}
		}
	}
	return h
}

// gapRows are, per client of snap, its rows of the steps between the had
// a history has and the first its Recent carries, from r (the run so far): an empty
// row where r, sparse, has none. One pass over r's rows, which a run's
// Result holds only where something happened.
func gapRows(had int, snap sim.Snapshot, stepS float64, r *sim.Result) [][]sim.TimelineRow {
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
		from[ci] = had
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
	if ci < h.clients {
		s = stepRows{blocks: h.blocks, per: h.per, ci: ci, n: h.steps}
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
// copied whole: a long run has many steps. The ended steps are one
// client's of a history's blocks (its rows in each at ci·per), or rows
// of their own (endedSteps: a block of one "client").
type stepRows struct {
	blocks  [][]stepRow
	per, ci int
	n       int              // the steps ended
	last    *sim.TimelineRow // the step in progress; nil for none
}

// endedSteps are rows as the ended steps of a stepRows.
func endedSteps(rows []sim.TimelineRow) stepRows {
	block := make([]stepRow, len(rows))
	for i, r := range rows {
		block[i] = rowOf(r)
	}
	return stepRows{blocks: [][]stepRow{block}, per: max(len(rows), 1), n: len(rows)}
}

func (s stepRows) len() int {
	if s.last == nil {
		return s.n
	}
	return s.n + 1
}

func (s stepRows) at(i int) sim.TimelineRow {
	if i < s.n {
		return s.blocks[i/s.per][s.ci*s.per+i%s.per].timelineRow()
	}
	return *s.last
}

// head is the first n steps.
func (s stepRows) head(n int) stepRows {
	if n <= s.n {
		return stepRows{blocks: s.blocks, per: s.per, ci: s.ci, n: n}
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
	var ended []sim.TimelineRow
	var last *sim.TimelineRow
	for i, ci := range members {
		rows := h.of(ci, snap)
		if i == 0 {
			ended = make([]sim.TimelineRow, rows.n)
			for st := range ended {
				ended[st] = sim.TimelineRow{TS: rows.at(st).TS, Client: key}
			}
			if rows.last != nil {
				last = &sim.TimelineRow{TS: rows.last.TS, Client: key}
			}
		}
		for st := range min(rows.n, len(ended)) {
			addRow(&ended[st], rows.at(st))
		}
		if rows.last != nil && last != nil {
			addRow(last, *rows.last)
		}
	}
	out := endedSteps(ended)
	out.last = last
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
//
// Rows already in that order (none rejected yet, or rejected in the
// order of the scenario's list) are returned as they are: at 10,000
// clients a copy is 1.4 MB a frame.
func telling(rows []series) []series {
	if slices.IsSortedFunc(rows, func(a, b series) int { return compareFirst(a.first, b.first) }) {
		return rows
	}
	type ranked struct {
		first rejection
		index int
	}
	rs := make([]ranked, len(rows))
	for i, s := range rows {
		rs[i] = ranked{s.first, i}
	}
	slices.SortFunc(rs, func(a, b ranked) int {
		return cmp.Or(compareFirst(a.first, b.first), cmp.Compare(a.index, b.index))
	})
	out := make([]series, len(rs))
	for i, r := range rs {
		out[i] = rows[r.index]
	}
	return out
}

// compareFirst orders first rejections: the earlier step first, a step's
// ties by how many it rejected, most first.
func compareFirst(a, b rejection) int {
	return cmp.Or(cmp.Compare(a.step, b.step), cmp.Compare(b.n, a.n))
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
