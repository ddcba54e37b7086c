// Giving back a lease: a request a limit on requests in flight admitted
// holds a lease until it is done, and giveBack returns it to the store
// (New says when), with a context and a deadline of its own.

package httplimit

import (
	"context"
	"time"

	"github.com/ratelim/ratelim/algorithms"
)

// ReleaseTimeout bounds how long the middleware waits for the store to
// take back a request's lease ([New] says when it gives one back). The
// release runs after the request is done, often because the client left,
// so it has a context of its own: the request's values, none of its
// cancellation, and this deadline. A store that does not answer in time
// leaves the lease to expire by its TTL.
const ReleaseTimeout = time.Second

// giveBack releases the lease a request held, at the Clock's instant, with
// a context that keeps rctx's values but not its end (the client may be
// gone) and has ReleaseTimeout.
func (l *limiter) giveBack(rctx context.Context, key string, lease algorithms.Time, cost int64) {
	if l.release == nil {
		if !l.noRelease.Load() && l.noRelease.CompareAndSwap(false, true) {
			l.log.Warn("httplimit: the store cannot give back a lease (it has no Release): each is held until its TTL expires, and the key has fewer slots meanwhile",
				"store", l.storeType)
		}
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(rctx), ReleaseTimeout)
	defer cancel()
	err := l.release.Release(ctx, key, algorithms.FromTime(l.clock()), lease, cost)
	if err != nil {
		l.metrics.countRelease(releaseFailed)
		l.releaseFailures.Add(1)
		if !l.releaseFailing.Load() && l.releaseFailing.CompareAndSwap(false, true) {
			l.log.Warn("httplimit: giving back a lease failed; it is held until its TTL expires (logged again only after a release succeeds)",
				"err", err)
		}
		return
	}
	l.metrics.countRelease(released)
	if l.releaseFailing.Load() && l.releaseFailing.CompareAndSwap(true, false) {
		l.log.Info("httplimit: giving back leases works again", "failed", l.releaseFailures.Swap(0))
	}
}
