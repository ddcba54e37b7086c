// Package live runs a scenario for real: `ratelim serve` starts API servers
// behind the httplimit middleware on loopback ports, and `ratelim load`
// replays a scenario's clients against them on the wall clock, over HTTP,
// and writes the same ratelim.result/v1 Result as the simulator, so that a
// prediction and a measurement can be held side by side.
//
// This is the one package besides cmd that reads the clock and does network
// I/O; everything it decides is still decided by package algorithms.
package live

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/httplimit"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/store"
	"github.com/ratelim/ratelim/topology"
)

// DefaultMaxRequests bounds a live run: real requests cost real time.
const DefaultMaxRequests = 2_000_000

// DefaultMaxInFlight bounds the requests waiting for an answer at once.
const DefaultMaxInFlight = 256

// Header names a load run sends and reads. The demo servers of Serve read
// the identities; DecidedByHeader is how an answer says a fail policy, not
// the limiter, decided it.
const (
	APIKeyHeader    = "X-API-Key"
	UserHeader      = "X-User"
	ForwardedHeader = "X-Forwarded-For"
	DecidedByHeader = httplimit.DecidedByHeader
	// CostHeader carries a request's cost when it is more than 1 (a
	// traffic pattern's cost:); the demo servers spend that much quota.
	CostHeader   = "X-Ratelim-Cost"
	ShadowHeader = httplimit.ShadowHeader
	// ServiceHeader carries how long the demo server is to take over the
	// request, as a Go duration ("250ms", "2s"): a client's Service, drawn
	// per request (see Load). A request that takes time stays in flight,
	// which is what a concurrency limit counts.
	ServiceHeader = "X-Ratelim-Service"
	// PriorityHeader carries a client's priority (critical, normal,
	// sheddable) when it has one; the demo servers' load shedder reads
	// it. ShedHeader is how their 503 says the shedder, not a store
	// failing closed, turned the request away.
	PriorityHeader = "X-Ratelim-Priority"
	ShedHeader     = httplimit.ShedHeader
)

// MaxService is the longest a demo server holds a request, whatever its
// ServiceHeader asks, and the longest Load asks for.
const MaxService = 60 * time.Second

// requestTimeout is how long a load run's own client waits for an answer
// beyond the request's service time.
const requestTimeout = 10 * time.Second

// LoadOptions tune a load run.
type LoadOptions struct {
	// Targets are the servers' base URLs, e.g. http://127.0.0.1:8080.
	Targets []string
	// Balancer spreads requests over the targets: round-robin, random or
	// key-hash (the scenario's own by default).
	Balancer sim.Balancer
	// MaxInFlight bounds concurrent requests; 0 means DefaultMaxInFlight.
	MaxInFlight int
	// MaxRequests refuses a longer run before it starts; 0 means
	// DefaultMaxRequests.
	MaxRequests int64
	// AllowRemote allows targets that are not on this machine. Without it
	// only loopback addresses are accepted.
	AllowRemote bool
	// Path is requested on every target; "" means /api.
	Path string
	// Client sends the requests; nil means one with keep-alive
	// connections sized for MaxInFlight, which waits 10 s for each answer
	// beyond the service time it asked for. A client of the caller's
	// keeps its own Timeout, which must then outlast the clients'
	// service times. Load never follows a redirect,
	// whatever the client's CheckRedirect says (Audit.Redirects counts
	// them).
	Client *http.Client
	// Progress, if set, is called about every 100 ms with the time reached.
	Progress func(done, total time.Duration)
	// OnFault, if set, is called when each of the scenario's faults starts
	// (start true) and ends: what makes an outage real (the store is
	// stopped and started).
	OnFault func(f sim.Fault, start bool) error
}

// LoadResult is a live run's Result and its audit.
type LoadResult struct {
	*sim.Result
	Audit Audit `json:"audit"`
	// Observations are the requests as they were sent and answered.
	Observations []sim.Observation `json:"-"`
	// Faults are the scenario's faults as they were applied: each start
	// and end at the instant, from the run's start, when OnFault had
	// done it (a loaded machine applies them late too). An edge the run
	// did not reach keeps its scheduled instant.
	Faults []sim.Fault `json:"-"`
	// Started is the wall-clock instant the run began, its time 0: the
	// instant the servers' clock-aligned windows (a fixed window's whole
	// seconds) are read against, so the simulator fed the observed
	// arrivals takes it as its WallClock.
	Started time.Time `json:"-"`
}

