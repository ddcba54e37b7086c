package store

import (
	"bufio"
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

// needRedisBinaries skips the test, saying so, when redis-server or
// redis-cli is not installed.
func needRedisBinaries(t *testing.T) {
	t.Helper()
	for _, bin := range []string{"redis-server", "redis-cli"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s not installed: skipping a real-Redis test (.ci/run installs it)", bin)
		}
	}
}

// redisNode is a redis-server process on a loopback port, which a test can
// kill, stop (SIGSTOP) and start again on the same port with the same
// directory (so a cluster node comes back with its nodes.conf).
type redisNode struct {
	t    *testing.T
	port int
	dir  string
	args []string // beyond port, bind, dir, log and persistence
	cmd  *exec.Cmd
}

// newRedisNode starts a redis-server on a free loopback port, with extra
// arguments, for the length of the test.
func newRedisNode(t *testing.T, extra ...string) *redisNode {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	n := &redisNode{t: t, port: port, dir: t.TempDir(), args: extra}
	n.start()
	t.Cleanup(n.kill)
	return n
}

func (n *redisNode) addr() string { return "127.0.0.1:" + strconv.Itoa(n.port) }

// start starts the server and returns the first instant the test saw it
// answer PING: the observed start.
func (n *redisNode) start() time.Time {
	n.t.Helper()
	args := append([]string{"--port", strconv.Itoa(n.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", n.dir, "--logfile", filepath.Join(n.dir, "redis.log")}, n.args...)
	n.cmd = exec.Command("redis-server", args...)
	if err := n.cmd.Start(); err != nil {
		n.t.Fatalf("redis-server on %s: %v", n.addr(), err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if pongs(n.addr()) {
			return time.Now()
		}
		if time.Now().After(deadline) {
			n.t.Fatalf("redis-server on %s did not answer within 10 s", n.addr())
		}
		time.Sleep(time.Millisecond)
	}
}

// pongs reports whether the server at addr answers PING: a raw exchange,
// so that asking costs the client under test nothing.
func pongs(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 50*time.Millisecond)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(100 * time.Millisecond))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && strings.HasPrefix(line, "+PONG")
}

// kill kills the server (SIGKILL, which a stopped process obeys too) and
// waits for it: clients see connections refused until start.
func (n *redisNode) kill() {
	if n.cmd == nil {
		return
	}
	n.cmd.Process.Kill()
	n.cmd.Wait()
	n.cmd = nil
}

// logTail returns the last n lines of the server's log, for a message.
func (n *redisNode) logTail(lines int) string {
	b, _ := os.ReadFile(filepath.Join(n.dir, "redis.log"))
	all := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(all[max(0, len(all)-lines):], "\n")
}

// signal sends the server sig (SIGSTOP: it hangs, its port still accepts
// connections; SIGCONT: it goes on).
func (n *redisNode) signal(sig syscall.Signal) {
	n.t.Helper()
	if err := n.cmd.Process.Signal(sig); err != nil {
		n.t.Fatalf("signalling redis-server on %s: %v", n.addr(), err)
	}
}

// client is a plain client to this one node, for the test's own questions
// (ROLE, CLUSTER NODES, INFO), closed with the test.
func (n *redisNode) client() *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: n.addr(), MaxRetries: -1,
		DialTimeout: 100 * time.Millisecond, ReadTimeout: 200 * time.Millisecond})
	n.t.Cleanup(func() { c.Close() })
	return c
}

// testCluster is a Redis Cluster of local redis-server processes.
type testCluster struct {
	nodes []*redisNode
	url   string // redis+cluster:// naming every node
}

// startTestCluster starts masters × (1 + replicasEach) cluster nodes on
// loopback, with cluster-node-timeout nodeTimeout (how long a node may not
// answer before the others fail it over), joins them with redis-cli
// --cluster create, and waits until every slot is served and every
// replica is in sync (a replica whose link is down would not be promoted).
func startTestCluster(t *testing.T, masters, replicasEach int, nodeTimeout time.Duration) *testCluster {
	t.Helper()
	needRedisBinaries(t)
	c := &testCluster{}
	var addrs []string
	for range masters * (1 + replicasEach) {
		n := newRedisNode(t, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", strconv.FormatInt(nodeTimeout.Milliseconds(), 10))
		c.nodes = append(c.nodes, n)
		addrs = append(addrs, n.addr())
	}
	args := append([]string{"--cluster", "create"}, addrs...)
	args = append(args, "--cluster-replicas", strconv.Itoa(replicasEach), "--cluster-yes")
	if out, err := exec.Command("redis-cli", args...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	ctx := context.Background()
	deadline := time.Now().Add(20 * time.Second)
	for _, n := range c.nodes {
		cl := n.client()
		for {
			info, _ := cl.Info(ctx, "cluster", "replication").Result()
			ok := strings.Contains(info, "cluster_enabled:1") && clusterStateOK(ctx, cl)
			if strings.Contains(info, "role:slave") {
				ok = ok && strings.Contains(info, "master_link_status:up")
			}
			if ok {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("cluster node %s not ready within 20 s:\n%s", n.addr(), info)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	c.url = "redis+cluster://" + strings.Join(addrs, ",")
	return c
}

func clusterStateOK(ctx context.Context, c *redis.Client) bool {
	info, err := c.ClusterInfo(ctx).Result()
	return err == nil && strings.Contains(info, "cluster_state:ok")
}

// node returns the cluster's node at addr.
func (c *testCluster) node(t *testing.T, addr string) *redisNode {
	t.Helper()
	for _, n := range c.nodes {
		if n.addr() == addr {
			return n
		}
	}
	t.Fatalf("no cluster node at %s", addr)
	return nil
}

// clusterNode is a line of CLUSTER NODES.
type clusterNode struct {
	id, addr, masterID string
	master, failed     bool
	slots              int // how many slots it serves
}

// clusterNodes asks c for CLUSTER NODES.
func clusterNodes(ctx context.Context, c *redis.Client) ([]clusterNode, error) {
	out, err := c.ClusterNodes(ctx).Result()
	if err != nil {
		return nil, err
	}
	var nodes []clusterNode
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 {
			continue
		}
		addr, _, _ := strings.Cut(f[1], "@")
		n := clusterNode{id: f[0], addr: addr, masterID: f[3]}
		for _, flag := range strings.Split(f[2], ",") {
			n.master = n.master || flag == "master"
			n.failed = n.failed || flag == "fail" || flag == "fail?"
		}
		for _, r := range f[8:] {
			if strings.HasPrefix(r, "[") {
				continue // a slot being migrated
			}
			lo, hi, found := strings.Cut(r, "-")
			a, _ := strconv.Atoi(lo)
			b := a
			if found {
				b, _ = strconv.Atoi(hi)
			}
			n.slots += b - a + 1
		}
		nodes = append(nodes, n)
	}
	return nodes, nil
}
