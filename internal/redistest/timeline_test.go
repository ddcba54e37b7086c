package redistest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestClusterFailoverTimeline hangs one master of three (SIGSTOP, one
// replica each, node_timeout 1 s), watches every node until the master's
// replica is promoted, keeps the master frozen 2 s more, lets it go on
// (SIGCONT) and watches until it is a replica of the promoted node and
// every node answers cluster_state:ok. It asserts only what the Redis
// source makes hold whatever the load (src/cluster.c of 7.0.15, the
// redis-server installed here; the same functions are in
// src/cluster_legacy.c from 7.2), and logs the timeline
// as offsets from the freeze, with a probe SET sent to the old master from
// the SIGCONT on and a go-redis ClusterClient writing its slot throughout.
func TestClusterFailoverTimeline(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a six-node Redis Cluster and fails one master over")
	}
	c := StartCluster(t, 3, 1, time.Second)
	victim, replica, _ := c.MasterWithReplica(t)
	key := keyServedBy(t, victim)
	ctx := context.Background()
	vc := victim.Client()
	if err := vc.Set(ctx, key, "before", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := vc.Wait(ctx, 1, time.Second).Result(); err != nil || n != 1 {
		t.Fatalf("WAIT 1 on %s = %d, %v: the replica did not ack the write", victim.Addr(), n, err)
	}
	mastersAtStart := map[string]bool{}
	nodes, err := clusterNodes(ctx, c.Nodes[0].Client())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		mastersAtStart[n.addr] = n.master
	}
	probe := newSetProbe(t, victim.Addr(), key)
	client := startClientWrites(t, c, "{"+key+"}:client")

	w := WatchCluster(t, c, 10*time.Millisecond)
	time.Sleep(300 * time.Millisecond)
	t0 := w.Freeze(victim)
	w.Wait(20*time.Second, "the replica "+replica.Addr()+" a master in its own view", func(v View) bool {
		nf := v[replica.Addr()].Nodes[replica.Addr()]
		return nf.Master && nf.Slots > 0
	})
	// Frozen 2 s more: does the client find the promoted replica before
	// the old master can answer it MOVED?
	time.Sleep(2 * time.Second)
	thawed := w.Thaw(victim)
	probe.start()
	w.Wait(20*time.Second, "the old master a replica of "+replica.Addr()+" and every node ok", func(v View) bool {
		for _, n := range c.Nodes {
			if o, ok := v[n.Addr()]; !ok || !o.At.After(thawed) || !o.StateOK {
				return false
			}
		}
		self := v[victim.Addr()].Nodes[victim.Addr()]
		return !self.Master && self.MasterAddr == replica.Addr()
	})
	// 300 ms more of SETs, to see the old master's answers and the
	// client's once both settled.
	time.Sleep(300 * time.Millisecond)
	probes := probe.stop()
	writes := client.stop()
	tl := w.Stop()
	final := probe.set()
	probes = append(probes, final)

	var b strings.Builder
	tl.Format(&b, t0)
	t.Logf("victim %s, replica %s, key %q; the timeline, ms from the SIGSTOP:\n%s", victim.Addr(), replica.Addr(), key, b.String())
	for _, n := range c.Nodes {
		t.Logf("%s: %d polls answered, %d missed", n.Addr(), tl.Polls[n.Addr()], tl.Missed[n.Addr()])
	}

	// since is from's distance to t in ms, or "none" when t is the zero
	// time (never seen).
	since := func(at, from time.Time) string {
		if at.IsZero() {
			return "none"
		}
		return strconv.FormatFloat(float64(at.Sub(from).Microseconds())/1000, 'f', 1, 64)
	}

	// Failure detection: a node flags another fail? only once it has not
	// answered for node_timeout (src/cluster.c:clusterCron), and fail only
	// when it flags it fail? itself and a majority of masters agree
	// (markNodeAsFailingIfNeeded), so nothing about the victim comes
	// before the freeze, and each node flags it fail? before fail. A node
	// may go from nothing to fail between two polls, or on a FAIL message
	// (clusterProcessPacket), so the first fail? seen anywhere may be
	// missed or come after the first fail seen elsewhere: only each
	// node's own order is asserted.
	for _, e := range tl.Events {
		if e.Subject == victim.Addr() && (e.Kind == PFail || e.Kind == Fail) && !e.At.After(t0) {
			t.Errorf("%s flagged the victim %s at %s ms, not after the SIGSTOP", e.Observer, e.Kind, since(e.At, t0))
		}
	}
	firstFail := tl.FirstFail(victim.Addr())
	if firstFail.IsZero() {
		t.Fatalf("no node was seen flagging the victim %s fail", victim.Addr())
	}
	for _, n := range c.Nodes {
		pf, f := tl.Seen(n.Addr(), PFail, victim.Addr()), tl.Seen(n.Addr(), Fail, victim.Addr())
		if !pf.IsZero() && !f.IsZero() && !pf.Before(f) {
			t.Errorf("%s: fail? seen at %s ms, not before its fail at %s ms", n.Addr(), since(pf, t0), since(f, t0))
		}
	}
	// A replica asks for votes only when its master is fail in its own
	// view (clusterHandleSlaveFailover), and the fail stays while the
	// master is frozen: the poll that showed the replica a master showed
	// the fail too, or a poll before it did.
	promotedSelf := tl.Seen(replica.Addr(), BecameMaster, replica.Addr())
	if promotedSelf.IsZero() {
		t.Fatalf("the replica %s never showed itself a master", replica.Addr())
	}
	if promotedSelf.Before(firstFail) {
		t.Errorf("the replica showed itself a master at %s ms, before the first fail at %s ms", since(promotedSelf, t0), since(firstFail, t0))
	}
	promoted := tl.Promoted(replica.Addr())

	// The majority's cluster_state:fail windows. clusterUpdateState makes
	// a node's state fail only when a slot's owner is fail (full coverage,
	// the default) or fewer than a majority of the masters are reachable;
	// it is ok again only when every slot has an owner not fail, which for
	// the victim's slots is the promoted replica. A window opened by the
	// victim's fail is the full-coverage window: it ends at or after the
	// observer showed the replica a master. Each master voted, so flagged
	// the victim fail at least the replica's election delay (500 ms +
	// random 0-500 ms, clusterHandleSlaveFailover) before the promotion,
	// and so did the replica: those three show a full-coverage window.
	windows := map[string][]time.Duration{}
	for _, n := range c.Nodes {
		o := n.Addr()
		if o == victim.Addr() {
			continue
		}
		fullCoverage := 0
		for _, win := range tl.Windows(o) {
			if win.End.IsZero() {
				t.Errorf("%s: cluster_state fail from %s ms never ended", o, since(win.Start, t0))
				continue
			}
			switch {
			case slices.Contains(win.Failing, victim.Addr()):
				fullCoverage++
				windows[o] = append(windows[o], win.End.Sub(win.Start))
				if seen := tl.Seen(o, BecameMaster, replica.Addr()); seen.IsZero() || win.End.Before(seen) {
					t.Errorf("%s: full-coverage window [%s, %s] ms ended before it showed the replica a master (%s ms)",
						o, since(win.Start, t0), since(win.End, t0), since(seen, t0))
				}
			case len(win.Failing)+len(win.PFailing) >= 2:
				t.Logf("%s: a minority window [%s, %s] ms (flags fail %v, fail? %v)", o, since(win.Start, t0), since(win.End, t0), win.Failing, win.PFailing)
			default:
				t.Errorf("%s: cluster_state fail at %s ms with no owner fail and no minority (flags fail %v, fail? %v)",
					o, since(win.Start, t0), win.Failing, win.PFailing)
			}
		}
		if fullCoverage == 0 && (mastersAtStart[o] || o == replica.Addr()) {
			t.Errorf("%s: no full-coverage cluster_state fail window seen", o)
		}
	}

	// The thaw. The old master learns of the newer configEpoch and
	// makes itself a replica of the promoted node
	// (clusterUpdateSlotsConfigWith); a replica never takes a write: after
	// it showed itself a replica, every SET is MOVED or CLUSTERDOWN
	// (src/cluster.c:getNodeByQuery).
	demoted := tl.Seen(victim.Addr(), BecameReplica, victim.Addr())
	if !demoted.After(thawed) {
		t.Errorf("the old master showed itself a replica at %s ms, not after the SIGCONT at %s ms", since(demoted, t0), since(thawed, t0))
	}
	var firstMoved, lastOK time.Time
	oks := 0
	wantMoved := "-MOVED "
	for _, p := range probes {
		if p.reply == "+OK" {
			oks++
			lastOK = p.at
		}
		if firstMoved.IsZero() && strings.HasPrefix(p.reply, wantMoved) && strings.HasSuffix(p.reply, " "+replica.Addr()) {
			firstMoved = p.at
		}
		if p.sent.After(demoted) && p.reply == "+OK" {
			t.Errorf("SET sent %s ms after the SIGCONT, after the old master showed itself a replica, answered OK", since(p.sent, thawed))
		}
	}
	if !strings.HasPrefix(final.reply, wantMoved) || !strings.HasSuffix(final.reply, " "+replica.Addr()) {
		t.Errorf("SET %s on the old master once every node is ok = %q, want MOVED to %s", key, final.reply, replica.Addr())
	}
	// Last failover wins: whatever the old master took after the SIGCONT
	// is gone; the promoted replica has what it had acked before the freeze.
	if got, err := replica.Client().Get(ctx, key).Result(); err != nil || got != "before" {
		t.Errorf("GET %s on the promoted replica = %q, %v; want \"before\"", key, got, err)
	}

	var pb strings.Builder
	for i := 0; i < len(probes); {
		j := i
		for j < len(probes) && probes[j].reply == probes[i].reply {
			j++
		}
		fmt.Fprintf(&pb, "  sent %s ms, answered %s ms: %s", since(probes[i].sent, thawed), since(probes[i].at, thawed), probes[i].reply)
		if j-i > 1 {
			fmt.Fprintf(&pb, " (and %d more the same, the last answered %s ms)", j-i-1, since(probes[j-1].at, thawed))
		}
		pb.WriteString("\n")
		i = j
	}
	t.Logf("SET %s to the old master, ms from the SIGCONT:\n%s", key, pb.String())
	t.Logf("go-redis ClusterClient SETs (ReadTimeout 100 ms), ms from the SIGSTOP:\n%s", formatWrites(writes, t0))

	firstReply, firstAnswer := "none", time.Time{}
	if len(probes) > 0 {
		firstReply, firstAnswer = probes[0].reply, probes[0].at
	}
	// The client's first success after the promotion, the node that took
	// it, and its first success on the promoted replica.
	clientOK, clientOnReplica, lostClientWrites := "never", "never", 0
	for _, wr := range writes {
		if wr.kind != "ok" || !wr.start.After(promoted) {
			continue
		}
		if clientOK == "never" {
			clientOK = fmt.Sprintf("%s/%s/%s", since(wr.end, promoted), since(wr.end, thawed), wr.servedBy())
		}
		if wr.servedBy() == victim.Addr() {
			lostClientWrites++
		}
		if wr.servedBy() == replica.Addr() {
			clientOnReplica = fmt.Sprintf("%s/%s", since(wr.end, promoted), since(wr.end, thawed))
			break
		}
	}
	var wl []string
	for _, n := range c.Nodes {
		for _, d := range windows[n.Addr()] {
			wl = append(wl, n.Addr()+"="+strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 1, 64))
		}
	}
	t.Logf("summary: fail-T0=%s pfail-T0=%s promoted-fail=%s windows=[%s] cont-replica=%s cont-moved=%s first-reply=%q first-answer=%s probe-oks=%d last-ok=%s client-ok(after promotion/after SIGCONT/by)=%s client-ok-on-replica=%s client-ok-on-old-master=%d",
		since(firstFail, t0), since(tl.FirstPFail(victim.Addr()), t0), since(promoted, firstFail), strings.Join(wl, " "),
		since(demoted, thawed), since(firstMoved, thawed), firstReply, since(firstAnswer, thawed), oks, since(lastOK, thawed), clientOK, clientOnReplica, lostClientWrites)
}

