package peers

import (
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
