package algorithms

// peerCatalog lists the models of limiter libraries people deploy, after
// the six exact algorithms in [Catalog]. Each is one file, peer_NAME.go,
// whose doc comment says what it models and where from, with its tests
// beside it: a differential test against the real library where it is a Go
// module, a table built from the source's own arithmetic where it is not.
var peerCatalog = []Info{
	{Name: "nginx-limit-req", Params: []string{"rate", "burst"}, Memory: "2 integers and a mark (last ms, excess in 1/1000s)",
		Good:  "nginx's own leaky bucket: queues the excess at rate, or passes it at once (nodelay, delay=N)",
		Bad:   "burst=B admits B+1 at once; r/m rates truncate (1r/m leaks every 62.5s); 503 by default",
		Build: func(p Params) (Algorithm, error) { return NewNginxLimitReq(p) },
		Peer: &Provenance{Library: "nginx (ngx_http_limit_req_module)", Version: "release-1.31.4 (file unchanged on master 3f6f7824)",
			Source: "src/http/modules/ngx_http_limit_req_module.c (ngx_http_limit_req_lookup, ngx_http_limit_req_account, ngx_http_limit_req_zone)",
			Family: "leaky-bucket",
			Quirk:  "a key's first request is free (excess 0), so burst=B admits B+1 at once; rate and excess are integer 1/1000s on a ms clock (100r/m leaks 1666/s, not 1666.67)"}},
}
