package tui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratelim/ratelim/internal/testsize"
	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/scenarios/scenariotest"
	"github.com/ratelim/ratelim/sim"
)

// rowLine is the frame's line for the row named name (selected or not),
// or "".
func rowLine(view, name string) string {
	for _, l := range lines(view) {
		if strings.HasPrefix(l, "  "+name+" ") || strings.HasPrefix(l, "▸ "+name+" ") {
			return l
		}
	}
	return ""
}

// rowHasCount reports whether the row named name shows n, compacted as
// the table writes counts, as one of its figures.
func rowHasCount(view, name string, n int64) bool {
	return n > 0 && slices.Contains(strings.Fields(rowLine(view, name)), compact(n))
}

// columnShown reports whether the clients' table has a column named name.
func columnShown(view, name string) bool {
	for _, l := range lines(view) {
		if f := strings.Fields(l); len(f) > 0 && f[0] == "client" && slices.Contains(f, name) {
			return true
		}
	}
	return false
}

// clientTotal is the named client's totals in m's last frame.
func clientTotal(m Model, name string) sim.ClientResult {
	for _, c := range m.snap.Clients {
		if c.Name == name {
			return c.Total
		}
	}
	return sim.ClientResult{}
}

// stripOf is the admitted strip of a row's line: the cells after the name.
func stripOf(line string, nameW, sparkW int) string {
	r := []rune(line)
	return string(r[min(len(r), 2+nameW+1):min(len(r), 2+nameW+1+sparkW)])
}

// TestEveryBuiltinShowsItsLessonAt80x24 plays each built-in to its end on
// an 80×24 terminal and looks for the row that carries its lesson: what a
// teacher projecting the demo must not have to scroll to.
func TestEveryBuiltinShowsItsLessonAt80x24(t *testing.T) {
	tests := []struct {
		name   string
		lesson string
		check  func(m Model, view string) bool
	}{
		{"nat", "the sync-tool's row", func(m Model, v string) bool { return rowLine(v, "sync-tool") != "" }},
		{"runaway-healthcheck", "a bastion's row and the scheduler's or the dashboard's", func(m Model, v string) bool {
			return rowLine(v, "bastion-1") != "" && (rowLine(v, "scheduler") != "" || rowLine(v, "dashboard") != "")
		}},
		{"store-outage", "the fail-open column with scraper's and mobile's figures", func(m Model, v string) bool {
			ok := strings.Contains(v, "fail-open")
			for _, c := range m.snap.Clients {
				row := rowLine(v, c.Name)
				ok = ok && c.Total.FailedOpen > 0 && strings.HasSuffix(strings.TrimSpace(row), " "+strconv.FormatInt(c.Total.FailedOpen, 10))
			}
			return ok
		}},
		{"window-boundary", "the boundary burst marked over the limit (▲) in the strip, at the end", func(m Model, v string) bool {
			tab := m.clientTable(80, m.rows())
			return strings.ContainsRune(stripOf(rowLine(v, "boundary"), tab.nameW, tab.sparkW), glyphOver)
		}},
		{"partition", "the split brain's two copies side by side", func(m Model, v string) bool {
			for _, l := range lines(v) {
				if strings.Contains(l, " primary ") && strings.Contains(l, " replica ") {
					return true
				}
			}
			return false
		}},
		{"retry-storm", "eager's row with its retries", func(m Model, v string) bool {
			return strings.Contains(v, "retries") && rowLine(v, "eager") != "" &&
				strings.HasSuffix(rowLine(v, "eager"), " "+strconv.FormatInt(m.snap.Clients[0].Total.Retries, 10))
		}},
		{"rack-drain", "drain-rack-2's row", func(m Model, v string) bool { return rowLine(v, "drain-rack-2") != "" }},
		{"dark-launch", "the batch job's row with what shadow mode would have refused", func(m Model, v string) bool {
			return columnShown(v, "would-rej") && rowHasCount(v, "batch-job", clientTotal(m, "batch-job").WouldReject)
		}},
		{"api-quotas", "the sync job's row", func(m Model, v string) bool { return rowLine(v, "sync-job") != "" }},
		{"expensive-search", "the search page's row", func(m Model, v string) bool { return rowLine(v, "search-page") != "" }},
		{"slow-endpoint", "the reports client's row", func(m Model, v string) bool { return rowLine(v, "reports") != "" }},
		{"race", "checkout's row admitted past its exact limiter (×exact over 1)", func(m Model, v string) bool {
			c := clientTotal(m, "checkout")
			return c.Allowed > c.IdealAllowed && timesExact(v, "checkout") > 1.1 && columnShown(v, "×exact") && rowHasCount(v, "checkout", c.Allowed)
		}},
		{"cluster-partition", "the four clients' rows, checkout's with its 600 failed open", func(m Model, v string) bool {
			for _, name := range []string{"orders", "webhooks", "mobile"} {
				if rowLine(v, name) == "" {
					return false
				}
			}
			c := clientTotal(m, "checkout")
			return c.FailedOpen == 600 && columnShown(v, "fail-open") && strings.HasSuffix(strings.TrimSpace(rowLine(v, "checkout")), " 600")
		}},
		{"sync-interval", "the flash bot's row admitted past its exact limiter (×exact over 2)", func(m Model, v string) bool {
			c := clientTotal(m, "flash-bot")
			return c.Allowed > 2*c.IdealAllowed && timesExact(v, "flash-bot") > 2 && columnShown(v, "×exact") && rowHasCount(v, "flash-bot", c.Allowed)
		}},
		{"two-regions", "the importer's row with its 2,000 admitted, twice its exact limiter's, and both regions' stores emptied", func(m Model, v string) bool {
			c := clientTotal(m, "importer")
			return c.Allowed == 2*c.IdealAllowed && rowHasCount(v, "importer", c.Allowed) && strings.Contains(v, "0/1000  eu") && strings.Contains(v, " 0/1000\n")
		}},
		{"black-friday", "the crawler's row with its shed 503s", func(m Model, v string) bool {
			return columnShown(v, "shed") && rowHasCount(v, "crawler", clientTotal(m, "crawler").Shed)
		}},
	}
	names := map[string]bool{}
	for _, tt := range tests {
		names[tt.name] = true
	}
	for _, b := range scenarios.Builtin() {
		if !names[b] {
			t.Errorf("built-in %s has no lesson in this test", b)
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := scenariotest.Builtin(t, tt.name)
			m := at(t, send(t, newTestModel(t, sc, true), size(80, 24)), sc.Duration)
			view := m.View()
			checkFits(t, tt.name, view, 80, 24)
			if !tt.check(m, view) {
				t.Errorf("the 80×24 frame at the end lacks %s:\n%s", tt.lesson, view)
			}
			if !strings.Contains(view, "VERDICT") || !strings.Contains(flat(view), flat(sim.Headline(m.player.Result()))[:40]) {
				t.Errorf("the 80×24 frame at the end lacks the verdict's headline %q:\n%s", sim.Headline(m.player.Result()), view)
			}
		})
	}
}