// FaultLateness is how much later than scheduled the latest fault edge
// (a start or an end) took effect; 0 without faults.
func (r *LoadResult) FaultLateness(sc sim.Scenario) time.Duration {
	var worst time.Duration
	for i, f := range r.Faults {
		if i < len(sc.Faults) {
			worst = max(worst, f.Start-sc.Faults[i].Start, f.End-sc.Faults[i].End)
		}
	}
	return worst
}

// quantilesMs returns the median, 99th percentile and maximum of ds, in ms.
func quantilesMs(ds []time.Duration) (p50, p99, worst float64) {
	if len(ds) == 0 {
		return 0, 0, 0
	}
	slices.Sort(ds)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return ms(ds[len(ds)/2]), ms(ds[(len(ds)*99)/100]), ms(ds[len(ds)-1])
}

// ObservedScenario is sc as the live run res really played it: each
// client's traffic replaced by the first tries it sent, at the instants
// the fleet decided them, each with the service time it asked for, and the
// faults at the instants they were applied. The
// simulator run on it decides the traffic a live run achieved, not the
// schedule it may have failed to keep on a loaded machine, so where the
// two disagree the limiter did. Retries are left to the client's retry
// policy, as in any run. Its WallClock is the run's start (res.Started),
// so that windows aligned to the wall clock fall where the live servers'
// fell, whatever instant the run began at.
func ObservedScenario(sc sim.Scenario, res *LoadResult) sim.Scenario {
	obs := slices.Clone(res.Observations)
	slices.SortStableFunc(obs, func(a, b sim.Observation) int {
		if c := cmp.Compare(a.At, b.At); c != 0 {
			return c
		}
		return cmp.Compare(a.Seq, b.Seq)
	})
	times := make([][]time.Duration, len(sc.Clients))
	services := make([][]time.Duration, len(sc.Clients))
	cost := make([]int64, len(sc.Clients))
	for _, o := range obs {
		if o.Attempt == 0 {
			times[o.Client] = append(times[o.Client], o.At)
			services[o.Client] = append(services[o.Client], o.Service)
			cost[o.Client] = o.Cost
		}
	}
	out := sc
	out.Clients = slices.Clone(sc.Clients)
	for i, c := range out.Clients {
		tr := sim.Traffic{Pattern: sim.Times, Times: times[i], Cost: cost[i]}
		if c.Service.Mean > 0 {
			// Each request held as long as it was live (or as it asked,
			// when the answer did not say): a drawn service time is
			// drawn per request sent live and per request admitted in
			// the simulator, so the two would differ, and a loaded
			// server holds a lease longer than asked.
			tr.Services = services[i]
		}
		out.Clients[i].Traffic = []sim.Traffic{tr}
	}
	if len(res.Faults) == len(sc.Faults) {
		out.Faults = slices.Clone(res.Faults)
	}
	if !res.Started.IsZero() {
		out.WallClock = res.Started
	}
	return out
}

