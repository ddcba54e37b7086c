package sim

// The synced topology's run (topology.Synced): each server decides on its
// own jar, reads the shared copy at a key's first request after each of
// its pushes, and pushes what it admitted every sync interval.

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/internal/sat"
	"github.com/ratelim/ratelim/store"
	"github.com/ratelim/ratelim/topology"
)

// syncedRun is what a synced run keeps beside its jars: each server's
// admissions on their way to the shared copy, and what the pushes did.
type syncedRun struct {
	interval int64 // µs
	charger  algorithms.Charger
	shared   *jar
	servers  []syncedServer
	// Pushes counts the pushes that reached the shared copy, Dropped
	// those that did not (their admissions never counted there), and
	// DroppedAdmissions what those carried.
	pushes, dropped, droppedAdmissions int64
}

// syncedServer is one server's side of the sync.
type syncedServer struct {
	// pending are the admissions made since the last push, in order.
	pending []admission
	// readIn is, by key, the push interval in which the server last read
	// it (1 + pushes so far when it is this one): a key not read in this
	// interval reads the shared copy first. A slice by key and a counter,
	// not a set cleared at each push: a map's lookup at every request
	// cost a simulated request a third of its time.
	readIn []uint32
	epoch  uint32
	// pushAt is the push scheduled, 0 when none is: a server with
	// nothing to push and nothing read schedules none, so an idle
	// fleet's run costs nothing a sync interval.
	pushAt int64
}

// admission is an admission a server made and has not pushed yet: the
// shared copy is charged with it at its own instant (Charger).
type admission struct {
	at   algorithms.Time
	cost int64
	key  int32
}

// setupSynced sets up a synced run's sync, on jars (the only store it
// runs on) and an algorithm that can be charged (Placement refused the
// others: countsElsewhere).
func (s *sim) setupSynced() {
	if s.sc.Topology.Kind != Synced {
		return
	}
	charger, _ := algorithms.AsCharger(s.alg)
	sy := &syncedRun{
		interval: int64(algorithms.At(s.sc.Topology.SyncInterval)),
		charger:  charger,
		shared:   s.stores.jars[s.sc.Servers],
		servers:  make([]syncedServer, s.sc.Servers),
	}
	s.reach = newKeyServers(len(s.keys), s.sc.Servers)
	for i := range sy.servers {
		sy.servers[i].epoch = 1
	}
	s.synced = sy
}

// takeSynced decides a request on its server's jar: after reading the
// shared copy, a round trip, when it is the key's first request since
// the server's last push; the fail policy decides when the shared copy
// cannot be reached for that read (Kong's fault_tolerant).
func (s *sim) takeSynced(ctx context.Context, p *pending, d *store.Decision) error {
	sy := s.synced
	sv := &sy.servers[p.server]
	key := int32(p.key)
	if int(key) >= len(sv.readIn) {
		sv.readIn = append(sv.readIn, make([]uint32, int(key)+1-len(sv.readIn))...)
	}
	if sv.readIn[key] != sv.epoch {
		if s.topo.SyncRoute(p.server, algorithms.Time(p.t)) == topology.Unreachable {
			p.latency = s.storeLatency(topology.Unreachable)
			return s.policyFor(d, errStoreDown)
		}
		p.latency = s.rtt()
		*s.stores.jars[p.server].state(p.key) = sy.shared.load(p.key)
		sv.readIn[key] = sv.epoch
		s.reach.add(p.key, p.server)
		s.pushSoon(p.server, p.t)
	}
	s.stores.jars[p.server].takeInto(&d.Decision, p.key, p.now, p.cost, s.observed || s.clients[p.client].waitsRetryAfter)
	if d.Allowed {
		sv.pending = append(sv.pending, admission{at: p.now, cost: p.cost, key: key})
	}
	return nil
}

// keyServers counts, by key, the servers (nodes, regions) that decided
// it: the N of the key's bound (DesignBound1s). It is told at a synced
// server's read, a two-tier local decision, an owner node's batch or
// broadcast queued, a region's admission: on some kinds at every
// request, so a fleet of at most 64 keeps a bit per (key, server) and
// asks no map.
type keyServers struct {
	count []int32
	bits  []uint64            // by key, its servers as bits, with at most 64 servers
	pairs map[uint64]struct{} // the (key, server) pairs counted, with more
}

func newKeyServers(keys, servers int) *keyServers {
	k := &keyServers{count: make([]int32, keys)}
	if servers <= 64 {
		k.bits = make([]uint64, keys)
	} else {
		k.pairs = map[uint64]struct{}{}
	}
	return k
}

