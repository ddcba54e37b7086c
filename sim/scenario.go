package sim

import (
	"fmt"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/store"
	"github.com/ratelim/ratelim/topology"
)

// Scenario is everything a run needs: traffic, limiter, topology, faults.
// Package scenarios reads it from YAML (with file:line errors); a Go program
// can build one directly. Durations are virtual time from 0.
type Scenario struct {
	Name     string
	Summary  string
	Duration time.Duration
	Seed     uint64
	// Step is the width of the recorder's buckets: the timeline's resolution.
	Step     time.Duration
	Servers  int
	Balancer Balancer
	// Limit is the key's limit, or the first of its limits when Also
	// lists more.
	Limit Limit
	// Also are the key's further limits (a per-hour quota beside a
	// per-second one): a request passes only if Limit and every one of
	// these admit it, decided as one step ([algorithms.Multi]). Each is
	// named, and so is Limit then; their Key is Limit's.
	Also []Limit
	// Shedder, when set, is the fleet's priority load shedder: a request
	// the limit admitted is then served only if the fleet has capacity
	// for its priority, and answered 503 otherwise.
	Shedder  *Shedder
	Topology Topology
	// Clients are already expanded: a YAML client with count: 8 is eight
	// Clients here, {i} replaced by 1..8.
	Clients []Client
	// Feeds send for clients from outside the simulator (an access log
	// replayed), beside or instead of their Traffic.
	Feeds  []Feed
	Faults []Fault
	// WallClock is the wall-clock instant that virtual time 0 stands for.
	// The fixed and sliding windows align their windows to it (as a live
	// server's, keyed by floor(unix / window), are: a window that does
	// not divide a day starts where the clock puts it), and so does a
	// peer model that keeps wall-clock time (redis_rate's float seconds
	// since 2017, envoy's windows aligned to the clock's minutes); the
	// zero time means DefaultWallClock. A live run's observed scenario
	// (live.ObservedScenario) sets it to the run's start.
	WallClock time.Time
}

// DefaultWallClock is the wall-clock instant virtual time 0 stands for
// unless a scenario says otherwise: a fixed recent one, so that a peer
// that stores float seconds since an epoch rounds as it does today, and
// the same scenario gives the same bytes every day. It is a midnight, so a
// window that divides a day starts at virtual 0.
var DefaultWallClock = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// Origin is WallClock (or DefaultWallClock) as the algorithms' Params.Origin.
func (sc *Scenario) Origin() algorithms.Time {
	if sc.WallClock.IsZero() {
		return algorithms.FromTime(DefaultWallClock)
	}
	return algorithms.FromTime(sc.WallClock)
}

// NewAlgorithm builds the scenario's limiter, its Params.Origin set to
// the scenario's wall clock: with Also, an [algorithms.Multi] whose
// shadowed limits enforce from their ShadowUntil in virtual time.
func (sc *Scenario) NewAlgorithm() (algorithms.Algorithm, error) {
	return sc.NewAlgorithmAt(0, sc.Origin())
}

// NewAlgorithmAt builds the scenario's limiter for a clock on which the
// run starts at start (0 for the simulator; the fleet's start in Unix
// microseconds for a live server, whose origin is then 0): it places the
// instants at which shadowed limits of several begin to enforce.
func (sc *Scenario) NewAlgorithmAt(start, origin algorithms.Time) (algorithms.Algorithm, error) {
	if len(sc.Also) == 0 {
		p := sc.Limit.Params
		p.Origin = origin
		return algorithms.New(sc.Limit.Algorithm, p)
	}
	limits := sc.Limits()
	policies := make([]algorithms.Policy, len(limits))
	for i, l := range limits {
		p := l.Params
		p.Origin = origin
		alg, err := algorithms.New(l.Algorithm, p)
		if err != nil {
			return nil, err
		}
		policies[i] = algorithms.Policy{Name: l.Name, Algorithm: alg, Shadow: l.Shadow}
		if l.Shadow && l.ShadowUntil > 0 {
			policies[i].ShadowUntil = start + algorithms.At(l.ShadowUntil)
		}
	}
	return algorithms.NewMulti(policies)
}

// Limits returns Limit and Also, in order: every limit of a key.
func (sc *Scenario) Limits() []Limit {
	return append([]Limit{sc.Limit}, sc.Also...)
}

