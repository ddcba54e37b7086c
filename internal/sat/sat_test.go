package sat

import (
	"math"
	"testing"
)

func TestAdd(t *testing.T) {
	for _, tc := range []struct{ a, b, want int64 }{
		{1, 2, 3},
		{math.MaxInt64, 1, math.MaxInt64},
		{math.MaxInt64 - 1, 1, math.MaxInt64},
		{math.MaxInt64 / 2, math.MaxInt64/2 + 2, math.MaxInt64},
		{-5, 3, -2},
		{0, 0, 0},
	} {
		if got := Add(tc.a, tc.b); got != tc.want {
			t.Errorf("Add(%d, %d) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestMul(t *testing.T) {
	for _, tc := range []struct{ a, b, want int64 }{
		{3, 4, 12},
		{0, math.MaxInt64, 0},
		{-3, 4, 0},
		{1 << 32, 1 << 31, 1<<63 - 1},
		{1 << 31, 1 << 31, 1 << 62},
		{math.MaxInt64, 2, math.MaxInt64},
		{3037000500, 3037000500, math.MaxInt64}, // just over √MaxInt64
	} {
		if got := Mul(tc.a, tc.b); got != tc.want {
			t.Errorf("Mul(%d, %d) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
