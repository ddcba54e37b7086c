package sim

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/internal/sat"
	"github.com/ratelim/ratelim/internal/words"
	"github.com/ratelim/ratelim/route"
	"github.com/ratelim/ratelim/topology"
)

// DefaultMaxRequests is the request budget a run refuses to exceed unless
// told otherwise: about ten seconds of simulation on a laptop.
const DefaultMaxRequests = 50_000_000

// DefaultMaxMemory is the memory a run may be estimated to need unless told
// otherwise: a sixth of the reference machine's 24 GB, so two runs and the
// rest of the machine fit beside it.
const DefaultMaxMemory = 4 << 30

// ErrBudget is returned, wrapped, for a run over its request budget: one
// estimated to send more before it starts, or one whose retries took it
// past the budget while it ran.
var ErrBudget = errors.New("over the request budget")

// ErrMemory is returned, wrapped, for a run refused before it starts
// because it is estimated to need more memory than its bound.
var ErrMemory = errors.New("over the memory bound")

// ErrDense is returned, wrapped, for a result refused as every step's
// rows and points (--dense) because they would be more than MaxDenseRows:
// a run's steps cost nothing when nothing happens in them (quiet.go), so
// a year at a microsecond's step runs in a moment, and written out whole
// it would be 3 × 10¹³ rows.
var ErrDense = errors.New("too many rows to write every step")

// MaxDenseRows is the most rows and state points a dense result (every
// step's, Result.EachRow(true), StateAs(i, true)) may have: 10⁸, about
// 15 GB of JSON.
const MaxDenseRows = 100_000_000

// DenseRows is how many rows and state points r has with every step's
// put back: steps × (clients + state series), saturating.
func (r *Result) DenseRows() int64 {
	steps, _, ok := r.steps()
	if !ok {
		return int64(len(r.Timeline)) + int64(len(r.State))
	}
	return sat.Mul(int64(steps), int64(len(r.Clients)+len(r.State)))
}

// CheckDense refuses a result too big to write with every step's rows
// and points (ErrDense): what it would take, and what to change.
func CheckDense(r *Result) error {
	if n := r.DenseRows(); n > MaxDenseRows {
		return &TooBigError{Err: ErrDense, Scenario: r.Scenario,
			Detail: fmt.Sprintf("would write %s rows and state points with every step's, more than %s", words.Thousands(n), words.Thousands(MaxDenseRows)),
			Advice: "leave out --dense, whose sparse result leaves out only what repeats, or use a longer step"}
	}
	return nil
}

// IsTooBig reports whether err is a run refused for its size (ErrBudget,
// ErrMemory or ErrDense): not a mistake in the scenario, but more than this machine
// was told to give it. Commands exit with a code of their own for it.
func IsTooBig(err error) bool {
	return errors.Is(err, ErrBudget) || errors.Is(err, ErrMemory) || errors.Is(err, ErrDense)
}

// TooBigError is a run refused, or stopped, for its size: what it would
// take against the bound, what in the scenario to change, and the bound
// of Options that raising is the other way out. errors.Is(err, ErrBudget)
// or ErrMemory tells which bound.
type TooBigError struct {
	Err      error // ErrBudget or ErrMemory
	Scenario string
	// Detail is what the run would take, against the bound: "would send
	// about 3,000,000 requests, more than 1,000,000".
	Detail string
	// Advice is what to change in the scenario.
	Advice string
	// Option is the Options field whose bound the run passed:
	// "MaxRequests" or "MaxMemory". The message ends "or raise
	// Options.MaxRequests": a command names its flag instead.
	Option string
}

func (e *TooBigError) Error() string {
	if e.Option == "" {
		return fmt.Sprintf("%v: %s %s (%s)", e.Err, e.Scenario, e.Detail, e.Advice)
	}
	return fmt.Sprintf("%v: %s %s (%s, or raise Options.%s)", e.Err, e.Scenario, e.Detail, e.Advice, e.Option)
}

