package store

// A Memory's keys, in shards: each holds its entries in a map and in a
// walk, the order the sweep visits them; a key is forgotten once its state
// is back to full (sweepSome as it goes, Sweep); a new key in a full shard
// frees the expired entries among a sample of it, or else evicts the one
// of them that expires soonest (makeRoom).

import (
	"sync"

	"github.com/ratelim/ratelim/algorithms"
)

// evictSample is how many entries a new key looks at when its shard is
// full, to find expired ones or the one to evict.
const evictSample = 16

// freeEntries is how many removed entries a shard keeps for new keys to
// reuse: where keys come and go, most insertions then allocate nothing.
const freeEntries = 32

// rebuildAt is the shard size below which its map is never rebuilt: small
// maps cost little however empty they are.
const rebuildAt = 256

type memoryShard struct {
	mu   sync.Mutex
	keys map[string]*memoryEntry // nil in a zero Memory until the shard's first key (init)
	// walk holds the same entries as keys, in the order the sweep visits
	// them; entry.at is an entry's index in walk. A removal moves the last
	// entry into the hole, so that removing costs O(1).
	walk   []*memoryEntry
	cursor int            // the next index of walk the sweep looks at
	free   []*memoryEntry // removed entries, for insert to reuse
	// now is the latest instant a Take on this shard was given (minTime
	// before the first): the instant Save, which is given none, sweeps at.
	now    algorithms.Time
	peak   int // the most keys held since keys was last rebuilt
	forgot int64
	evicts int64
	_      [64]byte // keep this shard's fields off the next shard's mutex's cache line
}

type memoryEntry struct {
	key     string
	state   algorithms.State
	expires algorithms.Time // when state is as good as the zero State
	at      int             // index in the shard's walk
}

// init readies a shard of a zero Memory for its first key; on one that is
// ready (every shard a constructor built) it does nothing. sh.mu is held.
func (sh *memoryShard) init() {
	if sh.keys == nil {
		sh.keys = make(map[string]*memoryEntry)
		sh.now = minTime
	}
}

// insert adds an entry for key, with the zero State, to sh, making room
// first if sh is full. sh.mu is held.
func (m *Memory) insert(sh *memoryShard, key string, now algorithms.Time) *memoryEntry {
	if m.perShard > 0 && len(sh.walk) >= m.perShard {
		m.makeRoom(sh, now)
	}
	var e *memoryEntry
	if n := len(sh.free); n > 0 {
		e, sh.free = sh.free[n-1], sh.free[:n-1]
		sub := e.state.Sub // an entry's own array, cleared when it was freed
		*e = memoryEntry{key: key, at: len(sh.walk)}
		e.state.Sub = sub
	} else {
		e = m.newEntry()
		e.key, e.at = key, len(sh.walk)
	}
	sh.keys[key] = e
	sh.walk = append(sh.walk, e)
	sh.peak = max(sh.peak, len(sh.walk))
	return e
}

// entryWith2 and entryWith4 are an entry and the per-limit states of a
// key with two limits, or up to four, in one allocation: a Multi steps
// each limit where its state lies, and a Sub array of its own, elsewhere
// on the heap, was a second cache miss on every decision (a third of a
// two-limit Take's time at 10k keys).
type entryWith2 struct {
	memoryEntry
	sub [2]algorithms.State
}

type entryWith4 struct {
	memoryEntry
	sub [4]algorithms.State
}

// newEntry returns a new zero entry; for a Multi of a few limits, its
// state's Sub is ready, beside it.
func (m *Memory) newEntry() *memoryEntry {
	switch {
	case m.limits == 0:
		return &memoryEntry{}
	case m.limits <= 2:
		w := &entryWith2{}
		w.state.Sub = w.sub[:m.limits:m.limits]
		return &w.memoryEntry
	default:
		w := &entryWith4{}
		w.state.Sub = w.sub[:m.limits:m.limits]
		return &w.memoryEntry
	}
}

