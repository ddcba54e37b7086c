package live

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/httplimit"
	"github.com/ratelim/ratelim/route"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/store"
	"github.com/ratelim/ratelim/store/redisstore"
	"github.com/ratelim/ratelim/topology"
)

// ServeOptions say what fleet of demo API servers to start.
type ServeOptions struct {
	// Scenario gives the servers (count), the limit and the topology:
	// local (a memory jar per server), shared (one store for all), racy
	// (one store read and written in two calls), split-brain (two stores,
	// switched on a partition).
	Scenario sim.Scenario
	// Store overrides the topology's store: memory, miniredis,
	// redis-server (one started and owned by the fleet, so an outage can
	// stop it), redis://host:port, or, for split-brain, two URLs
	// separated by a comma.
	Store string
	// Listen is the first server's address; server i listens on its port
	// + i. Port 0 takes free ports. Default 127.0.0.1:0. A host that is
	// not loopback is refused unless AllowRemote: the fleet is a demo,
	// and its limits are for study, not for defending a service.
	Listen      string
	AllowRemote bool
	// Control is the address of the fleet's control listener, where a
	// load run in another process applies the scenario's faults
	// (FaultPath). It is always on loopback, apart from the API ports, so
	// the clients the fleet limits cannot reach it; and it takes only
	// requests that carry the fleet's Token. Default 127.0.0.1:0.
	Control string
	// TrustedProxies are the peers whose X-Forwarded-For the servers
	// believe, for an ip-keyed limit. None by default: any client can
	// write that header, so trusting it is the operator's explicit choice
	// (ratelim load sends each client's IP in it; trust 127.0.0.1/32 for
	// a load run on this machine).
	TrustedProxies []netip.Prefix
	// Logger hears the servers' store failures and recoveries; nil
	// discards them.
	Logger *slog.Logger
}

// Fleet is a running set of API servers behind the limiter.
type Fleet struct {
	// URLs are the servers' base URLs, server 0 first.
	URLs []string
	// ControlURL is the control listener's base URL, on loopback, and
	// Token what a request to it must carry (Authorization: Bearer).
	ControlURL string
	Token      string

	opts     ServeOptions
	servers  []*http.Server
	closers  []func() error
	redis    *RedisServer // when the fleet started redis-server itself
	embedded []*redisstore.Store
	copies   []switchable
	// topo says which copy each server reaches, as the simulator's does;
	// mu guards it and healKeys. started is the fleet's clock's zero.
	mu      sync.Mutex
	topo    *topology.Topology
	started time.Time
	// route is the way a request reaches its decision on copies, as the
	// simulator's (package route); it locks mu around topo.
	route *route.Copies
	// healKeys are the keys decided on either copy of a split brain since
	// the last heal, which a heal copies from the primary to the replica;
	// bounded, as every state keyed by client input is.
	healKeys map[string]struct{}
	// draws are what the partitions drew for a simulated cluster's
	// failure detection and election, in order (ClusterDraws).
	draws []int64
	// timeout is the scenario's topology.timeout: how long a server waits
	// for a copy a partition or an outage put out of its reach.
	timeout time.Duration
	// breakers are each server's circuit breaker, on a scenario with one
	// (topology.breaker); f.mu guards them.
	breakers []route.Breaker
	// localTiers are, on a two-tier topology, each server's local token
	// bucket in front of the store (localTier).
	localTiers []*store.Memory
	// synced is a synced fleet's sync (synced.go); stopSync stops its
	// push loops, once, at Close.
	synced   *syncedFleet
	stopSync func()
	wg       sync.WaitGroup
	errs     chan error
	// stopSweep, when set, stops the memory sweeper; Close calls it once.
	stopSweep func()

	// lives[i] is server i's current life, closed when a crash fault
	// kills it (its requests are abandoned) and replaced when it is back;
	// down[i] says it is dead meanwhile. lifeMu guards both.
	lifeMu sync.Mutex
	lives  []chan struct{}
	down   []bool
	// inFlight[i] counts the requests server i's demo API is serving;
	// peak is the most the fleet's servers served at once, all keys
	// together; abandoned counts the lease units crashed servers never
	// gave back.
	inFlight  []atomic.Int64
	running   atomic.Int64
	peak      atomic.Int64
	abandoned atomic.Int64
}

// switchable is a store copy that an outage can take down.
type switchable = route.Copy

