package httplimit

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/store"
)

// The middleware's cost per request on the memory store, beside the bare
// handler, both called directly with an httptest.ResponseRecorder:
//
//	go test -run '^$' -bench Middleware ./httplimit
//
// "allowed" runs on the real clock (the live path: one time.Now per
// request), with a rate no request reaches; "rejected" on a bucket long
// empty, so every answer is a 429 with its body; "in-flight" on a
// concurrency limit no request reaches, each request taking a lease and
// giving it back (one more time.Now, a context with a deadline).

type okHandler struct{}

func (okHandler) ServeHTTP(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }

func benchServe(b *testing.B, h http.Handler, want int) {
	r := httptest.NewRequest(http.MethodGet, "/v1/items", nil)
	r.RemoteAddr = "192.0.2.1:51234"
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != want {
			b.Fatalf("status %d, want %d", w.Code, want)
		}
	}
}

func BenchmarkMiddleware(b *testing.B) {
	unlimited, _ := algorithms.NewTokenBucket(algorithms.Rate{N: 1_000_000_000, Per: time.Second}, 1_000_000)
	empty, _ := algorithms.NewTokenBucket(algorithms.Rate{N: 1, Per: time.Hour}, 1)
	quiet := slog.New(slog.DiscardHandler)
	b.Run("bare", func(b *testing.B) { benchServe(b, okHandler{}, http.StatusOK) })
	b.Run("allowed", func(b *testing.B) {
		h := mustNew(b, Config{Limiter: store.NewMemory(unlimited), Logger: quiet}, okHandler{})
		benchServe(b, h, http.StatusOK)
	})
	b.Run("allowed+metrics", func(b *testing.B) {
		m, err := NewMetrics(prometheus.NewRegistry())
		if err != nil {
			b.Fatal(err)
		}
		h := mustNew(b, Config{Limiter: store.NewMemory(unlimited), Metrics: m, Logger: quiet}, okHandler{})
		benchServe(b, h, http.StatusOK)
	})
	b.Run("rejected", func(b *testing.B) {
		h := mustNew(b, Config{Limiter: store.NewMemory(empty), Logger: quiet}, okHandler{})
		get(h)
		benchServe(b, h, http.StatusTooManyRequests)
	})
	// A limit on requests in flight that every request fits under: each
	// takes a lease and gives it back when the handler returns.
	b.Run("in-flight", func(b *testing.B) {
		inFlight, _ := algorithms.NewConcurrency(1<<20, time.Minute)
		h := mustNew(b, Config{Limiter: store.NewMemory(inFlight), Logger: quiet}, okHandler{})
		benchServe(b, h, http.StatusOK)
	})
}

// Decisions per second against a real Redis (REDIS_URL): ratelim's store,
// with the Lua twin of GCRA and of the token bucket, beside
// go-redis/redis_rate (GCRA too) on the same server in the same run, one
// goroutine at a time and with 8 and 64 at once; and the whole middleware
// over that store, to show the HTTP layer is noise beside the round trip:
//
//	redis-server --port 6398 --bind 127.0.0.1 --save '' --appendonly no --daemonize yes
//	REDIS_URL=redis://127.0.0.1:6398 go test -run '^$' -bench Redis ./httplimit
//	redis-cli -p 6398 shutdown nosave
//
// Every limiter gets the same go-redis client options (those of REDIS_URL,
// so the default pool of 10 connections per GOMAXPROCS) and a limit so high
// that every decision admits: the figure is the cost of deciding, not of
// rejecting. Keys cycle over 1,000 names.
func BenchmarkRedis(b *testing.B) {
	url := redisURL(b)
	const perSecond = 1_000_000
	rate := algorithms.Rate{N: perSecond, Per: time.Second}
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = "bench-" + strconv.Itoa(i)
	}
	ctx := context.Background()

	opts, err := redis.ParseURL(url)
	if err != nil {
		b.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	peer := redis_rate.NewLimiter(rdb)
	peerLimit := redis_rate.PerSecond(perSecond)

	gcra, _ := algorithms.NewGCRA(rate, perSecond)
	bucket, _ := algorithms.NewTokenBucket(rate, perSecond)
	ratelimGCRA := openRedis(b, gcra, "bench-gcra")
	ratelimBucket := openRedis(b, bucket, "bench-tb")
	viaHTTP := mustNew(b, Config{Limiter: openRedis(b, gcra, "bench-http"), Logger: slog.New(slog.DiscardHandler),
		Key: func(r *http.Request) string { return r.Header.Get("K") }}, okHandler{})

	take := func(lim store.Limiter) func(string) error {
		return func(key string) error {
			d, err := lim.Take(ctx, key, algorithms.FromTime(time.Now()), 1)
			if err == nil && !d.Allowed {
				err = fmt.Errorf("rejected")
			}
			return err
		}
	}
	impls := []struct {
		name   string
		decide func(key string) error
	}{
		{"redis_rate", func(key string) error {
			res, err := peer.Allow(ctx, key, peerLimit)
			if err == nil && res.Allowed == 0 {
				err = fmt.Errorf("rejected")
			}
			return err
		}},
		{"ratelim-gcra", take(ratelimGCRA)},
		{"ratelim-token-bucket", take(ratelimBucket)},
		{"httplimit-gcra", func(key string) error {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.Header.Set("K", key)
			w := httptest.NewRecorder()
			viaHTTP.ServeHTTP(w, r)
			if w.Code != http.StatusOK {
				return fmt.Errorf("status %d", w.Code)
			}
			return nil
		}},
	}
	for _, impl := range impls {
		for _, goroutines := range []int{1, 8, 64} {
			b.Run(fmt.Sprintf("%s/goroutines=%d", impl.name, goroutines), func(b *testing.B) {
				benchDecisions(b, goroutines, keys, impl.decide)
			})
		}
	}
	// redis_rate's keys ("rate:bench-N") expire by themselves within a
	// microsecond's worth of quota; delete them anyway.
	for _, k := range keys {
		rdb.Del(ctx, "rate:"+k)
	}
}

