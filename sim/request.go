package sim

// A request's way to its decision: the balancer picks its server, the
// server reads its clock, the topology routes it to a copy of the state,
// and the run's decider (picked once, by topology and store) asks that
// copy. What follows the decision is the stages' (stages.go).

import (
	"context"
	"fmt"
	"slices"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/route"
	"github.com/ratelim/ratelim/store"
	"github.com/ratelim/ratelim/topology"
)

func (s *sim) request(ctx context.Context, client int, t int64, cost int64, attempt int, service int64) error {
	// The request is filled in where it lies, the run's one outcome in
	// the making (sim.req): it is copied nowhere on the way (the
	// commonest path of a run), and the decider and the stages, called
	// through a func and an interface, take it without its escaping to
	// the heap once per request.
	o := &s.req
	if err := s.prepare(&o.p, client, t, cost, attempt, service); err != nil {
		return err
	}
	o.d = store.Decision{}
	// A copy the topology cannot reach decides by the fail policy; any
	// other, by the run's decider (called here, not through a function
	// between: 15 of a simulated request's instructions).
	var err error
	switch {
	case s.twoTier != nil && s.localRefuses(&o.p, &o.d):
		// The server's local tier answered at once.
	case o.p.target == topology.Unreachable:
		err = s.policyFor(&o.d, errStoreDown)
	case o.p.target == topology.ClusterDown:
		err = s.policyFor(&o.d, route.ErrClusterDown)
	case o.p.target == breakerOpen:
		err = s.policyFor(&o.d, route.ErrBreakerOpen)
	default:
		err = s.decider(s, ctx, &o.p, &o.d)
		if s.stores.replicates && o.d.Allowed && s.topo.Partitioned() {
			s.markDecided(o.p.key, o.p.target, o.p.t)
		}
	}
	if err != nil {
		return err
	}
	if s.stores.cluster != nil {
		s.countCluster(&o.p, o.d.Allowed)
	}
	if s.regions != nil && o.d.Allowed && o.p.target >= 0 {
		s.replicateRegion(o.p.target, o.p.key, o.p.now, o.p.t, o.p.cost)
	}
	if !o.p.deferred {
		s.finish(o)
	}
	return nil
}

// pending is a request on its way to a decision: who sent it, when, and
// where it goes.
type pending struct {
	client  int
	t       int64 // true time
	cost    int64
	attempt int
	key     int             // index into sim.keys
	now     algorithms.Time // the clock the decision is made on
	target  int             // the copy it reaches, or topology.Unreachable
	latency int64           // the round trip, before any queueing delay
	seq     uint64          // the run's request count when it was sent
	// service is how long it takes to serve if admitted, in µs: its
	// stream's given one (Traffic.Services), or -1 to draw from the
	// client's Service.
	service int64
	// retrySeq, when not 0, is the sequence number reserved for its retry:
	// a batch decides after scheduling later events, and the retry must
	// still order as if it had been scheduled first.
	retrySeq uint64
	// releaseSeq, when not 0, is the sequence number reserved for the
	// release of its lease, for the same reason: the release orders
	// before its retry and before its stream's next arrival, as when the
	// request is decided alone.
	releaseSeq uint64
	server     int  // the API server the balancer chose
	deferred   bool // decided later, when its compare-and-swap lands
}

// prepare is what happens to a request before the store sees it: the
// balancer picks its server, the server reads its clock, the topology says
// which copy it reaches, and the run's request budget is charged. service
// is pending.service. Every field of p is written, one by one: a
// composite literal was built aside and copied over p, 55 of a simulated
// request's 985 instructions. A field added to pending is written here.
func (s *sim) prepare(p *pending, client int, t int64, cost int64, attempt int, service int64) error {
	c := s.clients[client]
	var server int
	if s.regions != nil {
		server = s.regionServer(client, s.keys[c.key].hash)
	} else {
		server = s.spread.Pick(s.keys[c.key].hash, s.draw.intn)
	}
	if s.faults.down != nil {
		server = s.routeAround(server)
	}
	now := s.decisionClock(server, t)
	s.sent.requests++
	if attempt > 0 {
		s.sent.retries++
	}
	if s.sent.budget > 0 && s.sent.requests > s.sent.budget {
		return budgetSpent(s.sc.Name, s.sent.requests-1, s.sent.retries, s.sent.budget)
	}
	p.client, p.t, p.cost, p.attempt, p.key, p.now = client, t, cost, attempt, c.key, now
	p.target, p.server = s.topo.RouteSlot(server, int(s.keys[c.key].slot), algorithms.Time(t)), server
	p.seq, p.service = uint64(s.sent.requests), service
	p.latency, p.retrySeq, p.releaseSeq, p.deferred = 0, 0, 0, false
	if s.topo.Remote() {
		p.latency = s.storeLatency(p.target)
	}
	if s.stores.breakers != nil {
		s.throughBreaker(p)
	}
	return nil
}

