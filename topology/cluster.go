package topology

// The cluster topology: Redis Cluster's masters, each holding a range of
// hash slots and followed by its replicas, and what a partition does to
// them. Every rule cites the Redis source it follows (redis/redis at
// 4f8cdc2a: src/cluster_legacy.c) or the specification (cluster-spec.md,
// "Failure detection", "Replica election and promotion", "Write safety").

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/ratelim/ratelim/algorithms"
)

// DefaultNodeTimeout is cluster-node-timeout's default (src/config.c).
const DefaultNodeTimeout = 15 * time.Second

// ClusterDown is the copy a server reaches when the node it reaches answers
// "-CLUSTERDOWN The cluster is down" for every key: a master cut off from
// the majority of masters for node_timeout (the write fence), or, with
// full coverage required, any node while a master is failed and no
// replica has taken its slots yet.
const ClusterDown = -2

// The timings of failure detection and election, in the algorithms' µs.
const (
	// gossipSpread is how long after the first master flags a node PFAIL
	// a majority's reports reach one master, which marks it FAIL: pings
	// go to a few random nodes every 100 ms cron, and to any node not
	// heard from in node_timeout/2 (clusterCron); about 0–1 s measured.
	gossipSpread = algorithms.Time(time.Second / time.Microsecond)
	// electionDelay is a replica's wait before it asks for votes: 500 ms
	// plus a random 0–500 ms, plus 1 s per rank (clusterHandleSlaveFailover);
	// electionJitter also holds the 100 ms cron it is started from and the
	// cron that finds the votes in (clusterCron, up to 200 ms more): the
	// elections measured here took 0.61–1.15 s after FAIL (40 runs,
	// internal/redistest TestClusterFailoverTimeline and live
	// TestClusterLiveAgainstSimulator), 10 of them past 500 + 500 ms.
	electionDelay  = algorithms.Time(500 * time.Millisecond / time.Microsecond)
	electionJitter = algorithms.Time(700 * time.Millisecond / time.Microsecond)
	rankDelay      = algorithms.Time(time.Second / time.Microsecond)
	// maxRejoinDelay bounds how long a master that was in the minority
	// stays down once the partition heals: node_timeout, at least 500 ms,
	// at most 5 s (CLUSTER_MIN_REJOIN_DELAY, CLUSTER_MAX_REJOIN_DELAY,
	// clusterUpdateState).
	minRejoinDelay = algorithms.Time(500 * time.Millisecond / time.Microsecond)
	maxRejoinDelay = algorithms.Time(5 * time.Second / time.Microsecond)
	// failUndoMult: a master with slots flagged FAIL has the flag cleared
	// once it is reachable again and FAIL is this many node timeouts old
	// (CLUSTER_FAIL_UNDO_TIME_MULT, clearNodeFailureIfNeeded).
	failUndoMult = 2
)

// cluster is the cluster kind's nodes and shards, and the plan of the
// partition in force (or of the last one, whose aftermath may still run:
// a master held down after the heal, an election that completes after
// it).
type cluster struct {
	masters, replicas int
	nodeTimeout       algorithms.Time
	partial           bool  // cluster-require-full-coverage no
	first             []int // each shard's first slot
	// owner is each shard's master when the plan began (all of them
	// before any partition): the node whose copy decides its keys.
	owner []int
	plan  *clusterPlan
}

func newCluster(cfg Config) *cluster {
	c := &cluster{masters: max(cfg.Masters, 1), replicas: max(cfg.Replicas, 0), partial: cfg.PartialCoverage,
		nodeTimeout: algorithms.At(cfg.NodeTimeout)}
	if cfg.NodeTimeout <= 0 {
		c.nodeTimeout = algorithms.At(DefaultNodeTimeout)
	}
	c.first = FirstSlots(c.masters)
	c.owner = make([]int, c.masters)
	for m := range c.owner {
		c.owner[m] = c.node(m, 0)
	}
	return c
}

// node is the copy index of shard's j-th node: 0 the node that started as
// its master, 1 … replicas its replicas.
func (c *cluster) node(shard, j int) int { return shard*(1+c.replicas) + j }

// shardOfNode is the shard node belongs to.
func (c *cluster) shardOfNode(node int) int { return node / (1 + c.replicas) }

