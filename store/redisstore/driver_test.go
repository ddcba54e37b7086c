package redisstore

import (
	"context"
	"slices"
	"testing"

	"github.com/ratelim/ratelim/store"
)

// Linking the driver registers it: store.Open opens miniredis through it,
// and a copy under another prefix (WithPrefix) is still a Redis store
// that decides a batch in one pipeline, and is cleared with its run.
func TestOpenThroughTheRegistry(t *testing.T) {
	ctx := context.Background()
	r, err := store.Open(ctx, tokenBucket(t, 1, 2), store.RemoteOptions{URL: store.Embedded, Prefix: "run:"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c := r.WithPrefix("run:copy:")
	batch, ok := c.(interface {
		TakeBatch(context.Context, []store.TakeRequest, []store.TakeResult)
	})
	if !ok {
		t.Fatalf("a copy from WithPrefix (%T) has no TakeBatch", c)
	}
	out := make([]store.TakeResult, 3)
	batch.TakeBatch(ctx, []store.TakeRequest{{Key: "k", Cost: 1}, {Key: "k", Cost: 1}, {Key: "k", Cost: 1}}, out)
	for i, want := range []bool{true, true, false} { // a burst of 2
		if out[i].Err != nil || out[i].Decision.Allowed != want {
			t.Errorf("request %d of the batch: %+v; want allowed %v", i, out[i], want)
		}
	}
	if n, err := r.Clear(ctx); err != nil || n != 1 {
		t.Errorf("Clear under run: = %d, %v; want the copy's one key", n, err)
	}
	for _, scheme := range []string{store.Embedded, "redis", "rediss", "redis+cluster", "rediss+cluster"} {
		if !slices.Contains(store.Schemes(), scheme) {
			t.Errorf("the driver did not register %s: %v", scheme, store.Schemes())
		}
	}
}
