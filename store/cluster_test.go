package store

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
)

// startCluster starts a three-master Redis Cluster of local redis-server
// processes on free loopback ports, for the length of the test, and returns
// its redis+cluster:// URL; it skips (saying so) when redis-server or
// redis-cli is not installed.
func startCluster(t *testing.T) string {
	t.Helper()
	for _, bin := range []string{"redis-server", "redis-cli"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s not installed: skipping the Redis Cluster test (.ci/run installs it)", bin)
		}
	}
	var addrs []string
	for i := range 3 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		dir := t.TempDir()
		cmd := exec.Command("redis-server", "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
			"--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(dir, "nodes.conf"), "--dir", dir,
			"--logfile", filepath.Join(dir, "redis.log"))
		if err := cmd.Start(); err != nil {
			t.Fatalf("node %d: %v", i, err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		addrs = append(addrs, "127.0.0.1:"+strconv.Itoa(port))
	}
	for _, a := range addrs {
		deadline := time.Now().Add(5 * time.Second)
		for {
			if c, err := net.DialTimeout("tcp", a, 100*time.Millisecond); err == nil {
				c.Close()
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("cluster node %s did not start", a)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	args := append([]string{"--cluster", "create"}, addrs...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.Command("redis-cli", args...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	// Wait until every slot is served.
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, _ := exec.Command("redis-cli", "-p", strings.Split(addrs[0], ":")[1], "cluster", "info").Output()
		if strings.Contains(string(out), "cluster_state:ok") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("cluster never reached state ok:\n%s", out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return "redis+cluster://" + strings.Join(addrs, ",")
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
		r, err := OpenRedis(ctx, alg, RedisOptions{URL: url, Prefix: fmt.Sprintf("cluster-test:%s:", name)})
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
	r, err := OpenRedis(ctx, alg, RedisOptions{URL: url, Prefix: "cluster-hammer:"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { r.Clear(ctx); r.Close() }()
	if got := hammer(t, r, 8, 25); got != 10 {
		t.Errorf("cluster: admitted %d of 200 concurrent requests on one key, want exactly the burst 10", got)
	}
}
