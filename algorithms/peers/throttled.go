package peers

import (
	"fmt"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/algorithms/internal/exact"
)

// Throttled models github.com/throttled/throttled/v2 v2.15.0's
// GCRARateLimiterCtx (rate.go, RateLimitCtx) over its in-memory store
// (store/memstore), built as
//
//	throttled.NewGCRARateLimiterCtx(store, throttled.RateQuota{
//		MaxRate:  throttled.PerDuration(Rate.N, Rate.Per),
//		MaxBurst: Burst - 1,
//	})
//
// and asked RateLimitCtx(ctx, key, cost). Its capacity, the Limit it
// reports and the most it admits at once from a new key, is MaxBurst + 1:
// the model's Burst is that capacity, so MaxBurst is Burst − 1.
//
// throttled is a GCRA in integer nanoseconds: the emission interval is
// Rate.Per / Rate.N as a time.Duration, truncated (3/s is 333333333 ns, so
// the library runs at 3.000000003/s and admits a request 1 ns in 3 s early;
// 100/m is 600 ms exactly), and the delay variation tolerance is emission ×
// (MaxBurst + 1). The store holds the theoretical arrival time (TAT) as an
// int64 of nanoseconds since the Unix epoch (UnixNano); a key it has not
// got is read as −1 and taken as a TAT of now. A request of quantity q
// pushes the TAT, or now if that is later, by q × emission; it is refused
// if the new TAT less the tolerance is after now. A refused request
// writes nothing; an admitted one compare-and-swaps the new TAT in.
//
// Its quirks are in what it reports, not in what it admits. Remaining is
// (tolerance − ttl) ÷ emission truncated, where ttl is the new TAT less
// now: exact. But a request larger than the capacity (q × emission over
// the tolerance) is refused without ever setting ttl, which is still 0:
// it reports Remaining = Limit and ResetAfter 0, a full bucket, whatever
// the key's state, and RetryAfter −1, "not limited" (here [algorithms.Never]). A peek
// (quantity 0) computes as a request of 1 so as to report when one would
// pass, and then writes the TAT back, max(TAT, now): a new key is created
// by a peek, and a TAT long past moves up to now, which changes no
// decision. The model's Decision says RetryAfter 0 for a peek, as for any
// admitted request, where the library reports that hint. And q × emission
// is a time.Duration product, which wraps: at 10/s a quantity of
// math.MaxInt64 is an increment of −100 ms, admitted, moving the TAT back,
// with Remaining 4 of 3 and ResetAfter −100 ms. The model wraps the same.
//
// Time is the store's: GetWithTime returns the TAT with the store's clock,
// time.Now() in memstore (settable with SetTimeNow), Redis TIME in the
// Redis stores. The model takes it as time.UnixMicro(Origin + now), whose
// UnixNano is (Origin + now) × 1000: the TAT is absolute, so Origin sets
// where the stored nanoseconds lie, though the decisions depend only on
// differences, exactly, within int64 (to the year 2262).
//
// The store's compare-and-swap retry loop (up to 10 attempts, then an
// error) is what a concurrent writer meets; a pure step has none. The
// model is the single-writer decision, and contention is the simulator's
// store's to simulate.
//
// State: the stored TAT, in T's microseconds since Origin (floored) and N,
// which is the nanoseconds beyond them plus 1, so that N = 0 is a key the
// store does not hold (the zero State) and the TAT is exactly
// (Origin + T) × 1000 + N − 1 nanoseconds since the Unix epoch. Prev and Log
// are unused.
//
// The zero Throttled has no emission interval: it refuses every request of
// positive cost with RetryAfter [algorithms.Never] and lets a peek through. Build one
// with [NewThrottled].
type Throttled struct {
	p         algorithms.Params
	emission  int64 // ns: Rate.Per / Rate.N, truncated
	tolerance int64 // ns: emission × Burst (MaxBurst + 1)
	maxQ      int64 // the largest quantity whose increment stays below 2^61 ns
}

// NewThrottled returns a model of throttled's GCRA with capacity p.Burst
// (MaxBurst p.Burst − 1) at p.Rate. It reads Rate, Burst and Origin.
func NewThrottled(p algorithms.Params) (*Throttled, error) {
	per, err := algorithms.RateMicros(p.Rate)
	if err != nil {
		return nil, err
	}
	emission := int64(p.Rate.Per / time.Duration(p.Rate.N))
	if emission <= 0 {
		return nil, &algorithms.ParamError{Param: "rate", Msg: fmt.Sprintf("%s has an emission interval under 1ns, which throttled's PerDuration truncates to 0 (want at most 10^9 a second)", p.Rate)}
	}
	if err := algorithms.CheckBurst(p.Burst, per); err != nil {
		return nil, err
	}
	return &Throttled{
		p:         algorithms.Params{Rate: p.Rate, Burst: p.Burst, Origin: p.Origin},
		emission:  emission,
		tolerance: emission * p.Burst,
		maxQ:      (1 << 61) / emission,
	}, nil
}

