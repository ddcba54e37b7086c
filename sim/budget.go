package sim

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/internal/words"
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

// IsTooBig reports whether err is a run refused for its size (ErrBudget or
// ErrMemory): not a mistake in the scenario, but more than this machine
// was told to give it. Commands exit with a code of their own for it.
func IsTooBig(err error) bool { return errors.Is(err, ErrBudget) || errors.Is(err, ErrMemory) }

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
	for _, tr := range c.Traffic {
		n += newStream(tr, int64(algorithms.At(duration))).estimate()
	}
	return n
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
		var most *Client
		for i := max(f.FirstClient, 0); i < min(f.FirstClient+f.Clients, len(sc.Clients)); i++ {
			if c := &sc.Clients[i]; most == nil || c.Retry.most() > most.Retry.most() {
				most = c
			}
		}
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

// Bytes a run needs at its peak, measured on the recorder's structures and
// doubled for the garbage collector, which lets the heap grow to twice
// what is live before it collects (go test -run
// TestMemoryEstimateIsAnUpperBound ./sim checks them against the heap).
// The JSON is written a row at a time, so it adds nothing that grows.
const (
	bytesPerClient    = 12 << 10               // the client's run, its result, its latency histograms' index, its key's state series
	bytesPerHistBlock = 2 * (histBlock*8 + 16) // one block of a latency histogram, and its index
	bytesPerRow       = 2 * (2*160 + 144)      // a timeline row: the recorder's (160 B, in chunks with room for as many again at most) and the Result's (144 B)
	bytesPerStep      = 2 * 48                 // the step's end event in the queue (grown by doubling)
	bytesPerSample    = 72                     // a key's state in one copy at one step, and its JSON
	bytesPerPair      = 256                    // a (key, copy) pair's state in its jar, its slot, and its place in the recorder's pairs
	bytesPerKey       = 2048                   // a limiter key's run, ideal state, store entry and state series
	bytesPerLogEntry  = 8 * 2                  // a sliding log's timestamp, in the limiter and in the exact one
	bytesBase         = 4 << 20                // the run's fixed structures
)

// MaxClientsIn is the most clients, each with a key of its own, a run can
// have within bound bytes, at the least each adds to MemoryEstimate (one
// limit, one copy of the state, one step): a replay refuses a log's keys
// past it as they are read, rather than the run after the whole log.
func MaxClientsIn(bound int64) int64 {
	const perClient = bytesPerClient + bytesPerKey + bytesPerRow + bytesPerSample + bytesPerPair
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
func MemoryEstimate(sc Scenario) int64 {
	steps := int64(1)
	if sc.Step > 0 {
		steps = satAdd(int64(sc.Duration/sc.Step), 1)
	}
	clients := int64(len(sc.Clients))
	keys := int64(len(distinctKeys(sc)))
	worst, _ := WorstCase(sc)
	pairs := sampledPairs(sc, keys, worst)
	total := int64(bytesBase)
	total = satAdd(total, satMul(clients, satAdd(bytesPerClient, satMul(2*histBlocksUsed(sc), bytesPerHistBlock))))
	// A key with several limits keeps a state, and a state series, per
	// limit.
	limits := int64(1 + len(sc.Also))
	total = satAdd(total, satMul(satMul(keys, limits), bytesPerKey))
	rows := min(satMul(steps, clients), satMul(worst, 2))
	total = satAdd(total, satMul(steps, bytesPerStep))
	total = satAdd(total, satMul(rows, bytesPerRow))
	total = satAdd(total, satMul(pairs, bytesPerPair))
	total = satAdd(total, satMul(satMul(steps, pairs), satMul(limits, bytesPerSample)))
	for _, l := range sc.Limits() {
		if p := l.Params; p.Window > 0 {
			// A window algorithm is measured against a sliding log, which
			// keeps a timestamp per admitted request: at most the limit per
			// key, and never more than the requests sent.
			perKey := saturate(math.Ceil(p.Rate.PerSecond() * p.Window.Seconds()))
			total = satAdd(total, satMul(min(Estimate(sc), satMul(keys, perKey)), bytesPerLogEntry))
		}
	}
	return total
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
	copies := int64(topology.CopyCount(sc.Topology.Kind, sc.Servers))
	every := satMul(keys, copies)
	if !onJars(sc.Topology.Store) || jarsDense(keys, copies) {
		return every
	}
	if sc.Topology.Kind == Local && sc.Balancer == KeyHash && !slices.ContainsFunc(sc.Faults, func(f Fault) bool { return f.Kind == Crash }) {
		return keys
	}
	return min(every, satMul(requests, 2))
}

// histBlocksUsed bounds the blocks one of a client's two latency
// histograms allocates. Latency is the round trip, plus a leaky bucket's
// queueing and a latency fault's added delay: without those a request
// takes 0 (decided locally) or one round trip, a block or two; with them it
// may take any value, and every block is counted.
func histBlocksUsed(sc Scenario) int64 {
	if len(sc.Faults) > 0 {
		return histBlocks
	}
	for _, l := range sc.Limits() {
		if l.Algorithm == "leaky-bucket" {
			return histBlocks
		}
	}
	return 2
}

func distinctKeys(sc Scenario) map[string]bool {
	keys := map[string]bool{}
	for _, c := range sc.Clients {
		keys[KeyOf(c, sc.Limit.Key)] = true
	}
	return keys
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
	if need := MemoryEstimate(sc); need > bound {
		steps := satAdd(int64(sc.Duration/sc.Step), 1)
		advice := "use a longer step, a shorter duration or fewer clients"
		if step, ok := stepThatFits(sc, bound); ok {
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

// stepThatFits is the finest of the usual steps, longer than sc's and at
// most its duration, at which sc's memory estimate is within bound: what a
// refused long run can ask for instead of giving up its length.
func stepThatFits(sc Scenario, bound int64) (time.Duration, bool) {
	for _, step := range []time.Duration{100 * time.Microsecond, time.Millisecond, 10 * time.Millisecond, 100 * time.Millisecond, time.Second, 10 * time.Second,
		time.Minute, 10 * time.Minute, time.Hour, 6 * time.Hour, 24 * time.Hour} {
		if step <= sc.Step || step > sc.Duration {
			continue
		}
		coarse := sc
		coarse.Step = step
		if MemoryEstimate(coarse) <= bound {
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

// satMul is a × b for non-negative a and b, math.MaxInt64 if it overflows.
func satMul(a, b int64) int64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(lo)
}

// satAdd is a + b for non-negative a and b, math.MaxInt64 if it overflows.
func satAdd(a, b int64) int64 {
	if s := a + b; s >= a {
		return s
	}
	return math.MaxInt64
}
