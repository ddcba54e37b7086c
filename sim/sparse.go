package sim

import (
	"math"
	"slices"
)

// A Result's timeline has a row per client per step, and its state series
// a point per step, whatever happened: a day at a millisecond's step with
// one request is 86 million rows, nearly all of them zeros. Written
// sparse (Result.TimelineSparse), a Result leaves out what a reader can
// put back:
//
//   - a timeline row in which nothing happened to its client (Empty):
//     a client absent from a step sent nothing, was served nothing, and
//     every figure of its row is 0;
//   - a state series' point that repeats the point before it, the first
//     and last of each series kept: a value holds until the next point,
//     and the last point says where the series ends.
//
// So a reader that sums the rows reads the same totals, and one that
// draws a staircase from the points draws the same one. Densify puts
// every row and point back.

// Empty reports whether nothing happened to the row's client in its step:
// every figure 0, what a sparse Result leaves out.
func (row TimelineRow) Empty() bool {
	return row.Counts == Counts{} && row.Retries == 0 && row.RetriesAllowed == 0 && row.Served == 0 && row.P50Ms == 0 && row.P99Ms == 0
}

// Sparse returns s without the points that repeat the point before them,
// its first and last kept: the same staircase, in proportion to how often
// the state changed. s is not changed; a series that repeats nothing is
// returned as it is.
func (s StateSeries) Sparse() StateSeries {
	n := min(len(s.TS), len(s.Remaining))
	kept := 0
	for i := range n {
		if keepPoint(s.Remaining, i, n) {
			kept++
		}
	}
	if kept == n && len(s.TS) == len(s.Remaining) {
		return s
	}
	out := s
	out.TS, out.Remaining = make([]float64, 0, kept), make([]int64, 0, kept)
	for i := range n {
		if keepPoint(s.Remaining, i, n) {
			out.TS = append(out.TS, s.TS[i])
			out.Remaining = append(out.Remaining, s.Remaining[i])
		}
	}
	return out
}

// keepPoint reports whether a sparse series keeps point i of n: the first,
// the last, and each that differs from the one before.
func keepPoint(remaining []int64, i, n int) bool {
	return i == 0 || i == n-1 || remaining[i] != remaining[i-1]
}

// Sparse returns r as a sparse Result (TimelineSparse): its empty rows and
// repeated state points left out, everything else shared with r. A run's
// Result is sparse in its timeline already, its state series a point per
// step: only those are made sparse, and r itself is returned when no
// series repeats a point. The JSON writer does the same row by row
// without a copy (report.WriteJSON); this is for a Result encoded whole
// inside another object.
func (r *Result) Sparse() *Result {
	out := *r
	if !r.TimelineSparse {
		out.TimelineSparse = true
		out.Timeline = nil
		if r.Timeline != nil {
			out.Timeline = make([]TimelineRow, 0)
		}
		for _, row := range r.Timeline {
			if !row.Empty() {
				out.Timeline = append(out.Timeline, row)
			}
		}
	}
	if r.State == nil {
		return &out
	}
	out.State = make([]StateSeries, len(r.State))
	same := r.TimelineSparse
	for i, s := range r.State {
		out.State[i] = s.Sparse()
		same = same && len(out.State[i].TS) == len(s.TS)
	}
	if same {
		return r
	}
	return &out
}

// EachRow calls f with each row of r's timeline in turn, step by step and
// each step's in the order of Clients, and stops at f's first error.
// Dense, every client's row of every step: a sparse Result's missing rows
// are made as f is called, never all at once, so that a writer streams a
// long run's dense timeline in the memory of one row. Not dense, the rows
// in which something happened (what a sparse Result holds). The row f is
// given is good until f returns.
func (r *Result) EachRow(dense bool, f func(row *TimelineRow) error) error {
	if !dense || !r.TimelineSparse {
		for i := range r.Timeline {
			if dense || !r.Timeline[i].Empty() {
				if err := f(&r.Timeline[i]); err != nil {
					return err
				}
			}
		}
		return nil
	}
	steps, stepLen, ok := r.steps()
	if !ok {
		return nil
	}
	clientIndex := make(map[string]int, len(r.Clients))
	for i, c := range r.Clients {
		clientIndex[c.Name] = i
	}
	// The rows are in the order they are called in (a run's, and a sparse
	// JSON's): each is reached by a cursor. Out of that order, by a map.
	var given map[stepClient]int
	for i := 1; i < len(r.Timeline) && given == nil; i++ {
		a, b := &r.Timeline[i-1], &r.Timeline[i]
		if a.TS > b.TS || (a.TS == b.TS && clientIndex[a.Client] >= clientIndex[b.Client]) {
			given = make(map[stepClient]int, len(r.Timeline))
			for j, row := range r.Timeline {
				given[stepClient{row.TS, row.Client}] = j
			}
		}
	}
	next := 0
	var row TimelineRow
	for st := range steps {
		ts := seconds(int64(st) * stepLen)
		for _, c := range r.Clients {
			row = TimelineRow{TS: ts, Client: c.Name}
			if given != nil {
				if j, ok := given[stepClient{ts, c.Name}]; ok {
					row = r.Timeline[j]
				}
			} else if next < len(r.Timeline) && r.Timeline[next].TS == ts && r.Timeline[next].Client == c.Name {
				row = r.Timeline[next]
				next++
			}
			if err := f(&row); err != nil {
				return err
			}
		}
	}
	return nil
}

