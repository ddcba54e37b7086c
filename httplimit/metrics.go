package httplimit

import (
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
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
)

// Metrics are the middleware's Prometheus metrics:
//
//   - ratelim_requests_total{decision="allowed|rejected|failed_open|failed_closed|canceled"},
//     a counter of requests by what happened to them;
//   - ratelim_store_seconds, a histogram of how long the limiter's Take took,
//     failures included (a store timing out is the latency that matters).
//
// One Metrics may be shared by several middlewares: they add to the same
// series.
type Metrics struct {
	requests [numOutcomes]prometheus.Counter // by outcome
	store    prometheus.Histogram
}

// outcome is what happened to a request, an index into Metrics.requests.
type outcome int

const (
	allowed outcome = iota
	rejected
	failedOpen
	failedClosed
	canceled
	numOutcomes
)

var outcomeLabels = [numOutcomes]string{DecisionAllowed, DecisionRejected, DecisionFailedOpen, DecisionFailedClosed, DecisionCanceled}

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
		Help: "Requests seen by the rate limiter, by decision: allowed, rejected (429), failed_open and failed_closed (the store failed and the fail policy decided), canceled (the request's context ended first).",
	}, []string{"decision"})
	store := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "ratelim_store_seconds",
		Help:    "How long the rate limiter's store took to decide one request, failures included.",
		Buckets: storeBuckets,
	})
	for _, c := range []prometheus.Collector{requests, store} {
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
	return m, nil
}

func (m *Metrics) count(o outcome) {
	if m != nil {
		m.requests[o].Inc()
	}
}

func (m *Metrics) observeStore(d time.Duration) {
	if m != nil {
		m.store.Observe(d.Seconds())
	}
}
