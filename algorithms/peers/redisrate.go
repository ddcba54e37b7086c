package peers

import (
	"math"
	"strconv"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/algorithms/internal/exact"
)

// RedisRate models github.com/go-redis/redis_rate/v10 v10.0.1, the GCRA
// limiter most Go services put in front of Redis: Limiter.AllowN runs the
// Lua script allowN (lua.go) on the Redis server, which keeps one number
// per key, the theoretical arrival time (TAT), exactly as [algorithms.GCRA] does. The
// difference is the arithmetic. The script works in doubles (Lua's only
// number type) on seconds since 2017-01-01 00:00:00 UTC, read from Redis's
// own clock (TIME, converted as (seconds − 1483228800) + µs / 1000000), and
// the model replays every operation in the script's order on Origin + now:
//
//	emission_interval = period / rate     (period is Limit.Period.Seconds())
//	increment         = emission_interval × cost
//	burst_offset      = emission_interval × burst
//	tat               = max(stored tat or now, now)
//	new_tat           = tat + increment
//	allow_at          = new_tat − burst_offset
//	diff              = now − allow_at
//	remaining         = diff / emission_interval   refused if remaining < 0
//
// The quirk is rounding at ties. Eight or nine years after 2017, now is
// about 2.5e8 to 2.9e8 seconds, where a double's spacing is 2⁻²⁵ s (29.8
// ns, until 2025-07-05, when now passed 2²⁸ s) or 2⁻²⁴ s (59.6 ns, until
// 2034), and an emission interval such as 1/3 s or 0.1 s is not a multiple
// of it: each increment added to the TAT rounds to the grid, the same way
// every time, and five of them minus the burst offset land a few spacings
// away from now. Where they round up, a burst at one instant on a new key
// loses its last request, which the exact GCRA admits: at 3/s with burst 5
// in 2025 the fifth finds diff = −2 × 2⁻²⁵ s and is refused with
// Retry-After 59 ns; in 2026 3/s rounds down and passes, but 10/s, 100/m
// and 7/500ms with burst 5 refuse the fifth (10/s: Retry-After 119 ns). A
// microsecond later it passes. Over random sequences the model refuses,
// never admits, a request the exact GCRA would take, about 1.6 times in a
// thousand (the tests count it), and Remaining, the truncated remaining
// (4.999… → 4), can be one below the exact figure.
//
// The replies are what the script returns: allowed (the cost), remaining
// truncated to an integer by Redis, and retry_after and reset_after as
// strings made by Lua's tostring, which in Redis's Lua 5.1 prints 14
// significant digits (%.14g), parsed back by Go and multiplied into
// nanoseconds (truncated). The model reproduces those digits, so its
// RetryAfter and ResetAfter are the library's to the nanosecond. A refused
// request whose cost is above burst gets a finite Retry-After, (cost −
// burst) emission intervals and more, although it can never pass: the
// library says so, and so does the model (RetryAfter is Never only when
// the figure overflows a Duration). An admitted request's RetryAfter is 0
// (the library's −1). A cost of 0 peeks: the script takes the admitting
// branch unless the clock went back past the burst, and the model says
// Allowed, where the library's Result.Allowed (the admitted cost) is 0.
//
// What the model leaves out: the key's expiry (SET … EX ceil(reset_after)),
// which only forgets a TAT already in the past on Redis's clock, and
// AllowAtMost, the other script.
//
// State: N is the TAT, a double, as math.Float64bits; Prev is 1 once the
// key exists (a TAT of exactly 0.0, 2017-01-01, is a value, not an empty
// key); T is the TAT as an instant on the caller's clock, rounded up to
// the microsecond, for a store to expire the key by. It is derived from N
// and never read. The script writes only when admitting with reset_after >
// 0, so a refusal or a peek returns prev unchanged. A clock that goes back
// leaves the TAT where it is, further ahead of now: it refuses more.
//
// The zero RedisRate refuses every request of positive cost, as the zero
// [algorithms.GCRA] does; build one with [NewRedisRate].
type RedisRate struct {
	p           algorithms.Params
	interval    float64 // emission_interval, seconds
	burstOffset float64 // burst_offset, seconds
	// shortest prints numbers the way gopher-lua does (shortest
	// round-trip), not Lua 5.1's %.14g: the Lua that miniredis runs the
	// script on, for the differential test.
	shortest bool
}

// jan1st2017 is the script's jan_1_2017: 2017-01-01 00:00:00 UTC in Unix
// seconds.
const jan1st2017 = 1483228800

