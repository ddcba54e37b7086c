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
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ratelim/ratelim/httplimit"
	"github.com/ratelim/ratelim/internal/words"
	"github.com/ratelim/ratelim/sim"
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
	// RequestHeader numbers each request a load run sends, as its
	// Observation's Seq: a server's own log (nginx's access log, a
	// proxy's) joins with the run's observations by it.
	RequestHeader = "X-Ratelim-Request"
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
	// Path is requested on every target, after the target's own path;
	// "" means /api. It starts with /, holds no control character, ?
	// or # (the query is the run's: client=NAME), and is at most
	// MaxPathLen bytes.
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
	targets, err := opts.check(sc)
	if err != nil {
		return nil, err
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

// Check returns the error Load would refuse sc with before sending a
// request: a target that is not an http URL (or not on this machine,
// without AllowRemote), or a run estimated to send more than MaxRequests.
// A caller with several runs to make checks each before the first starts.
func (opts LoadOptions) Check(sc sim.Scenario) error {
	_, err := opts.check(sc)
	return err
}

// check is Check, returning the targets parsed for Load to send to.
func (opts LoadOptions) check(sc sim.Scenario) ([]*url.URL, error) {
	targets, err := checkTargets(opts.Targets, opts.AllowRemote)
	if err != nil {
		return nil, err
	}
	if err := checkPath(opts.Path); err != nil {
		return nil, err
	}
	budget := opts.MaxRequests
	if budget == 0 {
		budget = DefaultMaxRequests
	}
	if est := sim.Estimate(sc); est > budget {
		return nil, &sim.TooBigError{Err: sim.ErrBudget, Scenario: sc.Name, Option: "MaxRequests",
			Detail: fmt.Sprintf("would send about %s requests for real, more than %s", words.Thousands(est), words.Thousands(budget)),
			Advice: "shorten the scenario or lower its rates"}
	}
	return targets, nil
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

// MaxPathLen bounds LoadOptions.Path: a path is a route, not a payload.
const MaxPathLen = 1024

// checkPath refuses a Path that is not one: it must start with /, and
// hold no control character (a header or a log line a server writes it
// into must not be broken), no ? or # (the query is the run's) and be at
// most MaxPathLen bytes. "" is the default, /api.
func checkPath(path string) error {
	switch {
	case path == "":
		return nil
	case len(path) > MaxPathLen:
		return optionError("Path", "%d bytes (want at most %d)", len(path), MaxPathLen)
	case !strings.HasPrefix(path, "/"):
		return optionError("Path", "%q does not start with / (want e.g. /api)", path)
	case strings.ContainsFunc(path, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '?' || r == '#' || (r >= 0x80 && r < 0xa0) }):
		return optionError("Path", "%q holds a control character, ? or # (want a path alone, e.g. /api/v1/items: the query is the run's, client=NAME)", path)
	}
	return nil
}

// isLoopback reports whether host is this machine: localhost, or a
// loopback IP address (no name is looked up).
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// loader is one load run: what Load set up (the scenario, the targets, the
// client, sem's slots bounding the requests in flight, each client's key)
// and, under mu, what the run's goroutines share: the balancer and the
// crashed targets, the random source, and what was observed and audited.
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
