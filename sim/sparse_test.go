package sim

import (
	"context"
	"errors"
	"reflect"
	"runtime"
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
		// A request every step: no step is quiet (quiet.go closes those
		// together, TestQuietStretchStopsWhenCancelled).
		sc.Clients = append(sc.Clients, Client{Name: "c" + string(rune('0'+i%10)) + string(rune('a'+i/10)), APIKey: "k", Retry: Retry{Policy: RetryNone},
			Traffic: []Traffic{{Pattern: Constant, Rate: perSecond(1), Start: time.Duration(i) * time.Millisecond}}})
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

// The recorder's sparse timeline holds what the dense one it replaced
// held, less its empty rows: the oracle is that dense timeline, steps ×
// clients rows laid out before the run and indexed step*len(clients) +
// client, as newRecording and record did before issue 29. Whatever the
// order rows are written in (a request's step, a leaky bucket's later
// step, a step's end), sparse is Result.Sparse of the oracle, and every
// lookup reads the oracle's row.
func TestTimelineRowsAreTheDenseOnesSparse(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		steps := rapid.IntRange(1, 30).Draw(t, "steps")
		const stepLen = 250_000 // µs
		var clients []*clientRun
		var results []ClientResult
		for ci := range rapid.IntRange(1, 4).Draw(t, "clients") {
			name := string(rune('a' + ci))
			clients = append(clients, &clientRun{Client: &Client{Name: name}})
			results = append(results, ClientResult{Name: name})
		}
		n := len(clients)
		dense := make([]TimelineRow, steps*n)
		for st := range steps {
			for ci, c := range clients {
				dense[st*n+ci].TS, dense[st*n+ci].Client = seconds(int64(st)*stepLen), c.Name
			}
		}
		rows := newTimelineRows(n)
		now := 0 // the step in progress: requests are mostly recorded in it
		for range rapid.IntRange(0, 60).Draw(t, "writes") {
			now = min(now+rapid.IntRange(0, 1).Draw(t, "steps on"), steps-1)
			st := now
			switch rapid.IntRange(0, 5).Draw(t, "where") {
			case 4: // served later: a leaky bucket's delay
				st = rapid.IntRange(now, steps-1).Draw(t, "later step")
			case 5: // recorded in an earlier step than the latest
				st = rapid.IntRange(0, now).Draw(t, "earlier step")
			}
			ci := rapid.IntRange(0, n-1).Draw(t, "client")
			got, want := rows.at(st, ci), &dense[st*n+ci]
			switch rapid.IntRange(0, 3).Draw(t, "figure") {
			case 0:
				got.Sent++
				want.Sent++
			case 1:
				got.Served++
				want.Served++
			case 2:
				got.P50Ms, got.P99Ms = 0.5, 1
				want.P50Ms, want.P99Ms = 0.5, 1
			case 3: // a row made, and nothing written to it
			}
		}
		oracle := (&Result{Clients: results, Timeline: dense}).Sparse().Timeline
		// Placed by counting each step's rows, and by sorting their keys
		// (a run with far more steps than rows): the same rows.
		if got := rows.sparse(clients, stepLen, steps); !reflect.DeepEqual(got, oracle) {
			t.Fatalf("sparse rows:\n%+v\nwant Result.Sparse of the dense rows:\n%+v", got, oracle)
		}
		if got := rows.sorted(clients, stepLen); !reflect.DeepEqual(got, oracle) {
			t.Fatalf("sorted rows:\n%+v\nwant Result.Sparse of the dense rows:\n%+v", got, oracle)
		}
		for st := range steps {
			for ci, c := range clients {
				got, _ := rows.find(st, ci)
				if got = assembledRow(got, st, c, stepLen); got != dense[st*n+ci] {
					t.Fatalf("find(%d, %d) = %+v, want %+v", st, ci, got, dense[st*n+ci])
				}
			}
		}
		from := rapid.IntRange(0, steps-1).Draw(t, "from")
		for ci, c := range clients {
			seen := map[int]bool{}
			rows.each(ci, from, func(st int, row *TimelineRow) {
				if st < from || seen[st] || assembledRow(*row, st, c, stepLen) != dense[st*n+ci] {
					t.Fatalf("each(%d, %d) gave step %d: %+v (seen %v), want %+v", ci, from, st, *row, seen[st], dense[st*n+ci])
				}
				seen[st] = true
			})
			for st := from; st < steps; st++ {
				if !dense[st*n+ci].Empty() && !seen[st] {
					t.Fatalf("each(%d, %d) left out step %d: %+v", ci, from, st, dense[st*n+ci])
				}
			}
		}
	})
}

