// One API server of the fleet: the bounds of its http.Server (timeouts,
// the size of a request's head, a write timeout that allows for a leaky
// bucket's delay) and what a request to it costs. The demo API it serves,
// which holds each request for its service time, is in inflight.go.

package live

import (
	"math"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/httplimit"
)

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

// middlewareConfig is the httplimit configuration every API server of the
// fleet shares: the scenario's quota (several policies for several
// limits, or one, with its shadow mode), its key rule, its fail policy,
// the demo's costs and the fleet's one shedder. Each server adds its own
// limiter, metrics and logger (apiHandler).
func (f *Fleet) middlewareConfig(alg algorithms.Algorithm, shedder *httplimit.Shedder, priority func(*http.Request) algorithms.Priority) httplimit.Config {
	sc := f.opts.Scenario
	cfg := httplimit.Config{OnError: sc.Topology.OnError, Cost: costOf, Shedder: shedder, Priority: priority}
	if len(sc.Also) > 0 {
		// Each limit's shadow mode is the Multi's: its decision says
		// WouldReject, and the policies say which to leave unlisted.
		cfg.Policies = httplimit.QuotasOf(alg)
	} else {
		cfg.Limit, cfg.Window = httplimit.QuotaOf(alg)
		cfg.Shadow, cfg.ShadowUntil = sc.Limit.Shadow, shadowUntil(f.started, sc.Limit.ShadowUntil)
	}
	key := keyFor(sc.Limit.Key, f.opts.TrustedProxies)
	cfg.Key, cfg.RequireKey, cfg.KeyName = key.fn, key.required, key.name
	return cfg
}

// startServer starts API server i listening on addr, serving apiHandler
// with the fleet's bounds until Close, and adds its URL to f.URLs.
func (f *Fleet) startServer(i int, addr string, alg algorithms.Algorithm, shared httplimit.Config) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return optionError("Listen", "server %d: %w", i, err)
	}
	h, err := f.apiHandler(i, alg, shared)
	if err != nil {
		ln.Close()
		return err
	}
	f.URLs = append(f.URLs, "http://"+ln.Addr().String())
	f.serve(newHTTPServer(h, maxDelayOf(alg)), ln)
	return nil
}

// apiHandler is what API server i serves: its own Prometheus registry at
// /metrics (the middleware's counts, the demo API's requests in flight,
// its memory store's size), 404 for anything under /ratelim/ (the control
// plane is never on an API port), and the demo API behind the limit
// everywhere else. Its limiter is the copy of the store limiterFor routes
// each request to, stamped (each answer says when it was decided) and
// giving leases back unless the server crashed meanwhile (leasesOf).
func (f *Fleet) apiHandler(i int, alg algorithms.Algorithm, cfg httplimit.Config) (http.Handler, error) {
	reg := prometheus.NewRegistry()
	metrics, err := httplimit.NewMetrics(reg)
	if err != nil {
		return nil, err
	}
	cfg.Limiter = f.leasesOf(i, stamped{f.limiterFor(i)})
	cfg.Metrics = metrics
	cfg.Logger = f.opts.Logger.With("server", i)
	mw, err := httplimit.New(cfg)
	if err != nil {
		return nil, err
	}
	if err := reg.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "ratelim_demo_in_flight",
		Help: "Requests the demo API is serving at this instant (each held for its X-Ratelim-Service).",
	}, func() float64 { return float64(f.inFlight[i].Load()) })); err != nil {
		return nil, err
	}
	if mem, ok := f.memoryOf(i); ok {
		if err := httplimit.RegisterMemoryStats(reg, mem.Stats); err != nil {
			return nil, err
		}
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	// Control is not served here: the API's clients must not reach it.
	mux.Handle("/ratelim/", http.NotFoundHandler())
	mux.Handle("/", f.alive(i, mw(f.demoAPI(i))))
	return mux, nil
}

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
