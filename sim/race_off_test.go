//go:build !race

package sim

// raceEnabled reports whether the test binary was built with -race, which
// inflates the heap that memory tests measure.
const raceEnabled = false