func (e *TooBigError) Unwrap() error { return e.Err }

// Estimate returns how many requests sc's traffic sends, retries not
// counted: what the request budget is checked against before a run. It
// saturates at math.MaxInt64 rather than wrap, whatever the rates and
// durations.
func Estimate(sc Scenario) int64 {
	total := 0.0
	for _, c := range sc.Clients {
		total += arrivalsOf(c, sc.Duration)
	}
	for _, f := range sc.Feeds {
		total += float64(f.Requests)
	}
	return saturate(math.Ceil(total))
}

// arrivalsOf is about how many first tries c's traffic sends in a run of
// duration.
func arrivalsOf(c Client, duration time.Duration) float64 {
	n := 0.0
	for i := range c.Traffic {
		n += newStream(&c.Traffic[i], int64(algorithms.At(duration))).estimate()
	}
	return n
}

// clientsOf are the clients f sends for, Scenario.Clients[FirstClient :
// FirstClient+Clients], of those sc has.
func (f Feed) clientsOf(sc Scenario) []Client {
	first, last := max(f.FirstClient, 0), min(f.FirstClient+f.Clients, len(sc.Clients))
	if first >= last {
		return nil
	}
	return sc.Clients[first:last]
}

// mostPersistent is the client of cs whose retry policy allows the most
// retries, the first of those alike; nil for none.
func mostPersistent(cs []Client) *Client {
	var most *Client
	for i := range cs {
		if c := &cs[i]; most == nil || c.Retry.most() > most.Retry.most() {
			most = c
		}
	}
	return most
}

// WorstCase returns how many requests sc could send, retries counted: as
// Estimate, with each arrival of a client that retries counted once and
// then once more for every retry its policy allows (Retry.Max, or
// DefaultMaxRetry), as if every request were refused and every refusal
// retried. It saturates at math.MaxInt64. retrier is the client whose
// retries weigh the most, for a message; nil when no client retries.
//
// It is not a loose bound on the storm it is there for. A retry is sent
// only after a refusal, but a client that retries at once (immediate) on
// a topology with no round trip (local) retries at the very instant it was
// refused, when nothing has refilled, and is refused again; the simulator
// sends each of those retries as a request of its own, so every refused
// arrival costs 1 + Max requests, all at one instant. A policy that waits
// bounds nothing either: a backoff's full jitter may draw a wait of 1 µs,
// and a Retry-After may be as short. Where few requests are refused, the
// run sends far fewer than this, and a raised budget lets it run.
func WorstCase(sc Scenario) (requests int64, retrier *Client) {
	total, heaviest := 0.0, 0.0
	for i := range sc.Clients {
		c := &sc.Clients[i]
		arrivals := arrivalsOf(*c, sc.Duration)
		retries := arrivals * float64(c.Retry.most())
		total += arrivals + retries
		if retries > heaviest {
			heaviest, retrier = retries, c
		}
	}
	for _, f := range sc.Feeds {
		// A log's arrivals name their clients one by one: each may be the
		// block's most persistent one.
		most := mostPersistent(f.clientsOf(sc))
		if most == nil {
			total += float64(f.Requests)
			continue
		}
		retries := float64(f.Requests) * float64(most.Retry.most())
		total += float64(f.Requests) + retries
		if retries > heaviest {
			heaviest, retrier = retries, most
		}
	}
	return saturate(math.Ceil(total)), retrier
}

