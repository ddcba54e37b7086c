package httplimit

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/store"
)

// DecidedByHeader is set on an answer the fail policy decided, to
// "fail-open" or "fail-closed": not a standard field, but what lets an
// operator, a load test or a client tell an admission the limiter never
// checked from one it did.
const DecidedByHeader = "X-RateLimit-Decided-By"

// ShadowHeader is set to "would-reject" on a request a limit in shadow
// mode ([Config.Shadow], or one of several, [Config.Policies]) would have
// answered 429 and let through: what a dark launch logs to see whom a new
// limit would throttle.
const ShadowHeader = "X-RateLimit-Shadow"

// DelayHeader is set on an admitted answer that the limiter held before
// the handler ran (a leaky bucket's queue, nginx's delay=): how long, in
// seconds as a decimal ("0.25"). Without it a client sees only the
// latency, and cannot tell the queue from a slow handler; a load test
// reads it to place when the request was served.
const DelayHeader = "X-RateLimit-Delay"

// DefaultMaxKeyBytes is the longest key [Config.MaxKeyBytes] accepts when
// left 0: room for the usual API keys (a UUID, a 64-byte hex token, a JWT's
// subject) with the "key:" prefix, and small enough that a million keys
// held for a second cost no more than a few hundred megabytes.
const DefaultMaxKeyBytes = 256

