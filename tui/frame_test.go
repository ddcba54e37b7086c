package tui

import (
	"context"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ratelim/ratelim/internal/syncbuf"

	tea "github.com/charmbracelet/bubbletea"
)

// TestAFrameIsDrawnWhileTheNextIsPlayed runs each job on its own
// goroutine, as the program does, and draws the Model it was started from
// meanwhile: the frame on screen must not change under it (and, under
// -race, nothing the job writes may be what the View reads).
func TestAFrameIsDrawnWhileTheNextIsPlayed(t *testing.T) {
	for _, tc := range []struct {
		name  string
		model func(t *testing.T) Model
		keys  []string
	}{
		{"clients at max speed", func(t *testing.T) Model { return newTestModel(t, many(), true) }, nil},
		{"keys at max speed", func(t *testing.T) Model { return newTestModel(t, many(), true) }, []string{"tab"}},
		{"side by side", versus, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := send(t, tc.model(t), size(120, 40))
			for _, k := range tc.keys {
				m = send(t, m, keyMsg(k))
			}
			m.speed = ladder[len(ladder)-1]
			wall := t0
			m = send(t, m, tickMsg(wall))
			for frames := 0; !m.done; frames++ {
				if frames > maxFrames {
					t.Fatal("the run did not end")
				}
				wall = wall.Add(frame)
				next, _ := m.Update(tickMsg(wall))
				m = next.(Model)
				if m.job == nil {
					t.Fatalf("a tick at %s started no job", m.now)
				}
				want := m.View()
				done := make(chan tea.Msg)
				go func(job tea.Cmd) { done <- job() }(m.job)
				for range 3 {
					if got := m.View(); got != want {
						t.Fatalf("at %s the frame on screen changed while the next was played:\n%s\n--- was\n%s", m.now, got, want)
					}
				}
				m = send(t, m, <-done)
			}
		})
	}
}

// TestOneJobAtATime holds a frame's job in flight and presses keys: a tick
// moves nothing, a step waits for the job and is played after it, and a
// restart key waits its turn, then restarts from the run the job left.
func TestOneJobAtATime(t *testing.T) {
	m := newTestModel(t, splitBrain(), true)
	m, wall := play(t, m, t0, 2) // 50 ms
	next, _ := m.Update(tickMsg(wall))
	m = next.(Model)
	job := m.job
	if job == nil || m.clock != 2*frame {
		t.Fatalf("a tick started no job to %s (clock %s)", 2*frame, m.clock)
	}
	next, _ = m.Update(tickMsg(wall.Add(frame)))
	m = next.(Model)
	if m.clock != 2*frame {
		t.Fatalf("a tick while a job was in flight moved the clock to %s", m.clock)
	}
	for _, k := range []string{"right", "a"} {
		next, _ = m.Update(keyMsg(k))
		m = next.(Model)
	}
	if !m.paused || m.clock != time.Second || len(m.queued) != 1 || m.sc.Limit.Algorithm != "token-bucket" {
		t.Fatalf("→ and a while a job was in flight: paused %v, clock %s, %d keys waiting, %s", m.paused, m.clock, len(m.queued), m.sc.Limit.Algorithm)
	}
	// The job lands: the step plays, then a restarts.
	m = send(t, m, job())
	if m.sc.Limit.Algorithm != "gcra" || m.player.Now() != 0 || m.job != nil || len(m.queued) != 0 {
		t.Fatalf("after the job: %s at %s, job %v, %d keys waiting; want gcra from 0", m.sc.Limit.Algorithm, m.player.Now(), m.job != nil, len(m.queued))
	}
	if v := flat(m.View()); !strings.Contains(v, "» algorithm → gcra, from t=0") {
		t.Fatalf("the restart is not in the log:\n%s", m.View())
	}
}

// TestTheGaugesReadOnlyTheKeysShown plays 300 clients on their own keys:
// a frame reads the state of the few keys the STORE section shows, and
// the key of a row selected while paused is read then and shown.
func TestTheGaugesReadOnlyTheKeysShown(t *testing.T) {
	m := at(t, send(t, newTestModel(t, clients10k(300), true), size(100, 30)), 3*time.Second)
	if n, max := len(m.snap.State), 30; n == 0 || n > max {
		t.Fatalf("the frame carries the state of %d keys, want 1 to %d of 300", n, max)
	}
	m = send(t, m, keyMsg("end"))
	if sel := m.rows()[m.selected(m.rows())]; sel.name != "c-300" {
		t.Fatalf("end selected %s, want c-300", sel.name)
	}
	var gauge string
	for _, l := range lines(m.View()) {
		if strings.HasPrefix(l, "▸ k-300 ") {
			gauge = l
		}
	}
	if !strings.Contains(gauge, "shared") || !strings.Contains(gauge, "/20") {
		t.Fatalf("the STORE section does not show the selected row's key k-300:\n%s", m.View())
	}
	if len(m.snap.State) > 30 {
		t.Fatalf("after the selection moved the frame carries %d keys", len(m.snap.State))
	}
}

// TestRunPlaysOnItsOwnUntilQ runs the program, its jobs on their own
// goroutines: the clock moves on frame after frame, and q quits while the
// run plays.
func TestRunPlaysOnItsOwnUntilQ(t *testing.T) {
	in, keys := io.Pipe()
	defer keys.Close()
	out := &syncbuf.Buffer{}
	errc := make(chan error, 1)
	go func() {
		errc <- Run(context.Background(), splitBrain(), Options{In: in, Out: out, NoColor: true, Speed: 10})
	}()
	played := regexp.MustCompile(`t=[1-9][0-9]*\.[0-9]s`)
	deadline := time.Now().Add(20 * time.Second)
	for !played.MatchString(out.String()) {
		if time.Now().After(deadline) {
			t.Fatalf("the clock did not reach a second:\n%s", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := keys.Write([]byte("q")); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

// TestAJobAfterCloseDoesNothing closes the Model while a restart is in
// flight and not yet begun: the job opens no run that nothing would close.
func TestAJobAfterCloseDoesNothing(t *testing.T) {
	m := newTestModel(t, splitBrain(), true)
	next, _ := m.Update(keyMsg("r"))
	m = next.(Model)
	if m.job == nil {
		t.Fatal("r started no job")
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if msg := m.job(); msg != (closedMsg{}) || len(m.players.open) != 0 {
		t.Fatalf("the job after Close returned %T and left %d runs open", msg, len(m.players.open))
	}
	if m = send(t, m, closedMsg{}); m.job != nil {
		t.Fatal("its message left a job in flight")
	}
}
