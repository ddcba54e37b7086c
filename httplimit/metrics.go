package httplimit

import (
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ratelim/ratelim/store"
)

// The values of the decision label of ratelim_requests_total.
const (
	// DecisionAllowed: the limiter admitted the request; the handler ran.
	DecisionAllowed = "allowed"
	// DecisionRejected: over the limit, answered 429.
	DecisionRejected = "rejected"
	// DecisionFailedOpen: the store failed and fail-open admitted it.
	DecisionFailedOpen = "failed_open"
	// DecisionFailedClosed: the store failed and fail-closed answered 503.
	DecisionFailedClosed = "failed_closed"
	// DecisionCanceled: the request's context ended before the limiter
	// decided or while an admitted request waited its leaky-bucket delay;
	// the handler did not run.
	DecisionCanceled = "canceled"
	// DecisionKeyTooLong: the request's key was longer than
	// Config.MaxKeyBytes, answered 431 (or 400) before the limiter was
	// asked; the handler did not run.
	DecisionKeyTooLong = "key_too_long"
	// DecisionWouldReject: the limit is in shadow mode (Config.Shadow),
	// or one of several is (Config.Policies) and the others admitted, and
	// it would have answered 429; the handler ran.
	DecisionWouldReject = "would_reject"
	// DecisionShed: the limit let the request through and the load
	// shedder (Config.Shedder) turned it away, answered 503; the handler
	// did not run. Counted here only, whatever let it through (a
	// fail-open store, a limit in shadow mode).
	DecisionShed = "shed"
	// DecisionNoKey: the request had no key and Config.RequireKey
	// refused it, answered 400; the handler did not run.
	DecisionNoKey = "no_key"
)

// The values of the result label of ratelim_lease_releases_total.
const (
	// ReleaseReleased: a request done, its lease given back.
	ReleaseReleased = "released"
	// ReleaseFailed: the store failed to take the lease back (down, or
	// slower than ReleaseTimeout); the lease is held until its TTL.
	ReleaseFailed = "failed"
)

// Metrics are the middleware's Prometheus metrics:
//
//   - ratelim_requests_total{decision="allowed|rejected|failed_open|failed_closed|canceled|key_too_long|would_reject|shed|no_key"},
//     a counter of requests by what happened to them;
//   - ratelim_store_seconds, a histogram of how long the limiter's Take took,
//     failures included (a store timing out is the latency that matters);
//   - ratelim_lease_releases_total{result="released|failed"}, a counter of
//     the leases of requests in flight given back when their request was
//     done, and of the releases the store failed: 0 for a limit that
//     hands out no leases. A store that cannot release at all counts
//     nothing here (the log says so once).
//
// One Metrics may be shared by several middlewares: they add to the same
// series.
//
// The zero Metrics, like a nil *Metrics, records nothing: it has no series
// and is registered nowhere. Build one with [NewMetrics].
type Metrics struct {
	requests [numOutcomes]prometheus.Counter // by outcome
	store    prometheus.Histogram
	releases [numReleaseResults]prometheus.Counter // by releaseResult
}

// releaseResult is how giving back a lease went, an index into
// Metrics.releases.
type releaseResult int

const (
	released releaseResult = iota
	releaseFailed
	numReleaseResults
)

var releaseLabels = [numReleaseResults]string{ReleaseReleased, ReleaseFailed}

// outcome is what happened to a request, an index into Metrics.requests.
type outcome int

const (
	allowed outcome = iota
	rejected
	failedOpen
	failedClosed
	canceled
	keyTooLong
	wouldReject
	shed
	noKey
	numOutcomes
)

var outcomeLabels = [numOutcomes]string{DecisionAllowed, DecisionRejected, DecisionFailedOpen, DecisionFailedClosed, DecisionCanceled, DecisionKeyTooLong, DecisionWouldReject, DecisionShed, DecisionNoKey}

// storeBuckets run from 10 µs (an in-process store) to about 2.6 s (a
// store timing out), ×4 a step: where a memory store, a Redis round trip on
// loopback and one across a network each land in a bucket of their own.
var storeBuckets = prometheus.ExponentialBuckets(10e-6, 4, 10)

