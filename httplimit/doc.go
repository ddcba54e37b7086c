// Package httplimit puts a ratelim limiter in front of an [http.Handler]:
// any algorithm of package algorithms, in any store of package store (in
// process, or shared by every server through Redis), decides each request
// before the handler sees it.
//
//	alg, _ := algorithms.NewTokenBucket(algorithms.Rate{N: 10, Per: time.Second}, 50)
//	cfg := httplimit.Config{Limiter: store.NewServerMemory(alg), OnError: store.FailOpen}
//	cfg.Limit, cfg.Window = httplimit.QuotaOf(alg)
//	limit, err := httplimit.New(cfg)
//	...
//	srv := &http.Server{Addr: addr, Handler: limit(mux),
//		ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 60 * time.Second,
//		MaxHeaderBytes: 12 << 10} // a 16 KiB request head: net/http adds 4 KiB
//	srv.ListenAndServe()
//
// The server's own bounds come first: the limiter decides once a request's
// headers are in, so a client that never finishes them (slowloris) is
// stopped by ReadHeaderTimeout, not by any limit, and MaxHeaderBytes bounds
// the block a key is read from before [Config.MaxKeyBytes] bounds the key.
// net/http reads MaxHeaderBytes plus 4096 bytes of a request's head before
// it answers 431 (server.go, initialReadLimitSize): 12 << 10 bounds the
// head at 16 KiB.
// ratelim serve sets these, ReadTimeout and WriteTimeout on every server.
//
// # Why 429 with Retry-After
//
// A request over the limit is answered 429 Too Many Requests (RFC 6585), not
// 503 or 403: 429 says "you, this client, are early", which a well-behaved
// client treats as a reason to wait rather than as a failure to report or
// retry at once. Retry-After (RFC 9110, section 10.2.3) tells it how long:
// without it, clients retry immediately, and a limiter that rejects a retry
// storm still pays for every rejected request. Retry-After is the
// decision's RetryAfter, the moment the same request would pass if nothing
// else arrived, rounded up to whole seconds and never below 1: a client that
// honours it never comes back too early, and "Retry-After: 0" would invite
// the very retry storm it exists to prevent.
//
// # The RateLimit header fields
//
// Every answer the limiter decided carries two sets of fields with the same
// numbers, so that clients of either generation of the IETF draft read them:
//
//   - The current draft, draft-ietf-httpapi-ratelimit-headers-10/-11 (the
//     syntax is unchanged since -08): two Structured Fields (RFC 9651),
//     RateLimit-Policy: "default";q=50;w=5 (the quota: q requests per w
//     seconds, w omitted when [Config.Window] is 0) and
//     RateLimit: "default";r=3;t=2 (r requests remain; t seconds is the
//     window within which the client should use no more than r).
//   - The earlier trio of draft-ietf-httpapi-ratelimit-headers-06, which
//     most deployed clients and libraries still read: RateLimit-Limit: 50,
//     RateLimit-Remaining: 3, RateLimit-Reset: 2, plain integers. Its
//     RateLimit-Policy (the -06 syntax 50;w=5) is not sent: the name is the
//     new draft's now, and one field cannot have two syntaxes.
//
// Both carry the same decision, so they can never disagree. The draft asks
// for whole seconds; every duration is rounded up, never to nearest, so a
// client that waits what a field says is never early: 0.2 s becomes 1 s,
// not 0. On an admitted request the reset is the decision's ResetAfter, when
// the limiter is back to full capacity: the conservative reading of both
// -10's t ("time until additional quota is made available": a bucket
// refills continuously, so this overstates the wait, never understates it)
// and -11's ("the window within which the client can use no more than r").
// On a 429 the reset is the Retry-After value, and Remaining is 0 whatever
// the algorithm's estimate said: the draft wants the reset and Retry-After
// to name the same moment (-08) and Retry-After never to point earlier than
// the end of the window (-11), and a rejection that claimed quota remained
// would contradict itself. Reset is never negative.
//
// # Several limits on one key
//
// A key may have several limits, an [algorithms.Multi] ("burst" 10/s with
// a burst of 20, "hourly" 1000 an hour): [Config.Policies], which
// [QuotasOf] gives for the Multi, names them. Every answer then lists the
// policies enforcing at that instant in one field, in order:
//
//	RateLimit-Policy: "burst";q=20;w=2, "hourly";q=1000;w=3600
//	RateLimit: "hourly";r=3;t=2
//
// and RateLimit speaks for the binding one, the decision's Binding: on an
// admission the one with the fewest requests left, with its own reset; on
// a 429 the one that refused (the longest wait of those that did), r=0 and
// t the Retry-After. The -06 trio carries the binding policy's numbers. A
// policy in shadow mode is not listed while it is (clients must not pace by
// a limit that is not enforced); a request it would have refused passes
// with ShadowHeader and counts as would_reject. Each set of listed
// policies has its RateLimit-Policy value made once, at [New]: a request
// costs what a single limit's does. [ReadFields] reads both fields back.
//
// Answers decided by a fail policy carry no RateLimit fields: the limiter
// did not decide, so any number would be invented, and the draft lets a
// server omit the fields.
//
// # When the store fails
//
// [New] wraps the limiter in [store.WithPolicy] with [Config.OnError]. Fail
// open (the default, as in Envoy's rate-limit filter) passes the request to
// the handler: the API stays up, unprotected. Fail closed answers 503
// Service Unavailable with Retry-After: the limiter could not decide, which
// is the server's problem, not the client's, so 429 would be a lie. Either
// way no store error reaches the client as a 500; each request is counted in
// [Metrics], and the [slog.Logger] hears of it once when the store starts
// failing and once when it recovers, not once per request.
//
// # The leaky bucket's delay
//
// An algorithm that queues instead of rejecting (leaky-bucket) admits a
// request with a Delay: the middleware holds the request that long before
// calling the handler, so the handler sees requests at exactly the
// configured rate, and its answer says how long in [DelayHeader] (decimal
// seconds). If the request's context ends while it waits (the
// client went away, the server is shutting down) the handler is not called;
// the place it took in the queue is not given back, because the store has no
// way to return it. The queue's capacity bounds the wait to burst ÷ rate:
// set the server's WriteTimeout above that.
//
// # Requests in flight
//
// A concurrency limit ([algorithms.Concurrency], alone or among a key's
// several limits) bounds how many of a key's requests run at once rather
// than how many arrive per window. Its RateLimit-Policy states q, the
// most in flight, with no w ([QuotaOf]); r is the slots left. An admitted
// request holds a lease, which the middleware gives back to the store
// ([store.Releaser]) when the request is over: the handler returned or
// panicked, or the client left, with a context of its own so that a gone
// client does not cancel the release ([New] lists the cases). A lease the
// store never hears of again (a crashed server, a store without Release,
// a release that failed) expires by its TTL; until then the key has one
// slot fewer. A refused request's Retry-After is at most a second, since
// a slot frees whenever a request completes. [Metrics] counts the
// releases, and those that failed.
//
// # Keys
//
// Who is limited is what [KeyFunc] returns; [KeyBy] gives the usual answer:
// the API key, else the authenticated user, else the client's IP address,
// prefixed by kind so that no API key can collide with an address. The
// address is where trusted proxies matter: behind a load balancer every
// request's peer is the balancer, so limiting by peer limits everyone
// together; but believing X-Forwarded-For from anyone lets a client write
// any address it likes there and get a fresh bucket per request. [KeyBy]
// believes the header only as far as it was written by proxies you named.
//
// # Bounded memory
//
// Every key the limiter has seen costs the store memory for as long as it
// keeps the key, and keys come from what clients send. Two bounds keep a
// flood of keys from exhausting the server. The middleware refuses a key
// longer than [Config.MaxKeyBytes] (256 bytes by default) with 431 Request
// Header Fields Too Large, before the store sees it. And the in-process
// store a server should use, [store.NewServerMemory], forgets a key once
// its state is back to full (which changes no decision) and holds at most
// [store.DefaultMaxKeys], evicting the key nearest to full when a new one
// finds it full; [RegisterMemoryStats] exports what it holds, forgets and
// evicts. [store.NewMemory] keeps every key: it is the simulator's exact
// store, not a server's. A Redis store bounds itself: the twins set a TTL
// on every key.
package httplimit
