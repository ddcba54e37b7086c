package redisstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/internal/redistest"
	"github.com/ratelim/ratelim/store/storetest"
)

// startCluster starts a Redis Cluster of three masters, no replicas and
// Redis's default node timeout (15 s: no failover meant), for the length
// of the test, and returns its redis+cluster:// URL; it skips (saying so)
// when redis-server or redis-cli is not installed.
func startCluster(t *testing.T) string {
	t.Helper()
	return redistest.StartCluster(t, 3, 0, 15*time.Second).URL
}

// TestRedisCluster runs every algorithm's twin on a real three-node
// cluster, on keys spread over its slots: the same decisions as the Go
// step, atomic under goroutines, and Clear deletes from every master.
func TestRedisCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a three-node Redis Cluster")
	}
	url := startCluster(t)
	ctx := context.Background()
	for _, name := range algorithms.ExactNames() {
		alg, err := algorithms.New(name, algorithms.Params{Rate: algorithms.Rate{N: 7, Per: time.Second}, Burst: 5, Window: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		r, err := Open(ctx, alg, Options{URL: url, Prefix: fmt.Sprintf("cluster-test:%s:", name)})
		if err != nil {
			t.Fatal(err)
		}
		states := map[string]algorithms.State{}
		for i := range 120 {
			key := fmt.Sprintf("key-%d", i%12) // twelve keys: several slots on every master
			now := algorithms.Time(1_700_000_000_000_000 + int64(i)*41_000)
			var want algorithms.Decision
			states[key], want = alg.Step(states[key], now, 1)
			got, err := r.Take(ctx, key, now, 1)
			if err != nil {
				t.Fatalf("%s request %d: %v", name, i, err)
			}
			if got.Decision != want {
				t.Fatalf("%s request %d on %s: cluster %+v, Go %+v", name, i, key, got.Decision, want)
			}
		}
		if n, err := r.Clear(ctx); err != nil || n != 12 {
			t.Errorf("%s: Clear deleted %d keys, %v; want all 12 across the masters", name, n, err)
		}
		r.Close()
	}
	alg := tokenBucket(t, 1, 10)
	r, err := Open(ctx, alg, Options{URL: url, Prefix: "cluster-hammer:"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { r.Clear(ctx); r.Close() }()
	if got := storetest.Hammer(t, r, 8, 25); got != 10 {
		t.Errorf("cluster: admitted %d of 200 concurrent requests on one key, want exactly the burst 10", got)
	}
}
