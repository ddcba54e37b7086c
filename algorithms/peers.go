package algorithms

// peerCatalog lists the models of limiter libraries people deploy, after
// the six exact algorithms in [Catalog]. Each is one file, peer_NAME.go,
// whose doc comment says what it models and where from, with its tests
// beside it: a differential test against the real library where it is a Go
// module, a table built from the source's own arithmetic where it is not.
var peerCatalog = []Info{
	{Name: "ulule-limiter", Params: []string{"rate", "window"}, Memory: "3 integers (first hit, count, a marker)",
		Good:  "one counter per key, started by the key's first hit: keys' windows do not all turn over at once",
		Bad:   "2 × limit across a key's window end; refused hits count; X-RateLimit-Reset rounds down to the second",
		Build: func(p Params) (Algorithm, error) { return NewUlule(p) },
		Peer: &Provenance{Library: "github.com/ulule/limiter/v3", Version: "v3.11.2",
			Source: "drivers/store/memory/cache.go (Cache.Increment, Counter.Increment), drivers/store/common/context.go (GetContextFromState)",
			Family: "fixed-window",
			Quirk:  "the window starts at the key's first hit and ends period later (2 × limit across it); Increment counts refused hits; Reset is Unix seconds rounded down, up to 1s early"}},
	{Name: "go-limiter", Params: []string{"rate", "window"}, Memory: "3 integers (start, tokens left, last tick)",
		Good:  "Tokens per Interval on a grid anchored at the key's first hit; lock-cheap in memory",
		Bad:   "refills whole at each tick (2 × Tokens across one); a tick earns only Interval/Tokens tokens when Tokens² > Interval in ns",
		Build: func(p Params) (Algorithm, error) { return NewGoLimiter(p) },
		Peer: &Provenance{Library: "github.com/sethvargo/go-limiter", Version: "v0.7.1",
			Source: "memorystore/store.go (bucket.take, availableTokens, tick)",
			Family: "fixed-window",
			Quirk:  "a \"bucket\" set to Tokens at each Interval tick since the key's first hit, leftovers dropped: a fixed window, 2 × Tokens across a tick; its fill rate is ns per token, so large Tokens refill partly"}},
}
