package sim

import (
	"cmp"
	"math/bits"
	"slices"
)

// timelineRows are the recorder's timeline: a row for each step in which
// something happened to a client, made when it first happens (a request
// recorded, a delayed admission served, a step's latency written), and
// none for the rest. A run's timeline so costs what happened in it, not
// steps × clients: two hours at a millisecond's step with one request is
// a row or two, not 7.2 million.
//
// A row holds its step and its client's index, not its instant and name:
// those are put in when the Result is assembled. Each client's rows are
// chained from its latest step back (last, stepRow.prev), so the row of a
// step is found by walking back from the latest; the walk is a step or
// none for a request (recorded in the step in progress, the latest), and
// a few for a leaky bucket's admission served some steps later.
type timelineRows struct {
	rows rowChunks
	// last is each client's row of its latest step, as an index into rows
	// plus one: 0 for a client with no row yet; latest is that row itself
	// (rows never move; noRow for a client with none yet), which nearly
	// every request's row is: found without working out its chunk, 60 of
	// a simulated request's 1,139 instructions.
	last   []int32
	latest []*stepRow
}

// stepRow is one client's figures over one step. TS and Client of row
// are left empty: the Result's rows get them (assembledRow).
type stepRow struct {
	step int
	// client is the index of the row's client; prev the client's row of
	// the step before, as last is (0: none).
	client, prev int32
	row          TimelineRow
}

// rowChunks hold the rows in chunks, numbered from 1 in the order made: a
// row never moves once made (a pointer to it stays good), and growing
// never copies. One slice grown by append allocated several times its
// final size on the way (Go grows a large slice by a quarter): at 10,000
// clients, 202 MB a run where the rows are 30 MB. The chunks double from
// 64 rows to rowChunk, then stay at rowChunk: a run of a few rows stays
// small, and a chunk's room is at most an eighth of the rows.
type rowChunks struct {
	chunks [][]stepRow
	n      int32
}

const (
	firstChunk = 64
	rowChunk   = 1 << 12
)

// chunkOf is the chunk of row index i (from 0) and its place in it:
// chunk 0 holds 64 rows, chunk k from 1 to 6 the 64·2^(k-1) after those
// before it, and from then on each rowChunk.
func chunkOf(i int) (chunk, at int) {
	switch {
	case i < firstChunk:
		return 0, i
	case i < rowChunk:
		k := bits.Len(uint(i / firstChunk))
		return k, i - firstChunk<<(k-1)
	}
	return bits.Len(rowChunk/firstChunk) - 1 + i/rowChunk, i % rowChunk
}

// at is row i (from 1).
func (c *rowChunks) at(i int32) *stepRow {
	k, at := chunkOf(int(i - 1))
	return &c.chunks[k][at]
}

// add makes a row, and returns its number and the row.
func (c *rowChunks) add() (int32, *stepRow) {
	k, at := chunkOf(int(c.n))
	if k == len(c.chunks) {
		size := rowChunk
		if first, _ := chunkOf(rowChunk); k < first {
			size = max(firstChunk<<k>>1, firstChunk) // 64, 64, 128, …
		}
		c.chunks = append(c.chunks, make([]stepRow, size))
	}
	c.n++
	return c.n, &c.chunks[k][at]
}

func newTimelineRows(clients int) timelineRows {
	latest := make([]*stepRow, clients)
	for i := range latest {
		latest[i] = &noRow
	}
	return timelineRows{last: make([]int32, clients), latest: latest}
}

// noRow is the latest row of a client with none yet: its step is no
// step's, so at looks no further than the step (no test for nil, which
// kept at too big to inline), and it is never written.
var noRow = stepRow{step: -1}

// at is client ci's row of step, made empty if it has none yet. Nearly
// every call finds it the client's latest row; the rest walk back
// (walkTo). Kept that small, at inlines where a request is recorded.
func (t *timelineRows) at(step, ci int) *TimelineRow {
	if r := t.latest[ci]; r.step == step {
		return &r.row
	}
	return t.walkTo(step, ci)
}

