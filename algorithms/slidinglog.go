package algorithms

import (
	"slices"
	"sort"
	"time"

	"github.com/ratelim/ratelim/algorithms/internal/exact"
)

// SlidingLog remembers the instant of every admitted request for one Window
// and admits a request if fewer than Limit = Rate × Window are remembered:
// a request at t passes if fewer than Limit were admitted in (t − Window, t].
// It is exact, the limiter the others are measured against (the simulator's
// ideal_allowed is a sliding log): there is no instant and no window of that
// length in which it admits more than Limit.
//
// Its flaw is cost: one timestamp per admitted request, so memory and work
// grow with the limit (a ZSET or list of thousands of entries per key in
// Redis, for a limit of thousands per minute). Rejected requests are not
// logged, so a client hammering a full log does not make it grow.
//
// State: Log holds the admitted instants, oldest first, one entry per unit
// of cost; it never holds more than Limit. A clock that goes backwards logs
// the request at the newest instant already logged, so the log stays sorted
// and entries never expire early.
//
// The zero SlidingLog has a window of no length and a limit of 0: it refuses
// every request of positive cost, with Limit 0, Remaining 0 and RetryAfter
// [Never], and lets a peek (cost 0) through, admitting nothing. Build a
// working one with [NewSlidingLog].
type SlidingLog struct {
	rate   Rate
	window time.Duration
	w      int64
	limit  int64
}

// NewSlidingLog returns a sliding log admitting rate × window requests in any
// window of that length.
func NewSlidingLog(rate Rate, window time.Duration) (*SlidingLog, error) {
	w, limit, err := WindowLimit(rate, window)
	if err != nil {
		return nil, err
	}
	return &SlidingLog{rate: rate, window: window, w: w, limit: limit}, nil
}

// Name returns "sliding-log".
func (l *SlidingLog) Name() string { return "sliding-log" }

// Params returns the rate and window.
func (l *SlidingLog) Params() Params { return Params{Rate: l.rate, Window: l.window} }

// Limit returns the requests admitted per window.
func (l *SlidingLog) Limit() int64 { return l.limit }

// Step forgets the instants that left the window and logs the request if
// what remains leaves room. It never writes into prev's log: an admitted
// request copies it, O(Limit), so that prev stays valid for whoever holds
// it (a racy store's second reader).
func (l *SlidingLog) Step(prev State, now Time, cost int64) (State, Decision) {
	return l.step(prev, now, cost, false)
}

// StepInPlace is Step for a caller that owns st and never reads an
// earlier state again: it decides as Step does, but appends to st's log
// where it lies and lets expired entries fall off its front, so a request
// costs O(log Limit + cost) amortized instead of a copy of the log.
func (l *SlidingLog) StepInPlace(st *State, now Time, cost int64) Decision {
	next, d := l.step(*st, now, cost, true)
	*st = next
	return d
}

func (l *SlidingLog) step(prev State, now Time, cost int64, inPlace bool) (State, Decision) {
	if l.w == 0 { // the zero value: WindowLimit never builds a window below 1µs
		return Unbuilt(prev, cost)
	}
	cost = CleanCost(cost)
	cutoff := int64(now) - l.w // entries at or before cutoff have left the window
	expired := sort.Search(len(prev.Log), func(i int) bool { return prev.Log[i] > cutoff })
	live := prev.Log[expired:]
	d := Decision{Limit: l.limit}
	// cost > limit first: a cost near math.MaxInt64 would overflow the
	// sum and pass, then log that many entries. A charged log
	// ([SlidingLog.Charge]) may hold more than the limit: no room, not
	// negative room.
	if cost > l.limit || int64(len(live))+cost > l.limit {
		d.Remaining = max(l.limit-int64(len(live)), 0)
		d.RetryAfter = Never
		if cost <= l.limit {
			// The request fits once enough of the oldest entries leave.
			leave := int64(len(live)) + cost - l.limit
			d.RetryAfter = exact.Micros(live[leave-1] + l.w - int64(now))
		}
		if len(live) == 0 {
			return State{}, d
		}
		d.ResetAfter = exact.Micros(live[len(live)-1] + l.w - int64(now))
		if inPlace {
			return State{Log: live}, d
		}
		// The three-index slice keeps a later append from writing into
		// prev's backing array.
		return State{Log: live[:len(live):len(live)]}, d
	}
	if cost == 0 && len(live) == 0 {
		d.Allowed, d.Remaining = true, l.limit
		return State{}, d
	}
	at := int64(now)
	if len(live) > 0 {
		at = max(at, live[len(live)-1])
	}
	var log []int64
	if inPlace {
		// Appending past the end reuses the array until it is full, then
		// moves only the live entries: amortized O(1) per entry.
		log = live
	} else {
		log = make([]int64, len(live), len(live)+int(cost))
		copy(log, live)
	}
	for range cost {
		log = append(log, at)
	}
	d.Allowed = true
	d.Remaining = l.limit - int64(len(log))
	if len(log) > 0 {
		d.ResetAfter = exact.Micros(log[len(log)-1] + l.w - int64(now))
	}
	return State{Log: log}, d
}

