package store

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/ratelim/ratelim/algorithms"
)

// TestForgettingChangesNoDecision is the invariant Forget rests on: a key
// whose state is back to full decides as the zero State does, so a store
// that forgets such keys decides exactly as one that keeps every key, for
// every algorithm, whatever the arrivals, as long as no instant is more
// than Grace earlier than one the store has already seen. Saves (a racy
// read-modify-write's second half) are mixed in, with the state the exact
// store would have after the step.
// forgettable are the algorithms whose state is, once ResetAfter has
// passed, that of a key never seen: all but go-limiter, whose ticks stay
// anchored at a key's first hit until the library's own sweeper deletes
// the key after SweepMinTTL (12 h idle by default), so that forgetting it
// sooner moves its ticks (see peers.GoLimiter).
func forgettable() []string {
	return slices.DeleteFunc(algorithms.Names(), func(name string) bool { return name == "go-limiter" })
}

func TestForgettingChangesNoDecision(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		name := rapid.SampledFrom(forgettable()).Draw(rt, "algorithm")
		p := algorithms.Params{
			Rate:   algorithms.Rate{N: rapid.Int64Range(1, 50).Draw(rt, "rate"), Per: rapid.SampledFrom([]time.Duration{time.Second, 3 * time.Second}).Draw(rt, "per")},
			Burst:  rapid.Int64Range(1, 8).Draw(rt, "burst"),
			Window: time.Duration(rapid.Int64Range(1, 2_000_000).Draw(rt, "window_us")) * time.Microsecond,
		}
		alg, err := algorithms.New(name, p)
		if err != nil {
			rt.Skipf("%s: %v", name, err) // a window too short for the rate
		}
		grace := rapid.Int64Range(0, 500_000).Draw(rt, "grace_us")
		exact := NewMemory(alg)
		forgetful := NewMemoryWith(alg, MemoryOptions{Forget: true, Grace: time.Duration(grace) * time.Microsecond})
		ctx := context.Background()

		keys := rapid.IntRange(1, 40).Draw(rt, "keys")
		latest := algorithms.Time(0) // the latest instant either store has been given
		steps := rapid.IntRange(1, 400).Draw(rt, "steps")
		for i := range steps {
			key := fmt.Sprint("k", rapid.IntRange(0, keys-1).Draw(rt, "key"))
			dt := rapid.OneOf(
				rapid.Int64Range(-grace, 0), // a clock stepping back, within Grace
				rapid.Int64Range(0, 1_000),
				rapid.Int64Range(0, 3_000_000),
			).Draw(rt, "dt_us")
			now := max(latest+algorithms.Time(dt), 0)
			latest = max(latest, now)
			cost := rapid.Int64Range(0, 3).Draw(rt, "cost")

			if rapid.IntRange(0, 9).Draw(rt, "op") == 0 { // one in ten: a Save
				st, _ := exact.Load(ctx, key)
				st, _ = alg.Step(st, now, cost)
				exact.Save(ctx, key, st, 0)
				forgetful.Save(ctx, key, st, 0)
				continue
			}
			want, _ := exact.Take(ctx, key, now, cost)
			got, err := forgetful.Take(ctx, key, now, cost)
			if err != nil || got != want {
				rt.Fatalf("step %d, %s at %d cost %d: forgetting store decided %+v, %v; the exact one %+v",
					i, key, now, cost, got, err, want)
			}
		}
	})
}

// TestForgetKeepsAShardNearItsLiveKeys: with Forget, nobody calls Sweep,
// and a stream of new keys each full again 100 ms later leaves the store
// holding about the keys of the last 100 ms, not every key it has seen.
func TestForgetKeepsAShardNearItsLiveKeys(t *testing.T) {
	m := NewMemoryWith(tokenBucket(t, 10, 5), MemoryOptions{Forget: true}) // one token back in 100 ms
	ctx := context.Background()
	const n, gap = 200_000, 10 // a new key every 10 µs: 10,000 keys in 100 ms
	const live = 100_000 / gap
	most := 0
	for i := range n {
		m.Take(ctx, fmt.Sprint("k", i), algorithms.Time(i*gap), 1)
		if i%1000 == 0 {
			most = max(most, m.Len())
		}
	}
	if most > 3*live {
		t.Errorf("held up to %d keys, want at most 3 × the %d not yet full", most, live)
	}
	s := m.Stats()
	if s.Forgotten < n-3*live || s.Evictions != 0 || s.Keys != m.Len() {
		t.Errorf("Stats = %+v after %d keys; want most forgotten, none evicted", s, n)
	}
	t.Logf("%d keys, %d live at a time: held at most %d", n, live, most)
}