// breakerOpen is the copy of a request its server's open circuit breaker
// failed at once: it reaches no store, and waits for none.
const breakerOpen = -3

// breakerResult sums what the servers' breakers did, for a Result.
func (s *sim) breakerResult() *BreakerResult {
	b := s.sc.Topology.Breaker
	if b == nil || s.stores.breakers == nil {
		return nil
	}
	out := &BreakerResult{Failures: b.Failures, CooldownS: b.Cooldown.Seconds()}
	for _, br := range s.stores.breakers {
		out.Opened += br.Opened
		out.ShortCircuited += br.ShortCircuited
	}
	return out
}

// throughBreaker passes request p through its server's circuit breaker:
// failed at once while it is open; else sent, its outcome (a store that
// did not decide) known after its latency.
func (s *sim) throughBreaker(p *pending) {
	b := &s.stores.breakers[p.server]
	at := algorithms.Time(p.t)
	if !b.Allow(at) {
		p.target, p.latency = breakerOpen, 0
		return
	}
	b.Done(at, at+algorithms.Time(p.latency), p.target < 0)
}

// storeLatency is how long a request's way to the store takes: a round
// trip to a copy; the server's timeout (when it has one) for a store that
// never answers; for a cluster that answers CLUSTERDOWN, the client's
// retries (go-redis: 4 attempts, backoffs of 10–30, 10–50 and 10–90 ms,
// osscluster.go, ClusterClient.process), up to the timeout.
func (s *sim) storeLatency(target int) int64 {
	timeout := s.sc.Topology.Timeout.Microseconds()
	switch {
	case target == topology.Unreachable && timeout > 0:
		return timeout
	case target == topology.ClusterDown:
		return int64(route.ClusterDownWait(algorithms.Time(s.rtt()), algorithms.Time(timeout), s.rng.Int64N))
	}
	return s.rtt()
}

// copyInShard is a copy's place among those that follow one another: its
// node in its cluster shard, or the copy itself on a split brain.
func (s *sim) copyInShard(copy int) int {
	if s.sc.Topology.Kind == Cluster {
		return copy % (1 + s.sc.Topology.Replicas)
	}
	return copy
}

// decider asks the copy a request reaches for its decision, into d: the
// run's way of deciding, picked once at setup (setupDecider) by topology
// and store, never per request. A store that is down answers with the
// fail policy's decision (policyFor). d arrives zeroed (request). It is
// a method expression, called with the simulator: a method value
// (s.takeFromJar) is called through a wrapper that cost a whole-decision
// request 20 ns (x-time-rate's peer benchmark, 165 against 145 ns).
type decider func(s *sim, ctx context.Context, p *pending, d *store.Decision) error

// setupDecider picks the run's decider: on the racy topology, a read
// whose write lands a round trip later, or whose compare-and-swap does,
// unless the algorithm writes atomically (route.Writes); a take from the
// run's own memory (every decision whole when observed, since whoever
// observes a run reads them whole; the verdict alone, by Admit, when no
// client reads more); or a take on route's way, as the live
// fleet's servers take it, from a store, racing none, replicated on a
// split brain.
func (s *sim) setupDecider(observed bool) {
	switch {
	case s.synced != nil:
		s.decider = (*sim).takeSynced
	case s.owner != nil:
		s.decider = (*sim).takeOwner
	case s.route.Racy() && s.route.Writes == route.CompareAndSwap:
		s.decider = (*sim).readThenSwap
	case s.route.Racy():
		s.decider = (*sim).readThenWrite
	case s.stores.jars != nil && s.sc.Topology.Kind != Racy && observed:
		s.decider = (*sim).takeWholeFromJar
	case s.stores.jars != nil && s.sc.Topology.Kind != Racy && s.stores.jars[0].step.admit != nil &&
		!slices.ContainsFunc(s.clients, func(c *clientRun) bool { return c.waitsRetryAfter }):
		s.decider = (*sim).admitOnJar
	case s.stores.jars != nil && s.sc.Topology.Kind != Racy:
		s.decider = (*sim).takeFromJar
	default:
		s.decider = (*sim).takeOnRoute
	}
}

