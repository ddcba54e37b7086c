package store

import (
	"context"
	"errors"
	"hash/maphash"
	"sort"
	"time"

	"github.com/ratelim/ratelim/algorithms"
)

// shardCount is a power of two well above the cores of a typical API server,
// so that goroutines deciding for different keys rarely meet on one mutex.
const shardCount = 64

// Memory keeps every key's state in this process: the limiter a single API
// server would keep, or, shared by every simulated server, the semantics of
// one Redis running the Lua twin (one atomic step per decision) without the
// round trip. It is safe for concurrent use. Keys are spread over shards,
// each with its own mutex, so goroutines on many keys do not serialise.
//
// A sliding log's State is bounded by its limit, every other algorithm's by
// three integers; what grows is the number of keys. How a Memory keeps that
// in check is what its [MemoryOptions] say: the zero options (what
// [NewMemory] builds) keep every key until [Memory.Sweep] is called, exact
// for any order of instants, as the simulator needs; a server builds one
// with [NewServerMemory] or [NewMemoryWith], which forgets full keys as it
// goes and holds at most MaxKeys.
//
// The zero Memory is an empty store with the zero options and no algorithm.
// As a [KV] it is ready to use: Load, Save, Len, Keys, Stats and Sweep work
// on it, and it keeps every key Saved to it, since without an algorithm it
// cannot tell when a state is back to full. But it has nothing to decide
// with, so its Take fails with an error saying so, rather than admitting or
// refusing on no grounds; behind [WithPolicy] (as package httplimit puts
// every store) the fail policy then decides every request. Build a limiter
// with [NewMemory].
type Memory struct {
	alg algorithms.Algorithm
	// inPlace is alg when it can step an entry's state where it lies (the
	// token bucket, the sliding log, the fixed and sliding windows, a
	// Multi of several): no State copied in and out, and a
	// sliding log appended to rather than copied whole, which would cost
	// O(limit) per admission. It is safe because no one else can write
	// into an entry's log: Load hands out, and Save keeps, logs whose
	// capacity ends at their length, so an append to either side moves to
	// an array of its own.
	inPlace inPlaceStepper
	// limits is how many limits alg has when it is a Multi of a few
	// (algorithms.Multi), whose entries then hold their per-limit states
	// in the same allocation (entryWith2, entryWith4); 0 otherwise.
	limits   int
	forget   bool
	grace    algorithms.Time
	perShard int // the most keys one shard holds; 0 for no bound
	shards   [shardCount]memoryShard
}

// MemoryOptions say how a [Memory] bounds the keys it holds. The zero
// options bound nothing: the store keeps every key it has seen until
// [Memory.Sweep] is called.
//
// Forgetting rests on one fact: every algorithm's Decision says, in
// ResetAfter, when the key's state is back to full (a bucket refilled, a
// window past), and from then on the state decides exactly as the zero
// State, a key never seen, does. Forgetting such a key changes no decision,
// as long as no later request comes with an instant earlier than the one
// the key was forgotten at; Grace is the slack for a clock that steps back.
type MemoryOptions struct {
	// Forget makes the store forget full keys as it goes, without anyone
	// calling Sweep: each Take or Save also looks at the next entry of its
	// shard, two if it added a key, in a walk that goes round the shard
	// again and again, and forgets those that have been full for longer
	// than Grace at the call's instant. The walk thus goes round a shard
	// at least twice as fast as keys are added to it, which keeps a shard
	// under traffic at most about twice the keys that are not full;
	// when a walk round a shard finds it a quarter of its peak, the shard's
	// map is rebuilt at the smaller size, since a Go map never shrinks.
	// A shard that no request reaches keeps what it has: a server that can
	// go quiet calls Sweep from a ticker as well.
	//
	// A store shared by servers whose clocks disagree by more than Grace
	// (the simulator's clock-skew faults) must not forget: a lagging
	// server would find a fresh key where the real state was still
	// refilling at its instant.
	Forget bool
	// Grace is how long after its state is back to full a key is still
	// kept, by Forget, by Sweep and when the store is full: a clock that
	// steps back by up to Grace (an NTP correction) cannot tell the
	// difference. 0 forgets at once; [DefaultGrace] suits a server.
	// Negative counts as 0.
	Grace time.Duration
	// MaxKeys, if above 0, is the most keys the store holds. It is shared
	// evenly among the store's 64 shards, so the bound is MaxKeys rounded
	// up to a multiple of 64, and a shard fills a little before the whole
	// store does.
	//
	// When a new key finds its shard full, the store looks at the next 16
	// entries of the shard's walk (the one Forget makes). It forgets every
	// one that is past its Grace; if none is, it evicts the one whose state
	// will be back to full soonest: the key whose loss changes least, since
	// an evicted key starts again from full, which its state nearly was.
	// The key that evicted it is then admitted as usual. Take never fails
	// for want of room: a limiter that refused new keys would, under a
	// flood of keys, let its fail policy decide for every new client, all
	// let through (fail-open) or all turned away (fail-closed). Evicting
	// by nearest expiry, like Redis's volatile-ttl on a sample, keeps the
	// clients being limited hardest (whose states are far from full) the
	// longest. [Memory.Stats] counts the evictions.
	MaxKeys int
}

