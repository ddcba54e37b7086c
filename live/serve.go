package live

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
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

// Server timeouts and bounds: a slow or hostile client holds a
// connection for seconds, not forever, and a header block is bounded
// before the middleware sees a key. The write timeout grows by the
// longest a leaky bucket holds a request (writeTimeoutFor).
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 10 * time.Second
	writeTimeout      = 10 * time.Second
	idleTimeout       = 60 * time.Second
	// maxRequestHead is the most bytes of a request's head (its request
	// line and header block, CRLFs included) a fleet server reads: one
	// byte more is answered 431 Request Header Fields Too Large.
	maxRequestHead = 16 << 10
	// maxHeaderBytes is the http.Server field that makes maxRequestHead
	// the bound: net/http reads MaxHeaderBytes plus 4096 bytes of "bufio
	// slop" (net/http server.go, Server.initialReadLimitSize), so a
	// MaxHeaderBytes of 16 KiB let 20 KiB heads through.
	// TestRequestHeadBound finds the threshold over HTTP.
	maxHeaderBytes = maxRequestHead - 4096
	// sweepEvery is how often a server's memory store drops the keys
	// that are back to full, for the keys no request touches again.
	sweepEvery = 10 * time.Second
	// clearTimeout bounds the deletion of a Redis store's keys at Close.
	clearTimeout = 10 * time.Second
)

// newHTTPServer is an http.Server with the fleet's timeouts and bounds;
// maxDelay is the longest an admitted request may be held before its
// handler runs, which the write timeout must allow for.
func newHTTPServer(h http.Handler, maxDelay time.Duration) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: readHeaderTimeout, ReadTimeout: readTimeout,
		WriteTimeout: writeTimeoutFor(maxDelay), IdleTimeout: idleTimeout, MaxHeaderBytes: maxHeaderBytes}
}

// writeTimeoutFor is writeTimeout plus maxDelay, saturating: an answer the
// limiter held back (a leaky bucket's queue) is not cut off before it is
// written.
func writeTimeoutFor(maxDelay time.Duration) time.Duration {
	if maxDelay <= 0 {
		return writeTimeout
	}
	if maxDelay > math.MaxInt64-writeTimeout {
		return math.MaxInt64
	}
	return writeTimeout + maxDelay
}

