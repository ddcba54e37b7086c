package algorithms

import (
	"math"

	"github.com/ratelim/ratelim/algorithms/internal/exact"
)

// Charger is an algorithm that can count a request decided elsewhere: a
// key's shared copy in a synced topology (Kong's rate-limiting sync_rate,
// gubernator's GLOBAL behaviour), where each server decides on a local copy
// of the key's State and, every sync interval, pushes the admissions it made
// since its last push. The shared copy must count every one of them, even
// those it would itself have refused, because they have already passed:
// Kong does INCRBY key delta, unconditionally.
//
// Counting beyond capacity leaves a State over its limit, which [Algorithm]'s
// Step then refuses, a peek included, until the excess has drained: each
// algorithm's Charge says what that means for its State. How far beyond is
// bounded: the excess saturates (see each Charge), so that a cost up to
// math.MaxInt64 neither overflows nor makes a state Step cannot read.
type Charger interface {
	// Charge returns prev with a request of cost counted at now as
	// admitted, whether or not Step would have admitted it. Whenever Step
	// admits the request, at a now no earlier than the state's own
	// instant, Charge returns exactly the State Step returns. An earlier
	// now is a push that arrived after a later one, each admission
	// replayed at its own instant: each algorithm's Charge says where it
	// counts, which for the windows and the log is not where Step, taking
	// it for a clock gone backwards, would count it. It is pure: prev
	// is untouched, and the new State never shares prev's Log. A negative
	// cost counts as 0; the zero (unbuilt) algorithm returns prev.
	Charge(prev State, now Time, cost int64) State
	// ChargeInPlace is Charge for a caller that owns st: it leaves in *st
	// exactly the State Charge(*st, now, cost) returns, moving it on where
	// it lies instead of copying a State in and out (a synced key's shared
	// copy, charged with every admission of every push). Like the
	// algorithms' StepInPlace it never writes inside the log it was given,
	// only past its end, so a copy of the State taken before (a Capped
	// one a store handed out) is still the state before: a sliding log
	// appends to st.Log where its capacity allows, and builds a log past
	// the end of it, or in an array of its own, for an instant it inserts
	// before newer ones. A [Multi] charges st.Sub where it lies, as its
	// StepInPlace steps it: a store that hands out copies hands them out
	// Capped.
	ChargeInPlace(st *State, now Time, cost int64)
}

// AsCharger returns alg as a Charger, and reports whether it is one: the six
// exact rate algorithms are; a [Multi] is when every one of its policies'
// algorithms is; [Concurrency], [Shedder] and the peer models (package
// algorithms/peers) are not. A lease cannot be counted without the request
// that will give it back, a shedder's reserves are a decision, not a count,
// and a peer model reproduces its library's step, which has no such
// operation.
//
// Charger has both forms, pure and in place, rather than a second
// interface for the in-place one: every Charger is one of these seven,
// each has both, and a caller holding one (the simulator's synced
// topology) charges in place without asking again.
func AsCharger(alg Algorithm) (Charger, bool) {
	switch a := alg.(type) {
	case *Multi:
		if !a.charges() {
			return nil, false
		}
		return a, true
	case Charger:
		return a, true
	}
	return nil, false
}

// onlyTN clears what a bucket's state does not hold, Prev, Log and Sub,
// as the bucket's Charge, which returns State{T, N}, does. A state the
// bucket built holds none of them and is not written.
func onlyTN(st *State) {
	if st.Prev != 0 || st.Log != nil || st.Sub != nil {
		*st = State{T: st.T, N: st.N}
	}
}

// excessMax is how far beyond its capacity a charge may carry a state, in
// the state's own units (a bucket's 1/Rate.N µs; a window's count × its
// length in µs): a state charged further saturates there. It keeps every
// value a step computes from a charged state under 2^52, exact in a double
// as the Lua twins need, with no product that overflows. At its least it
// is 2^50 µs of refill at one unit a microsecond (35 years), or 2^50 / w
// requests beyond a window's limit.
const excessMax = exact.Max

// maxInstant is the latest instant a charge moves a theoretical arrival
// time to (GCRA, the leaky bucket): 2^62 µs, 146,000 years, far from
// overflowing the differences a step takes with any instant of this era.
const maxInstant = 1 << 62

// addSat is a + b for b ≥ 0, saturated at ceiling; an a already past the
// ceiling is kept as it is, never lowered by a charge.
func addSat(a, b, ceiling int64) int64 {
	if a > math.MaxInt64-b {
		return max(a, ceiling)
	}
	return max(a, min(a+b, ceiling))
}

// mulSat is a × b for a ≥ 0 and b ≥ 1, saturated at ceiling ≥ 0.
func mulSat(a, b, ceiling int64) int64 {
	if a > ceiling/b {
		return ceiling
	}
	return min(a*b, ceiling)
}