// TestGraceDelaysForgetting: a key full at 500 ms is kept until Grace has
// passed too, by Sweep as by the sweep Take does.
func TestGraceDelaysForgetting(t *testing.T) {
	for _, tc := range []struct {
		grace      time.Duration
		at         time.Duration // when Sweep runs
		wantForgot int
	}{
		{0, 499 * time.Millisecond, 0},
		{0, 501 * time.Millisecond, 1},
		{time.Second, 1499 * time.Millisecond, 0},
		{time.Second, 1501 * time.Millisecond, 1},
		{-time.Second, 501 * time.Millisecond, 1}, // negative is 0
	} {
		m := NewMemoryWith(tokenBucket(t, 10, 5), MemoryOptions{Forget: true, Grace: tc.grace})
		m.Take(context.Background(), "k", 0, 5) // full again at 500 ms
		if got := m.Sweep(algorithms.At(tc.at)); got != tc.wantForgot {
			t.Errorf("grace %v, Sweep at %v forgot %d keys, want %d", tc.grace, tc.at, got, tc.wantForgot)
		}
	}
}

// sameShard returns n keys, named prefix0, prefix1, ..., that hash to one
// shard of m.
func sameShard(m *Memory, prefix string, n int) []string {
	want := m.shard(prefix + "0")
	keys := []string{prefix + "0"}
	for i := 1; len(keys) < n; i++ {
		if k := fmt.Sprint(prefix, i); m.shard(k) == want {
			keys = append(keys, k)
		}
	}
	return keys
}

// TestFullStoreForgetsThenEvictsTheSoonestFull steps through the policy
// when a new key finds its shard full: expired keys go first; if none is,
// the key nearest to full is evicted, and never the new one.
func TestFullStoreForgetsThenEvictsTheSoonestFull(t *testing.T) {
	type take struct {
		key  int           // index into keys of one shard
		at   time.Duration // instant
		cost int64         // with rate 10/s: each token is back in 100 ms
	}
	for _, tc := range []struct {
		name          string
		takes         []take
		wantKept      []int // keys held at the end
		wantForgotten int64
		wantEvictions int64
	}{
		{"room left", []take{{0, 0, 5}, {1, 0, 1}}, []int{0, 1}, 0, 0},
		{"expired key forgotten, not evicted", []take{{0, 0, 5}, {1, 0, 1}, {2, 200 * time.Millisecond, 1}}, []int{0, 2}, 1, 0},
		{"soonest full evicted", []take{{0, 0, 5}, {1, 0, 1}, {2, 50 * time.Millisecond, 1}}, []int{0, 2}, 0, 1},
		{"soonest full evicted, whatever the order", []take{{0, 0, 1}, {1, 0, 5}, {2, 50 * time.Millisecond, 1}}, []int{1, 2}, 0, 1},
		{"a key already held evicts nothing", []take{{0, 0, 5}, {1, 0, 1}, {1, 50 * time.Millisecond, 1}}, []int{0, 1}, 0, 0},
		{"every new key finds room", []take{{0, 0, 5}, {1, 0, 4}, {2, 0, 3}, {3, 0, 2}}, []int{0, 3}, 0, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMemoryWith(tokenBucket(t, 10, 5), MemoryOptions{MaxKeys: 2 * shardCount}) // 2 keys a shard
			keys := sameShard(m, "k", 4)
			for _, s := range tc.takes {
				if _, err := m.Take(context.Background(), keys[s.key], algorithms.At(s.at), s.cost); err != nil {
					t.Fatalf("Take(%s at %v): %v", keys[s.key], s.at, err)
				}
			}
			var want []string
			for _, i := range tc.wantKept {
				want = append(want, keys[i])
			}
			slices.Sort(want) // as Keys returns them
			if got := m.Keys(); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("kept %v, want %v", got, want)
			}
			if s := m.Stats(); s.Forgotten != tc.wantForgotten || s.Evictions != tc.wantEvictions {
				t.Errorf("Stats = %+v, want %d forgotten and %d evicted", s, tc.wantForgotten, tc.wantEvictions)
			}
		})
	}
}