// Bytes a run holds live, measured on its structures (go test -run
// TestMemoryEstimateIsAnUpperBound ./sim checks them against the heap).
// The JSON is written a row at a time, so it adds nothing that grows.
//
// The estimate adds a quarter to what is live for the garbage collector's
// headroom (collectorHeadroom): that is what a run needs when the Go
// runtime's soft memory limit (debug.SetMemoryLimit, GOMEMLIMIT) is the
// bound, as the ratelim command sets it to --max-memory; the collector
// then works harder near the limit rather than let the heap grow to twice
// what is live, which is where it goes with no limit (GOGC=100). A
// million clients need about 2.5 GB live: refused at 4 GiB when charged
// twice, they run in it under the limit.
const (
	bytesPerClient    = 1536                // the client's run (640 B), its stream (224 B), its result (208 B), its peak window, and the scenario's Client and its traffic (350 B)
	bytesPerHistBlock = histBlock*8 + 16    // one block of a latency histogram, and its place in the index
	bytesPerHistIndex = 2*histBlocks*8 + 64 // a histogram's index of blocks and their sums, once it has more than histFew buckets
	bytesPerRow       = 160 + 144 + 16      // a timeline row: the recorder's (160 B, in chunks) and the Result's (144 B), and its place while they are sorted
	bytesPerSample    = 36                  // a key's state in one copy at one step, and its JSON
	bytesPerPair      = 128                 // a (key, copy) pair's state in its jar, its slot, and its place in the recorder's pairs
	bytesPerKey       = 640                 // a limiter key's run (224 B), result (144 B), ideal state, store entry and name (505 B measured)
	bytesPerLogEntry  = 8 * 2               // a sliding log's timestamp, in the limiter and in the exact one
	bytesPerSent      = 48                  // an admission on its way to another copy (a synced push, a region's replication) or an owner's queued hits
	bytesBase         = 4 << 20             // the run's fixed structures
	collectorHeadroom = 5                   // in quarters: the estimate is 5/4 of what is live
)

// MaxClientsIn is the most clients, each with a key of its own, a run can
// have within bound bytes, at the least each adds to MemoryEstimate (one
// limit, one copy of the state, one step): a replay refuses a log's keys
// past it as they are read, rather than the run after the whole log.
func MaxClientsIn(bound int64) int64 {
	const perClient = (bytesPerClient + bytesPerKey + bytesPerRow + bytesPerSample + bytesPerPair) * collectorHeadroom / 4
	return max((bound-bytesBase)/perClient, 1)
}

// MemoryEstimate returns about how many bytes a run of sc needs at its
// peak, its JSON result included: what grows with clients, with steps,
// with the timeline's rows (one per client per step in which something
// happened to it: at most steps × clients, and at most two per request,
// its own step's and, delayed by a leaky bucket, the step it is served
// in), with steps × the (key, copy) pairs sampled (the
// state series: sampledPairs), and with the timestamps a sliding log
// keeps. It is an upper bound on the heap the run allocates, saturating
// rather than wrapping.
func MemoryEstimate(sc Scenario) int64 { return memoryNeed(sc, nil) }

// MemoryNeed is MemoryEstimate for a run whose state series keep only
// the keys keep chooses (Options.StateOf), and, when that is over bound,
// the step Options.FitStep would run it at instead (0: none fits).
func MemoryNeed(sc Scenario, keep func(key string) bool, bound int64) (need int64, fits time.Duration) {
	m := newMemoryModel(sc, keep)
	if need = m.at(sc.Step); need > bound {
		fits, _ = m.stepThatFits(bound)
	}
	return need, fits
}

// memoryNeed is MemoryEstimate for a run whose state series keep only the
// keys keep chooses (Options.StateOf; nil keeps every key's): a table
// keeps none, and its run holds no samples.
func memoryNeed(sc Scenario, keep func(key string) bool) int64 {
	return newMemoryModel(sc, keep).at(sc.Step)
}

// memoryModel is what the estimate reads of a scenario, read once: a
// refused run's step that fits (stepThatFits) tries a dozen steps, and
// at a million clients the keys and the worst case take seconds to
// count.
type memoryModel struct {
	sc                   Scenario
	keep                 func(string) bool
	clients, keys        int64
	worst, pairs, kept   int64
	limits, fixed        int64
	rowsPerRequest, room int64
	changes              int64
}

