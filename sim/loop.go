package sim

// The event loop: the clients, their keys, the queue of events, and what
// one request does.

import (
	"context"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/store"
	"github.com/ratelim/ratelim/topology"
)

type clientRun struct {
	Client
	key       int // index into sim.keys
	streams   []*stream
	cost      []int64 // per stream
	hist      *histogram
	step      *histogram
	peak      peakWindow
	idealPeak peakWindow
	total     counts
}

type keyRun struct {
	name      string
	clients   int
	hash      uint64
	ideal     algorithms.State
	peak      peakWindow
	idealPeak peakWindow
}

type sim struct {
	sc    Scenario
	alg   algorithms.Algorithm
	ideal algorithms.Algorithm
	// idealInPlace is ideal when it can step the recorder's own state in
	// place (a sliding log): asked once here, not per request.
	idealInPlace inPlaceStepper
	rng          *mrand.Rand
	queue        eventQueue
	seq          uint64
	duration     int64
	stepLen      int64
	clients      []*clientRun
	keys         []keyRun
	requests     int64 // sent so far, retries counted
	retries      int64
	budget       int64 // the most requests the run may send

	// The store copies and how servers reach them.
	now       int64 // virtual time reached
	copies    []copyStore
	copyNames []string
	closers   []func() error
	racy      []*store.Racy // per copy, racy topology only
	pending   []store.Pending
	freeSlots []int32
	policy    store.Policy
	// topo routes each server to the copy it reaches, under the faults in
	// force; spread is the balancer.
	topo   *topology.Topology
	spread topology.Spreader
	intn   func(int) int     // rng.IntN, bound once
	int64n func(int64) int64 // rng.Int64N, bound once
	save   topology.SaveFunc

	// Fault state, changed by fault events.
	latency int64 // RTT during a latency fault, -1 when none
	skews   []skew
	// timeline is the Result's timeline itself, steps × clients rows,
	// written as requests are recorded: a run keeps one copy of it, not a
	// recorder's and then the Result's.
	timeline []TimelineRow
	// stepsEnded are the steps closed so far; step i's end event has
	// sequence number stepSeq0 + i.
	stepsEnded   int
	stepSeq0     uint64
	nSteps       int
	stateSeries  []StateSeries
	progress     func(done, total time.Duration)
	observe      func(Observation)
	faultResults []FaultSpan
	log          []LogEntry
	notes        []string // texts of scheduled log entries
}

func newSim(ctx context.Context, sc Scenario, opts Options) (*sim, error) {
	if err := sc.check(); err != nil {
		return nil, err
	}
	budget, err := checkSize(sc, opts)
	if err != nil {
		return nil, err
	}
	s, err := newRecording(sc, opts)
	if err != nil {
		return nil, err
	}
	if err := s.setupStores(ctx, opts.KeyPrefix); err != nil {
		s.close()
		return nil, err
	}
	s.budget = budget
	s.setupFaults()
	// The step ends are events like the others, in order, but kept out
	// of the heap: there are as many as steps, all known now, and in the
	// heap they would deepen every sift. Their sequence numbers are
	// reserved here, so that ties are broken exactly as if they were in.
	s.stepSeq0 = s.seq + 1
	s.seq += uint64(s.steps())
	for ci, c := range s.clients {
		for si := range c.streams {
			s.scheduleArrival(ci, si)
		}
	}
	return s, nil
}

// newRecording returns a sim with its clients, keys and recorder set up,
// but no store and no events: what a run and a replay of observed requests
// (a live load run) have in common.
func newRecording(sc Scenario, opts Options) (*sim, error) {
	alg, err := algorithms.New(sc.Limit.Algorithm, sc.Limit.Params)
	if err != nil {
		return nil, fmt.Errorf("limit.%w", err)
	}
	s := &sim{
		sc:       sc,
		alg:      alg,
		ideal:    idealFor(alg),
		rng:      newRand(sc.Seed),
		duration: int64(algorithms.At(sc.Duration)),
		stepLen:  int64(algorithms.At(sc.Step)),
		latency:  -1,
		policy:   sc.Topology.OnError,
		progress: opts.Progress,
		observe:  opts.Observe,
	}
	if s.policy == "" {
		s.policy = store.FailOpen
	}
	s.idealInPlace, _ = s.ideal.(inPlaceStepper)
	s.nSteps = int((s.duration + s.stepLen - 1) / s.stepLen)
	s.setupClients()
	steps := s.steps()
	s.timeline = make([]TimelineRow, steps*len(s.clients))
	for st := range steps {
		ts := seconds(int64(st) * s.stepLen)
		for ci, c := range s.clients {
			s.timeline[st*len(s.clients)+ci].TS, s.timeline[st*len(s.clients)+ci].Client = ts, c.Name
		}
	}
	return s, nil
}