// DefaultGrace is the Grace of [NewServerMemory]: longer than any step a
// synchronised clock takes back, shorter than anything a person would
// notice a key being kept for. The Redis twins keep a key a second longer
// than its state matters for the same reason.
const DefaultGrace = time.Second

// DefaultMaxKeys is the MaxKeys of [NewServerMemory]: 2^20, about a
// million keys that are not yet full. With a token bucket that is about
// 200 to 250 MB of live heap for keys of 12 to 64 bytes (each key costs
// its length, rounded up to Go's allocation size class, and about 175
// bytes more: 233 MB for 36-byte keys), measured by
// BenchmarkServerMemoryFull. A server's RSS is more: GOGC lets the heap
// grow to twice what is live, and a `ratelim serve` process sent 2^20
// distinct API keys over HTTP peaked at 466 MB.
// More distinct clients than that in one refill period is an attack, not a
// customer base, and eviction then decides who is remembered.
const DefaultMaxKeys = 1 << 20

// NewMemory returns an empty in-process store deciding with alg that keeps
// every key until [Memory.Sweep] forgets it: the zero [MemoryOptions]. Its
// decisions are exact whatever order instants come in, which is what the
// simulator, whose servers' clocks may disagree, relies on.
func NewMemory(alg algorithms.Algorithm) *Memory {
	return NewMemoryWith(alg, MemoryOptions{})
}

// NewServerMemory returns the in-process store an API server should run:
// it forgets full keys as it goes, with [DefaultGrace], and holds at most
// [DefaultMaxKeys].
func NewServerMemory(alg algorithms.Algorithm) *Memory {
	return NewMemoryWith(alg, MemoryOptions{Forget: true, Grace: DefaultGrace, MaxKeys: DefaultMaxKeys})
}

// NewMemoryWith returns an empty in-process store deciding with alg and
// bounding its keys as opts say.
func NewMemoryWith(alg algorithms.Algorithm, opts MemoryOptions) *Memory {
	m := &Memory{alg: alg, forget: opts.Forget, grace: algorithms.At(max(opts.Grace, 0))}
	m.inPlace, _ = alg.(inPlaceStepper)
	if multi, ok := alg.(*algorithms.Multi); ok && multi.Len() <= 4 {
		m.limits = multi.Len()
	}
	if opts.MaxKeys > 0 {
		m.perShard = (opts.MaxKeys + shardCount - 1) / shardCount
	}
	for i := range m.shards {
		m.shards[i].init()
	}
	return m
}

// Algorithm returns the algorithm the store decides with: nil for the zero
// Memory.
func (m *Memory) Algorithm() algorithms.Algorithm { return m.alg }

// shardSeed spreads keys over shards. One seed for the process, not one per
// store, so that a zero Memory hashes without being initialised: keys
// chosen to pile onto one shard still need a seed no client can see.
var shardSeed = maphash.MakeSeed()

func (m *Memory) shard(key string) *memoryShard {
	return &m.shards[maphash.String(shardSeed, key)&(shardCount-1)]
}

// errNoAlgorithm is what Take answers on a Memory built without an
// algorithm: the zero Memory, or NewMemory(nil).
var errNoAlgorithm = errors.New("store: Memory has no algorithm to decide with (build it with store.NewMemory(alg))")

// expiresNever is the expiry of a state no algorithm can read: a Memory
// without one keeps it until it is overwritten.
const expiresNever = algorithms.Time(1<<63 - 1)

// cutoff is the instant before which a key full since then may be
// forgotten, at now: Grace earlier, saturating rather than wrapping.
func (m *Memory) cutoff(now algorithms.Time) algorithms.Time {
	if now < minTime+m.grace {
		return minTime
	}
	return now - m.grace
}

const minTime = algorithms.Time(-1 << 63)

// Take decides one request atomically: no other decision on key runs between
// this one's read and write. It fails only for a negative cost and on a
// Memory with no algorithm, which cannot decide; never for want of room: a
// new key that finds the store full evicts another (see
// [MemoryOptions.MaxKeys]).
func (m *Memory) Take(_ context.Context, key string, now algorithms.Time, cost int64) (Decision, error) {
	if err := CheckCost(cost); err != nil {
		return Decision{}, err
	}
	if m.alg == nil {
		return Decision{}, errNoAlgorithm
	}
	sh := m.shard(key)
	sh.mu.Lock()
	sh.init()
	sh.now = max(sh.now, now)
	look := 1
	e := sh.keys[key]
	if e == nil {
		e = m.insert(sh, key, now)
		look++
	}
	var d algorithms.Decision
	expires := now
	if m.inPlace != nil {
		d = m.inPlace.StepInPlace(&e.state, now, cost)
	} else {
		prev := e.state
		e.state, d = m.alg.Step(e.state, now, cost)
		if !d.Allowed && sameCounters(prev, e.state) {
			// A refusal that wrote nothing leaves the state as full,
			// or not, as it was: a limiter that misreports the reset of
			// such a refusal (throttled's for a cost over its burst
			// says 0) must not make the store forget a key that is not
			// back to full.
			expires = max(expires, e.expires)
		}
	}
	// expires ≥ now, so the sweep below never forgets e itself.
	e.expires = max(expires, now+algorithms.At(d.ResetAfter))
	if m.forget {
		m.sweepSome(sh, now, look)
	}
	sh.mu.Unlock()
	return Decision{Decision: d}, nil
}

