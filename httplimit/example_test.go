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