// benchDecisions runs decide from exactly goroutines goroutines (1: b.Loop
// in this one) and reports decisions per second.
func benchDecisions(b *testing.B, goroutines int, keys []string, decide func(string) error) {
	if goroutines == 1 {
		i := 0
		for b.Loop() {
			i++
			if err := decide(keys[i%len(keys)]); err != nil {
				b.Fatal(err)
			}
		}
	} else {
		// RunParallel starts parallelism × GOMAXPROCS goroutines.
		procs := runtime.GOMAXPROCS(0)
		if goroutines%procs != 0 {
			b.Fatalf("%d goroutines is not a multiple of GOMAXPROCS=%d", goroutines, procs)
		}
		b.SetParallelism(goroutines / procs)
		var next atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			i := int(next.Add(1)) * 7919
			for pb.Next() {
				i++
				if err := decide(keys[i%len(keys)]); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
}

// The cost of several policies beside one, on the memory store, the clock
// fixed (both limits' steps and the headers, not time.Now, are measured):
//
//	go test -run '^$' -bench MiddlewarePolicies -benchmem ./httplimit
//
// "one" is today's single-quota path (Config.Limit and Window), a token
// bucket; "multi=1" the same bucket as a Multi of one with Config.Policies;
// "multi=2" that bucket and a fixed window of 10⁹ per second (a window
// no run of the benchmark fills, on a clock that does not move), both
// listed in RateLimit-Policy. "allowed" admits every request; "rejected" answers 429
// from the bucket, long empty.
func BenchmarkMiddlewarePolicies(b *testing.B) {
	quiet := slog.New(slog.DiscardHandler)
	clk := func() time.Time { return t0 }
	for _, tc := range []struct {
		name string
		rate algorithms.Rate
		want int
	}{
		{"allowed", algorithms.Rate{N: 1_000_000_000, Per: time.Second}, http.StatusOK},
		{"rejected", algorithms.Rate{N: 1, Per: time.Hour}, http.StatusTooManyRequests},
	} {
		burst := int64(1_000_000_000)
		if tc.want != http.StatusOK {
			burst = 1
		}
		bucket, err := algorithms.NewTokenBucket(tc.rate, burst)
		if err != nil {
			b.Fatal(err)
		}
		window, err := algorithms.NewFixedWindow(algorithms.Rate{N: 1_000_000_000, Per: time.Second}, time.Second)
		if err != nil {
			b.Fatal(err)
		}
		one, _ := algorithms.NewMulti([]algorithms.Policy{{Name: "burst", Algorithm: bucket}})
		two, _ := algorithms.NewMulti([]algorithms.Policy{{Name: "burst", Algorithm: bucket}, {Name: "window", Algorithm: window}})
		limit, per := QuotaOf(bucket)
		b.Run(tc.name+"/one", func(b *testing.B) {
			h := mustNew(b, Config{Limiter: store.NewMemory(bucket), Limit: limit, Window: per, Clock: clk, Logger: quiet}, okHandler{})
			get(h)
			benchServe(b, h, tc.want)
		})
		for _, m := range []*algorithms.Multi{one, two} {
			b.Run(fmt.Sprintf("%s/multi=%d", tc.name, m.Len()), func(b *testing.B) {
				h := mustNew(b, Config{Limiter: store.NewMemory(m), Policies: QuotasOf(m), Clock: clk, Logger: quiet}, okHandler{})
				get(h)
				benchServe(b, h, tc.want)
			})
		}
	}
}
