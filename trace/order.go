package trace

import "time"

// pending is a request read but not yet returned: it waits until no line
// still to come may be earlier than it.
type pending struct {
	at  int64 // arrival, ns since 1970
	rec Record
}

// before reports whether a comes before b: by time, then by line, so that
// requests logged at the same instant keep the log's order.
func (a *pending) before(b *pending) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.rec.Line < b.rec.Line
}

// reorderQueue holds the pending requests in arrival order. Most lines
// come in order: they go to a FIFO, at O(1) each. The few that come out of
// order go to a min-heap beside it. The next request is the earlier of
// the two heads. Its invariant: fifo[head:] is sorted, heap is a heap,
// both by before.
//
// The heap is written out rather than container/heap's because that one
// takes and returns an interface value, which allocates for every push of
// a struct this size; this one allocates only to grow.
type reorderQueue struct {
	fifo []pending
	head int
	heap []pending
}

func (q *reorderQueue) len() int { return len(q.fifo) - q.head + len(q.heap) }

// push adds a copy of p, which is not before anything already popped. (A
// pending request is 12 words: passed by value, it was copied once more.)
func (q *reorderQueue) push(p *pending) {
	if n := len(q.fifo); n == q.head || !p.before(&q.fifo[n-1]) {
		if q.head > 0 && q.head == n {
			q.fifo, q.head = q.fifo[:0], 0
		} else if q.head >= 1024 && q.head*2 >= n {
			// Slide the live part down rather than grow without end.
			m := copy(q.fifo, q.fifo[q.head:])
			clear(q.fifo[m:]) // let the strings go
			q.fifo, q.head = q.fifo[:m], 0
		}
		q.fifo = append(q.fifo, *p)
		return
	}
	q.heap = append(q.heap, *p)
	h := q.heap
	for i := len(h) - 1; i > 0; {
		parent := (i - 1) / 2
		if !h[i].before(&h[parent]) {
			break
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
}

// popDue removes the earliest pending request, if it arrived at limit or
// before, and sets *rec to it, its At set; it reports whether it did.
// (A peek and then a pop compared the two heads twice, and copied the
// request twice more, to return it and then to return its Record.)
func (q *reorderQueue) popDue(limit int64, rec *Record) bool {
	if q.head < len(q.fifo) && (len(q.heap) == 0 || q.fifo[q.head].before(&q.heap[0])) {
		f := &q.fifo[q.head]
		if f.at > limit {
			return false
		}
		*rec = f.rec
		rec.At = time.Unix(0, f.at).UTC()
		*f = pending{} // let the strings go
		q.head++
		return true
	}
	if len(q.heap) == 0 || q.heap[0].at > limit {
		return false
	}
	p := q.pop()
	*rec = p.rec
	rec.At = time.Unix(0, p.at).UTC()
	return true
}

// pop removes and returns the earliest pending request of the heap,
// which must not be empty.
func (q *reorderQueue) pop() pending {
	h := q.heap
	p := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h[n] = pending{}
	h = h[:n]
	for i := 0; ; {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && h[r].before(&h[l]) {
			m = r
		}
		if !h[m].before(&h[i]) {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	q.heap = h
	return p
}
