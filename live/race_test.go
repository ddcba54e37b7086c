//go:build race

package live

// raceDetector is set when the tests run under -race, which slows HTTP on
// loopback several times over.
const raceDetector = true