// keyServedBy returns a key that n serves: the first of probe:0, probe:1,
// ... that n takes a SET of rather than answering MOVED.
func keyServedBy(t *testing.T, n *Node) string {
	t.Helper()
	c := n.Client()
	for i := range 1000 {
		key := "probe:" + strconv.Itoa(i)
		err := c.Set(context.Background(), key, "x", 0).Err()
		if err == nil {
			return key
		}
		if !strings.HasPrefix(err.Error(), "MOVED ") {
			t.Fatalf("SET %s on %s: %v", key, n.Addr(), err)
		}
	}
	t.Fatalf("no key of probe:0..999 served by %s", n.Addr())
	return ""
}

// probeReply is one SET the probe sent and what came back: "+OK", an
// error reply ("-MOVED 1234 127.0.0.1:7001", "-CLUSTERDOWN ..."),
// "timeout" (no reply within probeTimeout) or "error: ...".
type probeReply struct {
	sent, at time.Time
	reply    string
}

// probeTimeout bounds one probe SET.
const probeTimeout = 100 * time.Millisecond

// setProbe sends SET key to one node every 1 ms, then every 10 ms (spacing),
// on a connection opened
// before the node froze, so that the first SET after the SIGCONT waits in
// the socket for the node's first pass of its event loop.
type setProbe struct {
	t       *testing.T
	addr    string
	key     string
	conn    net.Conn
	r       *bufio.Reader
	n       int
	replies []probeReply
	quit    chan struct{}
	done    chan struct{}
}

