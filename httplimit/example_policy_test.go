package httplimit_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/httplimit"
	"github.com/ratelim/ratelim/store"
)

// downStore is a store that cannot be reached: any store.Limiter will do
// behind the middleware, and this one fails every Take, as a Redis whose
// connection was refused does.
type downStore struct{}

func (downStore) Take(context.Context, string, algorithms.Time, int64) (store.Decision, error) {
	return store.Decision{}, errors.New("dial tcp 10.0.0.5:6379: connect: connection refused")
}

// When the store fails, the fail policy chosen beforehand decides. Fail
// open calls the handler, fail closed answers 503 with Retry-After; both
// say who decided in X-RateLimit-Decided-By and send no RateLimit fields,
// since the limiter decided nothing.
func ExampleConfig_onError() {
	for _, policy := range []store.Policy{store.FailOpen, store.FailClosed} {
		limit, err := httplimit.New(httplimit.Config{
			Limiter: downStore{},
			OnError: policy,
			// A server leaves Logger nil: slog.Default hears the store
			// fail, once, and recover.
			Logger: slog.New(slog.DiscardHandler),
		})
		if err != nil {
			panic(err)
		}
		h := limit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
		hd := w.Header()
		fmt.Printf("%s: %d Decided-By=%s Retry-After=%q RateLimit=%q\n", policy, w.Code,
			hd.Get(httplimit.DecidedByHeader), hd.Get("Retry-After"), hd.Get("RateLimit"))
	}
	// Output:
	// fail-open: 200 Decided-By=fail-open Retry-After="" RateLimit=""
	// fail-closed: 503 Decided-By=fail-closed Retry-After="1" RateLimit=""
}
