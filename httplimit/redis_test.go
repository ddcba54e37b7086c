package httplimit

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/store"
	"github.com/ratelim/ratelim/store/redisstore"
)

// redisURL is the real Redis the tests and benchmarks use, from REDIS_URL.
func redisURL(tb testing.TB) string {
	tb.Helper()
	url := os.Getenv("REDIS_URL")
	if url == "" {
		tb.Skip("REDIS_URL not set: skipping the real-Redis test (e.g. REDIS_URL=redis://127.0.0.1:6398 with a redis-server there; .ci/run sets it)")
	}
	return url
}

func openRedis(tb testing.TB, alg algorithms.Algorithm, name string) *redisstore.Store {
	tb.Helper()
	ctx := context.Background()
	prefix := fmt.Sprintf("ratelim-httplimit-%s:%d:", name, time.Now().UnixNano())
	r, err := redisstore.Open(ctx, alg, redisstore.Options{URL: redisURL(tb), Prefix: prefix})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		r.Clear(ctx)
		r.Close()
	})
	return r
}

// Eight HTTP clients on keep-alive connections hammer one key through a real
// server, on the real clock, with the state in a real Redis: however the
// requests interleave, the shared bucket admits no more than burst + rate ×
// elapsed, because each decision is one atomic script inside Redis.
func TestRedisConcurrentClientsBounded(t *testing.T) {
	const (
		rate, burst = 200, 20 // per second
		clients     = 8
		duration    = 1500 * time.Millisecond
		maxEach     = 5000 // a bound on the loop whatever the timing
	)
	alg := tokenBucket(t, algorithms.Rate{N: rate, Per: time.Second}, burst)
	lim := openRedis(t, alg, "test")
	m, _ := newMetrics(t)
	next := &counting{}
	// Fail closed: a store failure must not be what lets requests through.
	h := mustNew(t, Config{Limiter: lim, OnError: store.FailClosed, Metrics: m}, next)

	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	client := &http.Client{
		Transport: &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients},
		Timeout:   5 * time.Second,
	}
	defer client.CloseIdleConnections()

	var admitted, rejected, other atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	stop := start.Add(duration)
	for range clients {
		wg.Go(func() {
			for i := 0; i < maxEach && time.Now().Before(stop); i++ {
				req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
				req.Header.Set("X-API-Key", "shared")
				resp, err := client.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				switch resp.StatusCode {
				case http.StatusOK:
					admitted.Add(1)
				case http.StatusTooManyRequests:
					rejected.Add(1)
				default:
					other.Add(1)
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)

	bound := burst + rate*elapsed.Seconds()
	t.Logf("%d admitted, %d rejected in %v over %d connections (bound %.1f)",
		admitted.Load(), rejected.Load(), elapsed, conns.Load(), bound)
	if float64(admitted.Load()) > bound {
		t.Errorf("admitted %d in %v, more than burst + rate × elapsed = %.1f", admitted.Load(), elapsed, bound)
	}
	if admitted.Load() < burst || rejected.Load() == 0 {
		t.Errorf("admitted %d, rejected %d: the clients did not reach the limit", admitted.Load(), rejected.Load())
	}
	if other.Load() != 0 {
		t.Errorf("%d answers neither 200 nor 429", other.Load())
	}
	if next.calls.Load() != admitted.Load() {
		t.Errorf("handler called %d times for %d admitted", next.calls.Load(), admitted.Load())
	}
	if c := counts(m); c[DecisionFailedClosed] != 0 || c[DecisionCanceled] != 0 {
		t.Errorf("store failures during the run: %v", c)
	}
	if conns.Load() > clients {
		t.Errorf("%d connections for %d keep-alive clients", conns.Load(), clients)
	}
}
