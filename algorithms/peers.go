package algorithms

// peerCatalog lists the models of limiter libraries people deploy, after
// the six exact algorithms in [Catalog]. Each is one file, peer_NAME.go,
// whose doc comment says what it models and where from, with its tests
// beside it: a differential test against the real library where it is a Go
// module, a table built from the source's own arithmetic where it is not.
var peerCatalog = []Info{
	{Name: "x-time-rate", Params: []string{"rate", "burst"}, Memory: "a float64 and an instant (2 integers)",
		Good:  "the Go team's token bucket: exact to the nanosecond on a steady clock, no allocation",
		Bad:   "a clock stepped back moves last back, so the stretch is refilled twice",
		Build: func(p Params) (Algorithm, error) { return NewXTimeRate(p) },
		Peer: &Provenance{Library: "golang.org/x/time/rate", Version: "v0.16.0",
			Source: "rate.go (AllowN, reserveN, advance)", Family: "token-bucket",
			Quirk: "an admitted request writes last = t even when t is before last: a clock that steps back and forward again refills that stretch twice; tokens are a float64, floored for Remaining"}},
	{Name: "throttled", Params: []string{"rate", "burst"}, Memory: "1 instant in ns (2 integers)",
		Good:  "GCRA in integer nanoseconds: one int64 per key, compare-and-swap in any store",
		Bad:   "a request over the capacity reports Remaining = Limit and ResetAfter 0, a full bucket, whatever the state",
		Build: func(p Params) (Algorithm, error) { return NewThrottled(p) },
		Peer: &Provenance{Library: "github.com/throttled/throttled/v2", Version: "v2.15.0",
			Source: "rate.go (GCRARateLimiterCtx.RateLimitCtx), store/memstore", Family: "gcra",
			Quirk: "emission interval truncated to whole ns (3/s runs at 3.000000003/s); a refusal for quantity > MaxBurst+1 never sets ttl, so it reports a full bucket and no Retry-After; a peek writes max(TAT, now) back",
			Clock: "store"}},
	{Name: "nginx-limit-req", Params: []string{"rate", "burst"}, Memory: "2 integers and a mark (last ms, excess in 1/1000s)",
		Good:  "nginx's own leaky bucket: queues the excess at rate, or passes it at once (nodelay, delay=N)",
		Bad:   "burst=B admits B+1 at once; r/m rates truncate (1r/m leaks every 62.5s); 503 by default",
		Build: func(p Params) (Algorithm, error) { return NewNginxLimitReq(p) },
		Peer: &Provenance{Library: "nginx (ngx_http_limit_req_module)", Version: "release-1.31.4 (file unchanged on master 3f6f7824)",
			Source: "src/http/modules/ngx_http_limit_req_module.c (ngx_http_limit_req_lookup, ngx_http_limit_req_account, ngx_http_limit_req_zone)",
			Family: "leaky-bucket",
			Quirk:  "a key's first request is free (excess 0), so burst=B admits B+1 at once; rate and excess are integer 1/1000s on a ms clock (100r/m leaks 1666/s, not 1666.67)"}},
}
