package httplimit

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/internal/syncbuf"
	"github.com/ratelim/ratelim/store"
	"github.com/ratelim/ratelim/store/redisstore"
)

// hangGuard bounds how long a test waits for something that must happen
// (a handler to start, a release to arrive): a failure, never a schedule
// the test asserts on.
const hangGuard = 10 * time.Second

func concurrency(t testing.TB, maxInFlight int64, ttl time.Duration) *algorithms.Concurrency {
	t.Helper()
	alg, err := algorithms.NewConcurrency(maxInFlight, ttl)
	if err != nil {
		t.Fatal(err)
	}
	return alg
}

// release is one call to a Releaser, as recordingStore saw it.
type release struct {
	key         string
	now, lease  algorithms.Time
	cost        int64
	ctxErr      error // the release context's error when it was called
	hasDeadline bool
	value       any // the value of ctxKey{} the release context carried
}

type ctxKey struct{}

// recordingStore is a memory store that records each decision's lease and
// each release, and tells a channel of every release.
type recordingStore struct {
	*store.Memory
	fail     atomic.Bool // Release fails, releasing nothing
	mu       sync.Mutex
	leases   []algorithms.Time
	releases []release
	released chan release
}

func newRecordingStore(alg algorithms.Algorithm) *recordingStore {
	return &recordingStore{Memory: store.NewMemory(alg), released: make(chan release, 100)}
}

func (s *recordingStore) Take(ctx context.Context, key string, now algorithms.Time, cost int64) (store.Decision, error) {
	d, err := s.Memory.Take(ctx, key, now, cost)
	if d.Lease != 0 {
		s.mu.Lock()
		s.leases = append(s.leases, d.Lease)
		s.mu.Unlock()
	}
	return d, err
}

func (s *recordingStore) Release(ctx context.Context, key string, now, lease algorithms.Time, cost int64) error {
	_, hasDeadline := ctx.Deadline()
	r := release{key: key, now: now, lease: lease, cost: cost, ctxErr: ctx.Err(), hasDeadline: hasDeadline, value: ctx.Value(ctxKey{})}
	s.mu.Lock()
	s.releases = append(s.releases, r)
	s.mu.Unlock()
	s.released <- r
	if s.fail.Load() {
		return errRefused
	}
	return s.Memory.Release(ctx, key, now, lease, cost)
}

func (s *recordingStore) Releases() []release {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]release(nil), s.releases...)
}

func (s *recordingStore) Leases() []algorithms.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]algorithms.Time(nil), s.leases...)
}

// waitRelease returns the next release s sees, failing after hangGuard.
func waitRelease(t *testing.T, s *recordingStore) release {
	t.Helper()
	select {
	case r := <-s.released:
		return r
	case <-time.After(hangGuard):
		t.Fatalf("no release within %s", hangGuard)
		return release{}
	}
}

// noRelease hides a store's Release, as a Redis store without the
// concurrency script, or a store wrapped by another, does.
type noRelease struct{ next store.Limiter }

func (n noRelease) Take(ctx context.Context, key string, now algorithms.Time, cost int64) (store.Decision, error) {
	return n.next.Take(ctx, key, now, cost)
}

// releaseCounts reads ratelim_lease_releases_total's two series.
func releaseCounts(m *Metrics) (ok, failed float64) {
	return testutil.ToFloat64(m.releases[released]), testutil.ToFloat64(m.releases[releaseFailed])
}

