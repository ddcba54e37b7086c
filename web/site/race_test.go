//go:build race

package site_test

// raceEnabled reports whether the tests run under the race detector.
const raceEnabled = true
