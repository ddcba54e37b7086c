package redistest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// pollDeadline bounds one poll of one node: a stopped node never answers,
// and a poll that waited for it would hide what the others say meanwhile.
// A poll past it is a missed sample, counted in [Timeline.Missed].
const pollDeadline = 50 * time.Millisecond

// EventKind is what changed in an observer's answers between two polls.
type EventKind int

const (
	StateFail     EventKind = iota // the observer's cluster_state went ok → fail
	StateOK                        // its cluster_state went fail → ok
	PFail                          // it flagged Subject fail? (PFAIL)
	Fail                           // it flagged Subject fail (FAIL)
	Cleared                        // it no longer flags Subject fail? or fail
	BecameMaster                   // it shows Subject, a replica before, as a master
	BecameReplica                  // it shows Subject as a replica of Of, which it did not before
	Frozen                         // the test stopped Subject (SIGSTOP); Observer is ""
	Thawed                         // the test let Subject go on (SIGCONT); Observer is ""
)

var kindNames = [...]string{"state fail", "state ok", "pfail", "fail", "cleared", "master", "replica", "frozen", "thawed"}

func (k EventKind) String() string {
	if k < 0 || int(k) >= len(kindNames) {
		return "EventKind(" + strconv.Itoa(int(k)) + ")"
	}
	return kindNames[k]
}

// Event is one transition, as a poll saw it. It happened in (After, At]:
// At is when the reply that showed it arrived; After is when the poll
// before it, which still showed the old state, was sent (the zero time for
// what the first poll showed). A test's own action (Frozen, Thawed) has
// After equal to At.
type Event struct {
	At, After time.Time
	Observer  string // host:port of the node that answered
	Kind      EventKind
	Subject   string // host:port the flags are about; "" for a state event
	Of        string // BecameReplica: the host:port of the master it replicates

	// Failing and PFailing are the nodes the observer flagged fail and
	// fail? in the same reply, for a state event: why its state is fail
	// (src/cluster.c:clusterUpdateState: a slot's owner FAIL, or fewer
	// reachable masters than a majority).
	Failing, PFailing []string
}

// Timeline is every transition a [Watcher] saw, in the order seen.
type Timeline struct {
	Events []Event
	Polls  map[string]int // answered polls per node
	Missed map[string]int // polls past pollDeadline, or refused, per node
	// Silences are, per node, the gaps longer than SilenceMin between
	// two of its answered polls, in order: it answered nothing (stopped,
	// busy, its replies later than pollDeadline), or this process did
	// not get to poll it (a loaded machine). A frozen node's freeze is
	// one, ending at its first answer after the thaw.
	Silences map[string][]Silence
}

// SilenceMin is the shortest gap between two answered polls of a node
// that a Timeline records as a Silence: ten poll intervals of 10 ms, two
// poll deadlines; a store call's 200 ms timeout on a node that is up
// takes a longer one, of the node or of this process.
const SilenceMin = 100 * time.Millisecond

// Silence is a span in which a node's polls got no answer: From is the
// reply before it, To the reply that ended it.
type Silence struct{ From, To time.Time }

// SilentDuring reports whether a silence of addr overlaps [from, to].
func (tl Timeline) SilentDuring(addr string, from, to time.Time) bool {
	for _, s := range tl.Silences[addr] {
		if s.From.Before(to) && s.To.After(from) {
			return true
		}
	}
	return false
}

// first returns the first event matching, or the zero Event.
func (tl Timeline) first(match func(Event) bool) Event {
	for _, e := range tl.Events {
		if match(e) {
			return e
		}
	}
	return Event{}
}

// Seen returns the instant observer was first seen showing kind about
// subject ("" for a state event), or the zero time if it never was.
func (tl Timeline) Seen(observer string, kind EventKind, subject string) time.Time {
	return tl.first(func(e Event) bool { return e.Observer == observer && e.Kind == kind && e.Subject == subject }).At
}

// firstAbout is the first instant any node was seen showing kind about
// subject, or the zero time.
func (tl Timeline) firstAbout(kind EventKind, subject string) time.Time {
	return tl.first(func(e Event) bool { return e.Kind == kind && e.Subject == subject }).At
}

// FirstPFail is the first instant any node was seen flagging addr fail?
// (PFAIL), or the zero time. A node may flag PFAIL and then FAIL between
// two polls, or take FAIL from a FAIL message without PFAIL first, so
// FirstPFail may be missed, or come after FirstFail.
func (tl Timeline) FirstPFail(addr string) time.Time { return tl.firstAbout(PFail, addr) }

