// Package livetest starts a `ratelim serve` fleet in the test's process,
// on loopback ports picked free, for the length of one test: what the
// tests of the commands that send to a live target (check --target,
// probe) serve their traffic from.
//
// Only tests import this package.
package livetest

import (
	"context"
	"testing"
	"time"

	"github.com/ratelim/ratelim/live"
)

// closeWithin bounds how long a fleet may take to close at the test's end.
const closeWithin = 5 * time.Second

// Serve starts the fleet opts describes, listening on free loopback ports
// unless opts.Listen says otherwise, and closes it with t.Cleanup.
func Serve(t testing.TB, opts live.ServeOptions) *live.Fleet {
	t.Helper()
	if opts.Listen == "" {
		opts.Listen = "127.0.0.1:0"
	}
	fleet, err := live.Serve(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), closeWithin)
		defer cancel()
		if err := fleet.Close(ctx); err != nil {
			t.Errorf("closing the fleet: %v", err)
		}
	})
	return fleet
}