// Charge counts a request of cost at now as admitted ([Charger]): it logs
// cost copies of now, as Step does, whether or not the log has room.
// Counted beyond capacity, the log holds more instants than the limit, and
// refuses every request, a peek included, until enough have left the
// window. The instants are inserted in order, so a now before the newest
// instant logged (a push that arrived after a later one) is logged at its
// own instant, not moved up to the newest as a clock gone backwards is by
// Step; and whatever Step would forget is forgotten relative to the newest
// instant, the charge's or one already logged.
//
// The log keeps at most Limit + 1 instants, the newest: all a step reads.
// A request of cost c passes when at most Limit − c instants are live,
// which depends only on whether the (Limit − c + 1)th newest has left the
// window; so does its Retry-After. One instant beyond the limit keeps a
// peek refused, as it is on the other algorithms' charged states. A
// charge of any cost thus costs O(Limit), never memory for its cost.
func (l *SlidingLog) Charge(prev State, now Time, cost int64) State {
	if l.w == 0 {
		return prev
	}
	keep := l.limit + 1
	cost = min(CleanCost(cost), keep)
	newest := int64(now)
	if len(prev.Log) > 0 {
		newest = max(newest, prev.Log[len(prev.Log)-1])
	}
	cutoff := newest - l.w // entries at or before cutoff have left the window
	expired := sort.Search(len(prev.Log), func(i int) bool { return prev.Log[i] > cutoff })
	live := prev.Log[expired:]
	if int64(now) <= cutoff {
		cost = 0 // logged, it would be forgotten at once
	}
	if cost == 0 && len(live) == 0 {
		return State{}
	}
	// Where the charge's instants go: after every live instant at or
	// before now, so that equal instants keep their order of arrival.
	at := sort.Search(len(live), func(i int) bool { return live[i] > int64(now) })
	log := make([]int64, 0, min(int64(len(live))+cost, keep))
	// Only the newest keep instants are kept: drop from the front what
	// is beyond them.
	drop := max(int64(len(live))+cost-keep, 0)
	older, newer := live[:at], live[at:]
	skip := min(drop, int64(len(older)))
	log = append(log, older[skip:]...)
	drop -= skip
	for range cost - min(drop, cost) {
		log = append(log, int64(now))
	}
	drop -= min(drop, cost)
	log = append(log, newer[drop:]...)
	return State{Log: log}
}

// ChargeInPlace is Charge for a caller that owns st ([Charger]): the log
// Charge returns, built where st's log lies. A charge at or after every
// instant it keeps appends past the end of st.Log, reusing its array
// until it is full, and lets what is forgotten fall off the front, as
// StepInPlace does: amortized O(log Limit + cost). A charge inserted
// before newer instants (a push that arrived after a later one) cannot
// be written inside the log without changing what a copy taken before
// reads: its log, O(Limit), is built past the end of st.Log when the
// capacity left there holds it, or in an array of its own with as much
// again to spare, for the appends and the insertions that follow.
func (l *SlidingLog) ChargeInPlace(st *State, now Time, cost int64) {
	if l.w == 0 {
		return
	}
	keep := l.limit + 1
	cost = min(CleanCost(cost), keep)
	log := st.Log
	newest := int64(now)
	if len(log) > 0 {
		newest = max(newest, log[len(log)-1])
	}
	cutoff := newest - l.w // entries at or before cutoff have left the window
	expired := sort.Search(len(log), func(i int) bool { return log[i] > cutoff })
	live := log[expired:]
	if int64(now) <= cutoff {
		cost = 0 // logged, it would be forgotten at once
	}
	if cost == 0 && len(live) == 0 {
		*st = State{}
		return
	}
	// Charge's log: older, cost copies of now, newer, less the oldest
	// drop of them beyond keep.
	at := sort.Search(len(live), func(i int) bool { return live[i] > int64(now) })
	drop := max(int64(len(live))+cost-keep, 0)
	older, newer := live[:at], live[at:]
	skip := min(drop, int64(len(older)))
	older = older[skip:]
	drop -= skip
	copies := cost - min(drop, cost)
	drop -= min(drop, cost)
	newer = newer[drop:]
	switch {
	case copies == 0:
		// Nothing inserted: what is kept is the newest of the log.
		log = live[int64(len(live))-int64(len(older)+len(newer)):]
	case len(newer) == 0:
		// older ends where st.Log ends: append past it.
		log = slices.Grow(older, int(copies))
		for range copies {
			log = append(log, int64(now))
		}
	default:
		n := len(older) + int(copies) + len(newer)
		if spare := st.Log[len(st.Log):cap(st.Log)]; len(spare) >= n {
			log = spare[:0]
		} else {
			log = make([]int64, 0, 2*n)
		}
		log = append(log, older...)
		for range copies {
			log = append(log, int64(now))
		}
		log = append(log, newer...)
	}
	*st = State{Log: log}
}
