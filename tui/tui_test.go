package tui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/store"
)

// header is the frame's first two lines: the run and the clock.
func header(m Model) string {
	l := lines(m.View())
	return l[0] + "\n" + l[1]
}

func TestTicksAdvanceTheClockBySpeedTimesWallTime(t *testing.T) {
	m := newTestModel(t, splitBrain(), true)
	m, wall := play(t, m, t0, 21) // the first tick starts the clock; 20 more are 1 s
	if got := m.player.Now(); got != time.Second {
		t.Fatalf("after 1 s of ticks at 1×, t = %s, want 1s", got)
	}
	if !strings.Contains(header(m), "t=1.0s / 30s") {
		t.Fatalf("header lacks the clock t=1.0s / 30s:\n%s", header(m))
	}
	m = send(t, m, keyMsg("-"), keyMsg("-")) // 0.25×
	m, _ = play(t, m, wall, 40)              // 2 s of wall time
	if got := m.player.Now(); got != 1500*time.Millisecond {
		t.Fatalf("after 2 s more at 0.25×, t = %s, want 1.5s", got)
	}
}

func TestALongGapBetweenTicksDoesNotJump(t *testing.T) {
	m := newTestModel(t, splitBrain(), true)
	m = send(t, m, tickMsg(t0), tickMsg(t0.Add(time.Hour)))
	if got := m.player.Now(); got != maxFrameGap {
		t.Fatalf("an hour between two ticks played %s, want at most %s", got, maxFrameGap)
	}
}

func TestSpacePausesAndResumes(t *testing.T) {
	m := newTestModel(t, splitBrain(), true)
	m, wall := play(t, m, t0, 11)
	m = send(t, m, keyMsg(" "))
	paused := m.player.Now()
	m, wall = play(t, m, wall, 40)
	if m.player.Now() != paused {
		t.Fatalf("paused at %s, ticks moved the clock to %s", paused, m.player.Now())
	}
	if !strings.Contains(header(m), "PAUSED") {
		t.Fatalf("header does not say it is paused:\n%s", header(m))
	}
	m = send(t, m, keyMsg(" "))
	m, _ = play(t, m, wall, 2)
	if got, want := m.player.Now(), paused+2*frame; got != want {
		t.Fatalf("resumed at %s, two ticks later t = %s, want %s (no catching up on the pause)", paused, got, want)
	}
	if strings.Contains(header(m), "PAUSED") {
		t.Fatalf("header still says paused:\n%s", header(m))
	}
}

func TestRightStepsExactlyOneStep(t *testing.T) {
	m := newTestModel(t, splitBrain(), true)
	m = send(t, m, keyMsg(" "), keyMsg("right"))
	if got := m.player.Now(); got != time.Second {
		t.Fatalf("→ from 0 reached %s, want 1s (one step)", got)
	}
	m = send(t, m, keyMsg("l"))
	if got := m.player.Now(); got != 2*time.Second {
		t.Fatalf("l from 1s reached %s, want 2s", got)
	}
	// Playing, → pauses, and ends the step in progress.
	m = send(t, m, keyMsg(" "))
	m, wall := play(t, m, t0, 7) // 0.3 s
	m = send(t, m, keyMsg("right"))
	if got := m.player.Now(); got != 3*time.Second || !m.paused {
		t.Fatalf("→ at 2.3s while playing: t = %s, paused %v; want 3s and paused", got, m.paused)
	}
	m, _ = play(t, m, wall, 5)
	if got := m.player.Now(); got != 3*time.Second {
		t.Fatalf("ticks after → moved the clock to %s", got)
	}
}

func TestPlusAndMinusWalkTheSpeedLadder(t *testing.T) {
	m := newTestModel(t, splitBrain(), true)
	steps := []struct {
		key, want string
	}{
		{"+", "2×"}, {"+", "5×"}, {"-", "2×"}, {"-", "1×"}, {"-", "0.5×"}, {"-", "0.25×"}, {"-", "0.1×"}, {"-", "0.1×"},
		{"+", "0.25×"}, {"+", "0.5×"}, {"+", "1×"}, {"+", "2×"}, {"+", "5×"}, {"+", "10×"}, {"+", "50×"}, {"+", "max"}, {"+", "max"},
	}
	for i, s := range steps {
		m = send(t, m, keyMsg(s.key))
		if got := speedLabel(m.speed); got != s.want {
			t.Fatalf("step %d, %q: speed %s, want %s", i, s.key, got, s.want)
		}
		if !strings.Contains(header(m), "  "+s.want+"  ") {
			t.Fatalf("step %d: header lacks the speed %s:\n%s", i, s.want, header(m))
		}
	}
}