// Balancer is how requests are spread over the API servers.
type Balancer = topology.Balancer

const (
	RoundRobin = topology.RoundRobin // each request to the next server in turn
	Random     = topology.Random     // each request to a server drawn at random
	KeyHash    = topology.KeyHash    // each limiter key always to the same server
)

// Limit is the limiter every server applies.
type Limit struct {
	// Name names the limit among a key's several (Scenario.Also), as the
	// RateLimit-Policy header does: "per-second", "hourly". "" for a key's
	// only limit.
	Name      string
	Algorithm string            // a name from algorithms.Names()
	Params    algorithms.Params // rate, burst, window
	Key       KeyBy
	// Shadow runs the limit in shadow mode (a dark launch): every request
	// is decided and counted, those it would refuse are let through and
	// counted as would_reject. With ShadowUntil set, the limit enforces
	// from that instant of the run on; 0 is shadow for the whole run.
	Shadow      bool
	ShadowUntil time.Duration
	// DefaultWindow and DefaultBurst say that WithAlgorithm filled that
	// parameter by algorithms.WithDefaults rather than the scenario giving
	// it: the run's header says so.
	DefaultWindow, DefaultBurst bool
}

// WithAlgorithm returns sc limited by the named algorithm instead of its
// own, the parameters it lacks filled by [algorithms.WithDefaults] (and
// named in Limit.Defaulted), and an error that names the parameter if the
// limit still does not suit it. Every command that switches a scenario's
// algorithm goes through here, so they all run the same limit.
func WithAlgorithm(sc Scenario, name string) (Scenario, error) {
	if (name == "concurrency") != (sc.Limit.Algorithm == "concurrency") {
		// One counts requests in flight, the others requests per unit of
		// time: neither's numbers mean anything to the other.
		return sc, fmt.Errorf("algorithm: %s counts requests %s and the scenario's %s requests %s (want a scenario written for it)",
			name, countsWhat(name), sc.Limit.Algorithm, countsWhat(sc.Limit.Algorithm))
	}
	p, filled := algorithms.WithDefaults(name, sc.Limit.Params)
	if _, err := algorithms.New(name, p); err != nil {
		return sc, err
	}
	if err := PeerStore(name, sc.Topology.Store); err != nil {
		return sc, err
	}
	sc.Limit.Algorithm, sc.Limit.Params = name, p
	for _, f := range filled {
		switch f {
		case "window":
			sc.Limit.DefaultWindow = true
		case "burst":
			sc.Limit.DefaultBurst = true
		}
	}
	return sc, nil
}

// countsWhat is what an algorithm counts, for a message.
func countsWhat(name string) string {
	if name == "concurrency" {
		return "in flight"
	}
	return "per unit of time"
}

// KeyBy says which identity of a request its limiter key is.
type KeyBy string

const (
	KeyAuto   KeyBy = "auto" // api-key, else user, else ip
	KeyAPIKey KeyBy = "api-key"
	KeyUser   KeyBy = "user"
	KeyIP     KeyBy = "ip"
)

// TopologyKind is where the counter lives.
type TopologyKind = topology.Kind

const (
	Local      = topology.Local      // a jar per server: N servers admit N × the limit
	Shared     = topology.Shared     // one atomic store, one round trip per decision
	Racy       = topology.Racy       // one store, read at t and written at t + RTT
	SplitBrain = topology.SplitBrain // a primary and a replica that a partition separates
	Cluster    = topology.Cluster    // Redis Cluster: masters own hash slots, replicas take over by majority
	Synced     = topology.Synced     // a jar per server, its admissions pushed to one shared copy every SyncInterval
	TwoTier    = topology.TwoTier    // a local bucket per server in front of one shared store
	Owner      = topology.Owner      // gubernator's GLOBAL: a node per server answers from its cache, an owner per key
	Regions    = topology.Regions    // a store per region, replicated later or not at all
)

// Region is one region of a regions topology: its name, which names its
// store, and its API servers, which Scenario.Servers adds up.
type Region = topology.RegionConfig

// ReplicationNone is the ReplicationLag of regions that share nothing.
const ReplicationNone = time.Duration(topology.ReplicationNone)

