package sim

// What each step's end samples of the keys' state: only the (key, copy)
// pairs a request reached. A copy no request reached holds the zero
// state, whose room is read once per step for all of them.

import (
	"context"
	"math"
	"math/bits"
	"slices"

	"github.com/ratelim/ratelim/algorithms"
)

// sampler is what the recorder keeps of the keys' state. pairs are, per
// key, the copies it reached, in copy order; series the state series of
// the pairs kept (Options.StateOf), in the order they were reached,
// flattened into the Result's order (key, copy, limit) by states; fleet
// the load shedder's series. zero is the zero state's room at each step's
// end, per limit: the points of a series before its copy was reached.
//
// Every series is kept sparse as it is sampled (addPoint): a point only
// where the room changed, and the latest. Two hours at a millisecond's
// step are 7.2 million step ends; a key whose room stays full through
// them is two points, not 7.2 million (and a shared column of 7.2
// million instants): what the Result's sparse series hold anyway
// (StateSeries.Sparse), made without the dense ones first.
type sampler struct {
	pairs   [][]reachedCopy
	reached []int32 // the keys with a pair, in the order reached
	series  []StateSeries
	fleet   []StateSeries
	zero    [algorithms.MaxLimits]StateSeries
	fresh   []int32 // scratch for the jars' fresh keys
	// keeps says some series may be kept (Options.StateOf keeps a key or
	// the fleet's), asked at the first step's end: without, zero is not
	// kept either.
	keeps, asked bool
	// steps counts the step ends sampled.
	steps int
	// loads counts the states read: in proportion to the pairs reached,
	// never keys × copies (TestEndStepReadsOnlyReachedPairs).
	loads int64
	// lastLoads are the states the last step's end read: its work.
	lastLoads int
	// decidedAt is when each (key, copy) pair first admitted a request
	// itself during a partition, where copies also take writes from
	// another (a split brain, a cluster): from then on the copy counts
	// for itself, and only such copies are compared (copyGap). Made at
	// the first such admission.
	decidedAt map[[2]int32]int64
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
	var zero [algorithms.MaxLimits]int64
	zeroRoom := remainingOf(s.alg, algorithms.State{}, t, policies, &zero)
	s.reachPairs(limits, perKey)
	if !sm.asked {
		sm.asked = true
		sm.keeps = s.rec.keepState == nil || s.rec.keepState(FleetKey) || slices.ContainsFunc(s.keys, func(k keyRun) bool { return s.rec.keepState(k.name) })
	}
	if sm.keeps {
		s.sampleZero(t, &zero, perKey)
	}
	sm.steps++
	loads := 0
	for _, ki := range sm.reached {
		loads += s.sampleKey(ctx, int(ki), t, policies, zeroRoom)
	}
	sm.loads += int64(loads)
	sm.lastLoads = loads
	if sm.sampled != nil {
		sm.sampled(ctx, t, policies)
	}
}

// sampleZero adds the zero state's room at t, each limit's (zero), to its
// series.
func (s *sim) sampleZero(t int64, zero *[algorithms.MaxLimits]int64, perKey int) {
	for li := range perKey {
		s.rec.sample.zero[li].addPoint(seconds(t), zero[li])
	}
}

// sampleKey reads key ki's state in every copy it reached at the step's
// end t: its room, each limit's, added to the key's series kept, and the
// spread of its copies' (a copy never reached holds zeroRoom) seen by the
// copies' widest disagreement. It returns the states it read.
func (s *sim) sampleKey(ctx context.Context, ki int, t int64, policies []algorithms.Policy, zeroRoom int64) int {
	sm := &s.rec.sample
	perKey := max(len(policies), 1)
	var each [algorithms.MaxLimits]int64
	pairs := sm.pairs[ki]
	lo, hi := int64(math.MaxInt64), int64(-1)
	// The copies that may hold the key: every copy, but a cluster's
	// shard's nodes alone.
	_, copies := s.copiesOfKey(ki)
	compared := copies
	if s.stores.replicates {
		// Only the copies that took writes themselves can have counted
		// apart: a replica that only followed its master trails it.
		compared = bits.OnesCount8(s.keys[ki].decided)
	} else if len(pairs) < copies {
		lo, hi = zeroRoom, zeroRoom // a copy it never reached
	}
	for _, p := range pairs {
		st, err := s.loadState(ctx, int(p.copy), ki)
		for li := range perKey {
			each[li] = -1 // unknown: the store did not answer
		}
		if err == nil {
			remaining := remainingOf(s.alg, st, t, policies, &each)
			if !s.stores.replicates || s.keys[ki].decided&(1<<s.copyInShard(int(p.copy))) != 0 {
				lo, hi = min(lo, remaining), max(hi, remaining)
			}
		}
		if p.series >= 0 {
			for li := range perKey {
				sm.series[int(p.series)+li].addPoint(seconds(t), each[li])
			}
		}
	}
	if compared > 1 {
		s.rec.copyGap.see(s.keys[ki].name, ki, compared, lo, hi, seconds(t))
	}
	return len(pairs)
}

