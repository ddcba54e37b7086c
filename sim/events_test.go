package sim

import (
	"cmp"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// TestEventQueueGivesEventsInOrder: whatever is pushed or popped, the
// queue gives its events by time, ties in the order they were scheduled,
// as a sorted list of them does.
func TestEventQueueGivesEventsInOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var q eventQueue
		var want []event
		var seq uint64
		next := func() event {
			seq++
			// Few instants, so that ties are common.
			return event{at: rapid.Int64Range(0, 8).Draw(t, "at"), seq: seq}
		}
		byOrder := func(a, b event) int {
			return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.seq, b.seq))
		}
		for range rapid.IntRange(1, 60).Draw(t, "ops") {
			switch {
			case q.len() == 0 || rapid.Bool().Draw(t, "push"):
				e := next()
				q.push(e)
				want = append(want, e)
			default:
				slices.SortFunc(want, byOrder)
				if got := q.pop(); got != want[0] {
					t.Fatalf("popped %+v, want %+v", got, want[0])
				}
				want = want[1:]
			}
		}
		slices.SortFunc(want, byOrder)
		for _, w := range want {
			if got := q.pop(); got != w {
				t.Fatalf("popped %+v, want %+v", got, w)
			}
		}
	})
}

// TestArrivalTreeGivesTheEarliest: whatever arrivals the sources are
// given or lose, in any order, the tree's top is the earliest of them by
// time, ties by sequence number, as a scan of every source finds it; with
// none left, it is noArrival.
func TestArrivalTreeGivesTheEarliest(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		sources := rapid.IntRange(0, 13).Draw(t, "sources")
		tree := newArrivalTree(sources)
		want := make([]event, max(sources, 1))
		for i := range want {
			want[i] = noArrival
		}
		var seq uint64
		for range rapid.IntRange(1, 80).Draw(t, "ops") {
			i := rapid.IntRange(0, len(want)-1).Draw(t, "source")
			e := noArrival
			if sources > 0 && rapid.IntRange(0, 3).Draw(t, "set") > 0 {
				seq++
				// Few instants, so that ties are common.
				e = event{at: rapid.Int64Range(0, 5).Draw(t, "at"), seq: seq, client: int32(i)}
			}
			tree.set(i, e)
			want[i] = e
			earliest := 0
			for j := range want {
				if earlier(&want[j], &want[earliest]) {
					earliest = j
				}
			}
			got, src := tree.top()
			if *got != want[earliest] {
				t.Fatalf("top %+v from source %d, want %+v from source %d", *got, src, want[earliest], earliest)
			}
			if got.seq != noSeq && src != earliest {
				t.Fatalf("top from source %d, want %d", src, earliest)
			}
		}
	})
}