func newSetProbe(t *testing.T, addr, key string) *setProbe {
	p := &setProbe{t: t, addr: addr, key: key, quit: make(chan struct{}), done: make(chan struct{})}
	p.dial()
	if p.conn == nil {
		t.Fatalf("probe: cannot connect to %s", addr)
	}
	t.Cleanup(func() {
		if p.conn != nil {
			p.conn.Close()
		}
	})
	return p
}

func (p *setProbe) dial() {
	c, err := net.DialTimeout("tcp", p.addr, probeTimeout)
	if err != nil {
		p.conn, p.r = nil, nil
		return
	}
	p.conn, p.r = c, bufio.NewReader(c)
}

// start sends the first SET now, before it returns, and more spaced by
// spacing until stop.
func (p *setProbe) start() {
	p.replies = append(p.replies, p.set())
	go func() {
		defer close(p.done)
		for {
			select {
			case <-p.quit:
				return
			case <-time.After(p.spacing()):
			}
			p.replies = append(p.replies, p.set())
		}
	}()
}

// spacing is 1 ms for the first 50 ms after the first SET, to time the
// old master's last OK and first MOVED closely, and 10 ms after.
func (p *setProbe) spacing() time.Duration {
	if time.Since(p.replies[0].sent) < 50*time.Millisecond {
		return time.Millisecond
	}
	return 10 * time.Millisecond
}

