package httplimit

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/store"
)

// timedHandler records the fake time at which it was called.
type timedHandler struct{ at atomic.Int64 }

func (h *timedHandler) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	h.at.Store(time.Now().UnixNano())
	w.WriteHeader(http.StatusNoContent)
}

func leakyBucket(t *testing.T) algorithms.Algorithm {
	t.Helper()
	alg, err := algorithms.NewLeakyBucket(algorithms.Rate{N: 10, Per: time.Second}, 5)
	if err != nil {
		t.Fatal(err)
	}
	return alg
}

// A burst into a leaky bucket of rate 10/s reaches the handler 100 ms apart,
// each request held exactly its decision's Delay, which its answer's
// DelayHeader states; the sixth finds the queue full and is rejected at
// once.
func TestLeakyBucketDelayHonoured(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim := &spy{next: store.NewMemory(leakyBucket(t))}
		m, _ := newMetrics(t)
		next := &timedHandler{}
		h := mustNew(t, Config{Limiter: lim, Clock: newClock().Now, Metrics: m}, next)
		for i := range 6 {
			start := time.Now()
			next.at.Store(0)
			w := get(h)
			d := lim.Last()
			if i == 5 {
				if w.Code != http.StatusTooManyRequests || time.Since(start) != 0 || next.at.Load() != 0 {
					t.Fatalf("request %d: %d after %v; want an immediate 429", i, w.Code, time.Since(start))
				}
				continue
			}
			want := time.Duration(i) * 100 * time.Millisecond
			if w.Code != http.StatusNoContent || d.Delay != want {
				t.Fatalf("request %d: status %d, delay %v; want 204 after %v", i, w.Code, d.Delay, want)
			}
			if waited := time.Unix(0, next.at.Load()).Sub(start); waited != want {
				t.Fatalf("request %d: handler called after %v, want %v", i, waited, want)
			}
			// The answer says how long it was held: none at once.
			wantHeader := []string{"", "0.1", "0.2", "0.3", "0.4"}[i]
			if got := w.Header().Get(DelayHeader); got != wantHeader {
				t.Fatalf("request %d: %s %q, want %q", i, DelayHeader, got, wantHeader)
			}
		}
		wantCounts(t, m, map[string]float64{DecisionAllowed: 5, DecisionRejected: 1})
	})
}

// A request whose context ends while it waits its turn never reaches the
// handler, and is counted as canceled.
func TestLeakyBucketDelayCanceled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, _ := newMetrics(t)
		next := &timedHandler{}
		h := mustNew(t, Config{Limiter: store.NewMemory(leakyBucket(t)), Clock: newClock().Now, Metrics: m}, next)
		for range 3 {
			get(h) // delays 0, 100 ms, 200 ms
		}
		next.at.Store(0)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		r := httptest.NewRequest(http.MethodGet, "/", nil).WithContext(ctx)
		w := httptest.NewRecorder()
		start := time.Now()
		h.ServeHTTP(w, r) // its delay is 300 ms
		if waited := time.Since(start); waited != 50*time.Millisecond {
			t.Errorf("returned after %v, want 50ms (when the context ended)", waited)
		}
		if w.Code != http.StatusServiceUnavailable || next.at.Load() != 0 {
			t.Errorf("status %d, handler called: %v; want 503 and not called", w.Code, next.at.Load() != 0)
		}
		wantCounts(t, m, map[string]float64{DecisionAllowed: 3, DecisionCanceled: 1})
	})
}