// NewRedisRate returns the model of redis_rate with Limit{Rate: p.Rate.N,
// Period: p.Rate.Per, Burst: p.Burst}, its clock Origin + now.
func NewRedisRate(p algorithms.Params) (*RedisRate, error) {
	per, err := algorithms.RateMicros(p.Rate)
	if err != nil {
		return nil, err
	}
	if err := algorithms.CheckBurst(p.Burst, per); err != nil {
		return nil, err
	}
	// go-redis sends Limit.Period.Seconds() as the shortest decimal that
	// reads back as the same double, rate and burst as integers; Lua's
	// arithmetic on the strings converts them to exactly these doubles.
	interval := p.Rate.Per.Seconds() / float64(p.Rate.N)
	return &RedisRate{
		p:           algorithms.Params{Rate: p.Rate, Burst: p.Burst, Origin: p.Origin},
		interval:    interval,
		burstOffset: interval * float64(p.Burst),
	}, nil
}

// Name returns "redis_rate".
func (r *RedisRate) Name() string { return "redis_rate" }

// Params returns the rate, burst and origin.
func (r *RedisRate) Params() algorithms.Params { return onlyRead(r.p, "burst") }

// Step runs the allowN script's arithmetic on prev's TAT at Origin + now.
func (r *RedisRate) Step(prev algorithms.State, now algorithms.Time, cost int64) (algorithms.State, algorithms.Decision) {
	if r.interval == 0 { // the zero value: NewRedisRate never builds one
		return algorithms.Unbuilt(prev, cost)
	}
	cost = algorithms.CleanCost(cost)
	t := r.luaNow(now)
	tat := t
	if prev.Prev != 0 {
		tat = math.Float64frombits(uint64(prev.N))
	}
	if t > tat { // math.max(tat, now)
		tat = t
	}
	increment := r.interval * float64(cost)
	newTAT := tat + increment
	allowAt := newTAT - r.burstOffset
	diff := t - allowAt
	remaining := diff / r.interval
	d := algorithms.Decision{Limit: r.p.Burst}
	if remaining < 0 {
		d.RetryAfter = r.duration(diff * -1)
		d.ResetAfter = r.duration(tat - t)
		return prev, d
	}
	d.Allowed = true
	d.Remaining = int64(remaining) // Redis truncates a Lua number reply
	reset := newTAT - t
	d.ResetAfter = r.duration(reset)
	if reset > 0 {
		return algorithms.State{T: r.instant(newTAT), N: int64(math.Float64bits(newTAT)), Prev: 1}, d
	}
	return prev, d
}

// luaNow is the script's now: Redis TIME at Origin + now, as seconds since
// 2017. Both terms are exact; their sum is rounded once, as in Lua.
func (r *RedisRate) luaNow(now algorithms.Time) float64 {
	wall := int64(r.p.Origin) + int64(now)
	sec := exact.FloorDiv(wall, 1_000_000)
	us := wall - sec*1_000_000
	return float64(sec-jan1st2017) + float64(us)/1_000_000
}

// instant returns the caller's Time at or just after tat.
func (r *RedisRate) instant(tat float64) int64 {
	us := math.Ceil(tat * 1e6)
	const limit = 1 << 62
	us = max(min(us, limit), -limit)
	return int64(us) + jan1st2017*1_000_000 - int64(r.p.Origin)
}

// duration is what AllowN makes of a seconds figure the script returns:
// tostring(x), parsed by strconv.ParseFloat, times 1e9, truncated. Lua
// 5.1's tostring is %.14g; the result is that of the rounded figure.
func (r *RedisRate) duration(x float64) time.Duration {
	var ns float64
	if r.shortest {
		ns = math.Floor(x * 1e9)
	} else {
		ns = ns14g(x)
	}
	if ns >= 1<<63 {
		return algorithms.Never
	}
	if ns <= 0 {
		return 0
	}
	return time.Duration(ns)
}

// ns14g returns floor(1e9 × x') where x' is x printed to 14 significant
// digits and read back, for x ≥ 0. Rounding to 14 digits moves x by at
// most 5e-14 of itself, so when every value within 1e-13 of x × 1e9 has
// the same floor, that floor is the answer without printing anything.
func ns14g(x float64) float64 {
	y := x * 1e9
	lo, hi := math.Floor(y*(1-1e-13)), math.Floor(y*(1+1e-13))
	if lo == hi {
		return lo
	}
	var buf [32]byte
	b := strconv.AppendFloat(buf[:0], x, 'e', 13, 64)
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil { // ±Inf prints as "+Inf", which reads back; never NaN
		return y
	}
	return math.Floor(f * 1e9)
}
