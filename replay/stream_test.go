package replay

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/internal/testsize"
	"github.com/ratelim/ratelim/internal/words"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/trace"
	"github.com/ratelim/ratelim/trace/tracetest"
)

// TestReplayTenMillionLines replays a log of 10⁷ lines (~1 GB of text,
// made as it is read, never held) through a limit, and checks that memory
// stays bounded by the keys — their clients and the timeline of at most
// 1,500 steps — not by the lines. go test ./... replays 5×10⁶ (testsize:
// the exhaustive size is 10⁷; RATELIM_REPLAY_LINES chooses any other),
// whose records alone, held, would take 440 MB, over the bound.
func TestReplayTenMillionLines(t *testing.T) {
	if testing.Short() {
		t.Skip("replays 10⁷ lines (~20s); skipped with -short")
	}
	if raceEnabled {
		t.Skip("too slow under the race detector")
	}
	const keys = 1_000
	n := testsize.Pick(5_000_000, 10_000_000)
	// RATELIM_REPLAY_LINES=100000000 replays 10⁸ (about 3 minutes here).
	if v, err := strconv.Atoi(os.Getenv("RATELIM_REPLAY_LINES")); err == nil && v >= keys {
		n = v
	}
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	// 1000 requests a second in all, a key's every second on average; key
	// 0 sends ten times its share.
	rec := func(i int) trace.Record {
		key := (i / 10 * 7919) % keys
		if i%10 == 0 {
			key = 0
		}
		return trace.Record{At: t0.Add(time.Duration(i) * time.Millisecond), Key: fmt.Sprintf("k%d", key), Method: "GET", Path: "/api/items", Status: 200}
	}
	src := Source{Path: "generated.log", Trace: tracetest.Options(trace.Combined), Open: func() (io.Reader, error) {
		return tracetest.NewReader(trace.Combined, n, rec), nil
	}}
	limit := sim.Limit{Algorithm: "token-bucket", Params: algorithms.Params{Rate: algorithms.Rate{N: 60, Per: time.Minute}, Burst: 10}}
	var ms runtime.MemStats
	var maxHeap uint64
	sample := func() {
		runtime.ReadMemStats(&ms)
		maxHeap = max(maxHeap, ms.HeapInuse)
	}
	start := time.Now()
	l, err := Scan(context.Background(), src, ScanOptions{Progress: func(int) { sample() }})
	if err != nil {
		t.Fatal(err)
	}
	scanned := time.Since(start)
	sc := l.Scenario(limit, nil)
	run, err := l.Replay(context.Background(), "a", sc, sim.Options{MaxRequests: int64(n) + 1, StateOf: func(string) bool { return false }, Progress: func(time.Duration, time.Duration) { sample() }})
	if err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	if run.Totals.Requests != int64(n) || run.Totals.Keys != keys {
		t.Fatalf("%d requests from %d keys replayed, want %d from %d", run.Totals.Requests, run.Totals.Keys, n, keys)
	}
	if top := run.Keys[0]; top.Key != "k0" || top.Rejected == 0 {
		t.Errorf("most throttled: %+v, want k0 throttled", top)
	}
	// At 60/m a key sending 1/s on average is refused a few requests a
	// burst at most; k0, at 10/s, has most of its refused.
	if k0 := run.Keys[0]; k0.Rejected < k0.Requests*8/10 {
		t.Errorf("k0: %d of %d refused, want over 80%%", k0.Rejected, k0.Requests)
	}
	// What is held: 1,000 clients and keys (~12 KB each), the timeline of
	// 1,000 × ~1,000 steps (~100 MB), the reader's window. A replay that
	// held the log would need its 88-byte records for every line: 440 MB
	// at 5×10⁶ lines, 880 MB at 10⁷.
	const bound = 400 << 20
	if maxHeap > bound {
		t.Errorf("heap in use reached %d MB, want under %d MB", maxHeap>>20, bound>>20)
	}
	t.Logf("%d lines scanned in %v and replayed in %v more (%.0f lines/s over both passes); %d steps of %s; heap in use at most %.0f MB; RSS %s",
		n, scanned.Round(time.Millisecond), (elapsed - scanned).Round(time.Millisecond), 2*float64(n)/elapsed.Seconds(),
		len(run.Result.Timeline)/keys, words.Duration(sc.Step), float64(maxHeap)/(1<<20), tracetest.RSS())
}
