package sim

import (
	"context"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
)

// What a run costs beyond its requests: the same arrivals recorded at a
// coarse step and at a fine one, and spread over few clients and many.
// Each pair runs in one binary; the figure is the ratio of each case to
// its coarse or few-client twin, which is 1 when a run costs what
// happened in it rather than its shape (issue 29):
//
//	go test -run '^$' -bench 'EmptySteps|ManyClients' -count 5 ./sim
//
// Each reports the time and the bytes allocated per run (B/run), the
// second a bound on its peak memory.

// BenchmarkEmptySteps: 20 requests over 10 minutes, recorded at 1 s (600
// steps) and at 1 ms (600,000 steps, all but 20 of them empty).
func BenchmarkEmptySteps(b *testing.B) {
	for _, step := range []time.Duration{time.Second, time.Millisecond} {
		b.Run(step.String(), func(b *testing.B) {
			sc := hammer(Shared, 1, RoundRobin)
			sc.Duration = 10 * time.Minute
			sc.Step = step
			sc.Clients[0].Traffic[0] = Traffic{Pattern: Burst, Count: 20, At: time.Minute, Spread: time.Second}
			benchScale(b, sc)
		})
	}
}

// BenchmarkManyClients: 100,000 requests over 30 s at a 1 s step, from 10
// clients sending 10,000 each and from 10,000 clients sending 10 each,
// each client on its own key.
func BenchmarkManyClients(b *testing.B) {
	for _, n := range []int{10, 10_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			sc := hammer(Shared, 4, RoundRobin)
			sc.Duration = 30 * time.Second
			sc.Clients = ownKeys(n, Traffic{Pattern: Constant, Rate: algorithms.Rate{N: int64(100_000 / n), Per: sc.Duration}})
			benchScale(b, sc)
		})
	}
}

// benchScale runs sc b.N times and reports the bytes allocated per run.
func benchScale(b *testing.B, sc Scenario) {
	b.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	runs := 0
	for b.Loop() {
		if _, err := Run(context.Background(), sc, Options{}); err != nil {
			b.Fatal(err)
		}
		runs++
	}
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(runs), "B/run")
}
