// Package sim is ratelim's discrete-event simulator: clients send requests
// through a balancer to API servers, each server asks its view of the store
// for a decision, faults happen on a schedule, and a recorder writes down
// what every client experienced.
//
// Time is virtual, in microseconds from 0, and advances from one event to
// the next: nothing sleeps, and thirty simulated seconds take milliseconds.
// Events are ordered by (time, sequence number), and every random draw comes
// from one math/rand/v2 source seeded from the scenario, so the same
// scenario and seed give the same Result, byte for byte.
package sim

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	mrand "math/rand/v2"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/store"
)

// Options tune a run without changing its scenario.
type Options struct {
	// MaxRequests refuses, before it starts, a run estimated to send more
	// requests, and stops one that sends more, retries counted; 0 means
	// DefaultMaxRequests.
	MaxRequests int64
	// MaxMemory refuses, before it starts, a run estimated to need more
	// bytes (MemoryEstimate); 0 means DefaultMaxMemory.
	MaxMemory int64
	// Progress, if set, is called at the end of every step with the
	// virtual time reached and the scenario's duration.
	Progress func(done, total time.Duration)
	// Observe, if set, is called with every request the run decides, in
	// time order: what a live run records, so the two can be compared.
	Observe func(Observation)
	// KeyPrefix is the prefix of every key this run writes to a Redis
	// store; empty means a random one. Each copy of the state (a server's
	// jar, a replica) gets its own prefix under it.
	KeyPrefix string
}

// errStoreDown is what a server sees from a store that is out, or that a
// partition has cut it off from.
var errStoreDown = errors.New("store unreachable")

// copyStore is one copy of the limiter state: a jar, the shared store, a
// primary or a replica. Both store.Memory and store.Redis are one.
type copyStore interface {
	store.Limiter
	store.KV
}

// SetupError is a run refused before it started: a scenario the simulator
// cannot run, a request budget exceeded, a store that does not answer. The
// user can act on it; a command exits with its bad-input code.
type SetupError struct{ Err error }

func (e *SetupError) Error() string { return e.Err.Error() }
func (e *SetupError) Unwrap() error { return e.Err }

// Run simulates sc from 0 to its duration and returns the Result. A run
// whose store would not delete its keys afterwards still returns its
// Result, with a *CleanupError.
func Run(ctx context.Context, sc Scenario, opts Options) (r *Result, err error) {
	defer recoverInto(sc.Name, &err)
	p, err := NewPlayer(ctx, sc, opts)
	if err != nil {
		return nil, err
	}
	if err := p.Advance(sc.Duration); err != nil {
		p.Close()
		return nil, err
	}
	r = p.Result()
	return r, p.Close()
}

// InternalError is a panic inside a run, recovered so that it ends that
// run alone (RunAll's other runs go on) with a message and the stack to
// report, instead of taking the process down. It is a bug in ratelim,
// never in the scenario.
type InternalError struct {
	Scenario string
	Value    any
	Stack    []byte
}

func (e *InternalError) Error() string {
	return fmt.Sprintf("internal error while running %s: %v (a bug in ratelim: please report it with the scenario)", e.Scenario, e.Value)
}

// recoverInto turns a panic in the caller into an *InternalError in *err.
// It must be deferred directly.
func recoverInto(scenario string, err *error) {
	if v := recover(); v != nil {
		*err = &InternalError{Scenario: scenario, Value: v, Stack: debug.Stack()}
	}
}

// CleanupError is a run that finished but could not delete what it wrote
// to its store (a Redis that went away at the end): the Result is whole,
// and the keys under its prefix are left to their TTLs.
type CleanupError struct{ Err error }

func (e *CleanupError) Error() string {
	return fmt.Sprintf("the run finished, but its keys were not deleted from the store (they expire on their own): %v", e.Err)
}
func (e *CleanupError) Unwrap() error { return e.Err }

// Player runs a simulation piece by piece, for a caller that drives time
// itself (the TUI plays a run frame by frame): Advance moves the virtual
// clock, Snapshot says where things stand. Played to the end it gives the
// same Result as Run.
type Player struct {
	s   *sim
	ctx context.Context
}

