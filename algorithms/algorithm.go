package algorithms

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/ratelim/ratelim/algorithms/internal/exact"
)

// Time is an instant in whole microseconds since an epoch the caller chooses:
// 0 for the simulator's virtual clock, the Unix epoch for a live server.
type Time int64

// At returns the Time d after the epoch, truncated to the microsecond.
func At(d time.Duration) Time { return Time(d / time.Microsecond) }

// FromTime returns t as microseconds since the Unix epoch.
func FromTime(t time.Time) Time { return Time(t.UnixMicro()) }

// Duration returns t as the time elapsed since the epoch.
func (t Time) Duration() time.Duration { return time.Duration(t) * time.Microsecond }

// Never is the RetryAfter of a request that can never be admitted: its cost
// is larger than the limiter's capacity, so waiting will not help.
const Never = time.Duration(math.MaxInt64)

// Decision is a limiter's answer to one request: everything an HTTP server
// needs to write 200 or 429 with Retry-After and the RateLimit headers.
type Decision struct {
	// Allowed reports whether the request may pass.
	Allowed bool
	// Limit is the capacity: the burst of a bucket, the requests per window.
	Limit int64
	// Remaining is how many more unit-cost requests would be admitted at
	// this instant, after this one.
	Remaining int64
	// RetryAfter is, for a rejected request, how long until the same request
	// would be admitted if nothing else arrived (Never if it never would);
	// 0 for an admitted one.
	RetryAfter time.Duration
	// ResetAfter is how long until the limiter is back to its full capacity
	// if nothing else arrives.
	ResetAfter time.Duration
	// Delay is how long an admitted request waits before it is served. Only
	// the leaky bucket, which queues instead of letting bursts through, sets it.
	Delay time.Duration
	// Binding is, on a key with several limits ([Multi]), which limit
	// Limit and Remaining describe, by its index: the refusing one that
	// asks the longest wait, else the one with the fewest requests left.
	// BindingResetAfter is that limit's own reset (ResetAfter is the
	// longest of all of them). Both are 0 on a single limit's decision.
	Binding           int
	BindingResetAfter time.Duration
	// WouldReject is set on an admitted request that a limit in shadow
	// mode ([Policy].Shadow) would have refused.
	WouldReject bool
	// Lease names the lease an admitted request holds on a [Concurrency]
	// limiter (its expiry instant), to give back with Release when the
	// request completes; 0 for every other algorithm.
	Lease Time
}

// State is what a limiter remembers about one key. Its fields mean different
// things to different algorithms (each algorithm's doc says which); a store
// keeps it opaque. The zero State is a key never seen.
//
// State is a plain value so that a store can copy it, a replica can hold a
// stale copy of it, and a racy read-modify-write can overwrite it, just as
// Redis would. Steps never modify the State they are given: the Log slice of a
// new State is never shared with the old one's.
type State struct {
	// T is an instant in microseconds: the token bucket's last refill, the
	// theoretical arrival time of GCRA and the leaky bucket, the start of
	// the current window for the window algorithms.
	T int64
	// N is an amount: the token bucket's deficit, GCRA's sub-microsecond
	// remainder, the count in the current window.
	N int64
	// Prev is the sliding window's count in the previous window.
	Prev int64
	// Log is the sliding log's admitted instants, oldest first.
	Log []int64
	// Sub holds one State per limit of a key with several ([Multi]), in
	// the limits' order; the fields above are then unused.
	Sub []State
}

// Capped is st with its log's capacity cut to its length: an append to
// either copy then moves to an array of its own, never writing into the
// one they share. A store that appends to its logs in place hands out,
// and keeps, capped states.
//
// A State with Sub gets a Sub of its own, each capped: a store steps a
// key's Sub in place ([Multi.StepInPlace]), so a copy handed out must not
// share it.
func (st State) Capped() State {
	st.Log = st.Log[:len(st.Log):len(st.Log)]
	if st.Sub != nil {
		sub := make([]State, len(st.Sub))
		for i, s := range st.Sub {
			sub[i] = s.Capped()
		}
		st.Sub = sub
	}
	return st
}

// Algorithm is one rate limiter with its parameters fixed.
type Algorithm interface {
	// Name is the algorithm's name, as `ratelim algorithms` lists it.
	Name() string
	// Params returns the parameters the algorithm was built with.
	Params() Params
	// Step decides one request of the given cost at now on a key whose
	// previous state is prev, and returns the key's new state. It is a pure
	// function: same arguments, same result, prev untouched. A cost of 0
	// admits nothing and changes nothing that matters: it peeks. A negative
	// cost counts as 0.
	Step(prev State, now Time, cost int64) (State, Decision)
}

