package topology

// The synced kind: counters kept apart and synced later.

import (
	"time"

	"github.com/ratelim/ratelim/algorithms"
)

// A synced topology is what engineers deploy once one store round trip per
// request is too slow or too far away: each API server decides on a copy
// of the key's state in its own memory (a jar, as on the local kind), and
// every SyncInterval pushes the admissions it made since its last push to
// one shared copy, which counts every one of them, even those it would
// have refused itself: they were already admitted (Kong's rate-limiting
// plugin with the redis policy and sync_rate N sends INCRBY key delta,
// policies/init.lua sync_to_redis; Envoy's memcache backend and
// Cloudflare's Workers binding are the same design). The first request
// on a key after a push reads the shared copy, one round trip, and the
// server decides on that state plus its own admissions until its next
// push (Kong: usage() returns the value it fetched plus its own delta).
//
// So the copies are the servers' jars, "server-0" to "server-N-1", and
// "shared" after them. Route gives a server its own jar, always; the
// shared copy is SyncRoute's, which outages and partitions take away: a
// push that cannot reach it is dropped, as Kong and gubernator drop a
// failed send, and a read that cannot reach it decides by the fail policy.
//
// # What it admits beyond the limit
//
// Take one key whose requests reach N servers, and an exact limiter that
// admits at most C(T) in any span of length T: Burst + Rate × T for the
// token bucket, GCRA and the leaky bucket.
//
// A server's copy at t is the shared copy as it read it at ρ, plus its
// own admissions since. It read at the first request after a push, and
// pushes every SyncInterval I, so t − ρ < I. The shared copy at ρ holds
// every admission pushed by ρ: the server's own, all of them, and each
// other server's made before that server's last push, at most I before
// ρ. So an admission at t has seen every admission before it but other
// servers' made in (t − 2I, t): the unseen ones.
//
// A bucket charged with every admission it has seen since a, whatever it
// would have decided, holds at most C(t − a) less those: it starts no
// fuller than full and refills no faster than the exact limiter. The last
// admission of a span [a, a+T) was admitted by such a copy, so the span's
// admissions but the unseen are at most C(T). The unseen are each other
// server's admissions in a span of min(2I, T), and a server sees all its
// own, so they are at most C(min(2I, T)) a server. Hence, in any span of
// length T,
//
//	admitted ≤ C(T) + (N − 1) × C(min(2I, T))
//
// The window algorithms count per window, so the argument runs in each:
// the fixed and sliding windows count at most Limit a fixed window (a span
// of T meets ⌈T/W⌉ + 1 of them), the sliding log at most Limit in any W
// (⌈T/W⌉ of them cover the span); each server sees its own, at most Limit
// a window, so a window admits at most N × Limit, the local jars' worst:
// syncing does not lower a window algorithm's worst case at all, it only
// shortens it. sim.SyncedBound adds either up. The bound holds with the shared
// copy reachable (a dropped push loses admissions from every count) and
// every server's clock true. It is tight to within 2.5×: N servers that
// each read a fresh copy at once and take a full C before any push admit
// N × C at an instant, and an adversary that bursts so on every server at
// a second's end and start, then floods, reaches at least 40% of the
// bound on every exact algorithm, 2 to 8 servers and intervals of 1 ms to
// 1 s (package sim's TestSyncedBoundIsReached; 41.7% the least measured,
// where the refill within the unseen span dominates: that span is 2I at
// the worst, I on average). Package sim's property test checks that no
// run exceeds it.
//
// A SyncInterval of SyncEveryRequest makes every request read and push:
// the shared store's decisions exactly. SyncNever never pushes: the local
// jars' (with N servers, N × the limit). The simulator runs those two as
// the shared and local kinds.

// SyncEveryRequest and SyncNever are the two limits of a SyncInterval:
// the shared store, and jars that never sync.
const (
	SyncEveryRequest time.Duration = 0
	SyncNever        time.Duration = -1
)

// sharedCopy is the index of a synced topology's shared copy among its copies:
// after the servers' jars.
func (t *Topology) sharedCopy() int { return t.cfg.Servers }

// SyncRoute is the shared copy a synced topology's server reaches at at,
// for its pushes and its reads, or Unreachable: during an outage, and
// during a partition that puts the server on another side than the
// shared copy. It is Unreachable on every other kind.
func (t *Topology) SyncRoute(server int, at algorithms.Time) int {
	shared := t.sharedCopy()
	switch {
	case t.Kind() != Synced || t.outages > 0:
		return Unreachable
	case t.partitioned && t.side(server) != t.nodeSide[shared]:
		return Unreachable
	}
	return shared
}

// SyncPhase is when server's pushes fall in each SyncInterval: the
// servers' pushes spread evenly over it, server s at s × I / N, so that
// they do not all land at once (Kong's timers start at each worker's
// first increment, gubernator's at each node's first queued hit: spread
// in practice).
func (t *Topology) SyncPhase(server int) time.Duration {
	if t.cfg.SyncInterval <= 0 || t.cfg.Servers <= 0 {
		return 0
	}
	return time.Duration(int64(t.cfg.SyncInterval) / int64(t.cfg.Servers) * int64(server))
}

// NextPush is server's first push after wall (µs since the Unix epoch):
// the pushes fall where wall − SyncPhase(server) is a whole number of
// intervals, anchored to the wall clock, so that a live fleet and the
// simulator of its observed run (whose virtual 0 is the run's wall-clock
// start) push at the same instants.
func (t *Topology) NextPush(server int, wall algorithms.Time) algorithms.Time {
	iv := int64(algorithms.At(t.cfg.SyncInterval))
	if iv <= 0 {
		return wall
	}
	phase := int64(algorithms.At(t.SyncPhase(server)))
	k := (int64(wall) - phase) / iv
	if int64(wall)-phase < 0 && (int64(wall)-phase)%iv != 0 {
		k-- // floor, not truncation, before the phase
	}
	return algorithms.Time(phase + (k+1)*iv)
}
