// Package algorithms holds ratelim's limiters as pure functions, and the
// catalog that builds any limiter by name.
//
// Every limiter answers one question for one key: given what it remembers
// about the key (a [State]), the time now, and the cost of the request, may the
// request pass? The answer is a new State and a [Decision]. Nothing here reads
// a clock, sleeps, starts a goroutine or does I/O: time is an argument, as in
// golang.org/x/time/rate's AllowN(t, n). That is what lets the simulator run
// thirty virtual seconds in milliseconds, lets a store run the same step
// atomically inside Redis (each algorithm has a Lua twin in package store),
// and lets tests replay any sequence of instants exactly.
//
// Time is an integer count of microseconds ([Time]). Microseconds, not
// nanoseconds, because Lua numbers are doubles: an integer is exact in a
// double up to 2^53, and 2^53 µs is 285 years, while 2^53 ns is 104 days.
// All arithmetic is integer and exact, so a rate of 3/s never drifts and the
// Go step and its Lua twin reach the same decision bit for bit.
//
// The algorithms, in the order a course would teach them:
//
//   - [FixedWindow]: count per aligned window. Simple; lets 2× through at a boundary.
//   - [SlidingLog]: remember every admitted instant. Exact; memory grows with the limit.
//   - [SlidingWindow]: weighted previous-window count. Cheap, nearly exact.
//   - [TokenBucket]: burst and rate, lazily refilled. The industry default.
//   - [GCRA]: the token bucket kept as one theoretical arrival time.
//   - [LeakyBucket]: a queue drained at the rate; delays instead of rejecting.
//
// Three rules hold for all of them. The zero State is a key never seen, so a
// store that lost a key (or let it expire) starts it fresh. A clock that goes
// backwards (a skewed server) never refills a bucket, never opens a window
// early, never overflows and never panics: state only ever moves forward.
// And a limiter's zero value, one declared without its constructor
// (var tb algorithms.TokenBucket), is a limit of zero: it refuses every
// request of positive cost with RetryAfter [Never], rather than dividing by
// the rate or window it was never given.
//
// Beside the six, three kinds that bound something else than a rate:
// [Concurrency] (requests in flight, with leases), [Multi] (several limits
// on one key, all of which must admit) and [Shedder] (a fleet's load
// shedder, which keeps capacity for critical requests).
//
// The catalog ([Catalog], [Lookup], [New], [Names], [ExactNames],
// [PeerNames]) lists every kind by name, as scenarios and `ratelim
// algorithms` name them. Kinds defined in other packages join it with
// [Register] from their init: package algorithms/peers, the models of
// limiter libraries people deploy (x/time/rate, redis_rate, throttled,
// ulule, go-limiter, envoy, nginx), does, and package sim imports it, so
// every program that runs a scenario knows them. Such a package builds its
// kinds with the helpers the six use: [RateMicros], [CheckBurst] and
// [WindowLimit] validate parameters, [CleanCost] and [Unbuilt] give a
// negative cost and a zero value their one answer.
package algorithms