// Load replays sc's clients against opts.Targets on the wall clock and
// returns what they experienced.
//
// Each request carries its client's service time in ServiceHeader, for the
// server to hold it that long: the client's Service.Mean, or, for an
// exponential Service, a draw of that mean from the run's seeded source
// (capped at 50 means, as the simulator's), at most MaxService; none for
// a client served at once. Draws are per request sent, refused ones and
// retries included, in the order the requests go out, which the wall
// clock decides: the same seed gives the same distribution, not the same
// sequence. The simulator draws only for the requests it admits. A run
// waits for the answers to the requests it sent, so it may end up to the
// longest service time after the scenario does.
//
// A crash fault (sim.Crash) takes its servers out of the balancer's
// rotation from its start to its end, as the simulator's health check
// does: a request picked for one of them goes to the next server up.
// OnFault is what makes the servers abandon what they were serving
// (Fleet.Fault).
func Load(ctx context.Context, sc sim.Scenario, opts LoadOptions) (*LoadResult, error) {
	targets, err := checkTargets(opts.Targets, opts.AllowRemote)
	if err != nil {
		return nil, err
	}
	budget := opts.MaxRequests
	if budget == 0 {
		budget = DefaultMaxRequests
	}
	if est := sim.Estimate(sc); est > budget {
		return nil, &sim.TooBigError{Err: sim.ErrBudget, Scenario: sc.Name, Option: "MaxRequests",
			Detail: fmt.Sprintf("would send about %s requests for real, more than %s", sim.Thousands(est), sim.Thousands(budget)),
			Advice: "shorten the scenario or lower its rates"}
	}
	if opts.Balancer == "" {
		opts.Balancer = sc.Balancer
	}
	if opts.MaxInFlight <= 0 {
		opts.MaxInFlight = DefaultMaxInFlight
	}
	if opts.Path == "" {
		opts.Path = "/api"
	}
	var client *http.Client
	timeouts := false // each request gets its own deadline
	if opts.Client != nil {
		c := *opts.Client
		client = &c
	} else {
		transport := http.DefaultTransport.(*http.Transport).Clone()
		transport.MaxIdleConnsPerHost = opts.MaxInFlight
		// No Timeout: each request has a deadline of its own, its
		// service time plus requestTimeout.
		client = &http.Client{Transport: transport}
		timeouts = true
		defer transport.CloseIdleConnections()
	}
	// A redirect is an answer, counted in the audit, never a request to
	// another host: a 302 would otherwise take the load off the targets
	// checkTargets let through. This holds for a client of the caller's
	// own too (a copy of it; theirs is left as it was).
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	l := &loader{sc: sc, opts: opts, targets: targets, client: client, timeouts: timeouts,
		sem: make(chan struct{}, opts.MaxInFlight), down: make([]bool, len(targets)),
		rng: rand.New(rand.NewPCG(sc.Seed, 7)), lastReset: map[string]time.Time{},
		spread: topology.Spreader{Balancer: opts.Balancer, Servers: len(targets)}}
	for _, c := range sc.Clients {
		key := sim.KeyOf(c, sc.Limit.Key)
		l.keys = append(l.keys, key)
		l.keyHashes = append(l.keyHashes, topology.HashKey(key))
	}
	return l.run(ctx)
}

// checkTargets parses the target URLs and refuses any that is not on this
// machine unless allowRemote: a load generator pointed at the wrong host is
// an attack.
func checkTargets(raw []string, allowRemote bool) ([]*url.URL, error) {
	if len(raw) == 0 {
		return nil, optionError("Targets", "no target given (want e.g. http://127.0.0.1:8080)")
	}
	var out []*url.URL
	for _, r := range raw {
		u, err := url.Parse(strings.TrimSpace(r))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, optionError("Targets", "%q is not an http URL (want e.g. http://127.0.0.1:8080)", r)
		}
		if !allowRemote && !isLoopback(u.Hostname()) {
			return nil, optionError("Targets", "%s is not a loopback address; load runs target this machine only (set AllowRemote for a server you own)", u.Host)
		}
		out = append(out, u)
	}
	return out, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

type loader struct {
	sc      sim.Scenario
	opts    LoadOptions
	targets []*url.URL
	client  *http.Client
	// timeouts says each request gets a deadline of its service time
	// plus requestTimeout (Load's own client, which has no Timeout).
	timeouts bool
	sem      chan struct{}
	keys     []string
	// keyHashes place each client's key for a key-hash balancer, as the
	// simulator places it.
	keyHashes []uint64
	start     time.Time
	seq       atomic.Uint64

	mu        sync.Mutex
	spread    topology.Spreader // the simulator's balancer
	down      []bool            // by target: crashed, out of rotation
	rng       *rand.Rand
	obs       []sim.Observation
	lateness  []time.Duration // of each first try, sent minus scheduled
	deciding  []time.Duration // of each stamped answer, decided minus sent
	applied   []sim.Fault     // sc.Faults at the instants they were applied; playFaults's own
	audit     Audit
	events    []sim.LogEntry
	lastReset map[string]time.Time
}

