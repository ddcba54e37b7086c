package sim

import (
	"context"
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
