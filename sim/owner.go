package sim

// The owner topology's run (topology.Owner, gubernator's GLOBAL): each
// server's node decides on its cache, queues the hits for the key's
// owner, and the owner broadcasts the key's status back.

import (
	"cmp"
	"context"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/store"
)

// drainer is an algorithm that applies a batch of hits with
// DRAIN_OVER_LIMIT its own way (the gubernator peer models); the others
// drain as drain says.
type drainer interface {
	Drain(prev algorithms.State, now algorithms.Time, hits int64) algorithms.State
}

// broadcaster is an algorithm whose peers keep something else of the
// owner's item than the item itself (gubernator's leaky bucket: the
// status's whole Remaining, leaking from the broadcast on); the others'
// peers keep a copy.
type broadcaster interface {
	Broadcast(owner algorithms.State, now algorithms.Time) algorithms.State
}

// ownerRun is what an owner run keeps beside the nodes' caches (its
// jars): each node's hits on their way to owners, its keys waiting to be
// broadcast, and what the sends did.
type ownerRun struct {
	wait       int64 // µs: GlobalSyncWait
	batchLimit int
	owners     []int32 // by key
	nodes      []ownerNode
	drain      func(st *algorithms.State, now algorithms.Time, hits int64)
	// Sent counts the hit batches and broadcasts that reached their
	// node, Dropped those that did not.
	sent, dropped int64
}

// ownerNode is one node's queues.
type ownerNode struct {
	// hits are the hits queued per key since the last send, in the order
	// their keys were first queued, each with the instant of its first
	// (the batch's CreatedAt: runAsyncHits keeps the first request).
	hits []queuedHits
	// hitSlot is, by key, 1 + its place in hits, 0 when it has none
	// queued: a slice by key, reset at each send for the keys it held,
	// not a map looked up at every request.
	hitSlot []int32
	hitsAt  int64 // the send scheduled, 0 when none
	// updates are the keys this node owns whose status waits to be
	// broadcast.
	updates     []int32
	updateSet   map[int32]struct{}
	broadcastAt int64
}

type queuedHits struct {
	key   int32
	first algorithms.Time
	hits  int64
}

// setupOwner sets up an owner run.
func (s *sim) setupOwner() {
	tp := s.sc.Topology
	if tp.Kind != Owner {
		return
	}
	o := &ownerRun{
		wait:       int64(algorithms.At(cmp.Or(tp.SyncWait, time.Duration(DefaultSyncWait)*time.Microsecond))),
		batchLimit: cmp.Or(tp.BatchLimit, DefaultBatchLimit),
		owners:     make([]int32, len(s.keys)),
		nodes:      make([]ownerNode, s.sc.Servers),
	}
	for i, k := range s.keys {
		o.owners[i] = int32(s.topo.OwnerOf(k.name))
	}
	for i := range o.nodes {
		o.nodes[i].hitSlot = make([]int32, len(s.keys))
		o.nodes[i].updateSet = map[int32]struct{}{}
	}
	if d, ok := s.alg.(drainer); ok {
		o.drain = func(st *algorithms.State, now algorithms.Time, hits int64) { *st = d.Drain(*st, now, hits) }
	} else {
		charger, _ := algorithms.AsCharger(s.alg)
		alg := s.alg
		o.drain = func(st *algorithms.State, now algorithms.Time, hits int64) {
			// Admitted whole, or emptied: what is left is charged.
			if next, d := alg.Step(*st, now, hits); d.Allowed {
				*st = next
				return
			}
			_, peek := alg.Step(*st, now, 0)
			if peek.Remaining > 0 {
				charger.ChargeInPlace(st, now, peek.Remaining)
			}
		}
	}
	s.owner = o
	s.reach = newKeyServers(len(s.keys), s.sc.Servers)
}

// takeOwner decides a request on its server's node's cache, and queues
// its hits for the key's owner, or, on the owner's own node, the key's
// broadcast.
func (s *sim) takeOwner(ctx context.Context, p *pending, d *store.Decision) error {
	o := s.owner
	s.stores.jars[p.server].takeInto(&d.Decision, p.key, p.now, p.cost, s.observed || s.clients[p.client].waitsRetryAfter)
	if p.cost == 0 {
		return nil // a peek is never sent or broadcast (QueueHit, QueueUpdate)
	}
	if int(o.owners[p.key]) == p.server {
		s.queueBroadcast(p.server, int32(p.key), p.t)
		return nil
	}
	n := &o.nodes[p.server]
	key := int32(p.key)
	if int(key) >= len(n.hitSlot) {
		n.hitSlot = append(n.hitSlot, make([]int32, int(key)+1-len(n.hitSlot))...)
	}
	if i := n.hitSlot[key]; i > 0 {
		n.hits[i-1].hits += p.cost
	} else {
		n.hits = append(n.hits, queuedHits{key: key, first: p.now, hits: p.cost})
		n.hitSlot[key] = int32(len(n.hits))
		s.reach.add(p.key, p.server) // once a batch, not at every request
	}
	switch {
	case len(n.hits) >= o.batchLimit:
		s.scheduleOwner(&n.hitsAt, p.t, evOwnerHits, p.server)
	case n.hitsAt == 0:
		s.scheduleOwner(&n.hitsAt, p.t+o.wait, evOwnerHits, p.server)
	}
	return nil
}