// NewPlayer prepares sc to be played from 0. Close it when done: a run on
// a Redis store deletes its keys then.
func NewPlayer(ctx context.Context, sc Scenario, opts Options) (p *Player, err error) {
	defer recoverInto(sc.Name, &err)
	s, err := newSim(ctx, sc, opts)
	if err != nil {
		return nil, &SetupError{err}
	}
	return &Player{s: s, ctx: ctx}, nil
}

// Advance processes every event up to virtual time until (capped at the
// scenario's duration).
func (p *Player) Advance(until time.Duration) (err error) {
	defer recoverInto(p.s.sc.Name, &err)
	return p.s.runUntil(p.ctx, min(int64(algorithms.At(until)), p.s.duration))
}

// Now is the virtual time reached.
func (p *Player) Now() time.Duration { return algorithms.Time(p.s.now).Duration() }

// Done reports whether the run has reached its end.
func (p *Player) Done() bool { return p.s.now >= p.s.duration }

// Result returns the Result of the run so far; played to the end, Run's.
// Its Findings are computed on the figures so far.
func (p *Player) Result() *Result { return p.s.finalResult() }

// Snapshot returns where the run stands.
func (p *Player) Snapshot() Snapshot { return p.s.snapshot() }

// Close releases the stores, deleting what the run wrote to a Redis store;
// a store that would not delete returns a *CleanupError. Closing twice is
// harmless.
func (p *Player) Close() error { return p.s.close() }

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
	rr           int
	requests     int64 // sent so far, retries counted
	retries      int64
	budget       int64 // the most requests the run may send

	// The store copies and how servers reach them.
	now        int64 // virtual time reached
	copies     []copyStore
	copyNames  []string
	closers    []func() error
	racy       []*store.Racy // per copy, racy topology only
	pending    []store.Pending
	freeSlots  []int32
	policy     store.Policy
	serverSide []int // split-brain: 0 for groups[0] (keeps the primary), 1 otherwise

	// Fault state, changed by fault events.
	outage       int // active outages
	partition    *Fault
	latency      int64 // RTT during a latency fault, -1 when none
	replicating  bool
	replQueue    []replication
	replHead     int
	skews        []skew
	stepCounts   []counts // steps × clients
	stepP50      []int64
	stepP99      []int64
	stateSeries  []StateSeries
	ctx          context.Context
	progress     func(done, total time.Duration)
	observe      func(Observation)
	faultResults []FaultSpan
	log          []LogEntry
	notes        []string // texts of scheduled log entries

	snaps snapshots // what the previous Snapshot built (snapshot.go)
}

type replication struct {
	due int64
	key int
	st  algorithms.State
}

type skew struct {
	server        int
	start, end    int64
	offset        int64
	driftPerMicro float64
}

