package sim

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// A sparse Result densified is the Result: the contract (Result.
// TimelineSparse) loses nothing, whatever rows are empty and whatever
// points repeat, on any step and duration, the last step short or not.
func TestSparseDensifiesBack(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		stepUs := rapid.Int64Range(1, 2_000_000).Draw(t, "step µs")
		steps := rapid.IntRange(1, 40).Draw(t, "steps")
		short := rapid.Int64Range(0, stepUs-1).Draw(t, "last step short by")
		duration := int64(steps)*stepUs - short
		r := &Result{DurationS: seconds(duration), StepS: seconds(stepUs)}
		clients := rapid.IntRange(1, 4).Draw(t, "clients")
		for ci := range clients {
			r.Clients = append(r.Clients, ClientResult{Name: string(rune('a' + ci))})
		}
		for st := range steps {
			for _, c := range r.Clients {
				row := TimelineRow{TS: seconds(int64(st) * stepUs), Client: c.Name}
				if rapid.Bool().Draw(t, "busy") {
					row.Sent = rapid.Int64Range(0, 3).Draw(t, "sent")
					row.Served = rapid.Int64Range(0, 2).Draw(t, "served")
					row.P99Ms = float64(rapid.IntRange(0, 1).Draw(t, "p99"))
				}
				r.Timeline = append(r.Timeline, row)
			}
		}
		for range rapid.IntRange(0, 3).Draw(t, "series") {
			var s StateSeries
			s.Key, s.Copy = "k", "shared"
			for st := range steps {
				s.TS = append(s.TS, seconds(min(int64(st+1)*stepUs, duration)))
				s.Remaining = append(s.Remaining, rapid.Int64Range(-1, 2).Draw(t, "remaining"))
			}
			r.State = append(r.State, s)
		}
		sparse := r.Sparse()
		if !sparse.TimelineSparse || r.TimelineSparse {
			t.Fatalf("Sparse marked %v, and the original %v", sparse.TimelineSparse, r.TimelineSparse)
		}
		for _, row := range sparse.Timeline {
			if row.Empty() {
				t.Fatalf("sparse keeps the empty row %+v", row)
			}
		}
		back := *sparse
		back.Densify()
		if back.TimelineSparse || !reflect.DeepEqual(back.Timeline, r.Timeline) || !reflect.DeepEqual(back.State, r.State) {
			t.Fatalf("densified:\n%+v\n%+v\nwant:\n%+v\n%+v", back.Timeline, back.State, r.Timeline, r.State)
		}
		// Densify gave back a Result of its own: the sparse one is as it was.
		if !reflect.DeepEqual(sparse, r.Sparse()) {
			t.Fatalf("Densify changed the sparse Result it was copied from")
		}
	})
}

// A cancelled run stops within checkEvery units of work: a step's end
// counts as its rows, so a run of many clients closes a few steps after
// the cancellation, not 4,096 (before, it closed all 1,000 here and
// returned no error).
func TestCancelledRunStopsWithinAStepsWork(t *testing.T) {
	sc := hammer(Shared, 1, RoundRobin)
	sc.Duration, sc.Step = 1000*time.Second, time.Second
	sc.Clients = nil
	for i := range 200 {
		sc.Clients = append(sc.Clients, Client{Name: "c" + string(rune('0'+i%10)) + string(rune('a'+i/10)), APIKey: "k", Retry: Retry{Policy: RetryNone},
			Traffic: []Traffic{{Pattern: Burst, Count: 1, At: time.Duration(i) * time.Millisecond}}})
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const cancelAt = 10
	closed, afterCancel := 0, 0
	_, err := Run(ctx, sc, Options{Progress: func(time.Duration, time.Duration) {
		closed++
		if closed == cancelAt {
			cancel()
		} else if closed > cancelAt {
			afterCancel++
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v after %d steps, want context.Canceled", err, closed)
	}
	// 200 rows and one key a step: 4096 units are 20 steps.
	if most := checkEvery/(len(sc.Clients)+1) + 1; afterCancel > most {
		t.Errorf("%d steps closed after the cancellation, want at most %d", afterCancel, most)
	}
}

// Setting up a long run stops once its context is cancelled, and the
// error says it was stopped, not refused (a SetupError).
func TestCancelledSetupIsNotARefusal(t *testing.T) {
	sc := hammer(Shared, 1, RoundRobin)
	sc.Duration, sc.Step = time.Hour, time.Millisecond // 3.6 million rows
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s, err := newRecording(ctx, sc, Options{})
	if !errors.Is(err, context.Canceled) || s != nil {
		t.Fatalf("newRecording = a sim? %v, %v; want context.Canceled and none", s != nil, err)
	}
	_, err = NewPlayer(ctx, sc, Options{})
	if !errors.Is(err, context.Canceled) || errors.As(err, new(*SetupError)) {
		t.Fatalf("NewPlayer = %v, want context.Canceled, not a SetupError", err)
	}
}
