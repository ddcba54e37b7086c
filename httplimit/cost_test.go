package httplimit

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/routecost"
	"github.com/ratelim/ratelim/store"
)

// CostByRoute prices by the first rule that matches, 1 when none does,
// and refuses a rule that could never price anything right.
func TestCostByRoute(t *testing.T) {
	cost, err := CostByRoute(
		CostRule{Method: "GET", Glob: "/search/*", Cost: 5},
		CostRule{Glob: "/search/*", Cost: 7}, // other methods
		CostRule{Method: "POST", Cost: 10},
		CostRule{Glob: "/export", Cost: 20}, // never reached by a POST
	)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		method, target string
		want           int64
	}{
		{"GET", "/search/books?q=go", 5},
		{"get", "/search/books", 5},
		{"HEAD", "/search/books", 7},
		{"GET", "/search/a/b", 1}, // * stays within a segment
		{"POST", "/orders", 10},
		{"POST", "/export", 10}, // the first match wins
		{"GET", "/export", 20},
		{"GET", "/", 1},
	} {
		if got := cost(httptest.NewRequest(tc.method, tc.target, nil)); got != tc.want {
			t.Errorf("%s %s costs %d, want %d", tc.method, tc.target, got, tc.want)
		}
	}
	for _, bad := range []CostRule{{Glob: "/[", Cost: 1}, {Method: "GET", Cost: 0}, {Cost: routecost.Max + 1}} {
		if _, err := CostByRoute(bad); err == nil {
			t.Errorf("CostByRoute(%+v) took a rule that cannot price", bad)
		}
	}
}

// Through the middleware: a bucket of 10 admits two searches at 5, then
// refuses; the writes' quota is the same bucket, at 10 a write.
func TestCostByRouteInTheMiddleware(t *testing.T) {
	cost, err := CostByRoute(CostRule{Method: "GET", Glob: "/search", Cost: 5}, CostRule{Method: "POST", Cost: 10})
	if err != nil {
		t.Fatal(err)
	}
	h := mustNew(t, Config{Limiter: store.NewMemory(tokenBucket(t, algorithms.Rate{N: 1, Per: time.Hour}, 10)),
		Clock: newClock().Now, Key: func(*http.Request) string { return "k" }, Cost: cost}, &counting{})
	for i, step := range []struct {
		method, target string
		want           int
	}{
		{"GET", "/search", 200}, {"GET", "/search", 200}, {"GET", "/search", 429}, {"GET", "/", 429}, {"POST", "/orders", 429},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(step.method, step.target, nil))
		if w.Code != step.want {
			t.Errorf("request %d, %s %s: %d, want %d", i, step.method, step.target, w.Code, step.want)
		}
	}
}
