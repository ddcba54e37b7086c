package store_test

import (
	"sync"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/store"
	"github.com/ratelim/ratelim/store/storetest"
)

// TestRacyOverAdmits shows the lost update deterministically: every goroutine
// reads the same full bucket before any writes, and every one admits.
func TestRacyOverAdmits(t *testing.T) {
	const goroutines = 8
	alg, err := algorithms.NewTokenBucket(algorithms.Rate{N: 1, Per: time.Second}, 1)
	if err != nil {
		t.Fatal(err)
	}
	var read sync.WaitGroup
	read.Add(goroutines)
	racy := store.NewRacy(alg, store.NewMemory(alg))
	racy.Gap = func() { read.Done(); read.Wait() } // write only once all have read
	if got := storetest.Hammer(t, racy, goroutines, 1); got != goroutines {
		t.Fatalf("racy admitted %d with burst 1 when %d read before any wrote, want %d", got, goroutines, goroutines)
	}
}