// add counts server for key, once.
func (k *keyServers) add(key, server int) {
	if k.bits != nil {
		if bit := uint64(1) << uint(server); k.bits[key]&bit == 0 {
			k.bits[key] |= bit
			k.count[key]++
		}
		return
	}
	pair := uint64(key)<<32 | uint64(server)
	if _, ok := k.pairs[pair]; !ok {
		k.pairs[pair] = struct{}{}
		k.count[key]++
	}
}

// pushSoon schedules server's next push, at its first tick after t
// (topology.NextPush, on the run's wall clock), if none is scheduled.
func (s *sim) pushSoon(server int, t int64) {
	sv := &s.synced.servers[server]
	if sv.pushAt != 0 {
		return
	}
	origin := int64(s.sc.Origin())
	at := int64(s.topo.NextPush(server, algorithms.Time(origin+t))) - origin
	sv.pushAt = max(at, 1)
	s.schedule(event{at: sv.pushAt, kind: evSync, arg: int32(server)})
}

// push is server's push at at: its admissions since the last, charged to
// the shared copy each at its own instant, or dropped when the shared
// copy cannot be reached (as Kong's sync_to_redis and gubernator's
// sendHits drop a failed send); either way the server reads the shared
// copy again at each key's next request.
func (s *sim) push(server int, at int64) {
	sy := s.synced
	sv := &sy.servers[server]
	sv.pushAt = 0
	if s.topo.SyncRoute(server, algorithms.Time(at)) == topology.Unreachable {
		if len(sv.pending) > 0 {
			sy.dropped++
			sy.droppedAdmissions += int64(len(sv.pending))
		}
	} else {
		for _, a := range sv.pending {
			st := sy.shared.state(int(a.key))
			sy.charger.ChargeInPlace(st, a.at, a.cost)
		}
		if len(sv.pending) > 0 {
			sy.pushes++
		}
	}
	sv.pending = sv.pending[:0]
	sv.epoch++
}

// SyncedResult is what a synced run's pushes did.
type SyncedResult struct {
	IntervalMs float64 `json:"interval_ms"`
	// Pushes reached the shared copy; Dropped did not, and the
	// DroppedAdmissions they carried were never counted there.
	Pushes            int64 `json:"pushes"`
	Dropped           int64 `json:"dropped"`
	DroppedAdmissions int64 `json:"dropped_admissions"`
}

// syncedResult sums a synced run's pushes, for a Result; nil on another
// topology.
func (s *sim) syncedResult() *SyncedResult {
	tp := s.sc.Topology
	if cmp.Or(s.askedKind, tp.Kind) != Synced {
		return nil
	}
	out := &SyncedResult{IntervalMs: millis(int64(algorithms.At(tp.SyncInterval)))}
	if tp.SyncInterval < 0 {
		out.IntervalMs = -1
	}
	if sy := s.synced; sy != nil {
		out.Pushes, out.Dropped, out.DroppedAdmissions = sy.pushes, sy.dropped, sy.droppedAdmissions
	}
	return out
}

// SyncedBound is the most a synced topology admits of one key in any span
// of length T (topology.Synced's doc derives it), added up over chunks
// pieces of the span: in each, perChunk, what one copy that saw every
// admission admits at most, and unseen, what each of the servers − 1
// others admits at most that it had not seen. Saturating.
func SyncedBound(chunks, perChunk, unseen int64, servers int) int64 {
	return sat.Mul(chunks, sat.Add(perChunk, sat.Mul(int64(max(servers, 1)-1), unseen)))
}

// syncedBoundOf is the most alg admits of one key in any span of T on a
// synced topology whose servers push every interval, the key's requests
// reaching servers of them, in units of cost: blindBound with the
// unseen span of two intervals.
func syncedBoundOf(alg algorithms.Algorithm, span, interval time.Duration, servers int) (int64, bool) {
	return blindBound(alg, span, 2*interval, servers)
}