// FirstFail is the first instant any node was seen flagging addr fail, or
// the zero time.
func (tl Timeline) FirstFail(addr string) time.Time { return tl.firstAbout(Fail, addr) }

// Promoted is the first instant any node was seen showing addr, a replica
// before, as a master, or the zero time.
func (tl Timeline) Promoted(addr string) time.Time { return tl.firstAbout(BecameMaster, addr) }

// Window is a stretch in which an observer answered cluster_state:fail:
// from the first poll that showed fail to the first that showed ok
// again (the zero time if none did before the watch stopped).
type Window struct {
	Start, End time.Time
	// Failing and PFailing are the nodes the observer flagged fail and
	// fail? in the reply that opened the window.
	Failing, PFailing []string
}

// Windows returns observer's cluster_state:fail windows in order.
func (tl Timeline) Windows(observer string) []Window {
	var ws []Window
	for _, e := range tl.Events {
		if e.Observer != observer {
			continue
		}
		switch {
		case e.Kind == StateFail:
			ws = append(ws, Window{Start: e.At, Failing: e.Failing, PFailing: e.PFailing})
		case e.Kind == StateOK && len(ws) > 0 && ws[len(ws)-1].End.IsZero():
			ws[len(ws)-1].End = e.At
		}
	}
	return ws
}

// ClusterDownWindows returns observer's cluster_state:fail windows as
// [start, end] pairs; end is the zero time for one still open when the
// watch stopped.
func (tl Timeline) ClusterDownWindows(observer string) [][2]time.Time {
	var out [][2]time.Time
	for _, w := range tl.Windows(observer) {
		out = append(out, [2]time.Time{w.Start, w.End})
	}
	return out
}

// Format writes the timeline one event a line, instants as offsets from
// t0 in milliseconds, the interval an event happened in first.
func (tl Timeline) Format(w io.Writer, t0 time.Time) {
	ms := func(t time.Time) string {
		if t.IsZero() {
			return "-inf"
		}
		return strconv.FormatFloat(float64(t.Sub(t0).Microseconds())/1000, 'f', 1, 64)
	}
	for _, e := range tl.Events {
		fmt.Fprintf(w, "(%9s, %9s] ms  %-15s %-13s %s", ms(e.After), ms(e.At), e.Observer, e.Kind, e.Subject)
		if e.Of != "" {
			fmt.Fprintf(w, " of %s", e.Of)
		}
		if e.Kind == StateFail {
			fmt.Fprintf(w, " (flags fail %v, fail? %v)", e.Failing, e.PFailing)
		}
		fmt.Fprintln(w)
	}
}

// NodeFlags is how an observer's CLUSTER NODES shows one node.
type NodeFlags struct {
	Master, PFail, Fail bool
	MasterAddr          string // a replica's master; "" for a master or one unknown
	Slots               int    // how many slots it serves
}

// Observation is one node's answer to a poll.
type Observation struct {
	At      time.Time
	StateOK bool                 // CLUSTER INFO cluster_state:ok
	Nodes   map[string]NodeFlags // its CLUSTER NODES, by host:port, itself included
}

// View is the latest answer of every node that has answered, by host:port.
type View map[string]Observation

// AllOK reports whether every node in addrs has answered and its latest
// answer was cluster_state:ok.
func (v View) AllOK(addrs ...string) bool {
	for _, a := range addrs {
		if o, ok := v[a]; !ok || !o.StateOK {
			return false
		}
	}
	return true
}

// Watcher polls every node of a cluster, each in a goroutine of its own,
// for CLUSTER INFO and CLUSTER NODES in one exchange, and records every
// change of cluster_state, of the fail?/fail flags and of the roles it
// shows, with the instant of the reply. A node the test froze is not
// polled until it is thawed.
type Watcher struct {
	t       testing.TB
	c       *Cluster
	stop    chan struct{}
	done    sync.WaitGroup
	mu      sync.Mutex
	tl      Timeline
	view    View
	frozen  map[string]bool
	sentAt  map[string]time.Time // the send instant of each node's last answered poll
	stopped bool
}

