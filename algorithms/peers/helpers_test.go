package peers

import (
	"pgregory.net/rapid"

	"github.com/ratelim/ratelim/algorithms"
)

// The helpers below are package algorithms' test helpers of the same
// names, which a test of another package cannot reach.

// s1 is one second, a fixed instant of the step tables.
const s1 = algorithms.Time(1_000_000)

func must[A algorithms.Algorithm](a A, err error) algorithms.Algorithm {
	if err != nil {
		panic(err)
	}
	return a
}

// request is one arrival: at is the server's clock, real the true instant.
type request struct {
	at   algorithms.Time
	real algorithms.Time
	cost int64
}

// genRequests draws arrivals with gaps from zero to a few seconds, so that
// sequences both hammer one instant and wait out a refill. With backwards
// set, the server's clock is now and then stepped back (as NTP does to a
// clock that ran fast): at falls behind real by a growing skew.
func genRequests(t *rapid.T, backwards bool) []request {
	n := rapid.IntRange(1, 80).Draw(t, "n")
	reqs := make([]request, n)
	real := algorithms.Time(rapid.Int64Range(0, 5_000_000).Draw(t, "start"))
	var skew algorithms.Time
	for i := range reqs {
		gap := rapid.OneOf(
			rapid.Just(int64(0)),
			rapid.Int64Range(1, 1000),
			rapid.Int64Range(1000, 200_000),
			rapid.Int64Range(200_000, 3_000_000),
		).Draw(t, "gap")
		if backwards && rapid.IntRange(0, 9).Draw(t, "step back?") == 0 {
			skew += algorithms.Time(rapid.Int64Range(1, 2_000_000).Draw(t, "step back"))
		}
		real += algorithms.Time(gap)
		reqs[i] = request{at: real - skew, real: real, cost: rapid.OneOf(rapid.Just(int64(1)), rapid.Int64Range(0, 4)).Draw(t, "cost")}
	}
	return reqs
}
