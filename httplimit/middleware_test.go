package httplimit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratelim/ratelim/internal/syncbuf"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/store"
)

// t0 is the instant every fixed clock starts at.
var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// clock is a clock a test moves by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: t0} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// spy records the last decision the limiter under it took.
type spy struct {
	next store.Limiter
	mu   sync.Mutex
	last store.Decision
}

func (s *spy) Take(ctx context.Context, key string, now algorithms.Time, cost int64) (store.Decision, error) {
	d, err := s.next.Take(ctx, key, now, cost)
	s.mu.Lock()
	s.last = d
	s.mu.Unlock()
	return d, err
}

func (s *spy) Last() store.Decision {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// flaky is a limiter whose store can be taken down and brought back.
type flaky struct {
	next store.Limiter
	down atomic.Bool
}

var errRefused = errors.New("dial tcp 127.0.0.1:6379: connect: connection refused")

func (f *flaky) Take(ctx context.Context, key string, now algorithms.Time, cost int64) (store.Decision, error) {
	if f.down.Load() {
		return store.Decision{}, errRefused
	}
	return f.next.Take(ctx, key, now, cost)
}

// counting is the handler behind the limiter: it counts its calls.
type counting struct{ calls atomic.Int64 }

func (c *counting) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.calls.Add(1)
	w.Write([]byte("ok\n"))
}

func tokenBucket(t testing.TB, rate algorithms.Rate, burst int64) algorithms.Algorithm {
	t.Helper()
	alg, err := algorithms.NewTokenBucket(rate, burst)
	if err != nil {
		t.Fatal(err)
	}
	return alg
}

func mustNew(t failer, cfg Config, next http.Handler) http.Handler {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	mw, err := New(cfg)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return mw(next)
}

