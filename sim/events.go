package sim

import "math"

// Event kinds.
const (
	evArrival    uint8 = iota // a client's traffic stream sends a request; arg: stream
	evRetry                   // a client sends a rejected request again; arg: attempt
	evWrite                   // a racy read-modify-write's write lands; arg: pending slot
	evStepEnd                 // the recorder closes a step; arg: step (never queued: see sim.nextStepEnd)
	evFaultStart              // arg: fault index
	evFaultEnd
	evLog            // a log entry falls due; arg: index into notes
	evRelease        // an admitted request has been served and gives back its lease; arg: flight slot
	evCluster        // a change a partition planned for a cluster falls due; arg: index into clusterRun.planned
	evSync           // a synced server pushes its admissions to the shared copy; arg: server
	evOwnerHits      // an owner topology's node sends its queued hits to their owners; arg: node
	evOwnerBroadcast // an owner broadcasts its queued keys' status to the other nodes; arg: node
	evRegionDelivery // admissions replicated from other regions reach a region's store; arg: region
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

// eventQueue is a binary min-heap of events by (at, seq): a run's events
// but its arrivals (arrivalTree's), and the arrivals Arrivals lists. It
// is written out rather than built on container/heap because heap.Push
// takes an any, which would allocate for every one of millions of events.
type eventQueue struct{ items []event }

func (q *eventQueue) len() int { return len(q.items) }

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

// arrivalTree holds each arrival source's next arrival: a run's sources
// are its clients' traffic streams and its feeds, each with one arrival
// due at a time, and the arrival handled is replaced by the same
// source's next one. A tournament tree over the sources finds the
// earliest: node 1 is the root, node n's children are 2n and 2n+1, the
// sources are the leaves, source i at node k+i (k sources), and win[n]
// is the source whose arrival is the earliest under node n. Replacing a
// source's arrival plays the matches on its way to the root again (fix):
// one comparison a level, indices moved, no event. In the binary heap
// that held every event, putting a stream's next arrival in place of the
// top sifted 40-byte events down with two comparisons a level: 130 of a
// simulated request's 908 instructions. Any event but an arrival is the
// eventQueue's.
type arrivalTree struct {
	next []event // by source; noArrival when it has none
	win  []int32 // by node, 2k long; win[k+i] is i, win[0] unused
}

// noArrival is a source's arrival when it has none: after every event.
var noArrival = event{at: math.MaxInt64, seq: noSeq}

// noSeq is noArrival's sequence number, no event's.
const noSeq = math.MaxUint64

// newArrivalTree is a tree of sources arrival sources, none with an
// arrival yet. A run without one has a source that never has any, so
// that the root is always a node.
func newArrivalTree(sources int) arrivalTree {
	k := max(sources, 1)
	t := arrivalTree{next: make([]event, k), win: make([]int32, 2*k)}
	for i := range k {
		t.next[i] = noArrival
		t.win[k+i] = int32(i)
	}
	for n := k - 1; n > 0; n-- {
		t.win[n] = t.win[2*n] // no arrival anywhere: any source is the earliest
	}
	return t
}

// top is the earliest arrival and its source: noArrival's when no source
// has one.
func (t *arrivalTree) top() (*event, int) {
	i := t.win[1]
	return &t.next[i], int(i)
}

// set makes e source i's next arrival, noArrival for none.
func (t *arrivalTree) set(i int, e event) {
	t.next[i] = e
	t.fix(i)
}

// fix plays the matches from source i's leaf to the root again, once its
// arrival changed: at each node on the way, the winner from below (whose
// time and sequence number are kept at hand) meets the winner of the
// sibling subtree, which did not change. One index and one event read a
// level: a node's two children read each time cost a third more.
func (t *arrivalTree) fix(i int) {
	next, win := t.next, t.win // not read again through t at each store
	w := int32(i)
	at, seq := next[i].at, next[i].seq
	for n := uint(len(next) + i); n > 1; n >>= 1 {
		rival := win[n^1] // n's sibling: 2p and 2p+1 are p's children
		if e := &next[rival]; e.at < at || (e.at == at && e.seq < seq) {
			w, at, seq = rival, e.at, e.seq
		}
		win[n>>1] = w
	}
}