// clusterNames names each node as it started: "s0-master", "s0-replica"
// (or "s0-replica1", "s0-replica2", … with more than one), shard by
// shard. A replica keeps its name when it is promoted.
func clusterNames(masters, replicas int) []string {
	var names []string
	for m := range max(masters, 1) {
		names = append(names, fmt.Sprintf("s%d-master", m))
		for j := 1; j <= replicas; j++ {
			if replicas == 1 {
				names = append(names, fmt.Sprintf("s%d-replica", m))
			} else {
				names = append(names, fmt.Sprintf("s%d-replica%d", m, j))
			}
		}
	}
	return names
}

// clusterPlan is what a partition does to the cluster, decided at its
// start from where its nodes are: which side holds a majority of masters,
// when each master cut off from it is failed, and which replica takes its
// slots when.
type clusterPlan struct {
	gen        int // which partition of the run: its events name it
	start      algorithms.Time
	healed     bool
	healAt     algorithms.Time
	serverSide []int
	nodeSide   []int
	// majority is the side holding more than half the masters, or -1 when
	// none does (a split down the middle): only there can a master be
	// failed and replaced (markNodeAsFailingIfNeeded needs a majority of
	// masters' reports, an election a majority of votes).
	majority int
	shards   []shardFate
}

// shardFate is what a partition does to one shard.
type shardFate struct {
	master int // the shard's master at the partition's start
	// cut: its master is not on the majority side, which fails it at
	// failAt (when there is a majority side at all).
	cut    bool
	failAt algorithms.Time
	// promoted is the replica elected in its place at promoteAt, or -1
	// when no replica of it is on the majority side.
	promoted  int
	promoteAt algorithms.Time
}

// fenceAt is when a master on a side without the majority refuses every
// key: once it has flagged the masters it cannot reach PFAIL, node_timeout
// after the cut, it counts fewer than half the masters reachable and
// marks the cluster down on its own (clusterUpdateState). The spec, Write
// safety: "no writes are accepted or lost after that time".
func (p *clusterPlan) fenceAt(c *cluster) algorithms.Time { return p.start + c.nodeTimeout }

// rejoinDelay is how long a master that was fenced stays down after the
// heal (clusterUpdateState's rejoin_delay).
func (c *cluster) rejoinDelay() algorithms.Time {
	return min(max(c.nodeTimeout, minRejoinDelay), maxRejoinDelay)
}

// start plans a partition beginning at at: serverSide and nodeSide place
// each API server and each node; draw(n) draws from [0, n) for the gossip
// and election jitter.
func (c *cluster) start(at algorithms.Time, serverSide, nodeSide []int, draw func(int64) int64) {
	c.settle(at)
	gen := 1
	if c.plan != nil {
		gen = c.plan.gen + 1
	}
	p := &clusterPlan{gen: gen, start: at, serverSide: serverSide, nodeSide: nodeSide, majority: -1}
	count := map[int]int{}
	for _, n := range c.owner {
		count[nodeSide[n]]++
	}
	for side, n := range count {
		if n > c.masters/2 {
			p.majority = side
		}
	}
	for m, master := range c.owner {
		f := shardFate{master: master, promoted: -1}
		if p.majority >= 0 && nodeSide[master] != p.majority {
			f.cut = true
			f.failAt = at + c.nodeTimeout + algorithms.Time(draw(int64(gossipSpread)))
			// The replicas on the majority side stand; the best ranked
			// (all equally up to date at the cut: rank 0) wins. A replica
			// older than node_timeout × 10 + 10 s would not stand
			// (clusterHandleSlaveFailover), which no replica cut off at
			// this partition's start can be by its failAt.
			rank := 0
			for j := range c.replicas + 1 {
				n := c.node(m, j)
				if n == master || nodeSide[n] != p.majority {
					continue
				}
				if f.promoted < 0 {
					f.promoted = n
					f.promoteAt = f.failAt + electionDelay + algorithms.Time(draw(int64(electionJitter))) + algorithms.Time(rank)*rankDelay
				}
				rank++
			}
		}
		p.shards = append(p.shards, f)
	}
	c.plan = p
}

// heal ends the partition at at.
func (c *cluster) heal(at algorithms.Time) {
	if c.plan != nil && !c.plan.healed {
		c.plan.healed, c.plan.healAt = true, at
	}
}