// maxDelayOf is the longest alg holds an admitted request: a leaky
// bucket's full queue, burst ÷ rate; no other algorithm delays. A key with
// several limits is held as long as the longest of theirs.
func maxDelayOf(alg algorithms.Algorithm) time.Duration {
	if m, ok := alg.(*algorithms.Multi); ok {
		var longest time.Duration
		for _, p := range m.Policies() {
			longest = max(longest, maxDelayOf(p.Algorithm))
		}
		return longest
	}
	if alg.Name() != "leaky-bucket" {
		return 0
	}
	_, window := httplimit.QuotaOf(alg) // burst × per ÷ n, saturating
	return window
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

// requestKey is how the fleet's servers key a request: exactly as the
// scenario's limit.key says, and nothing else.
type requestKey struct {
	fn       httplimit.KeyFunc
	required bool   // a request without the attribute is refused with 400
	name     string // what the key is read from, for that 400's body
	rule     string // the whole rule, for an operator (KeyRule)
}

// keyFor is the key the scenario's limit.key names. A limit keyed by API key
// reads APIKeyHeader alone and one keyed by user UserHeader alone: a client
// that sends another header instead, or rotates one the limit does not read,
// stays in its bucket, and a request without the header is refused with 400
// (never keyed by something else the client chose). A limit keyed by IP
// reads the client's address alone (X-Forwarded-For only from a trusted
// proxy), which every request has. Auto is the simulator's rule, the API
// key, else the user, else the address: the scenario asked for that
// precedence.
func keyFor(by sim.KeyBy, trusted []netip.Prefix) requestKey {
	header := func(name, prefix string) requestKey {
		return requestKey{fn: httplimit.KeyByHeader(name, prefix), required: true, name: "the " + name + " header",
			rule: "keyed by the " + name + " header alone; a request without it gets 400"}
	}
	switch by {
	case sim.KeyAPIKey:
		return header(APIKeyHeader, httplimit.KeyPrefixAPIKey)
	case sim.KeyUser:
		return header(UserHeader, httplimit.KeyPrefixUser)
	case sim.KeyIP:
		return requestKey{fn: httplimit.KeyByIP(httplimit.KeyOptions{TrustedProxies: trusted}),
			rule: "keyed by the client's address alone (" + ForwardedHeader + " only from a trusted proxy)"}
	}
	return requestKey{fn: httplimit.KeyBy(httplimit.KeyOptions{Header: APIKeyHeader, UserHeader: UserHeader, TrustedProxies: trusted}),
		rule: "keyed by " + APIKeyHeader + ", else " + UserHeader + ", else the client's address"}
}

// KeyRule says, for an operator, how a fleet serving a limit keyed by by
// keys its requests (keyFor's rule).
func KeyRule(by sim.KeyBy) string { return keyFor(by, nil).rule }

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

// listenControl starts the control listener on addr, which must be
// loopback, and draws the fleet's token.
func (f *Fleet) listenControl(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || !isLoopback(host) {
		return optionError("Control", "%q is not a loopback host:port (want e.g. 127.0.0.1:0)", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return optionError("Control", "%w", err)
	}
	var b [16]byte
	rand.Read(b[:])
	f.Token = hex.EncodeToString(b[:])
	f.ControlURL = "http://" + ln.Addr().String()
	mux := http.NewServeMux()
	mux.Handle(FaultPath, f.faultHandler())
	f.serve(newHTTPServer(mux, 0), ln)
	return nil
}

// memoryOf returns server i's memory store, if it has one of its own to
// bound: a local jar, or the one memory store a shared fleet runs.
func (f *Fleet) memoryOf(i int) (*store.Memory, bool) {
	idx := 0
	if f.opts.Scenario.Topology.Kind == sim.Local {
		idx = i
	} else if i != 0 {
		return nil, false // the shared store's stats are server 0's
	}
	if idx >= len(f.copies) {
		return nil, false
	}
	m, ok := f.copies[idx].(*store.Memory)
	return m, ok
}

// sweepMemory drops, every sweepEvery, the keys of the fleet's memory
// stores that are back to full: the ones no request comes back for, which
// forgetting on touch never reaches.
func (f *Fleet) sweepMemory() {
	var mems []*store.Memory
	for _, c := range f.copies {
		if m, ok := c.(*store.Memory); ok {
			mems = append(mems, m)
		}
	}
	if len(mems) == 0 {
		return
	}
	stop := make(chan struct{})
	f.stopSweep = func() { close(stop) }
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		tick := time.NewTicker(sweepEvery)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case now := <-tick.C:
				for _, m := range mems {
					m.Sweep(algorithms.FromTime(now))
				}
			}
		}
	}()
}

// openStores builds the copies of the limiter state the topology needs.
func (f *Fleet) openStores(ctx context.Context, alg algorithms.Algorithm) error {
	sc := f.opts.Scenario
	copies := len(f.topo.Copies())
	urls := []string{f.opts.Store}
	if sc.Topology.Kind == sim.SplitBrain && strings.Contains(f.opts.Store, ",") {
		urls = strings.Split(f.opts.Store, ",")
		if len(urls) != 2 {
			return optionError("Store", "split-brain takes two Redis URLs separated by a comma (got %d)", len(urls))
		}
	}
	var b [4]byte
	rand.Read(b[:])
	prefix := "ratelim-serve:" + hex.EncodeToString(b[:]) + ":"
	open := func(kind string, copyIndex int) (switchable, error) {
		switch {
		case kind == "" || kind == "memory":
			// A server's store forgets full keys and holds a bounded
			// number: keys are what its clients choose.
			return store.NewServerMemory(alg), nil
		case kind == "redis-server":
			if f.redis == nil {
				// Not a SetupError: the input was fine, the machine (no
				// redis-server, one that would not start) or the user
				// (ctrl-c during the start) stopped it.
				rs, err := StartRedisServer(ctx)
				if err != nil {
					return nil, err
				}
				f.redis = rs
				f.closers = append(f.closers, rs.Close)
			}
			kind = f.redis.URL()
		}
		addr := kind
		if kind == "miniredis" {
			addr = store.Embedded
		}
		keyPrefix := fmt.Sprintf("%s%d:", prefix, copyIndex)
		r, err := store.OpenRedis(ctx, alg, store.RedisOptions{URL: addr, Prefix: keyPrefix, FailFast: true})
		if err != nil {
			if m, ok := alg.(*algorithms.Multi); ok {
				return nil, &sim.SetupError{Err: fmt.Errorf("topology.store: %s cannot run a key with %d limits (%s): %w; run it on store: memory",
					store.Redacted(kind), m.Len(), m.Name(), err)}
			}
			return nil, &sim.SetupError{Err: err}
		}
		if r.Embedded() != nil {
			f.embedded = append(f.embedded, r)
		}
		// Where, for the operator, without a password the URL may hold.
		where := store.Redacted(kind)
		f.closers = append(f.closers, func() error {
			// Bounded: a store that went away at the end must not hold
			// the fleet's exit. Its keys then wait for their TTLs.
			ctx, cancel := context.WithTimeout(context.Background(), clearTimeout)
			defer cancel()
			_, err := r.Clear(ctx)
			r.Close()
			if err != nil {
				return &sim.CleanupError{Err: fmt.Errorf("%s: %w", where, err)}
			}
			return nil
		})
		return r, nil
	}
	for i := range copies {
		kind := urls[min(i, len(urls)-1)]
		c, err := open(strings.TrimSpace(kind), i)
		if err != nil {
			return err
		}
		f.copies = append(f.copies, c)
	}
	return nil
}

