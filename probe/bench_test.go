package probe_test

import (
	"testing"

	"github.com/ratelim/ratelim/probe"
)

// BenchmarkAnalyze analyses the largest recorded probe (haproxy's).
func BenchmarkAnalyze(b *testing.B) {
	rec := readRecording(&testing.T{}, "haproxy")
	for b.Loop() {
		probe.Analyze(rec)
	}
}
