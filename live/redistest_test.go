package live

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// clusterNodeProc is one redis-server of a test's Redis Cluster.
type clusterNodeProc struct {
	addr string
	dir  string
	cmd  *exec.Cmd
}

// client is a plain client to this node alone, for the test's own
// questions (CLUSTER NODES, INFO), closed with the test.
func (n *clusterNodeProc) client(t *testing.T) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: n.addr, MaxRetries: -1,
		DialTimeout: 100 * time.Millisecond, ReadTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { c.Close() })
	return c
}

func (n *clusterNodeProc) logTail(lines int) string {
	b, _ := os.ReadFile(filepath.Join(n.dir, "redis.log"))
	all := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(all[max(0, len(all)-lines):], "\n")
}

// startRedisCluster starts masters × (1 + replicasEach) cluster nodes of
// local redis-server processes on free loopback ports, for the length of
// the test, with cluster-node-timeout nodeTimeout, joins them with
// redis-cli --cluster create, and waits until every slot is served and
// every replica is in sync. It skips, saying so, when redis-server or
// redis-cli is not installed.
func startRedisCluster(t *testing.T, masters, replicasEach int, nodeTimeout time.Duration) []*clusterNodeProc {
	t.Helper()
	for _, bin := range []string{"redis-server", "redis-cli"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s not installed: skipping the Redis Cluster test (.ci/run installs it)", bin)
		}
	}
	var nodes []*clusterNodeProc
	var addrs []string
	for range masters * (1 + replicasEach) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
		l.Close()
		n := &clusterNodeProc{addr: "127.0.0.1:" + port, dir: t.TempDir()}
		n.cmd = exec.Command("redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
			"--dir", n.dir, "--logfile", filepath.Join(n.dir, "redis.log"),
			"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", strconv.FormatInt(nodeTimeout.Milliseconds(), 10))
		if err := n.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// SIGKILL ends a stopped (SIGSTOP) process too.
		t.Cleanup(func() { n.cmd.Process.Kill(); n.cmd.Wait() })
		nodes = append(nodes, n)
		addrs = append(addrs, n.addr)
	}
	for _, n := range nodes {
		deadline := time.Now().Add(10 * time.Second)
		for {
			if c, err := net.DialTimeout("tcp", n.addr, 100*time.Millisecond); err == nil {
				c.Close()
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("cluster node %s did not start", n.addr)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	args := append([]string{"--cluster", "create"}, addrs...)
	args = append(args, "--cluster-replicas", strconv.Itoa(replicasEach), "--cluster-yes")
	if out, err := exec.Command("redis-cli", args...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	ctx := context.Background()
	deadline := time.Now().Add(20 * time.Second)
	for _, n := range nodes {
		c := n.client(t)
		for {
			info, _ := c.Info(ctx, "replication").Result()
			state, _ := c.ClusterInfo(ctx).Result()
			ok := strings.Contains(state, "cluster_state:ok")
			if strings.Contains(info, "role:slave") {
				ok = ok && strings.Contains(info, "master_link_status:up")
			}
			if ok {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("cluster node %s not ready within 20 s:\n%s\n%s", n.addr, state, info)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nodes
}

// clusterURL is the redis+cluster:// URL naming every node.
func clusterURL(nodes []*clusterNodeProc) string {
	var addrs []string
	for _, n := range nodes {
		addrs = append(addrs, n.addr)
	}
	return "redis+cluster://" + strings.Join(addrs, ",")
}

// masterAndReplica returns a master of the cluster and its replica, with
// the replica's node ID, as CLUSTER NODES on the first node tells them.
func masterAndReplica(t *testing.T, nodes []*clusterNodeProc) (master, replica *clusterNodeProc, replicaID string) {
	t.Helper()
	out, err := nodes[0].client(t).ClusterNodes(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	byAddr := map[string]*clusterNodeProc{}
	for _, n := range nodes {
		byAddr[n.addr] = n
	}
	type line struct{ id, addr, masterID string }
	var lines []line
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(l)
		if len(f) < 8 {
			continue
		}
		addr, _, _ := strings.Cut(f[1], "@")
		lines = append(lines, line{f[0], addr, f[3]})
	}
	for _, m := range lines {
		for _, r := range lines {
			if r.masterID == m.id {
				return byAddr[m.addr], byAddr[r.addr], r.id
			}
		}
	}
	t.Fatalf("no master with a replica:\n%s", out)
	return nil, nil, ""
}

// promoted reports whether the node with id serves slots as a master, as
// c (the node itself) sees it.
func promoted(ctx context.Context, c *redis.Client, id string) bool {
	out, err := c.ClusterNodes(ctx).Result()
	if err != nil {
		return false
	}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(l)
		if len(f) > 8 && f[0] == id && strings.Contains(f[2], "master") {
			return true
		}
	}
	return false
}

// stop hangs the node, as a machine that froze: its port still accepts
// connections, and nothing answers.
func (n *clusterNodeProc) stop(t *testing.T) {
	t.Helper()
	if err := n.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
}