// TestSaveIntoAFullStoreEvicts: a racy read-modify-write's Save makes room
// as a Take does, at the latest instant a Take has seen.
func TestSaveIntoAFullStoreEvicts(t *testing.T) {
	alg := tokenBucket(t, 10, 5)
	m := NewMemoryWith(alg, MemoryOptions{MaxKeys: shardCount}) // 1 key a shard
	keys := sameShard(m, "k", 2)
	ctx := context.Background()
	m.Take(ctx, keys[0], 0, 1)
	st, _ := alg.Step(algorithms.State{}, 0, 5)
	if err := m.Save(ctx, keys[1], st, 0); err != nil {
		t.Fatal(err)
	}
	if got := m.Keys(); len(got) != 1 || got[0] != keys[1] || m.Stats().Evictions != 1 {
		t.Errorf("after Save into a full shard: keys %v, %+v; want only %s, one eviction", got, m.Stats(), keys[1])
	}
}

// TestAMillionKeysInBoundedMemory is the flood the issue measured against
// serve (a million distinct API keys: 20 MB to 286 MB, held after every
// bucket had reset): against a store with Forget and MaxKeys, at advancing
// instants, the keys held and the heap stay bounded, and once every
// bucket has reset a Sweep gives the memory back.
//
// Measured on the memory store before Forget: +144 MB of heap for the
// million, +56 MB still held after a Sweep had forgotten every key.
func TestAMillionKeysInBoundedMemory(t *testing.T) {
	n := 1_000_000
	if testing.Short() || raceEnabled {
		n = 50_000
	}
	for _, tc := range []struct {
		name    string
		rate    int64 // per second; burst 5, one token per request
		maxKeys int
		// maxLen bounds Len at every check; maxHeapMB the heap after GC
		// with the store at its fullest.
		maxLen    int
		maxHeapMB float64
	}{
		// A token is back in 100 ms and a key arrives every 10 µs: about
		// 10,000 keys are not yet full at any time.
		{"keys that reset", 10, 50_000, 30_000, 8},
		// Nothing resets within the run: MaxKeys decides, by evicting.
		{"keys that do not reset", 1, 20_000, 20_000 + shardCount, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMemoryWith(tokenBucket(t, tc.rate, 5), MemoryOptions{Forget: true, MaxKeys: tc.maxKeys})
			base := heapMB()
			ctx := context.Background()
			key := make([]byte, 0, 32)
			most := 0
			for i := range n {
				key = fmt.Appendf(key[:0], "key:client-%07d", i)
				m.Take(ctx, string(key), algorithms.Time(i*10), 1)
				if i%10_000 == 0 {
					if l := m.Len(); l > tc.maxLen {
						t.Fatalf("after %d keys the store holds %d, want at most %d", i, l, tc.maxLen)
					} else {
						most = max(most, l)
					}
				}
			}
			heap := heapMB() - base
			s := m.Stats()
			t.Logf("%d keys: held at most %d, heap +%.1f MB; %+v", n, most, heap, s)
			if heap > tc.maxHeapMB {
				t.Errorf("heap grew %.1f MB for %d keys, want at most %.0f MB", heap, n, tc.maxHeapMB)
			}
			if int64(n) != s.Forgotten+s.Evictions+int64(s.Keys) {
				t.Errorf("%d keys went in but %+v account for them", n, s)
			}
			m.Sweep(algorithms.Time(n*10) + algorithms.At(time.Hour))
			after := heapMB() - base
			t.Logf("after every bucket reset and a Sweep: %d keys, heap +%.1f MB", m.Len(), after)
			if m.Len() != 0 || after > 2 {
				t.Errorf("after a Sweep past every reset: %d keys, heap +%.1f MB; want none and under 2 MB", m.Len(), after)
			}
			runtime.KeepAlive(m)
		})
	}
}

// heapMB returns the live heap in MB, after a collection.
func heapMB() float64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapAlloc) / 1e6
}

// TestBoundedMemoryUnderConcurrency runs Takes on many keys from several
// goroutines at once, for the race detector, and checks the bound holds.
func TestBoundedMemoryUnderConcurrency(t *testing.T) {
	const maxKeys = 4 * shardCount
	m := NewMemoryWith(tokenBucket(t, 1, 5), MemoryOptions{Forget: true, MaxKeys: maxKeys})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 5_000 {
				now := algorithms.Time(i * 100)
				m.Take(context.Background(), fmt.Sprint(g, "-", i), now, 1)
				if i%7 == 0 {
					m.Take(context.Background(), "shared", now, 1)
				}
			}
		})
	}
	wg.Go(func() {
		for i := range 50 {
			m.Sweep(algorithms.Time(i * 10_000))
			m.Stats()
		}
	})
	wg.Wait()
	if l := m.Len(); l > maxKeys {
		t.Errorf("held %d keys, want at most %d", l, maxKeys)
	}
}

