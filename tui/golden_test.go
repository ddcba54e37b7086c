package tui

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/store"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// checkGolden compares view with testdata/name.golden, or rewrites it with
// -update. Frames are drawn without colour, so the files read as the screen.
func checkGolden(t *testing.T, name, view string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	got := strings.Join(trimRight(lines(view)), "\n") + "\n"
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./tui -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s (go test ./tui -update rewrites it):\n--- got\n%s--- want\n%s", name, path, got, want)
	}
}

// trimRight drops trailing blanks, which editors strip from golden files.
func trimRight(ls []string) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = strings.TrimRight(l, " ")
	}
	return out
}

// at plays m, paused, to virtual time d by whole steps, then the rest in
// 50 ms ticks at 1×.
func at(t *testing.T, m Model, d time.Duration) Model {
	t.Helper()
	m = send(t, m, keyMsg(" "))
	for m.player.Now()+m.sc.Step <= d {
		m = send(t, m, keyMsg("right"))
	}
	m = send(t, m, keyMsg(" "))
	wall := t0
	m, wall = play(t, m, wall, 1)
	for m.player.Now() < d {
		m, wall = play(t, m, wall, 1)
	}
	return send(t, m, keyMsg(" "))
}

func TestGoldenFrames(t *testing.T) {
	t.Run("start-80x24", func(t *testing.T) {
		m := send(t, newTestModel(t, splitBrain(), true), size(80, 24))
		checkGolden(t, "start-80x24", m.View())
	})
	t.Run("partition-80x24", func(t *testing.T) {
		m := at(t, send(t, newTestModel(t, splitBrain(), true), size(80, 24)), 13500*time.Millisecond)
		checkGolden(t, "partition-80x24", m.View())
	})
	t.Run("outage-120x40", func(t *testing.T) {
		m := at(t, send(t, newTestModel(t, splitBrain(), true), size(120, 40)), 25*time.Second)
		checkGolden(t, "outage-120x40", m.View())
	})
	t.Run("done-80x24", func(t *testing.T) {
		m := at(t, send(t, newTestModel(t, splitBrain(), true), size(80, 24)), 30*time.Second)
		checkGolden(t, "done-80x24", m.View())
	})
	t.Run("help-80x24", func(t *testing.T) {
		m := send(t, newTestModel(t, splitBrain(), true), size(80, 24), keyMsg("?"))
		checkGolden(t, "help-80x24", m.View())
	})
	t.Run("local-many-80x24", func(t *testing.T) {
		m := at(t, send(t, newTestModel(t, many(), true), size(80, 24)), 8*time.Second)
		checkGolden(t, "local-many-80x24", send(t, m, keyMsg("down")).View())
	})
	t.Run("versus-fail-open-closed-80x24", func(t *testing.T) {
		m := at(t, send(t, versus(t), size(80, 24)), 25*time.Second)
		checkGolden(t, "versus-fail-open-closed-80x24", m.View())
	})
	t.Run("versus-fail-open-closed-160x48", func(t *testing.T) {
		m := at(t, send(t, versus(t), size(160, 48)), 30*time.Second)
		checkGolden(t, "versus-fail-open-closed-160x48", m.View())
	})
	t.Run("fail-closed-shared-100x30", func(t *testing.T) {
		sc := splitBrain()
		sc.Topology.Kind, sc.Topology.OnError = sim.Shared, store.FailClosed
		m := at(t, send(t, newTestModel(t, sc, true), size(100, 30)), 26*time.Second)
		checkGolden(t, "fail-closed-shared-100x30", m.View())
	})
}
