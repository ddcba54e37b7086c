//go:build race

package store

// raceEnabled reports whether the test binary was built with -race, which
// makes the million-key test too slow to run in full.
const raceEnabled = true
