package sim

import (
	"math"
	"strconv"
)

// Schema names the Result's JSON contract. Fields may be added to it, never
// renamed or removed: CI pipelines parse it.
const Schema = "ratelim.result/v1"

// Result is what a run produced: per client and per key totals, the
// timeline per client per step, the store state per key per step, and the
// faults. It is the only thing plots, the TUI and `ratelim check` read.
//
// A run's Result is sparse in its timeline (TimelineSparse): a row only
// for a client and a step in which something happened to it, step by
// step, each step's in the order of Clients; its state series a point per
// step. Written as JSON or CSV it is sparse unless asked for dense
// (ratelim sim --dense): the rows in which nothing happened and the state
// points that repeat the one before are left out, and the JSON says so.
// What is left out is what a reader can put back (EachRow, one row at a
// time; Densify, all at once): a client absent from a step sent nothing
// and was served nothing in it, and a state value holds until the
// series' next point.
type Result struct {
	Schema    string      `json:"schema"`
	Scenario  string      `json:"scenario"`
	Algorithm string      `json:"algorithm"`
	Topology  string      `json:"topology"`
	Store     string      `json:"store"`
	Servers   int         `json:"servers"`
	Seed      uint64      `json:"seed"`
	DurationS float64     `json:"duration_s"`
	StepS     float64     `json:"step_s"`
	Limit     LimitResult `json:"limit"`
	Balancer  string      `json:"balancer"`
	OnError   string      `json:"on_error"`
	Clock     string      `json:"clock"`
	RTTMs     float64     `json:"rtt_ms"`
	// TimeoutMs is how long a server waits for a store that does not
	// answer before its fail policy decides; absent when it is told at
	// once. Added to v1.
	TimeoutMs float64 `json:"timeout_ms,omitempty"`
	// WallClock is the wall-clock instant virtual time 0 stood for (a
	// live run's start), in RFC 3339, on a run of an algorithm that reads
	// it (a fixed or sliding window's clock-aligned windows, redis_rate's
	// float seconds, envoy's windows); empty otherwise. Added to v1.
	WallClock string `json:"wall_clock,omitempty"`
	// Shedder is the fleet's priority load shedder, on a run with one.
	// Added to v1.
	Shedder *ShedderResult `json:"shedder,omitempty"`
	// Breaker is what the servers' circuit breakers did, on a run with
	// them. Added to v1.
	Breaker *BreakerResult `json:"breaker,omitempty"`
	// Synced is a synced topology's interval and what its pushes did.
	Synced *SyncedResult `json:"synced,omitempty"`
	// TwoTier is a two-tier topology's local tier and what it spared.
	TwoTier *TwoTierResult `json:"two_tier,omitempty"`
	// Owner is an owner topology's sync wait and what its sends did.
	Owner *OwnerResult `json:"owner,omitempty"`
	// Regions is a regions topology's replication and its moved requests.
	Regions *RegionsResult `json:"regions,omitempty"`
	// Shards are a cluster's, each with its slots, its keys and what the
	// run did to it; absent on another topology. Added to v1.
	Shards []ShardResult `json:"shards,omitempty"`
	// Live is set on the Result of a live run (`ratelim load`): the
	// figures were measured over real HTTP, not simulated.
	Live bool `json:"live,omitempty"`
	// Requests is every request sent, retries included.
	Requests int64          `json:"requests"`
	Clients  []ClientResult `json:"clients"`
	Keys     []KeyResult    `json:"keys"`
	// TimelineSparse is set on a Result written sparse, and on a run's:
	// Timeline leaves out every row in which nothing happened to its
	// client (each figure 0: TimelineRow.Empty), and each of State's
	// series may leave out the points that repeat the point before (its
	// first and last kept; a run's keep them). A client absent from a step
	// sent nothing and was served nothing in it; a series' value holds
	// from its point until the next. A v1 reader that sums the rows reads
	// the same totals; one that draws them fills the gaps so (EachRow,
	// Densify). Absent, false, every row and point is there, and the JSON
	// is what it was before the field. Added to v1.
	TimelineSparse bool          `json:"timeline_sparse,omitempty"`
	Timeline       []TimelineRow `json:"timeline"`
	// State has a series for each (key, copy) pair a request reached,
	// and none for a copy of a key no request reached: that copy held the
	// zero state, a fresh limiter's, throughout.
	State []StateSeries `json:"state"`
	// ZeroRemaining is the room of a copy in the zero state, one number
	// per limit (in Limit.Limits' order for several): every point a series
	// left out of State would hold. Given only when State leaves a series
	// out; absent, every key kept has a series in every copy, as before
	// the field. Added to v1.
	ZeroRemaining []int64     `json:"zero_remaining,omitempty"`
	Faults        []FaultSpan `json:"faults"`
	// Events is what happened, in order: faults, failovers, first rejections.
	Events       []LogEntry          `json:"events"`
	Expectations []ExpectationResult `json:"expectations"`
	// Findings are what the run teaches, computed from its figures (see
	// [Findings]), most telling first. Added to v1: a reader that does
	// not know the field loses nothing else.
	Findings []Finding `json:"findings"`
	// copyGap is the copies' widest disagreement, as the run saw it at
	// its step ends whether its state series kept them or not; nil for
	// a Result read back from its JSON, whose findings read the series.
	copyGap *copyGap
}