// limiterFor is server i's view of the store: the copy the topology routes
// it to at the moment of each request, as in the simulator.
func (f *Fleet) limiterFor(i int, alg algorithms.Algorithm) store.Limiter {
	if !f.topo.Remote() {
		return f.copies[i] // a jar in the server's own memory: nothing takes it away
	}
	var racy *store.Racy
	if f.topo.Kind() == topology.Racy {
		racy = store.NewRacy(alg, f.copies[0])
	}
	return limiterFunc(func(ctx context.Context, key string, now algorithms.Time, cost int64) (store.Decision, error) {
		f.mu.Lock()
		target := f.topo.Route(i, f.clock())
		f.mu.Unlock()
		switch {
		case target == topology.Unreachable:
			return store.Decision{}, errUnreachable
		case racy != nil:
			return racy.Take(ctx, key, now, cost)
		}
		d, err := f.copies[target].Take(ctx, key, now, cost)
		if err == nil && target == 0 && d.Allowed {
			err = f.replicate(ctx, key)
		}
		return d, err
	})
}

// errUnreachable is what a server sees from a store the topology says it
// cannot reach (an outage the fleet could not make real, a partition).
var errUnreachable = errors.New("store unreachable (outage or partition)")

// maxHealKeys bounds the keys a split brain remembers for its heal: past
// it, a key's replica catches up on its next admission instead.
const maxHealKeys = 100_000

// clock is the fleet's time, from its start: the partition's timing
// (failover_after, primary_stops_after) is measured on it.
func (f *Fleet) clock() algorithms.Time { return algorithms.At(time.Since(f.started)) }

// replicate sends key's new state on the primary towards the replica, which
// receives it replication_lag later, as the simulator's split brain does.
func (f *Fleet) replicate(ctx context.Context, key string) error {
	f.mu.Lock()
	on := f.topo.Replicates()
	f.mu.Unlock()
	if !on {
		return nil
	}
	st, err := f.copies[0].Load(ctx, key)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.healKeys) < maxHealKeys {
		f.healKeys[key] = struct{}{}
	}
	return f.topo.Replicate(ctx, key, st, f.clock(), f.saveReplica)
}

// saveReplica writes a replicated state to the replica.
func (f *Fleet) saveReplica(ctx context.Context, key string, st algorithms.State) error {
	return f.copies[1].Save(ctx, key, st, time.Hour)
}

type limiterFunc func(ctx context.Context, key string, now algorithms.Time, cost int64) (store.Decision, error)

func (fn limiterFunc) Take(ctx context.Context, key string, now algorithms.Time, cost int64) (store.Decision, error) {
	return fn(ctx, key, now, cost)
}