// StateAs is r's state series i as written dense (a point at every step's
// end between its first and last) or sparse (its repeated points left
// out), whichever r holds it as.
func (r *Result) StateAs(i int, dense bool) StateSeries {
	s := r.State[i]
	if !dense {
		return s.Sparse()
	}
	if !r.TimelineSparse {
		return s
	}
	steps, stepLen, ok := r.steps()
	if !ok {
		return s
	}
	return s.dense(stepLen, int64(math.Round(r.DurationS*1e6)), steps)
}

// steps are r's steps and the microseconds of one, from DurationS and
// StepS, whose microseconds the floats give back exactly; ok false when
// either is not positive.
func (r *Result) steps() (steps int, stepLen int64, ok bool) {
	stepLen = int64(math.Round(r.StepS * 1e6))
	duration := int64(math.Round(r.DurationS * 1e6))
	if stepLen <= 0 || duration <= 0 {
		return 0, 0, false
	}
	return int((duration + stepLen - 1) / stepLen), stepLen, true
}

// Densify puts back every timeline row and state point a sparse Result
// leaves out, as the contract says (see Result.TimelineSparse), and
// clears TimelineSparse; a dense Result is left as it is. It gives r a
// timeline and state series of its own, sharing nothing with a copy of r
// made before. The steps are those of DurationS and StepS; the rows come
// step by step, each step's in the order of Clients, as EachRow gives
// them. It holds steps × clients rows: a reader that can go row by row
// calls EachRow instead.
func (r *Result) Densify() {
	if !r.TimelineSparse {
		return
	}
	steps, _, ok := r.steps()
	if !ok {
		r.TimelineSparse = false
		return
	}
	dense := make([]TimelineRow, 0, steps*len(r.Clients))
	r.EachRow(true, func(row *TimelineRow) error {
		dense = append(dense, *row)
		return nil
	})
	r.State = r.denseState(true)
	if len(dense) > 0 || r.Timeline != nil {
		r.Timeline = dense // else nil, as it was: no client, no row
	}
	r.TimelineSparse = false
}

// denseState is r's state series with every point a sparse Result leaves
// out put back: new series, sharing nothing with r, if own; else a series
// that has every step's point already is r's own (a run's are), for a
// reader that only reads them. The findings read them so: they compare
// the copies' series step by step, but only ever sum the timeline's rows,
// whose empty steps are therefore not put back.
func (r *Result) denseState(own bool) []StateSeries {
	if r.State == nil {
		return nil
	}
	steps, _, _ := r.steps()
	state := make([]StateSeries, len(r.State))
	for i, s := range r.State {
		if !own && r.TimelineSparse && len(s.TS) == steps && len(s.Remaining) == steps {
			state[i] = s
			continue
		}
		state[i] = r.StateAs(i, true)
	}
	return state
}

type stepClient struct {
	ts     float64
	client string
}

// dense is a sparse series with the points between its first and last
// put back, at every step's end: each holds the value of the point at or
// before it.
func (s StateSeries) dense(stepLen, duration int64, steps int) StateSeries {
	n := min(len(s.TS), len(s.Remaining))
	if n == 0 {
		return s
	}
	first, last := s.TS[0], s.TS[n-1]
	out := s
	out.TS, out.Remaining = nil, nil
	j := 0
	for st := range steps {
		ts := seconds(min(int64(st+1)*stepLen, duration))
		if ts < first || ts > last {
			continue
		}
		for j+1 < n && s.TS[j+1] <= ts {
			j++
		}
		out.TS = append(out.TS, ts)
		out.Remaining = append(out.Remaining, s.Remaining[j])
	}
	if !slices.Contains(out.TS, last) {
		return s // not on the steps' ends: left as given
	}
	return out
}