// Params are the numbers that configure a limiter. Which ones an algorithm
// reads is in its doc comment and in [Catalog].
type Params struct {
	// Rate is the sustained rate: tokens refilled, queue drained, or (times
	// Window) requests per window.
	Rate Rate
	// Burst is the bucket's size (token bucket, GCRA) or the queue's
	// capacity (leaky bucket): how many requests may arrive at once.
	Burst int64
	// Window is the window length of fixed-window, sliding-log and
	// sliding-window. The limit per window is Rate × Window.
	Window time.Duration

	// Origin is the wall-clock instant that Time 0 stands for, in
	// microseconds since the Unix epoch. The bucket algorithms and the
	// sliding log never read it: their arithmetic depends only on
	// differences of instants. The fixed and sliding windows align their
	// windows to the wall clock at Origin + now, as a live server's
	// windows keyed by floor(unix / window) are. A peer model that keeps
	// wall-clock time the way its library does (redis_rate's float seconds
	// since 2017, a window aligned to the clock's minutes) computes with
	// Origin + now, so that its rounding is the rounding it has at today's
	// magnitudes. A live server, whose Time is already Unix microseconds,
	// leaves it 0.
	Origin Time
	// Delay and NoDelay are nginx limit_req's delay=N and nodelay: of the
	// requests over the rate (at most Burst), the first Delay pass at once
	// and the rest are held back to the rate; NoDelay passes them all at
	// once. Only the nginx-limit-req model reads them.
	Delay   int64
	NoDelay bool
}

// Info describes one algorithm for people: what `ratelim algorithms` prints.
type Info struct {
	Name   string
	Params []string                        // the Params fields it reads, as scenario YAML names them
	Good   string                          // what it is good at
	Bad    string                          // its known flaw
	Memory string                          // what it stores per key
	Build  func(Params) (Algorithm, error) // builds it; New(Name, p) is the same
	// Peer is set for a model of a limiter library people deploy, nil for
	// the six exact algorithms: where it comes from and what it does that
	// the exact algorithm of its family does not.
	Peer *Provenance
}

// Provenance says which library a peer model reproduces, from which of its
// files, and with what behaviour, flaws included.
type Provenance struct {
	Library string // the module or project, e.g. "github.com/go-redis/redis_rate/v10"
	Version string // the version modelled, e.g. "v10.0.1"
	Source  string // the file and function modelled, e.g. "lua.go (allowN script)"
	Family  string // the exact algorithm it is a variant of, e.g. "gcra"
	Quirk   string // what it does that Family does not, in a sentence
	// Clock is "store" when the library reads its store's clock (Redis
	// TIME) rather than the API server's, so a skewed server does not move
	// it; "" for the caller's clock.
	Clock string
	// Write is how the library writes a key's state to a shared store:
	// "" when one atomic operation reads and writes it (a Lua script, an
	// INCRBY, a mutex in process), so that servers sharing it never race;
	// "cas" when it reads, decides, then writes with a compare-and-swap
	// that fails if another server wrote in between, and starts again
	// (throttled, up to ten times, then an error).
	Write string
}

// Catalog lists the algorithms in teaching order, then the other limiters,
// then the kinds other packages registered (the peer models of package
// algorithms/peers): a copy, which the caller may change.
func Catalog() []Info { return slices.Concat(catalog, limiterCatalog, registered) }

// registered holds the kinds other packages added with [Register], in the
// order they were added. It is written only by package initialisation,
// which Go runs in one goroutine before main, and read-only afterwards.
var registered []Info

// Register adds kinds to the catalog, after those already in it: a package
// that defines limiters (algorithms/peers) registers them from its init,
// so that [Catalog], [Lookup], [New] and the lists of names know them
// once the package is linked in, and no list of names is written twice. A
// program links it in by importing it, blank if it uses no name of its
// own (package sim does, so everything that runs a scenario has them).
//
// Register panics on a name already in the catalog or an Info without a
// Name or Build: a programming error, found the first time the program
// starts.
func Register(kinds ...Info) {
	for _, k := range kinds {
		if k.Name == "" || k.Build == nil {
			panic(fmt.Sprintf("algorithms: Register(%q): a kind needs a Name and a Build", k.Name))
		}
		if _, dup := Lookup(k.Name); dup {
			panic(fmt.Sprintf("algorithms: Register(%q): the name is already in the catalog", k.Name))
		}
		registered = append(registered, k)
	}
}

// Exact lists the six exact algorithms alone, in teaching order.
func Exact() []Info { return slices.Clone(catalog) }

