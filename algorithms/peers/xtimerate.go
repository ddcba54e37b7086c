package peers

import (
	"math"
	"time"

	"github.com/ratelim/ratelim/algorithms"
)

// XTimeRate models golang.org/x/time/rate v0.16.0, the token bucket in the
// Go team's extended library, as a caller who drops what it refuses uses
// it: one *rate.Limiter per key, built as rate.NewLimiter(Rate in events
// per second, Burst) and asked lim.AllowN(t, cost) with t =
// time.UnixMicro(Origin + now). It reproduces rate.go's reserveN (with a
// maximum wait of 0, as AllowN calls it), advance, tokensFromDuration and
// durationFromTokens.
//
// The limiter keeps its tokens as a float64 and the instant they were
// counted, last, as a time.Time. advance adds elapsed.Seconds() × limit
// (limit = Rate.N / Rate.Per.Seconds(), a float: 3/s is 3, 100/m is
// 1.6666666666666667) and caps at Burst; a time before last earns nothing.
// A request of n passes if n ≤ Burst and the tokens left, tokens − n, are
// not short by a whole nanosecond's worth: durationFromTokens converts the
// shortfall to a time.Duration by truncation, so a shortfall under 1 ns
// (limit × 10⁻⁹ tokens, which float rounding produces) is a wait of 0 and
// the request passes, leaving the tokens a hair below zero. A refused
// request writes nothing; an admitted one writes tokens − n and last = t.
//
// Its quirk is that last = t is written even when t is before last. A
// clock that steps back, then forward again, refills the stretch it
// stepped back over a second time: at 1/s with Burst 2, a request at 10 s,
// one at 9.1 s (the clock stepped back 1 s, 0.1 s later in real time) and
// one at 10.1 s are all admitted, where the exact [algorithms.TokenBucket], which
// keeps the latest instant, refuses the third: only 0.1 s of real time has
// earned 0.1 tokens. A forward clock loses only rounding: Remaining is the
// floor of a float, so tokens of 0.9999999999999999 where the fraction
// would give 1 report Remaining 0 for a request that then passes.
//
// Decision, as the library would report it: Allowed is AllowN; Remaining
// is ⌊TokensAt(t)⌋ after the step, at least 0; RetryAfter, for a refused
// request, is ReserveN(t, n).DelayFrom(t), the shortfall at the
// limiter's rate in whole nanoseconds ([algorithms.Never] when n > Burst, which
// ReserveN refuses outright); ResetAfter is ReserveN(t, Burst).DelayFrom(t)
// on the state after the step, when the library would grant a whole
// bucket. A clock behind last is measured from t, as the library does.
// All are in nanoseconds, not rounded to the microsecond.
//
// A cost of 0 peeks with TokensAt(t) and writes nothing. AllowN(t, 0)
// would also write last = t, which on a clock gone backwards moves last
// back and earns the stretch again; a peek must not change what a later
// request gets, so the model does not.
//
// State: T is last in microseconds (now, not Origin + now: the library
// only subtracts instants, exactly, in nanoseconds, so Origin changes
// nothing unless Origin + now overflows) and N is the tokens' float64 bits
// XOR Burst's, so that the zero State holds Burst tokens: a full bucket,
// which is what a new Limiter, whose last is the zero time.Time, also has
// at any instant. Prev and Log are unused.
//
// The zero XTimeRate, like rate's zero Limiter, refuses every request of
// positive cost (here with RetryAfter [algorithms.Never], as [algorithms.TokenBucket]'s does);
// build one with [NewXTimeRate].
type XTimeRate struct {
	p     algorithms.Params
	limit float64 // rate.Limit: events per second
	burst float64
}