// TestNatShowsTheSyncToolWhileItRuns: mid-run, while the sync tool
// floods the office's address, its row is on screen at 80×24.
func TestNatShowsTheSyncToolWhileItRuns(t *testing.T) {
	m := at(t, send(t, newTestModel(t, scenariotest.Builtin(t, "nat"), true), size(80, 24)), 15*time.Second)
	if l, _ := selectedLine(m.View()); !strings.HasPrefix(l, "▸ sync-tool ") {
		t.Fatalf("at 15s the selected first row is %q, want sync-tool:\n%s", l, m.View())
	}
}

func TestGoldenBuiltinFrames(t *testing.T) {
	tests := []struct {
		name     string
		w, h     int
		at       time.Duration
		keys     []string
		scenario string
	}{
		{"nat-80x24", 80, 24, 30 * time.Second, nil, "nat"},
		{"nat-per-key-80x24", 80, 24, 15 * time.Second, []string{"tab"}, "nat"},
		{"runaway-healthcheck-160x48", 160, 48, 30 * time.Second, nil, "runaway-healthcheck"},
		{"runaway-healthcheck-scheduler-160x48", 160, 48, 15 * time.Second, []string{"end", "up"}, "runaway-healthcheck"},
		{"store-outage-160x48", 160, 48, 15 * time.Second, nil, "store-outage"},
		{"window-boundary-80x24", 80, 24, 5 * time.Second, nil, "window-boundary"},
		{"partition-160x48", 160, 48, 30 * time.Second, []string{"e"}, "partition"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := scenariotest.Builtin(t, tt.scenario)
			m := at(t, send(t, newTestModel(t, sc, true), size(tt.w, tt.h)), tt.at)
			for _, k := range tt.keys {
				m = send(t, m, keyMsg(k))
			}
			checkFits(t, tt.name, m.View(), tt.w, tt.h)
			checkGolden(t, tt.name, m.View())
		})
	}
}

