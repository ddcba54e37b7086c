package sim

import (
	"context"
	"os"
	"testing"
	"time"

	"golang.org/x/time/rate"
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
	var requests int64
	for b.Loop() {
		r, err := Run(context.Background(), sc, Options{})
		if err != nil {
			b.Fatal(err)
		}
		requests += r.Requests
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(requests), "ns/request")
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
			var requests int64
			for b.Loop() {
				r, err := Run(context.Background(), sc, Options{})
				if err != nil {
					b.Fatal(err)
				}
				requests += r.Requests
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(requests), "ns/request")
		})
	}
}