// reachPairs takes in the pairs reached since the last step's end: from
// sparse jars, those they reached; from dense jars (a small run's) and a
// store's copies (Redis), every pair, at the first step, as reached, as
// before the sparse jars. Only a key whose state is kept or that has
// several copies is sampled.
func (s *sim) reachPairs(limits []Limit, perKey int) {
	sm := &s.rec.sample
	if sm.pairs == nil {
		sm.pairs = make([][]reachedCopy, len(s.keys))
		if s.stores.jars == nil || s.stores.jars[0].slots == nil {
			for ki := range s.keys {
				first, n := s.copiesOfKey(ki)
				for c := first; c < first+n; c++ {
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

// copiesOfKey are the copies that may hold key ki's state, from first, n
// of them: every copy, but on a cluster its shard's nodes only.
func (s *sim) copiesOfKey(ki int) (first, n int) {
	if s.stores.cluster == nil {
		return 0, len(s.stores.copies) // a replay of observations has no topology
	}
	return s.topo.ShardCopies(s.shardOfKey(ki))
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
			z := &sm.zero[li]
			ser := StateSeries{Key: s.keys[ki].name, Copy: s.stores.names[c],
				TS: slices.Clone(z.TS), Remaining: slices.Clone(z.Remaining)}
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
// room per limit, which every point of such a series would hold. The
// series are sparse (sampler), and copies unless release says this is
// their last use: a later sample may move a series' latest point, which a
// Result already given must not see.
func (s *sim) states(release bool) (out []StateSeries, zero []int64) {
	sm := &s.rec.sample
	out = []StateSeries{}
	if sm.steps == 0 || !sm.keeps {
		return out, nil
	}
	own := func(ser StateSeries) StateSeries {
		if !release {
			ser.TS, ser.Remaining = slices.Clone(ser.TS), slices.Clone(ser.Remaining)
		}
		return ser
	}
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
		absent = absent || len(pairs) < len(s.stores.copies)
		for _, p := range pairs {
			for li := range perKey {
				ser := own(sm.series[int(p.series)+li])
				if at, ok := sm.decidedAt[[2]int32{int32(ki), p.copy}]; ok {
					from := seconds(at)
					ser.DecidedFromS = &from
				}
				out = append(out, ser)
			}
		}
	}
	for _, ser := range sm.fleet {
		out = append(out, own(ser))
	}
	if absent {
		for li := range perKey {
			zero = append(zero, sm.zero[li].Remaining[0])
		}
	}
	return out, zero
}

// addPoint samples room at ts, the step's end after the series' latest
// point, keeping the series sparse: a point is kept when it is the first,
// the latest, or differs from the one before. The latest point, when it
// repeats the one before it, was kept only for being the latest: the new
// point takes its place. The series is then what StateSeries.Sparse
// makes of every point sampled.
func (ser *StateSeries) addPoint(ts float64, room int64) {
	n := len(ser.Remaining)
	if n >= 2 && ser.Remaining[n-1] == ser.Remaining[n-2] {
		ser.TS[n-1], ser.Remaining[n-1] = ts, room
		return
	}
	ser.TS = append(ser.TS, ts)
	ser.Remaining = append(ser.Remaining, room)
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

// markDecided notes that copy admitted a request of key ki itself at t,
// during a partition, on a topology whose copies also take writes from
// another.
func (s *sim) markDecided(ki, copy int, t int64) {
	bit := uint8(1) << s.copyInShard(copy)
	if s.keys[ki].decided&bit != 0 {
		return
	}
	s.keys[ki].decided |= bit
	sm := &s.rec.sample
	if sm.decidedAt == nil {
		sm.decidedAt = map[[2]int32]int64{}
	}
	sm.decidedAt[[2]int32{int32(ki), int32(copy)}] = t
}
