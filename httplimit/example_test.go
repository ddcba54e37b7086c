package httplimit_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/httplimit"
	"github.com/ratelim/ratelim/store"
)

// A token bucket of 2 refilling one per second, in front of a handler. The
// clock is fixed so that the output is too; a server leaves Clock nil.
func ExampleNew() {
	alg, err := algorithms.NewTokenBucket(algorithms.Rate{N: 1, Per: time.Second}, 2)
	if err != nil {
		panic(err)
	}
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	cfg := httplimit.Config{
		Limiter: store.NewServerMemory(alg),
		OnError: store.FailOpen,
		Clock:   func() time.Time { return now },
	}
	cfg.Limit, cfg.Window = httplimit.QuotaOf(alg)
	limit, err := httplimit.New(cfg)
	if err != nil {
		panic(err)
	}
	h := limit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "hello")
	}))

	for range 3 {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("X-API-Key", "k-123")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		fmt.Printf("%d RateLimit-Policy: %s RateLimit: %s", w.Code, w.Header().Get("RateLimit-Policy"), w.Header().Get("RateLimit"))
		if ra := w.Header().Get("Retry-After"); ra != "" {
			fmt.Printf(" Retry-After: %s", ra)
		}
		fmt.Println()
	}
	// Output:
	// 200 RateLimit-Policy: "default";q=2;w=2 RateLimit: "default";r=1;t=1
	// 200 RateLimit-Policy: "default";q=2;w=2 RateLimit: "default";r=0;t=2
	// 429 RateLimit-Policy: "default";q=2;w=2 RateLimit: "default";r=0;t=1 Retry-After: 1
}

// Behind a load balancer at 10.0.0.0/8, the client is the address the
// balancer saw, not the one the client wrote into X-Forwarded-For itself.
func ExampleKeyBy() {
	key := httplimit.KeyBy(httplimit.KeyOptions{
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")},
	})
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = "10.1.2.3:40000"                               // the balancer
	r.Header.Set("X-Forwarded-For", "198.51.100.99, 203.0.113.7") // spoofed, then what the balancer saw
	fmt.Println(key(r))

	r.RemoteAddr = "203.0.113.50:40000" // no balancer: the header is ignored
	fmt.Println(key(r))

	r.Header.Set("X-API-Key", "k-123")
	fmt.Println(key(r))
	// Output:
	// ip:203.0.113.7
	// ip:203.0.113.50
	// key:k-123
}

// A fixed window of 2 requests a second, stepped across a window boundary
// by moving the clock. A rejection 100ms before the boundary says to retry
// after 1 s (rounded up, so a client is never early); the new window admits
// 2 more at once: 4 within 100ms, the fixed window's flaw, seen from HTTP.
// Besides the draft's RateLimit pair, every answer carries the older -06
// trio that most clients still read.
func ExampleNew_fixedWindow() {
	alg, err := algorithms.NewFixedWindow(algorithms.Rate{N: 2, Per: time.Second}, time.Second)
	if err != nil {
		panic(err)
	}
	now := time.Date(2026, 12, 1, 12, 0, 0, 900_000_000, time.UTC)
	cfg := httplimit.Config{Limiter: store.NewServerMemory(alg), Clock: func() time.Time { return now }}
	cfg.Limit, cfg.Window = httplimit.QuotaOf(alg)
	limit, err := httplimit.New(cfg)
	if err != nil {
		panic(err)
	}
	h := limit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))

	for i := range 5 {
		if i == 3 {
			now = now.Add(100 * time.Millisecond) // 12:00:01, a new window
		}
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("X-API-Key", "k-123")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		hd := w.Header()
		fmt.Printf("%s %d Limit=%s Remaining=%s Reset=%s Retry-After=%q\n", now.Format("05.0"), w.Code,
			hd.Get("RateLimit-Limit"), hd.Get("RateLimit-Remaining"), hd.Get("RateLimit-Reset"), hd.Get("Retry-After"))
	}
	// Output:
	// 00.9 200 Limit=2 Remaining=1 Reset=1 Retry-After=""
	// 00.9 200 Limit=2 Remaining=0 Reset=1 Retry-After=""
	// 00.9 429 Limit=2 Remaining=0 Reset=1 Retry-After="1"
	// 01.0 200 Limit=2 Remaining=1 Reset=1 Retry-After=""
	// 01.0 200 Limit=2 Remaining=0 Reset=1 Retry-After=""
}

// QuotaOf states an algorithm's limit as the RateLimit-Policy fields do: q
// requests per w. A window algorithm's is its limit per window; a bucket's
// is its burst, per the time an empty bucket takes to refill, so that q/w
// is the sustained rate.
func ExampleQuotaOf() {
	p := algorithms.Params{Rate: algorithms.Rate{N: 10, Per: time.Second}, Burst: 50, Window: time.Minute}
	for _, name := range algorithms.ExactNames() {
		alg, err := algorithms.New(name, p)
		if err != nil {
			panic(err)
		}
		q, w := httplimit.QuotaOf(alg)
		fmt.Printf("%-14s q=%d w=%v\n", name, q, w)
	}
	// Output:
	// token-bucket   q=50 w=5s
	// gcra           q=50 w=5s
	// leaky-bucket   q=50 w=5s
	// fixed-window   q=600 w=1m0s
	// sliding-log    q=600 w=1m0s
	// sliding-window q=600 w=1m0s
}

// A client reads what is left of its quota, and when to come back, from an
// answer's RateLimit fields: here the third request to a GCRA limiter of 2
// a second with a burst of 2, which is refused for the next half second.
func ExampleReadRateLimit() {
	alg, err := algorithms.NewGCRA(algorithms.Rate{N: 2, Per: time.Second}, 2)
	if err != nil {
		panic(err)
	}
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	limit, err := httplimit.New(httplimit.Config{Limiter: store.NewServerMemory(alg), Clock: func() time.Time { return now }})
	if err != nil {
		panic(err)
	}
	h := limit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	for range 3 {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = "203.0.113.7:40000"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		remaining, reset, ok := httplimit.ReadRateLimit(w.Header())
		fmt.Println(w.Code, remaining, reset, ok)
	}
	// Output:
	// 200 1 1s true
	// 200 0 1s true
	// 429 0 1s true
}
