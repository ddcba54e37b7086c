//go:build race

package trace_test

const raceEnabled = true