func (l *loader) run(parent context.Context) (*LoadResult, error) {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	l.start = time.Now()
	var wg sync.WaitGroup
	faultErr := make(chan error, 1)
	l.applied = slices.Clone(l.sc.Faults)
	during, atEnd := faultEdges(l.sc)
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := l.playFaults(ctx, during); err != nil {
			faultErr <- err
			cancel()
		}
	}()
	var requests sync.WaitGroup
	lastProgress := time.Now()
	feedErr := sim.Arrivals(l.sc, func(a sim.Arrival) bool {
		if time.Since(l.start) >= l.sc.Duration {
			l.mu.Lock()
			l.audit.NotSent++
			l.mu.Unlock()
			return true
		}
		if wait := time.Until(l.start.Add(a.At)); wait > time.Millisecond {
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return false
			}
		}
		if l.opts.Progress != nil && time.Since(lastProgress) > 100*time.Millisecond {
			lastProgress = time.Now()
			l.opts.Progress(a.At, l.sc.Duration)
		}
		select {
		case l.sem <- struct{}{}:
		case <-ctx.Done():
			return false
		}
		if time.Since(l.start.Add(a.At)) > 10*time.Millisecond {
			l.mu.Lock()
			l.audit.Late++
			l.mu.Unlock()
		}
		requests.Add(1)
		go func() {
			defer requests.Done()
			l.send(ctx, a, 0)
		}()
		return true
	})
	requests.Wait()
	// Wait out the scenario's end, so faults finish as scheduled.
	if rest := time.Until(l.start.Add(l.sc.Duration)); rest > 0 && ctx.Err() == nil {
		select {
		case <-time.After(rest):
		case <-ctx.Done():
		}
	}
	cancel()
	wg.Wait()
	// The edges due at the end, after the last answer (faultEdges says
	// why), unless the run was interrupted; a start before an end.
	if feedErr == nil && len(faultErr) == 0 && parent.Err() == nil {
		slices.SortStableFunc(atEnd, func(a, b faultEdge) int { return cmp.Compare(a.at, b.at) })
		for _, e := range atEnd {
			if err := l.applyFault(e); err != nil {
				faultErr <- err
				break
			}
		}
	}
	if feedErr != nil {
		return nil, feedErr
	}
	select {
	case err := <-faultErr:
		return nil, err
	default:
	}
	if err := ctx.Err(); err != nil && !errors.Is(err, context.Canceled) {
		return nil, err
	}
	r, err := sim.Replay(l.sc, l.obs, l.events)
	if err != nil {
		return nil, err
	}
	r.Live = true
	if r.WallClock != "" { // an algorithm that reads it: say where the run's 0 was
		r.WallClock = l.start.UTC().Format(time.RFC3339Nano)
	}
	l.audit.LateP50Ms, l.audit.LateP99Ms, l.audit.LateMaxMs = quantilesMs(l.lateness)
	l.audit.Stamped = int64(len(l.deciding))
	l.audit.DecideP50Ms, l.audit.DecideP99Ms, l.audit.DecideMaxMs = quantilesMs(l.deciding)
	return &LoadResult{Result: r, Audit: l.audit, Observations: l.obs, Faults: l.applied, Started: l.start}, nil
}

// faultEdge is a fault's start or end, due at an instant of the run.
type faultEdge struct {
	at    time.Duration
	i     int // in sc.Faults
	start bool
}

// faultEdges are sc's faults' starts and ends: those due before the
// scenario's end (in the order given; playFaults takes the earliest
// first), and those due at or after it, which are the run's end and wait
// for its last answer: a request sent before the end and decided after it
// is recorded at the end (seen.decidedAt), inside the fault, and so must
// be decided inside it.
func faultEdges(sc sim.Scenario) (during, atEnd []faultEdge) {
	for i, f := range sc.Faults {
		for _, e := range []faultEdge{{f.Start, i, true}, {f.End, i, false}} {
			if e.at < sc.Duration {
				during = append(during, e)
			} else {
				atEnd = append(atEnd, e)
			}
		}
	}
	return during, atEnd
}

// playFaults calls OnFault at each fault's start and end due before the
// scenario's end, on the wall clock.
func (l *loader) playFaults(ctx context.Context, edges []faultEdge) error {
	for len(edges) > 0 {
		next := 0
		for i, e := range edges {
			if e.at < edges[next].at {
				next = i
			}
		}
		e := edges[next]
		edges = append(edges[:next], edges[next+1:]...)
		select {
		case <-time.After(time.Until(l.start.Add(e.at))):
		case <-ctx.Done():
			return nil
		}
		if err := l.applyFault(e); err != nil {
			return err
		}
	}
	return nil
}

