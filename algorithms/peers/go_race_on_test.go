//go:build race

package peers_test

// peerDecisions is how many random decisions each configuration of a Go
// peer's differential test makes: fewer under the race detector, which
// slows the real library's locks tenfold.
const peerDecisions = 10_000