// makeRoom frees at least one entry of the full shard sh: every expired
// one among the next evictSample of its walk, or, if none is, the one of
// them that expires soonest. sh.mu is held.
func (m *Memory) makeRoom(sh *memoryShard, now algorithms.Time) {
	cut := m.cutoff(now)
	soonest, freed := -1, false
	for range min(evictSample, len(sh.walk)) {
		if sh.cursor >= len(sh.walk) {
			sh.cursor = 0
		}
		e := sh.walk[sh.cursor]
		if e.expires < cut {
			sh.remove(sh.cursor) // the last entry moves here: look at it next
			sh.forgot++
			freed = true
			continue
		}
		if soonest < 0 || e.expires < sh.walk[soonest].expires {
			soonest = sh.cursor
		}
		sh.cursor++
	}
	if !freed && soonest >= 0 {
		sh.remove(soonest)
		sh.evicts++
	}
}

// sweepSome looks at the next n entries of sh's walk and forgets those
// expired before now's cutoff. At the end of each round of the walk it
// rebuilds a shard that has shrunk to a quarter of its peak. sh.mu is held.
//
// It compares expires < cutoff, never ≤: expires is now plus ResetAfter
// truncated to the microsecond, which may be a fraction of one before the
// state is truly full, and instants are whole microseconds.
func (m *Memory) sweepSome(sh *memoryShard, now algorithms.Time, n int) {
	cut := m.cutoff(now)
	for range n {
		if len(sh.walk) == 0 {
			return
		}
		if sh.cursor >= len(sh.walk) {
			sh.cursor = 0
			sh.shrink()
		}
		if sh.walk[sh.cursor].expires < cut {
			sh.remove(sh.cursor)
			sh.forgot++
		} else {
			sh.cursor++
		}
	}
}

// remove forgets the entry at index i of sh's walk, moving the last entry
// into its place. sh.mu is held.
func (sh *memoryShard) remove(i int) {
	e := sh.walk[i]
	delete(sh.keys, e.key)
	last := len(sh.walk) - 1
	sh.walk[i] = sh.walk[last]
	sh.walk[i].at = i
	sh.walk[last] = nil
	sh.walk = sh.walk[:last]
	if len(sh.free) < freeEntries {
		// Kept for the next key, which a busy server soon adds: the key
		// and the Log go now, not when the entry is reused. Its Sub, when
		// it has one, stays, cleared: an entry's Sub is its own (newEntry's,
		// or a copy Save or Release made), never handed out (Load copies).
		sub := e.state.Sub
		*e = memoryEntry{}
		if len(sub) > 0 {
			clear(sub)
			e.state.Sub = sub
		}
		sh.free = append(sh.free, e)
	}
}

// shrink rebuilds sh's map and walk at their present size if that is a
// quarter of the peak or less: a Go map keeps the table it grew to after
// its entries are deleted, and a flood of keys long gone would otherwise
// hold its memory for good. The cost, O(size), is paid once per shrink by
// four, so it is O(1) a removal. sh.mu is held.
func (sh *memoryShard) shrink() {
	n := len(sh.walk)
	if sh.peak < rebuildAt || n > sh.peak/4 {
		return
	}
	keys := make(map[string]*memoryEntry, n)
	walk := make([]*memoryEntry, n, max(n, 8))
	copy(walk, sh.walk)
	for _, e := range walk {
		keys[e.key] = e
	}
	sh.keys, sh.walk, sh.peak = keys, walk, n
}

// Sweep forgets every key whose state has been back to full since before
// now, less the store's Grace (a full bucket, a window long past), which
// is the same as the zero State, and returns how many it forgot. A store
// built with Forget does this as it goes; a server calls Sweep now and then
// too, from a ticker, for the shards no request reaches, and a store
// without Forget is only ever swept by it. Each shard's map is then rebuilt
// if it has shrunk to a quarter of its peak.
func (m *Memory) Sweep(now algorithms.Time) int {
	cut := m.cutoff(now)
	forgot := 0
	for i := range m.shards {
		sh := &m.shards[i]
		sh.mu.Lock()
		for j := 0; j < len(sh.walk); {
			if sh.walk[j].expires < cut {
				sh.remove(j)
				sh.forgot++
				forgot++
			} else {
				j++
			}
		}
		sh.cursor = 0
		sh.shrink()
		sh.mu.Unlock()
	}
	return forgot
}
