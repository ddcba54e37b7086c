package redistest

import (
	"reflect"
	"testing"
	"time"
)

// TestWatcherRecordsTransitions feeds one observer's replies, step by
// step, through what a poll does with them (record), without Redis: a
// master A fails, its replica C is promoted and A comes back as C's
// replica. Each step's transitions are recorded with the reply's instant
// and the send instant of the poll before; the windows follow.
func TestWatcherRecordsTransitions(t *testing.T) {
	const (
		a, b, c = "127.0.0.1:7000", "127.0.0.1:7001", "127.0.0.1:7002"
		ok      = "cluster_state:ok\r\ncluster_slots_assigned:16384\r\n"
		down    = "cluster_state:fail\r\ncluster_slots_assigned:16384\r\n"
	)
	line := func(id, addr, flags, master, slots string) string {
		return id + " " + addr + "@17000 " + flags + " " + master + " 0 0 1 connected " + slots + "\n"
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	steps := []struct {
		name  string
		info  string
		nodes string
		want  []Event // without At and After: At is the step's, After the step before's send
	}{
		{"healthy", ok,
			line("ida", a, "master", "-", "0-8191") + line("idb", b, "master", "-", "8192-16383") + line("idc", c, "myself,slave", "ida", ""),
			nil},
		{"A fail?", ok,
			line("ida", a, "master,fail?", "-", "0-8191") + line("idb", b, "master", "-", "8192-16383") + line("idc", c, "myself,slave", "ida", ""),
			[]Event{{Kind: PFail, Subject: a}}},
		{"A fail, state fail", down,
			line("ida", a, "master,fail", "-", "0-8191") + line("idb", b, "master", "-", "8192-16383") + line("idc", c, "myself,slave", "ida", ""),
			[]Event{{Kind: StateFail, Failing: []string{a}}, {Kind: Fail, Subject: a}}},
		{"C promoted, state ok", ok,
			line("ida", a, "master,fail", "-", "") + line("idb", b, "master", "-", "8192-16383") + line("idc", c, "myself,master", "-", "0-8191"),
			[]Event{{Kind: StateOK, Failing: []string{a}}, {Kind: BecameMaster, Subject: c}}},
		{"A back as C's replica", ok,
			line("ida", a, "slave", "idc", "") + line("idb", b, "master", "-", "8192-16383") + line("idc", c, "myself,master", "-", "0-8191"),
			[]Event{{Kind: Cleared, Subject: a}, {Kind: BecameReplica, Subject: a, Of: c}}},
	}
	w := &Watcher{view: View{}, sentAt: map[string]time.Time{}, tl: Timeline{Polls: map[string]int{}, Missed: map[string]int{}}}
	for i, s := range steps {
		before := len(w.tl.Events)
		sent, at := ms(100*i), ms(100*i+3)
		w.record(c, sent, at, s.info, s.nodes)
		got := w.tl.Events[before:]
		var after time.Time
		if i > 0 {
			after = ms(100 * (i - 1))
		}
		var want []Event
		for _, e := range s.want {
			e.At, e.After, e.Observer = at, after, c
			want = append(want, e)
		}
		if len(got) == 0 && len(want) == 0 {
			continue
		}
		if !reflect.DeepEqual([]Event(got), want) {
			t.Errorf("%s: recorded\n%+v\nwant\n%+v", s.name, got, want)
		}
	}
	tl := w.tl
	if got, want := tl.ClusterDownWindows(c), [][2]time.Time{{ms(203), ms(303)}}; !reflect.DeepEqual(got, want) {
		t.Errorf("ClusterDownWindows = %v, want %v", got, want)
	}
	for _, q := range []struct {
		name      string
		got, want time.Time
	}{
		{"FirstPFail(A)", tl.FirstPFail(a), ms(103)},
		{"FirstFail(A)", tl.FirstFail(a), ms(203)},
		{"Promoted(C)", tl.Promoted(c), ms(303)},
		{"Seen(C, replica, A)", tl.Seen(c, BecameReplica, a), ms(403)},
		{"FirstFail(B)", tl.FirstFail(b), time.Time{}},
	} {
		if !q.got.Equal(q.want) {
			t.Errorf("%s = %v, want %v", q.name, q.got, q.want)
		}
	}
	if tl.Polls[c] != len(steps) {
		t.Errorf("Polls[%s] = %d, want %d", c, tl.Polls[c], len(steps))
	}
}

// TestWatcherFirstReplyAgainstHealthy: the first reply is compared with
// a healthy cluster's, so a node already down when the watch starts is
// recorded, with no poll before it (After is the zero time).
func TestWatcherFirstReplyAgainstHealthy(t *testing.T) {
	w := &Watcher{view: View{}, sentAt: map[string]time.Time{}, tl: Timeline{Polls: map[string]int{}, Missed: map[string]int{}}}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w.record("127.0.0.1:7002", at, at, "cluster_state:fail\r\n",
		"ida 127.0.0.1:7000@17000 master,fail - 0 0 1 connected 0-16383\n"+
			"idc 127.0.0.1:7002@17002 myself,slave ida 0 0 1 connected\n")
	want := []Event{
		{At: at, Observer: "127.0.0.1:7002", Kind: StateFail, Failing: []string{"127.0.0.1:7000"}},
		{At: at, Observer: "127.0.0.1:7002", Kind: Fail, Subject: "127.0.0.1:7000"},
	}
	if !reflect.DeepEqual(w.tl.Events, want) {
		t.Errorf("recorded\n%+v\nwant\n%+v", w.tl.Events, want)
	}
	if ws := w.tl.Windows("127.0.0.1:7002"); len(ws) != 1 || !ws[0].End.IsZero() {
		t.Errorf("Windows = %+v, want one still open (End zero)", ws)
	}
}

// TestWatcherRecordsSilences: a gap longer than SilenceMin between two
// answered polls of a node is a silence of that node, from the reply
// before it to the reply after it; shorter gaps, and other nodes, are not.
func TestWatcherRecordsSilences(t *testing.T) {
	w := &Watcher{view: View{}, sentAt: map[string]time.Time{}, tl: Timeline{Polls: map[string]int{}, Missed: map[string]int{}}}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	const a, b = "127.0.0.1:7000", "127.0.0.1:7001"
	nodes := "ida 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-16383\n"
	for _, p := range []struct {
		node string
		at   int
	}{{a, 0}, {b, 0}, {a, 10}, {a, 110}, {a, 211}, {b, 300}, {a, 221}} {
		w.record(p.node, ms(p.at-1), ms(p.at), "cluster_state:ok\r\n", nodes)
	}
	want := map[string][]Silence{a: {{From: ms(110), To: ms(211)}}, b: {{From: ms(0), To: ms(300)}}}
	if !reflect.DeepEqual(w.tl.Silences, want) {
		t.Errorf("Silences = %+v, want %+v (10→110 ms is SilenceMin, not longer)", w.tl.Silences, want)
	}
	for _, c := range []struct {
		from, to int
		want     bool
	}{{0, 100, false}, {100, 120, true}, {205, 215, true}, {212, 400, false}} {
		if got := w.tl.SilentDuring(a, ms(c.from), ms(c.to)); got != c.want {
			t.Errorf("SilentDuring(%s, %d–%d ms) = %v, want %v", a, c.from, c.to, got, c.want)
		}
	}
}
