package sim

import (
	"cmp"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// TestEventQueueGivesEventsInOrder: whatever is pushed, popped or put in
// place of the top, the queue gives its events by time, ties in the
// order they were scheduled, as a sorted list of them does.
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
			case rapid.Bool().Draw(t, "replace"):
				slices.SortFunc(want, byOrder)
				if got := q.peek(); got != want[0] {
					t.Fatalf("top %+v, want %+v", got, want[0])
				}
				e := next()
				q.replaceTop(e)
				want[0] = e
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
