package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
)

func tokenBucket(t testing.TB, n int64, burst int64) algorithms.Algorithm {
	t.Helper()
	a, err := algorithms.NewTokenBucket(algorithms.Rate{N: n, Per: time.Second}, burst)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// hammer runs goroutines × perGoroutine Takes on one key at one instant (no
// refill can happen) and returns how many were admitted.
func hammer(t *testing.T, l Limiter, goroutines, perGoroutine int) int64 {
	t.Helper()
	var admitted atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan error, goroutines)
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for range perGoroutine {
				d, err := l.Take(context.Background(), "hot", 1_000_000, 1)
				if err != nil {
					errs <- err
					return
				}
				if d.Allowed {
					admitted.Add(1)
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return admitted.Load()
}

func TestMemoryTakeMatchesTheStep(t *testing.T) {
	for _, name := range algorithms.Names() {
		alg, err := algorithms.New(name, algorithms.Params{Rate: algorithms.Rate{N: 7, Per: time.Second}, Burst: 3, Window: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		m := NewMemory(alg)
		var st algorithms.State
		for i := range 200 {
			now := algorithms.Time(i * 37_000)
			var want algorithms.Decision
			st, want = alg.Step(st, now, int64(i%3))
			got, err := m.Take(context.Background(), "k", now, int64(i%3))
			if err != nil || got.Decision != want || got.Policy != "" {
				t.Fatalf("%s request %d: Take = %+v, %v; want %+v", name, i, got, err, want)
			}
		}
	}
}

func TestAtomicStoresNeverOverAdmit(t *testing.T) {
	const burst = 10
	alg := tokenBucket(t, 1, burst)
	stores := map[string]Limiter{"memory": NewMemory(alg)}
	r, err := OpenRedis(context.Background(), alg, RedisOptions{URL: Embedded})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	stores["miniredis"] = r
	if real := openRealRedis(t, alg); real != nil {
		stores["redis-server"] = real
	}
	for name, l := range stores {
		if got := hammer(t, l, 8, 25); got != burst {
			t.Errorf("%s: admitted %d of 200 concurrent requests on one key, want exactly the burst %d", name, got, burst)
		}
	}
}

// TestRacyOverAdmits shows the lost update deterministically: every goroutine
// reads the same full bucket before any writes, and every one admits.
func TestRacyOverAdmits(t *testing.T) {
	const goroutines = 8
	alg := tokenBucket(t, 1, 1)
	var read sync.WaitGroup
	read.Add(goroutines)
	racy := NewRacy(alg, NewMemory(alg))
	racy.Gap = func() { read.Done(); read.Wait() } // write only once all have read
	if got := hammer(t, racy, goroutines, 1); got != goroutines {
		t.Fatalf("racy admitted %d with burst 1 when %d read before any wrote, want %d", got, goroutines, goroutines)
	}
}

// TestRacyOverAdmitsUnderLoad is the same race as it happens: goroutines
// hammering a real store over real connections, with a read-to-write gap of
// a round trip. Nothing lines them up; they over-admit anyway.
func TestRacyOverAdmitsUnderLoad(t *testing.T) {
	const burst = 5
	alg := tokenBucket(t, 1, burst)
	kvs := map[string]KV{"memory": NewMemory(alg)}
	r, err := OpenRedis(context.Background(), alg, RedisOptions{URL: Embedded})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	kvs["miniredis"] = r
	if real := openRealRedis(t, alg); real != nil {
		kvs["redis-server"] = real
	}
	for name, kv := range kvs {
		racy := NewRacy(alg, kv)
		racy.Gap = func() { time.Sleep(200 * time.Microsecond) }
		if got := hammer(t, racy, 8, 10); got <= burst {
			t.Errorf("%s: racy admitted %d, want more than the burst %d: the race did not show", name, got, burst)
		} else {
			t.Logf("%s: racy admitted %d of 80 with burst %d", name, got, burst)
		}
	}
}

func TestPolicyDecidesWhenTheStoreFails(t *testing.T) {
	down := errors.New("connection refused")
	failing := limiterFunc(func(context.Context, string, algorithms.Time, int64) (Decision, error) {
		return Decision{}, down
	})
	d, err := WithPolicy(failing, FailOpen).Take(context.Background(), "k", 0, 1)
	if err != nil || !d.Allowed || d.Policy != FailOpen || !errors.Is(d.Err, down) {
		t.Errorf("fail-open: %+v, %v; want allowed by fail-open with the store's error", d, err)
	}
	d, err = WithPolicy(failing, FailClosed).Take(context.Background(), "k", 0, 1)
	if err != nil || d.Allowed || d.Policy != FailClosed || d.RetryAfter != DefaultFailClosedRetryAfter || !errors.Is(d.Err, down) {
		t.Errorf("fail-closed: %+v, %v; want rejected by fail-closed, Retry-After %v", d, err, DefaultFailClosedRetryAfter)
	}
	// A healthy store's decision passes through untouched.
	alg := tokenBucket(t, 1, 1)
	d, err = WithPolicy(NewMemory(alg), FailClosed).Take(context.Background(), "k", 0, 1)
	if err != nil || !d.Allowed || d.Policy != "" {
		t.Errorf("healthy store: %+v, %v; want allowed by the limiter", d, err)
	}
	// The caller giving up is not the store failing.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cancelled := limiterFunc(func(ctx context.Context, _ string, _ algorithms.Time, _ int64) (Decision, error) {
		return Decision{}, ctx.Err()
	})
	if _, err := WithPolicy(cancelled, FailOpen).Take(ctx, "k", 0, 1); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: err = %v, want context.Canceled", err)
	}
}

func TestPolicyOnAStoppedRedis(t *testing.T) {
	alg := tokenBucket(t, 1, 1)
	r, err := OpenRedis(context.Background(), alg, RedisOptions{URL: Embedded})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.Embedded().Close() // the store dies
	for _, p := range []Policy{FailOpen, FailClosed} {
		d, err := WithPolicy(r, p).Take(context.Background(), "k", 0, 1)
		if err != nil || d.Policy != p || d.Allowed != (p == FailOpen) || d.Err == nil {
			t.Errorf("%s on a stopped Redis: %+v, %v", p, d, err)
		}
	}
	if err := r.Embedded().Restart(); err != nil {
		t.Fatal(err)
	}
	d, err := WithPolicy(r, FailClosed).Take(context.Background(), "k", 0, 1)
	if err != nil || !d.Allowed || d.Policy != "" {
		t.Errorf("after the store came back: %+v, %v; want the limiter deciding again", d, err)
	}
}

func TestParsePolicy(t *testing.T) {
	for _, s := range []string{"fail-open", "fail-closed"} {
		if p, err := ParsePolicy(s); err != nil || string(p) != s {
			t.Errorf("ParsePolicy(%q) = %q, %v", s, p, err)
		}
	}
	if _, err := ParsePolicy("fail-sideways"); err == nil || !strings.Contains(err.Error(), "fail-open or fail-closed") {
		t.Errorf("ParsePolicy(fail-sideways) error = %v", err)
	}
}

func TestNegativeCostIsAnError(t *testing.T) {
	alg := tokenBucket(t, 1, 1)
	if _, err := NewMemory(alg).Take(context.Background(), "k", 0, -1); err == nil {
		t.Error("memory: negative cost accepted")
	}
	if _, err := NewRacy(alg, NewMemory(alg)).Take(context.Background(), "k", 0, -1); err == nil {
		t.Error("racy: negative cost accepted")
	}
}

func TestMemorySweepForgetsResetKeys(t *testing.T) {
	m := NewMemory(tokenBucket(t, 10, 5)) // refills fully in 500 ms
	ctx := context.Background()
	for i := range 100 {
		if _, err := m.Take(ctx, fmt.Sprint("k", i), 0, 5); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := m.Take(ctx, "busy", algorithms.At(time.Second), 5); err != nil {
		t.Fatal(err)
	}
	if n := m.Sweep(algorithms.At(400 * time.Millisecond)); n != 0 {
		t.Fatalf("Sweep at 400ms forgot %d keys still refilling", n)
	}
	if n := m.Sweep(algorithms.At(time.Second)); n != 100 || m.Len() != 1 || m.Keys()[0] != "busy" {
		t.Fatalf("Sweep at 1s forgot %d keys, left %v; want the 100 full buckets gone and busy kept", n, m.Keys())
	}
}

func TestKVRoundTrip(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"token-bucket", "sliding-window", "sliding-log"} {
		alg, err := algorithms.New(name, algorithms.Params{Rate: algorithms.Rate{N: 5, Per: time.Second}, Burst: 5, Window: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		st := algorithms.State{T: 1_700_000_000_000_000, N: 42, Prev: 3}
		if name == "sliding-log" {
			st = algorithms.State{Log: []int64{1, 2, 2, 5}}
		}
		r, err := OpenRedis(ctx, alg, RedisOptions{URL: Embedded, Prefix: "rt:"})
		if err != nil {
			t.Fatal(err)
		}
		for kvName, kv := range map[string]KV{"memory": NewMemory(alg), "redis": r} {
			if err := kv.Save(ctx, "k", st, time.Minute); err != nil {
				t.Fatal(err)
			}
			got, err := kv.Load(ctx, "k")
			if err != nil || fmt.Sprint(got) != fmt.Sprint(st) {
				t.Errorf("%s %s: Load after Save = %+v, %v; want %+v", name, kvName, got, err, st)
			}
		}
		if n, err := r.Clear(ctx); err != nil || n != 1 {
			t.Errorf("%s: Clear deleted %d keys, %v; want 1", name, n, err)
		}
		r.Close()
	}
}

func TestRedisPrefixSeparatesRuns(t *testing.T) {
	ctx := context.Background()
	alg := tokenBucket(t, 1, 1)
	a, err := OpenRedis(ctx, alg, RedisOptions{URL: Embedded, Prefix: "run-a:"})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	// A second store on the same server, another run.
	b, err := OpenRedis(ctx, alg, RedisOptions{URL: "redis://" + a.Embedded().Addr(), Prefix: "run-b:"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, s := range []*Redis{a, b} {
		if d, err := s.Take(ctx, "k", 0, 1); err != nil || !d.Allowed {
			t.Fatalf("first request of a run: %+v, %v", d, err)
		}
	}
	if n, err := a.Clear(ctx); err != nil || n != 1 {
		t.Fatalf("Clear(run-a) = %d, %v; want 1", n, err)
	}
	if !a.Embedded().Exists("run-b:k") || a.Embedded().Exists("run-a:k") {
		t.Fatalf("after clearing run-a, keys are %v; want only run-b:k", a.Embedded().Keys())
	}
}

func TestOpenRedisErrors(t *testing.T) {
	ctx := context.Background()
	alg := tokenBucket(t, 1, 1)
	for _, url := range []string{"http://example", "redis://127.0.0.1:1", "redis+cluster://"} {
		if _, err := OpenRedis(ctx, alg, RedisOptions{URL: url}); err == nil {
			t.Errorf("OpenRedis(%q) succeeded", url)
		}
	}
	co, err := parseClusterURL("redis+cluster://u:p@a:7000,b:7001,c:7002?dial_timeout=2s")
	if err != nil || len(co.Addrs) != 3 || co.Addrs[2] != "c:7002" || co.Password != "p" || co.DialTimeout != 2*time.Second {
		t.Errorf("parseClusterURL = %+v, %v", co, err)
	}
}

// openRealRedis returns a store on the server REDIS_URL names under a prefix
// of its own, deleting its keys when the test ends, or nil (saying so) when
// REDIS_URL is not set.
func openRealRedis(t *testing.T, alg algorithms.Algorithm) *Redis {
	t.Helper()
	url := os.Getenv("REDIS_URL")
	if url == "" {
		t.Log("REDIS_URL not set: skipping the real redis-server part (.ci/run sets it)")
		return nil
	}
	prefix := fmt.Sprintf("ratelim-test:%s:%d:", t.Name(), time.Now().UnixNano())
	r, err := OpenRedis(context.Background(), alg, RedisOptions{URL: url, Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := r.Clear(context.Background()); err != nil {
			t.Error(err)
		}
		r.Close()
	})
	return r
}

type limiterFunc func(ctx context.Context, key string, now algorithms.Time, cost int64) (Decision, error)

func (f limiterFunc) Take(ctx context.Context, key string, now algorithms.Time, cost int64) (Decision, error) {
	return f(ctx, key, now, cost)
}

func benchRedisURL() string {
	if url := os.Getenv("REDIS_URL"); url != "" {
		return url
	}
	return Embedded
}
