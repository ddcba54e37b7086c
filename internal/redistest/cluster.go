package redistest

import (
	"context"
	"errors"
	"net"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// readyWithin bounds how long a created cluster may take until every node
// sees every slot served and every replica in sync: generous for a loaded
// 2-core machine, where it takes a few seconds.
const readyWithin = 20 * time.Second

// Cluster is a Redis Cluster of local redis-server processes.
type Cluster struct {
	Nodes []*Node
	URL   string // redis+cluster:// naming every node
}

// StartCluster starts masters × (1 + replicasEach) cluster nodes on
// loopback, for the length of the test, with cluster-node-timeout
// nodeTimeout (how long a node may not answer before the others fail it
// over), joins them with redis-cli --cluster create, and waits until every
// slot is served and every replica is in sync (a replica whose link is
// down would not be promoted). It skips the test, saying so, when
// redis-server or redis-cli is not installed.
func StartCluster(t testing.TB, masters, replicasEach int, nodeTimeout time.Duration) *Cluster {
	t.Helper()
	NeedBinaries(t)
	c := &Cluster{}
	var addrs []string
	for range masters * (1 + replicasEach) {
		n := StartNode(t, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", strconv.FormatInt(nodeTimeout.Milliseconds(), 10))
		c.Nodes = append(c.Nodes, n)
		addrs = append(addrs, n.Addr())
	}
	args := append([]string{"--cluster", "create"}, addrs...)
	args = append(args, "--cluster-replicas", strconv.Itoa(replicasEach), "--cluster-yes")
	if out, err := exec.Command("redis-cli", args...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	ctx := context.Background()
	deadline := time.Now().Add(readyWithin)
	for _, n := range c.Nodes {
		cl := n.Client()
		for {
			info, _ := cl.Info(ctx, "cluster", "replication").Result()
			state, _ := cl.ClusterInfo(ctx).Result()
			ok := strings.Contains(info, "cluster_enabled:1") && strings.Contains(state, "cluster_state:ok")
			if strings.Contains(info, "role:slave") {
				ok = ok && strings.Contains(info, "master_link_status:up")
			}
			if ok {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("cluster node %s not ready within %v:\n%s\n%s", n.Addr(), readyWithin, state, info)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	c.URL = "redis+cluster://" + strings.Join(addrs, ",")
	return c
}

// Node returns the cluster's node at addr (host:port), failing the test
// when there is none.
func (c *Cluster) Node(t testing.TB, addr string) *Node {
	t.Helper()
	for _, n := range c.Nodes {
		if n.Addr() == addr {
			return n
		}
	}
	t.Fatalf("no cluster node at %s", addr)
	return nil
}

// ReplicaOf returns a replica of master, with its node ID, as the master's
// own CLUSTER NODES tells them.
func (c *Cluster) ReplicaOf(t testing.TB, master *Node) (replica *Node, replicaID string) {
	t.Helper()
	nodes, err := clusterNodes(context.Background(), master.Client())
	if err != nil {
		t.Fatalf("CLUSTER NODES on %s: %v", master.Addr(), err)
	}
	var masterID string
	for _, n := range nodes {
		if n.addr == master.Addr() {
			masterID = n.id
		}
	}
	for _, n := range nodes {
		if n.masterID == masterID {
			return c.Node(t, n.addr), n.id
		}
	}
	t.Fatalf("master %s has no replica:\n%+v", master.Addr(), nodes)
	return nil, ""
}

// MasterWithReplica returns a master of the cluster and its replica, with
// the replica's node ID, as CLUSTER NODES on the first node tells them.
func (c *Cluster) MasterWithReplica(t testing.TB) (master, replica *Node, replicaID string) {
	t.Helper()
	nodes, err := clusterNodes(context.Background(), c.Nodes[0].Client())
	if err != nil {
		t.Fatalf("CLUSTER NODES on %s: %v", c.Nodes[0].Addr(), err)
	}
	for _, m := range nodes {
		for _, r := range nodes {
			if r.masterID == m.id {
				return c.Node(t, m.addr), c.Node(t, r.addr), r.id
			}
		}
	}
	t.Fatalf("no master with a replica:\n%+v", nodes)
	return nil, nil, ""
}

// Shard is a master of a cluster with the slots it serves and its
// replica, as one node's CLUSTER NODES tells them.
type Shard struct {
	Master *Node
	// Ranges are the first and last slot of each range of slots it
	// serves, in the order CLUSTER NODES lists them.
	Ranges    [][2]int
	Replica   *Node // nil for a master without one
	ReplicaID string
}

// Shards are the cluster's masters that serve slots, with a replica each
// (the first CLUSTER NODES lists, when it has several), in the order of
// their first slot: what a test maps to the simulator's shards
// (topology.FirstSlots numbers them by slot in the same order). It asks
// the first node that answers, failing the test when none does.
func (c *Cluster) Shards(t testing.TB) []Shard {
	t.Helper()
	var nodes []clusterNode
	var err error
	for _, n := range c.Nodes {
		if nodes, err = clusterNodes(context.Background(), n.Client()); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("CLUSTER NODES: no node answered: %v", err)
	}
	var out []Shard
	for _, m := range nodes {
		if !m.master || len(m.ranges) == 0 {
			continue
		}
		s := Shard{Master: c.Node(t, m.addr), Ranges: m.ranges}
		for _, r := range nodes {
			if r.masterID == m.id {
				s.Replica, s.ReplicaID = c.Node(t, r.addr), r.id
				break
			}
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b Shard) int { return a.Ranges[0][0] - b.Ranges[0][0] })
	return out
}

// WaitPromoted polls the replica's own view of the cluster every 5 ms
// until the node replicaID serves slots as a master, and returns the
// instant it was seen so: the promotion, as observed (to within one poll).
// It fails the test when that has not happened within the bound.
func WaitPromoted(t testing.TB, replica *Node, replicaID string, within time.Duration) time.Time {
	t.Helper()
	ctx := context.Background()
	rc := replica.Client()
	deadline := time.Now().Add(within)
	for {
		if nodes, err := clusterNodes(ctx, rc); err == nil {
			for _, n := range nodes {
				if n.id == replicaID && n.master && n.slots > 0 {
					return time.Now()
				}
			}
		}
		if time.Now().After(deadline) {
			view, _ := rc.ClusterNodes(ctx).Result()
			t.Fatalf("replica %s not promoted within %v; it sees:\n%s\nits log ends:\n%s",
				replica.Addr(), within, view, replica.LogTail(20))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// clusterNode is a line of CLUSTER NODES
// (https://redis.io/docs/latest/commands/cluster-nodes/):
// <id> <ip:port@cport> <flags> <master> <ping-sent> <pong-recv>
// <config-epoch> <link-state> <slot> <slot> ... <slot>.
type clusterNode struct {
	id, addr, masterID string // masterID is "-" on a master
	master             bool
	slots              int      // how many slots it serves
	ranges             [][2]int // the first and last slot of each range it serves
}

// clusterNodes asks c for CLUSTER NODES, of a node that is up: a reply
// later than the client's short read timeout (a loaded machine, the race
// detector on two cores) is asked for again, for up to five seconds.
func clusterNodes(ctx context.Context, c *redis.Client) ([]clusterNode, error) {
	var out string
	var err error
	for deadline := time.Now().Add(5 * time.Second); ; {
		out, err = c.ClusterNodes(ctx).Result()
		var ne net.Error
		if err == nil || !errors.As(err, &ne) || !ne.Timeout() || time.Now().After(deadline) {
			break
		}
	}
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
		}
		n.slots = countSlots(f[8:])
		n.ranges = slotRanges(f[8:])
		nodes = append(nodes, n)
	}
	return nodes, nil
}

// slotRanges reads a CLUSTER NODES line's slot fields ("0-5460",
// "5461") as first and last slots, leaving out slots being migrated.
func slotRanges(fields []string) [][2]int {
	var out [][2]int
	for _, r := range fields {
		if strings.HasPrefix(r, "[") {
			continue
		}
		lo, hi, found := strings.Cut(r, "-")
		a, errA := strconv.Atoi(lo)
		b, errB := a, error(nil)
		if found {
			b, errB = strconv.Atoi(hi)
		}
		if errA == nil && errB == nil {
			out = append(out, [2]int{a, b})
		}
	}
	return out
}

// countSlots counts the slots in a CLUSTER NODES line's slot fields
// ("0-5460", "5461"), leaving out slots being migrated ("[5461->-id]").
func countSlots(fields []string) int {
	slots := 0
	for _, r := range fields {
		if strings.HasPrefix(r, "[") {
			continue // a slot being migrated
		}
		lo, hi, found := strings.Cut(r, "-")
		a, _ := strconv.Atoi(lo)
		b := a
		if found {
			b, _ = strconv.Atoi(hi)
		}
		slots += b - a + 1
	}
	return slots
}