func get(h http.Handler, header ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func newMetrics(t testing.TB) (*Metrics, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	return m, reg
}

func counts(m *Metrics) map[string]float64 {
	got := map[string]float64{}
	for o, label := range outcomeLabels {
		if v := testutil.ToFloat64(m.requests[o]); v != 0 {
			got[label] = v
		}
	}
	return got
}

func wantCounts(t *testing.T, m *Metrics, want map[string]float64) {
	t.Helper()
	got := counts(m)
	if len(got) != len(want) {
		t.Fatalf("ratelim_requests_total = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("ratelim_requests_total = %v, want %v", got, want)
		}
	}
}

// A step table: a token bucket of 3 refilling 1/s, on a clock moved by hand.
func TestHeadersStepByStep(t *testing.T) {
	alg := tokenBucket(t, algorithms.Rate{N: 1, Per: time.Second}, 3)
	clk := newClock()
	cfg := Config{Limiter: store.NewMemory(alg), Clock: clk.Now}
	cfg.Limit, cfg.Window = QuotaOf(alg)
	next := &counting{}
	h := mustNew(t, cfg, next)

	steps := []struct {
		advance    time.Duration
		status     int
		remaining  int64
		reset      int64
		retryAfter int64 // -1: none
	}{
		{0, 200, 2, 1, -1},                     // one token spent: full again in 1 s
		{0, 200, 1, 2, -1},                     //
		{0, 200, 0, 3, -1},                     // the last token
		{0, 429, 0, 1, 1},                      // the next token is 1 s away
		{400 * time.Millisecond, 429, 0, 1, 1}, // 0.6 s away: still 1, never 0
		{600 * time.Millisecond, 200, 0, 3, -1},
		{2500 * time.Millisecond, 200, 1, 2, -1}, // 2.5 tokens back, one spent: 1.5 left, full in 1.5 s
	}
	for i, st := range steps {
		clk.Advance(st.advance)
		w := get(h)
		a := readAnswer(t, w.Code, w.Header())
		if w.Code != st.status || a.remaining() != st.remaining || a.reset() != st.reset || a.retryAfter != st.retryAfter {
			t.Fatalf("step %d: %d remaining=%d reset=%d retry-after=%d; want %d remaining=%d reset=%d retry-after=%d",
				i, w.Code, a.remaining(), a.reset(), a.retryAfter, st.status, st.remaining, st.reset, st.retryAfter)
		}
		if got := w.Header().Get("RateLimit-Policy"); got != `"default";q=3;w=3` {
			t.Fatalf("step %d: RateLimit-Policy = %q", i, got)
		}
		if w.Code == http.StatusTooManyRequests {
			if ct := w.Header().Get("Content-Type"); ct != "text/plain; charset=utf-8" {
				t.Fatalf("step %d: 429 Content-Type = %q", i, ct)
			}
			if body := w.Body.String(); !strings.HasPrefix(body, "429 Too Many Requests") || !strings.Contains(body, "retry after 1 s") {
				t.Fatalf("step %d: 429 body = %q", i, body)
			}
		}
	}
	if got := next.calls.Load(); got != 5 {
		t.Errorf("handler called %d times, want 5", got)
	}
}

// Without Limit and Window the quota comes from each decision, and w is
// left out.
func TestHeadersFromDecision(t *testing.T) {
	alg := tokenBucket(t, algorithms.Rate{N: 1, Per: time.Second}, 7)
	h := mustNew(t, Config{Limiter: store.NewMemory(alg), Clock: newClock().Now, PolicyName: "per-key"}, &counting{})
	w := get(h)
	if got := w.Header().Get("RateLimit-Policy"); got != `"per-key";q=7` {
		t.Errorf("RateLimit-Policy = %q, want %q", got, `"per-key";q=7`)
	}
	if got := w.Header().Get("RateLimit"); got != `"per-key";r=6;t=1` {
		t.Errorf("RateLimit = %q, want %q", got, `"per-key";r=6;t=1`)
	}
}

func TestEmptyKeyExempt(t *testing.T) {
	alg := tokenBucket(t, algorithms.Rate{N: 1, Per: time.Hour}, 1)
	m, _ := newMetrics(t)
	next := &counting{}
	h := mustNew(t, Config{Limiter: store.NewMemory(alg), Clock: newClock().Now, Metrics: m,
		Key: func(r *http.Request) string {
			if r.URL.Path == "/healthz" {
				return ""
			}
			return "k"
		}}, next)
	for range 5 {
		r := httptest.NewRequest(http.MethodGet, "/healthz", nil)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != 200 || w.Header().Get("RateLimit") != "" {
			t.Fatalf("exempt request: %d %v", w.Code, w.Header())
		}
	}
	if next.calls.Load() != 5 {
		t.Errorf("handler called %d times, want 5", next.calls.Load())
	}
	wantCounts(t, m, map[string]float64{})
}

func TestNewRejectsBadConfig(t *testing.T) {
	mem := store.NewMemory(tokenBucket(t, algorithms.Rate{N: 1, Per: time.Second}, 1))
	for name, cfg := range map[string]Config{
		"no limiter":      {},
		"unknown policy":  {Limiter: mem, OnError: "fail-sideways"},
		"negative limit":  {Limiter: mem, Limit: -1},
		"negative window": {Limiter: mem, Window: -time.Second},
		"policy name":     {Limiter: mem, PolicyName: "naïve"},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: New succeeded, want an error", name)
		} else if !strings.HasPrefix(err.Error(), "httplimit: ") {
			t.Errorf("%s: error %q does not start with the package name", name, err)
		}
	}
}

func TestNewMetricsErrors(t *testing.T) {
	if _, err := NewMetrics(nil); err == nil {
		t.Error("NewMetrics(nil) succeeded, want an error")
	}
	reg := prometheus.NewRegistry()
	if _, err := NewMetrics(reg); err != nil {
		t.Fatal(err)
	}
	if _, err := NewMetrics(reg); err == nil {
		t.Error("registering twice succeeded, want an error")
	}
}