// WatchCluster starts polling every node of c every interval, until Stop
// or the end of the test.
func WatchCluster(t testing.TB, c *Cluster, interval time.Duration) *Watcher {
	w := &Watcher{t: t, c: c, stop: make(chan struct{}), view: View{}, frozen: map[string]bool{},
		sentAt: map[string]time.Time{}, tl: Timeline{Polls: map[string]int{}, Missed: map[string]int{}}}
	for _, n := range c.Nodes {
		w.done.Add(1)
		go w.poll(n.Addr(), interval)
	}
	t.Cleanup(func() { w.Stop() })
	return w
}

// Freeze stops n (SIGSTOP) and stops polling it, and returns the instant
// just before the signal: no effect of the freeze can come before it.
func (w *Watcher) Freeze(n *Node) time.Time {
	w.t.Helper()
	w.mu.Lock()
	w.frozen[n.Addr()] = true
	at := time.Now()
	w.tl.Events = append(w.tl.Events, Event{At: at, After: at, Kind: Frozen, Subject: n.Addr()})
	w.mu.Unlock()
	n.Stop()
	return at
}

// Thaw lets n go on (SIGCONT) and polls it again, and returns the instant
// just after the signal.
func (w *Watcher) Thaw(n *Node) time.Time {
	w.t.Helper()
	n.Cont()
	w.mu.Lock()
	defer w.mu.Unlock()
	at := time.Now()
	w.frozen[n.Addr()] = false
	w.tl.Events = append(w.tl.Events, Event{At: at, After: at, Kind: Thawed, Subject: n.Addr()})
	return at
}

