package topology

// The owner kind: an owner per key, hits sent to it later.

import (
	"crypto/md5"
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"

	"github.com/ratelim/ratelim/algorithms"
)

// An owner topology is gubernator's GLOBAL behaviour
// (github.com/gubernator-io/gubernator/v2 v2.13.0): every API server asks
// a limiter node beside it, node i for server i, and each key has one
// owner among the nodes, chosen by consistent hashing (OwnerOf). The node
// a request reaches answers at once from its own cache of the key's
// status, as if it were the owner (gubernator.go getGlobalRateLimit); a
// node that has no item for the key makes a fresh one, a full window. It
// queues the request's hits, refused or not, and sends them, summed per
// key, to the key's owner SyncWait after the first of them was queued, or
// at once when BatchLimit keys are waiting (global.go runAsyncHits,
// sendHits); a send that fails is dropped, never retried. The owner
// applies a peer's batch with DRAIN_OVER_LIMIT (gubernator.go
// GetPeerRateLimits), which empties the key rather than refusing a batch
// that asks more than is left, and SyncWait after the first change queued
// it sends the key's status to every other node (runBroadcasts,
// broadcastPeers), which replaces its cached item with it
// (UpdatePeerGlobals). A request that reaches the owner's own node is
// decided on the owner's item and queues a broadcast the same way.
//
// So the copies are the nodes' caches, "node-0" to "node-N-1", and Route
// gives a server its own node, always: a decision never waits for the
// network. What faults take away is a node's way to another (NodesReach):
// an outage takes every link between nodes, a partition those across it;
// a hit batch or a broadcast that cannot pass is dropped.
//
// A node decides on its cache, blind to every admission made elsewhere
// since the owner's last broadcast reached it, and to its own hits queued
// or sent since: a broadcast replaces its item with the owner's status,
// which does not hold them yet. Package sim checks the model against the
// real library's answers (internal/gubernatorcheck).
//
// # What it admits beyond the limit
//
// Derived for gubernator's token bucket, a window of Duration D from the
// owner's first hit with Limit L, on N nodes. Within one owner window:
//
//   - a node with no item of the key answers from a fresh one: at most L
//     each before any broadcast reaches it, N × L in all;
//   - the owner's item gives out at most L through its own requests and
//     the batches it takes whole (a first batch above L, on no item, is
//     refused whole and leaves L: still at most L taken);
//   - after broadcast b, carrying remaining R_b ≤ L, each node admits at
//     most R_b until the next. Broadcasts are at least SyncWait apart (the
//     next is sent SyncWait after the first change queued after one), and
//     a hit reaches the owner at most SyncWait after it is made, so every
//     hit of epoch b is in the owner's status by broadcast b + 2: R_{b+2}
//     ≤ R_b − (epoch b's hits), or 0 once they exceed it (drained). So
//     the epochs until the first that admits more than its R_b take at
//     most R_1 ≤ L, and that epoch and the next at most N × L each, after
//     which the status is 0 until the window ends: at most L + 2N × L.
//
// In all, at most (3N + 1) × L a window, and a span of T meets ⌈T/D⌉ + 1
// windows. It is safe (package sim's property test holds random runs
// within it, and fails at (N + 1) × L a window) and loose: bursts that
// fill every node's fresh item reach about 15% of it; reaching the two
// epochs of N × L needs a broadcast that goes out before the previous
// epoch's hits arrive, which the model allows and no adversary here has
// been built to time. Not derived for the other algorithms on this kind.

// DefaultSyncWait and DefaultBatchLimit are gubernator's GlobalSyncWait
// and GlobalBatchLimit defaults (config.go, SetDefaults; maxBatchSize in
// gubernator.go). Its example.conf shows 500ns, and the issue that asked
// for this kind 500µs: the code's default is 100ms.
const (
	DefaultSyncWait   = 100_000 // µs
	DefaultBatchLimit = 1000
)

// ownerReplicas are the points each node takes on the hash ring
// (replicated_hash.go, defaultReplicas).
const ownerReplicas = 512

// ownerRing is gubernator's ReplicatedConsistentHash over the nodes named
// node-0 … node-N-1 in place of their gRPC addresses: each node's 512
// points are FNV-1 64 of i and the MD5 of its name in hex (Add), a key
// belongs to the first point at or after its own hash, wrapping (Get).
type ownerRing struct {
	points []uint64
	nodes  []int
}

func newOwnerRing(nodes int) ownerRing {
	var r ownerRing
	type point struct {
		hash uint64
		node int
	}
	var pts []point
	for n := range nodes {
		key := fmt.Sprintf("%x", md5.Sum([]byte(fmt.Sprintf("node-%d", n))))
		for i := range ownerReplicas {
			pts = append(pts, point{fnv1(strconv.Itoa(i) + key), n})
		}
	}
	sort.SliceStable(pts, func(i, j int) bool { return pts[i].hash < pts[j].hash })
	for _, p := range pts {
		r.points = append(r.points, p.hash)
		r.nodes = append(r.nodes, p.node)
	}
	return r
}

func fnv1(s string) uint64 {
	h := fnv.New64()
	h.Write([]byte(s))
	return h.Sum64()
}

// owner is key's node.
func (r ownerRing) owner(key string) int {
	if len(r.points) == 0 {
		return 0
	}
	h := fnv1(key)
	i := sort.Search(len(r.points), func(i int) bool { return r.points[i] >= h })
	if i == len(r.points) {
		i = 0
	}
	return r.nodes[i]
}

// OwnerOf is the node that owns key on an owner topology (0 on another
// kind).
func (t *Topology) OwnerOf(key string) int {
	if t.ring == nil {
		return 0
	}
	return t.ring.owner(key)
}

// NodesReach reports whether node from can send to node to at at: no
// outage in force, and both on one side of any partition. A node is its
// server's: it is on its server's side.
func (t *Topology) NodesReach(from, to int, _ algorithms.Time) bool {
	if t.outages > 0 {
		return false
	}
	return !t.partitioned || t.side(from) == t.side(to)
}