// NewMetrics creates the metrics and registers them on reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	if reg == nil {
		return nil, errors.New("httplimit: NewMetrics needs a prometheus.Registerer")
	}
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ratelim_requests_total",
		Help: "Requests seen by the rate limiter, by decision: allowed, rejected (429), failed_open and failed_closed (the store failed and the fail policy decided), canceled (the request's context ended first), key_too_long (431 or 400: a key longer than the bound, never given to the store), would_reject (shadow mode: a 429 it did not send), shed (503: let through by the limit, turned away by the load shedder), no_key (400: no key, and the key is required).",
	}, []string{"decision"})
	store := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "ratelim_store_seconds",
		Help:    "How long the rate limiter's store took to decide one request, failures included.",
		Buckets: storeBuckets,
	})
	releases := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ratelim_lease_releases_total",
		Help: "Leases of requests in flight (a concurrency limit's) given back when the request was done, by result: released, or failed (the store did not take it back; it is held until its TTL).",
	}, []string{"result"})
	for _, c := range []prometheus.Collector{requests, store, releases} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("httplimit: registering metrics: %w", err)
		}
	}
	// Created up front, so that every series exists (at 0) from the start:
	// a rate() over a series that appears only at the first failure misses it.
	m := &Metrics{store: store}
	for o, label := range outcomeLabels {
		m.requests[o] = requests.WithLabelValues(label)
	}
	for r, label := range releaseLabels {
		m.releases[r] = releases.WithLabelValues(label)
	}
	return m, nil
}

// count, countRelease and observeStore check the series, not just m: a zero Metrics
// (&httplimit.Metrics{}) has none, and a metric nobody can scrape is not
// worth a panic on a request.
func (m *Metrics) count(o outcome) {
	if m != nil && m.requests[o] != nil {
		m.requests[o].Inc()
	}
}

func (m *Metrics) countRelease(r releaseResult) {
	if m != nil && m.releases[r] != nil {
		m.releases[r].Inc()
	}
}

func (m *Metrics) observeStore(d time.Duration) {
	if m != nil && m.store != nil {
		m.store.Observe(d.Seconds())
	}
}

// RegisterMemoryStats registers, on reg, metrics read from stats at each
// scrape, for an in-process store ([store.Memory.Stats]):
//
//   - ratelim_store_keys, a gauge of the keys the store holds;
//   - ratelim_store_forgotten_total, a counter of keys forgotten because
//     their state was back to full (no decision differs for them);
//   - ratelim_store_evictions_total, a counter of keys evicted, not yet
//     full, because the store was full: each a client whose next request
//     starts from a full limit. Alert when it rises.
//
// A server passes its store's method value: RegisterMemoryStats(reg, mem.Stats).
func RegisterMemoryStats(reg prometheus.Registerer, stats func() store.MemoryStats) error {
	if reg == nil || stats == nil {
		return errors.New("httplimit: RegisterMemoryStats needs a prometheus.Registerer and a stats function")
	}
	if err := reg.Register(memoryStats{stats}); err != nil {
		return fmt.Errorf("httplimit: registering store metrics: %w", err)
	}
	return nil
}

var (
	descStoreKeys      = prometheus.NewDesc("ratelim_store_keys", "Keys the in-process rate-limiter store holds.", nil, nil)
	descStoreForgotten = prometheus.NewDesc("ratelim_store_forgotten_total", "Keys the in-process store forgot because their state was back to full.", nil, nil)
	descStoreEvictions = prometheus.NewDesc("ratelim_store_evictions_total", "Keys the in-process store evicted before their state was back to full, because it held its maximum number of keys.", nil, nil)
)

// memoryStats is a collector reading one Stats per scrape, so that the
// three numbers it reports are of one instant.
type memoryStats struct{ stats func() store.MemoryStats }

func (c memoryStats) Describe(ch chan<- *prometheus.Desc) {
	ch <- descStoreKeys
	ch <- descStoreForgotten
	ch <- descStoreEvictions
}

func (c memoryStats) Collect(ch chan<- prometheus.Metric) {
	s := c.stats()
	ch <- prometheus.MustNewConstMetric(descStoreKeys, prometheus.GaugeValue, float64(s.Keys))
	ch <- prometheus.MustNewConstMetric(descStoreForgotten, prometheus.CounterValue, float64(s.Forgotten))
	ch <- prometheus.MustNewConstMetric(descStoreEvictions, prometheus.CounterValue, float64(s.Evictions))
}