// Wait checks cond against the latest view every 5 ms and returns the
// instant it first held, failing the test, saying what it waited for and
// what the nodes said, when it did not within the bound.
func (w *Watcher) Wait(within time.Duration, what string, cond func(View) bool) time.Time {
	w.t.Helper()
	deadline := time.Now().Add(within)
	for {
		w.mu.Lock()
		held := cond(w.view)
		w.mu.Unlock()
		if held {
			return time.Now()
		}
		if time.Now().After(deadline) {
			var b strings.Builder
			w.mu.Lock()
			for _, n := range w.c.Nodes {
				o := w.view[n.Addr()]
				fmt.Fprintf(&b, "%s: state ok %v, nodes %+v\n", n.Addr(), o.StateOK, o.Nodes)
			}
			w.mu.Unlock()
			w.t.Fatalf("not %s within %v; the nodes last said:\n%s", what, within, b.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Stop stops the polls, waits for them, and returns what they saw.
// Stopping again returns the same timeline.
func (w *Watcher) Stop() Timeline {
	w.mu.Lock()
	if !w.stopped {
		w.stopped = true
		close(w.stop)
	}
	w.mu.Unlock()
	w.done.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	tl := w.tl
	tl.Events = slices.Clone(w.tl.Events)
	tl.Silences = map[string][]Silence{}
	for a, s := range w.tl.Silences {
		tl.Silences[a] = slices.Clone(s)
	}
	return tl
}

// poll asks addr every interval, on a connection of its own that a poll
// past its deadline closes (its reply would answer the next poll).
func (w *Watcher) poll(addr string, interval time.Duration) {
	defer w.done.Done()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	var conn net.Conn
	var r *bufio.Reader
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()
	for {
		select {
		case <-w.stop:
			return
		case <-tick.C:
		}
		w.mu.Lock()
		frozen := w.frozen[addr]
		w.mu.Unlock()
		if frozen {
			if conn != nil {
				conn.Close()
				conn = nil
			}
			continue
		}
		sent := time.Now()
		if conn == nil {
			c, err := net.DialTimeout("tcp", addr, pollDeadline)
			if err != nil {
				w.missed(addr)
				continue
			}
			conn, r = c, bufio.NewReader(c)
		}
		info, nodes, err := askCluster(conn, r, sent.Add(pollDeadline))
		if err != nil {
			conn.Close()
			conn = nil
			w.missed(addr)
			continue
		}
		w.record(addr, sent, time.Now(), info, nodes)
	}
}

func (w *Watcher) missed(addr string) {
	w.mu.Lock()
	w.tl.Missed[addr]++
	w.mu.Unlock()
}

// askCluster sends CLUSTER INFO and CLUSTER NODES in one write, so that
// the server reads them together and answers both in one pass of its
// event loop, with no cluster-bus message handled between them; CLUSTER
// INFO first, so that flags a state change needs (a FAIL, a new owner's
// slots) are in the CLUSTER NODES after it.
func askCluster(c net.Conn, r *bufio.Reader, deadline time.Time) (info, nodes string, err error) {
	c.SetDeadline(deadline)
	if _, err := io.WriteString(c, "*2\r\n$7\r\nCLUSTER\r\n$4\r\nINFO\r\n*2\r\n$7\r\nCLUSTER\r\n$5\r\nNODES\r\n"); err != nil {
		return "", "", err
	}
	if info, err = readBulk(r); err != nil {
		return "", "", err
	}
	nodes, err = readBulk(r)
	return info, nodes, err
}

// readBulk reads one RESP2 bulk string reply; an error reply is an error.
func readBulk(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	if !strings.HasPrefix(line, "$") {
		return "", fmt.Errorf("redistest: want a bulk string, got %q", line)
	}
	n, err := strconv.Atoi(line[1:])
	if err != nil || n < 0 {
		return "", fmt.Errorf("redistest: bad bulk length %q", line)
	}
	b := make([]byte, n+2)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", err
	}
	return string(b[:n]), nil
}

// parseObservation reads a CLUSTER INFO and a CLUSTER NODES reply.
func parseObservation(at time.Time, info, nodes string) Observation {
	o := Observation{At: at, StateOK: strings.Contains(info, "cluster_state:ok"), Nodes: map[string]NodeFlags{}}
	addrOf := map[string]string{}
	masterOf := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(nodes), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 {
			continue
		}
		addr, _, _ := strings.Cut(f[1], "@")
		addrOf[f[0]] = addr
		var nf NodeFlags
		for _, flag := range strings.Split(f[2], ",") {
			switch flag {
			case "master":
				nf.Master = true
			case "fail?":
				nf.PFail = true
			case "fail":
				nf.Fail = true
			}
		}
		nf.Slots = countSlots(f[8:])
		masterOf[addr] = f[3]
		o.Nodes[addr] = nf
	}
	for addr, id := range masterOf {
		if nf := o.Nodes[addr]; !nf.Master {
			nf.MasterAddr = addrOf[id]
			o.Nodes[addr] = nf
		}
	}
	return o
}

// record compares addr's answer with its answer before and appends what
// changed. The first answer is compared with a healthy cluster's: state
// ok, nothing flagged, each node's role as it is now.
func (w *Watcher) record(addr string, sent, at time.Time, info, nodes string) {
	o := parseObservation(at, info, nodes)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.tl.Polls[addr]++
	prev, seen := w.view[addr]
	after := w.sentAt[addr]
	if seen && at.Sub(prev.At) > SilenceMin {
		if w.tl.Silences == nil {
			w.tl.Silences = map[string][]Silence{}
		}
		w.tl.Silences[addr] = append(w.tl.Silences[addr], Silence{From: prev.At, To: at})
	}
	if !seen {
		prev = Observation{StateOK: true, Nodes: map[string]NodeFlags{}}
		for a, nf := range o.Nodes {
			prev.Nodes[a] = NodeFlags{Master: nf.Master, MasterAddr: nf.MasterAddr}
		}
	}
	add := func(kind EventKind, subject, of string) {
		e := Event{At: at, After: after, Observer: addr, Kind: kind, Subject: subject, Of: of}
		if kind == StateFail || kind == StateOK {
			for a, nf := range o.Nodes {
				if nf.Fail {
					e.Failing = append(e.Failing, a)
				}
				if nf.PFail {
					e.PFailing = append(e.PFailing, a)
				}
			}
			slices.Sort(e.Failing)
			slices.Sort(e.PFailing)
		}
		w.tl.Events = append(w.tl.Events, e)
	}
	if prev.StateOK && !o.StateOK {
		add(StateFail, "", "")
	}
	if !prev.StateOK && o.StateOK {
		add(StateOK, "", "")
	}
	subjects := make([]string, 0, len(o.Nodes))
	for a := range o.Nodes {
		subjects = append(subjects, a)
	}
	slices.Sort(subjects)
	for _, a := range subjects {
		now, was := o.Nodes[a], prev.Nodes[a]
		switch {
		case now.Fail && !was.Fail:
			add(Fail, a, "")
		case now.PFail && !was.PFail && !was.Fail:
			add(PFail, a, "")
		case !now.Fail && !now.PFail && (was.Fail || was.PFail):
			add(Cleared, a, "")
		}
		switch {
		case now.Master && !was.Master:
			add(BecameMaster, a, "")
		case !now.Master && (was.Master || now.MasterAddr != was.MasterAddr):
			add(BecameReplica, a, now.MasterAddr)
		}
	}
	w.view[addr] = o
	w.sentAt[addr] = sent
}