// failed reports whether shard f's failure was declared: FAIL reached
// while the partition lasted (a heal before it undoes the PFAILs).
func (p *clusterPlan) failed(f shardFate) bool {
	return f.cut && (!p.healed || f.failAt <= p.healAt)
}

// ownerAt is the master of shard m that a server on side sees at at: the
// promoted replica once it is elected, on the majority side during the
// partition and everywhere after the heal; else the master it had.
func (c *cluster) ownerAt(m, side int, at algorithms.Time) int {
	p := c.plan
	if p == nil {
		return c.owner[m]
	}
	f := p.shards[m]
	if f.promoted >= 0 && p.failed(f) && at >= f.promoteAt && (p.healed || side == p.majority) {
		return f.promoted
	}
	return f.master
}

// down reports whether node answers CLUSTERDOWN at at: it is fenced, or
// the cluster has slots without a master (uncovered).
func (c *cluster) down(node int, at algorithms.Time) bool {
	return c.fenced(node, at) || c.uncovered(node, at)
}

// fenced reports whether node, a master cut off from the majority of
// masters for node_timeout, refuses every key at at: for the rest of the
// partition, and its rejoin delay after the heal.
func (c *cluster) fenced(node int, at algorithms.Time) bool {
	p := c.plan
	if p == nil || p.nodeSide[node] == p.majority {
		return false
	}
	fence := p.fenceAt(c)
	if !p.healed {
		return at >= fence
	}
	return p.healAt > fence && at >= p.healAt && at < p.healAt+c.rejoinDelay()
}

// uncovered reports whether node refuses every key at at because, with
// full coverage required, a failed master's slots have no master yet and
// node knows it (clusterUpdateState): the majority side's nodes during
// the partition, every node after the heal.
func (c *cluster) uncovered(node int, at algorithms.Time) bool {
	p := c.plan
	if p == nil || c.partial || (!p.healed && p.nodeSide[node] != p.majority) {
		return false
	}
	for _, f := range p.shards {
		if !p.failed(f) || at < f.failAt {
			continue
		}
		end := f.promoteAt
		if f.promoted < 0 {
			end = f.failAt + failUndoMult*c.nodeTimeout
			if p.healed {
				end = max(end, p.healAt)
			} else {
				end = at + 1 // until the heal
			}
		}
		if at < end {
			return true
		}
	}
	return false
}

// route is the copy a server on side reaches for a key in slot at at, or
// Unreachable (its master is on another side: the client waits for its
// timeout) or ClusterDown.
func (c *cluster) route(side, slot int, partitioned bool, at algorithms.Time) int {
	m := shardOf(c.first, slot)
	n := c.ownerAt(m, side, at)
	if partitioned && c.plan.nodeSide[n] != side {
		return Unreachable
	}
	if c.down(n, at) {
		return ClusterDown
	}
	return n
}

// settle makes the last plan's outcome the cluster's shape as of at: the
// masters each shard has then.
func (c *cluster) settle(at algorithms.Time) {
	if c.plan == nil {
		return
	}
	for m := range c.owner {
		c.owner[m] = c.ownerAt(m, -2, at)
	}
}

// followers are shard m's nodes other than its master at at.
func (c *cluster) followers(m int, at algorithms.Time) (master int, rest []int) {
	master = c.ownerAt(m, -2, at)
	for j := range c.replicas + 1 {
		if n := c.node(m, j); n != master {
			rest = append(rest, n)
		}
	}
	return master, rest
}

// ClusterEvent is one change a partition brings a cluster, at its
// instant: for the run's log and its findings.
type ClusterEvent struct {
	At    algorithms.Time
	Shard int
	What  string // "fenced", "failed", "promoted", "rejoined"
	Node  int    // the node it happens to
	// Resync: a promoted replica's old master rejoins as its replica here
	// and copies its state (its writes since the partition began lost).
	Resync bool
	plan   int // the partition that planned it
}

