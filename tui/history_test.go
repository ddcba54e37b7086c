package tui

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/sim"
)

func TestStrideCompressesAsTheRunGrows(t *testing.T) {
	tests := []struct{ n, w, want int }{
		{0, 20, 1}, {20, 20, 1}, {21, 20, 2}, {40, 20, 2}, {41, 20, 3}, {50, 19, 3},
		{61, 20, 4}, {86400, 60, 1440}, {300, 60, 5}, {301, 60, 6}, {5, 0, 1},
	}
	for _, tt := range tests {
		if got := stride(tt.n, tt.w); got != tt.want {
			t.Errorf("stride(%d steps, %d cells) = %d, want %d", tt.n, tt.w, got, tt.want)
		}
		if tt.w > 0 && (tt.n+stride(tt.n, tt.w)-1)/stride(tt.n, tt.w) > tt.w {
			t.Errorf("stride(%d, %d): the cells do not fit", tt.n, tt.w)
		}
	}
}

// steps is a timeline of one row per step admitting allowed[i] (and
// failing open failedOpen[i] of those, when given).
func steps(allowed []int64, failedOpen ...int64) []sim.TimelineRow {
	rows := make([]sim.TimelineRow, len(allowed))
	for i, a := range allowed {
		rows[i] = sim.TimelineRow{TS: float64(i), Counts: sim.Counts{Sent: a + 1, Allowed: a}}
		if i < len(failedOpen) {
			rows[i].FailedOpen = failedOpen[i]
		}
	}
	return rows
}

