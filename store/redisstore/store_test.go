package redisstore

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/store"
	"github.com/ratelim/ratelim/store/storetest"
)

func TestAtomicStoresNeverOverAdmit(t *testing.T) {
	const burst = 10
	alg := tokenBucket(t, 1, burst)
	stores := map[string]store.Limiter{"memory": store.NewMemory(alg)}
	r, err := Open(context.Background(), alg, Options{URL: store.Embedded})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	stores["miniredis"] = r
	if real := openRealRedis(t, alg); real != nil {
		stores["redis-server"] = real
	}
	for name, l := range stores {
		if got := storetest.Hammer(t, l, 8, 25); got != burst {
			t.Errorf("%s: admitted %d of 200 concurrent requests on one key, want exactly the burst %d", name, got, burst)
		}
	}
}

// TestRacyOverAdmitsUnderLoad is the same race as it happens: goroutines
// hammering a real store over real connections, with a read-to-write gap of
// a round trip. Nothing lines them up; they over-admit anyway.
func TestRacyOverAdmitsUnderLoad(t *testing.T) {
	const burst = 5
	alg := tokenBucket(t, 1, burst)
	kvs := map[string]store.KV{"memory": store.NewMemory(alg)}
	r, err := Open(context.Background(), alg, Options{URL: store.Embedded})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	kvs["miniredis"] = r
	if real := openRealRedis(t, alg); real != nil {
		kvs["redis-server"] = real
	}
	for name, kv := range kvs {
		racy := store.NewRacy(alg, kv)
		racy.Gap = func() { time.Sleep(200 * time.Microsecond) }
		if got := storetest.Hammer(t, racy, 8, 10); got <= burst {
			t.Errorf("%s: racy admitted %d, want more than the burst %d: the race did not show", name, got, burst)
		} else {
			t.Logf("%s: racy admitted %d of 80 with burst %d", name, got, burst)
		}
	}
}

func TestPolicyOnAStoppedRedis(t *testing.T) {
	alg := tokenBucket(t, 1, 1)
	r, err := Open(context.Background(), alg, Options{URL: store.Embedded})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.Embedded().Close() // the store dies
	for _, p := range []store.Policy{store.FailOpen, store.FailClosed} {
		d, err := store.WithPolicy(r, p).Take(context.Background(), "k", 0, 1)
		if err != nil || d.Policy != p || d.Allowed != (p == store.FailOpen) || d.Err == nil {
			t.Errorf("%s on a stopped Redis: %+v, %v", p, d, err)
		}
	}
	if err := r.Embedded().Restart(); err != nil {
		t.Fatal(err)
	}
	d, err := store.WithPolicy(r, store.FailClosed).Take(context.Background(), "k", 0, 1)
	if err != nil || !d.Allowed || d.Policy != "" {
		t.Errorf("after the store came back: %+v, %v; want the limiter deciding again", d, err)
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
		r, err := Open(ctx, alg, Options{URL: store.Embedded, Prefix: "rt:"})
		if err != nil {
			t.Fatal(err)
		}
		for kvName, kv := range map[string]store.KV{"memory": store.NewMemory(alg), "redis": r} {
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
	a, err := Open(ctx, alg, Options{URL: store.Embedded, Prefix: "run-a:"})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	// A second store on the same server, another run.
	b, err := Open(ctx, alg, Options{URL: "redis://" + a.Embedded().Addr(), Prefix: "run-b:"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, s := range []*Store{a, b} {
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
		if _, err := Open(ctx, alg, Options{URL: url}); err == nil {
			t.Errorf("Open(%q) succeeded", url)
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
func openRealRedis(t *testing.T, alg algorithms.Algorithm) *Store {
	t.Helper()
	url := os.Getenv("REDIS_URL")
	if url == "" {
		t.Log("REDIS_URL not set: skipping the real redis-server part (.ci/run sets it)")
		return nil
	}
	prefix := fmt.Sprintf("ratelim-test:%s:%d:", t.Name(), time.Now().UnixNano())
	r, err := Open(context.Background(), alg, Options{URL: url, Prefix: prefix})
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

func benchRedisURL() string {
	if url := os.Getenv("REDIS_URL"); url != "" {
		return url
	}
	return store.Embedded
}

// tokenBucket is n tokens a second, burst deep.
func tokenBucket(t testing.TB, n, burst int64) algorithms.Algorithm {
	t.Helper()
	return mustAlg(t, "token-bucket", algorithms.Params{Rate: algorithms.Rate{N: n, Per: time.Second}, Burst: burst})
}
