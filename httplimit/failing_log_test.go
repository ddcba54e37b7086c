package httplimit

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/store"
)

// A store that fails every other request, a thousand times over (a
// cluster with a master down fails that master's keys and answers the
// others), is logged failing once, and recovered once, when it has
// answered RecoveryQuiet without a failure, with the counts: not 2,000
// lines alternating.
func TestStoreFailingLoggedOnceWithCounts(t *testing.T) {
	for _, step := range []time.Duration{
		time.Millisecond,
		RecoveryQuiet - 1, // each answer comes just short of the quiet
	} {
		t.Run(step.String(), func(t *testing.T) {
			lim := &flaky{next: store.NewMemory(tokenBucket(t, algorithms.Rate{N: 1, Per: time.Hour}, 10_000))}
			clk := newClock()
			var logs logLines
			h := mustNew(t, Config{Limiter: lim, OnError: store.FailOpen, Clock: clk.Now,
				Logger: slog.New(slog.NewTextHandler(&logs, nil))}, &counting{})
			get(h) // healthy: nothing logged
			const flips = 1000
			for range flips {
				lim.down.Store(true)
				get(h)
				clk.Advance(step)
				lim.down.Store(false)
				get(h)
				clk.Advance(step)
			}
			if w, i := logs.count("WARN"), logs.count("INFO"); w != 1 || i != 0 {
				t.Fatalf("after %d failures among answers: %d warnings and %d recoveries logged, want 1 and 0:\n%.2000s",
					flips, w, i, logs.String())
			}
			// The store answers on; the first answer RecoveryQuiet after
			// the last failure tells of the recovery, once.
			for range 3 {
				clk.Advance(RecoveryQuiet / 2)
				get(h)
			}
			if w, i := logs.count("WARN"), logs.count("INFO"); w != 1 || i != 1 {
				t.Fatalf("%d warnings and %d recoveries logged, want 1 and 1:\n%s", w, i, logs.String())
			}
			// Answers: one per flip, and those after the loop up to the
			// first one RecoveryQuiet after the last failure (the loop
			// ended 2 steps after it); those after are the healthy store's.
			after := 1
			for 2*step+time.Duration(after)*(RecoveryQuiet/2) < RecoveryQuiet {
				after++
			}
			failedFor := time.Duration(2*flips-2) * step
			for _, want := range []string{
				fmt.Sprintf("decided_by_policy=%d ", flips),
				fmt.Sprintf("answered_by_store=%d ", flips+after),
				"failed_for=" + failedFor.String(),
			} {
				if !strings.Contains(logs.String(), want) {
					t.Errorf("the recovery line lacks %q:\n%s", want, logs.String())
				}
			}
		})
	}
}

// A store that fails once every 300 ms and answers in between (a hung
// cluster master's keys, seen by a server every other round) recovers
// past RecoveryQuiet once, relapses, and from then on needs twice the
// quiet: two failing lines and one recovery while it flaps, then one
// recovery, with the counts, once it answers for the doubled quiet.
func TestStoreFlappingLoggedWithDamping(t *testing.T) {
	lim := &flaky{next: store.NewMemory(tokenBucket(t, algorithms.Rate{N: 1, Per: time.Hour}, 10_000))}
	clk := newClock()
	var logs logLines
	h := mustNew(t, Config{Limiter: lim, OnError: store.FailOpen, Clock: clk.Now,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))}, &counting{})
	const flaps = 20
	for range flaps {
		lim.down.Store(true)
		get(h)
		lim.down.Store(false)
		for range 30 { // 300 ms of answers
			clk.Advance(10 * time.Millisecond)
			get(h)
		}
	}
	if w, i := logs.count("WARN"), logs.count("INFO"); w != 2 || i != 1 {
		t.Fatalf("%d flaps: %d warnings and %d recoveries logged, want 2 and 1:\n%s", flaps, w, i, logs.String())
	}
	for range 25 { // 250 ms more: 550 ms since the last failure
		clk.Advance(10 * time.Millisecond)
		get(h)
	}
	if w, i := logs.count("WARN"), logs.count("INFO"); w != 2 || i != 2 {
		t.Fatalf("%d warnings and %d recoveries logged, want 2 and 2:\n%s", w, i, logs.String())
	}
	// The second episode: the 19 flaps after the first recovery, and the
	// answers up to 500 ms after the last failure.
	for _, want := range []string{"decided_by_policy=19 ", fmt.Sprintf("answered_by_store=%d ", 18*30+50), "quiet=500ms"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the recovery lines lack %q:\n%s", want, logs.String())
		}
	}
}