// Finding is one lesson a run's figures show, stated for a person (Text)
// and for a script (Kind, the client or key it is about, and the figure
// that makes it true).
type Finding struct {
	// Kind names the lesson; see the FindingKind constants.
	Kind FindingKind `json:"kind"`
	// Client or Key is who it is about, when it is about one.
	Client string `json:"client,omitempty"`
	Key    string `json:"key,omitempty"`
	// Value is the figure behind it: a ratio for over-admitted and
	// worst-window, a count for the others.
	Value float64 `json:"value"`
	Text  string  `json:"text"`
}

// FindingKind names a lesson a run can show.
type FindingKind string

// LimitResult is the configured limit.
type LimitResult struct {
	RatePerS float64 `json:"rate_per_s"`
	Burst    int64   `json:"burst"`
	WindowS  float64 `json:"window_s"`
	Key      string  `json:"key"`
	// Defaulted names the parameters filled by the default rule because
	// the algorithm was chosen by a flag (window 1 s, burst one second of
	// the rate), not written in the scenario.
	Defaulted []string `json:"defaulted,omitempty"`
	// Delay and NoDelay are nginx limit_req's delay= and nodelay, on a
	// run of the nginx-limit-req model. Added to v1.
	Delay   int64 `json:"delay,omitempty"`
	NoDelay bool  `json:"nodelay,omitempty"`
	// Shadow is set when the limit ran in shadow mode: it decided and
	// counted (would_reject) but refused nothing, for the whole run or
	// until ShadowUntilS, when it began to enforce. Added to v1.
	Shadow       bool    `json:"shadow,omitempty"`
	ShadowUntilS float64 `json:"shadow_until_s,omitempty"`
	// MaxInFlight and LeaseTTLS are a concurrency limit's: the most
	// requests of a key in flight at once, and how long a lease lasts
	// when its request is never given back. Rate, burst and window are
	// then 0. Added to v1.
	MaxInFlight int64   `json:"max_in_flight,omitempty"`
	LeaseTTLS   float64 `json:"lease_ttl_s,omitempty"`
	// Limits lists every limit of a key that has several (a per-second
	// and an hourly one), the first of them being the one the fields
	// above describe; empty for one limit. Added to v1.
	Limits []PolicyResult `json:"limits,omitempty"`
}

// ShedderResult is a load shedder's capacity and what each priority must
// leave of it.
type ShedderResult struct {
	CapacityPerS float64 `json:"capacity_per_s"`
	Burst        int64   `json:"burst"`
	// Reserve is, by priority, the tokens of Burst it must leave.
	Reserve map[string]int64 `json:"reserve"`
}

// PolicyResult is one of a key's several limits, named as the
// RateLimit-Policy header names it.
type PolicyResult struct {
	Name      string  `json:"name"`
	Algorithm string  `json:"algorithm"`
	RatePerS  float64 `json:"rate_per_s"`
	// Burst and WindowS are given when the algorithm reads them.
	Burst        int64   `json:"burst,omitempty"`
	WindowS      float64 `json:"window_s,omitempty"`
	Shadow       bool    `json:"shadow,omitempty"`
	ShadowUntilS float64 `json:"shadow_until_s,omitempty"`
	// MaxInFlight and LeaseTTLS are given for a concurrency limit.
	MaxInFlight int64   `json:"max_in_flight,omitempty"`
	LeaseTTLS   float64 `json:"lease_ttl_s,omitempty"`
}

