//go:build race

package peers_test

// peerWinDecisions is how many random decisions each configuration of the
// ulule-limiter and go-limiter differential tests makes: fewer under the
// race detector, which slows every call tenfold. peerWinRace reports
// whether the race detector is on, for a test that builds itself again.
const (
	peerWinDecisions = 10_000
	peerWinRace      = true
)
