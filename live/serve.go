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

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/httplimit"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/store"
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
	embedded []*store.Redis
	copies   []switchable
	// topo says which copy each server reaches, as the simulator's does;
	// mu guards it and healKeys. started is the fleet's clock's zero.
	mu      sync.Mutex
	topo    *topology.Topology
	started time.Time
	// healKeys are the keys written to the primary since the last heal
	// (split-brain), which a heal copies to the replica; bounded, as every
	// state keyed by client input is.
	healKeys map[string]struct{}
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
type switchable interface {
	store.Limiter
	store.KV
}

// Serve starts the fleet and returns once every server listens. Each
// server's demo API holds a request for the time its ServiceHeader asks
// (at most MaxService), so that a limit on requests in flight has
// requests to count; a request whose decision carries a lease gives it
// back when it is done (httplimit.New), unless its server crashed first
// (Fault). A scenario's load shedder is one for the fleet, after the
// limit, reading each request's priority from PriorityHeader.
func Serve(ctx context.Context, opts ServeOptions) (*Fleet, error) {
	sc := opts.Scenario
	started := time.Now()
	// Params.Origin stays 0: a live server's instants are Unix
	// microseconds already.
	var alg algorithms.Algorithm
	var err error
	if len(sc.Also) > 0 {
		// Several limits, one Multi: its shadowed limits enforce from
		// their ShadowUntil after the fleet's start.
		alg, err = sc.NewAlgorithmAt(algorithms.FromTime(started), 0)
		if err != nil {
			return nil, &sim.SetupError{Err: fmt.Errorf("also: %w", err)}
		}
	} else if alg, err = algorithms.New(sc.Limit.Algorithm, sc.Limit.Params); err != nil {
		return nil, &sim.SetupError{Err: fmt.Errorf("limit.%w", err)}
	}
	// One load shedder for the fleet: every server draws on the one
	// capacity, as the simulator's fleet does.
	var shedder *httplimit.Shedder
	var priority func(*http.Request) algorithms.Priority
	if sc.Shedder != nil {
		a, err := sc.Shedder.New()
		if err != nil {
			return nil, &sim.SetupError{Err: fmt.Errorf("shedder: %w", err)}
		}
		if shedder, err = httplimit.NewShedder(a); err != nil {
			return nil, &sim.SetupError{Err: fmt.Errorf("shedder: %w", err)}
		}
		// The demo trusts the priority its load generator sends: a real
		// API derives it from what it knows (httplimit.PriorityFromHeader
		// says why).
		priority = httplimit.PriorityFromHeader(PriorityHeader)
	}
	for _, l := range sc.Limits() {
		if err := sim.PeerStore(l.Algorithm, cmp.Or(opts.Store, sc.Topology.Store)); err != nil {
			return nil, &sim.SetupError{Err: fmt.Errorf("topology.store: %w", err)}
		}
	}

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
		opts.Store = sc.Topology.Store
	}
	f := &Fleet{opts: opts, errs: make(chan error, sc.Servers), started: started,
		topo:     sim.NewTopology(sc),
		healKeys: map[string]struct{}{},
		lives:    make([]chan struct{}, sc.Servers), down: make([]bool, sc.Servers),
		inFlight: make([]atomic.Int64, sc.Servers)}
	for i := range f.lives {
		f.lives[i] = make(chan struct{})
	}
	if err := f.openStores(ctx, alg); err != nil {
		f.Close(context.Background())
		return nil, err
	}
	host, portText, err := net.SplitHostPort(opts.Listen)
	if err != nil {
		f.Close(context.Background())
		return nil, optionError("Listen", "%q is not host:port (want e.g. 127.0.0.1:8080)", opts.Listen)
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < 0 || port > 65535 {
		f.Close(context.Background())
		return nil, optionError("Listen", "port %q is not a port number", portText)
	}
	if !opts.AllowRemote && !isLoopback(host) {
		f.Close(context.Background())
		return nil, optionError("Listen", "%q is not a loopback address: the fleet would take requests from other machines (want 127.0.0.1:PORT, or set AllowRemote to mean it)", opts.Listen)
	}
	if err := f.listenControl(opts.Control); err != nil {
		f.Close(context.Background())
		return nil, err
	}
	quota := httplimit.Config{
		Shadow:      sc.Limit.Shadow,
		ShadowUntil: shadowUntil(f.started, sc.Limit.ShadowUntil),
	}
	if len(sc.Also) > 0 {
		// Each limit's shadow mode is the Multi's: its decision says
		// WouldReject, and the policies say which to leave unlisted.
		quota = httplimit.Config{Policies: httplimit.QuotasOf(alg)}
	} else {
		quota.Limit, quota.Window = httplimit.QuotaOf(alg)
	}
	key := keyFor(sc.Limit.Key, opts.TrustedProxies)
	for i := range sc.Servers {
		addr := net.JoinHostPort(host, "0")
		if port != 0 {
			addr = net.JoinHostPort(host, strconv.Itoa(port+i))
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			f.Close(context.Background())
			return nil, optionError("Listen", "server %d: %w", i, err)
		}
		reg := prometheus.NewRegistry()
		metrics, err := httplimit.NewMetrics(reg)
		if err != nil {
			ln.Close()
			f.Close(context.Background())
			return nil, err
		}
		mw, err := httplimit.New(httplimit.Config{
			Limiter: f.leasesOf(i, stamped{f.limiterFor(i, alg)}),
			OnError: sc.Topology.OnError,
			Key:     key.fn, RequireKey: key.required, KeyName: key.name,
			Limit: quota.Limit, Window: quota.Window, Policies: quota.Policies,
			Shadow: quota.Shadow, ShadowUntil: quota.ShadowUntil,
			Metrics:  metrics,
			Logger:   opts.Logger.With("server", i),
			Cost:     costOf,
			Shedder:  shedder,
			Priority: priority,
		})
		if err != nil {
			ln.Close()
			f.Close(context.Background())
			return nil, err
		}
		if err := reg.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "ratelim_demo_in_flight",
			Help: "Requests the demo API is serving at this instant (each held for its X-Ratelim-Service).",
		}, func() float64 { return float64(f.inFlight[i].Load()) })); err != nil {
			ln.Close()
			f.Close(context.Background())
			return nil, err
		}
		if mem, ok := f.memoryOf(i); ok {
			if err := httplimit.RegisterMemoryStats(reg, mem.Stats); err != nil {
				ln.Close()
				f.Close(context.Background())
				return nil, err
			}
		}
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		// Control is not served here: the API's clients must not reach it.
		mux.Handle("/ratelim/", http.NotFoundHandler())
		mux.Handle("/", f.alive(i, mw(f.demoAPI(i))))
		f.URLs = append(f.URLs, "http://"+ln.Addr().String())
		f.serve(newHTTPServer(mux, maxDelayOf(alg)), ln)
	}
	f.sweepMemory()
	return f, nil
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