// readThenWrite decides on a racy read; its write lands a round trip
// later, over whatever another server wrote meanwhile.
func (s *sim) readThenWrite(ctx context.Context, p *pending, d *store.Decision) error {
	w, err := s.route.Read(ctx, p.target, s.keys[p.key].name, p.now, p.cost)
	if err != nil {
		return s.policyFor(d, err)
	}
	*d = store.Decision{Decision: w.Decision}
	s.scheduleWrite(w, p.t+p.latency)
	return nil
}

// readThenSwap decides on a racy read whose write is a compare-and-swap
// (cas.go): an admission is decided only when its swap lands; a refusal
// swaps nothing and is decided now.
func (s *sim) readThenSwap(ctx context.Context, p *pending, d *store.Decision) error {
	w, err := s.route.Read(ctx, p.target, s.keys[p.key].name, p.now, p.cost)
	if err != nil {
		return s.policyFor(d, err)
	}
	*d = store.Decision{Decision: w.Decision}
	if w.Decision.Allowed {
		p.deferred = true
		s.scheduleCAS(w, *p, 1, p.t+p.latency)
	}
	return nil
}

// takeFromJar decides in the run's own memory, the whole decision only
// for a client that reads more than its verdict (one that waits what
// Retry-After says).
func (s *sim) takeFromJar(ctx context.Context, p *pending, d *store.Decision) error {
	s.stores.jars[p.target].takeInto(&d.Decision, p.key, p.now, p.cost, s.clients[p.client].waitsRetryAfter)
	if d.Allowed && s.stores.replicates && s.topo.ReplicatesFrom(p.target) {
		return s.replicate(ctx, p.target, p.key, p.t)
	}
	return nil
}

// admitOnJar is takeFromJar for a run that reads its decisions for their
// verdict alone (no client waits what Retry-After says, no one observes
// the run), on an algorithm that gives it alone (stepper.admit): the
// jar's state is stepped by Admit with nothing between, which took a
// simulated request 55 instructions through takeInto.
func (s *sim) admitOnJar(ctx context.Context, p *pending, d *store.Decision) error {
	j := s.stores.jars[p.target]
	d.Allowed = j.step.admit.Admit(j.state(p.key), p.now, p.cost)
	if d.Allowed && s.stores.replicates && s.topo.ReplicatesFrom(p.target) {
		return s.replicate(ctx, p.target, p.key, p.t)
	}
	return nil
}

// takeWholeFromJar is takeFromJar giving every decision whole.
func (s *sim) takeWholeFromJar(ctx context.Context, p *pending, d *store.Decision) error {
	s.stores.jars[p.target].takeInto(&d.Decision, p.key, p.now, p.cost, true)
	if d.Allowed && s.stores.replicates && s.topo.ReplicatesFrom(p.target) {
		return s.replicate(ctx, p.target, p.key, p.t)
	}
	return nil
}

// takeOnRoute decides on a store's copy (Redis), or on the racy
// topology for an algorithm that writes atomically (which cannot race, and
// decides as on the shared topology), the way the live fleet's servers
// do (route.Copies.Take), replicated on a split brain.
func (s *sim) takeOnRoute(ctx context.Context, p *pending, d *store.Decision) error {
	var err error
	if *d, err = s.route.Take(ctx, p.target, s.keys[p.key].name, p.now, algorithms.Time(p.t), p.cost); err != nil {
		return s.policyFor(d, err)
	}
	return nil
}

// policyFor is what to do when the store could not decide: d becomes what
// the fail policy says when the store is down; any other error ends the
// run.
func (s *sim) policyFor(d *store.Decision, err error) error {
	if !route.StoreDown(err) {
		return fmt.Errorf("sim: the %s store failed: %w", store.Redacted(s.sc.Topology.Store), err)
	}
	*d = s.stores.policy.Decide(err)
	return nil
}

// finish is what follows a decision taken as the request reached the
// store: the stages (conclude), the decision taken at the instant the
// request was sent, after its round trip.
func (s *sim) finish(o *outcome) { s.conclude(o, o.p.t, o.p.latency) }