func newMemoryModel(sc Scenario, keep func(key string) bool) memoryModel {
	m := memoryModel{sc: sc, keep: keep, clients: int64(len(sc.Clients))}
	distinct := distinctKeys(sc)
	m.keys = int64(len(distinct))
	m.worst, _ = WorstCase(sc)
	m.pairs = sampledPairs(sc, m.keys, m.worst)
	m.kept = m.pairs
	if keep != nil {
		n := int64(0)
		for k := range distinct {
			if keep(k) {
				n++
			}
		}
		// Each kept key holds at most its copies' pairs, whichever keys
		// the traffic goes to.
		m.kept = min(m.pairs, sat.Mul(n, int64(topology.CopyCount(topologyConfig(sc)))))
	}
	// A key with several limits keeps a state, and a state series, per
	// limit.
	m.limits = int64(1 + len(sc.Also))
	m.rowsPerRequest = rowsPerRequest(sc)
	m.room, m.changes = stateChanges(sc, m.kept, m.worst)
	fixed := int64(bytesBase)
	fixed = sat.Add(fixed, sat.Mul(m.clients, bytesPerClient))
	fixed = sat.Add(fixed, histogramBytes(sc))
	fixed = sat.Add(fixed, sat.Mul(sat.Mul(m.keys, m.limits), bytesPerKey))
	fixed = sat.Add(fixed, sat.Mul(m.pairs, bytesPerPair))
	for _, l := range sc.Limits() {
		if p := l.Params; p.Window > 0 {
			// A window algorithm is measured against a sliding log, which
			// keeps a timestamp per admitted request: at most the limit per
			// key, and never more than the requests sent.
			perKey := saturate(math.Ceil(p.Rate.PerSecond() * p.Window.Seconds()))
			fixed = sat.Add(fixed, sat.Mul(min(Estimate(sc), sat.Mul(m.keys, perKey)), bytesPerLogEntry))
		}
	}
	m.fixed = sat.Add(fixed, elsewhereBytes(sc, m.keys, m.worst))
	return m
}

// elsewhereBytes bounds what the topologies that count elsewhere hold
// besides their jars: a synced server's admissions until its push and a
// region's on their way to the others (at most what is sent, and at most
// every key's most in an interval, or a lag, on every copy), an owner
// node's slot per key and its queued hits, a two-tier server's local
// bucket per key.
func elsewhereBytes(sc Scenario, keys, worst int64) int64 {
	t := sc.Topology
	servers := int64(max(sc.Servers, 1))
	// inFlight bounds what pairs (key, copy) pairs admit in a span: each
	// at most an exact copy's most in it.
	inFlight := func(span time.Duration, pairs int64) int64 {
		alg, err := sc.NewAlgorithm()
		most := worst
		if err == nil {
			if c, ok := blindBound(alg, max(span, time.Microsecond), 0, 1); ok {
				most = min(worst, sat.Mul(pairs, c))
			}
		}
		return sat.Mul(most, bytesPerSent)
	}
	switch t.RunsAs() {
	case Synced:
		return inFlight(t.SyncInterval, sat.Mul(keys, servers))
	case Regions:
		if t.ReplicationLag < 0 {
			return 0
		}
		// A key is admitted in the regions its clients are served in,
		// and in the next one up while theirs is down.
		homes := map[[2]string]bool{}
		for _, c := range sc.Clients {
			homes[[2]string{KeyOf(c, sc.Limit.Key), c.Region}] = true
		}
		copies := int64(len(homes))
		if slices.ContainsFunc(sc.Faults, func(f Fault) bool { return f.Region != "" }) {
			copies *= 2
		}
		regions := int64(len(t.Regions))
		return sat.Mul(inFlight(t.ReplicationLag, max(copies, 1)), max(regions-1, 1))
	case Owner:
		return sat.Add(sat.Mul(sat.Mul(servers, keys), 4), sat.Mul(min(worst, sat.Mul(servers, keys)), bytesPerSent))
	case TwoTier:
		return sat.Mul(min(worst, sat.Mul(servers, keys)), bytesPerPair)
	}
	return 0
}

