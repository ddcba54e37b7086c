package sim

// What each step's end samples of the keys' state: only the (key, copy)
// pairs a request reached. A copy no request reached holds the zero
// state, whose room is read once per step for all of them.

import (
	"context"
	"math"
	"slices"

	"github.com/ratelim/ratelim/algorithms"
)

// sampler is what the recorder keeps of the keys' state. pairs are, per
// key, the copies it reached, in copy order; series the state series of
// the pairs kept (Options.StateOf), in the order they were reached,
// flattened into the Result's order (key, copy, limit) by states; fleet
// the load shedder's series. ts are the ends of the steps closed so far,
// every series' TS; zero the zero state's room at each, per limit: the
// points of a series before its copy was reached.
type sampler struct {
	pairs   [][]reachedCopy
	reached []int32 // the keys with a pair, in the order reached
	series  []StateSeries
	fleet   []StateSeries
	ts      []float64
	zero    [algorithms.MaxLimits][]int64
	fresh   []int32 // scratch for the jars' fresh keys
	// keeps says some series may be kept (Options.StateOf keeps a key or
	// the fleet's), asked at the first step's end: without, ts and zero
	// are not kept either (a table's run, at a million steps, 16 MB).
	keeps, asked bool
	// loads counts the states read: in proportion to the pairs reached,
	// never keys × copies (TestEndStepReadsOnlyReachedPairs).
	loads int64
	// lastLoads are the states the last step's end read: its work.
	lastLoads int
	// sampled, if set, is called after each step's end is sampled: a
	// test's way to hold the old full scan beside it.
	sampled func(ctx context.Context, t int64, policies []algorithms.Policy)
}

// reachedCopy is a copy a key reached, and the index in sampler.series
// of its first series (one per limit), -1 if the key's state is not kept.
type reachedCopy struct {
	copy   int32
	series int32
}

// sampleKeys reads the state of every (key, copy) pair a request reached
// at the end of the step ending at t, and the zero state's once for the
// copies no request reached: kept in the state series for the keys
// Options.StateOf chooses, and seen by the copies' widest disagreement
// whether kept or not. policies are the key's several limits (limits, as
// the scenario names them), nil for one.
func (s *sim) sampleKeys(ctx context.Context, t int64, limits []Limit, policies []algorithms.Policy) {
	sm := &s.rec.sample
	perKey := max(len(policies), 1)
	copies := len(s.stores.copies)
	var zero, each [algorithms.MaxLimits]int64
	zeroRoom := remainingOf(s.alg, algorithms.State{}, t, policies, &zero)
	s.reachPairs(limits, perKey)
	if !sm.asked {
		sm.asked = true
		sm.keeps = s.rec.keepState == nil || s.rec.keepState(FleetKey) || slices.ContainsFunc(s.keys, func(k keyRun) bool { return s.rec.keepState(k.name) })
	}
	if sm.keeps {
		sm.ts = append(sm.ts, seconds(t))
		for li := range perKey {
			sm.zero[li] = append(sm.zero[li], zero[li])
		}
	}
	loads := 0
	for _, ki := range sm.reached {
		pairs := sm.pairs[ki]
		lo, hi := int64(math.MaxInt64), int64(-1)
		if len(pairs) < copies {
			lo, hi = zeroRoom, zeroRoom // a copy it never reached
		}
		for _, p := range pairs {
			st, err := s.loadState(ctx, int(p.copy), int(ki))
			loads++
			for li := range perKey {
				each[li] = -1 // unknown: the store did not answer
			}
			if err == nil {
				remaining := remainingOf(s.alg, st, t, policies, &each)
				lo, hi = min(lo, remaining), max(hi, remaining)
			}
			if p.series >= 0 {
				for li := range perKey {
					ser := &sm.series[int(p.series)+li]
					ser.Remaining = append(ser.Remaining, each[li])
				}
			}
		}
		if copies > 1 {
			s.rec.copyGap.see(s.keys[ki].name, int(ki), copies, lo, hi, seconds(t))
		}
	}
	sm.loads += int64(loads)
	sm.lastLoads = loads
	if sm.sampled != nil {
		sm.sampled(ctx, t, policies)
	}
}

