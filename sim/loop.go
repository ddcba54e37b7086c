package sim

// The event loop: the run being set up, its clients and keys, and the
// queue of events handled in order. What one request does is
// request.go's and stages.go's.

import (
	"context"
	"errors"
	"fmt"
	"math"
	mrand "math/rand/v2"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/internal/words"
	"github.com/ratelim/ratelim/route"
	"github.com/ratelim/ratelim/store"
	"github.com/ratelim/ratelim/topology"
)

type clientRun struct {
	*Client     // the scenario's: a copy was 152 bytes more a client
	key     int // index into sim.keys
	streams []*stream
	// firstSource is its first stream's arrival source (sim.arrivals),
	// the others' following it.
	firstSource int
	cost        []int64 // per stream
	// givenServices says a stream gives its arrivals' service times
	// (Traffic.Services): a request may take less than Service.Mean.
	givenServices bool
	// hist are its latencies over the run, step over the step in
	// progress.
	hist, step histogram
	peaks      peakPair
	total      counts
	// retries and waitsRetryAfter are its Retry.Policy read once, not
	// compared as a string per rejected request.
	retries, waitsRetryAfter bool
	// rejectedBy counts its refusals by the limit that refused (the
	// Decision's Binding), on a key with several limits; nil otherwise.
	rejectedBy []int64
	// priority is its Priority, read once.
	priority algorithms.Priority
}

type keyRun struct {
	name    string
	clients int
	hash    uint64
	// slot is the key's hash slot (topology.HashSlot), on a cluster.
	slot int32
	// decided marks the copies that admitted a request of this key
	// themselves during a partition, where copies also take writes from
	// another (a split brain's by copy, a cluster shard's by its node in
	// the shard): only copies that both took writes while they could not
	// replicate to each other can be said to have counted apart.
	decided uint8
	ideal   algorithms.State
	peaks   peakPair
}

// sim is one run: its scenario and limiter, the clients and keys, the
// queue of events, and the state each part of the run owns, grouped by
// who owns it (the clock, the stores, the faults, the stages, the
// recording).
type sim struct {
	sc    Scenario
	alg   algorithms.Algorithm
	exact exactLimiter // what the run is measured against (recorder.go)
	rng   *mrand.Rand
	draw  draws
	// The events to come: each arrival source's next arrival (the
	// sources are the feeds, then each client's streams), and every
	// other event in queue.
	arrivals arrivalTree
	queue    eventQueue
	seq      uint64
	clock    runClock

	clients []*clientRun
	feeds   []*feedRun
	keys    []keyRun
	sent    sentCount

	// The store copies, how servers reach them, and the racy topology's
	// writes in flight (stores.go): topo routes each server to the copy
	// it reaches, under the faults in force; spread is the balancer.
	stores  storeSet
	racy    racyWrites
	synced  *syncedRun  // a synced run's pushes (synced.go), nil on another kind
	twoTier *twoTierRun // a two-tier run's local tiers (twotier.go)
	owner   *ownerRun   // an owner run's hits and broadcasts (owner.go)
	regions *regionsRun // a regions run's homes and replication (regions.go)
	// reach counts the servers each key reached, on the kinds whose
	// bound depends on it (synced, two-tier).
	reach  *keyServers
	topo   *topology.Topology
	route  *route.Copies // the way to a decision on the copies (a store's; the jars have their own)
	spread topology.Spreader
	faults faultState

	// stages are what a decided request passes through, in order
	// (stages.go): beforeRecord, the recorder, then afterRecord; shed and
	// leases are two of them, nil when the run has no load shedder or no
	// concurrency limit.
	stages                    []stage
	beforeRecord, afterRecord []stage
	shed                      *shedStage
	leases                    *leaseStage
	// decider is how the run's requests are decided (request.go); req
	// is the request being decided and concluded, one at a time.
	decider decider
	req     outcome
	// observed is set on a replay of what happened elsewhere, whose
	// store and shedder states were not seen.
	observed bool
	// askedKind is the topology the scenario named, when the run runs it
	// as another (Topology.RunsAs): what the Result says.
	askedKind TopologyKind

	rec   recording
	batch batcher
	log   []LogEntry
	snaps snapshots // what the previous Snapshot built (snapshot.go)
}

