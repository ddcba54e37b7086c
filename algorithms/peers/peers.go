// Package peers models the rate limiters of libraries people deploy
// (golang.org/x/time/rate, redis_rate, throttled, ulule/limiter,
// sethvargo/go-limiter, envoy's ratelimit service, nginx's limit_req and
// HAProxy's stick-table http_req_rate), each as a pure
// [algorithms.Algorithm] that reaches the library's decisions, flaws
// included, from the same instants and costs.
//
// Each model is one file, NAME.go, whose doc comment says what it models
// and from which of the library's files and functions, with its tests
// beside it: a differential test against the real library where it is a
// Go module, a table built from the source's own arithmetic where it is
// not. Each is a variant of one of the exact algorithms of package
// algorithms, which its [algorithms.Provenance] names as its Family.
//
// The package registers its models in algorithms' catalog from its init
// (see [algorithms.Register]): importing it, blank if need be, is what
// makes algorithms.New("redis_rate", p) work. Package sim imports it, so
// every program that runs a scenario knows the peers by name.
package peers

import "github.com/ratelim/ratelim/algorithms"

func init() { algorithms.Register(catalog...) }

// catalog lists the peer models in the order `ratelim algorithms` prints
// them, after the exact algorithms: the order is written here, once,
// rather than left to the order Go initialises the files in.
var catalog = []algorithms.Info{
	{Name: "x-time-rate", Params: []string{"rate", "burst"}, Memory: "a float64 and an instant (2 integers)",
		Good:  "the Go team's token bucket: exact to the nanosecond on a steady clock, no allocation",
		Bad:   "a clock stepped back moves last back, so the stretch is refilled twice",
		Build: func(p algorithms.Params) (algorithms.Algorithm, error) { return NewXTimeRate(p) },
		Peer: &algorithms.Provenance{Library: "golang.org/x/time/rate", Version: "v0.16.0",
			Source: "rate.go (AllowN, reserveN, advance)", Family: "token-bucket",
			Quirk: "an admitted request writes last = t even when t is before last: a clock that steps back and forward again refills that stretch twice; tokens are a float64, floored for Remaining"}},
	{Name: "redis_rate", Params: []string{"rate", "burst"}, Memory: "1 double (the TAT) in Redis",
		Good:  "GCRA in one Lua script: atomic, one key, Redis's clock for every server",
		Bad:   "float seconds since 2017 round at ties: now and then refuses a request the exact GCRA admits (Retry-After of ~100ns)",
		Build: func(p algorithms.Params) (algorithms.Algorithm, error) { return NewRedisRate(p) },
		Peer: &algorithms.Provenance{Library: "github.com/go-redis/redis_rate/v10", Version: "v10.0.1", Source: "lua.go (allowN script), rate.go (AllowN, dur)",
			Family: "gcra", Clock: "store",
			Quirk: "doubles of seconds since 2017 round at ties: a burst at one instant loses its last request (3/s burst 5 in 2025: Retry-After 59ns; 10/s burst 5 in 2026: 119ns); a cost above burst gets a finite Retry-After"}},
	{Name: "throttled", Params: []string{"rate", "burst"}, Memory: "1 instant in ns (2 integers)",
		Good:  "GCRA in integer nanoseconds: one int64 per key, compare-and-swap in any store",
		Bad:   "a request over the capacity reports Remaining = Limit and ResetAfter 0, a full bucket, whatever the state",
		Build: func(p algorithms.Params) (algorithms.Algorithm, error) { return NewThrottled(p) },
		Peer: &algorithms.Provenance{Library: "github.com/throttled/throttled/v2", Version: "v2.15.0",
			Source: "rate.go (GCRARateLimiterCtx.RateLimitCtx), store/memstore", Family: "gcra",
			Quirk: "emission interval truncated to whole ns (3/s runs at 3.000000003/s); a refusal for quantity > MaxBurst+1 never sets ttl, so it reports a full bucket and no Retry-After; a peek writes max(TAT, now) back",
			Clock: "store", Write: "cas"}},
	{Name: "ulule-limiter", Params: []string{"rate", "window"}, Memory: "3 integers (first hit, count, a marker)",
		Good:  "one counter per key, started by the key's first hit: keys' windows do not all turn over at once",
		Bad:   "2 × limit across a key's window end; refused hits count; X-RateLimit-Reset rounds down to the second",
		Build: func(p algorithms.Params) (algorithms.Algorithm, error) { return NewUlule(p) },
		Peer: &algorithms.Provenance{Library: "github.com/ulule/limiter/v3", Version: "v3.11.2",
			Source: "drivers/store/memory/cache.go (Cache.Increment, Counter.Increment), drivers/store/common/context.go (GetContextFromState)",
			Family: "fixed-window",
			Quirk:  "the window starts at the key's first hit and ends period later (2 × limit across it); Increment counts refused hits; Reset is Unix seconds rounded down, up to 1s early"}},
	{Name: "gubernator", Params: []string{"rate", "window"}, Memory: "2 integers (expiry, hits taken)",
		Good:  "a window per key from its first hit, owned by one node of a cluster that peers batch their hits to (GLOBAL)",
		Bad:   "a first hit above the limit is refused and leaves the window full; a refused hit takes nothing",
		Build: func(p algorithms.Params) (algorithms.Algorithm, error) { return NewGubernator(p) },
		Peer: &algorithms.Provenance{Library: "github.com/gubernator-io/gubernator/v2", Version: "v2.13.0",
			Source: "algorithms.go (tokenBucket, tokenBucketNewItem), cache.go (CacheItem.IsExpired)", Family: "fixed-window",
			Quirk: "TOKEN_BUCKET is a window of Duration from the key's first hit, refilled by nothing; a first hit above the limit is refused and takes nothing (the new item keeps its whole Limit); a hit above Remaining takes nothing unless DRAIN_OVER_LIMIT"}},
	{Name: "gubernator-leaky", Params: []string{"rate", "window"}, Memory: "3 integers (a float64 remaining, its update and expiry in ms)",
		Good:  "a leaky bucket per key in milliseconds, owned by one node of a cluster that peers batch their hits to (GLOBAL)",
		Bad:   "leaks only whole tokens since the last leak, in float64 milliseconds; a peer's copy after a broadcast restarts its leak at the broadcast",
		Build: func(p algorithms.Params) (algorithms.Algorithm, error) { return NewGubernatorLeaky(p) },
		Peer: &algorithms.Provenance{Library: "github.com/gubernator-io/gubernator/v2", Version: "v2.13.0",
			Source: "algorithms.go (leakyBucket, leakyBucketNewItem), gubernator.go (UpdatePeerGlobals)", Family: "token-bucket",
			Quirk: "Remaining is a float64 that leaks only once a whole token has (int64(leak) > 0), in ms; a first hit above Burst is refused and empties the bucket; a peer's item after a broadcast takes the status's whole Remaining and leaks from the broadcast on"}},
	{Name: "go-limiter", Params: []string{"rate", "window"}, Memory: "3 integers (start, tokens left, last tick)",
		Good:  "Tokens per Interval on a grid anchored at the key's first hit; lock-cheap in memory",
		Bad:   "refills whole at each tick (2 × Tokens across one); a tick earns only Interval/Tokens tokens when Tokens² > Interval in ns",
		Build: func(p algorithms.Params) (algorithms.Algorithm, error) { return NewGoLimiter(p) },
		Peer: &algorithms.Provenance{Library: "github.com/sethvargo/go-limiter", Version: "v0.7.1",
			Source: "memorystore/store.go (bucket.take, availableTokens, tick)",
			Family: "fixed-window",
			Quirk:  "a \"bucket\" set to Tokens at each Interval tick since the key's first hit, leftovers dropped: a fixed window, 2 × Tokens across a tick; its fill rate is ns per token, so large Tokens refill partly"}},
	{Name: "envoy-ratelimit", Params: []string{"rate", "window"}, Memory: "1 counter per key and window (INCRBY + EXPIRE)",
		Good:  "one pipelined INCRBY per request; windows of a clock unit, shared by every replica",
		Bad:   "2 × limit across a window boundary; refused hits are counted, so retries keep a key over its limit",
		Build: func(p algorithms.Params) (algorithms.Algorithm, error) { return NewEnvoyRatelimit(p) },
		Peer: &algorithms.Provenance{Library: "github.com/envoyproxy/ratelimit", Version: "f2fb157 (main, 2026-07-05)",
			Source: "src/redis/fixed_cache_impl.go (DoLimit), src/limiter/base_limiter.go (GetResponseDescriptorStatus), src/utils/utilities.go (UnitToDivider, CalculateReset)",
			Family: "fixed-window",
			Quirk:  "windows aligned to the host's clock unit (1s/1m/1h/24h/168h/720h/8760h); INCRBY before deciding, so refused hits count against the limit"}},
	{Name: "nginx-limit-req", Params: []string{"rate", "burst"}, Memory: "2 integers and a mark (last ms, excess in 1/1000s)",
		Good:  "nginx's own leaky bucket: queues the excess at rate, or passes it at once (nodelay, delay=N)",
		Bad:   "burst=B admits B+1 at once; r/m rates truncate (1r/m leaks every 62.5s); 503 by default",
		Build: func(p algorithms.Params) (algorithms.Algorithm, error) { return NewNginxLimitReq(p) },
		Peer: &algorithms.Provenance{Library: "nginx (ngx_http_limit_req_module)", Version: "release-1.31.4 (file unchanged on master 3f6f7824)",
			Source: "src/http/modules/ngx_http_limit_req_module.c (ngx_http_limit_req_lookup, ngx_http_limit_req_account, ngx_http_limit_req_zone)",
			Family: "leaky-bucket",
			Quirk:  "a key's first request is free (excess 0), so burst=B admits B+1 at once; rate and excess are integer 1/1000s on a ms clock (100r/m leaks 1666/s, not 1666.67)"}},
	{Name: "haproxy-req-rate", Params: []string{"rate", "window"}, Memory: "3 integers (the period's start in ms, its count and the last period's)",
		Good:  "HAProxy's stick-table rate: two counters per key, the last period weighted by what is left of this one",
		Bad:   "refused requests are counted, so a client sending over the limit is refused for as long as it sends",
		Build: func(p algorithms.Params) (algorithms.Algorithm, error) { return NewHAProxyReqRate(p) },
		Peer: &algorithms.Provenance{Library: "HAProxy (stick-table http_req_rate, sc_http_req_rate)", Version: "2.6.12 (Debian 2.6.12-1+deb12u4; source read at v2.6.0)",
			Source: "include/haproxy/freq_ctr.h (update_freq_ctr_period, read_freq_ctr_period), src/freq_ctr.c (freq_ctr_total), src/http_act.c (http_action_track_sc), src/stick_table.c (smp_fetch_sc_http_req_rate)",
			Family: "sliding-window",
			Quirk:  "a key's periods start at its first hit, on an even ms, and start afresh after 2 idle periods; the rate, curr + ⌊prev × remain / period⌋, counts the request and every refused one: after 21 at once and 1/s, 20 per 10s refuses until 16s (the exact sliding window 11s)"}},
}

// onlyRead is p with the parameters a limiter does not read cleared, as the
// six exact algorithms' Params leave them: a scenario may carry a window
// and a burst for whichever algorithm a flag picks, and what reads the
// Params (the simulator's exact limiter, the result's limit) tells a
// window algorithm from a bucket by them. Rate and Origin are always kept;
// "burst", "window" and "delay" (Delay and NoDelay) are kept if named.
func onlyRead(p algorithms.Params, reads ...string) algorithms.Params {
	kept := algorithms.Params{Rate: p.Rate, Origin: p.Origin}
	for _, r := range reads {
		switch r {
		case "burst":
			kept.Burst = p.Burst
		case "window":
			kept.Window = p.Window
		case "delay":
			kept.Delay, kept.NoDelay = p.Delay, p.NoDelay
		}
	}
	return kept
}