func TestMetricsExposition(t *testing.T) {
	alg := tokenBucket(t, algorithms.Rate{N: 1, Per: time.Hour}, 2)
	m, reg := newMetrics(t)
	h := mustNew(t, Config{Limiter: store.NewMemory(alg), Clock: newClock().Now, Metrics: m}, &counting{})
	for range 5 {
		get(h)
	}
	wantRequests(t, reg, map[string]int{DecisionAllowed: 2, DecisionRejected: 3})
	if n, err := testutil.GatherAndCount(reg, "ratelim_store_seconds"); err != nil || n != 1 {
		t.Errorf("ratelim_store_seconds: %d series, %v", n, err)
	}
	if got := testutil.CollectAndCount(m.store); got != 1 {
		t.Errorf("store histogram: %d series", got)
	}
	if err := testutil.CollectAndCompare(m.store, strings.NewReader(histogramCount("ratelim_store_seconds", 5)), "ratelim_store_seconds"); err != nil {
		// The fixed clock makes every observation 0 s: all in the first bucket.
		t.Error(err)
	}
}

// histogramCount is the exposition of a histogram with count observations,
// all 0, in storeBuckets.
func histogramCount(name string, count int) string {
	var b strings.Builder
	b.WriteString("# HELP " + name + " How long the rate limiter's store took to decide one request, failures included.\n")
	b.WriteString("# TYPE " + name + " histogram\n")
	for _, le := range []string{"1e-05", "4e-05", "0.00016", "0.00064", "0.00256", "0.01024", "0.04096", "0.16384", "0.65536", "2.62144", "+Inf"} {
		b.WriteString(name + `_bucket{le="` + le + `"} ` + strconv.Itoa(count) + "\n")
	}
	b.WriteString(name + "_sum 0\n")
	b.WriteString(name + "_count " + strconv.Itoa(count) + "\n")
	return b.String()
}

// logLines counts the records of each level a slog text handler wrote.
type logLines struct{ syncbuf.Buffer }

func (l *logLines) count(level string) int {
	return strings.Count(l.String(), "level="+level+" ")
}

func TestFailPolicies(t *testing.T) {
	for _, tt := range []struct {
		policy     store.Policy
		wantStatus int
		outcome    string
	}{
		{"", http.StatusOK, DecisionFailedOpen}, // the default
		{store.FailOpen, http.StatusOK, DecisionFailedOpen},
		{store.FailClosed, http.StatusServiceUnavailable, DecisionFailedClosed},
	} {
		t.Run(string(tt.policy), func(t *testing.T) {
			alg := tokenBucket(t, algorithms.Rate{N: 1, Per: time.Hour}, 100)
			lim := &flaky{next: store.NewMemory(alg)}
			m, _ := newMetrics(t)
			var logs logLines
			next := &counting{}
			clk := newClock()
			h := mustNew(t, Config{Limiter: lim, OnError: tt.policy, Clock: clk.Now, Metrics: m,
				Logger: slog.New(slog.NewTextHandler(&logs, nil))}, next)

			// Up, down for 5, up for 3, down for 2, up; each time the
			// store comes back, it has been back long enough to be
			// logged recovered (a minute: the second failure, a relapse,
			// needs twice RecoveryQuiet).
			run := func(down bool, n int) {
				t.Helper()
				lim.down.Store(down)
				if !down {
					clk.Advance(relapseWindow)
				}
				for range n {
					w := get(h)
					a := readAnswer(t, w.Code, w.Header())
					if !down {
						if w.Code != 200 || !a.hasRateFields {
							t.Fatalf("store up: %d, fields %v", w.Code, a.hasRateFields)
						}
						continue
					}
					if w.Code != tt.wantStatus {
						t.Fatalf("store down: status %d, want %d", w.Code, tt.wantStatus)
					}
					if a.hasRateFields {
						t.Fatalf("store down: RateLimit fields sent: %v", w.Header())
					}
					if w.Code == http.StatusServiceUnavailable {
						if a.retryAfter != 1 {
							t.Fatalf("fail-closed Retry-After = %d, want 1", a.retryAfter)
						}
						if strings.Contains(w.Body.String(), errRefused.Error()) {
							t.Fatalf("fail-closed body leaks the store error: %q", w.Body.String())
						}
					}
				}
			}
			run(false, 1)
			run(true, 5)
			run(false, 3)
			run(true, 2)
			run(false, 1)

			wantCalls := int64(5)
			if tt.wantStatus == http.StatusOK {
				wantCalls += 7
			}
			if got := next.calls.Load(); got != wantCalls {
				t.Errorf("handler called %d times, want %d", got, wantCalls)
			}
			wantCounts(t, m, map[string]float64{DecisionAllowed: 5, tt.outcome: 7})
			if got := testutil.CollectAndCount(m.store); got != 1 {
				t.Errorf("store histogram: %d series", got)
			}
			if w, i := logs.count("WARN"), logs.count("INFO"); w != 2 || i != 2 {
				t.Errorf("logged %d warnings and %d recoveries, want 2 and 2:\n%s", w, i, logs.String())
			}
			if !strings.Contains(logs.String(), "decided_by_policy=5") || !strings.Contains(logs.String(), "connection refused") {
				t.Errorf("log does not say how many were decided by policy or why:\n%s", logs.String())
			}
		})
	}
}