// Serve starts the fleet and returns once every server listens. Each
// server's demo API holds a request for the time its ServiceHeader asks
// (at most MaxService), so that a limit on requests in flight has
// requests to count; a request whose decision carries a lease gives it
// back when it is done (httplimit.New), unless its server crashed first
// (Fault). A scenario's load shedder is one for the fleet, after the
// limit, reading each request's priority from PriorityHeader.
func Serve(ctx context.Context, opts ServeOptions) (*Fleet, error) {
	// A synced topology at its limits is the shared store or the local
	// jars, and serves as them. The owner and regions kinds are the
	// simulator's alone so far.
	switch opts.Scenario.Topology.RunsAs() {
	case sim.Owner, sim.Regions:
		return nil, &sim.SetupError{Err: fmt.Errorf("topology.kind: a %s topology runs in the simulator only, not on a live fleet yet (want another kind)", opts.Scenario.Topology.Kind)}
	}
	opts.Scenario.Topology.Kind = opts.Scenario.Topology.RunsAs()
	sc := opts.Scenario
	started := time.Now()
	alg, err := fleetAlgorithm(sc, started)
	if err != nil {
		return nil, err
	}
	shedder, priority, err := fleetShedder(sc)
	if err != nil {
		return nil, err
	}
	for _, l := range sc.Limits() {
		if err := sim.PeerStore(l.Algorithm, cmp.Or(opts.Store, sc.Topology.Store)); err != nil {
			return nil, &sim.SetupError{Err: fmt.Errorf("topology.store: %w", err)}
		}
	}
	f := newFleet(withDefaults(opts), started)
	if err := f.start(ctx, alg, shedder, priority); err != nil {
		f.Close(context.Background())
		return nil, err
	}
	f.sweepMemory()
	return f, nil
}

// fleetAlgorithm is the scenario's limit as one algorithm every server
// runs: its limit, or, with several (also:), one Multi whose shadowed
// limits enforce from their ShadowUntil after started, the fleet's start.
// An error is the scenario's (a *sim.SetupError), found before anything
// listens.
func fleetAlgorithm(sc sim.Scenario, started time.Time) (algorithms.Algorithm, error) {
	// Params.Origin stays 0: a live server's instants are Unix
	// microseconds already.
	if len(sc.Also) > 0 {
		alg, err := sc.NewAlgorithmAt(algorithms.FromTime(started), 0)
		if err != nil {
			return nil, &sim.SetupError{Err: fmt.Errorf("also: %w", err)}
		}
		return alg, nil
	}
	alg, err := algorithms.New(sc.Limit.Algorithm, sc.Limit.Params)
	if err != nil {
		return nil, &sim.SetupError{Err: fmt.Errorf("limit.%w", err)}
	}
	return alg, nil
}

// fleetShedder is the scenario's load shedder, one for the fleet: every
// server draws on the one capacity, as the simulator's fleet does. With
// it comes how a server reads a request's priority, PriorityHeader; both
// are nil for a scenario without a shedder.
func fleetShedder(sc sim.Scenario) (*httplimit.Shedder, func(*http.Request) algorithms.Priority, error) {
	if sc.Shedder == nil {
		return nil, nil, nil
	}
	a, err := sc.Shedder.New()
	if err != nil {
		return nil, nil, &sim.SetupError{Err: fmt.Errorf("shedder: %w", err)}
	}
	shedder, err := httplimit.NewShedder(a)
	if err != nil {
		return nil, nil, &sim.SetupError{Err: fmt.Errorf("shedder: %w", err)}
	}
	// The demo trusts the priority its load generator sends: a real
	// API derives it from what it knows (httplimit.PriorityFromHeader
	// says why).
	return shedder, httplimit.PriorityFromHeader(PriorityHeader), nil
}