// Name returns "throttled".
func (g *Throttled) Name() string { return "throttled" }

// Params returns the rate, burst and origin.
func (g *Throttled) Params() algorithms.Params { return onlyRead(g.p, "burst") }

// fastMicros bounds Origin + now for the int64 path: ±2^52 µs (142 years
// either side of 1970) keeps every nanosecond sum below 2^63.
const fastMicros = 1 << 52

// Step is RateLimitCtx(ctx, key, cost) on a store holding prev, when no
// one else writes the key.
func (g *Throttled) Step(prev algorithms.State, now algorithms.Time, cost int64) (algorithms.State, algorithms.Decision) {
	if g.emission == 0 { // the zero value: NewThrottled never builds an interval of 0
		return algorithms.Unbuilt(prev, cost)
	}
	cost = algorithms.CleanCost(cost)
	at := int64(g.p.Origin) + int64(now)
	q := max(cost, 1) // a peek computes as a request of 1
	tat, exists := g.tat(prev)
	if at < -fastMicros || at > fastMicros || q > g.maxQ ||
		(exists && (tat < -(1<<62) || tat > 1<<62)) {
		return g.stepTime(prev, at, cost)
	}
	nowNs := at * 1000
	if !exists {
		tat = nowNs
	}
	increment := q * g.emission
	base := max(nowNs, tat)
	newTat := base + increment
	var ttl int64
	retry := int64(-1)
	if diff := nowNs - (newTat - g.tolerance); diff < 0 {
		if increment <= g.tolerance {
			retry = -diff
			ttl = tat - nowNs
		}
		if cost != 0 {
			return prev, g.decision(false, ttl, retry)
		}
	}
	if cost == 0 {
		newTat = base
	}
	ttl = newTat - nowNs
	return g.state(newTat), g.decision(true, ttl, retry)
}

// stepTime is Step for instants, TATs or quantities whose nanoseconds might
// not fit an int64: rate.go's own time.Time arithmetic, line for line
// (Add wraps nothing, Sub saturates, UnixNano wraps, Duration products
// wrap), so the model agrees with the library there too.
func (g *Throttled) stepTime(prev algorithms.State, at, cost int64) (algorithms.State, algorithms.Decision) {
	now := time.UnixMicro(at)
	tatVal, exists := g.tat(prev)
	tat := now
	if exists {
		tat = time.Unix(0, tatVal)
	}
	quantity := max(cost, 1)
	emission, tolerance := time.Duration(g.emission), time.Duration(g.tolerance)
	increment := time.Duration(quantity) * emission
	var newTat time.Time
	if now.After(tat) {
		newTat = now.Add(increment)
	} else {
		newTat = tat.Add(increment)
	}
	var ttl time.Duration
	retry := time.Duration(-1)
	allowAt := newTat.Add(-tolerance)
	if diff := now.Sub(allowAt); diff < 0 {
		if increment <= tolerance {
			retry = -diff
			ttl = tat.Sub(now)
		}
		if cost != 0 {
			return prev, g.decision(false, int64(ttl), int64(retry))
		}
	}
	if cost == 0 {
		if now.After(tat) {
			newTat = now
		} else {
			newTat = tat
		}
	}
	ttl = newTat.Sub(now)
	return g.state(newTat.UnixNano()), g.decision(true, int64(ttl), int64(retry))
}

// tat decodes the stored TAT in nanoseconds since the Unix epoch, and
// whether the store holds one.
func (g *Throttled) tat(st algorithms.State) (int64, bool) {
	if st.N == 0 {
		return 0, false
	}
	return (int64(g.p.Origin)+st.T)*1000 + st.N - 1, true
}

// state encodes a TAT in nanoseconds since the Unix epoch.
func (g *Throttled) state(tat int64) algorithms.State {
	return algorithms.State{T: exact.FloorDiv(tat, 1000) - int64(g.p.Origin), N: tat - exact.FloorDiv(tat, 1000)*1000 + 1}
}

// decision is RateLimitCtx's RateLimitResult: Remaining from the tolerance
// left after ttl, ResetAfter = ttl, RetryAfter as set (−1 when it never
// was: Never for a refusal, 0 for an admission).
func (g *Throttled) decision(allowed bool, ttl, retry int64) algorithms.Decision {
	d := algorithms.Decision{Allowed: allowed, Limit: g.p.Burst, ResetAfter: time.Duration(ttl)}
	if next := g.tolerance - ttl; next > -g.emission {
		d.Remaining = next / g.emission
	}
	switch {
	case allowed:
	case retry < 0:
		d.RetryAfter = algorithms.Never
	default:
		d.RetryAfter = time.Duration(retry)
	}
	return d
}
