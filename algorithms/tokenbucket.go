package algorithms

import (
	"math/bits"

	"github.com/ratelim/ratelim/algorithms/internal/exact"
)

// TokenBucket is the classic bucket of tokens: it holds at most Burst tokens,
// gains Rate tokens per second, and a request of cost c passes if it can take
// c tokens out. Two numbers configure it: Burst is how many requests may
// arrive at once after a quiet spell, Rate is what may pass forever after.
// Over any interval of length t it admits at most Burst + Rate × t.
//
// Nothing ticks. The refill is lazy: the state holds the tokens and the time
// they were counted, and the next request adds what the elapsed time earned,
// capped at Burst. Deciding is one read-modify-write, which is why the
// bucket lives happily in one Redis key behind a Lua script.
//
// It protects against sustained overload while letting a client's natural
// burstiness through. Its flaw is the other side of that: every time the
// bucket has refilled, a client may fire Burst requests at once, so a
// backend must be sized for the burst, not the rate.
//
// State: T is when the tokens were last counted (µs) and N is the deficit,
// how far the bucket is below full, in units where one token is Rate.Per in
// microseconds and one microsecond refills Rate.N units. Counting the deficit
// rather than the tokens makes the zero State a full bucket; counting in
// those units makes every refill exact integer arithmetic.
//
// The zero TokenBucket holds no tokens and earns none, as x/time/rate's zero
// Limiter: it refuses every request of positive cost, with Limit 0,
// Remaining 0 and RetryAfter [Never], and lets a peek (cost 0) through,
// admitting nothing. Build a working one with [NewTokenBucket].
type TokenBucket struct {
	rate     Rate
	burst    int64
	per      int64 // µs per Rate.N tokens: one token's worth of units
	capacity int64 // burst × per
}

// NewTokenBucket returns a token bucket that holds burst tokens and refills
// at rate.
func NewTokenBucket(rate Rate, burst int64) (*TokenBucket, error) {
	per, err := RateMicros(rate)
	if err != nil {
		return nil, err
	}
	if err := CheckBurst(burst, per); err != nil {
		return nil, err
	}
	return &TokenBucket{rate: rate, burst: burst, per: per, capacity: burst * per}, nil
}

// Name returns "token-bucket".
func (b *TokenBucket) Name() string { return "token-bucket" }

// Params returns the rate and burst.
func (b *TokenBucket) Params() Params { return Params{Rate: b.rate, Burst: b.burst} }

// Step takes cost tokens from the bucket if it holds them.
func (b *TokenBucket) Step(prev State, now Time, cost int64) (State, Decision) {
	if b.per == 0 { // the zero value: NewTokenBucket never builds a period below 1µs
		return Unbuilt(prev, cost)
	}
	st := State{T: prev.T, N: prev.N}
	d := b.StepInPlace(&st, now, cost)
	return st, d
}

// StepInPlace is Step for a caller that owns st: it decides as Step does
// and moves st on where it lies, without copying a State in and out (what
// a simulator's exact limiter, stepped once per request, is spared).
func (b *TokenBucket) StepInPlace(st *State, now Time, cost int64) Decision {
	allowed := b.Admit(st, now, cost)
	return b.DecisionAfter(*st, now, cost, allowed)
}

// Admit is StepInPlace for a caller that needs only the verdict: it moves
// st on exactly as StepInPlace does and skips the divisions that fill in
// the rest of a Decision (a simulator's exact limiter reads nothing else,
// and a rejection's Retry-After matters only to a client that honours
// it). [TokenBucket.DecisionAfter] gives the whole Decision afterwards.
func (b *TokenBucket) Admit(st *State, now Time, cost int64) bool {
	if b.per == 0 {
		_, d := Unbuilt(*st, cost)
		return d.Allowed
	}
	cost = CleanCost(cost)
	if elapsed := int64(now) - st.T; elapsed > 0 {
		// A clock that went backwards (elapsed < 0) earns nothing and
		// leaves T where it was, so the bucket never refills twice.
		st.N = refill(st.N, elapsed, b.rate.N)
		st.T = int64(now)
	}
	if cost > b.burst {
		return false
	}
	if need := cost * b.per; st.N+need <= b.capacity {
		st.N += need
		return true
	}
	return false
}

// Charge counts a request of cost at now as admitted ([Charger]): it
// refills the bucket as Step does, then takes cost tokens whether the
// bucket holds them or not. Counted beyond capacity, the deficit exceeds
// the bucket's size: the bucket then holds fewer than no tokens, and
// refuses every request, a peek included, until it has refilled the
// excess and the tokens a request asks for. A now before the state's T
// (a server's push that arrived after a later one) is counted at T: the
// bucket never refills backwards, and the deficit grows by cost tokens
// all the same. The deficit saturates at capacity + 2^50 units.
func (b *TokenBucket) Charge(prev State, now Time, cost int64) State {
	if b.per == 0 {
		return prev
	}
	st := State{T: prev.T, N: prev.N}
	b.ChargeInPlace(&st, now, cost)
	return st
}

// ChargeInPlace is Charge for a caller that owns st ([Charger]).
func (b *TokenBucket) ChargeInPlace(st *State, now Time, cost int64) {
	if b.per == 0 {
		return
	}
	if elapsed := int64(now) - st.T; elapsed > 0 {
		st.N = refill(st.N, elapsed, b.rate.N)
		st.T = int64(now)
	}
	ceiling := b.capacity + excessMax
	st.N = addSat(st.N, mulSat(CleanCost(cost), b.per, ceiling), ceiling)
	onlyTN(st)
}

// DecisionAfter is the Decision of the step that left st: the one
// StepInPlace would have returned for a request of cost at now, given the
// verdict Admit returned. Everything it reports is a function of the state
// after the step, which is why it can come later, and only when asked.
func (b *TokenBucket) DecisionAfter(st State, now Time, cost int64, allowed bool) Decision {
	if b.per == 0 {
		_, d := Unbuilt(st, cost)
		return d
	}
	cost = CleanCost(cost)
	// behind is how far now trails the state's time when the clock went
	// backwards; waits are measured from there, where the deficit was
	// counted.
	behind := max(st.T-int64(now), 0)
	d := Decision{Limit: b.burst, Allowed: allowed}
	// A charged bucket ([TokenBucket.Charge]) may be below empty: no room,
	// not negative room.
	d.Remaining = max((b.capacity-st.N)/b.per, 0)
	d.ResetAfter = exact.Micros(behind + ceilDiv(st.N, b.rate.N))
	switch {
	case allowed:
	case cost > b.burst:
		d.RetryAfter = Never
	default:
		d.RetryAfter = exact.Micros(behind + ceilDiv(st.N+cost*b.per-b.capacity, b.rate.N))
	}
	return d
}

// refill returns the deficit left after elapsed µs at n units per µs,
// without computing elapsed × n when it would overflow: an idle key's first
// request after days on a Unix clock has an elapsed of 10^11 µs or more.
//
// elapsed × n ≥ deficit is tested as a 128-bit product, one multiplication
// where a division used to be: this runs twice per simulated request.
func refill(deficit, elapsed, n int64) int64 {
	if deficit <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(elapsed), uint64(n))
	if hi != 0 || lo >= uint64(deficit) {
		return 0
	}
	return deficit - int64(lo)
}