// events are the changes p plans, in time order as planned at its start.
func (c *cluster) events() []ClusterEvent {
	p := c.plan
	if p == nil {
		return nil
	}
	var evs []ClusterEvent
	for m, f := range p.shards {
		if p.nodeSide[f.master] != p.majority {
			evs = append(evs, ClusterEvent{plan: p.gen, At: p.fenceAt(c), Shard: m, What: "fenced", Node: f.master})
		}
	}
	for m, f := range p.shards {
		if !f.cut {
			continue
		}
		evs = append(evs, ClusterEvent{plan: p.gen, At: f.failAt, Shard: m, What: "failed", Node: f.master})
		if f.promoted >= 0 {
			evs = append(evs, ClusterEvent{plan: p.gen, At: f.promoteAt, Shard: m, What: "promoted", Node: f.promoted})
		}
	}
	slices.SortStableFunc(evs, func(a, b ClusterEvent) int { return cmp.Compare(a.At, b.At) })
	return evs
}

// happens reports whether ev, planned at the partition's start, still
// happens now that the partition may have healed: a fence or a FAIL only
// if the partition lasted until it; an election once FAIL was reached,
// even after the heal (the replica's election is under way and the
// masters still hold the FAIL). A promotion after the heal is where the
// old master, reachable again, rejoins as its replica (ev.Resync).
func (c *cluster) happens(ev ClusterEvent) (ClusterEvent, bool) {
	p := c.plan
	if p == nil || p.gen != ev.plan {
		return ev, false // a later partition has planned anew
	}
	switch ev.What {
	case "fenced":
		return ev, !p.healed || p.healAt > ev.At
	case "failed":
		return ev, p.failed(p.shards[ev.Shard])
	case "promoted":
		ev.Resync = p.healed && p.healAt <= ev.At
		return ev, p.failed(p.shards[ev.Shard])
	}
	return ev, false
}

// ClusterEvents are the changes the partition in force plans for a
// cluster, in time order, as planned at its start; a heal may cancel some
// (ClusterEventHappens). None on another kind.
func (t *Topology) ClusterEvents() []ClusterEvent {
	if t.cluster == nil {
		return nil
	}
	return t.cluster.events()
}

// ClusterEventHappens reports whether ev, one of ClusterEvents, happens
// at its instant, given the heal so far, and returns it with Resync set
// where the old master rejoins then.
func (t *Topology) ClusterEventHappens(ev ClusterEvent) (ClusterEvent, bool) {
	if t.cluster == nil {
		return ev, false
	}
	return t.cluster.happens(ev)
}

// ShardOf is the shard (master) whose slots hold key on a cluster, and
// its slot; 0 and the slot on another kind.
func (t *Topology) ShardOf(key string) (shard, slot int) {
	slot = HashSlot(key)
	return t.ShardOfSlot(slot), slot
}

// ShardOfSlot is the shard (master) whose range holds slot on a cluster;
// 0 on another kind.
func (t *Topology) ShardOfSlot(slot int) int {
	if t.cluster == nil {
		return 0
	}
	return shardOf(t.cluster.first, slot)
}

// ShardCopies are shard's nodes on a cluster, as copies: n of them from
// first, its master as it started then its replicas. Every copy, as one
// shard, on another kind.
func (t *Topology) ShardCopies(shard int) (first, n int) {
	if t.cluster == nil {
		return 0, len(t.nodeSide)
	}
	return t.cluster.node(shard, 0), 1 + t.cluster.replicas
}

// ShardSlots are shard's first and last slots on a cluster.
func (t *Topology) ShardSlots(shard int) (first, last int) {
	if t.cluster == nil || shard < 0 || shard >= len(t.cluster.first) {
		return 0, Slots - 1
	}
	last = Slots - 1
	if shard+1 < len(t.cluster.first) {
		last = t.cluster.first[shard+1] - 1
	}
	return t.cluster.first[shard], last
}

// NodeTimeout is a cluster's node timeout (0 on another kind).
func (t *Topology) NodeTimeout() algorithms.Time {
	if t.cluster == nil {
		return 0
	}
	return t.cluster.nodeTimeout
}

// ClusterDownFenced reports, for a request of server for a key in slot
// that the topology routed to ClusterDown at at, whether the node that
// refused it is a fenced master (else the cluster's slots were
// uncovered).
func (t *Topology) ClusterDownFenced(server, slot int, at algorithms.Time) bool {
	if t.cluster == nil {
		return false
	}
	n := t.cluster.ownerAt(shardOf(t.cluster.first, slot), t.side(server), at)
	return t.cluster.fenced(n, at)
}