func repeat(n int, v int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func TestCellsMarkWhatTheLimitDoesNotAllow(t *testing.T) {
	bucket := newAllowance(sim.Limit{Algorithm: "token-bucket", Params: algorithms.Params{Rate: perSecond(10), Burst: 20}})
	window := newAllowance(sim.Limit{Algorithm: "fixed-window", Params: algorithms.Params{Rate: perSecond(100), Window: time.Second}})
	overs := func(cs []cell) string {
		var b strings.Builder
		for _, c := range cs {
			if c.over {
				b.WriteByte('^')
			} else {
				b.WriteByte('.')
			}
		}
		return b.String()
	}
	tests := []struct {
		name  string
		rows  []sim.TimelineRow
		k     int
		stepS float64
		a     allowance
		want  string
	}{
		{"a bucket held to its rate", steps(append([]int64{30}, repeat(9, 10)...)), 1, 1, bucket, ".........."},
		{"a full bucket's burst is allowed", steps([]int64{0, 0, 30, 10, 10}), 1, 1, bucket, "....."},
		{"twice the rate, from an empty bucket, then held again (a healed split brain)",
			steps(append(append(repeat(3, 10), repeat(4, 20)...), repeat(3, 10)...)), 1, 1, bucket, ".....^^..."}, // the burst absorbs two steps
		{"the same, three steps a cell", steps(append(append(repeat(3, 10), repeat(6, 20)...), repeat(3, 10)...)), 3, 1, bucket, ".^^."},
		{"failing open is not the limiter over its limit", steps([]int64{10, 100, 100, 10}, 0, 100, 100, 0), 1, 1, bucket, "...."},
		{"a fixed window's boundary: 100 then 100 in the next 0.1 s", steps(append(append(repeat(19, 0), 100, 100), repeat(9, 0)...)), 1, 0.1, window,
			strings.Repeat(".", 20) + "^" + strings.Repeat(".", 9)},
		{"the boundary, three steps a cell", steps(append(append(repeat(19, 0), 100, 100), repeat(9, 0)...)), 3, 0.1, window, "......^...."[:10]},
		{"100 a window, spread, is the limit", steps(repeat(30, 10)), 1, 0.1, window, strings.Repeat(".", 30)},
	}
	for _, tt := range tests {
		if got := overs(cells(endedSteps(tt.rows), tt.k, tt.stepS, tt.a)); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
}

func TestFirstRejectionsFoldIntoOneEntry(t *testing.T) {
	run := func(ts float64, text string) event { return event{LogEntry: sim.LogEntry{TS: ts, Text: text}} }
	tests := []struct {
		name string
		in   []event
		want []string
	}{
		{"one is left as it is", []event{run(1, "a: first rejection")}, []string{"a: first rejection"}},
		{"a run of them is one line, at the first's time",
			[]event{run(5, "bastion-1: first rejection"), run(5, "bastion-2: first rejection"), run(5.1, "bastion-3: first rejection"), run(6, "bastion-4: first rejection")},
			[]string{"first rejection: 4 clients (bastion-1, bastion-2, bastion-3, …)"}},
		{"a fault between them keeps its place",
			[]event{run(1, "a: first rejection"), run(1, "b: first rejection"), run(10, "outage begins"), run(11, "c: first rejection"), run(12, "d: first rejection")},
			[]string{"first rejection: 2 clients (a, b)", "outage begins", "first rejection: 2 clients (c, d)"}},
		{"the player's own notes are not folded",
			[]event{run(1, "a: first rejection"), {LogEntry: sim.LogEntry{TS: 1, Text: "b: first rejection"}, mine: true}},
			[]string{"a: first rejection", "b: first rejection"}},
	}
	for _, tt := range tests {
		got := fold(tt.in)
		var texts []string
		for _, e := range got {
			texts = append(texts, e.Text)
		}
		if strings.Join(texts, "\n") != strings.Join(tt.want, "\n") {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, texts, tt.want)
		}
		if len(got) > 0 && got[0].TS != tt.in[0].TS {
			t.Errorf("%s: the folded entry is at %gs, want the first's %gs", tt.name, got[0].TS, tt.in[0].TS)
		}
	}
}

func TestKeysComeFromTheTerminalWhenStdinIsNotOne(t *testing.T) {
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	tty, err := os.CreateTemp(t.TempDir(), "tty")
	if err != nil {
		t.Fatal(err)
	}
	opened := 0
	open := func() (*os.File, error) { opened++; return tty, nil }

	// A reader that is not a file is a test's or a caller's: used as it is.
	r := strings.NewReader("q")
	if in, closeIn, err := input(r, open); err != nil || in != r || opened != 0 || closeIn() != nil {
		t.Fatalf("a strings.Reader: %v, %v, opened %d", in, err, opened)
	}
	// /dev/null is a file and no terminal: the terminal is opened.
	in, closeIn, err := input(devNull, open)
	if err != nil || in != tty || opened != 1 {
		t.Fatalf("stdin from /dev/null: %v, %v, opened %d; want the tty", in, err, opened)
	}
	if err := closeIn(); err != nil {
		t.Fatalf("closing the tty: %v", err)
	}
	// No terminal to open: an error that says what to do.
	_, _, err = input(devNull, func() (*os.File, error) { return nil, errors.New("no such device or address") })
	if err == nil || !strings.Contains(err.Error(), "/dev/tty cannot be opened") || !strings.Contains(err.Error(), "no such device") {
		t.Fatalf("no terminal: %v", err)
	}
}

func TestVersusLogsAddTheSecondRunsOwnEntries(t *testing.T) {
	e := func(ts float64, text string) sim.LogEntry { return sim.LogEntry{TS: ts, Text: text} }
	a := []sim.LogEntry{e(1, "x: first rejection"), e(10, "outage begins"), e(20, "outage ends")}
	b := []sim.LogEntry{e(1, "x: first rejection"), e(5, "y: first rejection"), e(10, "outage begins"), e(12, "z: first rejection"), e(20, "outage ends")}
	got := mergeVersus(a, b)
	want := []sim.LogEntry{e(1, "x: first rejection"), e(5, "B: y: first rejection"), e(10, "outage begins"), e(12, "B: z: first rejection"), e(20, "outage ends")}
	if len(got) != len(want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("entry %d: got %v, want %v", i, got[i], want[i])
		}
	}
}

// A frame that played past what a snapshot carries fills the gap from the
// run's Result, which is sparse (sim.Result.TimelineSparse): the steps in
// which nothing happened come back as empty rows, the others as the
// Result has them, as densifying the Result would give them.
func TestHistoryGapFillsFromASparseResult(t *testing.T) {
	r := &sim.Result{DurationS: 10, StepS: 1, TimelineSparse: true,
		Clients: []sim.ClientResult{{Name: "a"}, {Name: "b"}},
		Timeline: []sim.TimelineRow{
			{TS: 2, Client: "b", Counts: sim.Counts{Sent: 3, Allowed: 2, Rejected: 1}},
			{TS: 5, Client: "a", Counts: sim.Counts{Sent: 1, Allowed: 1}},
		}}
	snap := sim.Snapshot{Step: 8}
	for _, c := range r.Clients {
		snap.Clients = append(snap.Clients, sim.ClientSnapshot{Name: c.Name,
			Recent: []sim.TimelineRow{{TS: 7, Client: c.Name}, {TS: 8, Client: c.Name}}})
	}
	h := history{}.next(snap, 1, func() *sim.Result { return r })
	dense := *r
	dense.Densify()
	for ci, c := range snap.Clients {
		var want []sim.TimelineRow
		for _, row := range dense.Timeline {
			if row.Client == c.Name && row.TS < 7 {
				row.Client = "" // a history's rows are a client's own: they do not name it
				want = append(want, row)
			}
		}
		ended := c.Recent[0] // step 7 ended; 8 is in progress
		ended.Client = ""
		want = append(want, ended)
		if !reflect.DeepEqual(h.endedRows(ci), want) {
			t.Errorf("client %s's history:\n%+v\nwant:\n%+v", c.Name, h.endedRows(ci), want)
		}
	}
	if h.first[1] != (rejection{2, 1}) || h.first[0].step != -1 {
		t.Errorf("first rejections %+v, want b's at step 2 and none of a's", h.first)
	}
}

