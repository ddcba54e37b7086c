package sim

// The regions topology's run (topology.Regions): each client is served in
// its region, by the next region up while its own is down; each region's
// admissions reach the other regions' stores a replication lag later.

import (
	"slices"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/topology"
)

// regionsRun is what a regions run keeps: each client's home region, a
// balancer per region, and the admissions on their way to each region.
type regionsRun struct {
	home    []int // by client
	spreads []topology.Spreader
	lag     int64 // µs; < 0: no replication
	charger algorithms.Charger
	// inbound are, by region, the admissions on their way to it, in the
	// order they are due (one lag for all: the order they were made),
	// from head on: those before it were delivered. The queue is cut
	// back once it is half delivered, not at every delivery (which moved
	// every admission in flight, a lag's worth, at each).
	inbound [][]delivery
	head    []int
	// due is, by region, the instant of the delivery event scheduled, 0
	// when none is.
	due []int64
	// Delivered and Lost count the admissions replication carried, and
	// those it could not (a partition, a region down); Moved the
	// requests served outside their home region.
	delivered, lost, moved int64
}

// delivery is an admission made in region from, to be counted in another
// at its own instant.
type delivery struct {
	due  int64
	at   algorithms.Time
	cost int64
	key  int32
	from int32
}

// setupRegions sets up a regions run.
func (s *sim) setupRegions() {
	tp := s.sc.Topology
	if tp.Kind != Regions {
		return
	}
	r := &regionsRun{lag: -1, inbound: make([][]delivery, len(tp.Regions)), head: make([]int, len(tp.Regions)), due: make([]int64, len(tp.Regions))}
	if tp.ReplicationLag >= 0 {
		r.lag = int64(algorithms.At(tp.ReplicationLag))
		r.charger, _ = algorithms.AsCharger(s.alg)
	}
	for _, reg := range tp.Regions {
		r.spreads = append(r.spreads, topology.Spreader{Balancer: s.sc.Balancer, Servers: reg.Servers})
	}
	for _, c := range s.clients {
		r.home = append(r.home, max(slices.IndexFunc(tp.Regions, func(reg Region) bool { return reg.Name == c.Region }), 0))
	}
	s.regions = r
	s.reach = newKeyServers(len(s.keys), len(tp.Regions))
}

// regionServer is the server that serves client's request: one of its
// home region's, by that region's balancer, or while that region is down
// the next region's that is up (all down: its home's, which fail).
func (s *sim) regionServer(client int, hash uint64) int {
	r := s.regions
	home := 0
	if client < len(r.home) {
		home = r.home[client]
	}
	region := home
	for i := range len(r.spreads) {
		if cand := (home + i) % len(r.spreads); !s.topo.RegionDown(cand) {
			region = cand
			break
		}
	}
	if region != home {
		r.moved++
	}
	first, _ := s.topo.RegionServers(region)
	return first + r.spreads[region].Pick(hash, s.draw.intn)
}

// replicateRegion sends an admission of cost on key at at, counted by
// region from's store, towards every other region, due a lag later.
func (s *sim) replicateRegion(from, key int, at algorithms.Time, t, cost int64) {
	r := s.regions
	s.reach.add(key, from)
	if r.lag < 0 {
		return
	}
	for to := range r.inbound {
		if to == from {
			continue
		}
		d := delivery{due: t + r.lag, at: at, cost: cost, key: int32(key), from: int32(from)}
		r.inbound[to] = append(r.inbound[to], d)
		if r.due[to] == 0 {
			r.due[to] = max(d.due, 1)
			s.schedule(event{at: r.due[to], kind: evRegionDelivery, arg: int32(to)})
		}
	}
}

// deliver counts in region to's store every admission due by t that can
// reach it, and loses those that cannot.
func (s *sim) deliver(to int, t int64) {
	r := s.regions
	r.due[to] = 0
	q := r.inbound[to]
	n := r.head[to]
	for n < len(q) && q[n].due <= t {
		d := q[n]
		n++
		if !s.topo.RegionsReach(int(d.from), to, algorithms.Time(t)) {
			r.lost++
			continue
		}
		r.delivered++
		r.charger.ChargeInPlace(s.stores.jars[to].state(int(d.key)), d.at, d.cost)
	}
	switch {
	case n == len(q):
		q, n = q[:0], 0
	case n > len(q)/2:
		q, n = append(q[:0], q[n:]...), 0
	}
	r.inbound[to], r.head[to] = q, n
	if n < len(q) {
		r.due[to] = q[n].due
		s.schedule(event{at: r.due[to], kind: evRegionDelivery, arg: int32(to)})
	}
}

// RegionsResult is what a regions run's replication did.
type RegionsResult struct {
	// Regions is how many there are.
	Regions int `json:"regions"`
	// ReplicationLagMs is -1 with no replication.
	ReplicationLagMs float64 `json:"replication_lag_ms"`
	Delivered        int64   `json:"delivered"`
	Lost             int64   `json:"lost"`
	// Moved are the requests served outside their client's region, its
	// own being down.
	Moved int64 `json:"moved"`
}

func (s *sim) regionsResult() *RegionsResult {
	r := s.regions
	if r == nil {
		return nil
	}
	out := &RegionsResult{Regions: len(r.inbound), ReplicationLagMs: -1, Delivered: r.delivered, Lost: r.lost, Moved: r.moved}
	if r.lag >= 0 {
		out.ReplicationLagMs = millis(r.lag)
	}
	return out
}

// regionsBoundOf is the most a key is admitted in any span of T across
// regions regions whose admissions reach each other lag later (never,
// for a negative lag): blindBound with lag as the unseen span.
func regionsBoundOf(alg algorithms.Algorithm, span, lag time.Duration, regions int) (int64, bool) {
	unseen := lag
	if lag < 0 {
		unseen = span
	}
	return blindBound(alg, span, unseen, regions)
}