// Config configures the middleware [New] builds. Only Limiter is required.
type Config struct {
	// Limiter decides each request: a store (store.NewServerMemory,
	// redisstore.Open, ...) running an algorithm. Pass the store itself:
	// New wraps it in store.WithPolicy with OnError. A limiter already
	// wrapped works too; its own policy then decides, since the outer
	// wrapper never sees an error.
	Limiter store.Limiter
	// OnError is what a failing store means: store.FailOpen (the default
	// when empty) passes requests to the handler, store.FailClosed answers
	// 503 with Retry-After. Bound the store's own latency at the store
	// (for Redis, e.g. redis://host:6379?read_timeout=50ms): a deadline
	// on the request's context is the client giving up, which no policy
	// answers.
	OnError store.Policy
	// Key names the key each request counts against; KeyBy(KeyOptions{})
	// when nil.
	Key KeyFunc
	// RequireKey refuses a request whose key is empty (it lacks what Key
	// reads, e.g. the header of a [KeyByHeader]) with 400 Bad Request and
	// a one-line body naming KeyName, without asking the limiter or
	// calling the handler, counted as DecisionNoKey. Without it such a
	// request passes unlimited, which is right only where every request
	// that matters has a key and the rest are exempt on purpose (a health
	// check). A limit keyed by API key needs it: otherwise leaving the
	// header out is a way around the limit.
	RequireKey bool
	// KeyName says, in the body of RequireKey's 400, what the key is read
	// from ("the X-API-Key header"); "a rate-limit key" when empty.
	KeyName string
	// MaxKeyBytes is the longest key, in bytes, a request may count
	// against: DefaultMaxKeyBytes when 0, no bound when negative. A key is
	// what the store keeps for as long as the client is limited, and
	// comes, through Key, from what the client sent: unbounded, a few
	// thousand requests with half-megabyte API keys hold gigabytes. A
	// longer key is refused before the store sees it, with 431 Request
	// Header Fields Too Large when it came from a header ([KeyBy]'s API
	// key and user keys, those prefixed KeyPrefixAPIKey or KeyPrefixUser)
	// and 400 Bad Request otherwise, a one-line body, no call to the
	// handler, and counted as DecisionKeyTooLong.
	MaxKeyBytes int
	// Limit is the quota stated in the RateLimit fields (q, RateLimit-Limit);
	// 0 takes each decision's Limit (the burst, or the limit per window).
	Limit int64
	// Window is the quota's window, the w of RateLimit-Policy, rounded up
	// to whole seconds; 0 leaves w out. QuotaOf gives both for an
	// algorithm.
	Window time.Duration
	// PolicyName names the quota policy in the RateLimit fields;
	// DefaultPolicyName when empty. Printable ASCII.
	PolicyName string
	// Clock is read once per request for the instant the limiter decides
	// at, once more after the decision when Metrics is set, to time the
	// store, and, for a request that holds a lease, once more for the
	// instant it is given back; time.Now when nil. It is the one clock
	// this package reads: tests pass a fixed one.
	Clock func() time.Time
	// Cost is what a request spends of its key's quota: a search 5, a
	// write 10, by route or method; nil spends 1 on every request. A cost
	// of 0 passes without spending (the limiter peeks); one below 0 counts
	// as 0. The RateLimit fields count in the same units.
	Cost func(*http.Request) int64
	// Shadow runs the limit in shadow mode, a dark launch: every request
	// is decided and counted as enforcing would, none is refused, and one
	// that would have been gets ShadowHeader: would-reject (and counts as
	// would_reject in Metrics). No RateLimit fields are written: clients
	// should not pace themselves by a limit that is not enforced. The
	// fail policy still decides when the store fails.
	Shadow bool
	// ShadowUntil, when Shadow is set and this is not the zero time, ends
	// shadow mode at that instant of the Clock: the limit enforces from
	// then on, as a dark launch flipped to enforce does.
	ShadowUntil time.Time
	// Policies, when set, are a key's several named limits, the policies
	// of an [algorithms.Multi] the Limiter runs, in its order ([QuotasOf]
	// gives them); they replace Limit, Window and PolicyName, which must
	// then be left zero. Shadow (and ShadowUntil) with Policies is the
	// global switch, as envoy's global shadow mode: every policy in
	// shadow mode at once, whatever each one's own, no RateLimit fields.
	// Every answer lists the policies enforcing at that instant in one
	// RateLimit-Policy field
	// (`"burst";q=20;w=2, "hourly";q=1000;w=3600`), a policy in shadow
	// mode left out; RateLimit names the binding one (the decision's
	// Binding): on an admission with its remaining and its own reset, on
	// a 429 the refusing one with r=0 and t the Retry-After. The -06 trio
	// carries the binding policy's numbers. A request a shadowed policy
	// would have refused gets ShadowHeader and counts as would_reject.
	// While no policy enforces, no RateLimit fields are written.
	Policies []Quota
	// Shedder, if set, is the fleet's priority load shedder, which stands
	// after the limit: a request the limit let through (admitted, let
	// through by a fail-open store or by a limit in shadow mode) is
	// served only if the shedder admits it at its Priority, at the same
	// instant of the Clock and for the same Cost; otherwise it is
	// answered 503 Service Unavailable with Retry-After (when the
	// shedder's capacity would let it through at its priority, in whole
	// seconds rounded up, at least 1), ShedHeader set to its priority, a
	// one-line plain-text body, no call to the handler, and counted as
	// DecisionShed. A 429 never reaches the shedder, and takes none of
	// its capacity. A lease the limit gave the request is given back at
	// once. The quota the limit spent is not: the request was admitted
	// by its limit, as in the simulator.
	//
	// A shed answer carries no RateLimit fields. Its client's quota is
	// not what refused it, so the limit's numbers (quota left) would say
	// "come back now" on a refusal, inviting a client that paces itself
	// by r straight back, and r=0 would be false about its limit and make
	// a client wait for a reset that is not the reason. Retry-After is
	// the one wait that holds; ShedHeader says why. An answer the
	// fail-open policy let through keeps its DecidedByHeader when shed.
	//
	// A request whose key is empty, which passes unlimited, passes the
	// shedder too: the exemption is the operator's (a health check).
	//
	// Share one Shedder among the middlewares of every server whose
	// capacity it guards; nil sheds nothing, at no cost.
	Shedder *Shedder
	// Priority says how much a request matters to the Shedder; nil makes
	// every request Normal. [PriorityFromHeader] reads it from a header,
	// which only a header something trusted sets should be (its doc says
	// why). A priority past Sheddable counts as Sheddable. Unused
	// without a Shedder.
	Priority func(*http.Request) algorithms.Priority
	// Metrics, if set, counts requests by decision and times the store,
	// and counts the leases given back and the releases that failed.
	Metrics *Metrics
	// Logger hears when the store starts failing and when it recovers,
	// once per change, never once per request; the same for giving back
	// leases; and, once, that the store cannot give them back at all.
	// slog.Default() when nil.
	Logger *slog.Logger
}

