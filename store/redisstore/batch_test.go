package redisstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/store"
)

// TestTakeBatchIsTakeInOrder: a pipelined batch decides as the same
// requests taken one by one, in order, on every algorithm: keys repeat
// within a batch (a pipeline runs its scripts in order, so a later request
// sees an earlier one's write), costs vary, and the first batch meets an
// empty script cache (NOSCRIPT, then one request alone loads it).
func TestTakeBatchIsTakeInOrder(t *testing.T) {
	urls := []string{store.Embedded}
	if url := os.Getenv("REDIS_URL"); url != "" {
		urls = append(urls, url)
	}
	ctx := context.Background()
	for _, url := range urls {
		for _, info := range algorithms.Exact() {
			p, _ := algorithms.WithDefaults(info.Name, algorithms.Params{Rate: algorithms.Rate{N: 20, Per: time.Second}, Burst: 5})
			alg, err := algorithms.New(info.Name, p)
			if err != nil {
				t.Fatal(err)
			}
			prefix := fmt.Sprintf("ratelim:batchtest:%d:%d:", os.Getpid(), time.Now().UnixNano())
			base, err := Open(ctx, alg, Options{URL: url, Prefix: prefix})
			if err != nil {
				t.Fatal(err)
			}
			if url != store.Embedded {
				base.client.ScriptFlush(ctx) // the first batch meets NOSCRIPT
			}
			batched, single := base.WithPrefix(prefix+"b:"), base.WithPrefix(prefix+"s:")
			rng := rand.New(rand.NewPCG(1, uint64(len(info.Name))))
			now := algorithms.Time(1_000_000)
			for range 40 {
				reqs := make([]store.TakeRequest, rng.IntN(80)+1) // from 32, two pipelines
				for i := range reqs {
					now += algorithms.Time(rng.IntN(20_000))
					reqs[i] = store.TakeRequest{Key: fmt.Sprintf("k%d", rng.IntN(6)), Now: now, Cost: int64(rng.IntN(3))}
				}
				out := make([]store.TakeResult, len(reqs))
				batched.TakeBatch(ctx, reqs, out)
				for i, q := range reqs {
					want, err := single.Take(ctx, q.Key, q.Now, q.Cost)
					if err != nil || out[i].Err != nil {
						t.Fatalf("%s %s: errors %v, %v", store.Redacted(url), info.Name, out[i].Err, err)
					}
					if out[i].Decision != want {
						t.Fatalf("%s %s: request %d of a batch (%+v): %+v, one by one %+v", store.Redacted(url), info.Name, i, q, out[i].Decision, want)
					}
				}
			}
			if _, err := base.Clear(ctx); err != nil {
				t.Error(err)
			}
			base.Close()
		}
	}
}
