// Package redistest starts real Redis for tests: redis-server processes
// and Redis Clusters of them on loopback, each for the length of one test,
// so that store's and live's tests meet the real server, its failures and
// its failovers rather than a model of them.
//
// A [Node] is one redis-server on a free loopback port, in a directory of
// its own under t.TempDir, nothing saved to disk, started with the extra
// arguments the test gives. The test can [Node.Kill] it (clients see
// connections refused), [Node.Stop] it (SIGSTOP: the port still accepts
// connections and nothing answers, as a machine that froze), [Node.Cont]
// it, and [Node.Start] or [Node.Restart] it on the same port and
// directory, so a cluster node comes back with its nodes.conf. Start and
// Restart return the instant the node was observed answering PING: a test
// that measures a recovery measures it from there, from what it saw.
//
// [StartCluster] joins masters × (1 + replicasEach) nodes with redis-cli
// --cluster create and returns once every slot is served and every
// replica is in sync. [Cluster.ReplicaOf] and [Cluster.MasterWithReplica]
// find a master and its replica, and [WaitPromoted] polls a replica's own
// view until it serves slots as a master: the promotion, as observed.
//
// [WatchCluster] polls every node of a running cluster every few
// milliseconds, a goroutine a node and a short deadline a poll, and
// records each change of its cluster_state and of the fail?, fail and
// master/replica flags it shows, with the instant it was seen: a
// [Timeline] that a test reads (FirstFail, Promoted, ClusterDownWindows)
// and logs. [Watcher.Freeze] and [Watcher.Thaw] stop and continue a node
// and leave it out of the polls meanwhile.
//
// Every wait has a deadline and fails the test past it; every process is
// killed with t.Cleanup (SIGKILL, which a stopped process obeys too), so
// no redis-server outlives its test. Tests that need Redis call
// [NeedBinaries] first (StartCluster does): without redis-server or
// redis-cli the test is skipped, saying which is missing.
//
// Only tests import this package.
package redistest

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// startWithin bounds how long a started redis-server may take to answer
// PING: generous for a loaded 2-core machine, where it takes milliseconds.
const startWithin = 10 * time.Second

// NeedBinaries skips the test, saying which is missing, when redis-server
// or redis-cli is not on PATH.
func NeedBinaries(t testing.TB) {
	t.Helper()
	for _, bin := range []string{"redis-server", "redis-cli"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s not installed: skipping a real-Redis test (.ci/run installs it)", bin)
		}
	}
}

// Node is a redis-server process on a loopback port, which a test can
// kill, stop, continue and start again on the same port with the same
// directory. Its methods fail the test t that started it.
type Node struct {
	t    testing.TB
	port int
	dir  string
	args []string // beyond port, bind, dir, log and persistence
	cmd  *exec.Cmd
}

// StartNode starts a redis-server on a free loopback port, with the extra
// arguments, for the length of the test, and returns once it answers PING.
func StartNode(t testing.TB, extra ...string) *Node {
	t.Helper()
	port := freePort(t, slices.Contains(extra, "--cluster-enabled"))
	n := &Node{t: t, port: port, dir: t.TempDir(), args: extra}
	t.Cleanup(n.Kill)
	n.Start()
	return n
}

// clusterBusOffset is how far above its port a cluster node listens for
// the other nodes (Redis's default cluster-port: port + 10000).
const clusterBusOffset = 10000

// freePort is a loopback port free now, and, for a cluster node, whose
// bus port (port + 10000) is free too: a port picked alone collided with
// another test's listener on the bus port, and the node would not start.
func freePort(t testing.TB, bus bool) int {
	t.Helper()
	for range 50 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		if !bus {
			l.Close()
			return port
		}
		if port+clusterBusOffset <= 65535 {
			if b, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port+clusterBusOffset)); err == nil {
				b.Close()
				l.Close()
				return port
			}
		}
		l.Close()
	}
	t.Fatal("no loopback port free with its cluster bus port (port + 10000) in 50 tries")
	return 0
}

// Addr is the node's host:port.
func (n *Node) Addr() string { return "127.0.0.1:" + strconv.Itoa(n.port) }

// Start starts the server again after Kill, and returns the first
// instant the test saw it answer PING: the observed start.
func (n *Node) Start() time.Time {
	n.t.Helper()
	if n.cmd != nil {
		n.t.Fatalf("redis-server on %s: started while it runs (Kill it first, or Restart)", n.Addr())
	}
	args := append([]string{"--port", strconv.Itoa(n.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", n.dir, "--logfile", filepath.Join(n.dir, "redis.log")}, n.args...)
	n.cmd = exec.Command("redis-server", args...)
	if err := n.cmd.Start(); err != nil {
		n.cmd = nil
		n.t.Fatalf("redis-server on %s: %v", n.Addr(), err)
	}
	deadline := time.Now().Add(startWithin)
	for {
		if n.answersPing() {
			return time.Now()
		}
		if time.Now().After(deadline) {
			n.t.Fatalf("redis-server on %s did not answer within %v; its log ends:\n%s", n.Addr(), startWithin, n.LogTail(20))
		}
		time.Sleep(time.Millisecond)
	}
}

// Restart kills the server and starts it again on the same port and
// directory, returning the instant it was seen answering PING.
func (n *Node) Restart() time.Time {
	n.t.Helper()
	n.Kill()
	return n.Start()
}

// answersPing reports whether the server answers PING now: a raw
// exchange, so that asking costs the client under test nothing.
func (n *Node) answersPing() bool {
	c, err := net.DialTimeout("tcp", n.Addr(), 50*time.Millisecond)
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

// Kill kills the server (SIGKILL, which a stopped process obeys too) and
// waits for it: clients see connections refused until Start. Killing a
// node that is not running does nothing.
func (n *Node) Kill() {
	if n.cmd == nil {
		return
	}
	n.cmd.Process.Kill()
	n.cmd.Wait()
	n.cmd = nil
}

// Stop hangs the server (SIGSTOP), as a machine that froze: its port
// still accepts connections, and nothing answers until Cont.
func (n *Node) Stop() { n.signal(syscall.SIGSTOP) }

// Cont lets a stopped server go on (SIGCONT).
func (n *Node) Cont() { n.signal(syscall.SIGCONT) }

func (n *Node) signal(sig syscall.Signal) {
	n.t.Helper()
	if n.cmd == nil {
		n.t.Fatalf("signalling redis-server on %s: it is not running", n.Addr())
	}
	if err := n.cmd.Process.Signal(sig); err != nil {
		n.t.Fatalf("signalling redis-server on %s: %v", n.Addr(), err)
	}
}

// LogTail returns the last lines of the server's log, for a failure
// message.
func (n *Node) LogTail(lines int) string {
	b, _ := os.ReadFile(filepath.Join(n.dir, "redis.log"))
	all := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(all[max(0, len(all)-lines):], "\n")
}

// Client is a plain client to this one node, for the test's own questions
// (ROLE, CLUSTER NODES, INFO), closed with the test. It never retries and
// gives up quickly, so that asking a stopped node does not hold the test.
func (n *Node) Client() *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: n.Addr(), MaxRetries: -1,
		DialTimeout: 100 * time.Millisecond, ReadTimeout: 200 * time.Millisecond})
	n.t.Cleanup(func() { c.Close() })
	return c
}