func TestKeysReadTogetherAreEachPressed(t *testing.T) {
	m := newTestModel(t, splitBrain(), true)
	m = send(t, m, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("+++")})
	if got := speedLabel(m.speed); got != "10×" {
		t.Fatalf("+++ in one message: speed %s, want 10×", got)
	}
	_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("-q")})
	if cmd == nil || cmd() != tea.Quit() {
		t.Fatal("-q in one message does not quit")
	}
}

func TestMaxSpeedPlaysWholeSteps(t *testing.T) {
	m := newTestModel(t, splitBrain(), true)
	m.speed = ladder[len(ladder)-1]
	m = send(t, m, tickMsg(t0))
	wall := t0
	for n := 1; !m.player.Done(); n++ {
		before := m.player.Now()
		wall = wall.Add(frame)
		m = send(t, m, tickMsg(wall))
		now := m.player.Now()
		if now-before < m.sc.Step || now%m.sc.Step != 0 {
			t.Fatalf("tick %d at max went from %s to %s, want at least a step (%s), ending on a step", n, before, now, m.sc.Step)
		}
		if n > maxFrames {
			t.Fatalf("max speed took more than %d ticks", maxFrames)
		}
	}
	if !strings.Contains(m.View(), "done — r restart, q quit") {
		t.Fatalf("the last frame does not say it is done:\n%s", m.View())
	}
	// Done, it stays on the final frame.
	final := m.View()
	m, _ = play(t, m, wall.Add(frame), 10)
	if m.View() != final {
		t.Fatal("ticks after the end changed the frame")
	}
}

func TestRestartStartsOverAtZero(t *testing.T) {
	m := newTestModel(t, splitBrain(), true)
	m = send(t, m, keyMsg(" "))
	for range 5 {
		m = send(t, m, keyMsg("right"))
	}
	m = send(t, m, keyMsg("r"))
	if got := m.player.Now(); got != 0 {
		t.Fatalf("after r, t = %s, want 0", got)
	}
	if !strings.Contains(header(m), "t=0.0s / 30s") {
		t.Fatalf("header after r:\n%s", header(m))
	}
	if !strings.Contains(m.View(), "» restart: token-bucket, split-brain on memory") {
		t.Fatalf("the log does not say it restarted:\n%s", m.View())
	}
	if m.snap.Clients[0].Total.Sent != 0 {
		t.Fatalf("after r the first client has sent %d", m.snap.Clients[0].Total.Sent)
	}
}

func TestACyclesTheAlgorithmAndTTheTopology(t *testing.T) {
	m := newTestModel(t, splitBrain(), true)
	for _, want := range []string{"gcra", "leaky-bucket", "fixed-window", "sliding-log", "sliding-window", "token-bucket"} {
		m = send(t, m, keyMsg("right"), keyMsg("a"))
		if !strings.Contains(header(m), " · "+want+" · ") || m.player.Now() != 0 {
			t.Fatalf("after a, want %s playing from 0:\n%s", want, header(m))
		}
		// The first window algorithm gets the 1 s window the scenario
		// lacks, and says so.
		if want == "fixed-window" && (m.sc.Limit.Params.Window != time.Second || !strings.Contains(flat(m.View()), "» algorithm → fixed-window (window 1s: the scenario sets none), from t=0")) {
			t.Fatalf("fixed-window without a window: params %+v\n%s", m.sc.Limit.Params, m.View())
		}
	}
	for _, want := range []string{"cluster", "synced", "two-tier", "owner", "local", "shared", "racy", "split-brain"} {
		m = send(t, m, keyMsg("t"))
		if !strings.Contains(header(m), " · "+want+" on memory") {
			t.Fatalf("after t, want %s:\n%s", want, header(m))
		}
	}
}

