package httplimit

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/store"
)

// TestZeroMetricsRecordsNothing drives a request of every outcome the
// middleware counts through one whose Metrics is the zero value: each must
// be answered as usual, none may panic.
func TestZeroMetricsRecordsNothing(t *testing.T) {
	alg := tokenBucket(t, algorithms.Rate{N: 1, Per: time.Hour}, 1)
	down := &flaky{next: store.NewMemory(alg)}
	h := mustNew(t, Config{Limiter: down, Clock: newClock().Now, Metrics: &Metrics{}, MaxKeyBytes: 16}, &counting{})
	for i, s := range []struct {
		what   string
		down   bool
		header []string
		want   int
	}{
		{what: "allowed", header: []string{"X-API-Key", "a"}, want: http.StatusOK},
		{what: "rejected", header: []string{"X-API-Key", "a"}, want: http.StatusTooManyRequests},
		{what: "key too long", header: []string{"X-API-Key", strings.Repeat("x", 32)}, want: http.StatusRequestHeaderFieldsTooLarge},
		{what: "failed open", down: true, header: []string{"X-API-Key", "b"}, want: http.StatusOK},
	} {
		down.down.Store(s.down)
		if w := get(h, s.header...); w.Code != s.want {
			t.Errorf("step %d (%s): status %d, want %d", i, s.what, w.Code, s.want)
		}
	}
}

// TestNewRefusesAMemoryThatCannotDecide: a zero Memory (or a nil one)
// fails every Take, so behind the default fail-open policy it would admit
// every request; New says so instead.
func TestNewRefusesAMemoryThatCannotDecide(t *testing.T) {
	for name, l := range map[string]store.Limiter{
		"zero Memory":    &store.Memory{},
		"NewMemory(nil)": store.NewMemory(nil),
		"nil *Memory":    (*store.Memory)(nil),
	} {
		_, err := New(Config{Limiter: l})
		if err == nil || !strings.Contains(err.Error(), "no algorithm") {
			t.Errorf("%s: New returned %v, want an error saying the Memory has no algorithm", name, err)
		}
	}
}

// TestZeroAlgorithmAnswers429 puts each algorithm's zero value behind the
// middleware: every request is refused, with header fields that are whole,
// finite numbers (its RetryAfter is algorithms.Never, sent as whole seconds).
func TestZeroAlgorithmAnswers429(t *testing.T) {
	for _, alg := range []algorithms.Algorithm{
		&algorithms.TokenBucket{}, &algorithms.GCRA{}, &algorithms.LeakyBucket{},
		&algorithms.FixedWindow{}, &algorithms.SlidingLog{}, &algorithms.SlidingWindow{},
	} {
		t.Run(alg.Name(), func(t *testing.T) {
			cfg := Config{Limiter: store.NewMemory(alg), Clock: newClock().Now}
			cfg.Limit, cfg.Window = QuotaOf(alg)
			if cfg.Limit != 0 || cfg.Window != 0 {
				t.Errorf("QuotaOf(zero %s) = %d, %v; want 0, 0", alg.Name(), cfg.Limit, cfg.Window)
			}
			next := &counting{}
			h := mustNew(t, cfg, next)
			w := get(h, "X-API-Key", "a")
			if w.Code != http.StatusTooManyRequests {
				t.Fatalf("status %d, want 429", w.Code)
			}
			never := ceilSeconds(algorithms.Never) // 9223372037: about 292 years
			if ra, err := strconv.ParseInt(w.Header().Get("Retry-After"), 10, 64); err != nil || ra != never {
				t.Errorf("Retry-After %q, want %d (Never in seconds)", w.Header().Get("Retry-After"), never)
			}
			if got, want := w.Header().Get("RateLimit"), `"default";r=0;t=`+strconv.FormatInt(never, 10); got != want {
				t.Errorf("RateLimit %q, want %q", got, want)
			}
			if got, want := w.Header().Get("RateLimit-Policy"), `"default";q=0`; got != want {
				t.Errorf("RateLimit-Policy %q, want %q", got, want)
			}
			if next.calls.Load() != 0 {
				t.Errorf("the handler ran %d times, want never", next.calls.Load())
			}
		})
	}
}