// idealFor is the exact limiter a run is measured against: the token bucket
// itself for the bucket algorithms (GCRA and the leaky bucket admit exactly
// as it does), and the sliding log of the same limit for the window
// algorithms, which approximate it. One atomic copy, no round trip, the
// true clock, no faults.
func idealFor(alg algorithms.Algorithm) algorithms.Algorithm {
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
func (s *sim) steps() int { return s.nSteps }

func (s *sim) setupClients() {
	index := map[string]int{}
	for _, c := range s.sc.Clients {
		name := KeyOf(c, s.sc.Limit.Key)
		k, ok := index[name]
		if !ok {
			k = len(s.keys)
			index[name] = k
			s.keys = append(s.keys, keyRun{name: name, hash: topology.HashKey(name), peak: peakWindow{w: 1_000_000}, idealPeak: peakWindow{w: 1_000_000}})
		}
		s.keys[k].clients++
		cr := &clientRun{Client: c, key: k, hist: newHistogram(), step: newHistogram(), peak: peakWindow{w: 1_000_000}, idealPeak: peakWindow{w: 1_000_000}}
		for _, tr := range c.Traffic {
			cr.streams = append(cr.streams, newStream(tr, s.duration))
			cr.cost = append(cr.cost, max(tr.Cost, 1))
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
	at, ok := s.clients[client].streams[streamIndex].next(s.rng)
	if !ok {
		return
	}
	s.schedule(event{at: at, kind: evArrival, client: int32(client), arg: int32(streamIndex)})
}

func (s *sim) schedule(e event) {
	s.seq++
	e.seq = s.seq
	s.queue.push(e)
}

// runUntil processes the events due by until, in order, and leaves the
// clock there.
func (s *sim) runUntil(ctx context.Context, until int64) error {
	for n := 0; ; n++ {
		if n&4095 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		stepEnd, more := s.nextStepEnd()
		if s.queue.len() == 0 || (more && stepEnd.before(s.queue.peek())) {
			if !more || stepEnd.at > until {
				break
			}
			s.now = stepEnd.at
			s.stepsEnded++
			s.endStep(ctx, int(stepEnd.arg), stepEnd.at)
			continue
		}
		e := s.queue.peek()
		if e.at > until {
			break
		}
		s.now = e.at
		var err error
		if e.kind == evArrival {
			err = s.arrive(ctx, e)
		} else {
			s.queue.pop()
			err = s.handle(ctx, e)
		}
		if err != nil {
			return err
		}
	}
	s.now = max(s.now, until)
	return nil
}

// nextStepEnd is the event of the next step to end, if any is left.
func (s *sim) nextStepEnd() (event, bool) {
	i := s.stepsEnded
	if i >= s.steps() {
		return event{}, false
	}
	return event{at: min(int64(i+1)*s.stepLen, s.duration), seq: s.stepSeq0 + uint64(i), kind: evStepEnd, arg: int32(i)}, true
}

// arrive handles the arrival at the top of the queue, a client's first
// try, and puts its stream's next arrival in its place: the commonest
// event costs one sift of the heap, not a pop and a push. Whatever the
// request schedules comes after it (at its time or later, with a later
// sequence number), so it is still the top when it is replaced.
func (s *sim) arrive(ctx context.Context, e event) error {
	c := s.clients[e.client]
	if err := s.request(ctx, int(e.client), e.at, c.cost[e.arg], 0); err != nil {
		return err
	}
	if top := s.queue.peek(); top.seq != e.seq {
		panic(fmt.Sprintf("sim: an event was scheduled before the one being handled (seq %d at %d µs, before seq %d at %d µs)", top.seq, top.at, e.seq, e.at))
	}
	at, ok := c.streams[e.arg].next(s.rng)
	if !ok {
		s.queue.pop()
		return nil
	}
	s.seq++
	s.queue.replaceTop(event{at: at, seq: s.seq, kind: evArrival, client: e.client, arg: e.arg})
	return nil
}

// handle handles every event but an arrival (arrive's).
func (s *sim) handle(ctx context.Context, e event) error {
	switch e.kind {
	case evRetry:
		return s.request(ctx, int(e.client), e.at, e.cost, int(e.arg))
	case evWrite:
		p := s.pending[e.arg]
		s.pending[e.arg] = store.Pending{}
		s.freeSlots = append(s.freeSlots, e.arg)
		if err := p.Write(ctx); err != nil && !errors.Is(err, errStoreDown) {
			return err
		}
	case evLog:
		s.logf(e.at, "%s", s.notes[e.arg])
	case evFaultStart:
		return s.faultStart(ctx, s.sc.Faults[e.arg], e.at)
	case evFaultEnd:
		return s.faultEnd(ctx, s.sc.Faults[e.arg], e.at)
	}
	return nil
}

func (s *sim) request(ctx context.Context, client int, t int64, cost int64, attempt int) error {
	c := s.clients[client]
	key := s.keys[c.key].name
	server := s.spread.Pick(s.keys[c.key].hash, s.intn)
	now := algorithms.Time(s.serverClock(server, t))
	if s.sc.Topology.Clock == StoreClock {
		// The store decides on its own clock, which is right; the
		// server's skew does not reach the decision.
		now = algorithms.Time(t)
	}
	s.requests++
	if attempt > 0 {
		s.retries++
	}
	if s.budget > 0 && s.requests > s.budget {
		return budgetSpent(s.sc.Name, s.requests-1, s.retries, s.budget)
	}
	var d store.Decision
	var err error
	latency := int64(0)
	target := s.topo.Route(server, algorithms.Time(t))
	if s.topo.Remote() {
		latency = s.rtt()
	}
	switch {
	case target == topology.Unreachable:
		err = errStoreDown
	case s.sc.Topology.Kind == Racy:
		var p store.Pending
		p, err = s.racy[target].Read(ctx, key, now, cost)
		if err == nil {
			d = store.Decision{Decision: p.Decision}
			s.scheduleWrite(p, t+latency)
		}
	default:
		d, err = s.copies[target].Take(ctx, key, now, cost)
		if err == nil && target == 0 && d.Allowed && s.topo.Replicates() {
			if err := s.replicate(ctx, c.key, t); err != nil {
				return err
			}
		}
	}
	if err != nil {
		if !errors.Is(err, errStoreDown) {
			return fmt.Errorf("sim: the %s store failed: %w", s.sc.Topology.Store, err)
		}
		d = s.policy.Decide(err)
	}
	latency += int64(algorithms.At(d.Delay))
	s.record(client, t, cost, attempt, d, latency)
	if s.observe != nil {
		s.observe(Observation{Client: client, At: algorithms.Time(t).Duration(), Cost: cost, Attempt: attempt, Decision: d, Latency: algorithms.Time(latency).Duration(), Seq: uint64(s.requests)})
	}
	if !d.Allowed && d.Policy == "" {
		s.scheduleRetry(client, t+latency, cost, attempt, d)
	}
	return nil
}

func (s *sim) scheduleRetry(client int, at int64, cost int64, attempt int, d store.Decision) {
	r := s.clients[client].Retry
	if r.Policy == RetryNone || r.Policy == "" {
		return // gives up: Wait would say so, after its bookkeeping
	}
	wait, again := r.Wait(attempt, d.RetryAfter, s.int64n)
	if !again {
		return
	}
	s.schedule(event{at: at + int64(algorithms.At(wait)), kind: evRetry, client: int32(client), arg: int32(attempt + 1), cost: cost})
}