func TestABucketWithoutABurstGetsOneSecondOfTheRate(t *testing.T) {
	sc := splitBrain()
	sc.Limit.Algorithm, sc.Limit.Params.Burst, sc.Limit.Params.Window = "sliding-window", 0, time.Second
	m := newTestModel(t, sc, true)
	m = send(t, m, keyMsg("a")) // sliding-window → token-bucket
	if m.sc.Limit.Algorithm != "token-bucket" || m.sc.Limit.Params.Burst != 10 {
		t.Fatalf("token-bucket after a window algorithm: %s %+v, want burst 10", m.sc.Limit.Algorithm, m.sc.Limit.Params)
	}
}

func TestACombinationThatCannotBePlayedIsLoggedNotFatal(t *testing.T) {
	// 30 a minute admits less than one request in a 1 s window: every
	// window algorithm is refused, and a moves on past each.
	sc := splitBrain()
	sc.Limit.Params.Rate.Per = time.Minute
	sc.Limit.Params.Rate.N = 30
	m := newTestModel(t, sc, true)
	m = send(t, m, keyMsg("a"), keyMsg("a")) // gcra, leaky-bucket
	m = send(t, m, keyMsg("right"), keyMsg("a"))
	if m.sc.Limit.Algorithm != "leaky-bucket" || m.player.Now() != time.Second {
		t.Fatalf("a refused fixed-window: playing %s at %s, want leaky-bucket going on at 1s", m.sc.Limit.Algorithm, m.player.Now())
	}
	view := flat(m.View())
	if !strings.Contains(view, "» algorithm → fixed-window") || !strings.Contains(view, "cannot play it: limit.window: 1s at 30/m admits less than one") {
		t.Fatalf("the refusal is not in the log:\n%s", view)
	}
	m = send(t, m, keyMsg("a"), keyMsg("a"), keyMsg("a")) // sliding-log, sliding-window refused; token-bucket
	if m.sc.Limit.Algorithm != "token-bucket" {
		t.Fatalf("after three more a: %s, want token-bucket", m.sc.Limit.Algorithm)
	}
}

func TestQuestionMarkTogglesHelp(t *testing.T) {
	m := newTestModel(t, splitBrain(), true)
	if strings.Contains(m.View(), "reading the screen") {
		t.Fatal("help shown before ?")
	}
	m = send(t, m, keyMsg("?"))
	if !strings.Contains(m.View(), "reading the screen") {
		t.Fatalf("? shows no help:\n%s", m.View())
	}
	m = send(t, m, keyMsg("?"))
	if strings.Contains(m.View(), "reading the screen") {
		t.Fatal("a second ? does not close the help")
	}
	m = send(t, m, keyMsg("?"), keyMsg("esc"))
	if strings.Contains(m.View(), "reading the screen") {
		t.Fatal("esc does not close the help")
	}
}

func TestQAndCtrlCQuit(t *testing.T) {
	m := newTestModel(t, splitBrain(), true)
	for _, k := range []string{"q", "ctrl+c"} {
		_, cmd := m.Update(keyMsg(k))
		if cmd == nil {
			t.Fatalf("%s returned no command", k)
		}
		if _, ok := cmd().(tea.QuitMsg); !ok {
			t.Fatalf("%s did not return tea.Quit", k)
		}
	}
	if _, cmd := m.Update(keyMsg("x")); cmd != nil {
		t.Fatal("an unbound key returned a command")
	}
}

func TestBannersShowOnlyWhileTheirFaultIsInForce(t *testing.T) {
	m := newTestModel(t, splitBrain(), true)
	m = send(t, m, keyMsg("+")) // 2×: a frame is 100 ms
	m, wall := play(t, m, t0, 1)
	sawPartition, sawOutage := false, false
	for !m.player.Done() {
		m, wall = play(t, m, wall, 1)
		now := m.player.Now()
		banner := lines(m.View())[2]
		inPartition := now >= 10*time.Second && now < 20*time.Second
		inOutage := now >= 24*time.Second && now < 27*time.Second
		if got := strings.Contains(banner, "PARTITION: servers 0,1 → primary, 2,3 → replica"); got != inPartition {
			t.Fatalf("t=%s: partition banner %v, want %v: %q", now, got, inPartition, banner)
		}
		if got := strings.Contains(banner, "STORE DOWN — failing open"); got != inOutage {
			t.Fatalf("t=%s: outage banner %v, want %v: %q", now, got, inOutage, banner)
		}
		active := false
		for _, a := range m.snap.Active {
			active = active || a.Kind == "partition"
		}
		if active != inPartition {
			t.Fatalf("t=%s: the snapshot's partition is %v, the test's %v", now, active, inPartition)
		}
		sawPartition = sawPartition || inPartition
		sawOutage = sawOutage || inOutage
	}
	if !sawPartition || !sawOutage {
		t.Fatalf("frames during the partition %v, the outage %v", sawPartition, sawOutage)
	}
}