// NewXTimeRate returns a model of rate.NewLimiter(p.Rate per second,
// p.Burst) driven by AllowN. It reads Rate, Burst and Origin.
func NewXTimeRate(p algorithms.Params) (*XTimeRate, error) {
	per, err := algorithms.RateMicros(p.Rate)
	if err != nil {
		return nil, err
	}
	if err := algorithms.CheckBurst(p.Burst, per); err != nil {
		return nil, err
	}
	return &XTimeRate{
		p:     algorithms.Params{Rate: p.Rate, Burst: p.Burst, Origin: p.Origin},
		limit: p.Rate.PerSecond(),
		burst: float64(p.Burst),
	}, nil
}

// Name returns "x-time-rate".
func (x *XTimeRate) Name() string { return "x-time-rate" }

// Params returns the rate, burst and origin.
func (x *XTimeRate) Params() algorithms.Params { return onlyRead(x.p, "burst") }

// Step is lim.AllowN(t, cost) on the limiter prev describes.
func (x *XTimeRate) Step(prev algorithms.State, now algorithms.Time, cost int64) (algorithms.State, algorithms.Decision) {
	if x.limit == 0 { // the zero value: NewXTimeRate never builds a rate of 0
		return algorithms.Unbuilt(prev, cost)
	}
	cost = algorithms.CleanCost(cost)
	tokens := x.advance(prev, now)
	d := algorithms.Decision{Limit: x.p.Burst}
	if cost == 0 {
		d.Allowed = true
		d.Remaining = x.floor(tokens)
		d.ResetAfter = x.wait(tokens, x.burst)
		return prev, d
	}
	// reserveN: tokens -= float64(n), then the wait for the shortfall.
	left := tokens - float64(cost)
	var wait time.Duration
	if left < 0 {
		wait = x.durationFromTokens(-left)
	}
	if cost <= x.p.Burst && wait <= 0 {
		d.Allowed = true
		// TokensAt(t) with last = t adds 0 × limit: left itself.
		d.Remaining = x.floor(left)
		d.ResetAfter = x.wait(left, x.burst)
		return algorithms.State{T: int64(now), N: int64(math.Float64bits(left) ^ math.Float64bits(x.burst))}, d
	}
	d.Remaining = x.floor(tokens)
	d.RetryAfter = algorithms.Never
	if cost <= x.p.Burst {
		d.RetryAfter = wait
	}
	d.ResetAfter = x.wait(tokens, x.burst)
	return prev, d
}

// advance is rate.go's advance: the tokens prev holds at now.
func (x *XTimeRate) advance(prev algorithms.State, now algorithms.Time) float64 {
	tokens := math.Float64frombits(uint64(prev.N) ^ math.Float64bits(x.burst))
	// t.Sub(last) of time.UnixMicro(Origin+now) and time.UnixMicro(Origin+T):
	// whole microseconds in nanoseconds, saturating; 0 when t is before last.
	t, last := int64(x.p.Origin)+int64(now), int64(x.p.Origin)+prev.T
	var elapsed time.Duration
	if t > last {
		if us := uint64(t) - uint64(last); us > math.MaxInt64/1000 {
			elapsed = math.MaxInt64
		} else {
			elapsed = time.Duration(us) * time.Microsecond
		}
	}
	tokens += elapsed.Seconds() * x.limit // tokensFromDuration
	if tokens > x.burst {
		tokens = x.burst
	}
	return tokens
}

// wait is ReserveN(t, n).DelayFrom(t) for a limiter holding tokens at t.
func (x *XTimeRate) wait(tokens, n float64) time.Duration {
	if left := tokens - n; left < 0 {
		return x.durationFromTokens(-left)
	}
	return 0
}

// durationFromTokens is rate.go's: the time to earn tokens, truncated to the
// nanosecond, InfDuration (= [algorithms.Never]) past the largest Duration.
func (x *XTimeRate) durationFromTokens(tokens float64) time.Duration {
	duration := (tokens / x.limit) * float64(time.Second)
	if duration > float64(math.MaxInt64) {
		return algorithms.Never
	}
	return time.Duration(duration)
}

// floor is ⌊tokens⌋ as a Remaining: at least 0, for tokens left a hair
// below zero.
func (x *XTimeRate) floor(tokens float64) int64 {
	return max(int64(math.Floor(tokens)), 0)
}
