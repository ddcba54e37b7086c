package peers

import (
	"fmt"
	"math"
	"math/bits"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/algorithms/internal/exact"
)

// EnvoyRatelimit models envoyproxy/ratelimit, the Go service behind
// Envoy's global rate limit filter, with its Redis backend as configured
// by default (no local cache, STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT off,
// no expiration jitter, no shadow mode). It is a fixed window aligned to
// the service host's wall clock, read at Origin + now and truncated to
// whole seconds (time.Now().Unix(), src/utils/time.go). Read at commit
// f2fb157 (main, July 2026):
//
//   - src/limiter/cache_key.go (GenerateCacheKey): the key ends in
//     (now / divider) × divider, so each unit's window is its own key;
//     src/utils/utilities.go (UnitToDivider): the divider is 1, 60, 3600,
//     86400, 604800, 2592000 or 31536000 seconds for SECOND, MINUTE, HOUR,
//     DAY, WEEK, MONTH (30 days) and YEAR (365 days).
//   - src/redis/fixed_cache_impl.go (DoLimit, pipelineAppend): INCRBY key
//     hits_addend, then EXPIRE key divider, pipelined, not a script; the
//     count after the increment is the answer.
//   - src/limiter/base_limiter.go (GetResponseDescriptorStatus): OVER_LIMIT
//     with limit_remaining 0 if limitAfterIncrease > requests_per_unit,
//     else OK with requests_per_unit − limitAfterIncrease; both carry
//     duration_until_reset = CalculateReset (utilities.go): divider −
//     now % divider, in whole seconds.
//
// The windows have the fixed window's flaw, 2 × limit across a boundary.
// What envoy adds is that a refused request is counted all the same: the
// INCRBY runs before anything is decided. The count is of hits, not of
// admissions, so a client that keeps retrying a refused request keeps the
// counter above the limit, and a request of cost 2 that finds 9 of 10
// used is refused and leaves the count at 11: a unit request after it is
// refused too, where [algorithms.FixedWindow] (which counts only what it admits)
// still has room for it. Even a cost-0 check (a descriptor hits_addend of
// 0, which envoy allows for "check only") is OVER_LIMIT once the count has
// passed the limit.
//
// Decision: Limit is requests_per_unit (Rate × Window, rounded down; a
// uint32 in envoy's config); Remaining is limit_remaining; ResetAfter is
// duration_until_reset, whole seconds even for a key never hit; a refused
// request's RetryAfter is the same (the next window's key is fresh), or
// Never if its cost is above the limit. The service reads the clock twice
// (for the key and for the reset); the model reads it once.
//
// State: T is the start of the latest window counted, as an instant on the
// caller's clock (µs); N is its count, refused hits included; Prev is the
// count of the window before it. A host clock that steps back into the
// previous window increments that window's key, which is still in Redis
// (its TTL is one unit from its last hit): the model counts in Prev. A
// step back further lands on a key the model takes to have expired: it
// counts from zero and remembers nothing. The zero State is a key never
// seen (all counts 0), at any window, Time 0's or another.
//
// The zero EnvoyRatelimit refuses every request of positive cost; build
// one with [NewEnvoyRatelimit].
type EnvoyRatelimit struct {
	p       algorithms.Params
	divider int64 // UnitToDivider, seconds
	limit   int64 // requests_per_unit
}

// envoyUnits are the units of envoy's config (RateLimitResponse.RateLimit.Unit)
// as windows, with UnitToDivider's dividers in seconds.
var envoyUnits = []struct {
	window  time.Duration
	divider int64
}{
	{time.Second, 1},
	{time.Minute, 60},
	{time.Hour, 60 * 60},
	{24 * time.Hour, 60 * 60 * 24},
	{7 * 24 * time.Hour, 60 * 60 * 24 * 7},
	{30 * 24 * time.Hour, 60 * 60 * 24 * 30},
	{365 * 24 * time.Hour, 60 * 60 * 24 * 365},
}

