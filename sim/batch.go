package sim

// Batches: on a Redis store, one round trip per simulated request is what
// makes a run crawl. Requests that no earlier decision in the batch can
// have caused are decided together, in one pipeline, and everything else
// happens in the order a request-by-request run does it: the same random
// draws, the same sequence numbers' order, the same Result, byte for byte.
//
// Why that is exact: Redis runs a pipeline's scripts one after another, in
// order, each atomic, so two requests on one key are decided as they would
// be one by one. What a decision can cause is a retry, and a retry comes a
// round trip (the latency) after its request at the earliest; a client
// that never retries causes nothing. So a batch may hold every request up
// to the first instant a retry of one of its members could be due. A
// concurrency limit's lease is the other thing a decision causes: given
// back a round trip and a service time after its request, it too bounds
// the batch.

import (
	"context"
	"math"
	"slices"

	"github.com/ratelim/ratelim/route"
	"github.com/ratelim/ratelim/store"
	"github.com/ratelim/ratelim/topology"
)

// batchTaker is a store copy that decides several requests in one round
// trip (a Redis store: store/redisstore's).
type batchTaker interface {
	TakeBatch(ctx context.Context, reqs []store.TakeRequest, out []store.TakeResult)
}

// maxBatch bounds a batch: past a few hundred requests a pipeline saves
// nothing more, and a batch is memory held.
const maxBatch = 512

// batcher is the state of the batch being gathered.
type batcher struct {
	on      bool // every copy takes batches, and the topology allows them
	pending []pending
	reqs    [][]store.TakeRequest // per copy
	index   [][]int               // per copy: the pending each request is
	out     []store.TakeResult
	// decisions and errs are each pending's outcome, kept from batch to
	// batch.
	decisions []store.Decision
	errs      []error
}

// setupBatches turns batching on when it can change nothing but speed: the
// copies are Redis, and a decision touches one copy once (not the racy
// read-then-write, not a split brain's replication).
func (s *sim) setupBatches() {
	kind := s.topo.Kind()
	if kind != topology.Shared && kind != topology.Local {
		return
	}
	for _, c := range s.stores.copies {
		if _, ok := c.(batchTaker); !ok {
			return
		}
	}
	s.batch.on = true
	s.batch.reqs = make([][]store.TakeRequest, len(s.stores.copies))
	s.batch.index = make([][]int, len(s.stores.copies))
}

// batchable reports whether e can join a batch: a client's request, but
// not one that draws from the run's random source after its decision and
// before its stream's next arrival: a backoff retrier's jitter, or the
// service time of a request holding a lease when it is drawn.
func (s *sim) batchable(e event) bool {
	if e.kind != evArrival && e.kind != evRetry {
		return false
	}
	c := s.clients[e.client]
	if s.leases != nil && c.Service.Exponential && c.Service.Mean > 0 {
		return false
	}
	return c.Retry.Policy != RetryBackoff
}

// runBatch handles the events from the top of the queue that can be
// decided together, and leaves the clock at the last. The top must be
// batchable and due before the next step's end: it is always taken.
func (s *sim) runBatch(ctx context.Context, until int64) error {
	b := &s.batch
	b.pending = b.pending[:0]
	// horizon is the first instant a retry of a member could be due: a
	// request from then on may be one, or follow one.
	horizon := int64(math.MaxInt64)
	for len(b.pending) < maxBatch {
		top, src := s.peekEvent()
		if top.seq == noSeq {
			break // none left
		}
		e := *top
		if e.at > until || e.at >= horizon || !s.batchable(e) {
			break
		}
		if s.clock.stepEndBefore(e) {
			break // the step's end reads the store: it must see the batch decided
		}
		s.popEvent(src)
		s.clock.now = e.at
		cost, attempt := e.cost, int(e.arg)
		if e.kind == evArrival {
			attempt = 0
			if e.arg >= 0 {
				cost = s.clients[e.client].cost[e.arg]
			}
		}
		service := int64(-1)
		if e.kind == evArrival && e.arg >= 0 {
			service = s.clients[e.client].streams[e.arg].service()
		}
		b.pending = append(b.pending, pending{})
		p := &b.pending[len(b.pending)-1]
		if err := s.prepare(p, int(e.client), e.at, cost, attempt, service); err != nil {
			b.pending = b.pending[:len(b.pending)-1]
			return err
		}
		// Its lease's release and its retry order as if scheduled now,
		// in that order (conclude's), before what follows.
		if s.leases != nil {
			s.seq++
			p.releaseSeq = s.seq
		}
		s.seq++
		p.retrySeq = s.seq
		if s.clients[p.client].retries {
			horizon = min(horizon, p.t+p.latency)
		}
		if s.leases != nil {
			// Its lease comes back after its round trip and its service
			// time at the earliest, and a release may admit what follows.
			horizon = min(horizon, p.t+p.latency+s.leastServiceTime(p.client))
		}
		if e.kind == evArrival && e.arg >= 0 {
			s.scheduleArrival(int(e.client), int(e.arg))
		} else if e.kind == evArrival {
			if err := s.scheduleFeed(int(-1 - e.arg)); err != nil {
				return err
			}
		}
	}
	return s.decideBatch(ctx)
}

// decideBatch decides the gathered requests, one pipeline per copy, and
// finishes them in the order they were sent.
func (s *sim) decideBatch(ctx context.Context) error {
	b := &s.batch
	for i := range b.reqs {
		b.reqs[i], b.index[i] = b.reqs[i][:0], b.index[i][:0]
	}
	decisions := slices.Grow(b.decisions[:0], len(b.pending))[:len(b.pending)]
	errs := slices.Grow(b.errs[:0], len(b.pending))[:len(b.pending)]
	clear(errs)
	b.decisions, b.errs = decisions, errs
	for i := range b.pending {
		p := &b.pending[i]
		switch p.target {
		case topology.Unreachable:
			errs[i] = errStoreDown
			continue
		case breakerOpen:
			errs[i] = route.ErrBreakerOpen
			continue
		}
		b.reqs[p.target] = append(b.reqs[p.target], store.TakeRequest{Key: s.keys[p.key].name, Now: p.now, Cost: p.cost})
		b.index[p.target] = append(b.index[p.target], i)
	}
	for c, reqs := range b.reqs {
		if len(reqs) == 0 {
			continue
		}
		if cap(b.out) < len(reqs) {
			b.out = make([]store.TakeResult, maxBatch)
		}
		out := b.out[:len(reqs)]
		s.stores.copies[c].(batchTaker).TakeBatch(ctx, reqs, out)
		for j, r := range out {
			decisions[b.index[c][j]], errs[b.index[c][j]] = r.Decision, r.Err
		}
	}
	for i := range b.pending {
		if errs[i] != nil {
			if err := s.policyFor(&decisions[i], errs[i]); err != nil {
				return err
			}
		}
		o := &s.req
		o.p, o.d = b.pending[i], decisions[i]
		s.finish(o)
	}
	return nil
}
