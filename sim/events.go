package sim

// Event kinds.
const (
	evArrival    uint8 = iota // a client's traffic stream sends a request; arg: stream
	evRetry                   // a client sends a rejected request again; arg: attempt
	evWrite                   // a racy read-modify-write's write lands; arg: pending slot
	evStepEnd                 // the recorder closes a step; arg: step
	evFaultStart              // arg: fault index
	evFaultEnd
	evLog // a log entry falls due; arg: index into notes
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

func (a event) before(b event) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

// eventQueue is a binary min-heap of events by (at, seq). It is written out
// rather than built on container/heap because heap.Push takes an any, which
// would allocate for every one of millions of events.
type eventQueue struct{ items []event }

func (q *eventQueue) len() int { return len(q.items) }

func (q *eventQueue) peek() event { return q.items[0] }

func (q *eventQueue) push(e event) {
	q.items = append(q.items, e)
	i := len(q.items) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if !q.items[i].before(q.items[parent]) {
			break
		}
		q.items[i], q.items[parent] = q.items[parent], q.items[i]
		i = parent
	}
}

func (q *eventQueue) pop() event {
	top := q.items[0]
	last := len(q.items) - 1
	q.items[0] = q.items[last]
	q.items = q.items[:last]
	i := 0
	for {
		l, r := 2*i+1, 2*i+2
		smallest := i
		if l < last && q.items[l].before(q.items[smallest]) {
			smallest = l
		}
		if r < last && q.items[r].before(q.items[smallest]) {
			smallest = r
		}
		if smallest == i {
			return top
		}
		q.items[i], q.items[smallest] = q.items[smallest], q.items[i]
		i = smallest
	}
}