// scheduleOwner schedules a node's send of kind at at, unless one is due
// already no later.
func (s *sim) scheduleOwner(due *int64, at int64, kind uint8, node int) {
	if *due != 0 && *due <= at {
		return
	}
	*due = max(at, 1)
	s.schedule(event{at: *due, kind: kind, arg: int32(node)})
}

// queueBroadcast queues key's status on its owner for the next broadcast.
func (s *sim) queueBroadcast(node int, key int32, t int64) {
	o := s.owner
	n := &o.nodes[node]
	if _, ok := n.updateSet[key]; !ok {
		s.reach.add(int(key), node)
		n.updateSet[key] = struct{}{}
		n.updates = append(n.updates, key)
	}
	switch {
	case len(n.updates) >= o.batchLimit:
		s.scheduleOwner(&n.broadcastAt, t, evOwnerBroadcast, node)
	case n.broadcastAt == 0:
		s.scheduleOwner(&n.broadcastAt, t+o.wait, evOwnerBroadcast, node)
	}
}

// sendHits is node's send of its queued hits at at, one batch per owner:
// each owner applies a key's hits with DRAIN_OVER_LIMIT at the instant of
// its first (the item expires by the owner's clock, at), and queues the
// key's broadcast; a batch whose owner cannot be reached is dropped.
func (s *sim) sendHits(node int, at int64) {
	o := s.owner
	n := &o.nodes[node]
	if n.hitsAt != at {
		return // an earlier send took these hits
	}
	n.hitsAt = 0
	for _, q := range n.hits {
		n.hitSlot[q.key] = 0
		owner := int(o.owners[q.key])
		if !s.nodesReach(node, owner, at) {
			o.dropped++
			continue
		}
		o.sent++
		st := s.stores.jars[owner].state(int(q.key))
		if expired(s.alg, *st, algorithms.Time(at)) {
			*st = algorithms.State{}
		}
		o.drain(st, q.first, q.hits)
		s.queueBroadcast(owner, q.key, at)
	}
	n.hits = n.hits[:0]
}

// nodesReach reports whether node from's send reaches node to at at: the
// topology's links (outages, partitions), and both nodes up: a node is
// its server's, and a crashed server's node neither sends nor receives
// (its queue dies with it; the ring is not redrawn, as gubernator's
// would be once its membership saw the node go).
func (s *sim) nodesReach(from, to int, at int64) bool {
	if down := s.faults.down; down != nil && (down[from] || down[to]) {
		return false
	}
	return s.topo.NodesReach(from, to, algorithms.Time(at))
}

// expired reports whether st is an item the owner's cache has dropped by
// at: gubernator's LRU drops an item past its ExpireAt (the peer models
// say where they keep it); the other algorithms' states never expire.
func expired(alg algorithms.Algorithm, st algorithms.State, at algorithms.Time) bool {
	e, ok := alg.(interface {
		Expired(st algorithms.State, now algorithms.Time) bool
	})
	return ok && e.Expired(st, at)
}

// broadcast is owner node's broadcast at at: each queued key's status,
// read now (a peek, gubernator's Hits 0), replaces the key's item in the
// cache of every node it reaches.
func (s *sim) broadcast(node int, at int64) {
	o := s.owner
	n := &o.nodes[node]
	if n.broadcastAt != at {
		return
	}
	n.broadcastAt = 0
	own := s.stores.jars[node]
	for _, key := range n.updates {
		st := own.state(int(key))
		*st, _ = s.alg.Step(*st, algorithms.Time(at), 0)
		sent := *st
		if b, ok := s.alg.(broadcaster); ok {
			sent = b.Broadcast(*st, algorithms.Time(at))
		}
		for peer := range o.nodes {
			if peer == node {
				continue
			}
			if !s.nodesReach(node, peer, at) {
				o.dropped++
				continue
			}
			o.sent++
			*s.stores.jars[peer].state(int(key)) = sent.Capped()
		}
	}
	n.updates = n.updates[:0]
	clear(n.updateSet)
}

// OwnerResult is what an owner run's sends did.
type OwnerResult struct {
	SyncWaitMs float64 `json:"sync_wait_ms"`
	BatchLimit int     `json:"batch_limit"`
	// Sent are the hit batches and broadcasts that reached their node
	// (one a key a node), Dropped those that did not.
	Sent    int64 `json:"sent"`
	Dropped int64 `json:"dropped"`
}

func (s *sim) ownerResult() *OwnerResult {
	if s.owner == nil {
		return nil
	}
	return &OwnerResult{SyncWaitMs: millis(s.owner.wait), BatchLimit: s.owner.batchLimit, Sent: s.owner.sent, Dropped: s.owner.dropped}
}

// ownerBoundOf is the most a key is admitted in any span of T on an owner
// topology running gubernator's token bucket, its requests reaching
// servers nodes (topology.Owner's doc derives it): (⌈T/D⌉ + 1) windows of
// Duration D meet the span, and in each at most (3N + 1) × Limit. Not
// derived for the other algorithms (ok false).
func ownerBoundOf(alg algorithms.Algorithm, span time.Duration, servers int) (int64, bool) {
	if alg.Name() != "gubernator" {
		return 0, false
	}
	p := alg.Params()
	_, limit, err := algorithms.WindowLimit(p.Rate, p.Window)
	if err != nil || p.Window <= 0 {
		return 0, false
	}
	windows := int64((span+p.Window-1)/p.Window) + 1
	return SyncedBound(windows, limit, 3*limit, servers+1), true
}
