package sim

import (
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
)

// Each peer model's simulated request beside the same request through
// ratelim's own algorithm of its family, in the same run: what modelling a
// library's arithmetic (floats, wall-clock windows, nginx's thousandths)
// costs per request. The ratio is the figure; compare with:
//
//	go test -run '^$' -bench 'SimulatePeer' -count 5 ./sim
//
// Eight clients at 25,000/s for 4 s over 4 servers on the shared memory
// store, limited to 10/s with a burst of 20 and a window of 1 s: 800,000
// requests, nearly all refused, as under an overload.
func BenchmarkSimulatePeer(b *testing.B) {
	for _, info := range algorithms.Catalog() {
		if info.Peer == nil {
			continue
		}
		for _, name := range []string{info.Peer.Family, info.Name} {
			b.Run(info.Name+"/"+name, func(b *testing.B) {
				benchRun(b, peerBenchScenario(b, name))
			})
		}
	}
}

func peerBenchScenario(tb testing.TB, algorithm string) Scenario {
	tb.Helper()
	sc := hammer(Shared, 4, RoundRobin)
	sc.Duration = 4 * time.Second
	sc.Limit.Algorithm = algorithm
	sc.Limit.Params = algorithms.Params{Rate: perSecond(10), Burst: 20, Window: time.Second}
	sc.Clients = nil
	for i := range 8 {
		sc.Clients = append(sc.Clients, Client{Name: string(rune('a' + i)), APIKey: string(rune('a' + i)),
			Traffic: []Traffic{{Pattern: Constant, Rate: perSecond(25_000)}}})
	}
	return sc
}
