package httplimit

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/store"
)

// TestKeyLengthBound steps through Config.MaxKeyBytes: a key at the bound
// is decided, one byte over is refused before the store sees it, with 431
// when the key came from a header (KeyBy's API key and user) and 400 when
// a custom KeyFunc made it.
func TestKeyLengthBound(t *testing.T) {
	fromQuery := func(r *http.Request) string { return r.URL.Query().Get("k") }
	apiKey := func(n int) []string { return []string{"X-API-Key", strings.Repeat("a", n-len(KeyPrefixAPIKey))} }
	for _, tc := range []struct {
		name       string
		maxKey     int
		key        KeyFunc
		header     []string
		url        string
		wantStatus int
	}{
		{"API key at the default bound", 0, nil, apiKey(DefaultMaxKeyBytes), "/", 200},
		{"API key a byte over the default", 0, nil, apiKey(DefaultMaxKeyBytes + 1), "/", 431},
		{"user key over the default", 0, nil, []string{"X-User", strings.Repeat("u", DefaultMaxKeyBytes)}, "/", 431},
		{"IP key, far under any bound", 0, nil, nil, "/", 200},
		{"a bound of its own", 12, nil, apiKey(13), "/", 431},
		{"at a bound of its own", 12, nil, apiKey(12), "/", 200},
		{"custom key over the bound", 8, fromQuery, nil, "/?k=" + strings.Repeat("q", 9), 400},
		{"custom key at the bound", 8, fromQuery, nil, "/?k=" + strings.Repeat("q", 8), 200},
		{"no bound", -1, nil, apiKey(64 << 10), "/", 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := newMetrics(t)
			mem := store.NewServerMemory(tokenBucket(t, algorithms.Rate{N: 1, Per: time.Second}, 5))
			next := &counting{}
			h := mustNew(t, Config{Limiter: mem, Key: tc.key, MaxKeyBytes: tc.maxKey, Clock: newClock().Now, Metrics: m}, next)
			r := httptest.NewRequest(http.MethodGet, tc.url, nil)
			for i := 0; i+1 < len(tc.header); i += 2 {
				r.Header.Set(tc.header[i], tc.header[i+1])
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tc.wantStatus {
				t.Fatalf("status %d, want %d; body %q", w.Code, tc.wantStatus, w.Body)
			}
			if tc.wantStatus == 200 {
				wantCounts(t, m, map[string]float64{DecisionAllowed: 1})
				return
			}
			wantCounts(t, m, map[string]float64{DecisionKeyTooLong: 1})
			if next.calls.Load() != 0 || mem.Len() != 0 {
				t.Errorf("refused request reached the handler (%d calls) or the store (%d keys)", next.calls.Load(), mem.Len())
			}
			if body := w.Body.String(); len(body) > 200 || !strings.Contains(body, "longer than the") || w.Header().Get("RateLimit") != "" {
				t.Errorf("refusal body %q, headers %v: want one short line saying why, no RateLimit fields", body, w.Header())
			}
		})
	}
}

// TestHalfMegabyteKeysRefused is the attack: 2,000 requests with
// ~500 KB API keys took a server to 2.18 GB. Each is now refused with 431,
// counted, and the store keeps nothing.
func TestHalfMegabyteKeysRefused(t *testing.T) {
	n := 2_000
	if testing.Short() {
		n = 200
	}
	m, _ := newMetrics(t)
	mem := store.NewServerMemory(tokenBucket(t, algorithms.Rate{N: 1, Per: time.Second}, 5))
	next := &counting{}
	h := mustNew(t, Config{Limiter: mem, Clock: newClock().Now, Metrics: m}, next)
	tail := strings.Repeat("x", 500<<10)
	for i := range n {
		if w := get(h, "X-API-Key", fmt.Sprint(i, tail)); w.Code != http.StatusRequestHeaderFieldsTooLarge {
			t.Fatalf("request %d: status %d, want 431", i, w.Code)
		}
	}
	wantCounts(t, m, map[string]float64{DecisionKeyTooLong: float64(n)})
	if next.calls.Load() != 0 || mem.Len() != 0 {
		t.Errorf("after %d refusals: %d handler calls, %d keys in the store; want none", n, next.calls.Load(), mem.Len())
	}

	// And over a real connection: the 431 is what the client reads.
	srv := httptest.NewServer(h)
	defer srv.Close()
	r, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	r.Header.Set("X-API-Key", tail)
	resp, err := srv.Client().Do(r)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("over HTTP: status %d, want 431", resp.StatusCode)
	}
}

func TestRegisterMemoryStats(t *testing.T) {
	alg := tokenBucket(t, algorithms.Rate{N: 10, Per: time.Second}, 5)
	mem := store.NewMemoryWith(alg, store.MemoryOptions{Forget: true, MaxKeys: 64}) // one key a shard
	reg := prometheus.NewPedanticRegistry()
	if err := RegisterMemoryStats(reg, mem.Stats); err != nil {
		t.Fatal(err)
	}
	h := mustNew(t, Config{Limiter: mem, Clock: newClock().Now, Key: func(r *http.Request) string { return r.Header.Get("K") }}, &counting{})
	// 200 keys in 64 one-key shards: each shard keeps its last key; the
	// others were evicted (not yet full, at one instant).
	for i := range 200 {
		get(h, "K", fmt.Sprint("k", i))
	}
	s := mem.Stats()
	if s.Keys > 64 || s.Evictions != int64(200-s.Keys) || s.Forgotten != 0 {
		t.Fatalf("Stats = %+v, want at most 64 keys, the rest evicted", s)
	}
	want := fmt.Sprintf(`
# HELP ratelim_store_evictions_total Keys the in-process store evicted before their state was back to full, because it held its maximum number of keys.
# TYPE ratelim_store_evictions_total counter
ratelim_store_evictions_total %d
# HELP ratelim_store_forgotten_total Keys the in-process store forgot because their state was back to full.
# TYPE ratelim_store_forgotten_total counter
ratelim_store_forgotten_total 0
# HELP ratelim_store_keys Keys the in-process rate-limiter store holds.
# TYPE ratelim_store_keys gauge
ratelim_store_keys %d
`, s.Evictions, s.Keys)
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
	if err := RegisterMemoryStats(reg, mem.Stats); err == nil || !strings.HasPrefix(err.Error(), "httplimit: ") {
		t.Errorf("registering twice: %v, want an httplimit error", err)
	}
	if err := RegisterMemoryStats(nil, mem.Stats); err == nil {
		t.Error("RegisterMemoryStats(nil, ...) succeeded")
	}
}
