package httplimit_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/httplimit"
	"github.com/ratelim/ratelim/store"
)

// A key with two limits, 2 a second with a burst of 2 and 3 a minute: each
// answer lists both policies and names the one that binds; the third
// request is refused by the burst, the fifth by the minute.
func ExampleConfig_policies() {
	burst, _ := algorithms.NewTokenBucket(algorithms.Rate{N: 2, Per: time.Second}, 2)
	minute, _ := algorithms.NewFixedWindow(algorithms.Rate{N: 3, Per: time.Minute}, time.Minute)
	multi, _ := algorithms.NewMulti([]algorithms.Policy{{Name: "burst", Algorithm: burst}, {Name: "minute", Algorithm: minute}})
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	limit, err := httplimit.New(httplimit.Config{
		Limiter:  store.NewMemory(multi),
		Policies: httplimit.QuotasOf(multi),
		Clock:    func() time.Time { return now },
		Logger:   slog.New(slog.DiscardHandler),
	})
	if err != nil {
		panic(err)
	}
	h := limit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	for i, at := range []time.Duration{0, 0, 0, time.Second, time.Second} {
		now = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC).Add(at)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
		if i == 0 {
			fmt.Printf("RateLimit-Policy: %s\n", w.Header().Get("RateLimit-Policy"))
		}
		fmt.Printf("%d RateLimit: %s\n", w.Code, w.Header().Get("RateLimit"))
	}
	// Output:
	// RateLimit-Policy: "burst";q=2;w=1, "minute";q=3;w=60
	// 200 RateLimit: "burst";r=1;t=1
	// 200 RateLimit: "burst";r=0;t=1
	// 429 RateLimit: "burst";r=0;t=1
	// 200 RateLimit: "minute";r=0;t=59
	// 429 RateLimit: "minute";r=0;t=59
}
