// Package sat is saturating arithmetic on the counts and instants a user
// types: a sum or product that would overflow stops at math.MaxInt64
// instead of wrapping to a negative number that a bound check would pass.
package sat

import (
	"math"
	"math/bits"
)

// Add is a + b for non-negative b, math.MaxInt64 if it overflows.
func Add(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// Mul is a × b for non-negative a and b (0 for a negative one),
// math.MaxInt64 if it overflows.
func Mul(a, b int64) int64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(lo)
}
