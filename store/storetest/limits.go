package storetest

import (
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
)

// TwoLimits is a key with two limits, as APIs publish them: a token
// bucket of 1000/s with a burst of 50, and 100,000 an hour in a fixed
// window; what the benchmarks of every store measure a Multi with.
func TwoLimits(b testing.TB) *algorithms.Multi {
	bucket, _ := algorithms.NewTokenBucket(algorithms.Rate{N: 1000, Per: time.Second}, 50)
	hourly, _ := algorithms.NewFixedWindow(algorithms.Rate{N: 100_000, Per: time.Hour}, time.Hour)
	m, err := algorithms.NewMulti([]algorithms.Policy{{Name: "burst", Algorithm: bucket}, {Name: "hourly", Algorithm: hourly}})
	if err != nil {
		b.Fatal(err)
	}
	return m
}