var catalog = []Info{
	{Name: "token-bucket", Params: []string{"rate", "burst"}, Memory: "2 integers",
		Good:  "bursts up to burst, then exactly rate; cheap; the default",
		Bad:   "a full bucket lets burst through at once, after every lull",
		Build: func(p Params) (Algorithm, error) { return NewTokenBucket(p.Rate, p.Burst) }},
	{Name: "gcra", Params: []string{"rate", "burst"}, Memory: "1 instant (2 integers)",
		Good:  "the token bucket's decisions, kept as one instant (the TAT)",
		Bad:   "harder to explain; remaining tokens are derived, not stored",
		Build: func(p Params) (Algorithm, error) { return NewGCRA(p.Rate, p.Burst) }},
	{Name: "leaky-bucket", Params: []string{"rate", "burst"}, Memory: "1 instant (2 integers)",
		Good:  "smooths output to exactly rate through a queue of size burst",
		Bad:   "adds latency (up to burst ÷ rate) instead of failing fast",
		Build: func(p Params) (Algorithm, error) { return NewLeakyBucket(p.Rate, p.Burst) }},
	{Name: "fixed-window", Params: []string{"rate", "window"}, Memory: "2 integers",
		Good: "simplest: one counter per aligned window (INCR + EXPIRE)",
		Bad:  "admits 2 × limit within one window's length at a boundary",
		Build: func(p Params) (Algorithm, error) {
			f, err := NewFixedWindow(p.Rate, p.Window)
			if err != nil {
				return nil, err
			}
			return f.WithOrigin(p.Origin), nil
		}},
	{Name: "sliding-log", Params: []string{"rate", "window"}, Memory: "1 instant per admitted request",
		Good:  "exact: never more than limit in any window of that length",
		Bad:   "a timestamp per admitted request: memory grows with limit",
		Build: func(p Params) (Algorithm, error) { return NewSlidingLog(p.Rate, p.Window) }},
	{Name: "sliding-window", Params: []string{"rate", "window"}, Memory: "3 integers",
		Good: "nearly exact for two counters (weights the previous window)",
		Bad:  "an estimate: assumes the last window's requests were even",
		Build: func(p Params) (Algorithm, error) {
			s, err := NewSlidingWindow(p.Rate, p.Window)
			if err != nil {
				return nil, err
			}
			return s.WithOrigin(p.Origin), nil
		}},
}

// limiterCatalog lists the limiters that are not rate limiters: they bound
// something else than requests per unit of time.
var limiterCatalog = []Info{
	{Name: "concurrency", Params: []string{"max_in_flight", "lease_ttl"}, Memory: "1 instant per request in flight",
		Good:  "bounds requests in flight, whatever their rate or duration",
		Bad:   "a crashed server's leases hold their slots until the TTL",
		Build: func(p Params) (Algorithm, error) { return NewConcurrency(p.Burst, p.Window) }},
}

// Names returns the algorithms' names in teaching order, then the other
// limiters', then the peer models'.
func Names() []string {
	all := Catalog()
	names := make([]string, len(all))
	for i, info := range all {
		names[i] = info.Name
	}
	return names
}

// ExactNames returns the six exact algorithms' names in teaching order: what
// compare runs unless told otherwise.
func ExactNames() []string { return Names()[:len(catalog)] }

// PeerNames returns the peer models' names (those whose Info has a Peer),
// in the order Names lists them.
func PeerNames() []string {
	var names []string
	for _, info := range Catalog() {
		if info.Peer != nil {
			names = append(names, info.Name)
		}
	}
	return names
}

// Lookup returns the named algorithm's Info.
func Lookup(name string) (Info, bool) {
	for _, info := range Catalog() {
		if info.Name == name {
			return info, true
		}
	}
	return Info{}, false
}

// WithDefaults returns p completed for the algorithm name by the one rule
// ratelim uses when an algorithm is chosen apart from the limit it was
// written with (sim --algorithm, compare, an expectation's with:, the
// TUI's algorithm key): a scenario written for a bucket has no window, and
// one written for a window no burst, so a missing window is one second and
// a missing burst is one second of the rate (at least 1). It returns the
// names of the parameters it filled, for the run to say so; a parameter
// the algorithm does not read is left as it is.
func WithDefaults(name string, p Params) (Params, []string) {
	var filled []string
	for _, info := range Catalog() {
		if info.Name != name {
			continue
		}
		for _, param := range info.Params {
			switch {
			case param == "window" && p.Window <= 0:
				p.Window = time.Second
				filled = append(filled, "window")
			case param == "burst" && p.Burst <= 0:
				p.Burst = max(1, int64(p.Rate.PerSecond()))
				filled = append(filled, "burst")
			}
		}
	}
	return p, filled
}

// New builds the named algorithm from p. An unknown name or a parameter out
// of range is an error that names the parameter.
func New(name string, p Params) (Algorithm, error) {
	if info, ok := Lookup(name); ok {
		return info.Build(p)
	}
	names := Names()
	sort.Strings(names)
	return nil, &ParamError{Param: "algorithm", Msg: fmt.Sprintf("unknown algorithm %q (want one of %v)", name, names)}
}

// ParamError reports a parameter a limiter cannot be built with.
type ParamError struct {
	Param string // "rate", "burst", "window" or "algorithm"
	Msg   string
}

func (e *ParamError) Error() string { return e.Param + ": " + e.Msg }

// ceilDiv is a / b rounded towards plus infinity, for b > 0.
func ceilDiv(a, b int64) int64 { return -exact.FloorDiv(-a, b) }