// New returns the middleware cfg describes, to wrap a handler with:
//
//	limit, err := httplimit.New(cfg)
//	srv := &http.Server{Handler: limit(mux), ReadHeaderTimeout: 5 * time.Second}
//
// For each request it takes the key (an empty key passes unlimited, or is
// refused with 400 under Config.RequireKey), asks
// the limiter at the Clock's instant for the request's cost (Config.Cost;
// one unit without it), and then:
//
//   - admitted: sets the RateLimit fields, waits the decision's Delay if
//     any (leaky-bucket), and calls the handler; if the decision carries a
//     lease, gives it back when the request is over (below);
//   - rejected: answers 429 Too Many Requests with Retry-After, the
//     RateLimit fields (Remaining 0) and a one-line plain-text body;
//   - the store failed: fail-open calls the handler, fail-closed answers
//     503 Service Unavailable with Retry-After; neither sets RateLimit
//     fields, since the limiter did not decide, and both set
//     DecidedByHeader to the policy;
//   - the request's context ended first: the handler is not called (a 503
//     is written for whoever is still listening);
//   - let through, but shed by Config.Shedder: 503 Service Unavailable
//     with Retry-After and ShedHeader, no RateLimit fields, no call to
//     the handler (Config.Shedder says why and when).
//
// A limit on requests in flight ([algorithms.Concurrency], alone
// or among a key's several limits) admits a request with a lease,
// Decision.Lease, that the request holds until it is done. The middleware
// gives it back, with the Limiter's Release ([store.Releaser]) at the
// Clock's instant and the request's cost, once the request is over, which
// is:
//
//   - the handler returned;
//   - the handler panicked: the lease is given back as the panic passes
//     through, and the panic goes on to the server's recovery unchanged
//     (http.ErrAbortHandler included);
//   - the client disconnected, or the server is shutting down: the
//     handler returns with its request's context done, and the release
//     does not use that context but one of its own, which keeps the
//     request's values and has [ReleaseTimeout] to finish;
//   - an admitted request's leaky-bucket delay (a key with both limits)
//     was cut short by its context.
//
// A Limiter that has no Release (a store wrapped by another, a Redis store
// without the concurrency script) gives nothing back: each lease is held
// until its TTL, so the key runs with fewer slots than it should; the
// Logger hears it once. A release that fails is counted in Metrics and
// logged once per run of failures; its lease, too, expires by its TTL.
// Decisions without a lease (every other algorithm) cost nothing more.
//
// New reports an error for a configuration it cannot run: no Limiter (or a
// [store.Memory] with no algorithm, such as the zero Memory, which could
// never decide and would leave every request to the fail policy), an
// unknown OnError, a negative Limit or Window, a PolicyName that is not
// printable ASCII; with Policies, more than [algorithms.MaxLimits] of them,
// one without a name or with a name twice or not printable ASCII, a Limit
// below 1, a negative Window, any of the single-limit fields set beside
// them, or a [store.Memory] whose algorithm has another number of limits.
func New(cfg Config) (func(http.Handler) http.Handler, error) {
	policy, err := failPolicyFor(cfg)
	if err != nil {
		return nil, err
	}
	single, err := singleQuota(cfg)
	if err != nil {
		return nil, err
	}
	if !cfg.Shadow && !cfg.ShadowUntil.IsZero() {
		return nil, errors.New("httplimit: Config.ShadowUntil is set without Config.Shadow, and would do nothing (want Shadow: true, to shadow until then)")
	}
	policies, err := policySetFor(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.Shedder != nil && cfg.Shedder.alg == nil {
		return nil, errors.New("httplimit: Config.Shedder has no algorithm, and would shed every request (want httplimit.NewShedder(alg))")
	}
	rel, _ := cfg.Limiter.(store.Releaser)
	l := &limiter{
		take:        store.WithPolicy(cfg.Limiter, policy),
		release:     rel,
		storeType:   fmt.Sprintf("%T", cfg.Limiter),
		key:         cfg.Key,
		requireKey:  cfg.RequireKey,
		keyName:     cmp.Or(cfg.KeyName, "a rate-limit key"),
		maxKey:      maxKeyBytes(cfg.MaxKeyBytes),
		quota:       single,
		policies:    policies,
		clock:       cfg.Clock,
		metrics:     cfg.Metrics,
		log:         cfg.Logger,
		shadow:      cfg.Shadow,
		shadowUntil: cfg.ShadowUntil,
		cost:        cfg.Cost,
		shedder:     cfg.Shedder,
		priority:    cfg.Priority,
	}
	if l.key == nil {
		l.key = KeyBy(KeyOptions{})
	}
	if l.clock == nil {
		l.clock = time.Now
	}
	if l.log == nil {
		l.log = slog.Default()
	}
	return func(next http.Handler) http.Handler { return &handler{limiter: l, next: next} }, nil
}

// failPolicyFor checks cfg's Limiter and OnError, and returns the fail
// policy the store is wrapped in: OnError, FailOpen when empty. A
// store.Memory without an algorithm is refused here, not at its first
// request: it could never decide, and every request would go to the fail
// policy.
func failPolicyFor(cfg Config) (store.Policy, error) {
	if cfg.Limiter == nil {
		return "", errors.New("httplimit: Config.Limiter is nil (want a store, e.g. store.NewMemory(alg))")
	}
	if m, ok := cfg.Limiter.(*store.Memory); ok && (m == nil || m.Algorithm() == nil) {
		return "", errors.New("httplimit: Config.Limiter is a store.Memory with no algorithm (want store.NewServerMemory(alg))")
	}
	policy := cfg.OnError
	if policy == "" {
		policy = store.FailOpen
	}
	if _, err := store.ParsePolicy(string(policy)); err != nil {
		return "", fmt.Errorf("httplimit: Config.OnError: %w", err)
	}
	return policy, nil
}

// singleQuota checks the fields of cfg's single quota (Limit, Window,
// PolicyName) and returns the quota the RateLimit fields state: the limit
// capped at the largest Structured Field Integer, the window rounded up
// to whole seconds, the name as a Structured Field String. New checks
// them with Policies too, where they are left zero (checkPolicies).
func singleQuota(cfg Config) (quota, error) {
	if cfg.Limit < 0 {
		return quota{}, fmt.Errorf("httplimit: Config.Limit is %d (want 0, for each decision's, or more)", cfg.Limit)
	}
	if cfg.Window < 0 {
		return quota{}, fmt.Errorf("httplimit: Config.Window is %s (want 0, for none, or more)", cfg.Window)
	}
	name := cfg.PolicyName
	if name == "" {
		name = DefaultPolicyName
	}
	quoted, err := quoteSFString(name)
	if err != nil {
		return quota{}, err
	}
	return newQuota(quoted, min(cfg.Limit, maxSFInteger), ceilSeconds(cfg.Window)), nil
}

// maxKeyBytes is the longest key Config.MaxKeyBytes n accepts:
// DefaultMaxKeyBytes for 0, no bound (math.MaxInt) when negative.
func maxKeyBytes(n int) int {
	switch {
	case n == 0:
		return DefaultMaxKeyBytes
	case n < 0:
		return math.MaxInt
	}
	return n
}

// policySetFor checks cfg's several limits and returns them as the set
// every answer's RateLimit fields are written from; nil without Policies,
// for the single quota. The policies stand for the limits of the
// Limiter's algorithm in order, so a store.Memory, whose algorithm New can
// read, must run one limit per policy.
func policySetFor(cfg Config) (*policySet, error) {
	if len(cfg.Policies) == 0 {
		return nil, nil
	}
	if err := checkPolicies(cfg); err != nil {
		return nil, err
	}
	policies, err := newPolicySet(cfg.Policies)
	if err != nil {
		return nil, err
	}
	if m, ok := cfg.Limiter.(*store.Memory); ok {
		n := 1
		if multi, ok := m.Algorithm().(*algorithms.Multi); ok {
			n = multi.Len()
		}
		if n != len(cfg.Policies) {
			return nil, fmt.Errorf("httplimit: Config.Policies has %d policies, the store's algorithm %s %d (want one per limit, in order)",
				len(cfg.Policies), m.Algorithm().Name(), n)
		}
	}
	return policies, nil
}

// limiter is what every handler New's middleware wraps shares.
type limiter struct {
	take        store.Limiter
	key         KeyFunc
	requireKey  bool   // Config.RequireKey
	keyName     string // Config.KeyName, or its default
	maxKey      int    // the longest key accepted, in bytes
	quota       quota
	policies    *policySet // Config.Policies; nil for the single quota
	clock       func() time.Time
	metrics     *Metrics
	log         *slog.Logger
	shadow      bool                      // Config.Shadow
	shadowUntil time.Time                 // Config.ShadowUntil
	cost        func(*http.Request) int64 // Config.Cost; nil for 1
	shedder     *Shedder                  // Config.Shedder; nil sheds nothing
	priority    func(*http.Request) algorithms.Priority

	// The store's health, as the log tells it (see storeFailing): when
	// it started failing (UnixNano on the Clock; 0 while healthy), when
	// the fail policy last decided, and what was decided since it started.
	failingSince atomic.Int64
	lastFailure  atomic.Int64
	byPolicy     atomic.Int64 // requests the fail policy decided
	byStore      atomic.Int64 // requests the store answered meanwhile
	quiet        atomic.Int64 // the answers' time recovery needs, ns; 0 for RecoveryQuiet
	recoveredAt  atomic.Int64 // when the last recovery was logged, UnixNano

	release         store.Releaser // Config.Limiter's Release; nil if it has none
	storeType       string         // Config.Limiter's type, for the log
	noRelease       atomic.Bool    // the log heard that the store cannot release
	releaseFailing  atomic.Bool    // the last release failed
	releaseFailures atomic.Int64   // releases failed since releaseFailing was set
}