// Two hours at a 1 ms step with one request: 7.2 million steps, of which
// one has a row. The run allocates in proportion to what happened, not
// steps × clients: the dense timeline alone was 7.2 million rows of 144
// bytes, a gigabyte, laid out before the first event.
func TestEmptyStepsCostNoRows(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("runs 7.2 million steps")
	}
	sc := hammer(Shared, 1, RoundRobin)
	sc.Duration, sc.Step = 2*time.Hour, time.Millisecond
	sc.Clients[0].Traffic[0] = Traffic{Pattern: Burst, Count: 1, At: time.Minute}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r, err := Run(context.Background(), sc, Options{StateOf: func(string) bool { return false }})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	// What is left grows with steps, not rows: the step's end, a few
	// bytes of bookkeeping each.
	const most = 64 << 20
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("the run allocated %d KB", alloc>>10)
	if alloc > most {
		t.Errorf("the run allocated %d MB, want at most %d MB: rows made for empty steps?", alloc>>20, most>>20)
	}
	if !r.TimelineSparse || len(r.Timeline) != 1 || r.Timeline[0].Sent != 1 || r.Timeline[0].TS != 60 {
		t.Fatalf("timeline sparse %v, %d rows; want the one row of the one request, at 60 s", r.TimelineSparse, len(r.Timeline))
	}
}

// The chunks number the rows without gaps or overlaps: each row index
// has its own place, the next after the one before, in a chunk of the
// size add makes.
func TestRowChunksPlaceEachRowOnce(t *testing.T) {
	var c rowChunks
	for i := range 70*rowChunk + 5 {
		n, r := c.add()
		r.step = i
		if int(n) != i+1 {
			t.Fatalf("row %d numbered %d", i, n)
		}
	}
	for i := range 70*rowChunk + 5 {
		if got := c.at(int32(i + 1)).step; got != i {
			t.Fatalf("row %d reads back the row made %d-th", i+1, got)
		}
	}
	sizes := 0
	for _, ch := range c.chunks {
		sizes += len(ch)
	}
	if sizes != 71*rowChunk {
		t.Errorf("the chunks hold %d rows, want %d: chunk sizes and places disagree", sizes, 71*rowChunk)
	}
}

// EachRow puts a sparse Result's empty rows back one at a time: a dense
// writer streams 600,000 rows (86 MB of them held at once) in the memory
// of one, and gets them in the order Densify holds them.
func TestEachRowDenseMakesNoTimeline(t *testing.T) {
	r := &Result{DurationS: 600, StepS: 0.001, TimelineSparse: true, Clients: []ClientResult{{Name: "a"}},
		Timeline: []TimelineRow{{TS: 60, Client: "a", Counts: Counts{Sent: 1, Allowed: 1}, Served: 1}}}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	rows, sent := 0, int64(0)
	r.EachRow(true, func(row *TimelineRow) error {
		if want := seconds(int64(rows) * 1000); row.TS != want || row.Client != "a" {
			t.Fatalf("row %d at %v of %q, want %v of a", rows, row.TS, row.Client, want)
		}
		rows++
		sent += row.Sent
		return nil
	})
	runtime.ReadMemStats(&after)
	if rows != 600_000 || sent != 1 {
		t.Fatalf("%d rows, %d sent; want 600,000 rows and the one request", rows, sent)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Errorf("EachRow allocated %d KB for 600,000 rows, want at most 1 MB: the rows built at once?", alloc>>10)
	}
}