// TestEveryBuiltinFitsEverySizeAtEveryFrame plays each built-in a second
// a frame and draws each frame at sizes from a small window to a large
// one, per client and per key, without colour and (exhaustive sizes,
// testsize) with it: colour changes no width, so the plain pass finds an
// overflow on its own and the coloured one checks that stays true.
func TestEveryBuiltinFitsEverySizeAtEveryFrame(t *testing.T) {
	sizes := [][2]int{{80, 24}, {160, 48}, {60, 16}, {40, 10}, {120, 30}}
	colours := testsize.Pick([]bool{true}, []bool{true, false})
	for _, name := range scenarios.Builtin() {
		for _, noColor := range colours {
			m := newTestModel(t, scenariotest.Builtin(t, name), noColor)
			m.speed = 20
			m, wall := play(t, m, t0, 1)
			for !m.player.Done() {
				m, wall = play(t, m, wall, 1)
				for i, s := range sizes {
					if !noColor && i > 1 {
						break // colour changes no width: two sizes tell
					}
					m = send(t, m, size(s[0], s[1]))
					what := name + " at " + m.player.Now().String() + " " + strconv.Itoa(s[0]) + "×" + strconv.Itoa(s[1])
					checkFits(t, what, m.View(), s[0], s[1])
					checkFits(t, what+", per key", send(t, m, keyMsg("tab")).View(), s[0], s[1])
				}
			}
		}
	}
}

// TestTheVerdictChecksTheExpectationsOfTheScenarioAsWritten: Options.Expect
// is asked once the run is done, failures listed first; a run changed
// with a is not checked against them, and the verdict says why.
func TestTheVerdictChecksTheExpectationsOfTheScenarioAsWritten(t *testing.T) {
	f, err := scenarios.Open("store-outage")
	if err != nil {
		t.Fatal(err)
	}
	calls, checked := 0, 0
	expect := func(r *sim.Result) []sim.ExpectationResult {
		calls++
		var out []sim.ExpectationResult
		for i := range f.Expect {
			if len(f.Expect[i].With) > 0 {
				continue
			}
			outs, err := scenarios.Evaluate("store-outage.yaml", &f.Expect[i], r)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range outs {
				out = append(out, sim.ExpectationResult{Text: o.Claim(), OK: o.OK, Got: o.Got})
			}
		}
		// One that fails, to see it listed first.
		out = append(out, sim.ExpectationResult{Text: "scraper rejected <= 0", OK: false, Got: 1762})
		checked = len(out)
		return out
	}
	m, err := NewModel(f.Scenario, Options{NoColor: true, Expect: expect})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	m = at(t, send(t, m, size(100, 40)), f.Scenario.Duration)
	view := m.View()
	if calls != 1 {
		t.Fatalf("Expect called %d times, want once at the end", calls)
	}
	want := []string{fmt.Sprintf("expect: %d of %d hold", checked-1, checked), "✗ scraper rejected <= 0 (got 1762)", "✓ scraper failed_open >= 900 (got 1000)"}
	last := -1
	for _, w := range want {
		i := strings.Index(view, w)
		if i < 0 || i < last {
			t.Fatalf("the verdict lacks %q, or has it out of order:\n%s", w, view)
		}
		last = i
	}
	checkGolden(t, "store-outage-verdict-100x40", view)
	m = send(t, m, keyMsg("a"))
	m = at(t, m, f.Scenario.Duration)
	if calls != 1 || !strings.Contains(flat(m.View()), "expectations not checked: they are for the scenario as written") {
		t.Fatalf("after a: Expect called %d times; the verdict:\n%s", calls, m.View())
	}
	// e shows the events instead, and back.
	if v := send(t, m, keyMsg("e")).View(); strings.Contains(v, "VERDICT") || !strings.Contains(v, "EVENTS") {
		t.Fatalf("e does not show the events:\n%s", v)
	}
}

// timesExact is the last "N.NN×" figure on client's row of view (its
// ×exact column), 0 when it has none.
func timesExact(view, client string) float64 {
	x := 0.0
	for _, f := range strings.Fields(rowLine(view, client)) {
		if v, err := strconv.ParseFloat(strings.TrimSuffix(f, "×"), 64); err == nil && strings.HasSuffix(f, "×") {
			x = v
		}
	}
	return x
}