// TestZeroMemory steps a zero Memory, and one built with no algorithm,
// through the documented behaviour: a KV that keeps what it is given, a
// Take that fails with errNoAlgorithm, and so a fail policy deciding.
func TestZeroMemory(t *testing.T) {
	ctx := context.Background()
	saved := algorithms.State{T: 7, N: 3, Log: []int64{5, 7}}
	for _, tc := range []struct {
		name string
		m    *Memory
	}{
		{"zero", &Memory{}},
		{"NewMemory(nil)", NewMemory(nil)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.m
			if m.Algorithm() != nil {
				t.Errorf("Algorithm() = %v, want nil", m.Algorithm())
			}
			steps := []struct {
				what string
				do   func() error
			}{
				{"Load of a key never seen", func() error {
					st, err := m.Load(ctx, "a")
					if err != nil || !reflect.DeepEqual(st, algorithms.State{}) {
						return fmt.Errorf("got %+v, %v; want the zero State", st, err)
					}
					return nil
				}},
				{"Take", func() error {
					d, err := m.Take(ctx, "a", 0, 1)
					if !errors.Is(err, errNoAlgorithm) || d != (Decision{}) {
						return fmt.Errorf("got %+v, %v; want errNoAlgorithm", d, err)
					}
					return nil
				}},
				{"Take of cost 0", func() error {
					if _, err := m.Take(ctx, "a", 0, 0); !errors.Is(err, errNoAlgorithm) {
						return fmt.Errorf("got %v; want errNoAlgorithm", err)
					}
					return nil
				}},
				{"Take of a negative cost", func() error {
					if _, err := m.Take(ctx, "a", 0, -1); err == nil || errors.Is(err, errNoAlgorithm) {
						return fmt.Errorf("got %v; want the negative-cost error", err)
					}
					return nil
				}},
				{"Take through a fail-closed policy", func() error {
					d, err := WithPolicy(m, FailClosed).Take(ctx, "a", 0, 1)
					if err != nil || d.Allowed || d.Policy != FailClosed || !errors.Is(d.Err, errNoAlgorithm) {
						return fmt.Errorf("got %+v, %v; want a fail-closed rejection naming errNoAlgorithm", d, err)
					}
					return nil
				}},
				{"Len after failed Takes", func() error {
					if n := m.Len(); n != 0 {
						return fmt.Errorf("got %d keys; want 0: a Take that cannot decide stores nothing", n)
					}
					return nil
				}},
				{"Save", func() error { return m.Save(ctx, "b", saved, time.Second) }},
				{"Load after Save", func() error {
					st, err := m.Load(ctx, "b")
					if err != nil || !reflect.DeepEqual(st, saved) {
						return fmt.Errorf("got %+v, %v; want %+v", st, err, saved)
					}
					return nil
				}},
				{"Sweep far in the future", func() error {
					if n := m.Sweep(algorithms.At(1000 * time.Hour)); n != 0 {
						return fmt.Errorf("forgot %d keys; want 0: with no algorithm no state is known to be full", n)
					}
					return nil
				}},
				{"Keys, Len and Stats", func() error {
					keys, stats := m.Keys(), m.Stats()
					if !slices.Equal(keys, []string{"b"}) || m.Len() != 1 || stats != (MemoryStats{Keys: 1}) {
						return fmt.Errorf("got keys %v, len %d, stats %+v; want [b], 1, {Keys:1}", keys, m.Len(), stats)
					}
					return nil
				}},
			}
			for i, s := range steps {
				if err := s.do(); err != nil {
					t.Fatalf("step %d (%s): %v", i, s.what, err)
				}
			}
		})
	}
}

// TestZeroMemoryConcurrently is for the race detector: a zero Memory's
// shards are readied by whichever goroutine reaches them first.
func TestZeroMemoryConcurrently(t *testing.T) {
	var m Memory
	ctx := context.Background()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				key := fmt.Sprint("k", i)
				if err := m.Save(ctx, key, algorithms.State{T: int64(g)}, 0); err != nil {
					t.Error(err)
				}
				if _, err := m.Load(ctx, key); err != nil {
					t.Error(err)
				}
				if _, err := m.Take(ctx, key, 0, 1); !errors.Is(err, errNoAlgorithm) {
					t.Errorf("Take: %v, want errNoAlgorithm", err)
				}
				m.Len()
			}
		})
	}
	wg.Wait()
	if n := m.Len(); n != 200 {
		t.Fatalf("Len() = %d after 8 goroutines saved the same 200 keys; want 200", n)
	}
}

