package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/store"
	"github.com/ratelim/ratelim/store/storetest"
)

// The memory store beside golang.org/x/time/rate in the same run:
//
//	go test -run '^$' -bench 'Memory|XTimeRate' -count 5 ./store
//
// XTimeRateAllowN is one limiter, the floor for a decision; XTimeRateKeys is
// what an API server using x/time/rate per key would write: a map of
// limiters behind a RWMutex. The memory store decides for 10,000 keys drawn
// at random, time passed in, as a server would.

const benchKeys = 10_000

func benchKeyNames() []string {
	keys := make([]string, benchKeys)
	for i := range keys {
		keys[i] = fmt.Sprintf("api-key-%05d", i)
	}
	return keys
}

// benchOrder is a fixed random sequence of key indexes, so that drawing a
// key costs the same for every store measured.
func benchOrder() []int {
	r := rand.New(rand.NewPCG(1, 2))
	order := make([]int, 1<<16)
	for i := range order {
		order[i] = r.IntN(benchKeys)
	}
	return order
}

func BenchmarkXTimeRateAllowN(b *testing.B) {
	lim := rate.NewLimiter(1000, 50)
	now := time.Unix(0, 0)
	for b.Loop() {
		now = now.Add(100 * time.Microsecond)
		lim.AllowN(now, 1)
	}
}

func BenchmarkXTimeRateKeys(b *testing.B) {
	keys, order := benchKeyNames(), benchOrder()
	var mu sync.RWMutex
	limiters := make(map[string]*rate.Limiter, benchKeys)
	for _, k := range keys {
		limiters[k] = rate.NewLimiter(1000, 50)
	}
	b.RunParallel(func(pb *testing.PB) {
		now := time.Unix(0, 0)
		i := 0
		for pb.Next() {
			i++
			now = now.Add(100 * time.Microsecond)
			mu.RLock()
			lim := limiters[keys[order[i&(len(order)-1)]]]
			mu.RUnlock()
			lim.AllowN(now, 1)
		}
	})
}

func benchMemory(b *testing.B, parallel bool) {
	alg, _ := algorithms.NewTokenBucket(algorithms.Rate{N: 1000, Per: time.Second}, 50)
	benchStore(b, store.NewMemory(alg), parallel)
}

// benchStore runs Takes on m for 10,000 keys drawn at random, time passed
// in, as a server would.
func benchStore(b *testing.B, m *store.Memory, parallel bool) {
	keys, order := benchKeyNames(), benchOrder()
	ctx := context.Background()
	for _, k := range keys {
		m.Take(ctx, k, 0, 0)
	}
	if !parallel {
		now, i := algorithms.Time(0), 0
		for b.Loop() {
			i++
			now += 100
			m.Take(ctx, keys[order[i&(len(order)-1)]], now, 1)
		}
		return
	}
	b.RunParallel(func(pb *testing.PB) {
		now, i := algorithms.Time(0), 0
		for pb.Next() {
			i++
			now += 100
			m.Take(ctx, keys[order[i&(len(order)-1)]], now, 1)
		}
	})
}

func BenchmarkMemory10kKeys(b *testing.B)         { benchMemory(b, false) }
func BenchmarkMemory10kKeysParallel(b *testing.B) { benchMemory(b, true) }

// The store a server runs (Forget, Grace, MaxKeys) on the same keys: what
// forgetting costs a decision when there is little to forget.
func benchServerMemory(b *testing.B, parallel bool) {
	alg, _ := algorithms.NewTokenBucket(algorithms.Rate{N: 1000, Per: time.Second}, 50)
	benchStore(b, store.NewServerMemory(alg), parallel)
}

func BenchmarkServerMemory10kKeys(b *testing.B)         { benchServerMemory(b, false) }
func BenchmarkServerMemory10kKeysParallel(b *testing.B) { benchServerMemory(b, true) }

// Above, a key comes back about once a second of virtual time, long after
// its bucket (1 ms to refill) is full, so most Takes forget a key and add
// one back: the price of giving memory back. Here the keys stay limited
// (a token a minute), nothing is forgotten, and what is measured is the
// walk alone.
func BenchmarkServerMemory10kLiveKeys(b *testing.B) {
	alg, _ := algorithms.NewTokenBucket(algorithms.Rate{N: 1, Per: time.Minute}, 50)
	benchStore(b, store.NewServerMemory(alg), false)
}

// The same keys on a store that never forgets: the baseline for the walk.
func BenchmarkMemory10kLiveKeys(b *testing.B) {
	alg, _ := algorithms.NewTokenBucket(algorithms.Rate{N: 1, Per: time.Minute}, 50)
	benchStore(b, store.NewMemory(alg), false)
}

// A flood of keys never seen before, each full again 1 ms later: every
// Take inserts a key, and with Forget, or MaxKeys, another is forgotten
// or evicted. Keys are made before the timer starts.
func benchNewKeys(b *testing.B, m *store.Memory) {
	keys := make([]string, 1<<20)
	for i := range keys {
		keys[i] = fmt.Sprintf("key:client-%07d", i)
	}
	ctx := context.Background()
	now, i := algorithms.Time(0), 0
	for b.Loop() {
		now += 10
		m.Take(ctx, keys[i&(len(keys)-1)], now, 1)
		i++
	}
}

func BenchmarkMemoryNewKeys(b *testing.B) {
	alg, _ := algorithms.NewTokenBucket(algorithms.Rate{N: 1000, Per: time.Second}, 1)
	benchNewKeys(b, store.NewMemory(alg))
}

func BenchmarkServerMemoryNewKeys(b *testing.B) {
	alg, _ := algorithms.NewTokenBucket(algorithms.Rate{N: 1000, Per: time.Second}, 1)
	benchNewKeys(b, store.NewServerMemory(alg))
}

func BenchmarkServerMemoryNewKeysFull(b *testing.B) {
	alg, _ := algorithms.NewTokenBucket(algorithms.Rate{N: 1, Per: time.Hour}, 1) // nothing resets
	benchNewKeys(b, store.NewMemoryWith(alg, store.MemoryOptions{Forget: true, MaxKeys: 10_000}))
}

// A key with two limits, as APIs publish them (storetest.TwoLimits),
// against the one limit above it: the same token bucket, and 100,000 an
// hour in a fixed window. The Multi of the bucket alone measures what
// Multi itself costs.
//
//	go test -run '^$' -bench 'Memory10kKeys(OneLimitMulti|TwoLimits)?$' -count 5 ./store
func BenchmarkMemory10kKeysTwoLimits(b *testing.B) {
	benchStore(b, store.NewMemory(storetest.TwoLimits(b)), false)
}

func BenchmarkMemory10kKeysOneLimitMulti(b *testing.B) {
	bucket, _ := algorithms.NewTokenBucket(algorithms.Rate{N: 1000, Per: time.Second}, 50)
	m, _ := algorithms.NewMulti([]algorithms.Policy{{Name: "burst", Algorithm: bucket}})
	benchStore(b, store.NewMemory(m), false)
}
