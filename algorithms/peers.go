package algorithms

// peerCatalog lists the models of limiter libraries people deploy, after
// the six exact algorithms in [Catalog]. Each is one file, peer_NAME.go,
// whose doc comment says what it models and where from, with its tests
// beside it: a differential test against the real library where it is a Go
// module, a table built from the source's own arithmetic where it is not.
var peerCatalog = []Info{
	{Name: "redis_rate", Params: []string{"rate", "burst"}, Memory: "1 double (the TAT) in Redis",
		Good:  "GCRA in one Lua script: atomic, one key, Redis's clock for every server",
		Bad:   "float seconds since 2017 round at ties: now and then refuses a request the exact GCRA admits (Retry-After of ~100ns)",
		Build: func(p Params) (Algorithm, error) { return NewRedisRate(p) },
		Peer: &Provenance{Library: "github.com/go-redis/redis_rate/v10", Version: "v10.0.1", Source: "lua.go (allowN script), rate.go (AllowN, dur)",
			Family: "gcra", Clock: "store",
			Quirk: "doubles of seconds since 2017 round at ties: a burst at one instant loses its last request (3/s burst 5 in 2025: Retry-After 59ns; 10/s burst 5 in 2026: 119ns); a cost above burst gets a finite Retry-After"}},
	{Name: "envoy-ratelimit", Params: []string{"rate", "window"}, Memory: "1 counter per key and window (INCRBY + EXPIRE)",
		Good:  "one pipelined INCRBY per request; windows of a clock unit, shared by every replica",
		Bad:   "2 × limit across a window boundary; refused hits are counted, so retries keep a key over its limit",
		Build: func(p Params) (Algorithm, error) { return NewEnvoyRatelimit(p) },
		Peer: &Provenance{Library: "github.com/envoyproxy/ratelimit", Version: "f2fb157 (main, 2026-07-05)",
			Source: "src/redis/fixed_cache_impl.go (DoLimit), src/limiter/base_limiter.go (GetResponseDescriptorStatus), src/utils/utilities.go (UnitToDivider, CalculateReset)",
			Family: "fixed-window",
			Quirk:  "windows aligned to the host's clock unit (1s/1m/1h/24h/168h/720h/8760h); INCRBY before deciding, so refused hits count against the limit"}},
}
