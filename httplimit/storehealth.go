// The store's health as the log tells it: storeFailing and storeHealthy log
// a failing store once when the fail policy starts deciding and once when
// it has recovered (RecoveryQuiet), never once per request.

package httplimit

import (
	"time"

	"github.com/ratelim/ratelim/store"
)

// RecoveryQuiet is how long the store must answer every request before
// the middleware logs that it recovered. A store that fails some requests
// and answers others (a cluster with one master down fails that master's
// keys only; a store timing out under load fails one request in many)
// is failing, not recovering a thousand times a second: the log says
// "failing" once when the fail policy first decides, and "recovered"
// once the store has answered RecoveryQuiet without a failure, with how
// many requests the policy decided, how many the store answered
// meanwhile, and for how long. Longer than the Redis store's FailFast
// timeouts (200 ms), so that a request still hanging on a dead node when
// the others came back is not missed; short enough that an operator
// watching the log sees the recovery at once.
//
// A store that fails again within relapseWindow of a logged recovery was
// flapping, not recovered: the quiet its next recovery needs doubles, up
// to maxRecoveryQuiet (route-flap damping). Measured on a fleet whose
// clients alternate servers while a cluster master hangs, a server saw
// the hung keys' 200 ms timeouts 400 ms apart: without damping it logged
// a change every 200 ms; with it, twice more at most.
const RecoveryQuiet = 250 * time.Millisecond

const (
	maxRecoveryQuiet = 32 * RecoveryQuiet
	relapseWindow    = time.Minute
)

// storeFailing notes a decision the fail policy took, and logs it if the
// store was healthy (see RecoveryQuiet).
func (l *limiter) storeFailing(d store.Decision) {
	now := l.clockNanos()
	l.lastFailure.Store(now)
	l.byPolicy.Add(1)
	if l.failingSince.Load() == 0 && l.failingSince.CompareAndSwap(0, now) {
		quiet := int64(RecoveryQuiet)
		if at := l.recoveredAt.Load(); at != 0 && now-at < int64(relapseWindow) {
			quiet = min(2*max(l.quiet.Load(), quiet), int64(maxRecoveryQuiet))
		}
		l.quiet.Store(quiet)
		l.log.Warn("httplimit: rate limiter store failing; the fail policy decides until it recovers",
			"policy", string(d.Policy), "err", d.Err)
	}
}

// storeHealthy notes a decision the store took, and logs the recovery if
// the store was failing and has answered every request for the quiet its
// recovery needs (see RecoveryQuiet). The common case, a healthy store, is
// one atomic load.
func (l *limiter) storeHealthy() {
	since := l.failingSince.Load()
	if since == 0 {
		return
	}
	l.byStore.Add(1)
	now := l.clockNanos()
	last := l.lastFailure.Load()
	quiet := max(l.quiet.Load(), int64(RecoveryQuiet))
	if now-last < quiet || !l.failingSince.CompareAndSwap(since, 0) {
		return
	}
	l.recoveredAt.Store(now)
	// A failure racing this line counts in this recovery's figures or
	// the next failure's: each request is counted once.
	l.log.Info("httplimit: rate limiter store recovered",
		"decided_by_policy", l.byPolicy.Swap(0), "answered_by_store", l.byStore.Swap(0),
		"failed_for", time.Duration(last-since), "quiet", time.Duration(quiet))
}

// clockNanos is the Clock's instant in ns since 1970, never 0 (which
// failingSince keeps for "healthy").
func (l *limiter) clockNanos() int64 {
	if n := l.clock().UnixNano(); n != 0 {
		return n
	}
	return 1
}