// One slot, three requests one after the other, on a fixed clock that
// the handler moves on: each gives its lease back when it is done, at the
// Clock's instant after the handler, with its cost, so the next is
// admitted; a lease that was never given back would refuse it.
func TestLeaseReleasedWhenDone(t *testing.T) {
	clk := newClock()
	s := newRecordingStore(concurrency(t, 1, time.Minute))
	m, _ := newMetrics(t)
	h := mustNew(t, Config{Limiter: s, Clock: clk.Now, Metrics: m,
		Cost: func(*http.Request) int64 { return 1 }},
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			clk.Advance(3 * time.Second) // the request takes 3 s
			w.Write([]byte("ok\n"))
		}))
	for i := range 3 {
		if w := get(h); w.Code != http.StatusOK {
			t.Fatalf("request %d: status %d, want 200 (the previous lease was given back)", i, w.Code)
		}
	}
	leases, rels := s.Leases(), s.Releases()
	if len(rels) != 3 || len(leases) != 3 {
		t.Fatalf("%d leases, %d releases; want 3 and 3", len(leases), len(rels))
	}
	for i, r := range rels {
		wantNow := algorithms.FromTime(t0.Add(time.Duration(i+1) * 3 * time.Second))
		if r.lease != leases[i] || r.now != wantNow || r.cost != 1 || r.key == "" {
			t.Errorf("release %d = %+v; want lease %d at %d, cost 1", i, r, leases[i], wantNow)
		}
		if r.ctxErr != nil || !r.hasDeadline {
			t.Errorf("release %d: context error %v, deadline %v; want a live context with a deadline", i, r.ctxErr, r.hasDeadline)
		}
	}
	if rel, failed := releaseCounts(m); rel != 3 || failed != 0 {
		t.Errorf("releases counted: %v released, %v failed; want 3, 0", rel, failed)
	}
}

// A handler that panics gives its lease back on the way out, and the
// panic reaches the caller unchanged: called directly, the same value is
// recovered; behind a real server, its recovery logs it and the next
// request finds the slot free.
func TestLeaseReleasedOnPanic(t *testing.T) {
	s := newRecordingStore(concurrency(t, 1, time.Minute))
	boom := errors.New("boom")
	h := mustNew(t, Config{Limiter: s, Clock: newClock().Now, Key: func(*http.Request) string { return "k" }},
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/panic" {
				panic(boom)
			}
			w.Write([]byte("ok\n"))
		}))

	func() {
		defer func() {
			if got := recover(); got != boom {
				t.Errorf("recovered %v; want the handler's own panic value", got)
			}
		}()
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/panic", nil))
	}()
	if rels := s.Releases(); len(rels) != 1 {
		t.Fatalf("%d releases after a panic; want 1", len(rels))
	}
	<-s.released

	var serverLog syncbuf.Buffer
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = log.New(&serverLog, "", 0)
	srv.Start()
	defer srv.Close()
	if _, err := http.Get(srv.URL + "/panic"); err == nil {
		t.Error("a panicking handler answered; want the connection cut")
	}
	waitRelease(t, s)
	resp, err := http.Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("after the panic: status %d, want 200 (the slot was given back)", resp.StatusCode)
	}
	waitRelease(t, s)
	if !strings.Contains(serverLog.String(), "boom") {
		t.Errorf("the server's recovery did not see the panic; its log: %q", serverLog.String())
	}
}

// A client that gives up while the handler holds its request: the handler
// returns when its context is done, and the lease is given back with a
// context of its own (not done, with a deadline, carrying the request's
// values), on a real server on loopback.
func TestLeaseReleasedOnDisconnect(t *testing.T) {
	s := newRecordingStore(concurrency(t, 1, time.Minute))
	started := make(chan struct{})
	var sawCancel atomic.Bool
	inner := mustNew(t, Config{Limiter: s, Key: func(*http.Request) string { return "k" }},
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/hold" {
				return
			}
			close(started)
			select {
			case <-r.Context().Done():
				sawCancel.Store(true)
			case <-time.After(hangGuard):
			}
		}))
	withValue := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inner.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxKey{}, "request value")))
	})
	srv := httptest.NewServer(withValue)
	defer srv.Close()

	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/hold", nil)
	done := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	select {
	case <-started:
	case <-time.After(hangGuard):
		t.Fatal("the handler never started")
	}
	cancel()
	if err := <-done; err == nil {
		t.Error("the cancelled request got an answer")
	}
	r := waitRelease(t, s)
	if !sawCancel.Load() {
		t.Error("the handler returned without seeing its context done")
	}
	if r.ctxErr != nil || !r.hasDeadline || r.value != "request value" {
		t.Errorf("release context: error %v, deadline %v, value %v; want not done, a deadline, the request's value", r.ctxErr, r.hasDeadline, r.value)
	}
	if leases := s.Leases(); len(leases) != 1 || r.lease != leases[0] || r.cost != 1 || r.key != "k" {
		t.Errorf("release %+v; want key k, cost 1, lease %v", r, leases)
	}
	// The slot is free: the next request passes.
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("after the disconnect: status %d, want 200", resp.StatusCode)
	}
	waitRelease(t, s)
}

