package sim

// Quiet stretches: steps in which nothing happens, closed together.

import (
	"context"
	"slices"

	"github.com/ratelim/ratelim/algorithms"
)

// A week at a millisecond's step is 605 million step ends. Closing each
// alone costs what a step's end costs (its clients' latencies, every
// state series' sample) whether or not anything happened in it, and a
// run with one request a minute would spend its time on the steps in
// between. In a step in which no event is handled no state changes: a
// key's room then only grows (a bucket refills, a window passes, a queue
// drains, a lease expires) up to the zero state's, on a run whose states
// are stamped with the true time (no server's clock skewed ahead), and the series are
// sparse (sampler): a point where the room changed and the latest. So a
// stretch of quiet steps is closed by finding the steps at which a room
// changes (nextChange: galloping, then halving) and sampling only at
// those and at the stretch's last: the same series, the same copies' gap
// (copyGap.see keeps the first instant of the widest spread, which a
// change begins), at a cost in proportion to the changes, not the steps.
//
// TestPropertySampledAsTheFullScan checks it against sampling every step
// of every pair; TestQuietStepsCostTheirChanges its cost.

// quietStretch is the fewest quiet steps closed together. Finding a
// change takes a look or two more than sampling its step would, so a
// stretch whose rooms change at every step costs about twice as many
// reads closed together; 16 steps with no change take 7 looks. Shorter
// stretches are closed one by one.
const quietStretch = 16

// quietSteps is how many steps, from the next to close, end before the
// next event (top: peekEvent's, noArrival when none is left) and by
// until: steps in which nothing happens, closed together only where a
// room cannot shrink while nothing happens. Not on a Redis copy, whose
// state is read over the network and whose keys may expire in real time;
// not in a run with a clock skew on the servers' clocks, where a server
// ahead writes a state stamped in the future: sampled on the true clock,
// a window it wrote into is full until true time reaches it, then not
// (envoy-ratelimit's count in a future window, found by review).
func (s *sim) quietSteps(top *event, until int64) int {
	if s.stores.jars == nil || (len(s.faults.skews) > 0 && s.sc.Topology.Clock != StoreClock) {
		return 0
	}
	end := min(until, top.at-1) // a step ending at the event's instant is left to the loop's order
	c := &s.clock
	if end < c.stepEndAt {
		return 0
	}
	// Step k ends at min((k+1)·stepLen, duration): the last at or before end.
	last := min(int(end/c.stepLen)-1, c.nSteps-1)
	if end >= c.duration {
		last = c.nSteps - 1
	}
	return max(last-c.stepsClosed+1, 0)
}

// closeQuietSteps closes steps first to last, in which nothing happens
// (quietSteps), as endStep would close each, and returns the states it
// read: runUntil's work.
func (s *sim) closeQuietSteps(ctx context.Context, first, last int) int {
	at := func(k int) int64 { return min(int64(k+1)*s.clock.stepLen, s.clock.duration) }
	_, policies := s.sampledLimits()
	perKey := max(len(policies), 1)
	sm := &s.rec.sample
	work := 0
	var zero [algorithms.MaxLimits]int64
	zeroAt := func(k int) ([algorithms.MaxLimits]int64, int64) {
		room := remainingOf(s.alg, algorithms.State{}, at(k), policies, &zero)
		return zero, room
	}
	if sm.keeps {
		walkChanges(first, last, func(k int) any { z, _ := zeroAt(k); return z }, func(k int) {
			z, _ := zeroAt(k)
			s.sampleZero(at(k), &z, perKey)
		})
	}
	sm.steps += last - first + 1
	for i, ki := range sm.reached {
		if i%checkEvery == 0 && ctx.Err() != nil {
			return work // runUntil sees the cancellation next
		}
		key := int(ki)
		rooms := func(k int) any {
			_, zeroRoom := zeroAt(k)
			work += len(sm.pairs[key])
			return s.roomsOf(ctx, key, at(k), policies, zeroRoom)
		}
		walkChanges(first, last, rooms, func(k int) {
			_, zeroRoom := zeroAt(k)
			work += s.sampleKey(ctx, key, at(k), policies, zeroRoom)
		})
	}
	sm.loads += int64(work)
	sm.lastLoads = work
	if s.samplesFleet() {
		walkChanges(first, last, func(k int) any { return s.shed.room(at(k)) }, func(k int) {
			sm.fleet = s.shed.sample(sm.fleet, at(k))
		})
	}
	if sm.sampled != nil {
		for k := first; k <= last; k++ {
			sm.sampled(ctx, at(k), policies)
		}
	}
	if s.rec.progress != nil {
		s.rec.progress(algorithms.Time(at(last)).Duration(), s.sc.Duration)
	}
	return work
}

// roomsOf is what a step's end at t samples of key ki: each copy's room
// by each limit, and the zero state's room when a copy was never
// reached.
func (s *sim) roomsOf(ctx context.Context, ki int, t int64, policies []algorithms.Policy, zeroRoom int64) any {
	pairs := s.rec.sample.pairs[ki]
	rooms := make([]int64, 0, len(pairs)*max(len(policies), 1)+1)
	if len(pairs) < len(s.stores.copies) {
		rooms = append(rooms, zeroRoom)
	}
	var each [algorithms.MaxLimits]int64
	for _, p := range pairs {
		st, _ := s.loadState(ctx, int(p.copy), ki) // a jar answers
		remainingOf(s.alg, st, t, policies, &each)
		rooms = append(rooms, each[:max(len(policies), 1)]...)
	}
	return rooms
}

// walkChanges calls sample with first, with each step after it up to last
// at which what sampled(k) gives differs from the step before, and with
// last: all the steps whose samples a sparse series keeps, when sampled
// changes only as a room that grows does (once it differs from its value
// at a step, it differs at every later one).
func walkChanges(first, last int, sampled func(k int) any, sample func(k int)) {
	k, at := first, sampled(first)
	for {
		sample(k)
		if k == last {
			return
		}
		next, value := nextChange(k, at, last, sampled)
		if next > last {
			sample(last)
			return
		}
		k, at = next, value
	}
}

// nextChange is the first step after k, up to last, at which sampled
// differs from at, its value at k, and that value; last+1 when none does.
// It gallops (k+1, k+2, k+4, ...) until one differs, then halves the gap:
// a room that changes at the next step is found in one look, one that
// holds for a million steps in about forty.
func nextChange(k int, at any, last int, sampled func(k int) any) (int, any) {
	lo, hi := k, -1 // sampled(lo) is at; sampled(hi) differs, and is hiValue
	var hiValue any
	for gap := 1; hi < 0; gap *= 2 {
		probe := min(k+gap, last)
		if v := sampled(probe); !equalSample(v, at) {
			hi, hiValue = probe, v
		} else if probe == last {
			return last + 1, nil
		} else {
			lo = probe
		}
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if v := sampled(mid); equalSample(v, at) {
			lo = mid
		} else {
			hi, hiValue = mid, v
		}
	}
	return hi, hiValue
}

// equalSample reports whether two samples (a []int64 of rooms, an array of
// a limit's rooms, or one room) are the same.
func equalSample(a, b any) bool {
	if x, ok := a.([]int64); ok {
		return slices.Equal(x, b.([]int64))
	}
	return a == b
}