// blindBound is the most alg admits of one key in any span of T when
// copies copies each decide exactly on what they have seen, and what
// they have not seen of the others' admissions is at most a span of
// unseen (topology.Synced's derivation), in units of cost; ok is false
// for an algorithm the derivation does not cover: a peer model, whose
// own quirks it does not know. A Multi is bound by the least of its
// limits' bounds.
func blindBound(alg algorithms.Algorithm, span, unseen time.Duration, copies int) (int64, bool) {
	if m, ok := alg.(*algorithms.Multi); ok {
		least, any := int64(0), false
		for _, p := range m.Policies() {
			if b, ok := blindBound(p.Algorithm, span, unseen, copies); ok && (!any || b < least) {
				least, any = b, true
			}
		}
		return least, any
	}
	if PeerOf(alg.Name()) != nil {
		return 0, false
	}
	servers := copies
	p := alg.Params()
	unseenSpan := min(max(unseen, 0), span)
	switch Family(alg.Name()) {
	case "token-bucket", "gcra", "leaky-bucket":
		return SyncedBound(1, bucketSpan(p, span), bucketSpan(p, unseenSpan), servers), true
	case "fixed-window", "sliding-window", "sliding-log":
		_, limit, err := algorithms.WindowLimit(p.Rate, p.Window)
		if err != nil || p.Window <= 0 {
			return 0, false
		}
		windows := int64((span + p.Window - 1) / p.Window)
		if Family(alg.Name()) != "sliding-log" {
			windows++
		}
		// Each copy counts its own, at most limit a window: a window
		// admits at most copies × limit, the local jars' worst.
		return SyncedBound(windows, limit, limit, servers), true
	}
	return 0, false
}

// bucketSpan is the most a bucket of p admits in a span of d: its burst
// and what it refills in d.
func bucketSpan(p algorithms.Params, d time.Duration) int64 {
	if p.Rate.Per <= 0 {
		return p.Burst
	}
	if p.Rate.N <= 0 || d <= 0 {
		return p.Burst
	}
	// N × d ÷ Per in 128 bits: saturating the product first would
	// understate it.
	hi, lo := bits.Mul64(uint64(p.Rate.N), uint64(d))
	if hi >= uint64(p.Rate.Per) {
		return math.MaxInt64
	}
	refill, _ := bits.Div64(hi, lo, uint64(p.Rate.Per))
	if refill > math.MaxInt64 {
		return math.MaxInt64
	}
	return sat.Add(p.Burst, int64(refill))
}

// designKeyBound is key k's bound within one second on a synced or
// two-tier run, in requests: the bound in cost over the least cost among
// its clients' requests; 0 when there is none (a key that costs nothing,
// a run of another kind).
func (s *sim) designKeyBound(k int, failedOpen bool) int64 {
	if s.reach == nil || s.reach.count[k] == 0 {
		return 0
	}
	servers := int(s.reach.count[k])
	var units int64
	ok := false
	switch s.sc.Topology.Kind {
	case Synced:
		units, ok = syncedBoundOf(s.alg, time.Second, s.sc.Topology.SyncInterval, servers)
	case TwoTier:
		units, ok = twoTierBoundOf(s.alg, s.sc.Topology.Local, time.Second, servers, failedOpen)
	case Regions:
		units, ok = regionsBoundOf(s.alg, time.Second, s.sc.Topology.ReplicationLag, servers)
	case Owner:
		units, ok = ownerBoundOf(s.alg, time.Second, servers)
	}
	if !ok {
		return 0
	}
	least := int64(-1)
	for _, c := range s.clients {
		if c.key != k {
			continue
		}
		for _, cost := range c.cost {
			if least < 0 || cost < least {
				least = cost
			}
		}
	}
	if least <= 0 {
		return 0
	}
	return units / least
}

// countsElsewhere refuses a topology whose copies count admissions made
// elsewhere (a synced push, an owner's batch, a region's replication) on
// a store but memory, or with an algorithm that cannot count them: the
// six exact algorithms can (algorithms.Charger), and on an owner the
// gubernator model drains its own way.
func countsElsewhere(sc *Scenario) error {
	t := sc.Topology
	var kind string
	switch k := t.RunsAs(); {
	case k == Synced:
		kind = "a synced topology's push"
	case k == Owner:
		kind = "an owner topology's batch of hits"
	case k == Regions && t.ReplicationLag >= 0:
		kind = "a region's replication"
	default:
		return nil
	}
	if !onJars(t.Store) {
		return fmt.Errorf("%s is modelled on the memory store only (want store: memory)", kind)
	}
	exact := algorithms.ExactNames()
	for _, l := range sc.Limits() {
		if strings.HasPrefix(l.Algorithm, "gubernator") && len(sc.Limits()) > 1 {
			return fmt.Errorf("%s drains a batch its own way, as the one limit of a key (want it alone, or exact algorithms for several limits)", l.Algorithm)
		}
		if slices.Contains(exact, l.Algorithm) || (t.RunsAs() == Owner && strings.HasPrefix(l.Algorithm, "gubernator")) {
			continue
		}
		want := strings.Join(exact, ", ")
		if t.RunsAs() == Owner {
			want = "gubernator, gubernator-leaky, " + want
		}
		return fmt.Errorf("%s cannot count an admission decided elsewhere, which %s must (want one of %s)", l.Algorithm, kind, want)
	}
	return nil
}
