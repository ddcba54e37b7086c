// The request path: what the middleware New returns does with each request
// (handler.ServeHTTP), from its key to the handler or the refusal, and the
// answers it writes when it does not call the handler.

package httplimit

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/store"
)

// handler is one handler wrapped by New's middleware: the limiter every
// wrapped handler shares, and the handler it guards.
type handler struct {
	*limiter
	next http.Handler
}

// ServeHTTP decides r by its key and answers it: refused without a key
// that is required or with one too long, decided by the fail policy when
// the store fails, shed, passed in shadow mode, or enforced (New lists
// the answers). A lease the decision carries is given back when r is
// over, however it ends.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := h.key(r)
	if key == "" || len(key) > h.maxKey {
		h.serveUnkeyed(w, r, key)
		return
	}
	ctx := r.Context()
	start := h.clock()
	now := algorithms.FromTime(start)
	cost := int64(1)
	if h.cost != nil {
		cost = max(h.cost(r), 0)
	}
	d, err := h.take.Take(ctx, key, now, cost)
	if h.metrics != nil {
		h.metrics.observeStore(h.clock().Sub(start))
	}
	if err != nil {
		// WithPolicy turns every store error into a decision but one:
		// the request's context ended (the client left, the server is
		// shutting down), and then nobody is waiting for a decision.
		h.metrics.count(canceled)
		writeCanceled(w)
		return
	}
	if d.Policy != "" {
		h.serveByPolicy(w, r, d, now, cost)
		return
	}
	h.storeHealthy()
	if d.Allowed && d.Lease != 0 {
		// However the request ends: the handler returns or panics, the
		// client leaves, the delay below is cut short.
		defer h.giveBack(ctx, key, d.Lease, cost)
	}
	// The shedder weighs what would reach the handler, before any
	// RateLimit field is written (a shed answer has none) and before a
	// leaky bucket's delay (a request to be shed does not queue first).
	if h.shedder != nil && (d.Allowed || h.shadowing(start)) && h.sheds(w, r, now, cost) {
		return
	}
	if h.shadowing(start) {
		h.serveShadowed(w, r, d)
		return
	}
	h.serveEnforced(w, r, d, now)
}

// serveUnkeyed answers a request whose key is empty or longer than
// maxKey, without asking the limiter: an empty key passes unlimited
// (Config.RequireKey refuses it with 400 instead), a long one is refused
// before the store has to keep it.
func (h *handler) serveUnkeyed(w http.ResponseWriter, r *http.Request, key string) {
	if key == "" {
		if h.requireKey {
			h.metrics.count(noKey)
			http.Error(w, "400 Bad Request: the request has no "+h.keyName+", which this API's rate limit is keyed by", http.StatusBadRequest)
			return
		}
		h.next.ServeHTTP(w, r)
		return
	}
	h.metrics.count(keyTooLong)
	writeKeyTooLong(w, key, h.maxKey)
}

// serveByPolicy answers a request the fail policy decided, the store
// having failed: fail-open lets it through to the shedder and the
// handler, fail-closed answers 503. Neither writes RateLimit fields, since
// the limiter did not decide; both say who did in DecidedByHeader.
func (h *handler) serveByPolicy(w http.ResponseWriter, r *http.Request, d store.Decision, now algorithms.Time, cost int64) {
	h.storeFailing(d)
	w.Header().Set(DecidedByHeader, string(d.Policy))
	if d.Allowed {
		if h.shedder != nil && h.sheds(w, r, now, cost) {
			return
		}
		h.metrics.count(failedOpen)
		h.next.ServeHTTP(w, r)
		return
	}
	h.metrics.count(failedClosed)
	writeError(w, http.StatusServiceUnavailable, max(ceilSeconds(d.RetryAfter), 1),
		"rate limiter unavailable")
}

// serveShadowed passes a request while the middleware as a whole is in
// shadow mode: no RateLimit fields, no delay, nobody refused; one the
// limit would have refused says so in ShadowHeader.
func (h *handler) serveShadowed(w http.ResponseWriter, r *http.Request, d store.Decision) {
	if !d.Allowed || d.WouldReject {
		w.Header().Set(ShadowHeader, "would-reject")
		h.metrics.count(wouldReject)
	} else {
		h.metrics.count(allowed)
	}
	h.next.ServeHTTP(w, r)
}

// serveEnforced answers a request the limiter decided and enforces: the
// RateLimit fields, then 429 for a refusal, or the decision's delay (a
// leaky bucket's queue) and the handler for an admission.
func (h *handler) serveEnforced(w http.ResponseWriter, r *http.Request, d store.Decision, now algorithms.Time) {
	var retryAfter int64
	if h.policies != nil {
		retryAfter, _ = h.policies.write(w.Header(), d.Decision, now)
	} else {
		var f fields
		f, retryAfter = h.quota.fieldsFor(d.Decision)
		h.quota.write(w.Header(), f)
	}
	if !d.Allowed {
		h.metrics.count(rejected)
		writeError(w, http.StatusTooManyRequests, retryAfter, "rate limit exceeded")
		return
	}
	if d.Delay > 0 && !sleep(r.Context(), d.Delay) {
		h.metrics.count(canceled)
		writeCanceled(w)
		return
	}
	if d.Delay > 0 {
		w.Header().Set(DelayHeader, strconv.FormatFloat(d.Delay.Seconds(), 'f', -1, 64))
	}
	if d.WouldReject {
		// A limit of several in shadow mode would have refused it.
		w.Header().Set(ShadowHeader, "would-reject")
		h.metrics.count(wouldReject)
	} else {
		h.metrics.count(allowed)
	}
	h.next.ServeHTTP(w, r)
}

// shadowing reports whether the middleware is in shadow mode at start
// (Config.Shadow: the single limit, or every one of several), letting
// every request through.
func (l *limiter) shadowing(start time.Time) bool {
	return l.shadow && (l.shadowUntil.IsZero() || start.Before(l.shadowUntil))
}

// sleep waits d, and reports whether it did: false if ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// writeError answers status with Retry-After in seconds and a one-line
// plain-text body a person reading a log or a curl output understands.
func writeError(w http.ResponseWriter, status int, retryAfter int64, what string) {
	h := w.Header()
	s := strconv.FormatInt(retryAfter, 10)
	h[fieldRetryAfter] = []string{s}
	h["Content-Type"] = []string{"text/plain; charset=utf-8"}
	h["X-Content-Type-Options"] = []string{"nosniff"}
	w.WriteHeader(status)
	fmt.Fprintf(w, "%d %s: %s; retry after %s s\n", status, http.StatusText(status), what, s)
}

// writeKeyTooLong refuses a request whose key is longer than limit bytes:
// 431 if the key came from a header, as KeyBy's API keys and users do, else
// 400. The body says how long the key was, never what it was.
func writeKeyTooLong(w http.ResponseWriter, key string, limit int) {
	status := http.StatusBadRequest
	if strings.HasPrefix(key, KeyPrefixAPIKey) || strings.HasPrefix(key, KeyPrefixUser) {
		status = http.StatusRequestHeaderFieldsTooLarge
	}
	http.Error(w, fmt.Sprintf("%d %s: the rate-limit key is %d bytes, longer than the %d allowed",
		status, http.StatusText(status), len(key), limit), status)
}

// writeCanceled answers a request whose context ended before it could be
// served. The client has usually gone; if something is still listening (a
// proxy, a timeout handler), a 503 tells it the handler never ran.
func writeCanceled(w http.ResponseWriter) {
	http.Error(w, "503 Service Unavailable: request canceled before the rate limiter let it through", http.StatusServiceUnavailable)
}