// Fault applies a scenario fault for real, at its start or its end: an
// outage stops the store (a redis-server the fleet started is killed and
// restarted; miniredis is closed and restarted; other stores are cut off),
// a partition cuts the servers outside its first group off from the store
// and, on a split brain, fails them over to the replica after
// failover_after: the simulator's topology, applied on the fleet's clock.
// A crash kills its servers: each abandons the requests it is serving (their
// connections cut, their leases never given back, held in the store until
// their TTL, as Abandoned counts) and answers nothing until the crash ends;
// the load run routes around them meanwhile. Latency and clock-skew faults
// are the simulator's only.
func (f *Fleet) Fault(fault sim.Fault, start bool) error {
	if err := checkFaultServers(fault, len(f.URLs)); err != nil {
		return err
	}
	switch fault.Kind {
	case sim.Crash:
		return f.crash(fault.Servers, start)
	case sim.Outage:
		switch {
		case f.redis != nil && start:
			return f.redis.Stop()
		case f.redis != nil:
			return f.redis.Start(context.Background())
		case len(f.embedded) > 0:
			for _, r := range f.embedded {
				if start {
					r.Embedded().Close()
				} else if err := r.Embedded().Restart(); err != nil {
					return err
				}
			}
			return nil
		}
		f.mu.Lock()
		if start {
			f.topo.OutageStarts()
		} else {
			f.topo.OutageEnds()
		}
		f.mu.Unlock()
	case sim.Partition:
		var keep []int
		if len(fault.Groups) > 0 {
			keep = fault.Groups[0]
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if start {
			return f.topo.PartitionStarts(context.Background(), f.clock(), keep, f.saveReplica)
		}
		return f.topo.PartitionEnds(f.resync)
	}
	return nil
}

// resync is a split brain's heal: the replica's writes during the
// partition are lost, each key the primary took since the last heal is
// copied across, and replication resumes. f.mu is held.
func (f *Fleet) resync() error {
	ctx, cancel := context.WithTimeout(context.Background(), clearTimeout)
	defer cancel()
	for key := range f.healKeys {
		st, err := f.copies[0].Load(ctx, key)
		if err != nil {
			return err
		}
		if err := f.copies[1].Save(ctx, key, st, time.Hour); err != nil {
			return err
		}
	}
	clear(f.healKeys)
	return nil
}

// FaultPath is where a fleet takes a scenario's faults from a load run in
// another process: POST with kind, start (1 or 0) and, for a partition,
// groups ("0,1|2,3"), for a crash, servers ("1,2"), and the header Authorization: Bearer TOKEN. It is
// served on the control listener only (Fleet.ControlURL, loopback), never
// on an API port.
const FaultPath = "/ratelim/fault"

func (f *Fleet) faultHandler() http.Handler {
	want := []byte("Bearer " + f.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			http.Error(w, "a fault needs the fleet's token (Authorization: Bearer TOKEN, as 'ratelim serve' printed it)", http.StatusUnauthorized)
			return
		}
		if r.Method != http.MethodPost {
			http.Error(w, "POST a fault", http.StatusMethodNotAllowed)
			return
		}
		fault, start, err := parseFault(r.URL.Query())
		if err == nil {
			err = f.Fault(fault, start)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

func parseFault(q url.Values) (sim.Fault, bool, error) {
	f := sim.Fault{Kind: sim.FaultKind(q.Get("kind"))}
	switch f.Kind {
	case sim.Outage, sim.Partition, sim.Latency, sim.ClockSkew, sim.Crash:
	default:
		return f, false, fmt.Errorf("unknown fault kind %q", f.Kind)
	}
	for _, n := range strings.Split(q.Get("servers"), ",") {
		if n = strings.TrimSpace(n); n == "" {
			continue
		}
		i, err := strconv.Atoi(n)
		if err != nil {
			return f, false, fmt.Errorf("servers: %q is not a server number (want e.g. 1,2)", n)
		}
		f.Servers = append(f.Servers, i)
	}
	for _, g := range strings.Split(q.Get("groups"), "|") {
		if g == "" {
			continue
		}
		var group []int
		for _, n := range strings.Split(g, ",") {
			i, err := strconv.Atoi(strings.TrimSpace(n))
			if err != nil {
				return f, false, fmt.Errorf("groups: %q is not a server number (want e.g. 0,1|2,3)", n)
			}
			group = append(group, i)
		}
		f.Groups = append(f.Groups, group)
	}
	switch q.Get("start") {
	case "1":
		return f, true, nil
	case "0":
		return f, false, nil
	}
	return f, false, fmt.Errorf("start: %q is neither 1 (the fault begins) nor 0 (it ends)", q.Get("start"))
}

// checkFaultServers refuses a fault naming servers a fleet of n cannot
// apply it to, whatever its kind, by the rules a scenario file's faults
// keep (scenarios' serverList): every number is a server (0 to n-1), none
// is listed twice in servers, each is in one group only; a partition has
// groups; a crash has servers and leaves one to serve. Fleet.Fault checks
// here first, so a fault from the control listener and one from this
// process are held to the same rules; a refusal names the field.
func checkFaultServers(fault sim.Fault, n int) error {
	exists := func(field string, s int) error {
		if s < 0 || s >= n {
			return fmt.Errorf("%s: server %d does not exist (want 0 to %d: servers are numbered from 0)", field, s, n-1)
		}
		return nil
	}
	listed := make(map[int]bool, len(fault.Servers))
	for _, s := range fault.Servers {
		if err := exists("servers", s); err != nil {
			return err
		}
		if listed[s] {
			return fmt.Errorf("servers: server %d is listed twice (want each server once)", s)
		}
		listed[s] = true
	}
	groupOf := map[int]int{}
	for gi, g := range fault.Groups {
		if len(g) == 0 {
			return fmt.Errorf("groups: group %d is empty (want server numbers in each, e.g. 0,1|2,3)", gi)
		}
		for _, s := range g {
			if err := exists("groups", s); err != nil {
				return err
			}
			if prev, ok := groupOf[s]; ok {
				if prev == gi {
					return fmt.Errorf("groups: server %d is listed twice in group %d (want each server once)", s, gi)
				}
				return fmt.Errorf("groups: server %d is in group %d and group %d (want each server in one group only)", s, prev, gi)
			}
			groupOf[s] = gi
		}
	}
	switch fault.Kind {
	case sim.Partition:
		if len(fault.Groups) == 0 {
			return fmt.Errorf("groups: a partition splits the servers into groups (want e.g. 0,1|2,3; the first keeps the primary)")
		}
	case sim.Crash:
		if len(fault.Servers) == 0 {
			return fmt.Errorf("servers: a crash needs the servers that crash (want e.g. 1)")
		}
		if len(fault.Servers) >= n {
			return fmt.Errorf("servers: every server crashes, and no one is left to serve (want fewer than the %d servers)", n)
		}
	}
	return nil
}

// RemoteFaults returns an OnFault for a load run that applies faults to a
// fleet in another process through FaultPath on its control URL, with its
// token.
func RemoteFaults(client *http.Client, control, token string) func(sim.Fault, bool) error {
	target := control
	return func(f sim.Fault, start bool) error {
		q := url.Values{"kind": {string(f.Kind)}, "start": {"0"}}
		if start {
			q.Set("start", "1")
		}
		var groups []string
		for _, g := range f.Groups {
			var ns []string
			for _, n := range g {
				ns = append(ns, strconv.Itoa(n))
			}
			groups = append(groups, strings.Join(ns, ","))
		}
		if len(groups) > 0 {
			q.Set("groups", strings.Join(groups, "|"))
		}
		if f.Kind == sim.Crash {
			var ns []string
			for _, n := range f.Servers {
				ns = append(ns, strconv.Itoa(n))
			}
			q.Set("servers", strings.Join(ns, ","))
		}
		req, err := http.NewRequest(http.MethodPost, strings.TrimSuffix(target, "/")+FaultPath+"?"+q.Encode(), nil)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
			return fmt.Errorf("%s refused the fault: %s %s", target, resp.Status, strings.TrimSpace(string(body)))
		}
		return nil
	}
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

// costOf is what a request to the demo servers spends: its CostHeader
// (what a load run sends for a traffic pattern's cost:), 1 when it has
// none or one that is not a whole number from 1 to 2^50.
func costOf(r *http.Request) int64 {
	v := r.Header.Get(CostHeader)
	if v == "" {
		return 1
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1 || n > 1<<50 {
		return 1
	}
	return n
}

// shadowUntil is the instant a limit shadowed for until from the fleet's
// start begins to enforce; the zero time (shadow for good) for 0.
func shadowUntil(started time.Time, until time.Duration) time.Time {
	if until <= 0 {
		return time.Time{}
	}
	return started.Add(until)
}
