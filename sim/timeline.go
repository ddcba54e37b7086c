package sim

import (
	"cmp"
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
	rows []stepRow
	// last is each client's row of its latest step, as an index into rows
	// plus one: 0 for a client with no row yet.
	last []int32
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

func newTimelineRows(clients int) timelineRows {
	return timelineRows{last: make([]int32, clients)}
}

// at is client ci's row of step, made empty if it has none yet. The
// pointer is good until the next row is made.
func (t *timelineRows) at(step, ci int) *TimelineRow {
	after := int32(0) // the row of the step after, whose prev the new row is; 0: none, it is the latest
	next := t.last[ci]
	for i := next; i > 0; i = t.rows[i-1].prev {
		r := &t.rows[i-1]
		if r.step == step {
			return &r.row
		}
		if r.step < step {
			break
		}
		after, next = i, r.prev
	}
	t.rows = append(t.rows, stepRow{step: step, client: int32(ci), prev: next})
	made := int32(len(t.rows))
	if after == 0 {
		t.last[ci] = made
	} else {
		t.rows[after-1].prev = made
	}
	return &t.rows[made-1].row
}

// find is client ci's row of step, and whether it has one.
func (t *timelineRows) find(step, ci int) (TimelineRow, bool) {
	for i := t.last[ci]; i > 0; i = t.rows[i-1].prev {
		if r := &t.rows[i-1]; r.step == step {
			return r.row, true
		} else if r.step < step {
			break
		}
	}
	return TimelineRow{}, false
}

// each calls f with each of client ci's rows from step from on, latest
// first.
func (t *timelineRows) each(ci, from int, f func(step int, row *TimelineRow)) {
	for i := t.last[ci]; i > 0; i = t.rows[i-1].prev {
		r := &t.rows[i-1]
		if r.step < from {
			return
		}
		f(r.step, &r.row)
	}
}

// sparse is the timeline as a sparse Result gives it (Result.Sparse): the
// rows in which something happened, step by step and each step's in the
// order of the clients, with their instants and names (stepLen the step's
// microseconds). The rows are new: the recorder's are not shared.
func (t *timelineRows) sparse(clients []*clientRun, stepLen int64) []TimelineRow {
	order := make([]int32, 0, len(t.rows))
	for i := range t.rows {
		if !t.rows[i].row.Empty() {
			order = append(order, int32(i))
		}
	}
	slices.SortFunc(order, func(a, b int32) int {
		ra, rb := &t.rows[a], &t.rows[b]
		return cmp.Or(cmp.Compare(ra.step, rb.step), cmp.Compare(ra.client, rb.client))
	})
	out := make([]TimelineRow, len(order))
	for i, ri := range order {
		r := &t.rows[ri]
		out[i] = assembledRow(r.row, r.step, clients[r.client], stepLen)
	}
	return out
}

// assembledRow is row as the Result gives it: at its step's instant,
// under its client's name.
func assembledRow(row TimelineRow, step int, c *clientRun, stepLen int64) TimelineRow {
	row.TS, row.Client = seconds(int64(step)*stepLen), c.Name
	return row
}
