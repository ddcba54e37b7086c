package algorithms

import (
	"fmt"
	"time"

	"github.com/ratelim/ratelim/algorithms/internal/exact"
)

// What every kind's constructor and step share, exported for the packages
// that define kinds outside this one (algorithms/peers) so that all of them
// validate parameters with the same messages and give a zero value and a
// negative cost the same answer. The integer arithmetic they share, which
// keeps every value exact in a double, is in algorithms/internal/exact.

// RateMicros validates r and returns its period in microseconds: an error
// names "rate" when N is not positive or the period is under 1µs.
func RateMicros(r Rate) (int64, error) {
	if r.N <= 0 {
		return 0, &ParamError{Param: "rate", Msg: fmt.Sprintf("must be positive (got %s)", r)}
	}
	per := int64(r.Per / time.Microsecond)
	if per <= 0 {
		return 0, &ParamError{Param: "rate", Msg: fmt.Sprintf("period must be at least 1µs (got %s)", r)}
	}
	return per, nil
}

// CheckBurst validates a bucket's burst for a rate whose period is
// perMicros (from [RateMicros]): at least 1, and small enough that burst ×
// period stays under 2^50 µs, exact in a double.
func CheckBurst(burst, perMicros int64) error {
	if burst <= 0 {
		return &ParamError{Param: "burst", Msg: fmt.Sprintf("must be at least 1 (got %d)", burst)}
	}
	if burst > exact.Max/perMicros {
		return &ParamError{Param: "burst", Msg: fmt.Sprintf("%d is too large for this rate's period (want burst × period ≤ 2^50 µs)", burst)}
	}
	return nil
}

// WindowLimit validates window and returns it in microseconds with the limit
// per window, rate × window, rounded down.
func WindowLimit(r Rate, window time.Duration) (w, limit int64, err error) {
	per, err := RateMicros(r)
	if err != nil {
		return 0, 0, err
	}
	w = int64(window / time.Microsecond)
	if w <= 0 {
		return 0, 0, &ParamError{Param: "window", Msg: fmt.Sprintf("must be at least 1µs (got %s)", window)}
	}
	f := float64(r.N) * float64(w) / float64(per)
	if f < 1 {
		return 0, 0, &ParamError{Param: "window", Msg: fmt.Sprintf("%s at %s admits less than one request per window (want rate × window ≥ 1)", window, r)}
	}
	if f*float64(w) > exact.Max {
		return 0, 0, &ParamError{Param: "window", Msg: fmt.Sprintf("limit %.0f per %s is too large (want limit × window ≤ 2^50 µs)", f, window)}
	}
	// Exact floor of N × w / per without overflow: both factors are below
	// 2^53 but their product may not be.
	limit = int64(exact.MulDiv(uint64(r.N), uint64(w), uint64(per)))
	return w, limit, nil
}

// CleanCost is the cost a step counts: a negative cost counts as 0, as
// [Algorithm]'s Step documents.
func CleanCost(cost int64) int64 { return max(cost, 0) }

// Unbuilt is the step of a limiter's zero value, one no constructor
// filled in: a limit of zero that never refills. Every request of positive
// cost is refused for good (RetryAfter Never, since no wait makes room that
// does not exist); a peek passes, as it does on any exhausted limiter,
// admitting nothing. prev comes back as it was: nothing was admitted, and
// a state is only ever moved forward by a limiter that can count.
//
// Refusing is what a user who forgot the constructor should meet: a limiter
// that admitted everything would hide the mistake behind full throughput,
// and the parameters a working one needs (a rate, a burst or a window) are
// not there to divide by.
func Unbuilt(prev State, cost int64) (State, Decision) {
	if CleanCost(cost) == 0 {
		return prev, Decision{Allowed: true}
	}
	return prev, Decision{RetryAfter: Never}
}