// walkTo is at for a row that is not the client's latest: found by
// walking back from the latest, or made.
func (t *timelineRows) walkTo(step, ci int) *TimelineRow {
	after := int32(0) // the row of the step after, whose prev the new row is; 0: none, it is the latest
	next := t.last[ci]
	for i := next; i > 0; i = t.rows.at(i).prev {
		r := t.rows.at(i)
		if r.step == step {
			return &r.row
		}
		if r.step < step {
			break
		}
		after, next = i, r.prev
	}
	made, r := t.rows.add()
	*r = stepRow{step: step, client: int32(ci), prev: next}
	if after == 0 {
		t.last[ci], t.latest[ci] = made, r
	} else {
		t.rows.at(after).prev = made
	}
	return &r.row
}

// each calls f with each of client ci's rows from step from on, latest
// first.
func (t *timelineRows) each(ci, from int, f func(step int, row *TimelineRow)) {
	for i := t.last[ci]; i > 0; i = t.rows.at(i).prev {
		r := t.rows.at(i)
		if r.step < from {
			return
		}
		f(r.step, &r.row)
	}
}

// sparse is the timeline as a sparse Result gives it (Result.Sparse): the
// rows in which something happened, step by step and each step's in the
// order of the clients, with their instants and names (stepLen the step's
// microseconds; steps the run's). The rows are new: the recorder's are not
// shared.
//
// Rows are placed, not sorted: counted by step, then each client's rows
// put at its steps' next places, the clients in order. Sorting the row
// numbers by looking each row up in its chunk missed the cache at every
// comparison, 91% of a 10,000-client run's Result (the TUI's verdict).
// A run with far more steps than rows (a long one at a fine step) sorts
// the rows' keys instead: a count a step would cost more than the rows.
func (t *timelineRows) sparse(clients []*clientRun, stepLen int64, steps int) []TimelineRow {
	if steps > 4*int(t.rows.n)+1024 {
		return t.sorted(clients, stepLen)
	}
	at := make([]int32, steps+1) // the rows of each step, then where its next goes
	for i := int32(1); i <= t.rows.n; i++ {
		if r := t.rows.at(i); !r.row.Empty() {
			at[r.step+1]++
		}
	}
	for st := 1; st <= steps; st++ {
		at[st] += at[st-1]
	}
	out := make([]TimelineRow, at[steps])
	for ci, c := range clients {
		for i := t.last[ci]; i > 0; {
			r := t.rows.at(i)
			if !r.row.Empty() {
				out[at[r.step]] = assembledRow(r.row, r.step, c, stepLen)
				at[r.step]++
			}
			i = r.prev
		}
	}
	return out
}

// sorted is sparse by sorting the rows' keys, read chunk by chunk in the
// order the rows were made (nearly step order, so often already sorted).
func (t *timelineRows) sorted(clients []*clientRun, stepLen int64) []TimelineRow {
	keys := make([]rowKey, 0, t.rows.n)
	for i := int32(1); i <= t.rows.n; i++ {
		if r := t.rows.at(i); !r.row.Empty() {
			keys = append(keys, rowKey{step: r.step, client: r.client, row: i})
		}
	}
	byStepClient := func(a, b rowKey) int {
		return cmp.Or(cmp.Compare(a.step, b.step), cmp.Compare(a.client, b.client))
	}
	if !slices.IsSortedFunc(keys, byStepClient) {
		slices.SortFunc(keys, byStepClient)
	}
	out := make([]TimelineRow, len(keys))
	for i, k := range keys {
		r := t.rows.at(k.row)
		out[i] = assembledRow(r.row, r.step, clients[r.client], stepLen)
	}
	return out
}

// rowKey is where a row goes in the Result's timeline, and which it is.
type rowKey struct {
	step   int
	client int32
	row    int32
}

// assembledRow is row as the Result gives it: at its step's instant,
// under its client's name.
func assembledRow(row TimelineRow, step int, c *clientRun, stepLen int64) TimelineRow {
	row.TS, row.Client = seconds(int64(step)*stepLen), c.Name
	return row
}
