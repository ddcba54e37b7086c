package sim

import (
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/store"
)

// TestWindowsSitOnTheWallClock: a 7 s window does not divide a day, so on
// the default wall clock (midnight, 2 s past a multiple of 7 s since the
// epoch) the windows begin at virtual −2 s, 5 s, 12 s, as a Redis INCR
// keyed by floor(unix / 7) would count them, on the memory store and in
// the Lua twins alike. Aligned to virtual 0 instead, the fixed window
// would admit 7 and the sliding window 11.
func TestWindowsSitOnTheWallClock(t *testing.T) {
	burst := func(at time.Duration) Traffic { return Traffic{Pattern: Burst, Count: 7, At: at} }
	tests := []struct {
		alg     string
		traffic []Traffic
		want    int64
	}{
		// 7 at 4.9 s fill window [−2 s, 5 s); 7 at 5.1 s, a new window.
		{"fixed-window", []Traffic{burst(4900 * time.Millisecond), burst(5100 * time.Millisecond)}, 14},
		// 7 at 4.9 s, then 7 at 11.9 s, 6.9 s into window [5 s, 12 s): the
		// previous window's 7 weigh 7 × 0.1/7, room for 6.
		{"sliding-window", []Traffic{burst(4900 * time.Millisecond), burst(11900 * time.Millisecond)}, 13},
	}
	for _, tt := range tests {
		for _, kind := range []string{"memory", "miniredis"} {
			t.Run(tt.alg+"/"+kind, func(t *testing.T) {
				sc := Scenario{
					Name: "wall-clock", Duration: 14 * time.Second, Step: time.Second, Seed: 1, Servers: 1, Balancer: RoundRobin,
					Limit:    Limit{Algorithm: tt.alg, Params: algorithms.Params{Rate: perSecond(1), Window: 7 * time.Second}, Key: KeyAuto},
					Topology: Topology{Kind: Shared, Store: kind, RTT: 500 * time.Microsecond, OnError: store.FailOpen, Clock: ServerClock, PrimaryStopsAfter: PrimaryNeverStops},
					Clients:  []Client{{Name: "c", APIKey: "k", Traffic: tt.traffic, Retry: Retry{Policy: RetryNone}}},
				}
				r := mustRun(t, sc)
				if got := r.Clients[0].Allowed; got != tt.want {
					t.Errorf("allowed %d of 14, want %d (windows on the wall clock %s)", got, tt.want, r.WallClock)
				}
			})
		}
	}
}