// TestMemoryInPlaceLogSharesNothing: the memory store appends to a
// sliding log where it lies, and still no log it handed out (Load) or was
// given (Save) changes: what a racy read and a replica, holding such logs
// while the primary goes on admitting, rely on.
func TestMemoryInPlaceLogSharesNothing(t *testing.T) {
	ctx := context.Background()
	alg, err := algorithms.NewSlidingLog(algorithms.Rate{N: 100, Per: time.Second}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	primary, replica := NewMemory(alg), NewMemory(alg)
	at := func(i int) algorithms.Time { return algorithms.Time(i * 1000) } // 1 ms apart
	for i := range 10 {
		if _, err := primary.Take(ctx, "k", at(i), 1); err != nil {
			t.Fatal(err)
		}
	}
	loaded, err := primary.Load(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(loaded.Log)
	// The replica gets the primary's state, then both admit on.
	if err := replica.Save(ctx, "k", loaded, time.Hour); err != nil {
		t.Fatal(err)
	}
	for i := 10; i < 40; i++ {
		if _, err := primary.Take(ctx, "k", at(i), 1); err != nil {
			t.Fatal(err)
		}
		if _, err := replica.Take(ctx, "k", at(i)+500, 1); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(loaded.Log, want) {
		t.Errorf("a loaded log changed under its holder: %v, was %v", loaded.Log, want)
	}
	p, _ := primary.Load(ctx, "k")
	r, _ := replica.Load(ctx, "k")
	if len(p.Log) != 40 || len(r.Log) != 40 {
		t.Fatalf("logs of %d and %d entries, want 40 each", len(p.Log), len(r.Log))
	}
	for i := range 40 {
		wantP, wantR := int64(at(i)), int64(at(i))
		if i >= 10 {
			wantR += 500
		}
		if p.Log[i] != wantP || r.Log[i] != wantR {
			t.Fatalf("entry %d: primary %d (want %d), replica %d (want %d): one wrote into the other's log", i, p.Log[i], wantP, r.Log[i], wantR)
		}
	}
}

// A key with several limits keeps its per-limit states beside its entry,
// and an entry freed by eviction is reused for the next key: that key
// starts from nothing, whatever the evicted one had counted. Against the
// Go step, key by key, with the store evicting all the while (one key a
// shard).
func TestMemoryMultiEntriesReusedClean(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5} { // beside the entry for up to 4; 5 on their own
		policies := make([]algorithms.Policy, n)
		for i := range policies {
			alg, err := algorithms.NewFixedWindow(algorithms.Rate{N: int64(3 + i), Per: time.Hour}, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			policies[i] = algorithms.Policy{Name: fmt.Sprint("l", i), Algorithm: alg}
		}
		multi, err := algorithms.NewMulti(policies)
		if err != nil {
			t.Fatal(err)
		}
		m := NewMemoryWith(multi, MemoryOptions{MaxKeys: shardCount})
		ctx := context.Background()
		for i := range 2000 {
			key := fmt.Sprint("k", i%300)
			now := algorithms.Time(i)
			// Evicted since, or not: what the store holds is the truth for
			// a key it kept, nothing for one it dropped (and a reused entry
			// must not bring back what its last key counted).
			before, _ := m.Load(ctx, key)
			next, wd := multi.Step(before, now, 1)
			d, err := m.Take(ctx, key, now, 1)
			if err != nil {
				t.Fatal(err)
			}
			if d.Decision != wd {
				t.Fatalf("%d limits, request %d on %s: store %+v, Go %+v", n, i, key, d.Decision, wd)
			}
			if after, _ := m.Load(ctx, key); len(after.Sub) != len(next.Sub) || !EqualStates(after, next) {
				t.Fatalf("%d limits, request %d on %s: store holds %+v, Go %+v", n, i, key, after, next)
			}
		}
		if evicted := m.Stats().Evictions; evicted == 0 {
			t.Errorf("%d limits: nothing evicted, so no entry was reused", n)
		}
	}
}