// withDefaults fills the options left empty: loopback addresses on free
// ports for the API servers and the control listener, a logger that
// discards, the scenario's own store.
func withDefaults(opts ServeOptions) ServeOptions {
	if opts.Listen == "" {
		opts.Listen = "127.0.0.1:0"
	}
	if opts.Control == "" {
		opts.Control = "127.0.0.1:0"
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.Store == "" {
		opts.Store = opts.Scenario.Topology.Store
	}
	return opts
}

// newFleet is a fleet for opts with nothing open yet: the simulator's
// topology, on a clock from started, and every server alive.
func newFleet(opts ServeOptions, started time.Time) *Fleet {
	sc := opts.Scenario
	f := &Fleet{opts: opts, errs: make(chan error, sc.Servers), started: started,
		topo:     sim.NewTopology(sc),
		healKeys: map[string]struct{}{}, timeout: sc.Topology.Timeout,
		lives: make([]chan struct{}, sc.Servers), down: make([]bool, sc.Servers),
		inFlight: make([]atomic.Int64, sc.Servers)}
	for i := range f.lives {
		f.lives[i] = make(chan struct{})
	}
	return f
}

// start opens what the fleet runs on, in the order that lets the
// operator's mistakes show before anything serves: the stores, then the
// Listen address's checks, the control listener, and one API server per
// scenario server (server i on Listen's port + i). On an error, what it
// opened is left for Close.
func (f *Fleet) start(ctx context.Context, alg algorithms.Algorithm, shedder *httplimit.Shedder, priority func(*http.Request) algorithms.Priority) error {
	if err := f.openStores(ctx, alg); err != nil {
		return err
	}
	f.route = route.New(f.topo, f.copies, alg, &f.mu)
	if err := f.openLocalTiers(); err != nil {
		return err
	}
	if err := f.openSynced(alg); err != nil {
		return err
	}
	if b := f.opts.Scenario.Topology.Breaker; b != nil && f.topo.Remote() {
		f.breakers = make([]route.Breaker, f.opts.Scenario.Servers)
		for i := range f.breakers {
			f.breakers[i] = route.Breaker{Failures: b.Failures, Cooldown: algorithms.At(b.Cooldown)}
		}
	}
	// A simulated cluster puts a key in the slot the simulator does.
	f.route.SlotKey = simKey
	host, port, err := parseListen(f.opts)
	if err != nil {
		return err
	}
	if err := f.listenControl(f.opts.Control); err != nil {
		return err
	}
	shared := f.middlewareConfig(alg, shedder, priority)
	for i := range f.opts.Scenario.Servers {
		addr := net.JoinHostPort(host, "0")
		if port != 0 {
			addr = net.JoinHostPort(host, strconv.Itoa(port+i))
		}
		if err := f.startServer(i, addr, alg, shared); err != nil {
			return err
		}
	}
	return nil
}

// parseListen splits opts.Listen into the host and the first port (0 for
// free ports), refusing a host that is not loopback unless AllowRemote.
func parseListen(opts ServeOptions) (host string, port int, err error) {
	host, portText, err := net.SplitHostPort(opts.Listen)
	if err != nil {
		return "", 0, optionError("Listen", "%q is not host:port (want e.g. 127.0.0.1:8080)", opts.Listen)
	}
	port, err = strconv.Atoi(portText)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, optionError("Listen", "port %q is not a port number", portText)
	}
	if !opts.AllowRemote && !isLoopback(host) {
		return "", 0, optionError("Listen", "%q is not a loopback address: the fleet would take requests from other machines (want 127.0.0.1:PORT, or set AllowRemote to mean it)", opts.Listen)
	}
	return host, port, nil
}

// serve runs srv on ln until Close.
func (f *Fleet) serve(srv *http.Server, ln net.Listener) {
	f.servers = append(f.servers, srv)
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			f.errs <- err
		}
	}()
}

// Close shuts the servers down gracefully (in-flight requests finish, up to
// ctx's deadline), stops the memory sweeper and closes the stores, deleting
// the keys the fleet wrote to Redis. Every failure is in the error it
// returns; a Redis store that would not delete its keys (gone at the end,
// or more than 10 s) is a *sim.CleanupError naming the store and the key
// prefix, so the operator can delete them, or let them expire.
func (f *Fleet) Close(ctx context.Context) error {
	var errs []error
	for _, s := range f.servers {
		if err := s.Shutdown(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if f.stopSweep != nil {
		f.stopSweep()
		f.stopSweep = nil
	}
	if f.stopSync != nil {
		f.stopSync()
		f.stopSync = nil
	}
	f.wg.Wait()
	for i := len(f.closers) - 1; i >= 0; i-- {
		if err := f.closers[i](); err != nil {
			errs = append(errs, err)
		}
	}
	f.closers = nil
	return errors.Join(errs...)
}

// Err returns a channel that receives an error if a server stops serving.
func (f *Fleet) Err() <-chan error { return f.errs }

// shadowUntil is the instant a limit shadowed for until from the fleet's
// start begins to enforce; the zero time (shadow for good) for 0.
func shadowUntil(started time.Time, until time.Duration) time.Time {
	if until <= 0 {
		return time.Time{}
	}
	return started.Add(until)
}