// NewEnvoyRatelimit returns the model of envoy's ratelimit service with
// unit p.Window (one of envoy's units) and requests_per_unit p.Rate ×
// p.Window, its windows aligned to the clock at Origin + now.
func NewEnvoyRatelimit(p algorithms.Params) (*EnvoyRatelimit, error) {
	per, err := algorithms.RateMicros(p.Rate)
	if err != nil {
		return nil, err
	}
	var divider int64
	for _, u := range envoyUnits {
		if u.window == p.Window {
			divider = u.divider
		}
	}
	if divider == 0 {
		return nil, &algorithms.ParamError{Param: "window", Msg: fmt.Sprintf("%s is not a unit envoy counts in: a second, minute, hour, day, week, month (30 days) or year (365 days) (want 1s, 1m, 1h, 24h, 168h, 720h or 8760h)", p.Window)}
	}
	w := divider * 1_000_000
	if hi, _ := bits.Mul64(uint64(p.Rate.N), uint64(w)); hi >= uint64(per) {
		// The quotient would not even fit in 64 bits.
		return nil, &algorithms.ParamError{Param: "rate", Msg: fmt.Sprintf("%s × %s is over envoy's requests_per_unit, a uint32 (want at most 4294967295 a window)", p.Rate, p.Window)}
	}
	limit := exact.MulDiv(uint64(p.Rate.N), uint64(w), uint64(per))
	switch {
	case limit < 1:
		return nil, &algorithms.ParamError{Param: "window", Msg: fmt.Sprintf("%s at %s admits less than one request per window (want rate × window ≥ 1)", p.Window, p.Rate)}
	case limit > math.MaxUint32:
		return nil, &algorithms.ParamError{Param: "rate", Msg: fmt.Sprintf("%s × %s is %d, over envoy's requests_per_unit, a uint32 (want at most 4294967295 a window)", p.Rate, p.Window, limit)}
	}
	return &EnvoyRatelimit{
		p:       algorithms.Params{Rate: p.Rate, Window: p.Window, Origin: p.Origin},
		divider: divider,
		limit:   int64(limit),
	}, nil
}

// Name returns "envoy-ratelimit".
func (e *EnvoyRatelimit) Name() string { return "envoy-ratelimit" }

// Params returns the rate, window and origin.
func (e *EnvoyRatelimit) Params() algorithms.Params { return onlyRead(e.p, "window") }

// Limit returns requests_per_unit.
func (e *EnvoyRatelimit) Limit() int64 { return e.limit }

// Step increments the count of now's window by cost, refused or not, and
// decides on the count after.
func (e *EnvoyRatelimit) Step(prev algorithms.State, now algorithms.Time, cost int64) (algorithms.State, algorithms.Decision) {
	if e.divider == 0 { // the zero value: NewEnvoyRatelimit never builds one
		return algorithms.Unbuilt(prev, cost)
	}
	cost = algorithms.CleanCost(cost)
	wall := int64(e.p.Origin) + int64(now)
	unix := exact.FloorDiv(wall, 1_000_000) // time.Now().Unix()
	start := (unix / e.divider) * e.divider // GenerateCacheKey, Go's truncating division
	window := start*1_000_000 - int64(e.p.Origin)
	span := e.divider * 1_000_000

	var after int64
	next := prev
	switch {
	case prev.T == 0 && prev.N == 0 && prev.Prev == 0:
		// A key never seen, whatever the window: its start may be
		// before Time 0 when Origin is not on a unit's boundary.
		next = algorithms.State{T: window, N: cost}
		after = cost
	case window == prev.T:
		after = satAdd(prev.N, cost)
		next.N = after
	case window > prev.T:
		next = algorithms.State{T: window, N: cost}
		if window-span == prev.T {
			next.Prev = prev.N
		}
		after = cost
	case window == prev.T-span:
		after = satAdd(prev.Prev, cost)
		next.Prev = after
	default:
		after = cost
	}

	reset := time.Duration(e.divider-unix%e.divider) * time.Second // CalculateReset
	d := algorithms.Decision{Limit: e.limit, ResetAfter: reset}
	if after > e.limit {
		d.RetryAfter = reset
		if cost > e.limit {
			d.RetryAfter = algorithms.Never
		}
		return next, d
	}
	d.Allowed = true
	d.Remaining = e.limit - after
	return next, d
}

// satAdd is a + b for b ≥ 0, stopping at the largest int64 (Redis's INCRBY
// would refuse to overflow).
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