func (p *setProbe) stop() []probeReply {
	close(p.quit)
	<-p.done
	return p.replies
}

// set sends one SET, a value of its own each; a connection whose reply
// did not come is closed, as that reply would answer the next SET.
func (p *setProbe) set() probeReply {
	sent := time.Now()
	if p.conn == nil {
		if p.dial(); p.conn == nil {
			return probeReply{sent: sent, at: time.Now(), reply: "error: cannot connect"}
		}
	}
	p.n++
	val := "thawed-" + strconv.Itoa(p.n)
	p.conn.SetDeadline(sent.Add(probeTimeout))
	cmd := fmt.Sprintf("*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", len(p.key), p.key, len(val), val)
	_, err := io.WriteString(p.conn, cmd)
	var line string
	if err == nil {
		line, err = p.r.ReadString('\n')
	}
	at := time.Now()
	if err != nil {
		p.conn.Close()
		p.conn = nil
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return probeReply{sent: sent, at: at, reply: "timeout"}
		}
		return probeReply{sent: sent, at: at, reply: "error: " + err.Error()}
	}
	return probeReply{sent: sent, at: at, reply: strings.TrimRight(line, "\r\n")}
}

// clientWrite is one SET by the go-redis ClusterClient: its start, its
// end, what it returned (ok, timeout, clusterdown, moved, or other: the
// error), and each attempt it made, as "node:what", in order: the last
// attempt of a write that succeeded names the node that took it.
type clientWrite struct {
	start, end time.Time
	kind       string
	attempts   []string
}

