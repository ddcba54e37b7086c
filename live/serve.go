package live

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
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
	// + i. Port 0 takes free ports. Default 127.0.0.1:0.
	Listen string
	// Logger hears the servers' store failures and recoveries.
	Logger *slog.Logger
}

// Fleet is a running set of API servers behind the limiter.
type Fleet struct {
	// URLs are the servers' base URLs, server 0 first.
	URLs []string

	opts     ServeOptions
	servers  []*http.Server
	closers  []func() error
	redis    *RedisServer // when the fleet started redis-server itself
	embedded []*store.Redis
	outage   atomic.Bool
	side     []atomic.Int32 // split-brain: which copy each server uses
	copies   []switchable
	wg       sync.WaitGroup
	errs     chan error
}

// switchable is a store copy that an outage can take down.
type switchable interface {
	store.Limiter
	store.KV
}

// Serve starts the fleet and returns once every server listens.
func Serve(ctx context.Context, opts ServeOptions) (*Fleet, error) {
	sc := opts.Scenario
	alg, err := algorithms.New(sc.Limit.Algorithm, sc.Limit.Params)
	if err != nil {
		return nil, &sim.SetupError{Err: fmt.Errorf("limit.%w", err)}
	}
	if opts.Listen == "" {
		opts.Listen = "127.0.0.1:0"
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.Store == "" {
		opts.Store = sc.Topology.Store
	}
	f := &Fleet{opts: opts, errs: make(chan error, sc.Servers)}
	if err := f.openStores(ctx, alg); err != nil {
		f.Close(context.Background())
		return nil, err
	}
	host, portText, err := net.SplitHostPort(opts.Listen)
	if err != nil {
		f.Close(context.Background())
		return nil, &sim.SetupError{Err: fmt.Errorf("--listen: %q is not host:port (want e.g. 127.0.0.1:8080)", opts.Listen)}
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < 0 || port > 65535 {
		f.Close(context.Background())
		return nil, &sim.SetupError{Err: fmt.Errorf("--listen: port %q is not a port number", portText)}
	}
	limit, window := httplimit.QuotaOf(alg)
	f.side = make([]atomic.Int32, sc.Servers)
	for i := range sc.Servers {
		addr := net.JoinHostPort(host, "0")
		if port != 0 {
			addr = net.JoinHostPort(host, strconv.Itoa(port+i))
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			f.Close(context.Background())
			return nil, &sim.SetupError{Err: fmt.Errorf("--listen: server %d: %w", i, err)}
		}
		reg := prometheus.NewRegistry()
		metrics, err := httplimit.NewMetrics(reg)
		if err != nil {
			ln.Close()
			f.Close(context.Background())
			return nil, err
		}
		mw, err := httplimit.New(httplimit.Config{
			Limiter: f.limiterFor(i, alg),
			OnError: sc.Topology.OnError,
			Key: httplimit.KeyBy(httplimit.KeyOptions{
				Header: APIKeyHeader, UserHeader: UserHeader,
				// The load generator runs on this machine and sends each
				// client's IP in X-Forwarded-For: trust loopback peers.
				TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")},
			}),
			Limit: limit, Window: window, Metrics: metrics,
			Logger: opts.Logger.With("server", i),
		})
		if err != nil {
			ln.Close()
			f.Close(context.Background())
			return nil, err
		}
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		mux.Handle(FaultPath, f.faultHandler())
		mux.Handle("/", mw(demoAPI(i)))
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		f.servers = append(f.servers, srv)
		f.URLs = append(f.URLs, "http://"+ln.Addr().String())
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				f.errs <- err
			}
		}()
	}
	return f, nil
}

// demoAPI is the API the limiter protects: it says which server answered.
func demoAPI(server int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "ok from server %d\n", server)
	})
}