// applyFault calls OnFault for e and records when it took effect.
func (l *loader) applyFault(e faultEdge) error {
	f := l.sc.Faults[e.i]
	verb := "ends"
	if e.start {
		verb = "begins"
	}
	l.mu.Lock()
	l.events = append(l.events, sim.LogEntry{TS: time.Since(l.start).Seconds(), Text: fmt.Sprintf("%s %s", f.Kind, verb)})
	if f.Kind == sim.Crash {
		// Out of rotation from the crash, before the servers are
		// told: nothing new is sent to a server about to go down.
		for _, s := range f.Servers {
			if s >= 0 && s < len(l.down) {
				l.down[s] = e.start
			}
		}
	}
	l.mu.Unlock()
	if l.opts.OnFault != nil {
		if err := l.opts.OnFault(f, e.start); err != nil {
			return fmt.Errorf("live: %s %s: %w", f.Kind, verb, err)
		}
	}
	// In effect from now: the store is down (or back) once OnFault
	// has returned.
	at := time.Since(l.start)
	// An edge due at the scenario's end keeps its instant: the
	// fault lasted until the run's end, as scheduled.
	if e.at >= l.sc.Duration {
		return nil
	}
	// A fault ends after it began, if only by a microsecond.
	l.mu.Lock()
	defer l.mu.Unlock()
	if e.start {
		l.applied[e.i].Start = at
		l.applied[e.i].End = max(l.applied[e.i].End, at+time.Microsecond)
	} else {
		l.applied[e.i].End = max(at, l.applied[e.i].Start+time.Microsecond)
	}
	return nil
}

// target is the server a client's request goes to: the simulator's balancer
// over the targets.
func (l *loader) target(client int) *url.URL {
	l.mu.Lock()
	defer l.mu.Unlock()
	server := l.spread.Pick(l.keyHashes[client], l.rng.IntN)
	// Around a crashed server to the next one up, as the simulator's
	// health check routes.
	for i := 0; i < len(l.down) && l.down[server]; i++ {
		server = (server + 1) % len(l.down)
	}
	return l.targets[server]
}

// serviceTime draws how long client c's request is to take at the server:
// its Service's mean, or an exponential draw of that mean from the run's
// source, capped at 50 means as the simulator caps it, and at MaxService.
func (l *loader) serviceTime(c sim.Client) time.Duration {
	mean := c.Service.Mean
	if mean <= 0 {
		return 0
	}
	d := mean
	if c.Service.Exponential {
		l.mu.Lock()
		u := l.rng.Float64()
		l.mu.Unlock()
		d = time.Duration(math.Min(-math.Log(1-u), 50) * float64(mean))
	}
	return min(d, MaxService)
}

// send makes one request and, if it is rejected, the retries the client's
// policy calls for. It holds a slot of sem while a request is in flight and
// releases it while waiting to retry.
func (l *loader) send(ctx context.Context, a sim.Arrival, attempt int) {
	c := l.sc.Clients[a.Client]
	for {
		seq := l.seq.Add(1)
		at := time.Since(l.start)
		if at >= l.sc.Duration {
			// Its turn came after the scenario's end: a run never outlasts
			// its scenario (and the simulator, fed these arrivals, would
			// not send it either).
			<-l.sem
			if attempt == 0 {
				l.mu.Lock()
				l.audit.NotSent++
				l.mu.Unlock()
			}
			return
		}
		d, retryAfter, seen, ok := l.do(ctx, a.Client, c, a.Cost)
		latency := time.Since(l.start) - at
		<-l.sem
		if !ok && ctx.Err() != nil {
			return
		}
		l.mu.Lock()
		if attempt == 0 {
			l.lateness = append(l.lateness, max(at-a.At, 0))
		}
		decided := seen.decidedAt(at, latency, l.sc.Duration)
		if seen.stamped {
			l.deciding = append(l.deciding, decided-at)
		}
		// The limiter held it at most as long as the answer took after
		// the decision.
		d.Delay = min(seen.held, max(at+latency-decided, 0))
		// No answer is no decision: counted as such, never as rejected.
		l.obs = append(l.obs, sim.Observation{Client: a.Client, At: decided, Cost: a.Cost, Attempt: attempt, Decision: d, Latency: latency, Shadowed: seen.shadowed, Shed: seen.shed, Seq: seq, NoAnswer: !ok, Service: seen.heldFor()})
		l.mu.Unlock()
		if d.Allowed || d.Policy != "" || !ok {
			return
		}
		wait, again := c.Retry.Wait(attempt, retryAfter, l.int64n)
		if !again || wait >= l.sc.Duration-time.Since(l.start) {
			// No retry, or one due after the scenario's end, which is
			// never sent: not waited for either (a Retry-After of hours
			// would hold the run that long).
			return
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return
		}
		if time.Since(l.start) >= l.sc.Duration {
			return
		}
		select {
		case l.sem <- struct{}{}:
		case <-ctx.Done():
			return
		}
		attempt++
	}
}

