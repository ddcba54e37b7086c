package peers

import "github.com/ratelim/ratelim/algorithms"

import "time"

// GoLimiter models github.com/sethvargo/go-limiter v0.7.1's memorystore
// (memorystore/store.go: store.Take, bucket.take, availableTokens, tick).
// Its README calls it a bucket of Tokens per Interval, and its bucket has a
// fill rate, but it behaves as a fixed window, which is the family it is
// filed under: nothing refills between ticks, and at a tick the bucket is
// set (not topped up) to what the ticks since the last take earned, capped
// at Tokens, so leftover tokens never carry over. With the usual numbers a
// single tick earns the whole bucket, and the limiter is exactly Tokens per
// window, the windows being [start + k × Interval, start + (k+1) × Interval)
// for the key's first hit at start.
//
// The parameters map as a user would expect: Tokens = rate × window (rounded
// down, as [algorithms.FixedWindow]'s limit) and Interval = window. It reads p.Rate and
// p.Window; p.Origin is kept but changes nothing, since the library only
// ever subtracts one wall-clock instant from another.
//
// How take works, per key: a bucket remembers startTime (its first hit, Unix
// ns), lastTick and availableTokens (Tokens when new). A take at now computes
// currTick = (now − startTime) / Interval in uint64 nanoseconds, and reset =
// startTime + (currTick+1) × Interval, the next tick, which it returns as
// Unix ns (ResetAfter and RetryAfter here are reset − now, exact to the
// nanosecond; go-limiter's httplimit middleware would round that down to a
// second in its RFC 1123 headers). If lastTick < currTick, availableTokens
// becomes uint64(float64(currTick − lastTick) × fillRate), capped at
// Tokens, and lastTick = currTick. Then, if a token is left, one is taken:
// ok, remaining = what is left; otherwise not ok, remaining 0. A refused
// take still writes the refill.
//
// The quirks, with numbers:
//
//   - 2 × Tokens within a short span: with 100 per second, a key first hit
//     at 0.3s ticks at 1.3s; 150 requests 1µs before the tick and 150 at it
//     get 99 + 100 through, where the token bucket (burst 100) and the
//     sliding log admit 100.
//   - fillRate is float64(Interval) / float64(Tokens), nanoseconds per
//     token, though the code multiplies it by ticks as tokens per tick. A
//     tick therefore earns Interval/Tokens tokens, which is the whole bucket
//     only when Interval in ns ≥ Tokens²: 1000 per second does (10^6 per
//     tick, capped at 1000), but 5000 per 10ms earns 2000 per tick, so an
//     emptied bucket has 2000 after one tick, 4000 after two, and 5000 from
//     three, and a take in a tick after a take whose bucket held more (say
//     4999) is set down to 2000: the leftover is thrown away, not added to.
//   - A clock stepped back before a key's first hit makes now − startTime
//     wrap around in uint64, so currTick is about 2^64 / Interval: the
//     bucket refills (uint64 of the float product; beyond 2^64 that
//     conversion is whatever the platform gives, which the model inherits by
//     computing it the same way) and lastTick is left so high that no tick
//     after the clock comes back passes it: once that refill is spent, the
//     key is refused for good (until the sweeper, after 12 hours idle by
//     default, deletes it).
//
// go-limiter has no cost: Take takes one token. A request of cost c is c
// Takes in a row at the same instant, all that a caller can do: it is
// admitted if all c succeed, and the ones that succeed spend their tokens
// even when a later one fails (a cost of 3 with 2 tokens left is refused and
// leaves 0). The Decision is the last Take's. A cost above Tokens can never
// pass (RetryAfter [algorithms.Never]). A cost of 0 peeks: it reports what a Take would
// find (the refill included, the bucket's start for a key never seen being
// now) and writes nothing, not even the refill; the library's own Get reads
// the stored availableTokens without refilling.
//
// State: T is the key's first hit (µs), N is availableTokens, and Prev is
// lastTick + 1, so that the zero State is a key never seen (a tick counts
// at most 2^64 / 1000, so the +1 cannot overflow). The sweeper, which
// deletes a bucket idle for SweepMinTTL (12 h by default), is the store's
// business, not the model's. ResetAfter is the next tick, as the library
// says, but unlike every other limiter's it is not when the state becomes
// that of a key never seen: the ticks stay anchored at the first hit. The
// simulator's store forgets nothing, so it decides as the library does; a
// server store that forgets full keys (ratelim serve) re-anchors an idle
// key's ticks at its next hit, as the library's sweeper does, but sooner.
//
// The zero GoLimiter refuses every request of positive cost, as unbuilt
// limiters do. Build one with [NewGoLimiter].
type GoLimiter struct {
	p        algorithms.Params
	tokens   uint64  // Config.Tokens
	interval uint64  // Config.Interval in ns
	fillRate float64 // bucket.fillRate: float64(interval) / float64(tokens)
	origin   int64   // Params.Origin in µs
}