// at is the estimate at a step of step: what grows with the steps is the
// timeline's rows (at most steps × clients) and the state series' points
// (statePoints).
func (m memoryModel) at(step time.Duration) int64 {
	steps := int64(1)
	if step > 0 {
		steps = sat.Add(int64(m.sc.Duration/step), 1)
	}
	total := m.fixed
	rows := min(sat.Mul(steps, m.clients), sat.Mul(m.worst, m.rowsPerRequest))
	total = sat.Add(total, sat.Mul(rows, bytesPerRow))
	total = sat.Add(total, sat.Mul(m.statePoints(steps), sat.Mul(m.limits, bytesPerSample)))
	return sat.Mul(total/4, collectorHeadroom)
}

// sampledPairs bounds the (key, copy) pairs a run of sc holds and samples
// at each step's end, of its keys. A run whose jars are sparse (more than
// one copy, more than denseJarPairs pairs, on the memory store) holds and
// samples only the pairs a request reached: a copy per key where the
// key-hash balancer sends each key to one server and no crash moves it
// to another; else at most a pair per request (requests, the worst case
// with retries counted) and one more for a replica's copy; never more
// than keys × copies. Any other run holds and samples every pair.
func sampledPairs(sc Scenario, keys, requests int64) int64 {
	copies := int64(topology.CopyCount(topologyConfig(sc)))
	every := sat.Mul(keys, copies)
	if !onJars(sc.Topology.Store) || jarsDense(keys, copies) {
		return every
	}
	if sc.Topology.Kind == Local && sc.Balancer == KeyHash && !slices.ContainsFunc(sc.Faults, func(f Fault) bool { return f.Kind == Crash }) {
		return keys
	}
	return min(every, sat.Mul(requests, 2))
}

// statePoints bounds the points the state series of the kept (key, copy)
// pairs hold over steps steps: a series is sparse (sampler), a point where
// its room changed and its latest, so at most a point a step; and its
// room changes either when something happens to its pair or, in between,
// as it grows back towards the zero state's room (stateChanges). A key
// kept at a long fine step with one request is then a few points, not a
// point a step; a series that refills a large bucket a little every step
// is one a step.
func (m memoryModel) statePoints(steps int64) int64 {
	stretches := sat.Add(m.changes, m.kept)
	return min(sat.Mul(steps, m.kept), sat.Add(sat.Mul(m.kept, 2), sat.Mul(stretches, sat.Add(max(m.room, 0), 2))))
}

// stateChanges are the zero state's room, the most a key's room grows to,
// and how many times something may happen to the kept pairs of a run
// that sends at most requests: a request decided on a pair, a write
// replicated to another, a lease given back and replicated (at most four
// a request), and a fault (every pair, at its start and its end). Between two of those a room takes at
// most that room and two more values (from -1, no answer).
func stateChanges(sc Scenario, kept, requests int64) (room, changes int64) {
	alg, err := sc.NewAlgorithm()
	if err != nil {
		return math.MaxInt64, math.MaxInt64
	}
	var each [algorithms.MaxLimits]int64
	var policies []algorithms.Policy
	if m, ok := alg.(*algorithms.Multi); ok {
		policies = m.Policies()
	}
	remainingOf(alg, algorithms.State{}, 1, policies, &each)
	room = slices.Max(each[:max(len(policies), 1)])
	return room, sat.Add(sat.Mul(requests, 4), sat.Mul(int64(len(sc.Faults)*2), kept))
}

// rowsPerRequest bounds the timeline rows a request makes: its own step's,
// and with a leaky bucket's delay the step it is served in.
func rowsPerRequest(sc Scenario) int64 {
	for _, l := range sc.Limits() {
		if l.Algorithm == "leaky-bucket" {
			return 2
		}
	}
	return 1
}

