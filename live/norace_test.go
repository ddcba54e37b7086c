//go:build !race

package live

const raceDetector = false