// NewGoLimiter returns a model of go-limiter's memorystore with Tokens =
// p.Rate × p.Window and Interval = p.Window.
func NewGoLimiter(p algorithms.Params) (*GoLimiter, error) {
	_, limit, err := algorithms.WindowLimit(p.Rate, p.Window)
	if err != nil {
		return nil, err
	}
	return &GoLimiter{p: algorithms.Params{Rate: p.Rate, Window: p.Window, Origin: p.Origin},
		tokens: uint64(limit), interval: uint64(p.Window),
		fillRate: float64(p.Window) / float64(uint64(limit)), origin: int64(p.Origin)}, nil
}

// Name returns "go-limiter".
func (g *GoLimiter) Name() string { return "go-limiter" }

// Params returns the rate, window and origin.
func (g *GoLimiter) Params() algorithms.Params { return onlyRead(g.p, "window") }

// Limit returns Config.Tokens: the requests admitted per interval.
func (g *GoLimiter) Limit() int64 { return int64(g.tokens) }

// Step is cost calls of store.Take(ctx, key) at now (a peek for 0).
func (g *GoLimiter) Step(prev algorithms.State, now algorithms.Time, cost int64) (algorithms.State, algorithms.Decision) {
	if g.interval == 0 { // the zero value: WindowLimit never builds a window below 1µs
		return algorithms.Unbuilt(prev, cost)
	}
	cost = algorithms.CleanCost(cost)
	// fasttime.Now: wall-clock Unix ns as a uint64, wrapping as it does.
	nowNs := uint64((g.origin + int64(now)) * 1000)
	startT, avail, lastTick := int64(now), g.tokens, uint64(0) // newBucket
	if prev.Prev != 0 {
		startT, avail, lastTick = prev.T, uint64(prev.N), uint64(prev.Prev-1)
	}
	start := uint64((g.origin + startT) * 1000)
	currTick := (nowNs - start) / g.interval // tick
	reset := start + (currTick+1)*g.interval
	if lastTick < currTick {
		// availableTokens: a product that truncates, set, not added.
		avail = min(uint64(float64(currTick-lastTick)*g.fillRate), g.tokens)
		lastTick = currTick
	}
	d := algorithms.Decision{Limit: int64(g.tokens), ResetAfter: time.Duration(reset - nowNs)}
	if cost == 0 {
		d.Allowed, d.Remaining = true, int64(avail)
		return prev, d
	}
	took := min(uint64(cost), avail)
	avail -= took
	if d.Allowed = took == uint64(cost); d.Allowed {
		d.Remaining = int64(avail)
	} else if uint64(cost) > g.tokens {
		d.RetryAfter = algorithms.Never
	} else {
		d.RetryAfter = d.ResetAfter
	}
	return algorithms.State{T: startT, N: int64(avail), Prev: int64(lastTick + 1)}, d
}