func TestFaultBanners(t *testing.T) {
	partition := sim.Fault{Kind: sim.Partition, Start: 10 * time.Second, End: 20 * time.Second, Groups: [][]int{{0, 1}, {2, 3}}}
	at := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	tests := []struct {
		name   string
		change func(*sim.Scenario)
		fault  sim.Fault
		now    time.Duration
		want   string
	}{
		{"split-brain", nil, partition, at(12),
			"PARTITION: servers 0,1 → primary, 2,3 → replica · until 20s"},
		{"split-brain before failover", func(sc *sim.Scenario) { sc.Topology.FailoverAfter = 5 * time.Second }, partition, at(12),
			"PARTITION: servers 0,1 → primary, 2,3 → cut off, failing open until failover at 15s · until 20s"},
		{"split-brain, primary stopped", func(sc *sim.Scenario) { sc.Topology.PrimaryStopsAfter = 5 * time.Second }, partition, at(16),
			"PARTITION: servers 0,1 → primary (stopped taking writes, failing open), 2,3 → replica · until 20s"},
		{"shared, fail-closed", func(sc *sim.Scenario) { sc.Topology.Kind, sc.Topology.OnError = sim.Shared, store.FailClosed }, partition, at(12),
			"PARTITION: servers 0,1 → store, 2,3 → cut off, failing closed · until 20s"},
		{"shared, the primary stops at once", func(sc *sim.Scenario) { sc.Topology.Kind, sc.Topology.PrimaryStopsAfter = sim.Shared, 0 }, partition, at(10),
			"PARTITION: servers 0,1 → store (stopped taking writes, failing open), 2,3 → cut off, failing open · until 20s"},
		{"one server cut off", nil, sim.Fault{Kind: sim.Partition, Start: 1, End: 2 * time.Second, Groups: [][]int{{0, 1, 2}, {3}}}, at(1),
			"PARTITION: servers 0,1,2 → primary, 3 → replica · until 2s"},
		{"split-brain in three: the third group reaches neither copy", nil, sim.Fault{Kind: sim.Partition, Start: 1, End: 2 * time.Second, Groups: [][]int{{0}, {1, 2}, {3}}}, at(1),
			"PARTITION: server 0 → primary, 1,2 → replica, 3 → cut off, failing open · until 2s"},
		{"cluster", func(sc *sim.Scenario) { *sc = sim.WithTopology(*sc, sim.Cluster) },
			sim.Fault{Kind: sim.Partition, Start: 1, End: 2 * time.Second, Groups: [][]int{{0, 1}, {2, 3}}, Nodes: [][]string{{"s0-master"}, {"s1-master", "s2-master"}}}, at(1),
			"PARTITION: servers 0,1 + s0-master | 2,3 + s1-master, s2-master · until 2s"},
		{"local", func(sc *sim.Scenario) { sc.Topology.Kind = sim.Local }, partition, at(12),
			"PARTITION: no effect, each server has its own jar · until 20s"},
		{"outage, fail-open", nil, sim.Fault{Kind: sim.Outage, Start: 0, End: 3 * time.Second}, at(1),
			"STORE DOWN — failing open · until 3s"},
		{"outage, fail-closed", func(sc *sim.Scenario) { sc.Topology.OnError = store.FailClosed }, sim.Fault{Kind: sim.Outage, End: 3 * time.Second}, at(1),
			"STORE DOWN — failing closed · until 3s"},
		{"latency", nil, sim.Fault{Kind: sim.Latency, End: 3 * time.Second, RTT: 50 * time.Millisecond}, at(1),
			"LATENCY: rtt 50ms (normally 500µs) · until 3s"},
		{"clock skew", nil, sim.Fault{Kind: sim.ClockSkew, End: 3 * time.Second, Servers: []int{1}, Offset: 2 * time.Second}, at(1),
			"CLOCK SKEW: server 1 +2s · until 3s"},
		{"clock skew, drift, store clock", func(sc *sim.Scenario) { sc.Topology.Clock = sim.StoreClock },
			sim.Fault{Kind: sim.ClockSkew, End: 3 * time.Second, Drift: -0.5}, at(1),
			"CLOCK SKEW: all servers drifting -0.5s/s (no effect: the store's clock decides) · until 3s"},
		{"crash", nil, sim.Fault{Kind: sim.Crash, Start: time.Second, End: 3 * time.Second, Servers: []int{1}}, at(1),
			"CRASH · until 3s"},
	}
	for _, tt := range tests {
		sc := splitBrain()
		if tt.change != nil {
			tt.change(&sc)
		}
		if got := tt.fault.Banner(sc, tt.now); got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}

// many is the partition demo with 40 more clients, on per-server jars.
func many() sim.Scenario {
	sc := splitBrain()
	sc.Topology.Kind = sim.Local
	sc.Servers = 6
	// A partition names every server once (sim.Fault.Check); on local
	// jars it changes nothing.
	sc.Faults[0].Groups = [][]int{{0, 1, 4}, {2, 3, 5}}
	for i := range 40 {
		sc.Clients = append(sc.Clients, sim.Client{Name: fmt.Sprintf("office-nat-client-%d", i), IP: fmt.Sprintf("10.0.0.%d", i%9),
			Traffic: []sim.Traffic{{Pattern: sim.Poisson, Rate: perSecond(int64(1 + i%15))}}})
	}
	return sc
}

// selectedLine is the frame's row marked as selected, and its index.
func selectedLine(view string) (string, int) {
	for i, l := range lines(view) {
		if strings.HasPrefix(l, "▸ ") && i < len(lines(view)) {
			return l, i
		}
	}
	return "", -1
}

func TestTheSelectionMovesAndTheRowsFollowIt(t *testing.T) {
	m := newTestModel(t, many(), true)
	m = send(t, m, size(80, 24))
	rows := m.plan().clientRows
	top := m.plan().header + 2 // the first row's line, under the title and the heads
	if m.plan().ruler {
		top++
	}
	if !strings.Contains(m.View(), fmt.Sprintf("1–%d of 43 ↑↓", rows)) {
		t.Fatalf("the clients' title does not say which are shown:\n%s", m.View())
	}
	// Before anything is rejected the rows are in the scenario's order,
	// the first selected.
	if l, _ := selectedLine(m.View()); !strings.HasPrefix(l, "▸ bastion-1 ") {
		t.Fatalf("selected at the start: %q, want bastion-1", l)
	}
	m = send(t, m, keyMsg("down"))
	if l, _ := selectedLine(m.View()); !strings.HasPrefix(l, "▸ bastion-2 ") {
		t.Fatalf("after ↓ the selected row is %q, want bastion-2", l)
	}
	if !strings.Contains(m.View(), "following ▸ bastion-2") {
		t.Fatalf("the STORE section does not follow the selection:\n%s", m.View())
	}
	m = send(t, m, keyMsg("j"), keyMsg("k"), keyMsg("up"))
	if l, _ := selectedLine(m.View()); !strings.HasPrefix(l, "▸ bastion-1 ") {
		t.Fatalf("after j k ↑ the selected row is %q, want bastion-1", l)
	}
	for range 3 {
		m = send(t, m, keyMsg("pgdown"))
		l, i := selectedLine(m.View())
		if i < top || i >= top+rows || l == "" {
			t.Fatalf("after pgdown the selected row is off screen (line %d):\n%s", i, m.View())
		}
	}
	m = send(t, m, keyMsg("end"))
	if l, _ := selectedLine(m.View()); !strings.HasPrefix(l, "▸ office…ent-39") {
		t.Fatalf("after end the selected row is %q, want the last client, its name cut in the middle", l)
	}
	if want := 43 - rows; !strings.Contains(m.View(), fmt.Sprintf("%d–43 of 43", want+1)) {
		t.Fatalf("after end the title does not show the last rows:\n%s", m.View())
	}
	m = send(t, m, keyMsg("pgup"), keyMsg("home"))
	if l, i := selectedLine(m.View()); !strings.HasPrefix(l, "▸ bastion-1 ") || i != top {
		t.Fatalf("after home the selected row is %q on line %d", l, i)
	}
	// A taller terminal shows every client.
	m = send(t, m, keyMsg("end"), size(160, 90))
	if m.firstRow(m.rows(), m.plan().clientRows) != 0 || m.plan().clientRows != 43 {
		t.Fatalf("at 160×90: first %d, %d rows", m.firstRow(m.rows(), m.plan().clientRows), m.plan().clientRows)
	}
}

func TestRejectedRowsComeFirstInTheOrderOfTheirFirstRejection(t *testing.T) {
	m := at(t, send(t, newTestModel(t, many(), true), size(80, 24)), 8*time.Second)
	rows := m.rows()
	seenClean := false
	last := -1
	for _, r := range rows {
		first := -1
		for st := range r.steps.len() {
			if r.steps.at(st).Rejected > 0 {
				first = st
				break
			}
		}
		switch {
		case first < 0:
			seenClean = true
		case seenClean:
			t.Fatalf("%s, rejected at step %d, comes after a row never rejected", r.name, first)
		case first < last:
			t.Fatalf("%s, first rejected at step %d, comes after one first rejected at %d", r.name, first, last)
		default:
			last = first
		}
	}
	if !seenClean || last < 0 {
		t.Fatalf("the test wants rows rejected and rows not (last %d, clean %v)", last, seenClean)
	}
}

func TestTabShowsARowPerKeyAndKeepsTheSelection(t *testing.T) {
	m := at(t, send(t, newTestModel(t, many(), true), size(100, 40)), 5*time.Second)
	m = send(t, m, keyMsg("end"))
	client := m.rows()[m.selected(m.rows())]
	m = send(t, m, keyMsg("tab"))
	if !m.byKey || !strings.Contains(m.View(), "KEYS ") {
		t.Fatalf("tab does not show the keys:\n%s", m.View())
	}
	keys := m.rows()
	if len(keys) != m.keyCount() {
		t.Fatalf("%d key rows, %d keys", len(keys), m.keyCount())
	}
	sel := keys[m.selected(keys)]
	if sel.key != client.key {
		t.Fatalf("selected key %q, want %s's key %q", sel.key, client.name, client.key)
	}
	// A key's row adds up its clients.
	var sent int64
	for _, c := range m.snap.Clients {
		if c.Key == sel.key {
			sent += c.Total.Sent
		}
	}
	if sel.total.Sent != sent || sel.clients < 2 {
		t.Fatalf("key %s: sent %d from %d clients, its clients sent %d", sel.key, sel.total.Sent, sel.clients, sent)
	}
	m = send(t, m, keyMsg("tab"))
	if back := m.rows()[m.selected(m.rows())]; m.byKey || back.key != client.key {
		t.Fatalf("tab back selects %s (key %s), want a client of key %s", back.name, back.key, client.key)
	}
}

// checkFits fails if view has a line wider than w or more lines than h.
func checkFits(t *testing.T, what string, view string, w, h int) {
	t.Helper()
	ls := lines(view)
	if len(ls) > h {
		t.Fatalf("%s: %d lines at %d×%d:\n%s", what, len(ls), w, h, view)
	}
	for i, l := range ls {
		if got := lipgloss.Width(l); got > w {
			t.Fatalf("%s: line %d is %d cells wide at %d×%d:\n%s", what, i, got, w, h, l)
		}
	}
}

func TestTheFrameNeverOverflowsTheWindow(t *testing.T) {
	sizes := [][2]int{{80, 24}, {120, 40}, {100, 30}, {60, 16}, {40, 10}, {20, 5}, {200, 60}}
	overlap := splitBrain()
	overlap.Name = "everything-at-once"
	overlap.Faults = append(overlap.Faults,
		sim.Fault{Kind: sim.Latency, Start: 5 * time.Second, End: 25 * time.Second, RTT: 50 * time.Millisecond},
		sim.Fault{Kind: sim.ClockSkew, Start: 12 * time.Second, End: 26 * time.Second, Servers: []int{1}, Offset: 2 * time.Second})
	for _, sc := range []sim.Scenario{splitBrain(), many(), overlap} {
		for _, noColor := range []bool{true, false} {
			m := newTestModel(t, sc, noColor)
			m.speed = 20 // a second a frame
			m, wall := play(t, m, t0, 1)
			for !m.player.Done() {
				m, wall = play(t, m, wall, 1)
				for _, s := range sizes {
					m = send(t, m, size(s[0], s[1]))
					what := fmt.Sprintf("%s at %s, colour %v", sc.Name, m.player.Now(), !noColor)
					checkFits(t, what, m.View(), s[0], s[1])
					if s[0] >= 80 && len(lines(m.View())) != s[1] {
						t.Fatalf("%s: %d lines at %d×%d, want the footer on the last line", what, len(lines(m.View())), s[0], s[1])
					}
					checkFits(t, what+", help", send(t, m, keyMsg("?")).View(), s[0], s[1])
				}
			}
		}
	}
}

func TestOverlappingFaultsEachGetABanner(t *testing.T) {
	sc := splitBrain()
	sc.Faults = append(sc.Faults,
		sim.Fault{Kind: sim.Latency, Start: 5 * time.Second, End: 25 * time.Second, RTT: 50 * time.Millisecond},
		sim.Fault{Kind: sim.ClockSkew, Start: 12 * time.Second, End: 26 * time.Second, Servers: []int{1}, Offset: 2 * time.Second})
	m := at(t, send(t, newTestModel(t, sc, true), size(120, 30)), 15*time.Second)
	l := lines(m.View())
	if !strings.HasPrefix(strings.TrimSpace(l[2]), "PARTITION") || !strings.Contains(l[3], "LATENCY: rtt 50ms") || !strings.Contains(l[3], " · CLOCK SKEW: server 1 +2s") {
		t.Fatalf("three faults in force, two banner lines:\n%s", m.View())
	}
	if !strings.HasPrefix(l[4], "CLIENTS") {
		t.Fatalf("the clients do not follow the banners:\n%s", m.View())
	}
}

func TestNoColorWritesNoEscapesAndColourDoes(t *testing.T) {
	plain := newTestModel(t, splitBrain(), true)
	plain, _ = play(t, plain, t0, 60)
	if strings.Contains(plain.View(), "\x1b") {
		t.Fatalf("NoColor view has an escape sequence:\n%q", plain.View())
	}
	colour := newTestModel(t, splitBrain(), false)
	colour, _ = play(t, colour, t0, 60)
	if !strings.Contains(colour.View(), "\x1b[") {
		t.Fatal("the colour view has no colour")
	}
}

func TestNewModelRefusesABadScenario(t *testing.T) {
	sc := splitBrain()
	sc.Servers = 0
	_, err := NewModel(sc, Options{})
	var setup *sim.SetupError
	if !errors.As(err, &setup) {
		t.Fatalf("NewModel with 0 servers: %v, want a *sim.SetupError", err)
	}
}

func TestRunQuitsOnQ(t *testing.T) {
	var out bytes.Buffer
	err := Run(context.Background(), splitBrain(), Options{In: strings.NewReader("q"), Out: &out, NoColor: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "partition-demo") {
		t.Fatalf("Run drew nothing recognisable:\n%q", out.String())
	}
}

func TestRunStopsWhenTheContextIsDone(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	r, w := io.Pipe() // a terminal nobody types on
	defer w.Close()
	err := Run(ctx, splitBrain(), Options{In: r, Out: &bytes.Buffer{}, NoColor: true})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Run after the context's deadline returned %v", err)
	}
}

// versus is the store-outage demo failing open (A) beside the same run
// failing closed (B).
func versus(t *testing.T) Model {
	t.Helper()
	a := splitBrain()
	a.Topology.Kind = sim.Shared
	b := a
	b.Topology.OnError = store.FailClosed
	m, err := NewModel(a, Options{NoColor: true, Versus: &b, Labels: [2]string{"on_error=fail-open", "on_error=fail-closed"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Error(err)
		}
	})
	return m
}

func TestVersusPlaysBothRunsByOneClock(t *testing.T) {
	m := at(t, send(t, versus(t), size(100, 30)), 25*time.Second)
	if m.player.Now() != 25*time.Second || m.vs.player.Now() != 25*time.Second {
		t.Fatalf("A at %s, B at %s, want both at 25s", m.player.Now(), m.vs.player.Now())
	}
	view := m.View()
	if !strings.Contains(lines(view)[0], "A on_error=fail-open vs B on_error=fail-closed") {
		t.Fatalf("the header does not name the two runs:\n%s", view)
	}
	if !strings.Contains(lines(view)[2], "A STORE DOWN — failing open · until 27s  ·  B STORE DOWN — failing closed") {
		t.Fatalf("the banner does not say what the outage does to each run:\n%s", view)
	}
	// Each client's A line, then its B line: bastion-1 fails open in A
	// (o) and closed in B (x) during the outage.
	var a, b string
	for i, l := range lines(view) {
		if a == "" && strings.HasPrefix(l, "▸ A bastion-1 ") && i+1 < len(lines(view)) {
			a, b = l, lines(view)[i+1]
		}
	}
	if !strings.ContainsRune(a, glyphFailedOpen) || strings.ContainsRune(a, glyphFailedClosed) {
		t.Fatalf("bastion-1's A line should fail open and not closed: %q", a)
	}
	if !strings.HasPrefix(b, "  B ") || !strings.ContainsRune(b, glyphFailedClosed) || strings.ContainsRune(b, glyphFailedOpen) {
		t.Fatalf("bastion-1's B line should follow it and fail closed: %q", b)
	}
	// Done, the verdict has both runs' headlines.
	m = at(t, m, 30*time.Second)
	m = send(t, m, size(160, 48))
	v := flat(m.View())
	if !strings.Contains(v, "A on_error=fail-open") || !strings.Contains(v, "B on_error=fail-closed") ||
		!strings.Contains(v, flat(sim.Headline(m.vs.player.Result()))) || !strings.Contains(v, flat(sim.Headline(m.player.Result()))) {
		t.Fatalf("the verdict lacks a run's headline:\n%s", m.View())
	}
	// r restarts both.
	m = send(t, m, keyMsg("r"))
	if m.player.Now() != 0 || m.vs.player.Now() != 0 {
		t.Fatalf("after r: A at %s, B at %s", m.player.Now(), m.vs.player.Now())
	}
	// a and t would change one run of two: refused, in the log.
	m = send(t, m, keyMsg("a"))
	if m.sc.Limit.Algorithm != "token-bucket" || !strings.Contains(flat(m.View()), "with --vs, quit and choose both") {
		t.Fatalf("a with --vs: %s\n%s", m.sc.Limit.Algorithm, m.View())
	}
}

func TestVersusFramesFit(t *testing.T) {
	m := send(t, versus(t), size(80, 24))
	m.speed = 20
	m, wall := play(t, m, t0, 1)
	for !m.player.Done() {
		m, wall = play(t, m, wall, 1)
		for _, s := range [][2]int{{80, 24}, {160, 48}, {60, 16}} {
			m = send(t, m, size(s[0], s[1]))
			checkFits(t, fmt.Sprintf("versus at %s", m.player.Now()), m.View(), s[0], s[1])
		}
	}
}

// The verdict is a job of its own after the last frame, not part of it:
// the last frame is drawn with the run's end while the whole Result is
// assembled (150 ms at 10,000 clients). A verdict found for a run that a
// restart has replaced since is not shown.
func TestVerdictFollowsTheLastFrame(t *testing.T) {
	m := send(t, newTestModel(t, splitBrain(), true), size(100, 30))
	// Played tick by tick, each tick's jobs run until the run is done.
	var next tea.Model
	wall := t0
	for range 10_000 {
		if m.done {
			break
		}
		next, _ = m.Update(tickMsg(wall))
		m = next.(Model)
		wall = wall.Add(frame)
		for m.job != nil && !m.done {
			next, _ = m.Update(m.job())
			m = next.(Model)
		}
	}
	if !m.done || m.verdict != nil {
		t.Fatalf("after the last frame: done %v, verdict %v; want done, and the verdict its own job", m.done, m.verdict)
	}
	job := m.job
	if job == nil {
		t.Fatal("the run ended with no verdict job")
	}
	stale := m
	next, _ = m.Update(job())
	m = next.(Model)
	if m.verdict == nil || m.verdict.headline != sim.Headline(m.player.Result()) {
		t.Fatalf("the verdict job gave %+v", m.verdict)
	}
	// A restart before the verdict came: not the new run's.
	stale = send(t, stale, keyMsg("r"))
	stale.job = nil
	next, _ = stale.Update(job())
	if v := next.(Model).verdict; v != nil {
		t.Fatalf("a verdict of the run replaced by r is shown: %+v", v)
	}
}
