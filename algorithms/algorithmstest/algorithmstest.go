// Package algorithmstest draws the request sequences of the limiters'
// property tests: one generator for the limiters of package algorithms
// and the peer models of algorithms/peers alike. It imports no ratelim
// package, so that algorithms' own tests can use it without a cycle:
// instants are plain microseconds (algorithms.Time's unit).
package algorithmstest

import "pgregory.net/rapid"

// Request is one arrival: At is the server's clock, Real the true instant,
// both in µs; Cost what it asks for.
type Request struct {
	At, Real, Cost int64
}

// Requests draws 1 to 80 arrivals with gaps from zero to a few seconds, so
// that sequences both hammer one instant and wait out a refill, costing
// mostly 1 and 0 to 4 otherwise. With backwards set, the server's clock is
// now and then stepped back (as NTP does to a clock that ran fast): At
// falls behind Real by a growing skew.
func Requests(t *rapid.T, backwards bool) []Request {
	n := rapid.IntRange(1, 80).Draw(t, "n")
	reqs := make([]Request, n)
	real := rapid.Int64Range(0, 5_000_000).Draw(t, "start")
	var skew int64
	for i := range reqs {
		gap := rapid.OneOf(
			rapid.Just(int64(0)),
			rapid.Int64Range(1, 1000),
			rapid.Int64Range(1000, 200_000),
			rapid.Int64Range(200_000, 3_000_000),
		).Draw(t, "gap")
		if backwards && rapid.IntRange(0, 9).Draw(t, "step back?") == 0 {
			skew += rapid.Int64Range(1, 2_000_000).Draw(t, "step back")
		}
		real += gap
		reqs[i] = Request{At: real - skew, Real: real, Cost: rapid.OneOf(rapid.Just(int64(1)), rapid.Int64Range(0, 4)).Draw(t, "cost")}
	}
	return reqs
}