// Algorithms that hand out no leases release nothing: no call to the
// store, no count.
func TestNoLeaseNoRelease(t *testing.T) {
	s := newRecordingStore(tokenBucket(t, algorithms.Rate{N: 1, Per: time.Second}, 3))
	m, _ := newMetrics(t)
	h := mustNew(t, Config{Limiter: s, Clock: newClock().Now, Metrics: m}, &counting{})
	for range 5 {
		get(h)
	}
	if rels := s.Releases(); len(rels) != 0 {
		t.Errorf("%d releases on a token bucket; want none", len(rels))
	}
	if rel, failed := releaseCounts(m); rel != 0 || failed != 0 {
		t.Errorf("releases counted: %v, %v; want 0, 0", rel, failed)
	}
}

// A refused request holds no lease, and gives nothing back.
func TestRefusedHoldsNoLease(t *testing.T) {
	s := newRecordingStore(concurrency(t, 1, time.Minute))
	var refused *httptest.ResponseRecorder
	var h http.Handler
	h = mustNew(t, Config{Limiter: s, Clock: newClock().Now}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		refused = get(h) // a second request while the first holds the slot
	}))
	get(h)
	if refused == nil || refused.Code != http.StatusTooManyRequests {
		t.Fatalf("the request beyond the one slot was not refused: %v", refused)
	}
	if got := refused.Header().Get("Retry-After"); got != "1" {
		t.Errorf("Retry-After %q; want 1 (a concurrency limit's, capped at 1 s)", got)
	}
	if got := refused.Header().Get("RateLimit-Policy"); got != `"default";q=1` {
		t.Errorf("RateLimit-Policy %q; want \"default\";q=1 (no window: 1 in flight)", got)
	}
	if rels := s.Releases(); len(rels) != 1 {
		t.Errorf("%d releases; want 1, the admitted request's", len(rels))
	}
}

// A store with no Release: requests pass, nothing is given back (the slot
// stays taken until the lease's TTL), and the log hears it once.
func TestStoreWithoutReleaseLogsOnce(t *testing.T) {
	var lines logLines
	clk := newClock()
	h := mustNew(t, Config{Limiter: noRelease{store.NewMemory(concurrency(t, 2, 10*time.Second))}, Clock: clk.Now,
		Logger: slog.New(slog.NewTextHandler(&lines, nil))}, &counting{})
	want := []int{http.StatusOK, http.StatusOK, http.StatusTooManyRequests}
	for i, code := range want {
		if w := get(h); w.Code != code {
			t.Errorf("request %d: status %d, want %d", i, w.Code, code)
		}
	}
	clk.Advance(10 * time.Second) // the leases expire
	if w := get(h); w.Code != http.StatusOK {
		t.Errorf("after the TTL: status %d, want 200", w.Code)
	}
	if n := lines.count("WARN"); n != 1 || !strings.Contains(lines.String(), "cannot give back") {
		t.Errorf("%d warnings; want 1 saying the store cannot give back a lease. Log:\n%s", n, lines.String())
	}
}

