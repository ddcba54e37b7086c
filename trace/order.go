package trace

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

// push adds p, which is not before anything already popped.
func (q *reorderQueue) push(p pending) {
	if n := len(q.fifo); n == q.head || !p.before(&q.fifo[n-1]) {
		if q.head > 0 && q.head == n {
			q.fifo, q.head = q.fifo[:0], 0
		} else if q.head >= 1024 && q.head*2 >= n {
			// Slide the live part down rather than grow without end.
			m := copy(q.fifo, q.fifo[q.head:])
			clear(q.fifo[m:]) // let the strings go
			q.fifo, q.head = q.fifo[:m], 0
		}
		q.fifo = append(q.fifo, p)
		return
	}
	q.heap = append(q.heap, p)
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

// peek returns the earliest pending request, or nil.
func (q *reorderQueue) peek() *pending {
	var f, h *pending
	if q.head < len(q.fifo) {
		f = &q.fifo[q.head]
	}
	if len(q.heap) > 0 {
		h = &q.heap[0]
	}
	switch {
	case f == nil:
		return h
	case h == nil || f.before(h):
		return f
	}
	return h
}

// pop removes and returns the earliest pending request; the queue must
// not be empty.
func (q *reorderQueue) pop() pending {
	if q.head < len(q.fifo) && (len(q.heap) == 0 || q.fifo[q.head].before(&q.heap[0])) {
		p := q.fifo[q.head]
		q.fifo[q.head] = pending{}
		q.head++
		return p
	}
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