// Load returns key's state, the zero State for a key never seen (or
// forgotten, which is the same).
func (m *Memory) Load(_ context.Context, key string) (algorithms.State, error) {
	sh := m.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if e := sh.keys[key]; e != nil {
		return e.state.Capped(), nil
	}
	return algorithms.State{}, nil
}

// inPlaceStepper is an algorithm that steps a state its caller owns where
// it lies (algorithms.TokenBucket, algorithms.SlidingLog).
type inPlaceStepper interface {
	StepInPlace(st *algorithms.State, now algorithms.Time, cost int64) algorithms.Decision
}

// Save replaces key's state, whatever was decided since it was loaded: the
// write half of a non-atomic read-modify-write. Memory ignores ttl: it
// forgets states by what they say, at the latest instant a Take on the
// key's shard has been given (so a store only ever Saved to forgets
// nothing by itself). Save never fails: a new key that finds the store
// full evicts another, as Take's does.
func (m *Memory) Save(_ context.Context, key string, st algorithms.State, _ time.Duration) error {
	// A saved state is taken at its word: it expires when a peek says it
	// has reset. Peeking at its own time is enough for every algorithm.
	expires := expiresNever
	if m.alg != nil {
		at := algorithms.Time(latestInstant(st))
		_, d := m.alg.Step(st, at, 0)
		expires = at + algorithms.At(d.ResetAfter)
	}
	sh := m.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.init()
	look := 1
	e := sh.keys[key]
	if e == nil {
		e = m.insert(sh, key, sh.now)
		look++
	}
	e.state = st.Capped() // the caller's log stays the caller's
	e.expires = expires
	if m.forget {
		// Save is given no instant, and a state's own may be in the
		// future (GCRA's is the theoretical arrival time): sweep at the
		// latest a Take has seen. A newer e survives; an older one is
		// forgotten, as a saved state already full should be.
		m.sweepSome(sh, sh.now, look)
	}
	return nil
}

// latestInstant is the latest instant st holds: its T, its log's newest
// entry, or, for a key with several limits, the latest of theirs.
func latestInstant(st algorithms.State) int64 {
	at := st.T
	if len(st.Log) > 0 {
		at = max(at, st.Log[len(st.Log)-1])
	}
	for _, sub := range st.Sub {
		at = max(at, latestInstant(sub))
	}
	return at
}

// MemoryStats are a [Memory]'s counts, for a server's metrics.
type MemoryStats struct {
	// Keys is the number of keys held, as Len.
	Keys int
	// Forgotten counts keys forgotten because their state was back to
	// full: by Forget's sweep, by Sweep, and by a full store making room.
	// No decision differs for them.
	Forgotten int64
	// Evictions counts keys forgotten while their state was not yet full,
	// because the store was full (MaxKeys): each is a client whose next
	// request starts from a full limit again. A rising count means MaxKeys
	// is too small for the traffic, or the traffic is a flood of keys.
	Evictions int64
}

// Stats returns the store's counts since it was built.
func (m *Memory) Stats() MemoryStats {
	var s MemoryStats
	for i := range m.shards {
		sh := &m.shards[i]
		sh.mu.Lock()
		s.Keys += len(sh.keys)
		s.Forgotten += sh.forgot
		s.Evictions += sh.evicts
		sh.mu.Unlock()
	}
	return s
}

// Len returns the number of keys the store holds.
func (m *Memory) Len() int {
	n := 0
	for i := range m.shards {
		sh := &m.shards[i]
		sh.mu.Lock()
		n += len(sh.keys)
		sh.mu.Unlock()
	}
	return n
}

// Keys returns the keys the store holds, sorted, so that whoever walks them
// (a simulator taking snapshots) does so in the same order every run.
func (m *Memory) Keys() []string {
	var keys []string
	for i := range m.shards {
		sh := &m.shards[i]
		sh.mu.Lock()
		for k := range sh.keys {
			keys = append(keys, k)
		}
		sh.mu.Unlock()
	}
	sort.Strings(keys)
	return keys
}

// sameCounters reports whether a and b hold the same counters and a log of
// the same length: what a refusal, which appends nothing, leaves alike.
func sameCounters(a, b algorithms.State) bool {
	if a.T != b.T || a.N != b.N || a.Prev != b.Prev || len(a.Log) != len(b.Log) || len(a.Sub) != len(b.Sub) {
		return false
	}
	for i := range a.Sub {
		if !sameCounters(a.Sub[i], b.Sub[i]) {
			return false
		}
	}
	return true
}