// A release that fails is counted and logged once per run of failures;
// the recovery is logged too.
func TestReleaseFailureCountedAndLoggedOnce(t *testing.T) {
	var lines logLines
	s := newRecordingStore(concurrency(t, 5, time.Minute))
	s.fail.Store(true)
	m, _ := newMetrics(t)
	h := mustNew(t, Config{Limiter: s, Clock: newClock().Now, Metrics: m,
		Logger: slog.New(slog.NewTextHandler(&lines, nil))}, &counting{})
	for range 3 {
		get(h)
	}
	s.fail.Store(false)
	get(h)
	if rel, failed := releaseCounts(m); rel != 1 || failed != 3 {
		t.Errorf("releases counted: %v released, %v failed; want 1, 3", rel, failed)
	}
	if w, i := lines.count("WARN"), lines.count("INFO"); w != 1 || i != 1 {
		t.Errorf("%d warnings, %d infos; want 1 and 1. Log:\n%s", w, i, lines.String())
	}
	// The three leases that did not come back hold 3 of the 5 slots.
	if w := get(h); w.Code != http.StatusOK || w.Header().Get("RateLimit") != `"default";r=1;t=60` {
		t.Errorf("status %d, RateLimit %q; want 200 with r=1 (3 leases held, 1 taken now)", w.Code, w.Header().Get("RateLimit"))
	}
}

// Many goroutines through the middleware at once, on the real clock and
// the memory store, with a limit of n in flight: the handlers running at
// once, counted inside the handler, never exceed n, whatever the
// interleaving, and every lease comes back (the next burst is admitted as
// the first was). The TTL is far longer than the test, so no lease
// expires under a request still running.
func TestConcurrencyNeverMoreThanN(t *testing.T) {
	for _, n := range []int64{1, 3, 8} {
		t.Run(fmt.Sprintf("max=%d", n), func(t *testing.T) {
			checkNeverMoreThanN(t, store.NewServerMemory(concurrency(t, n, time.Hour)), n)
		})
	}
}

// checkNeverMoreThanN sends many requests at once through the middleware
// over lim, a store running a limit of n in flight on one key, and checks
// that no more than n handlers ever ran at once and that every admitted
// request gave its lease back.
func checkNeverMoreThanN(t *testing.T, lim store.Limiter, n int64) {
	t.Helper()
	const goroutines, each = 32, 40
	var running, peak, ran atomic.Int64
	m, _ := newMetrics(t)
	h := mustNew(t, Config{Limiter: lim, Metrics: m,
		Key: func(*http.Request) string { return "one-key" }},
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			now := running.Add(1)
			for p := peak.Load(); now > p && !peak.CompareAndSwap(p, now); p = peak.Load() {
			}
			ran.Add(1)
			time.Sleep(50 * time.Microsecond)
			running.Add(-1)
		}))
	var wg sync.WaitGroup
	var admitted, refused atomic.Int64
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				switch w := get(h); w.Code {
				case http.StatusOK:
					admitted.Add(1)
				case http.StatusTooManyRequests:
					refused.Add(1)
				default:
					t.Errorf("status %d", w.Code)
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("n=%d: %d admitted, %d refused, peak %d running", n, admitted.Load(), refused.Load(), peak.Load())
	if p := peak.Load(); p > n || p < 1 {
		t.Errorf("peak of %d handlers running at once; want 1 to %d", p, n)
	}
	if admitted.Load()+refused.Load() != goroutines*each || ran.Load() != admitted.Load() {
		t.Errorf("%d admitted + %d refused, %d ran; want %d in all, every admitted one run", admitted.Load(), refused.Load(), ran.Load(), goroutines*each)
	}
	if rel, failed := releaseCounts(m); rel != float64(admitted.Load()) || failed != 0 {
		t.Errorf("%v released, %v failed; want %d, 0", rel, failed, admitted.Load())
	}
}

// The same against a Redis store (REDIS_URL's server, else the embedded
// one), once the store can run a concurrency limit and give its leases
// back; skipped until then.
func TestRedisConcurrencyNeverMoreThanN(t *testing.T) {
	url := os.Getenv("REDIS_URL")
	if url == "" {
		url = store.Embedded
	}
	const n = 3
	ctx := context.Background()
	r, err := redisstore.Open(ctx, concurrency(t, n, time.Hour),
		redisstore.Options{URL: url, Prefix: fmt.Sprintf("ratelim-httplimit-lease:%d:", time.Now().UnixNano())})
	if err != nil {
		t.Skipf("the Redis store cannot run a concurrency limit yet: %v", err)
	}
	t.Cleanup(func() {
		r.Clear(ctx)
		r.Close()
	})
	if _, ok := any(r).(store.Releaser); !ok {
		t.Skip("redisstore.Store has no Release yet: the middleware would leave each lease to its TTL")
	}
	checkNeverMoreThanN(t, r, n)
}

