package sim

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/ratelim/ratelim/algorithms"
)

// A whole simulation, reported per simulated request, beside one
// x/time/rate decision in the same run:
//
//	go test -run '^$' -bench 'Simulate|XTimeRate' -count 5 ./sim
//
// The scenario is the hammer of the tests scaled up: 8 clients at 25,000/s
// for 30 s over 4 servers, 6 million requests, on the shared memory store.
func BenchmarkSimulateSharedMemory(b *testing.B) {
	sc := hammer(Shared, 4, RoundRobin)
	sc.Duration = 30 * time.Second
	sc.Clients = nil
	for i := range 8 {
		sc.Clients = append(sc.Clients, Client{Name: string(rune('a' + i)), APIKey: string(rune('a' + i)),
			Traffic: []Traffic{{Pattern: Constant, Rate: perSecond(25_000)}}})
	}
	requests := benchRun(b, sc)
	b.ReportMetric(float64(requests)/float64(b.N), "requests/run")
}

func BenchmarkXTimeRateAllowN(b *testing.B) {
	lim := rate.NewLimiter(10, 20)
	now := time.Unix(0, 0)
	for b.Loop() {
		now = now.Add(time.Microsecond)
		lim.AllowN(now, 1)
	}
}

// The same decisions through the embedded Redis and, with REDIS_URL set, a
// real one: what fidelity costs per simulated request.
//
//	REDIS_URL=redis://127.0.0.1:6379 go test -run '^$' -bench 'SimulateRedis' ./sim
func BenchmarkSimulateRedis(b *testing.B) {
	stores := map[string]string{"miniredis": "miniredis"}
	if url := os.Getenv("REDIS_URL"); url != "" {
		stores["redis-server"] = url
	}
	for name, st := range stores {
		b.Run(name, func(b *testing.B) {
			sc := hammer(Shared, 4, RoundRobin)
			sc.Duration = time.Second
			sc.Clients[0].Traffic = []Traffic{{Pattern: Constant, Rate: perSecond(2000)}}
			sc.Topology.Store = st
			benchRun(b, sc)
		})
	}
}

// A window algorithm's run, per simulated request, at limits from 10² to
// 10⁵ per window: the cost must not grow with the limit. The sliding window
// itself is O(1); the run's exact limiter, and the sliding log as the
// algorithm itself (one entry per admitted request, in the memory store),
// are what could grow.
//
//	go test -run '^$' -bench 'WindowLimit' ./sim
func BenchmarkWindowLimit(b *testing.B) {
	for _, alg := range []string{"sliding-window", "sliding-log"} {
		for _, limit := range []int64{100, 1_000, 10_000, 100_000} {
			b.Run(fmt.Sprintf("%s/limit=%d", alg, limit), func(b *testing.B) {
				sc := hammer(Shared, 1, RoundRobin)
				sc.Duration = 5 * time.Second
				sc.Limit = Limit{Algorithm: alg, Params: algorithms.Params{Rate: perSecond(limit), Window: time.Second}, Key: KeyAuto}
				// Twice the limit: half admitted, the log full all run.
				sc.Clients[0].Traffic = []Traffic{{Pattern: Constant, Rate: perSecond(2 * limit)}}
				benchRun(b, sc)
			})
		}
	}
}

// One frame's Snapshot of a 10,000-client run, half way through: what a
// live view pays per frame (20 frames a second leaves 50 ms).
//
//	go test -run '^$' -bench Snapshot10k ./sim
func BenchmarkSnapshot10k(b *testing.B) {
	sc := hammer(Shared, 1, RoundRobin)
	sc.Duration = 30 * time.Second
	sc.Clients = make([]Client, 10_000)
	for i := range sc.Clients {
		sc.Clients[i] = Client{Name: fmt.Sprint("c", i), APIKey: fmt.Sprint("k", i), Traffic: []Traffic{{Pattern: Poisson, Rate: perSecond(1)}}, Retry: Retry{Policy: RetryNone}}
	}
	p, err := NewPlayer(context.Background(), sc, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	if err := p.Advance(context.Background(), 15*time.Second); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if snap := p.Snapshot(context.Background()); len(snap.Clients) != len(sc.Clients) {
			b.Fatal("a snapshot without every client")
		}
	}
}

// benchRun simulates sc once per iteration, reports the time per
// simulated request, and returns the requests simulated in all.
func benchRun(b *testing.B, sc Scenario) int64 {
	b.Helper()
	var requests int64
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for b.Loop() {
		r, err := Run(context.Background(), sc, Options{})
		if err != nil {
			b.Fatal(err)
		}
		requests += r.Requests
	}
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(requests), "ns/request")
	// A run's setup allocates (clients, the timeline); a request should
	// not: this is what the steady state costs, setup spread over it.
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(requests), "allocs/request")
	return requests
}