// Counts are what happened to a set of requests: a client's, a key's, a
// step's. Every request sent is either allowed or rejected. Those the
// store could not decide are counted again by the policy that decided
// instead: failed open among the allowed (let through unchecked), failed
// closed among the rejected. Embedded in the results, its fields sit where
// they always were in the v1 JSON.
type Counts struct {
	Sent         int64 `json:"sent"`
	Allowed      int64 `json:"allowed"`
	Rejected     int64 `json:"rejected"`
	FailedOpen   int64 `json:"failed_open"`
	FailedClosed int64 `json:"failed_closed"`
	// WouldReject are the requests a limit in shadow mode would have
	// refused and let through: counted among the allowed. Added to v1.
	WouldReject int64 `json:"would_reject,omitempty"`
	// Shed are the requests the limit admitted and the fleet's load
	// shedder turned away with 503 for want of capacity at their
	// priority: counted among the rejected. Added to v1.
	Shed int64 `json:"shed,omitempty"`
	// CostSent and CostAllowed are the quota the requests asked for and
	// were given, on a run where some request costs more than 1 (a search
	// costing 5); 0 (and left out) on a run where each costs 1, whose
	// costs are its counts. Added to v1.
	CostSent    int64 `json:"cost_sent,omitempty"`
	CostAllowed int64 `json:"cost_allowed,omitempty"`
	// NoAnswer are the requests of a live run that got no HTTP answer (a
	// refused connection, a reset, a timeout): counted among the sent,
	// neither allowed nor rejected, since no limiter decided them, and
	// not given to the exact limiter. Always 0 in a simulation. Added
	// to v1.
	NoAnswer int64 `json:"no_answer,omitempty"`
}

// Add adds o's counts to c's.
func (c *Counts) Add(o Counts) {
	c.Sent += o.Sent
	c.Allowed += o.Allowed
	c.Rejected += o.Rejected
	c.FailedOpen += o.FailedOpen
	c.FailedClosed += o.FailedClosed
	c.WouldReject += o.WouldReject
	c.Shed += o.Shed
	c.CostSent += o.CostSent
	c.CostAllowed += o.CostAllowed
	c.NoAnswer += o.NoAnswer
}

// ClientResult is what one client experienced over the run.
type ClientResult struct {
	Name string `json:"name"`
	Key  string `json:"key"`
	Counts
	Retries int64 `json:"retries"`
	// RetriesAllowed are the retries admitted (failed open included):
	// what retrying won.
	RetriesAllowed int64 `json:"retries_allowed"`
	MaxAllowed1s   int64 `json:"max_allowed_1s"`
	IdealAllowed   int64 `json:"ideal_allowed"`
	// IdealMaxAllowed1s is the exact limiter's max_allowed_1s on the same
	// arrivals: what the peak would have been.
	IdealMaxAllowed1s int64          `json:"ideal_max_allowed_1s"`
	FalseAllows       int64          `json:"false_allows"`
	FalseDenies       int64          `json:"false_denies"`
	LatencyMs         LatencySummary `json:"latency_ms"`
	// Priority is the client's priority to the load shedder, on a run
	// with one. Added to v1.
	Priority string `json:"priority,omitempty"`
	// RejectedBy counts the refusals by the name of the limit that
	// refused, on a key with several limits (each named, 0 included);
	// absent for one limit. A refusal two limits agreed on is the one
	// asking the longer wait's. A request the load shedder turned away
	// passed every limit and is in none (it is in Shed), so rejected_by
	// and shed add up to the rejected, less those a fail policy refused.
	// Added to v1.
	RejectedBy map[string]int64 `json:"rejected_by,omitempty"`
}

// LatencySummary is a latency distribution's median and 99th percentile.
type LatencySummary struct {
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
}

// KeyResult aggregates every client sharing one limiter key.
type KeyResult struct {
	Key     string `json:"key"`
	Clients int    `json:"clients"`
	Counts
	MaxAllowed1s      int64 `json:"max_allowed_1s"`
	IdealAllowed      int64 `json:"ideal_allowed"`
	IdealMaxAllowed1s int64 `json:"ideal_max_allowed_1s"`
	FalseAllows       int64 `json:"false_allows"`
	FalseDenies       int64 `json:"false_denies"`
	// DesignBound1s is, on a synced, two-tier, regions or owner topology,
	// the most the design lets the key admit within one second (the
	// bounds topology.Synced, TwoTier, Regions and Owner derive, in
	// requests of its cheapest cost), its requests reaching DesignServers
	// servers (on regions, regions; on owner, nodes); 0 where no
	// derivation applies (a peer model's own quirks; owner but on
	// gubernator's token bucket).
	DesignBound1s int64 `json:"design_bound_1s,omitempty"`
	DesignServers int   `json:"design_servers,omitempty"`
}