// A limiter already wrapped in a policy keeps its own.
func TestPrewrappedLimiter(t *testing.T) {
	lim := &flaky{next: store.NewMemory(tokenBucket(t, algorithms.Rate{N: 1, Per: time.Hour}, 1))}
	lim.down.Store(true)
	m, _ := newMetrics(t)
	h := mustNew(t, Config{Limiter: store.WithPolicy(lim, store.FailClosed), OnError: store.FailOpen, Metrics: m}, &counting{})
	if w := get(h); w.Code != http.StatusServiceUnavailable {
		t.Errorf("status %d, want 503 from the inner fail-closed policy", w.Code)
	}
	wantCounts(t, m, map[string]float64{DecisionFailedClosed: 1})
}

// blocking is a store that answers only when the caller gives up.
type blocking struct{}

func (blocking) Take(ctx context.Context, _ string, _ algorithms.Time, _ int64) (store.Decision, error) {
	<-ctx.Done()
	return store.Decision{}, ctx.Err()
}

func TestCanceledBeforeDecision(t *testing.T) {
	m, _ := newMetrics(t)
	next := &counting{}
	h := mustNew(t, Config{Limiter: blocking{}, OnError: store.FailOpen, Metrics: m}, next)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	r := httptest.NewRequest(http.MethodGet, "/", nil).WithContext(ctx)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusServiceUnavailable || next.calls.Load() != 0 {
		t.Errorf("status %d, handler called %d times; want 503 and 0 (a deadline is not a store failure to fail open on)", w.Code, next.calls.Load())
	}
	wantCounts(t, m, map[string]float64{DecisionCanceled: 1})
}

// Many goroutines, one key, a clock that does not move: the middleware adds
// no race to the store's atomic step, so exactly burst requests pass.
func TestConcurrentExactlyBurst(t *testing.T) {
	const burst, goroutines, each = 50, 64, 20
	alg := tokenBucket(t, algorithms.Rate{N: 1, Per: time.Hour}, burst)
	m, _ := newMetrics(t)
	next := &counting{}
	h := mustNew(t, Config{Limiter: store.NewMemory(alg), Clock: newClock().Now, Metrics: m}, next)
	var ok, tooMany atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range goroutines {
		wg.Go(func() {
			<-start
			for range each {
				w := get(h, "X-API-Key", "shared")
				switch w.Code {
				case http.StatusOK:
					ok.Add(1)
				case http.StatusTooManyRequests:
					tooMany.Add(1)
				default:
					t.Errorf("status %d", w.Code)
				}
			}
		})
	}
	close(start)
	wg.Wait()
	if ok.Load() != burst || next.calls.Load() != burst || tooMany.Load() != goroutines*each-burst {
		t.Errorf("%d passed (handler called %d times), %d rejected; want %d and %d",
			ok.Load(), next.calls.Load(), tooMany.Load(), burst, goroutines*each-burst)
	}
	wantCounts(t, m, map[string]float64{DecisionAllowed: burst, DecisionRejected: goroutines*each - burst})
}