// int64n draws from the run's random source, which goroutines share.
func (l *loader) int64n(n int64) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rng.Int64N(n)
}

// seen is what an answer said beyond its decision.
type seen struct {
	shadowed bool // let through, a limit in shadow mode would have refused it
	shed     bool // the load shedder's 503
	// decided is when the server's limiter decided, from the run's
	// start (DecidedAtHeader); stamped says the answer said so.
	decided time.Duration
	stamped bool
	// held is how long the limiter held it before serving
	// (httplimit.DelayHeader).
	held time.Duration
	// service is how long the request asked the server to take
	// (ServiceHeader).
	service time.Duration
	// released is when the server gave its lease back, from the run's
	// start (ReleasedAtHeader, a trailer); releasedKnown says the answer
	// said so.
	released      time.Duration
	releasedKnown bool
}

// heldFor is how long the fleet held the request's lease, for the
// simulator fed the run's observations: from its decision to its release
// when the answer said both, else the service time it asked for.
func (s seen) heldFor() time.Duration {
	if s.stamped && s.releasedKnown && s.released >= s.decided && s.service > 0 {
		return s.released - s.decided
	}
	return s.service
}

// decidedAt is the request's instant for the record: when the limiter
// decided it, as the answer said, within the span it can have happened in
// (from sent, to sent + latency, when the answer came back), and before
// end, the scenario's, which a request sent in time is counted within
// (a simulator fed the instants runs nothing after it); sent for an answer
// that did not say (a server other than ratelim's), as a clock of another
// machine's must not move a request out of that span.
func (s seen) decidedAt(sent, latency, end time.Duration) time.Duration {
	if !s.stamped {
		return sent
	}
	return max(min(s.decided, sent+latency, end-time.Microsecond), sent)
}

// parseHeld reads httplimit.DelayHeader, decimal seconds, as a duration:
// 0 for a value that is missing, malformed, negative or not finite, at
// most a day (send caps it again at the request's observed latency).
func parseHeld(v string) time.Duration {
	secs, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || !(secs > 0) || math.IsInf(secs, 0) {
		return 0
	}
	return time.Duration(min(secs, (24*time.Hour).Seconds()) * float64(time.Second))
}

