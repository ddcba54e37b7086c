package topology

// The two-tier kind: a local limit on each server in front of the shared
// one.

// A two-tier topology puts a local limiter on each API server in front of
// the shared store: a request the local tier refuses is answered 429 at
// once, with no round trip; one it admits goes on to the shared store,
// which decides as on the shared kind. It is Envoy's design: the local
// rate limit filter, a token bucket per Envoy process
// (local_rate_limit.proto: "the rate limits are applied per Envoy
// process"), in front of the global rate limit service, whose calls it is
// there to spare; the global filter fails open when the service does not
// answer (rate_limit.proto, failure_mode_deny, default false; timeout
// 20 ms). The local token is spent whether or not the shared store then
// admits, as the filters run in turn.
//
// So its one copy is "shared", routed as the shared kind's: outages and
// partitions take it away and the fail policy decides. The local tiers
// are the servers' own, not copies of the limit's state: nothing takes
// them away.
//
// # What it admits beyond the limit
//
// With the shared store reachable every admission passes it, so a key's
// admissions in any span of T are at most the shared limit's C(T), and
// at most N × L(T), L the local tier's most in T and N the servers the
// key reaches: min(C(T), N × L(T)). Failing open, the shared store
// decides nothing and the local tiers alone hold the key to N × L(T):
// the local tier is what is left of the limit in an outage. Both are
// reached exactly by a flood spread over the N servers.
