// Package testsize says how large the suite's long tests run.
//
// The README's `go test ./...` must finish in minutes on a 2-core machine,
// yet the long tests — property runs, million-decision differentials,
// wall-clock runs of a live fleet, logs of ten million lines — find their
// rarest bugs only at large sizes. So each long test has two sizes: a
// quick one, still large enough to find the bug it was written for (its
// comment says which), and an exhaustive one, run when the environment
// variable RATELIM_TEST_EXHAUSTIVE is set to 1, as `.ci/run` does.
package testsize

import "os"

// EnvVar is the environment variable that asks for the exhaustive sizes.
const EnvVar = "RATELIM_TEST_EXHAUSTIVE"

// Exhaustive reports whether the exhaustive sizes were asked for.
func Exhaustive() bool { return os.Getenv(EnvVar) == "1" }

// Pick returns exhaustive when the exhaustive sizes were asked for, and
// quick otherwise.
func Pick[T any](quick, exhaustive T) T {
	if Exhaustive() {
		return exhaustive
	}
	return quick
}
