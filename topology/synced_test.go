package topology

import (
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
)

// TestNextPush: four servers pushing every 100 ms push at 0, 25, 50 and
// 75 ms past each tenth of a second of the wall clock, strictly after the
// instant asked, before the epoch as after it.
func TestNextPush(t *testing.T) {
	tp := New(Config{Kind: Synced, Servers: 4, SyncInterval: 100 * time.Millisecond})
	ms := func(v int64) algorithms.Time { return algorithms.Time(v * 1000) }
	for _, tc := range []struct {
		server   int
		at, want algorithms.Time
	}{
		{0, ms(0), ms(100)},
		{0, ms(99), ms(100)},
		{0, ms(100), ms(200)},
		{1, ms(0), ms(25)},
		{1, ms(25), ms(125)},
		{3, ms(80), ms(175)},
		{2, ms(1_700_000_000_010), ms(1_700_000_000_050)},
		{0, ms(-50), ms(0)},
		{1, ms(-100), ms(-75)},
		{1, ms(-75), ms(25)},
	} {
		if got := tp.NextPush(tc.server, tc.at); got != tc.want {
			t.Errorf("NextPush(%d, %d µs) = %d µs, want %d", tc.server, tc.at, got, tc.want)
		}
	}
}
