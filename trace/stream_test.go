package trace_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/ratelim/ratelim/internal/testsize"
	"github.com/ratelim/ratelim/trace"
	"github.com/ratelim/ratelim/trace/tracetest"
)

// TestStreamTenMillion streams a log of 10⁷ lines, made as it is read,
// through a Reader and Peaks, and checks that memory stays bounded by the
// reorder window and the keys, not by the log (which is ~1 GB of text).
// go test ./... streams 2×10⁶ (testsize; 10⁷ is the exhaustive size):
// ~200 MB of text, which a Reader holding the log could not keep under
// the 64 MB bound.
func TestStreamTenMillion(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 10⁷ lines (~10s); skipped with -short")
	}
	if raceEnabled {
		t.Skip("too slow under the race detector")
	}
	const keys = 10_000
	n := testsize.Pick(2_000_000, 10_000_000)
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	// 1000 requests a second; every 100th line half a second early.
	rec := func(i int) trace.Record {
		at := t0.Add(time.Duration(i) * time.Millisecond)
		if i%100 == 0 {
			at = at.Add(-500 * time.Millisecond)
		}
		return trace.Record{At: at, Key: fmt.Sprintf("k%d", (i*7919)%keys), Method: "GET", Path: "/api/items", Status: 200}
	}
	log := tracetest.NewReader(trace.JSONL, n, rec)
	r, err := trace.NewReader(log, "generated.jsonl", tracetest.Options(trace.JSONL))
	if err != nil {
		t.Fatal(err)
	}
	peaks, err := trace.NewPeaks(time.Second, 1, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var maxHeap uint64
	start := time.Now()
	count := 0
	eachInOrder(t, r, func(rec trace.Record) {
		peaks.Add(rec.Key, rec.At)
		count++
		if count%1_000_000 == 0 {
			runtime.ReadMemStats(&ms)
			maxHeap = max(maxHeap, ms.HeapInuse)
		}
	})
	elapsed := time.Since(start)
	if count != n {
		t.Errorf("%d records, want %d", count, n)
	}
	ks := peaks.Keys()
	if len(ks) != keys || ks[0].Requests != n/keys {
		t.Errorf("%d keys, the first with %d requests; want %d keys of %d", len(ks), ks[0].Requests, keys, n/keys)
	}
	// What is held: ~1500 pending requests in the 2s window, 10⁴ keys'
	// peaks, the interned strings; 64 MB is a generous bound that a
	// Reader holding the log (>1 GB) would break at once.
	const bound = 64 << 20
	if maxHeap > bound {
		t.Errorf("heap in use reached %d MB, want under %d MB", maxHeap>>20, bound>>20)
	}
	t.Logf("%d lines in %v (%.0f lines/s, generator included); heap in use: %.1f MB before, at most %.1f MB during; RSS %s",
		count, elapsed.Round(time.Millisecond), float64(count)/elapsed.Seconds(), float64(base)/(1<<20), float64(maxHeap)/(1<<20), tracetest.RSS())
}