// runClock is the run's virtual time and the steps it is cut into.
type runClock struct {
	now      int64 // virtual time reached
	duration int64
	stepLen  int64
	nSteps   int
	// stepsClosed are the steps closed so far; step i's end event has
	// sequence number stepSeq0 + i.
	stepsClosed int
	stepEndAt   int64 // the next step's end, MaxInt64 when none is left
	stepEndSeq  uint64
	stepSeq0    uint64
	// lastStep is the step stepOf found last, and [lastFrom, lastTo) the
	// instants in it: nearly every request is in the step the one before
	// was, found without a division.
	lastStep         int
	lastFrom, lastTo int64
}

// sentCount is what the run has sent so far, and the most it may.
type sentCount struct {
	requests int64 // retries counted
	retries  int64
	budget   int64 // the most requests the run may send
}

// draws are the run's random source's draws, bound once.
type draws struct {
	intn   func(int) int     // rng.IntN
	int64n func(int64) int64 // rng.Int64N
}

func newSim(ctx context.Context, sc Scenario, opts Options) (*sim, error) {
	if err := sc.check(); err != nil {
		return nil, err
	}
	// A synced topology that syncs at every request runs as the shared
	// store, one that never does as the local jars: the same decisions
	// (the differential tests), on their faster ways. The Result still
	// says synced.
	asked := sc.Topology.Kind
	sc.Topology.Kind = sc.Topology.RunsAs()
	budget, err := checkSize(sc, opts)
	var coarsened string
	if errors.Is(err, ErrMemory) && opts.FitStep {
		model := newMemoryModel(sc, opts.StateOf)
		if step, ok := model.stepThatFits(memoryBound(opts)); ok {
			coarsened = fmt.Sprintf("the timeline's step is %s, not %s: at %s the run would need about %s of memory, more than %s (every total is the same at any step)",
				words.Duration(step), words.Duration(sc.Step), words.Duration(sc.Step), words.Bytes(model.at(sc.Step)), words.Bytes(memoryBound(opts)))
			sc.Step = step
			budget, err = checkSize(sc, opts)
		}
	}
	if err != nil {
		return nil, err
	}
	s, err := newRecording(ctx, sc, opts)
	if err != nil {
		return nil, err
	}
	s.askedKind = asked
	if coarsened != "" {
		s.logf(0, "%s", coarsened)
	}
	s.faults.jitter = opts.ClusterJitter
	if err := s.setupStores(ctx, opts.KeyPrefix); err != nil {
		s.close()
		return nil, err
	}
	s.sent.budget = budget
	s.logWrites()
	s.setupDecider(opts.Observe != nil)
	s.setupFaults()
	s.setupBatches()
	// The step ends are events like the others, in order, but kept out
	// of the heap: there are as many as steps, all known now, and in the
	// heap they would deepen every sift. Their sequence numbers are
	// reserved here, so that ties are broken exactly as if they were in.
	s.clock.stepSeq0 = s.seq + 1
	s.seq += uint64(s.steps())
	s.clock.nextStepEndAt()
	sources := len(s.sc.Feeds)
	for _, c := range s.clients {
		c.firstSource = sources
		sources += len(c.streams)
	}
	s.arrivals = newArrivalTree(sources)
	for ci, c := range s.clients {
		for si := range c.streams {
			s.scheduleArrival(ci, si)
		}
	}
	if err := s.openFeeds(); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// newRecording returns a sim with its clients, keys and recorder set up,
// but no store and no events: what a run and a replay of observed requests
// (a live load run) have in common; ctx's error once ctx is cancelled.
// The timeline has no row yet: rows are made as things happen.
func newRecording(ctx context.Context, sc Scenario, opts Options) (*sim, error) {
	alg, err := sc.NewAlgorithm()
	if err != nil {
		return nil, fmt.Errorf("limit.%w", err)
	}
	s := &sim{
		sc:     sc,
		alg:    alg,
		rng:    newRand(sc.Seed),
		clock:  runClock{duration: int64(algorithms.At(sc.Duration)), stepLen: int64(algorithms.At(sc.Step))},
		stores: storeSet{policy: sc.Topology.OnError},
		faults: faultState{rtt: int64(algorithms.At(sc.Topology.RTT))},
		rec:    recording{progress: opts.Progress, keepState: opts.StateOf},
	}
	if s.stores.policy == "" {
		s.stores.policy = store.FailOpen
	}
	if p := PeerOf(alg.Name()); p != nil && p.Clock == "store" {
		// The library reads its store's clock (a script calling Redis
		// TIME) whatever the scenario says: a skewed server does not
		// move its decisions, and the result says whose clock it was.
		s.sc.Topology.Clock = StoreClock
	}
	s.exact = newExactLimiter(alg)
	s.clock.nSteps = int((s.clock.duration + s.clock.stepLen - 1) / s.clock.stepLen)
	s.setupClients()
	if err := s.setupStages(opts.Observe); err != nil {
		return nil, fmt.Errorf("shedder: %w", err)
	}
	s.rec.timeline = newTimelineRows(len(s.clients))
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return s, nil
}

// idealFor is the exact limiter a run is measured against: the token bucket
// itself for the bucket algorithms (GCRA and the leaky bucket admit exactly
// as it does), and the sliding log of the same limit for the window
// algorithms, which approximate it. One atomic copy, no round trip, the
// true clock, no faults. The exact limiter enforces: a limit in shadow
// mode is measured against what it would have refused, so what it let
// through is a false allow. That holds for one limit (whose shadow mode
// the run applies after the step, see shadowOne) and for each of several,
// whose shadow flags the exact Multi therefore drops.
func idealFor(alg algorithms.Algorithm) algorithms.Algorithm {
	if _, ok := alg.(*algorithms.Concurrency); ok {
		return alg // exact already: one atomic copy is all it needs
	}
	if m, ok := alg.(*algorithms.Multi); ok {
		// Several limits: each one's exact limiter, decided together.
		ps := m.Policies()
		for i := range ps {
			ps[i].Algorithm = idealFor(ps[i].Algorithm)
			ps[i].Shadow, ps[i].ShadowUntil = false, 0
		}
		if ideal, err := algorithms.NewMulti(ps); err == nil {
			return ideal
		}
		return alg
	}
	p := alg.Params()
	var ideal algorithms.Algorithm
	var err error
	if p.Window > 0 {
		ideal, err = algorithms.NewSlidingLog(p.Rate, p.Window)
	} else {
		ideal, err = algorithms.NewTokenBucket(p.Rate, p.Burst)
	}
	if err != nil {
		return alg // the same parameters built alg, so this does not happen
	}
	return ideal
}

// steps is how many steps the run has: its duration in steps, the last
// one possibly short.
func (s *sim) steps() int { return s.clock.nSteps }

func (s *sim) setupClients() {
	index := map[string]int{}
	for i := range s.sc.Clients {
		c := &s.sc.Clients[i]
		name := KeyOf(*c, s.sc.Limit.Key)
		k, ok := index[name]
		if !ok {
			k = len(s.keys)
			index[name] = k
			k := keyRun{name: name, hash: topology.HashKey(name), peaks: newPeakPair()}
			if s.sc.Topology.Kind == Cluster {
				k.slot = int32(topology.HashSlot(name))
			}
			s.keys = append(s.keys, k)
		}
		s.keys[k].clients++
		cr := &clientRun{Client: c, key: k, peaks: newPeakPair(),
			retries: c.Retry.retries(), waitsRetryAfter: c.Retry.Policy == RetryAfter}
		if len(s.sc.Also) > 0 {
			cr.rejectedBy = make([]int64, 1+len(s.sc.Also))
		}
		cr.priority = algorithms.Normal
		if c.Priority != "" {
			cr.priority, _ = algorithms.ParsePriority(c.Priority) // check() vouched for it
		}
		for i, tr := range c.Traffic {
			cr.streams = append(cr.streams, newStream(&c.Traffic[i], s.clock.duration))
			cr.cost = append(cr.cost, max(tr.Cost, 1))
			cr.givenServices = cr.givenServices || len(tr.Services) > 0
		}
		s.clients = append(s.clients, cr)
	}
}

// KeyOf is the limiter key of c's requests when the limit keys by by: for
// auto, the API key, else the user, else the IP. A client without that
// identity is "(none)", as all such clients share one key.
func KeyOf(c Client, by KeyBy) string {
	switch by {
	case KeyAPIKey:
		return orAnonymous(c.APIKey)
	case KeyUser:
		return orAnonymous(c.User)
	case KeyIP:
		return orAnonymous(c.IP)
	}
	for _, id := range []string{c.APIKey, c.User, c.IP} {
		if id != "" {
			return id
		}
	}
	return orAnonymous(c.Name)
}

func orAnonymous(id string) string {
	if id == "" {
		return "(none)"
	}
	return id
}

func (s *sim) scheduleArrival(client, streamIndex int) {
	c := s.clients[client]
	at, ok := c.streams[streamIndex].next(s.rng)
	if !ok {
		return
	}
	s.seq++
	s.arrivals.set(c.firstSource+streamIndex, event{at: at, seq: s.seq, kind: evArrival, client: int32(client), arg: int32(streamIndex)})
}

// peekEvent is the earliest event to come, the earliest arrival or the
// queue's top, and its arrival source (-1 when it is not an arrival);
// noArrival when none is left, which comes after every event and every
// step's end.
func (s *sim) peekEvent() (*event, int) {
	top, src := s.arrivals.top()
	if q := s.queue.items; len(q) > 0 && earlier(&q[0], top) {
		return &q[0], -1
	}
	return top, src
}

// popEvent removes the event peekEvent gave, of arrival source src.
func (s *sim) popEvent(src int) {
	if src >= 0 {
		s.arrivals.set(src, noArrival)
		return
	}
	s.queue.pop()
}

func (s *sim) schedule(e event) {
	s.seq++
	e.seq = s.seq
	s.queue.push(e)
}

// checkEvery is how much work runUntil does between two looks at its
// context, in units of about one simulated request each: a look costs
// tens of nanoseconds, and 4,096 units take a few milliseconds in memory.
const checkEvery = 4096

// runUntil processes the events due by until, in order, and leaves the
// clock there. It stops with ctx's error once ctx is cancelled, within
// checkEvery units of work: a request sent (a batch's each), an event, and
// a step's end as many as the clients and the key states it closes. A
// count of events alone let a run of 100,000 clients close 4,096 steps,
// 400 million rows, between two looks.
func (s *sim) runUntil(ctx context.Context, until int64) error {
	for work := checkEvery; ; work++ {
		if work >= checkEvery {
			if err := ctx.Err(); err != nil {
				return err
			}
			work = 0
		}
		// The next step's end, or the earliest event: whichever comes
		// first by (time, sequence number). When none is left, top is
		// noArrival, after the last step's end.
		top, src := s.peekEvent()
		if s.clock.stepEndAt < top.at || (s.clock.stepEndAt == top.at && s.clock.stepEndSeq < top.seq) {
			if s.clock.stepEndAt > until {
				break // none left by until (none at all: MaxInt64)
			}
			s.clock.now = s.clock.stepEndAt
			s.endStep(ctx, s.clock.stepsClosed, s.clock.stepEndAt)
			s.clock.stepsClosed++
			s.clock.nextStepEndAt()
			work += s.stepWork()
			if n := s.quietSteps(top, until); n >= quietStretch {
				// The steps up to the next event: closed together (quiet.go).
				work += s.closeQuietSteps(ctx, s.clock.stepsClosed, s.clock.stepsClosed+n-1)
				s.clock.stepsClosed += n
				s.clock.now = min(int64(s.clock.stepsClosed)*s.clock.stepLen, s.clock.duration)
				s.clock.nextStepEndAt()
			}
			continue
		}
		e := *top
		if e.at > until {
			break
		}
		s.clock.now = e.at
		var err error
		if s.batch.on && s.batchable(e) {
			sent := s.sent.requests
			err = s.runBatch(ctx, until)
			work += int(s.sent.requests - sent)
		} else if src >= 0 {
			err = s.arrive(ctx, e, src)
		} else {
			s.queue.pop()
			err = s.handle(ctx, e)
		}
		if err != nil {
			return err
		}
	}
	s.clock.now = max(s.clock.now, until)
	return nil
}

// stepWork is the work of closing a step, in runUntil's units: a row per
// client, and the states the last step's end read (a pair reached each).
func (s *sim) stepWork() int { return len(s.clients) + s.rec.sample.lastLoads }

// nextStepEndAt sets stepEndAt and stepEndSeq to the end of the next step
// to close, or stepEndAt to MaxInt64 when none is left.
func (c *runClock) nextStepEndAt() {
	i := c.stepsClosed
	if i >= c.nSteps {
		c.stepEndAt = math.MaxInt64
		return
	}
	c.stepEndAt, c.stepEndSeq = min(int64(i+1)*c.stepLen, c.duration), c.stepSeq0+uint64(i)
}

// stepEndBefore reports whether the next step's end comes before e.
func (c *runClock) stepEndBefore(e event) bool {
	return c.stepEndAt < e.at || (c.stepEndAt == e.at && c.stepEndSeq < e.seq)
}

// arrive handles e, the earliest event, an arrival (a client's first
// try) from source src, and puts the source's next arrival in its place:
// the commonest event costs one pass up the arrivals' tree. Whatever the
// request schedules comes after it (at its time or later, with a later
// sequence number), in the queue.
func (s *sim) arrive(ctx context.Context, e event, src int) error {
	c := s.clients[e.client]
	cost, service := e.cost, int64(-1)
	if e.arg >= 0 {
		cost = c.cost[e.arg]
		if c.givenServices { // else no stream of it gives any
			service = c.streams[e.arg].service()
		}
	}
	if err := s.request(ctx, int(e.client), e.at, cost, 0, service); err != nil {
		return err
	}
	if q := &s.queue; q.len() > 0 && earlier(&q.items[0], &e) {
		top := &q.items[0]
		panic(fmt.Sprintf("sim: an event was scheduled before the one being handled (seq %d at %d µs, before seq %d at %d µs)", top.seq, top.at, e.seq, e.at))
	}
	if e.arg < 0 {
		next, ok, err := s.feeds[-1-e.arg].next(int(-1-e.arg), s.clock.duration)
		if !ok {
			s.arrivals.set(src, noArrival)
			return err
		}
		s.seq++
		next.seq = s.seq
		s.arrivals.set(src, next)
		return nil
	}
	at, ok := c.streams[e.arg].next(s.rng)
	if !ok {
		s.arrivals.set(src, noArrival)
		return nil
	}
	s.seq++
	s.arrivals.set(src, event{at: at, seq: s.seq, kind: evArrival, client: e.client, arg: e.arg})
	return nil
}

// handle handles every event but an arrival (arrive's).
func (s *sim) handle(ctx context.Context, e event) error {
	switch e.kind {
	case evRetry:
		return s.request(ctx, int(e.client), e.at, e.cost, int(e.arg), -1)
	case evWrite:
		p := s.racy.writes.take(e.arg)
		if s.route.Writes == route.CompareAndSwap {
			return s.swap(ctx, p, s.takeCASWait(e.arg), e.at)
		}
		if err := p.Write(ctx); err != nil && !errors.Is(err, errStoreDown) {
			return err
		}
	case evLog:
		s.logf(e.at, "%s", s.faults.notes[e.arg])
	case evRelease:
		return s.release(ctx, e.arg, e.at)
	case evCluster:
		return s.clusterEvent(ctx, e.arg, e.at)
	case evSync:
		s.push(int(e.arg), e.at)
	case evOwnerHits:
		s.sendHits(int(e.arg), e.at)
	case evOwnerBroadcast:
		s.broadcast(int(e.arg), e.at)
	case evRegionDelivery:
		s.deliver(int(e.arg), e.at)
	case evFaultStart:
		return s.faultStart(ctx, int(e.arg), e.at)
	case evFaultEnd:
		return s.faultEnd(ctx, s.sc.Faults[e.arg], e.at)
	}
	return nil
}