// DefaultSyncWait and DefaultBatchLimit are an owner topology's SyncWait
// (in µs) and BatchLimit when its scenario gives none: gubernator's
// GlobalSyncWait and GlobalBatchLimit defaults.
const (
	DefaultSyncWait   = topology.DefaultSyncWait
	DefaultBatchLimit = topology.DefaultBatchLimit
	MaxBatchLimit     = 1_000_000
)

// LocalTier is a two-tier topology's local limit on each server: a token
// bucket of Rate and Burst per key (Envoy's local rate limit filter:
// max_tokens, and tokens_per_fill every fill_interval, refilled here
// continuously rather than a fill at a time).
type LocalTier struct {
	Rate  algorithms.Rate
	Burst int64
}

// DefaultSyncInterval is a synced topology's SyncInterval when its
// scenario gives none: gubernator's GlobalSyncWait (config.go,
// SetDefaults), within Kong's sync_rate range (≥ 0.02 s).
const DefaultSyncInterval = 100 * time.Millisecond

// SyncNever is the SyncInterval of jars that never push: the local
// topology, reached as a synced topology's limit.
const SyncNever = topology.SyncNever

// MaxSyncInterval bounds a synced topology's SyncInterval.
const MaxSyncInterval = time.Hour

// ClockSource says whose clock a decision uses.
type ClockSource string

const (
	ServerClock ClockSource = "server" // the API server's, passed to the store as an argument
	StoreClock  ClockSource = "store"  // the store's own, as a Lua script calling TIME does
)

// DefaultClusterTimeout is a cluster's Timeout when its scenario gives
// none: a middleware's deadline for its store call. Without one, go-redis
// waits its ReadTimeout (5 s) per attempt, up to 4 attempts; a Timeout of
// 20 s shows that.
const DefaultClusterTimeout = 100 * time.Millisecond

// WithTopology is sc on topology kind: switched to a cluster it had no
// shape for (no masters), the shape a scenario file gets by default (three
// masters with a replica each, the default node timeout, a timeout of
// DefaultClusterTimeout unless sc has one), as --topology cluster, the
// TUI's t key and compare's columns switch it.
//
// Switched on from there, what it filled in is taken out again, so that
// cycling through the kinds (the TUI's t key) leaves each other kind as
// sc had it.
func WithTopology(sc Scenario, kind TopologyKind) Scenario {
	t := &sc.Topology
	if t.clusterFilled && kind != Cluster {
		t.Masters, t.Replicas, t.NodeTimeout = 0, 0, 0
		if t.Timeout == DefaultClusterTimeout {
			t.Timeout = 0
		}
		t.clusterFilled = false
	}
	if t.syncFilled && kind != Synced {
		t.SyncInterval, t.syncFilled = 0, false
	}
	was := t.Kind
	t.Kind = kind
	if t.localFilled && kind != TwoTier {
		t.Local, t.localFilled = nil, false
	}
	if kind == TwoTier && t.Local == nil {
		t.Local, t.localFilled = defaultLocalTier(sc), true
	}
	if kind == Synced && was != Synced && t.SyncInterval == 0 {
		t.SyncInterval, t.syncFilled = DefaultSyncInterval, true
	}
	if kind == Cluster && t.Masters == 0 {
		t.Masters, t.Replicas, t.NodeTimeout = topology.DefaultMasters, 1, topology.DefaultNodeTimeout
		t.clusterFilled = true
		if t.Timeout == 0 {
			t.Timeout = DefaultClusterTimeout
		}
	}
	return sc
}

// PrimaryNeverStops is the PrimaryStopsAfter of a primary that keeps taking
// writes for the whole partition (the zero value, 0, is one that stops at
// once). It was called Never, which algorithms.Never, a retry-after of
// forever, made read as its opposite.
const PrimaryNeverStops = topology.PrimaryNeverStops

// FailoverNever is the FailoverAfter of a split brain whose replica is
// never promoted: the cut-off servers fail for the whole partition.
const FailoverNever = topology.FailoverNever

