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
// repeated state points left out, everything else shared with r. The JSON
// writer does the same row by row without a copy (report.WriteJSON); this
// is for a Result encoded whole inside another object.
func (r *Result) Sparse() *Result {
	if r.TimelineSparse {
		return r
	}
	out := *r
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
	if r.State != nil {
		out.State = make([]StateSeries, len(r.State))
		for i, s := range r.State {
			out.State[i] = s.Sparse()
		}
	}
	return &out
}

// Densify puts back every timeline row and state point a sparse Result
// leaves out, as the contract says (see Result.TimelineSparse), and
// clears TimelineSparse; a dense Result is left as it is. It gives r a
// timeline and state series of its own, sharing nothing with a copy of r
// made before. The steps are
// those of DurationS and StepS, whose microseconds the floats give back
// exactly; the rows come step by step, each step's in the order of
// Clients, as a run writes them.
func (r *Result) Densify() {
	if !r.TimelineSparse {
		return
	}
	r.TimelineSparse = false
	stepLen := int64(math.Round(r.StepS * 1e6))
	duration := int64(math.Round(r.DurationS * 1e6))
	if stepLen <= 0 || duration <= 0 {
		return
	}
	steps := int((duration + stepLen - 1) / stepLen)
	given := map[stepClient]TimelineRow{}
	for _, row := range r.Timeline {
		given[stepClient{row.TS, row.Client}] = row
	}
	dense := make([]TimelineRow, 0, steps*len(r.Clients))
	for st := range steps {
		ts := seconds(int64(st) * stepLen)
		for _, c := range r.Clients {
			row, ok := given[stepClient{ts, c.Name}]
			if !ok {
				row = TimelineRow{TS: ts, Client: c.Name}
			}
			dense = append(dense, row)
		}
	}
	r.Timeline = dense
	// A new slice: a Result copied before Densify keeps its own series.
	state := r.State
	if state != nil {
		r.State = make([]StateSeries, len(state))
	}
	for i, s := range state {
		r.State[i] = s.dense(stepLen, duration, steps)
	}
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
