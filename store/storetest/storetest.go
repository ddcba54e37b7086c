// Package storetest holds what the tests of package store and of its
// drivers (store/redisstore) share: the same hammer and the same limits
// on every store, so that their figures compare.
package storetest

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ratelim/ratelim/store"
)

// Hammer runs goroutines × perGoroutine Takes on one key at one instant (no
// refill can happen) and returns how many were admitted.
func Hammer(t *testing.T, l store.Limiter, goroutines, perGoroutine int) int64 {
	t.Helper()
	var admitted atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan error, goroutines)
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for range perGoroutine {
				d, err := l.Take(context.Background(), "hot", 1_000_000, 1)
				if err != nil {
					errs <- err
					return
				}
				if d.Allowed {
					admitted.Add(1)
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return admitted.Load()
}
