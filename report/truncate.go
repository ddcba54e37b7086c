package report

import (
	"math"
	"slices"

	"github.com/ratelim/ratelim/sim"
)

// Truncate returns the part of r that had happened by t seconds: what a
// plot of the run drawn at instant t would show. It is how an animation's
// frames are made from one finished run, with no second simulation.
//
// The recorder's resolution is a step, so Truncate keeps whole steps: t is
// rounded down to a multiple of r.StepS (a step that has not ended is not
// known yet), and the result's DurationS is that instant. Then
//
//   - timeline rows are those of the kept steps;
//   - each state series keeps the samples taken by then (a sample is the
//     state at the end of its step);
//   - events are those logged by then, and faults those begun by then,
//     a fault still running ending at the cut;
//   - each client's sent, allowed, rejected, failed-open, failed-closed
//     and retries are recomputed from its kept rows, each key's from its
//     clients, and Requests from the clients' sent.
//
// What cannot be recomputed from the steps is zeroed rather than left
// wrong: the exact figures (max_allowed_1s, the exact limiter's
// admissions, false allows and denies, retries_allowed) need the request
// times, and the latency summary the requests' latencies; a reader of the
// Result treats zero as "not known", as it does for a result without the
// comparison. Expectations, evaluated on the whole run, are dropped.
// Findings are kept: they are the run's lesson, which an animation keeps
// in view from its first frame.
//
// t at or past the end (or NaN, or a result without a positive step)
// returns a copy of r with nothing dropped. r is not
// modified, and nothing of the returned Result shares memory with it.
func Truncate(r *sim.Result, t float64) *sim.Result {
	out := *r
	out.Limit.Defaulted = slices.Clone(r.Limit.Defaulted)
	out.Findings = slices.Clone(r.Findings)
	if math.IsNaN(t) || t >= r.DurationS || !(r.StepS > 0) {
		return deepCopy(&out, r)
	}
	// A hair of tolerance: steps are sums of float seconds.
	const eps = 1e-9
	steps := math.Floor(max(t, 0)/r.StepS + eps)
	cut := steps * r.StepS
	out.DurationS = cut
	out.Expectations = nil

	out.Timeline = nil
	for _, row := range r.Timeline {
		if row.TS+r.StepS <= cut+eps {
			out.Timeline = append(out.Timeline, row)
		}
	}
	out.State = nil
	for _, s := range r.State {
		out.State = append(out.State, seriesCut(r, s, steps))
	}
	out.Events = nil
	for _, e := range r.Events {
		if e.TS <= cut+eps {
			out.Events = append(out.Events, e)
		}
	}
	out.Faults = nil
	for _, f := range r.Faults {
		if f.StartS < cut {
			f.EndS = min(f.EndS, cut)
			out.Faults = append(out.Faults, f)
		}
	}

	byName := make(map[string]int, len(r.Clients))
	out.Clients = make([]sim.ClientResult, len(r.Clients))
	for i, c := range r.Clients {
		byName[c.Name] = i
		out.Clients[i] = sim.ClientResult{Name: c.Name, Key: c.Key}
	}
	for _, row := range out.Timeline {
		i, ok := byName[row.Client]
		if !ok {
			continue
		}
		c := &out.Clients[i]
		c.Counts.Add(row.Counts)
		c.Retries += row.Retries
		c.RetriesAllowed += row.RetriesAllowed
	}
	out.Requests = 0
	byKey := make(map[string]int, len(r.Keys))
	out.Keys = make([]sim.KeyResult, len(r.Keys))
	for i, k := range r.Keys {
		byKey[k.Key] = i
		out.Keys[i] = sim.KeyResult{Key: k.Key}
	}
	for _, c := range out.Clients {
		out.Requests += c.Sent
		i, ok := byKey[c.Key]
		if !ok {
			continue
		}
		k := &out.Keys[i]
		k.Clients++
		k.Counts.Add(c.Counts)
	}
	return &out
}

// seriesCut is s with the samples taken by the end of r's first steps
// steps, sharing no array with it.
func seriesCut(r *sim.Result, s sim.StateSeries, steps float64) sim.StateSeries {
	const eps = 1e-9 // as Truncate's
	cut := steps * r.StepS
	n := min(len(s.TS), len(s.Remaining))
	keep := 0
	for keep < n && s.TS[keep] <= cut+eps {
		keep++
	}
	kept := seriesCopy(s, keep)
	if r.TimelineSparse && keep > 0 && keep < n && s.TS[keep-1] < cut-eps {
		// A sparse series' point holds until the next: the one kept last
		// held through the cut, whose step's end is the cut series' last
		// point (a sparse series keeps its last).
		kept.TS = append(kept.TS, stepEnd(r, steps))
		kept.Remaining = append(kept.Remaining, s.Remaining[keep-1])
	}
	return kept
}

// stepEnd is the instant the first steps steps of r end, in seconds as a
// run writes it: whole microseconds over a million (sim's seconds), so
// that it is the same float as the samples of that step.
func stepEnd(r *sim.Result, steps float64) float64 {
	stepLen := int64(math.Round(r.StepS * 1e6))
	return float64(int64(steps)*stepLen) / 1e6
}

// deepCopy fills out's slices with copies of r's, so that the copy of a
// result Truncate returns whole shares nothing with it either.
func deepCopy(out, r *sim.Result) *sim.Result {
	out.Clients = slices.Clone(r.Clients)
	out.Keys = slices.Clone(r.Keys)
	out.Timeline = slices.Clone(r.Timeline)
	out.Faults = slices.Clone(r.Faults)
	out.Events = slices.Clone(r.Events)
	out.Expectations = slices.Clone(r.Expectations)
	out.ZeroRemaining = slices.Clone(r.ZeroRemaining)
	out.State = nil
	for _, s := range r.State {
		out.State = append(out.State, seriesCopy(s, min(len(s.TS), len(s.Remaining))))
	}
	return out
}

// seriesCopy is s with its first n points, sharing no array with it: every
// other field as it is (a key's several limits each name theirs, Limit,
// which a copy of the key and copy alone lost).
func seriesCopy(s sim.StateSeries, n int) sim.StateSeries {
	s.TS, s.Remaining = slices.Clone(s.TS[:n]), slices.Clone(s.Remaining[:n])
	return s
}