// do sends one request and reads the decision from the answer: 2xx
// admitted (or failed open, when the answer says a policy decided), 429
// rejected, 503 shed when ShedHeader says so (a refusal the client may
// retry after its Retry-After, as the simulator's), else failed closed.
func (l *loader) do(ctx context.Context, client int, c sim.Client, cost int64) (d store.Decision, retryAfter time.Duration, saw seen, ok bool) {
	u := *l.target(client)
	u.Path = strings.TrimSuffix(u.Path, "/") + l.opts.Path
	u.RawQuery = "client=" + url.QueryEscape(c.Name)
	service := l.serviceTime(c)
	reqCtx := ctx // ctx ending is the run ending; reqCtx's, the request timing out
	if l.timeouts {
		var cancel context.CancelFunc
		reqCtx, cancel = context.WithTimeout(ctx, service+requestTimeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(reqCtx, http.MethodGet, u.String(), nil)
	if err != nil {
		return d, 0, saw, false
	}
	if service > 0 {
		req.Header.Set(ServiceHeader, service.String())
		saw.service = service
	}
	if cost > 1 {
		req.Header.Set(CostHeader, strconv.FormatInt(cost, 10))
	}
	if c.Priority != "" {
		req.Header.Set(PriorityHeader, c.Priority)
	}
	if c.APIKey != "" {
		req.Header.Set(APIKeyHeader, c.APIKey)
	}
	if c.User != "" {
		req.Header.Set(UserHeader, c.User)
	}
	if c.IP != "" {
		req.Header.Set(ForwardedHeader, c.IP)
	}
	resp, err := l.client.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			l.mu.Lock()
			l.audit.TransportErrors++
			if l.audit.FirstTransportError == "" {
				l.audit.FirstTransportError = err.Error()
			}
			l.mu.Unlock()
		}
		return d, 0, saw, false
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil && ctx.Err() == nil {
		// Its status came, its body did not end: the server abandoned
		// it (a crash mid-request). It counts as the status says.
		l.mu.Lock()
		l.audit.Cut++
		l.mu.Unlock()
	}
	resp.Body.Close()
	if v, err := strconv.ParseInt(resp.Header.Get(DecidedAtHeader), 10, 64); err == nil {
		saw.decided, saw.stamped = time.UnixMicro(v).Sub(l.start), true
	}
	if v, err := strconv.ParseInt(resp.Trailer.Get(ReleasedAtHeader), 10, 64); err == nil {
		saw.released, saw.releasedKnown = time.UnixMicro(v).Sub(l.start), true
	}
	retryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), resp.Header.Get("Date"), time.Now())
	d.RetryAfter = retryAfter
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		l.mu.Lock()
		l.audit.Redirects++
		l.mu.Unlock()
	case resp.StatusCode == http.StatusTooManyRequests:
		d.Binding = l.auditRejection(client, resp.Header, retryAfter)
	case resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get(ShedHeader) != "":
		saw.shed = true
		l.auditShed(retryAfter)
	case resp.StatusCode == http.StatusServiceUnavailable:
		d.Policy = store.FailClosed
	case resp.StatusCode < 300:
		d.Allowed = true
		if resp.Header.Get(DecidedByHeader) == string(store.FailOpen) {
			d.Policy = store.FailOpen
		}
		saw.shadowed = resp.Header.Get(ShadowHeader) == "would-reject"
		saw.held = parseHeld(resp.Header.Get(httplimit.DelayHeader))
		l.mu.Lock()
		delete(l.lastReset, l.keys[client])
		l.mu.Unlock()
	default:
		// A 404, a 400, a 500: refused, but by no rate limit.
		l.mu.Lock()
		l.audit.OtherStatus++
		l.mu.Unlock()
	}
	return d, retryAfter, saw, true
}

// parseRetryAfter reads a Retry-After field as a client waits on it (RFC
// 9110 section 10.2.3: delay-seconds or an HTTP-date), 0 when it is absent
// or malformed: the audit counts that as missing.
//
// delay-seconds are digits only ("-1", "+5" and "1e30" are malformed),
// surrounding spaces allowed; a count too long for a Duration is the
// longest one, algorithms.Never: never within this run, not a wrapped
// negative. 9223372037 s (algorithms.Never rounded up to seconds) is one
// past what fits; the middleware says 999999999999999 s, the most a
// Structured Field Integer holds, for a request that can never pass.
//
// An HTTP-date (any of the three forms http.ParseTime reads) is a wait
// from the answer's Date, the server's own clock, when that parses, which
// leaves clock skew between client and server out of it; else from now,
// rounded up to whole seconds as delay-seconds are. A date already past is
// a wait of 0.
func parseRetryAfter(v, date string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if strings.Trim(v, "0123456789") == "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n > math.MaxInt64/int64(time.Second) {
			return algorithms.Never // ParseInt fails on digits only when they overflow
		}
		return time.Duration(n) * time.Second
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0
	}
	var wait time.Duration
	if served, err := http.ParseTime(date); err == nil {
		wait = at.Sub(served)
	} else {
		wait = at.Sub(now)
		if frac := wait % time.Second; frac > 0 {
			wait += time.Second - frac
		}
	}
	return max(wait, 0)
}