// histogramBytes bounds the blocks the clients' latency histograms
// allocate, two a client (the run's and the step's). A histogram keeps
// histFew buckets inline and allocates nothing until a latency falls in
// one more, so a client that cannot send more than histFew requests costs
// nothing here; nor does any client of a run whose latencies are 0
// (decided locally) or its one round trip, on the shared store or the
// jars with no fault and no queue. Otherwise a client that may send n
// requests is charged an index and, for each histogram, the least of n
// and the blocks its latencies can reach (latencyBlocks).
func histogramBytes(sc Scenario) int64 {
	reach := latencyBlocks(sc)
	if reach == 0 {
		return 0
	}
	one := func(requests int64) int64 {
		if requests <= histFew {
			return 0
		}
		return 2 * sat.Add(bytesPerHistIndex, sat.Mul(min(requests, reach), bytesPerHistBlock))
	}
	var total int64
	for i := range sc.Clients {
		c := &sc.Clients[i]
		total = sat.Add(total, one(saturate(math.Ceil(arrivalsOf(*c, sc.Duration)*float64(1+c.Retry.most())))))
	}
	for _, f := range sc.Feeds {
		// A log's requests are its clients' in any share: charged as if
		// each client could have sent them all, the clients' blocks
		// bounded by the requests.
		block := f.clientsOf(sc)
		most := int64(0)
		if c := mostPersistent(block); c != nil {
			most = int64(c.Retry.most())
		}
		requests := sat.Mul(f.Requests, 1+most)
		total = sat.Add(total, sat.Mul(min(int64(len(block)), requests/(histFew+1)), one(requests)))
	}
	return total
}

// latencyBlocks bounds the histogram blocks a run's latencies reach: 0
// when a request takes 0 or the one round trip (a bucket or two, kept
// inline); the blocks up to the longest a request can wait when that is
// known (round trips, a compare-and-swap's retries of them, a leaky
// bucket's queue); every block when a fault other than a latency spike
// may stretch a request.
func latencyBlocks(sc Scenario) int64 {
	rtt, varied := int64(algorithms.At(sc.Topology.RTT)), sc.Topology.Kind == Racy
	for _, f := range sc.Faults {
		if f.Kind != Latency {
			return histBlocks
		}
		rtt, varied = max(rtt, int64(algorithms.At(f.RTT))), true
	}
	longest := sat.Mul(rtt, route.MaxCASAttempts+1)
	for _, l := range sc.Limits() {
		if l.Algorithm == "leaky-bucket" {
			// The queue holds at most Burst, drained at the rate.
			wait := saturate(math.Ceil(float64(l.Params.Burst) / max(l.Params.Rate.PerSecond(), 1e-9) * 1e6))
			longest, varied = sat.Add(longest, wait), true
		}
	}
	if !varied {
		return 0
	}
	return int64(histIndex(longest)/histBlock + 1)
}

func distinctKeys(sc Scenario) map[string]bool {
	keys := map[string]bool{}
	for _, c := range sc.Clients {
		keys[KeyOf(c, sc.Limit.Key)] = true
	}
	return keys
}

// CheckSize refuses sc, as Run would before it starts, when it is over
// opts' request budget (MaxRequests; its retries counted at their worst)
// or its memory bound (MaxMemory): a *TooBigError with the figures and
// what to change. A caller that must answer before it runs (the
// playground's `ratelim web`, which builds a page for tens of seconds)
// asks here.
func CheckSize(sc Scenario, opts Options) error {
	_, err := checkSize(sc, opts)
	return err
}

