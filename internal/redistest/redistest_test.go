package redistest

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratelim/ratelim/topology"
)

// TestNodeLifecycle walks a node through Stop, Cont, Kill, Start and
// Restart: each does what the test sees (PING answered or not), the port
// stays the same, nothing is saved to disk, and the node is killed with
// the test that started it.
func TestNodeLifecycle(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a redis-server")
	}
	NeedBinaries(t)
	var n *Node
	t.Run("lifecycle", func(t *testing.T) {
		ctx := context.Background()
		n = StartNode(t, "--maxmemory", "10mb")
		addr := n.Addr()
		step := func(what string, wantPong bool) {
			t.Helper()
			if got := n.answersPing(); got != wantPong {
				t.Fatalf("after %s: answers PING = %v, want %v", what, got, wantPong)
			}
			if n.Addr() != addr {
				t.Fatalf("after %s: on %s, want the same %s", what, n.Addr(), addr)
			}
		}
		step("StartNode", true)
		c := n.Client()
		if got, err := c.ConfigGet(ctx, "maxmemory").Result(); err != nil || got["maxmemory"] != "10485760" {
			t.Errorf("CONFIG GET maxmemory = %v, %v; want the extra argument's 10485760", got, err)
		}
		if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
		n.Stop()
		step("Stop", false)
		n.Cont()
		step("Cont", true)
		n.Kill()
		step("Kill", false)
		before := time.Now()
		up := n.Start()
		step("Start", true)
		if up.Before(before) {
			t.Errorf("Start reported %v, before it was called (%v)", up, before)
		}
		if got, err := n.Client().Exists(ctx, "k").Result(); err != nil || got != 0 {
			t.Errorf("EXISTS k after Kill and Start = %d, %v; want 0: nothing saved to disk", got, err)
		}
		again := n.Restart()
		step("Restart", true)
		if !again.After(up) {
			t.Errorf("Restart reported %v, not after the Start before it (%v)", again, up)
		}
		n.Stop() // the cleanup must kill a stopped node too
	})
	if n.cmd != nil || n.answersPing() {
		t.Errorf("the node on %s outlived its test (process %v)", n.Addr(), n.cmd)
	}
}

// TestStartCluster starts three masters with a replica each: every slot
// is served once, each master has its replica, the URL names every node,
// and a hung master's replica is seen promoted.
func TestStartCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a six-node Redis Cluster")
	}
	c := StartCluster(t, 3, 1, time.Second)
	if len(c.Nodes) != 6 {
		t.Fatalf("%d nodes, want 6", len(c.Nodes))
	}
	for _, n := range c.Nodes {
		if !strings.Contains(c.URL, n.Addr()) {
			t.Errorf("URL %s does not name %s", c.URL, n.Addr())
		}
	}
	nodes, err := clusterNodes(context.Background(), c.Nodes[0].Client())
	if err != nil {
		t.Fatal(err)
	}
	masters, replicas, slots := 0, 0, 0
	for _, n := range nodes {
		if n.master {
			masters++
			slots += n.slots
		} else {
			replicas++
		}
	}
	if masters != 3 || replicas != 3 || slots != 16384 {
		t.Errorf("CLUSTER NODES: %d masters serving %d slots, %d replicas; want 3 serving 16384, 3:\n%+v", masters, slots, replicas, nodes)
	}
	// Shards: one range each, where the simulator's shards have theirs
	// (topology.FirstSlots, as redis-cli --cluster create assigns them),
	// each with its replica.
	first := topology.FirstSlots(3)
	shards := c.Shards(t)
	if len(shards) != 3 {
		t.Fatalf("Shards: %d, want 3: %+v", len(shards), shards)
	}
	for m, sh := range shards {
		last := topology.Slots - 1
		if m+1 < len(first) {
			last = first[m+1] - 1
		}
		if want := [][2]int{{first[m], last}}; !slices.Equal(sh.Ranges, want) || sh.Replica == nil {
			t.Errorf("shard %d: master %s serves %v (a replica: %v); want %v and a replica", m, sh.Master.Addr(), sh.Ranges, sh.Replica != nil, want)
		}
	}
	master, replica, replicaID := c.MasterWithReplica(t)
	if again, againID := c.ReplicaOf(t, master); again != replica || againID != replicaID {
		t.Errorf("ReplicaOf(%s) = %s (%s); MasterWithReplica said %s (%s)", master.Addr(), again.Addr(), againID, replica.Addr(), replicaID)
	}
	stopped := time.Now()
	master.Stop()
	promoted := WaitPromoted(t, replica, replicaID, 30*time.Second)
	if !promoted.After(stopped) {
		t.Errorf("promotion seen at %v, not after the master stopped (%v)", promoted, stopped)
	}
	t.Logf("master %s stopped: replica %s seen promoted %v later", master.Addr(), replica.Addr(), promoted.Sub(stopped).Round(time.Millisecond))
}