// openStores builds the copies of the limiter state the topology needs.
func (f *Fleet) openStores(ctx context.Context, alg algorithms.Algorithm) error {
	sc := f.opts.Scenario
	copies := 1
	switch sc.Topology.Kind {
	case sim.Local:
		copies = sc.Servers
	case sim.SplitBrain:
		copies = 2
	}
	urls := []string{f.opts.Store}
	if sc.Topology.Kind == sim.SplitBrain && strings.Contains(f.opts.Store, ",") {
		urls = strings.Split(f.opts.Store, ",")
		if len(urls) != 2 {
			return &sim.SetupError{Err: fmt.Errorf("--store: split-brain takes two Redis URLs separated by a comma (got %d)", len(urls))}
		}
	}
	var b [4]byte
	rand.Read(b[:])
	prefix := "ratelim-serve:" + hex.EncodeToString(b[:]) + ":"
	open := func(kind string, copyIndex int) (switchable, error) {
		switch {
		case kind == "" || kind == "memory":
			return store.NewMemory(alg), nil
		case kind == "redis-server":
			if f.redis == nil {
				rs, err := StartRedisServer(ctx)
				if err != nil {
					return nil, &sim.SetupError{Err: err}
				}
				f.redis = rs
				f.closers = append(f.closers, rs.Close)
			}
			kind = f.redis.URL()
		}
		url := kind
		if kind == "miniredis" {
			url = store.Embedded
		}
		r, err := store.OpenRedis(ctx, alg, store.RedisOptions{URL: url, Prefix: fmt.Sprintf("%s%d:", prefix, copyIndex), FailFast: true})
		if err != nil {
			return nil, &sim.SetupError{Err: err}
		}
		if r.Embedded() != nil {
			f.embedded = append(f.embedded, r)
		}
		f.closers = append(f.closers, func() error {
			_, err := r.Clear(context.Background())
			r.Close()
			return err
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

// limiterFor is server i's view of the store.
func (f *Fleet) limiterFor(i int, alg algorithms.Algorithm) store.Limiter {
	sc := f.opts.Scenario
	switch sc.Topology.Kind {
	case sim.Local:
		return f.down(f.copies[i], false)
	case sim.Racy:
		return f.down(store.NewRacy(alg, f.copies[0]), true)
	case sim.SplitBrain:
		return f.down(limiterFunc(func(ctx context.Context, key string, now algorithms.Time, cost int64) (store.Decision, error) {
			return f.copies[f.side[i].Load()].Take(ctx, key, now, cost)
		}), true)
	}
	return f.down(f.copies[0], true)
}

// down makes l fail while an outage is on (for a remote store; a jar in
// the server's own memory cannot be taken away).
func (f *Fleet) down(l store.Limiter, remote bool) store.Limiter {
	if !remote {
		return l
	}
	return limiterFunc(func(ctx context.Context, key string, now algorithms.Time, cost int64) (store.Decision, error) {
		if f.outage.Load() {
			return store.Decision{}, errors.New("store unreachable (outage)")
		}
		return l.Take(ctx, key, now, cost)
	})
}

type limiterFunc func(ctx context.Context, key string, now algorithms.Time, cost int64) (store.Decision, error)

func (fn limiterFunc) Take(ctx context.Context, key string, now algorithms.Time, cost int64) (store.Decision, error) {
	return fn(ctx, key, now, cost)
}

// Fault applies a scenario fault for real, at its start or its end: an
// outage stops the store (a redis-server the fleet started is killed and
// restarted; miniredis is closed and restarted; other stores are cut off),
// a partition switches the cut-off servers of a split-brain to the second
// copy and back. Latency and clock-skew faults are the simulator's only.
func (f *Fleet) Fault(fault sim.Fault, start bool) error {
	switch fault.Kind {
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
		f.outage.Store(start)
	case sim.Partition:
		if f.opts.Scenario.Topology.Kind != sim.SplitBrain || len(f.copies) < 2 {
			return nil
		}
		keep := map[int]bool{}
		if len(fault.Groups) > 0 {
			for _, s := range fault.Groups[0] {
				keep[s] = true
			}
		}
		for i := range f.side {
			if start && !keep[i] {
				f.side[i].Store(1)
			} else {
				f.side[i].Store(0)
			}
		}
	}
	return nil
}

// FaultPath is where a fleet takes a scenario's faults from a load run in
// another process: POST with kind, start (1 or 0) and, for a partition,
// groups ("0,1|2,3"). It listens on loopback only, like the fleet.
const FaultPath = "/ratelim/fault"

func (f *Fleet) faultHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
	case sim.Outage, sim.Partition, sim.Latency, sim.ClockSkew:
	default:
		return f, false, fmt.Errorf("unknown fault kind %q", f.Kind)
	}
	for _, g := range strings.Split(q.Get("groups"), "|") {
		if g == "" {
			continue
		}
		var group []int
		for _, n := range strings.Split(g, ",") {
			i, err := strconv.Atoi(strings.TrimSpace(n))
			if err != nil {
				return f, false, fmt.Errorf("groups: %q is not a server number", n)
			}
			group = append(group, i)
		}
		f.Groups = append(f.Groups, group)
	}
	return f, q.Get("start") == "1", nil
}

// RemoteFaults returns an OnFault for a load run that applies faults to a
// fleet in another process through FaultPath on target.
func RemoteFaults(client *http.Client, target string) func(sim.Fault, bool) error {
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
		resp, err := client.Post(strings.TrimSuffix(target, "/")+FaultPath+"?"+q.Encode(), "text/plain", nil)
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
// ctx's deadline) and closes the stores, deleting the keys the fleet wrote.
func (f *Fleet) Close(ctx context.Context) error {
	var errs []error
	for _, s := range f.servers {
		if err := s.Shutdown(ctx); err != nil {
			errs = append(errs, err)
		}
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