// reachPairs takes in the pairs reached since the last step's end: from
// sparse jars, those they reached; from dense jars (a small run's) and a
// store's copies (Redis), every pair, at the first step, as reached, as
// before the sparse jars. Only a key whose state is kept or that has
// several copies is sampled.
func (s *sim) reachPairs(limits []Limit, perKey int) {
	sm := &s.rec.sample
	copies := len(s.stores.copies)
	if sm.pairs == nil {
		sm.pairs = make([][]reachedCopy, len(s.keys))
		if s.stores.jars == nil || s.stores.jars[0].slots == nil {
			for ki := range s.keys {
				for c := range copies {
					s.reachPair(ki, c, limits, perKey)
				}
			}
			return
		}
	}
	for c, j := range s.stores.jars {
		sm.fresh = j.takeFresh(sm.fresh[:0])
		for _, id := range sm.fresh {
			if int(id) < len(s.keys) {
				s.reachPair(int(id), c, limits, perKey)
			}
		}
	}
}

// reachPair adds copy c to key ki's pairs, with its series if kept:
// the zero state's room at every step before this one.
func (s *sim) reachPair(ki, c int, limits []Limit, perKey int) {
	sm := &s.rec.sample
	kept := s.stateKept(ki)
	if !kept && len(s.stores.copies) == 1 {
		return // nothing to keep, and one copy cannot disagree
	}
	p := reachedCopy{copy: int32(c), series: -1}
	if kept {
		p.series = int32(len(sm.series))
		for li := range perKey {
			ser := StateSeries{Key: s.keys[ki].name, Copy: s.stores.names[c],
				Remaining: append(make([]int64, 0, len(sm.ts)+1), sm.zero[li]...)}
			if limits != nil {
				ser.Limit = limits[li].Name
			}
			sm.series = append(sm.series, ser)
		}
	}
	pairs := sm.pairs[ki]
	if len(pairs) == 0 {
		sm.reached = append(sm.reached, int32(ki))
	}
	at, _ := slices.BinarySearchFunc(pairs, p.copy, func(r reachedCopy, c int32) int { return int(r.copy - c) })
	sm.pairs[ki] = slices.Insert(pairs, at, p)
}

// loadState is key ki's state in copy c: a jar's by the key's number,
// a store's by its name.
func (s *sim) loadState(ctx context.Context, c, ki int) (algorithms.State, error) {
	if s.stores.jars != nil {
		return s.stores.jars[c].load(ki), nil
	}
	return s.stores.copies[c].Load(ctx, s.keys[ki].name)
}

// states are the state series so far, in the Result's order: by key, then
// copy, then limit, then the load shedder's; and, when a key kept has a
// copy no request reached (whose series is left out), the zero state's
// room per limit, which every point of such a series would hold.
func (s *sim) states() (out []StateSeries, zero []int64) {
	sm := &s.rec.sample
	out = []StateSeries{}
	if len(sm.ts) == 0 {
		return out, nil
	}
	copies := len(s.stores.copies)
	perKey := 1
	if m, ok := s.alg.(*algorithms.Multi); ok {
		perKey = len(m.Policies())
	}
	absent := false
	for ki := range s.keys {
		if !s.stateKept(ki) {
			continue
		}
		var pairs []reachedCopy
		if sm.pairs != nil {
			pairs = sm.pairs[ki]
		}
		absent = absent || len(pairs) < copies
		for _, p := range pairs {
			for li := range perKey {
				ser := sm.series[int(p.series)+li]
				n := len(ser.Remaining)
				ser.TS, ser.Remaining = sm.ts[:n:n], ser.Remaining[:n:n]
				out = append(out, ser)
			}
		}
	}
	out = append(out, sm.fleet...)
	if absent {
		for li := range perKey {
			zero = append(zero, sm.zero[li][0])
		}
	}
	return out, zero
}

// remainingOf is what state st of alg leaves a microsecond before the step's end
// at t (what the step left, before a window that ends with it resets),
// and each limit's room in each (policies, nil for one limit). For
// several limits it is the room of the key as a whole, the least any of
// its limits has left, as the series in the JSON give it back.
func remainingOf(alg algorithms.Algorithm, st algorithms.State, t int64, policies []algorithms.Policy, each *[algorithms.MaxLimits]int64) int64 {
	if policies == nil {
		_, d := alg.Step(st, algorithms.Time(t-1), 0)
		each[0] = d.Remaining
		return d.Remaining
	}
	remaining := int64(math.MaxInt64)
	for li, p := range policies {
		var sub algorithms.State
		if li < len(st.Sub) {
			sub = st.Sub[li]
		}
		_, d := p.Algorithm.Step(sub, algorithms.Time(t-1), 0)
		each[li] = d.Remaining
		remaining = min(remaining, d.Remaining)
	}
	return remaining
}