// servedBy is the node that took a write that succeeded, or "".
func (wr clientWrite) servedBy() string {
	if wr.kind != "ok" || len(wr.attempts) == 0 {
		return ""
	}
	addr, _, _ := strings.Cut(wr.attempts[len(wr.attempts)-1], ":ok")
	return addr
}

type clientWrites struct {
	quit   chan struct{}
	done   chan struct{}
	writes []clientWrite

	mu       sync.Mutex
	attempts []string // of the write under way
}

// attemptHook records each SET a node's client sends, with the node's
// address: the ClusterClient's retries and redirections, one by one.
type attemptHook struct {
	addr string
	cw   *clientWrites
}

func (h attemptHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h attemptHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (h attemptHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if cmd.Name() == "set" {
			h.cw.mu.Lock()
			h.cw.attempts = append(h.cw.attempts, h.addr+":"+errorKind(err))
			h.cw.mu.Unlock()
		}
		return err
	}
}

// startClientWrites sends SET key through a go-redis ClusterClient with a
// 100 ms read timeout every 20 ms (or as soon as the one before returns,
// if later), until stop.
func startClientWrites(t *testing.T, c *Cluster, key string) *clientWrites {
	var addrs []string
	for _, n := range c.Nodes {
		addrs = append(addrs, n.Addr())
	}
	cw := &clientWrites{quit: make(chan struct{}), done: make(chan struct{})}
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, ReadTimeout: 100 * time.Millisecond,
		NewClient: func(opt *redis.Options) *redis.Client {
			nc := redis.NewClient(opt)
			nc.AddHook(attemptHook{addr: opt.Addr, cw: cw})
			return nc
		}})
	t.Cleanup(func() { cc.Close() })
	go func() {
		defer close(cw.done)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-cw.quit:
				return
			case <-tick.C:
			}
			cw.mu.Lock()
			cw.attempts = nil
			cw.mu.Unlock()
			start := time.Now()
			err := cc.Set(context.Background(), key, start.UnixNano(), 0).Err()
			end := time.Now()
			cw.mu.Lock()
			cw.writes = append(cw.writes, clientWrite{start: start, end: end, kind: errorKind(err), attempts: cw.attempts})
			cw.mu.Unlock()
		}
	}()
	return cw
}

func (cw *clientWrites) stop() []clientWrite {
	close(cw.quit)
	<-cw.done
	return cw.writes
}

// errorKind names what a command returned: ok, timeout, clusterdown,
// moved, or other: and the error.
func errorKind(err error) string {
	var ne net.Error
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case strings.HasPrefix(err.Error(), "CLUSTERDOWN"):
		return "clusterdown"
	case strings.HasPrefix(err.Error(), "MOVED"):
		return "moved"
	}
	return "other: " + err.Error()
}

// formatWrites writes runs of writes of the same kind, one a line:
// the run's span from t0 in ms, the kind, the count and the longest
// latency.
func formatWrites(ws []clientWrite, t0 time.Time) string {
	var b strings.Builder
	for i := 0; i < len(ws); {
		j := i
		var longest time.Duration
		for j < len(ws) && ws[j].kind == ws[i].kind && slices.Equal(ws[j].attempts, ws[i].attempts) {
			longest = max(longest, ws[j].end.Sub(ws[j].start))
			j++
		}
		fmt.Fprintf(&b, "  [%8.1f, %8.1f] ms %-12s x%-4d longest %6.1f ms, attempts %v\n",
			float64(ws[i].start.Sub(t0).Microseconds())/1000, float64(ws[j-1].end.Sub(t0).Microseconds())/1000,
			ws[i].kind, j-i, float64(longest.Microseconds())/1000, ws[i].attempts)
		i = j
	}
	return b.String()
}