// checkSize refuses a run over its request budget or its memory bound, with
// the figures and what to change, and returns the budget. A run is over
// its budget when its arrivals are, or when its retries could take it
// there (WorstCase): refused in a moment, rather than after it has sent
// the budget's worth. The budget is still charged request by request as
// the run goes (prepare): an estimate of random arrivals is their
// expected count, which a run may exceed.
func checkSize(sc Scenario, opts Options) (int64, error) {
	budget := opts.MaxRequests
	if budget <= 0 {
		budget = DefaultMaxRequests
	}
	if est := Estimate(sc); est > budget {
		return 0, &TooBigError{Err: ErrBudget, Scenario: sc.Name, Option: "MaxRequests",
			Detail: fmt.Sprintf("would send %s, more than %s", aboutRequests(est), words.Thousands(budget)),
			Advice: "shorten the scenario or lower its rates"}
	}
	if worst, c := WorstCase(sc); worst > budget && c != nil {
		return 0, &TooBigError{Err: ErrBudget, Scenario: sc.Name, Option: "MaxRequests",
			Detail: fmt.Sprintf("could send %s if every request were refused and retried (%s retries %s, up to %s times each), more than %s",
				aboutRequests(worst), c.Name, c.Retry.Policy, words.Thousands(int64(c.Retry.most())), words.Thousands(budget)),
			Advice: "a retry policy multiplies the traffic: lower retry.max, shorten the scenario or lower its rates"}
	}
	bound := memoryBound(opts)
	model := newMemoryModel(sc, opts.StateOf)
	if need := model.at(sc.Step); need > bound {
		steps := sat.Add(int64(sc.Duration/sc.Step), 1)
		advice := "use a longer step, a shorter duration or fewer clients"
		if step, ok := model.stepThatFits(bound); ok {
			advice = fmt.Sprintf("use a longer step: %s fits, every total the same; or a shorter duration or fewer clients", words.Duration(step))
		}
		return 0, &TooBigError{Err: ErrMemory, Scenario: sc.Name, Option: "MaxMemory",
			Detail: fmt.Sprintf("would need about %s of memory, more than %s: %s steps of %s × %s",
				words.Bytes(need), words.Bytes(bound), words.Thousands(steps), sc.Step, words.Count(len(sc.Clients), "client", "clients")),
			Advice: advice}
	}
	return budget, nil
}

// memoryBound is the bytes a run may be estimated to need.
func memoryBound(opts Options) int64 {
	if opts.MaxMemory <= 0 {
		return DefaultMaxMemory
	}
	return opts.MaxMemory
}

// stepThatFits is the finest of the usual steps, longer than the
// scenario's and at most its duration, at which its memory estimate is
// within bound: what a refused long run can ask for instead of giving up
// its length.
func (m memoryModel) stepThatFits(bound int64) (time.Duration, bool) {
	for _, step := range []time.Duration{100 * time.Microsecond, time.Millisecond, 10 * time.Millisecond, 100 * time.Millisecond, time.Second, 10 * time.Second,
		time.Minute, 10 * time.Minute, time.Hour, 6 * time.Hour, 24 * time.Hour} {
		if step <= m.sc.Step || step > m.sc.Duration {
			continue
		}
		if m.at(step) <= bound {
			return step, true
		}
	}
	return 0, false
}

// budgetSpent is the error of a run whose retries took it past its budget.
func budgetSpent(name string, sent, retries, budget int64) error {
	return &TooBigError{Err: ErrBudget, Scenario: name, Option: "MaxRequests",
		Detail: fmt.Sprintf("sent %s requests, %s of them retries, and would send more than %s", words.Thousands(sent), words.Thousands(retries), words.Thousands(budget)),
		Advice: "a retry policy multiplies the traffic: lower retry.max or use backoff"}
}

// aboutRequests is an estimate of requests for a message: "about 1,234
// requests", or, where the estimate saturated, not the ceiling as if it
// were a count.
func aboutRequests(n int64) string {
	if n == math.MaxInt64 {
		return "over 9.2 × 10^18 requests (the estimate saturated)"
	}
	return "about " + words.Thousands(n) + " requests"
}

// saturate converts f to an int64, math.MaxInt64 for anything at or above
// it (or NaN), 0 below 0.
func saturate(f float64) int64 {
	switch {
	case math.IsNaN(f) || f >= math.MaxInt64:
		return math.MaxInt64
	case f <= 0:
		return 0
	}
	return int64(f)
}
