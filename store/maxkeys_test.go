package store

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
)

// BenchmarkServerMemoryFull measures what DefaultMaxKeys costs: a server
// store (NewServerMemory, a token bucket) holding 2^20 keys that are not
// yet full, each an API key of 36 bytes as httplimit names it
// ("key:" and 32 bytes). It reports the live heap the store holds (the
// heap in use after a GC, before and after filling it: the store's own
// cost, whatever the collector's headroom) per key and in all, and the
// process's peak RSS (VmHWM: what a server's memory limit must allow,
// GOGC's headroom included). Run it alone, once:
//
//	go test ./store -run '^$' -bench ServerMemoryFull -benchtime 1x
func BenchmarkServerMemoryFull(b *testing.B) {
	alg, err := algorithms.NewTokenBucket(algorithms.Rate{N: 10, Per: time.Second}, 50)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for range b.N {
		before := liveHeap()
		m := NewServerMemory(alg)
		for i := range DefaultMaxKeys {
			if _, err := m.Take(ctx, fmt.Sprintf("key:%032d", i), 0, 1); err != nil {
				b.Fatal(err)
			}
		}
		held := liveHeap() - before
		// A shard fills a little before the whole store does (a key's
		// shard is its hash's), and then evicts: the store holds nearly
		// DefaultMaxKeys.
		n := m.Len()
		if n < DefaultMaxKeys*99/100 || n > DefaultMaxKeys {
			b.Fatalf("holds %d keys, want nearly %d", n, DefaultMaxKeys)
		}
		b.ReportMetric(float64(n), "keys")
		b.ReportMetric(float64(held)/float64(n), "B/key")
		b.ReportMetric(float64(held)/1e6, "MB-live-heap")
		b.ReportMetric(float64(peakRSS())/1e6, "MB-peak-RSS")
		runtime.KeepAlive(m)
	}
}

// liveHeap is the heap in use after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// peakRSS is the process's peak resident set (VmHWM) in bytes, 0 where
// /proc does not say.
func peakRSS() uint64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