// A history's rows are in blocks of several steps of every client, written
// past the steps a history has as the next is built: each history built
// on the way still reads its own steps as they were (the frame on screen
// is drawn while the next is built), every client's at its place, whatever
// the steps per block (64 at 3 clients, 2 at 1,500, 1 at 5,000), and a
// client's first rejection is its first step that rejected.
func TestHistoryBlocksKeepEveryFramesRows(t *testing.T) {
	row := func(ci, st int) sim.TimelineRow {
		r := sim.TimelineRow{TS: float64(st), Counts: sim.Counts{Sent: int64(ci*1000 + st + 1)}}
		if st == ci%7+2 {
			r.Rejected = int64(ci%3 + 1)
		}
		return r
	}
	for _, n := range []int{3, 1500, 5000} {
		var built []history
		h := history{}
		for _, step := range []int{0, 1, 2, 5, 6, 9, 12, 13, 20} {
			snap := sim.Snapshot{Step: step, Clients: make([]sim.ClientSnapshot, n)}
			for ci := range snap.Clients {
				// Recent: from the first step the history lacks to the step in progress.
				for st := h.steps; st <= step; st++ {
					snap.Clients[ci].Recent = append(snap.Clients[ci].Recent, row(ci, st))
				}
			}
			h = h.next(snap, 1, func() *sim.Result { t.Fatal("no gap: the Result is not read"); return nil })
			built = append(built, h)
			for _, b := range built {
				for _, ci := range []int{0, 1, n / 2, n - 1} {
					rows := b.of(ci, snap).head(b.steps)
					if rows.len() != b.steps {
						t.Fatalf("%d clients, history at step %d: client %d has %d steps", n, b.steps, ci, rows.len())
					}
					for st := range b.steps {
						if got, want := rows.at(st), row(ci, st); got != want {
							t.Fatalf("%d clients, history at step %d read after step %d: client %d step %d is %+v, want %+v",
								n, b.steps, step, ci, st, got, want)
						}
					}
				}
			}
		}
		for ci := range n {
			want := rejection{ci%7 + 2, int64(ci%3 + 1)}
			if h.first[ci] != want {
				t.Fatalf("%d clients: client %d first rejected %+v, want %+v", n, ci, h.first[ci], want)
			}
		}
	}
}

// Rows already in the telling order come back as they are, with no copy
// (at 10,000 clients a frame's rows are 1.4 MB); rows out of it are
// ordered: the earlier first rejection first, a step's ties by how many
// it rejected, then the scenario's order.
func TestTellingKeepsRowsInOrderWithoutACopy(t *testing.T) {
	rows := func(firsts ...rejection) []series {
		out := make([]series, len(firsts))
		for i, f := range firsts {
			out[i] = series{name: fmt.Sprint(i), first: f}
		}
		return out
	}
	names := func(rs []series) (s string) {
		for _, r := range rs {
			s += r.name
		}
		return s
	}
	inOrder := rows(rejection{1, 5}, rejection{1, 2}, rejection{3, 1}, neverRejected, neverRejected)
	if allocs := testing.AllocsPerRun(10, func() { telling(inOrder) }); allocs != 0 {
		t.Errorf("rows in order: %v allocations, want none", allocs)
	}
	if got := names(telling(inOrder)); got != "01234" {
		t.Errorf("rows in order came back as %s", got)
	}
	mixed := rows(neverRejected, rejection{4, 1}, rejection{2, 1}, rejection{2, 3}, neverRejected, rejection{4, 1})
	if got := names(telling(mixed)); got != "321504" {
		t.Errorf("rows ordered %s, want 321504", got)
	}
}
