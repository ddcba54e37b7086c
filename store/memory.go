package store

import (
	"context"
	"hash/maphash"
	"sort"
	"sync"
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
// Memory holds one State per key it has seen until [Memory.Sweep] forgets
// the ones whose state has reset; a sliding log's State is bounded by its
// limit, every other algorithm's by three integers.
type Memory struct {
	alg    algorithms.Algorithm
	seed   maphash.Seed
	shards [shardCount]memoryShard
}

type memoryShard struct {
	mu   sync.Mutex
	keys map[string]*memoryEntry
	_    [40]byte // keep neighbouring shards' mutexes off one cache line
}

type memoryEntry struct {
	state   algorithms.State
	expires algorithms.Time // when state is as good as the zero State
}

// NewMemory returns an empty in-process store deciding with alg.
func NewMemory(alg algorithms.Algorithm) *Memory {
	m := &Memory{alg: alg, seed: maphash.MakeSeed()}
	for i := range m.shards {
		m.shards[i].keys = make(map[string]*memoryEntry)
	}
	return m
}

// Algorithm returns the algorithm the store decides with.
func (m *Memory) Algorithm() algorithms.Algorithm { return m.alg }

func (m *Memory) shard(key string) *memoryShard {
	return &m.shards[maphash.String(m.seed, key)&(shardCount-1)]
}

// Take decides one request atomically: no other decision on key runs between
// this one's read and write. It never fails but for a negative cost.
func (m *Memory) Take(_ context.Context, key string, now algorithms.Time, cost int64) (Decision, error) {
	if err := checkCost(cost); err != nil {
		return Decision{}, err
	}
	sh := m.shard(key)
	sh.mu.Lock()
	e := sh.keys[key]
	if e == nil {
		e = &memoryEntry{}
		sh.keys[key] = e
	}
	var d algorithms.Decision
	e.state, d = m.alg.Step(e.state, now, cost)
	e.expires = now + algorithms.At(d.ResetAfter)
	sh.mu.Unlock()
	return Decision{Decision: d}, nil
}

// Load returns key's state, the zero State for a key never seen.
func (m *Memory) Load(_ context.Context, key string) (algorithms.State, error) {
	sh := m.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if e := sh.keys[key]; e != nil {
		return e.state, nil
	}
	return algorithms.State{}, nil
}

// Save replaces key's state, whatever was decided since it was loaded: the
// write half of a non-atomic read-modify-write. Memory ignores ttl; Sweep
// forgets states by what they say.
func (m *Memory) Save(_ context.Context, key string, st algorithms.State, _ time.Duration) error {
	sh := m.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e := sh.keys[key]
	if e == nil {
		e = &memoryEntry{}
		sh.keys[key] = e
	}
	// A saved state is taken at its word: it expires when a peek says it
	// has reset. Peeking at its own time is enough for every algorithm.
	_, d := m.alg.Step(st, algorithms.Time(max(st.T, lastLogged(st))), 0)
	e.state = st
	e.expires = algorithms.Time(max(st.T, lastLogged(st))) + algorithms.At(d.ResetAfter)
	return nil
}

func lastLogged(st algorithms.State) int64 {
	if len(st.Log) == 0 {
		return 0
	}
	return st.Log[len(st.Log)-1]
}

// Sweep forgets every key whose state has reset by now (a full bucket, a
// window long past), which is the same as the zero State, and returns how
// many it forgot. A server calls it now and then to keep memory bounded by
// the keys active recently, as Redis's key expiry does.
func (m *Memory) Sweep(now algorithms.Time) int {
	forgot := 0
	for i := range m.shards {
		sh := &m.shards[i]
		sh.mu.Lock()
		for k, e := range sh.keys {
			if e.expires < now {
				delete(sh.keys, k)
				forgot++
			}
		}
		sh.mu.Unlock()
	}
	return forgot
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