func TestPolicyDecisionsSayWhoDecided(t *testing.T) {
	for _, p := range []store.Policy{store.FailOpen, store.FailClosed} {
		down := &flaky{next: store.NewMemory(tokenBucket(t, algorithms.Rate{N: 1, Per: time.Second}, 1))}
		down.down.Store(true)
		mw, err := New(Config{Limiter: down, OnError: p, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Header.Set("X-API-Key", "k")
		mw(&counting{}).ServeHTTP(rec, req)
		if got := rec.Header().Get(DecidedByHeader); got != string(p) {
			t.Errorf("%s: %s = %q", p, DecidedByHeader, got)
		}
	}
}

// In shadow mode nothing is refused: the handler runs for every request,
// the ones the limit would have refused say so in ShadowHeader and count
// as would_reject, and no RateLimit field tells a client to slow down.
func TestShadowModeRefusesNothing(t *testing.T) {
	alg := tokenBucket(t, algorithms.Rate{N: 1, Per: time.Hour}, 2)
	m, reg := newMetrics(t)
	next := &counting{}
	h := mustNew(t, Config{Limiter: store.NewMemory(alg), Clock: newClock().Now, Metrics: m, Shadow: true}, next)
	var shadowed int
	for i := range 5 {
		rec := get(h)
		if rec.Code != http.StatusOK {
			t.Fatalf("request %d: %d, want 200 in shadow mode", i, rec.Code)
		}
		if rec.Header().Get("RateLimit") != "" || rec.Header().Get("RateLimit-Policy") != "" {
			t.Errorf("request %d wrote RateLimit fields in shadow mode: %v", i, rec.Header())
		}
		if v := rec.Header().Get(ShadowHeader); v == "would-reject" {
			shadowed++
		} else if v != "" {
			t.Errorf("request %d: %s %q", i, ShadowHeader, v)
		}
	}
	if shadowed != 3 || next.calls.Load() != 5 {
		t.Errorf("%d would-be refusals and %d handled, want 3 (a burst of 2 of 5) and 5", shadowed, next.calls.Load())
	}
	wantRequests(t, reg, map[string]int{DecisionAllowed: 2, DecisionWouldReject: 3})
}

// A cost function spends a request's weight of the quota: with a bucket of
// 10, two searches at 5 spend it all and the next request of any cost is
// refused; a free request (cost 0) still passes, spending nothing, and a
// negative cost counts as 0.
func TestCostSpendsItsWeight(t *testing.T) {
	alg := tokenBucket(t, algorithms.Rate{N: 1, Per: time.Hour}, 10)
	cost := func(r *http.Request) int64 {
		switch r.Header.Get("X-Op") {
		case "search":
			return 5
		case "free":
			return 0
		case "broken":
			return -3
		}
		return 1
	}
	h := mustNew(t, Config{Limiter: store.NewMemory(alg), Clock: newClock().Now, Cost: cost}, &counting{})
	for i, step := range []struct {
		op   string
		code int
	}{
		{"search", http.StatusOK}, {"search", http.StatusOK},
		{"", http.StatusTooManyRequests}, {"search", http.StatusTooManyRequests},
		{"free", http.StatusOK}, {"broken", http.StatusOK},
	} {
		if rec := get(h, "X-Op", step.op); rec.Code != step.code {
			t.Errorf("request %d (%q): %d, want %d", i, step.op, rec.Code, step.code)
		}
	}
}

// A dark launch flipped to enforce: shadowed until an instant of the
// Clock, the limit refuses from then on, RateLimit fields and all.
func TestShadowUntilThenEnforce(t *testing.T) {
	alg := tokenBucket(t, algorithms.Rate{N: 1, Per: time.Hour}, 1)
	clk := newClock()
	h := mustNew(t, Config{Limiter: store.NewMemory(alg), Clock: clk.Now, Shadow: true, ShadowUntil: t0.Add(time.Second)}, &counting{})
	get(h)
	if rec := get(h); rec.Code != http.StatusOK || rec.Header().Get(ShadowHeader) != "would-reject" {
		t.Fatalf("before the flip: %d %v, want 200 with %s", rec.Code, rec.Header(), ShadowHeader)
	}
	clk.Advance(time.Second)
	if rec := get(h); rec.Code != http.StatusTooManyRequests || rec.Header().Get(ShadowHeader) != "" || rec.Header().Get("RateLimit") == "" {
		t.Fatalf("at the flip: %d %v, want a 429 with RateLimit fields and no %s", rec.Code, rec.Header(), ShadowHeader)
	}
}

// wantRequests fails the test unless reg exposes ratelim_requests_total
// with these counts by decision, and 0 for every other decision (each
// series exists from the start).
func wantRequests(t *testing.T, reg *prometheus.Registry, counts map[string]int) {
	t.Helper()
	labels := slices.Clone(outcomeLabels[:])
	slices.Sort(labels)
	want := "# HELP ratelim_requests_total Requests seen by the rate limiter, by decision: allowed, rejected (429), failed_open and failed_closed (the store failed and the fail policy decided), canceled (the request's context ended first), key_too_long (431 or 400: a key longer than the bound, never given to the store), would_reject (shadow mode: a 429 it did not send), shed (503: let through by the limit, turned away by the load shedder), no_key (400: no key, and the key is required).\n# TYPE ratelim_requests_total counter\n"
	for _, l := range labels {
		want += fmt.Sprintf("ratelim_requests_total{decision=%q} %d\n", l, counts[l])
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "ratelim_requests_total"); err != nil {
		t.Error(err)
	}
}

// RequireKey refuses a request without a key with 400, before the limiter
// and the handler, and counts it; without RequireKey it passes unlimited.
func TestRequireKey(t *testing.T) {
	for _, require := range []bool{false, true} {
		t.Run(fmt.Sprint("require=", require), func(t *testing.T) {
			next := &counting{}
			m, _ := newMetrics(t)
			h := mustNew(t, Config{Limiter: store.NewServerMemory(tokenBucket(t, algorithms.Rate{N: 1, Per: time.Minute}, 1)),
				Key: KeyByHeader("X-API-Key", KeyPrefixAPIKey), RequireKey: require, KeyName: "the X-API-Key header", Metrics: m}, next)
			for range 3 {
				w := get(h, "X-User", "alice")
				switch {
				case require && (w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "the X-API-Key header")):
					t.Fatalf("no key, required: %d %q, want 400 naming the header", w.Code, w.Body)
				case !require && w.Code != http.StatusOK:
					t.Fatalf("no key, not required: %d, want 200 (exempt)", w.Code)
				}
				if w.Header().Get("RateLimit") != "" {
					t.Errorf("an unkeyed request got RateLimit fields: %q", w.Header().Get("RateLimit"))
				}
			}
			if require {
				wantCounts(t, m, map[string]float64{DecisionNoKey: 3})
				if next.calls.Load() != 0 {
					t.Errorf("the handler ran %d times for requests refused for no key", next.calls.Load())
				}
			} else {
				wantCounts(t, m, map[string]float64{})
				if next.calls.Load() != 3 {
					t.Errorf("the handler ran %d times, want 3", next.calls.Load())
				}
			}
			// A keyed request is limited as usual either way.
			if w := get(h, "X-API-Key", "k"); w.Code != http.StatusOK {
				t.Fatalf("first keyed request: %d", w.Code)
			}
			if w := get(h, "X-API-Key", "k"); w.Code != http.StatusTooManyRequests {
				t.Fatalf("second keyed request: %d, want 429", w.Code)
			}
		})
	}
}
