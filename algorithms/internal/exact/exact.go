// Package exact is the integer arithmetic package algorithms and its
// kinds (algorithms/peers) compute with: every value stays below [Max], so
// that it is exact in a double, which is what the Lua twins in package
// store compute with, and the Go step and its twin agree bit for bit.
package exact

import (
	"math"
	"math/bits"
	"time"
)

// never is algorithms.Never, the longest wait, which this package cannot
// name without importing the package it serves.
const never = time.Duration(math.MaxInt64)

// Max bounds every intermediate value so that it stays exact in a
// double, which is what the Lua twins compute with, with room for sums.
const Max = 1 << 50

// FloorDiv is a / b rounded towards minus infinity, for b > 0.
func FloorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// Micros is us microseconds as a Duration, 0 for a negative count and the
// largest Duration (algorithms.Never) past it: what a Decision's waits are
// built with.
func Micros(us int64) time.Duration {
	if us <= 0 {
		return 0
	}
	if us > int64(never/time.Microsecond) {
		return never
	}
	return time.Duration(us) * time.Microsecond
}

// MulDiv returns a × b / c rounded down, for a product that may not fit in
// 64 bits but a quotient that does.
func MulDiv(a, b, c uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	q, _ := bits.Div64(hi, lo, c)
	return q
}