// Topology is where the limiter's state lives and how the servers reach it.
type Topology struct {
	Kind TopologyKind
	// Store is "memory" (the default), "miniredis" or a redis:// URL.
	Store   string
	RTT     time.Duration // one store round trip
	OnError store.Policy  // what a server does when the store fails
	Clock   ClockSource
	// Split-brain only.
	ReplicationLag    time.Duration // how far the replica trails the primary
	FailoverAfter     time.Duration // cut-off servers see errors this long, then use the replica; FailoverNever never
	PrimaryStopsAfter time.Duration // when the isolated primary stops taking writes; PrimaryNeverStops
	// Cluster only: masters (topology.DefaultMasters when 0), each with
	// Replicas; NodeTimeout (topology.DefaultNodeTimeout when 0);
	// PartialCoverage is cluster-require-full-coverage no. A cluster's
	// ReplicationLag is each replica's.
	Masters, Replicas int
	NodeTimeout       time.Duration
	PartialCoverage   bool
	// Timeout is how long a server waits for a store that does not answer
	// (out, or across a partition) before the fail policy decides: its
	// client's deadline. 0 answers at once, as a refused connection does.
	Timeout time.Duration
	// Breaker, if set, is a circuit breaker in front of each server's
	// store calls (route.Breaker): after Failures in a row it fails every
	// call at once for Cooldown, then probes.
	Breaker *Breaker
	// SyncInterval is, on a synced topology, how often each server pushes
	// its admissions to the shared copy (topology.Synced): 0 at every
	// request (the shared store's decisions), SyncNever never (the local
	// jars').
	SyncInterval time.Duration
	// SyncWait and BatchLimit are, on an owner topology, how long a node
	// waits after the first hit (or change) it queues before it sends
	// them, and how many keys make it send at once (gubernator's
	// GlobalSyncWait and GlobalBatchLimit); 0 is gubernator's default.
	SyncWait   time.Duration
	BatchLimit int
	// Regions are, on a regions topology, the regions in order, holding
	// the servers in order; ReplicationLag is then how long an admission
	// takes to reach the other regions' stores, or ReplicationNone.
	Regions []Region
	// Local is, on a two-tier topology, each server's local limit in
	// front of the shared one (topology.TwoTier).
	Local *LocalTier
	// clusterFilled says WithTopology gave it a cluster's shape, to take
	// out when it switches to another kind; syncFilled, its
	// DefaultSyncInterval.
	clusterFilled, syncFilled, localFilled bool
}

// defaultLocalTier is a two-tier topology's local limit when none is
// given (--topology two-tier, the TUI's t key): each server's share of
// the limit's rate, and its burst, so that N servers' local tiers
// together pass what the shared limit admits when the balancer spreads
// evenly.
func defaultLocalTier(sc Scenario) *LocalTier {
	p := sc.Limit.Params
	servers := int64(max(sc.Servers, 1))
	rate := p.Rate
	if rate.N > 0 && rate.Per > 0 {
		// N/servers per Per, kept whole: servers × N per servers × Per.
		rate = algorithms.Rate{N: rate.N, Per: rate.Per * time.Duration(servers)}
	}
	if p.Window > 0 && rate.N > 0 {
		// A window's limit as its burst.
		return &LocalTier{Rate: rate, Burst: max(1, rate.N*int64(p.Window)/int64(p.Rate.Per)/servers+1)}
	}
	return &LocalTier{Rate: rate, Burst: max(1, p.Burst/servers+1)}
}

// RunsAs is the kind the simulator runs t as: a synced topology that
// syncs at every request is the shared store, one that never syncs the
// local jars, exactly (the differential tests hold them to it).
func (t Topology) RunsAs() TopologyKind {
	switch {
	case t.Kind != Synced:
		return t.Kind
	case t.SyncInterval == 0:
		return Shared
	case t.SyncInterval < 0:
		return Local
	}
	return Synced
}

// Breaker is a circuit breaker's settings: Failures in a row open it, for
// Cooldown.
type Breaker struct {
	Failures int
	Cooldown time.Duration
}

// StoreLabel names t's store for a person to read: its kind, or its URL
// without the password (store.Redacted).
func (t Topology) StoreLabel() string { return store.Redacted(t.Store) }

// Client is one source of requests.
type Client struct {
	Name string
	// The request's identities; the limiter key is one of them (Limit.Key).
	APIKey, User, IP string
	// Traffic is one or more patterns, superposed.
	Traffic []Traffic
	Retry   Retry
	// Priority is how much the client's requests matter to a load
	// shedder (Scenario.Shedder): "critical", "normal" or "sheddable";
	// "" is normal.
	Priority string
	// Region is, on a regions topology, the region that serves the
	// client, while it is up.
	Region string
	// Service is how long the API takes to serve one of its admitted
	// requests: what keeps a request in flight, and so what a
	// concurrency limit counts. The zero Service serves at once.
	Service Service
}

