// One API server of the fleet: the bounds of its http.Server (timeouts,
// the size of a request's head, a write timeout that allows for a leaky
// bucket's delay) and what a request to it costs. The demo API it serves,
// which holds each request for its service time, is in inflight.go.

package live

import (
	"math"
	"net/http"
	"strconv"
	"time"

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