func newSim(ctx context.Context, sc Scenario, opts Options) (*sim, error) {
	if err := sc.check(); err != nil {
		return nil, err
	}
	budget, err := checkSize(sc, opts)
	if err != nil {
		return nil, err
	}
	s, err := newRecording(ctx, sc, opts)
	if err != nil {
		return nil, err
	}
	if err := s.setupStores(ctx, opts.KeyPrefix); err != nil {
		s.close()
		return nil, err
	}
	s.budget = budget
	s.setupFaults()
	for i := range s.steps() {
		s.schedule(event{at: min(int64(i+1)*s.stepLen, s.duration), kind: evStepEnd, arg: int32(i)})
	}
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
func newRecording(ctx context.Context, sc Scenario, opts Options) (*sim, error) {
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
		ctx:      ctx,
		progress: opts.Progress,
		observe:  opts.Observe,
	}
	if s.policy == "" {
		s.policy = store.FailOpen
	}
	s.idealInPlace, _ = s.ideal.(inPlaceStepper)
	s.setupClients()
	steps := s.steps()
	s.stepCounts = make([]counts, steps*len(s.clients))
	s.stepP50 = make([]int64, steps*len(s.clients))
	s.stepP99 = make([]int64, steps*len(s.clients))
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

func (s *sim) steps() int {
	return int((s.duration + s.stepLen - 1) / s.stepLen)
}

func (s *sim) setupClients() {
	index := map[string]int{}
	for _, c := range s.sc.Clients {
		name := KeyOf(c, s.sc.Limit.Key)
		k, ok := index[name]
		if !ok {
			k = len(s.keys)
			index[name] = k
			h := fnv.New64a()
			h.Write([]byte(name))
			s.keys = append(s.keys, keyRun{name: name, hash: h.Sum64(), peak: peakWindow{w: 1_000_000}, idealPeak: peakWindow{w: 1_000_000}})
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

func (s *sim) setupStores(ctx context.Context, prefix string) error {
	names := []string{"shared"}
	switch s.sc.Topology.Kind {
	case Local:
		names = names[:0]
		for i := range s.sc.Servers {
			names = append(names, fmt.Sprintf("server-%d", i))
		}
	case SplitBrain:
		names = []string{"primary", "replica"}
		s.replicating = true
	}
	s.copyNames = names
	kind := s.sc.Topology.Store
	if kind == "" || kind == "memory" {
		for range names {
			s.copies = append(s.copies, store.NewMemory(s.alg))
		}
	} else {
		if prefix == "" {
			var b [6]byte
			rand.Read(b[:])
			prefix = "ratelim-sim:" + hex.EncodeToString(b[:]) + ":"
		}
		url := kind
		if kind == "miniredis" {
			url = store.Embedded
		}
		base, err := store.OpenRedis(ctx, s.alg, store.RedisOptions{URL: url, Prefix: prefix})
		if err != nil {
			return err
		}
		s.closers = append(s.closers, func() error {
			// A run deletes what it wrote, so runs never see each other.
			_, err := base.WithPrefix(prefix).Clear(context.Background())
			base.Close()
			return err
		})
		for _, n := range names {
			s.copies = append(s.copies, base.WithPrefix(prefix+n+":"))
		}
	}
	if s.sc.Topology.Kind == Racy {
		for _, c := range s.copies {
			s.racy = append(s.racy, store.NewRacy(s.alg, c))
		}
	}
	return nil
}

func (s *sim) close() error {
	var errs []error
	for _, c := range s.closers {
		errs = append(errs, c())
	}
	s.closers = nil
	if err := errors.Join(errs...); err != nil {
		return &CleanupError{err}
	}
	return nil
}

func (s *sim) setupFaults() {
	s.serverSide = make([]int, s.sc.Servers)
	for i, f := range s.sc.Faults {
		start, end := int64(algorithms.At(f.Start)), int64(algorithms.At(f.End))
		s.schedule(event{at: start, kind: evFaultStart, arg: int32(i)})
		s.schedule(event{at: end, kind: evFaultEnd, arg: int32(i)})
		if f.Kind == ClockSkew {
			servers := f.Servers
			if len(servers) == 0 {
				for i := range s.sc.Servers {
					servers = append(servers, i)
				}
			}
			for _, srv := range servers {
				s.skews = append(s.skews, skew{server: srv, start: start, end: end, offset: int64(algorithms.At(f.Offset)), driftPerMicro: f.Drift})
			}
		}
		s.faultResults = append(s.faultResults, SpanOf(f))
	}
}

// SpanOf is how a Result reports fault f: its kind, window and, in words,
// its details.
func SpanOf(f Fault) FaultSpan {
	span := FaultSpan{Kind: string(f.Kind), StartS: f.Start.Seconds(), EndS: f.End.Seconds()}
	switch f.Kind {
	case Partition:
		var parts []string
		for _, g := range f.Groups {
			parts = append(parts, strings.Trim(strings.Join(strings.Fields(fmt.Sprint(g)), ","), "[]"))
		}
		span.Detail = "groups " + strings.Join(parts, " | ")
	case Latency:
		span.Detail = "rtt " + f.RTT.String()
	case ClockSkew:
		span.Detail = fmt.Sprintf("servers %v offset %s drift %g", f.Servers, f.Offset, f.Drift)
	}
	return span
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
	for n := 0; s.queue.len() > 0 && s.queue.peek().at <= until; n++ {
		if n&4095 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		e := s.queue.pop()
		s.now = e.at
		if err := s.handle(e); err != nil {
			return err
		}
	}
	s.now = max(s.now, until)
	return nil
}

func (s *sim) handle(e event) error {
	switch e.kind {
	case evArrival:
		c := s.clients[e.client]
		if err := s.request(int(e.client), e.at, c.cost[e.arg], 0); err != nil {
			return err
		}
		s.scheduleArrival(int(e.client), int(e.arg))
	case evRetry:
		return s.request(int(e.client), e.at, e.cost, int(e.arg))
	case evWrite:
		p := s.pending[e.arg]
		s.pending[e.arg] = store.Pending{}
		s.freeSlots = append(s.freeSlots, e.arg)
		if err := p.Write(s.ctx); err != nil && !errors.Is(err, errStoreDown) {
			return err
		}
	case evStepEnd:
		s.endStep(int(e.arg), e.at)
	case evLog:
		s.logf(e.at, "%s", s.notes[e.arg])
	case evFaultStart:
		return s.faultStart(s.sc.Faults[e.arg], e.at)
	case evFaultEnd:
		return s.faultEnd(s.sc.Faults[e.arg], e.at)
	}
	return nil
}

// pickServer is the balancer.
func (s *sim) pickServer(key int) int {
	n := s.sc.Servers
	if n <= 1 {
		return 0
	}
	switch s.sc.Balancer {
	case Random:
		return s.rng.IntN(n)
	case KeyHash:
		return int(s.keys[key].hash % uint64(n))
	}
	s.rr++
	return (s.rr - 1) % n
}

// serverClock is what server's clock reads at true time t.
func (s *sim) serverClock(server int, t int64) int64 {
	for _, sk := range s.skews {
		if sk.server == server && t >= sk.start && t < sk.end {
			return t + sk.offset + int64(sk.driftPerMicro*float64(t-sk.start))
		}
	}
	return t
}

func (s *sim) rtt() int64 {
	if s.latency >= 0 {
		return s.latency
	}
	return int64(algorithms.At(s.sc.Topology.RTT))
}

// route returns the store copy server reaches at t, or -1 when it reaches
// none (an outage, the cut-off side of a partition before failover, an
// isolated primary that stopped taking writes).
func (s *sim) route(server int, t int64) int {
	kind := s.sc.Topology.Kind
	if kind == Local {
		return server // an in-process jar: no outage or partition reaches it
	}
	if s.outage > 0 {
		return -1
	}
	if s.partition == nil {
		return 0
	}
	start := int64(algorithms.At(s.partition.Start))
	if s.serverSide[server] == 0 {
		if stops := s.sc.Topology.PrimaryStopsAfter; stops != Never && stops >= 0 && t >= start+int64(algorithms.At(stops)) {
			return -1
		}
		return 0
	}
	if kind != SplitBrain || t < start+int64(algorithms.At(s.sc.Topology.FailoverAfter)) {
		return -1
	}
	return 1
}

func (s *sim) request(client int, t int64, cost int64, attempt int) error {
	c := s.clients[client]
	key := s.keys[c.key].name
	server := s.pickServer(c.key)
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
	target := s.route(server, t)
	if s.sc.Topology.Kind != Local {
		latency = s.rtt()
	}
	switch {
	case target < 0:
		err = errStoreDown
	case s.sc.Topology.Kind == Racy:
		var p store.Pending
		p, err = s.racy[target].Read(s.ctx, key, now, cost)
		if err == nil {
			d = store.Decision{Decision: p.Decision}
			s.scheduleWrite(p, t+latency)
		}
	default:
		d, err = s.copies[target].Take(s.ctx, key, now, cost)
		if err == nil && target == 0 && s.replicating && d.Allowed {
			if err := s.replicate(c.key, t); err != nil {
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

func (s *sim) scheduleWrite(p store.Pending, at int64) {
	var slot int32
	if n := len(s.freeSlots); n > 0 {
		slot = s.freeSlots[n-1]
		s.freeSlots = s.freeSlots[:n-1]
		s.pending[slot] = p
	} else {
		slot = int32(len(s.pending))
		s.pending = append(s.pending, p)
	}
	s.schedule(event{at: at, kind: evWrite, arg: slot})
}

func (s *sim) scheduleRetry(client int, at int64, cost int64, attempt int, d store.Decision) {
	wait, again := s.clients[client].Retry.Wait(attempt, d.RetryAfter, s.rng.Int64N)
	if !again {
		return
	}
	s.schedule(event{at: at + int64(algorithms.At(wait)), kind: evRetry, client: int32(client), arg: int32(attempt + 1), cost: cost})
}

// replicate queues the primary's new state for key towards the replica,
// which receives it replication_lag later.
func (s *sim) replicate(key int, t int64) error {
	st, err := s.copies[0].Load(s.ctx, s.keys[key].name)
	if err != nil {
		return err
	}
	s.replQueue = append(s.replQueue, replication{due: t + int64(algorithms.At(s.sc.Topology.ReplicationLag)), key: key, st: st})
	return s.applyReplication(t)
}

// applyReplication delivers to the replica every write due by t.
func (s *sim) applyReplication(t int64) error {
	for s.replHead < len(s.replQueue) && s.replQueue[s.replHead].due <= t {
		r := s.replQueue[s.replHead]
		if err := s.copies[1].Save(s.ctx, s.keys[r.key].name, r.st, time.Hour); err != nil {
			return err
		}
		s.replHead++
	}
	if s.replHead > 1024 && s.replHead > len(s.replQueue)/2 {
		s.replQueue = append(s.replQueue[:0], s.replQueue[s.replHead:]...)
		s.replHead = 0
	}
	return nil
}

func (s *sim) faultStart(f Fault, t int64) error {
	s.logf(t, "%s begins%s", f.Kind, faultDetail(f))
	switch f.Kind {
	case Outage:
		s.outage++
	case Latency:
		s.latency = int64(algorithms.At(f.RTT))
	case Partition:
		s.partition = &f
		for i := range s.serverSide {
			s.serverSide[i] = 1
		}
		if len(f.Groups) > 0 {
			for _, srv := range f.Groups[0] {
				if srv >= 0 && srv < len(s.serverSide) {
					s.serverSide[srv] = 0
				}
			}
		}
		if s.replicating {
			// What had reached the replica is all it will have: writes
			// still in flight are lost with the link.
			if err := s.applyReplication(t); err != nil {
				return err
			}
			s.replQueue, s.replHead = s.replQueue[:0], 0
			s.replicating = false
			failover := t + int64(algorithms.At(s.sc.Topology.FailoverAfter))
			s.schedule(event{at: failover, kind: evLog, arg: int32(len(s.notes))})
			s.notes = append(s.notes, "failover: the replica is promoted for the cut-off servers")
			if stops := s.sc.Topology.PrimaryStopsAfter; stops >= 0 {
				s.schedule(event{at: t + int64(algorithms.At(stops)), kind: evLog, arg: int32(len(s.notes))})
				s.notes = append(s.notes, "the isolated primary stops taking writes")
			}
		}
	}
	return nil
}

func (s *sim) faultEnd(f Fault, t int64) error {
	s.logf(t, "%s ends", f.Kind)
	switch f.Kind {
	case Outage:
		s.outage--
	case Latency:
		s.latency = -1
	case Partition:
		s.partition = nil
		for i := range s.serverSide {
			s.serverSide[i] = 0
		}
		if s.sc.Topology.Kind == SplitBrain {
			// Heal: the replica's writes during the partition are lost;
			// it resynchronises from the primary and everyone is back on it.
			for _, k := range s.keys {
				st, err := s.copies[0].Load(s.ctx, k.name)
				if err != nil {
					return err
				}
				if err := s.copies[1].Save(s.ctx, k.name, st, time.Hour); err != nil {
					return err
				}
			}
			s.replicating = true
			s.logf(t, "heal: the replica's writes are lost; every server is back on the primary")
		}
	}
	return nil
}

// faultDetail describes a fault for the log.
func faultDetail(f Fault) string {
	switch f.Kind {
	case Partition:
		return fmt.Sprintf(": servers %v keep the primary, the rest are cut off", f.Groups[0])
	case Latency:
		return fmt.Sprintf(": round trip %s", f.RTT)
	case ClockSkew:
		return fmt.Sprintf(": servers %v off by %s, drifting %g s/s", f.Servers, f.Offset, f.Drift)
	case Outage:
		return ": every store call fails"
	}
	return ""
}

// RunAll runs every scenario, on up to workers goroutines at once (0 means
// one per core), and returns the results and errors in the scenarios'
// order. Runs share nothing, so each Result is what Run alone gives.
func RunAll(ctx context.Context, scs []Scenario, opts Options, workers int) ([]*Result, []error) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	results := make([]*Result, len(scs))
	errs := make([]error, len(scs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, max(len(scs), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				o := opts
				o.Progress = nil // progress of one run among many means nothing
				results[i], errs[i] = Run(ctx, scs[i], o)
			}
		}()
	}
	for i := range scs {
		next <- i
	}
	close(next)
	wg.Wait()
	return results, errs
}