// TimelineRow is one client's figures over one step, starting at TS. A
// sparse Result (TimelineSparse) has none for a step in which nothing
// happened to the client (Empty).
type TimelineRow struct {
	TS     float64 `json:"t_s"`
	Client string  `json:"client"`
	Counts
	Retries int64 `json:"retries"`
	// RetriesAllowed are the retries admitted in this step.
	RetriesAllowed int64 `json:"retries_allowed"`
	// Served are the admissions that left the queue in this step, which
	// for a leaky bucket is later than they were decided (Allowed counts
	// them when decided); for every other algorithm it equals Allowed. A
	// request served after the run's end is in no step.
	Served int64   `json:"served"`
	P50Ms  float64 `json:"p50_ms"`
	P99Ms  float64 `json:"p99_ms"`
}

// BreakerResult is the circuit breakers' settings and what they did, over
// every server: how many times one opened, and how many store calls they
// failed at once instead of letting them wait.
type BreakerResult struct {
	Failures       int     `json:"failures"`
	CooldownS      float64 `json:"cooldown_s"`
	Opened         int64   `json:"opened"`
	ShortCircuited int64   `json:"short_circuited"`
}

// StateSeries is one key's limiter state in one store copy, sampled at the
// end of every step: how many unit requests it would still admit (the
// tokens of a bucket, the room left in a window), -1 where the store did
// not answer. In a sparse Result (TimelineSparse) a point that repeats the
// one before is left out, the first and last kept: each value holds until
// the next point.
type StateSeries struct {
	Key  string `json:"key"`
	Copy string `json:"copy"` // "shared", "server-0", "primary", "replica", "s0-master"
	// Limit names which of a key's several limits the series follows;
	// each has a series of its own. Absent for one limit. Added to v1.
	Limit     string    `json:"limit,omitempty"`
	TS        []float64 `json:"t_s"`
	Remaining []int64   `json:"remaining"`
	// DecidedFromS is when the copy first admitted a request itself
	// during a partition, on a topology whose copies also take writes from
	// another (a split brain's, a cluster's): from then on it counts for
	// itself, and the copies-diverged finding compares it. Absent for a
	// copy that only followed (a replica never promoted) or took writes
	// only while it could replicate them, and on other topologies. Added
	// to v1.
	DecidedFromS *float64 `json:"decided_from_s,omitempty"`
}

// FaultSpan is one scheduled fault.
type FaultSpan struct {
	Kind   string  `json:"kind"`
	StartS float64 `json:"start_s"`
	EndS   float64 `json:"end_s"`
	Detail string  `json:"detail,omitempty"`
	// Leaked and LeakedUntilS are the leases the fault kept from being
	// given back, and when the last of them expired: for a crash, those
	// its servers held when they died mid-request; for an outage or a
	// partition, those whose requests ended while their server could not
	// reach the store. The slots a concurrency limit lost meanwhile. Added
	// to v1.
	Leaked       int64   `json:"leaked,omitempty"`
	LeakedUntilS float64 `json:"leaked_until_s,omitempty"`
}

// ExpectationResult is one `expect:` line evaluated on the run.
type ExpectationResult struct {
	Text string  `json:"text"`
	OK   bool    `json:"ok"`
	Got  float64 `json:"got"`
	// Found, for a claim about the findings (finding: or lesson:), names
	// the kinds the run found, which says more than Got's count.
	Found string `json:"found,omitempty"`
}

// GotText is what the expectation got, for people: Found, or Got.
func (e ExpectationResult) GotText() string {
	if e.Found != "" {
		return e.Found
	}
	if e.Got == math.Trunc(e.Got) && math.Abs(e.Got) < 1e15 {
		return strconv.FormatInt(int64(e.Got), 10)
	}
	return strconv.FormatFloat(e.Got, 'f', 3, 64)
}

// Totals adds up every key's figures: the run as a whole. Its
// MaxAllowed1s and IdealMaxAllowed1s are the worst key's.
func (r *Result) Totals() KeyResult {
	t := KeyResult{Key: "(all)"}
	for _, k := range r.Keys {
		t.Clients += k.Clients
		t.Counts.Add(k.Counts)
		t.IdealAllowed += k.IdealAllowed
		t.FalseAllows += k.FalseAllows
		t.FalseDenies += k.FalseDenies
		t.MaxAllowed1s = max(t.MaxAllowed1s, k.MaxAllowed1s)
		t.IdealMaxAllowed1s = max(t.IdealMaxAllowed1s, k.IdealMaxAllowed1s)
	}
	return t
}
