package tui

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/store"
)

func perSecond(n int64) algorithms.Rate { return algorithms.Rate{N: n, Per: time.Second} }

// splitBrain is the partition demo: two bastions hammering their own keys
// and a polite scheduler, on four servers and a primary with a replica;
// servers 2 and 3 are cut off from 10 s to 20 s, and the store is down
// from 24 s to 27 s.
func splitBrain() sim.Scenario {
	return sim.Scenario{
		Name: "partition-demo", Duration: 30 * time.Second, Step: time.Second, Seed: 1,
		Servers: 4, Balancer: sim.RoundRobin,
		Limit: sim.Limit{Algorithm: "token-bucket", Params: algorithms.Params{Rate: perSecond(10), Burst: 20}, Key: sim.KeyAuto},
		Topology: sim.Topology{Kind: sim.SplitBrain, RTT: 500 * time.Microsecond, OnError: store.FailOpen,
			Clock: sim.ServerClock, PrimaryStopsAfter: sim.PrimaryNeverStops},
		Clients: []sim.Client{
			{Name: "bastion-1", APIKey: "bastion-1", Traffic: []sim.Traffic{{Pattern: sim.Constant, Rate: perSecond(100)}}},
			{Name: "bastion-2", APIKey: "bastion-2", Traffic: []sim.Traffic{{Pattern: sim.Constant, Rate: perSecond(100), Start: 3 * time.Second}}},
			{Name: "scheduler", APIKey: "scheduler", Traffic: []sim.Traffic{{Pattern: sim.Poisson, Rate: perSecond(5)}}, Retry: sim.Retry{Policy: sim.RetryAfter}},
		},
		Faults: []sim.Fault{
			{Kind: sim.Partition, Start: 10 * time.Second, End: 20 * time.Second, Groups: [][]int{{0, 1}, {2, 3}}},
			{Kind: sim.Outage, Start: 24 * time.Second, End: 27 * time.Second},
		},
	}
}

func newTestModel(t *testing.T, sc sim.Scenario, noColor bool) Model {
	t.Helper()
	m, err := NewModel(sc, Options{NoColor: noColor})
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

// t0 is the wall time of the first tick in every test.
var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// send updates m with msgs in turn, each with the jobs it starts run to
// the end, here, as the program would run them on their own goroutines.
func send(t *testing.T, m Model, msgs ...tea.Msg) Model {
	t.Helper()
	for _, msg := range msgs {
		next, _ := m.Update(msg)
		m = next.(Model)
		for m.job != nil {
			next, _ = m.Update(m.job())
			m = next.(Model)
		}
	}
	return m
}

// play sends ticks 50 ms apart of wall time, starting at wall, and returns
// the model and the time of the next tick.
func play(t *testing.T, m Model, wall time.Time, ticks int) (Model, time.Time) {
	t.Helper()
	for range ticks {
		m = send(t, m, tickMsg(wall))
		wall = wall.Add(frame)
	}
	return m, wall
}

func keyMsg(s string) tea.KeyMsg {
	switch s {
	case " ":
		return tea.KeyMsg{Type: tea.KeySpace, Runes: []rune(" ")}
	case "right":
		return tea.KeyMsg{Type: tea.KeyRight}
	case "up":
		return tea.KeyMsg{Type: tea.KeyUp}
	case "down":
		return tea.KeyMsg{Type: tea.KeyDown}
	case "pgdown":
		return tea.KeyMsg{Type: tea.KeyPgDown}
	case "pgup":
		return tea.KeyMsg{Type: tea.KeyPgUp}
	case "home":
		return tea.KeyMsg{Type: tea.KeyHome}
	case "end":
		return tea.KeyMsg{Type: tea.KeyEnd}
	case "esc":
		return tea.KeyMsg{Type: tea.KeyEsc}
	case "tab":
		return tea.KeyMsg{Type: tea.KeyTab}
	case "ctrl+c":
		return tea.KeyMsg{Type: tea.KeyCtrlC}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)}
}

func size(w, h int) tea.WindowSizeMsg { return tea.WindowSizeMsg{Width: w, Height: h} }

func lines(view string) []string { return strings.Split(view, "\n") }

// flat is view with every run of blanks and line breaks one space: what a
// wrapped log line says.
func flat(view string) string { return strings.Join(strings.Fields(view), " ") }
