package redisstore

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/store/storetest"
)

// countingHook counts the round trips a client makes: one per command
// sent alone, one per pipeline.
type countingHook struct{ n *atomic.Int64 }

func (h countingHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h countingHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmd)
	}
}

func (h countingHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmds)
	}
}

// serverMicrosPerCall reads the server's mean time per call of cmd since
// the last CONFIG RESETSTAT from INFO commandstats.
func serverMicrosPerCall(ctx context.Context, c redis.UniversalClient, cmd string) (float64, bool) {
	info, err := c.Info(ctx, "commandstats").Result()
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(info, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_"+cmd+":")
		if !ok {
			continue
		}
		for _, field := range strings.Split(rest, ",") {
			if v, ok := strings.CutPrefix(field, "usec_per_call="); ok {
				us, err := strconv.ParseFloat(v, 64)
				return us, err == nil
			}
		}
	}
	return 0, false
}

// The Redis store's cost is the round trip; on miniredis it is the Lua
// state miniredis builds per call (~300 µs, see MEASURED.md). With
// REDIS_URL set, the same on a real server, which also reports its own
// time per script (server-µs/op, INFO commandstats). roundtrips/op counts
// the commands the client sent: one per decision, one or two limits.
//
//	REDIS_URL=redis://127.0.0.1:6379 go test -run '^$' -bench 'RedisTake' -count 5 ./store/redisstore
func BenchmarkRedisTake(b *testing.B) {
	alg, _ := algorithms.NewTokenBucket(algorithms.Rate{N: 1000, Per: time.Second}, 50)
	benchRedisTake(b, alg)
}

func BenchmarkRedisTakeTwoLimits(b *testing.B) { benchRedisTake(b, storetest.TwoLimits(b)) }

func benchRedisTake(b *testing.B, alg algorithms.Algorithm) {
	ctx := context.Background()
	r, err := Open(ctx, alg, Options{URL: benchRedisURL(), Prefix: "ratelim-bench:"})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { r.Clear(ctx); r.Close() }()
	if _, err := r.Take(ctx, "k", 0, 0); err != nil { // loads the script
		b.Fatal(err)
	}
	var trips atomic.Int64
	r.client.AddHook(countingHook{&trips})
	resetStats := r.embedded == nil && r.client.ConfigResetStat(ctx).Err() == nil
	trips.Store(0)
	now := algorithms.Time(0)
	for b.Loop() {
		now += 100
		if _, err := r.Take(ctx, "k", now, 1); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(trips.Load())/float64(b.N), "roundtrips/op")
	if resetStats {
		if us, ok := serverMicrosPerCall(ctx, r.client, "evalsha"); ok {
			b.ReportMetric(us, "server-µs/op")
		}
	}
}
