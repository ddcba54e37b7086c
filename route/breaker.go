package route

import "github.com/ratelim/ratelim/algorithms"

// Breaker is a circuit breaker in front of one API server's store calls,
// as middleware puts one (sony/gobreaker's states): closed, it lets every
// call through and counts the failures in a row; after Failures of them
// it opens, and for Cooldown every call fails at once, with no wait for a
// store that does not answer; then it lets one call through as a probe
// (half-open), refusing the others while the probe is out, and closes if
// the probe succeeds or opens again if it fails.
//
// Time is an argument, as everywhere in ratelim: a call is sent at t and
// its outcome known at done (t plus its latency, a timeout's wait for a
// store that never answers). A failure opens the breaker when it is
// known, not when it was sent: the calls sent meanwhile still wait, as
// they do in a real one. Its zero value never opens (Failures 0).
type Breaker struct {
	Failures int             // failures in a row that open it; 0 never opens
	Cooldown algorithms.Time // how long it stays open before a probe

	inRow     int
	open      bool
	openFrom  algorithms.Time // open during [openFrom, openUntil)
	openUntil algorithms.Time
	probe     bool            // the call Allow just let through is the probe
	probeEnd  algorithms.Time // a probe is out until then
	// Opened counts the times it opened; ShortCircuited the calls it
	// failed at once.
	Opened         int64
	ShortCircuited int64
}

// Allow reports whether a call at t may go to the store; false is a call
// the breaker fails at once. A call it allows must be followed by Done.
func (b *Breaker) Allow(t algorithms.Time) bool {
	if b.Failures <= 0 {
		return true
	}
	switch {
	case t < b.probeEnd:
		// A probe is out: the others wait for its answer by failing.
	case b.open && t >= b.openFrom && t < b.openUntil:
	case b.open && t >= b.openUntil:
		b.probe = true
		return true
	default:
		return true
	}
	b.ShortCircuited++
	return false
}

// Done records the outcome of the call Allow let through at t, known at
// done.
func (b *Breaker) Done(t, done algorithms.Time, failed bool) {
	if b.Failures <= 0 {
		return
	}
	if b.probe {
		b.probe, b.probeEnd = false, done
		if failed {
			b.openFrom, b.openUntil = done, done+b.Cooldown
			b.Opened++
			return
		}
		b.open, b.inRow = false, 0
		return
	}
	if !failed {
		b.inRow = 0
		return
	}
	b.inRow++
	if b.inRow >= b.Failures && !b.open {
		b.open, b.openFrom, b.openUntil = true, done, done+b.Cooldown
		b.Opened++
	}
}

// A go-redis cluster client's retries of CLUSTERDOWN (osscluster.go,
// ClusterClient.process): MaxRedirects 3, so 4 attempts, each retry after
// MinRetryBackoff + rand[0, MinRetryBackoff << attempt) (internal
// RetryBackoff): 10–30, 10–50 and 10–90 ms.
const (
	clusterDownRetries = 3
	retryBackoffMin    = 10_000 // µs
)

// ClusterDownWait is what a go-redis cluster client spends on a node that
// answers CLUSTERDOWN: 4 attempts of a round trip rtt each, with its
// backoffs between them (each drawn with draw from [0, n)), at most
// timeout when there is one (above 0). The simulator and the live fleet
// both wait it.
func ClusterDownWait(rtt, timeout algorithms.Time, draw func(n int64) int64) algorithms.Time {
	spent := rtt
	for i := 1; i <= clusterDownRetries; i++ {
		spent += algorithms.Time(retryBackoffMin+draw(retryBackoffMin<<i)) + rtt
	}
	if timeout > 0 {
		spent = min(spent, timeout)
	}
	return spent
}
