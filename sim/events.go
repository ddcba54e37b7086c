package sim

// Event kinds.
const (
	evArrival    uint8 = iota // a client's traffic stream sends a request; arg: stream
	evRetry                   // a client sends a rejected request again; arg: attempt
	evWrite                   // a racy read-modify-write's write lands; arg: pending slot
	evStepEnd                 // the recorder closes a step; arg: step (never queued: see sim.nextStepEnd)
	evFaultStart              // arg: fault index
	evFaultEnd
	evLog     // a log entry falls due; arg: index into notes
	evRelease // an admitted request has been served and gives back its lease; arg: flight slot
)

// event is something that happens at a virtual instant. Ties are broken by
// seq, the order in which events were scheduled, so a run is reproducible.
type event struct {
	at     int64
	seq    uint64
	cost   int64
	client int32
	arg    int32
	kind   uint8
}

// earlier reports whether a comes before b: by time, then by the order
// they were scheduled in.
func earlier(a, b *event) bool {
	return a.at < b.at || (a.at == b.at && a.seq < b.seq)
}

// eventQueue is a binary min-heap of events by (at, seq). It is written out
// rather than built on container/heap because heap.Push takes an any, which
// would allocate for every one of millions of events.
type eventQueue struct{ items []event }

func (q *eventQueue) len() int { return len(q.items) }

func (q *eventQueue) peek() event { return q.items[0] }

func (q *eventQueue) push(e event) {
	q.items = append(q.items, e)
	// Sift up with a hole: parents move down into it, and e is written
	// once, where it belongs.
	items := q.items
	i := len(items) - 1
	for i > 0 {
		parent := (i - 1) / 2
		p := &items[parent]
		if !earlier(&e, p) {
			break
		}
		items[i] = *p
		i = parent
	}
	items[i] = e
}

func (q *eventQueue) pop() event {
	top := q.items[0]
	last := len(q.items) - 1
	q.items[0] = q.items[last]
	q.items = q.items[:last]
	q.down()
	return top
}

// replaceTop puts e in the place of the earliest event: a pop and a push
// for the price of one sift down.
func (q *eventQueue) replaceTop(e event) {
	q.items[0] = e
	q.down()
}

// down sifts the top down to its place, with a hole as push does. It
// compares events where they lie (earlier): before takes its events by
// value, and a sift that copied two 40-byte events into each comparison
// spent a fifth of a simulated request in it.
func (q *eventQueue) down() {
	items := q.items
	n := len(items)
	if n == 0 {
		return
	}
	e := items[0]
	i := 0
	for {
		child := 2*i + 1
		if child >= n {
			break
		}
		c := &items[child]
		if r := child + 1; r < n {
			if rc := &items[r]; earlier(rc, c) {
				child, c = r, rc
			}
		}
		if !earlier(c, &e) {
			break
		}
		items[i] = *c
		i = child
	}
	items[i] = e
}
