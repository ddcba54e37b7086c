package exact

import (
	"math"
	"math/big"
	"testing"
	"time"
)

func TestFloorDiv(t *testing.T) {
	for _, tt := range []struct{ a, b, want int64 }{
		{7, 2, 3}, {-7, 2, -4}, {-8, 2, -4}, {0, 3, 0}, {-1, 1_000_000, -1},
		{math.MinInt64 + 1, 2, math.MinInt64 / 2}, {math.MaxInt64, 1, math.MaxInt64},
	} {
		if got := FloorDiv(tt.a, tt.b); got != tt.want {
			t.Errorf("FloorDiv(%d, %d) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

// MulDiv is exact where a × b overflows 64 bits, as big.Int says.
func TestMulDiv(t *testing.T) {
	for _, tt := range []struct{ a, b, c uint64 }{
		{10, 3, 4}, {1 << 53, 1 << 40, 1 << 50}, {math.MaxUint64, math.MaxUint64, math.MaxUint64},
		{3_000_000_007, 1 << 50, 1_000_000}, {0, 5, 7},
	} {
		want := new(big.Int).Mul(new(big.Int).SetUint64(tt.a), new(big.Int).SetUint64(tt.b))
		want.Quo(want, new(big.Int).SetUint64(tt.c))
		if got := MulDiv(tt.a, tt.b, tt.c); !want.IsUint64() || got != want.Uint64() {
			t.Errorf("MulDiv(%d, %d, %d) = %d, want %s", tt.a, tt.b, tt.c, got, want)
		}
	}
}

// Micros clamps instead of overflowing: nothing below 0, nothing past the
// longest Duration.
func TestMicros(t *testing.T) {
	for _, tt := range []struct {
		us   int64
		want time.Duration
	}{
		{-5, 0}, {0, 0}, {1, time.Microsecond}, {1_500_000, 1500 * time.Millisecond},
		{math.MaxInt64 / 1000, time.Duration(math.MaxInt64/1000) * time.Microsecond},
		{math.MaxInt64/1000 + 1, never}, {math.MaxInt64, never},
	} {
		if got := Micros(tt.us); got != tt.want {
			t.Errorf("Micros(%d) = %v, want %v", tt.us, got, tt.want)
		}
	}
}