// A key with several limits, one of them on requests in flight: the
// Multi's decision carries the lease, and the middleware gives it back.
func TestMultiLeaseReleased(t *testing.T) {
	multi, err := algorithms.NewMulti([]algorithms.Policy{
		{Name: "rate", Algorithm: tokenBucket(t, algorithms.Rate{N: 100, Per: time.Second}, 100)},
		{Name: "in-flight", Algorithm: concurrency(t, 1, time.Minute)},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := newRecordingStore(multi)
	h := mustNew(t, Config{Limiter: s, Clock: newClock().Now, Policies: QuotasOf(multi)}, &counting{})
	for i := range 3 {
		w := get(h)
		if w.Code != http.StatusOK {
			t.Fatalf("request %d: status %d; want 200 (the one slot given back each time)", i, w.Code)
		}
		if got := w.Header().Get("RateLimit-Policy"); got != `"rate";q=100;w=1, "in-flight";q=1` {
			t.Errorf("RateLimit-Policy %q", got)
		}
	}
	if rels := s.Releases(); len(rels) != 3 {
		t.Errorf("%d releases; want 3", len(rels))
	}
}

// A concurrency limit in shadow mode: an admitted request's lease is given
// back as an enforced one's is, so the limit counts what really runs, and
// the request beyond the slots is let through, marked would-reject,
// holding none.
func TestShadowLeaseReleased(t *testing.T) {
	s := newRecordingStore(concurrency(t, 1, time.Minute))
	var inner *httptest.ResponseRecorder
	var nested bool
	var h http.Handler
	h = mustNew(t, Config{Limiter: s, Clock: newClock().Now, Shadow: true}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !nested {
			nested = true
			inner = get(h) // beyond the one slot
		}
	}))
	if w := get(h); w.Code != http.StatusOK {
		t.Fatalf("status %d", w.Code)
	}
	if inner.Code != http.StatusOK || inner.Header().Get(ShadowHeader) != "would-reject" {
		t.Errorf("the request beyond the slot: %d %q; want 200 would-reject", inner.Code, inner.Header().Get(ShadowHeader))
	}
	if rels := s.Releases(); len(rels) != 1 {
		t.Errorf("%d releases; want 1, the admitted request's", len(rels))
	}
	if w := get(h); w.Header().Get(ShadowHeader) != "" {
		t.Error("the slot was not given back")
	}
}

// A key with a leaky bucket and a concurrency limit: a request whose
// context ends while it waits its delay never reaches the handler, and its
// lease is given back.
func TestLeaseReleasedWhenDelayCut(t *testing.T) {
	leaky, err := algorithms.NewLeakyBucket(algorithms.Rate{N: 1, Per: time.Second}, 5)
	if err != nil {
		t.Fatal(err)
	}
	multi, err := algorithms.NewMulti([]algorithms.Policy{
		{Name: "queue", Algorithm: leaky},
		{Name: "in-flight", Algorithm: concurrency(t, 2, time.Minute)},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := newRecordingStore(multi)
	next := &counting{}
	h := mustNew(t, Config{Limiter: s, Clock: newClock().Now, Policies: QuotasOf(multi)}, next)
	get(h) // no delay; released when done
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil).WithContext(ctx)) // a delay of 1 s, cut at once
	if w.Code != http.StatusServiceUnavailable || next.calls.Load() != 1 {
		t.Errorf("status %d, handler called %d times; want 503, once (the first request)", w.Code, next.calls.Load())
	}
	if leases, rels := s.Leases(), s.Releases(); len(leases) != 2 || len(rels) != 2 || rels[1].lease != leases[1] {
		t.Errorf("leases %v, releases %+v; want both given back", leases, rels)
	}
}