// Shedder is a priority load shedder over the whole fleet
// ([algorithms.Shedder]): a token bucket of the fleet's capacity, of which
// each priority must leave its reserve for those above it.
type Shedder struct {
	// Capacity is what the fleet serves a second, Burst what it absorbs
	// at once.
	Capacity algorithms.Rate
	Burst    int64
	// Reserve is, per priority (critical, normal, sheddable), the share
	// of Burst its requests must leave: 0 for critical, 0.2 for normal
	// (a fifth kept for critical traffic), 0.5 for sheddable. A share's
	// tokens are the decimal written times Burst, rounded down exactly
	// ([algorithms.ReserveOf]): 0.29 of 100 keeps 29.
	Reserve [3]float64
}

// New builds the algorithm.
func (s *Shedder) New() (*algorithms.Shedder, error) {
	var reserve [3]int64
	for i, share := range s.Reserve {
		reserve[i] = algorithms.ReserveOf(s.Burst, share)
	}
	return algorithms.NewShedder(s.Capacity, s.Burst, reserve)
}

// Service is a distribution of service times.
type Service struct {
	// Mean is the average time to serve a request; 0 serves at once.
	Mean time.Duration
	// Exponential draws each time from an exponential distribution of
	// that mean (a few slow requests among many quick ones), from the
	// run's seeded source; otherwise every request takes Mean.
	Exponential bool
}

// Pattern is the shape of a client's arrivals.
type Pattern string

const (
	Constant Pattern = "constant" // evenly spaced at Rate
	Poisson  Pattern = "poisson"  // exponential gaps with mean 1/Rate
	Burst    Pattern = "burst"    // Count requests at At, spaced evenly over Spread
	Ramp     Pattern = "ramp"     // constant, the rate going linearly From → To
	OnOff    Pattern = "on-off"   // constant at Rate for On, silent for Off, repeated
	// Times sends at the instants listed in Traffic.Times, in order: the
	// arrivals a live load run actually achieved, replayed in the
	// simulator (live.ObservedScenario). Not written in scenario files.
	Times Pattern = "times"
)

// Traffic is one arrival pattern between Start and Stop.
type Traffic struct {
	Pattern  Pattern
	Rate     algorithms.Rate // constant, poisson, on-off
	From, To algorithms.Rate // ramp
	Count    int             // burst
	At       time.Duration   // burst
	Spread   time.Duration   // burst
	On, Off  time.Duration   // on-off
	Start    time.Duration
	Stop     time.Duration // 0: until the scenario's end
	Cost     int64         // per request; 0 means 1
	// Times are the arrivals of pattern times, from the run's start, in
	// non-decreasing order (a time earlier than the one before ends the
	// stream).
	Times []time.Duration
	// Services, with pattern times, are how long each of Times' arrivals
	// takes to serve if it is admitted, in place of a draw from the
	// client's Service: a live run's draws, which the simulator of its
	// arrivals (live.ObservedScenario) must hold each lease for. The
	// arrivals past its end, and retries, draw as usual. Each is at least
	// 0.
	Services []time.Duration
}

// RetryPolicy is what a client does with a rejected request.
type RetryPolicy string

const (
	RetryNone      RetryPolicy = "none"        // gives up
	RetryImmediate RetryPolicy = "immediate"   // sends it again at once
	RetryAfter     RetryPolicy = "retry-after" // waits what Retry-After says
	RetryBackoff   RetryPolicy = "backoff"     // waits Base × 2^attempt, capped at Cap, with full jitter
)

// Retry defaults, for a Retry that leaves them zero.
const (
	DefaultMaxRetry    = 10
	DefaultBackoffBase = 100 * time.Millisecond
	DefaultBackoffCap  = 10 * time.Second
)

// Retry is a client's retry behaviour.
type Retry struct {
	Policy RetryPolicy
	// Max is the most retries of one request; 0 means DefaultMaxRetry.
	Max       int
	Base, Cap time.Duration // backoff; 0 means DefaultBackoffBase and DefaultBackoffCap
}
