package report

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/sim"
)

// cancelAfter is a writer that cancels its context once it has been given
// limit bytes, and counts what it was given.
type cancelAfter struct {
	limit, n int
	cancel   context.CancelFunc
}

func (w *cancelAfter) Write(p []byte) (int, error) {
	w.n += len(p)
	if w.n >= w.limit {
		w.cancel()
	}
	return len(p), nil
}

// longResult is a Result with rows × 1 timeline rows (every one busy) and
// a state series of points points (each a new value): megabytes of JSON.
func longResult(rows, points int) *sim.Result {
	r := &sim.Result{Schema: sim.Schema, Scenario: "long", DurationS: float64(rows), StepS: 1,
		Clients: []sim.ClientResult{{Name: "c", Key: "k"}}, Keys: []sim.KeyResult{{Key: "k", Clients: 1}}}
	for i := range rows {
		r.Timeline = append(r.Timeline, sim.TimelineRow{TS: float64(i), Client: "c", Counts: sim.Counts{Sent: 1, Allowed: 1}, Served: 1})
	}
	ser := sim.StateSeries{Key: "k", Copy: "shared"}
	for i := range points {
		ser.TS = append(ser.TS, float64(i+1))
		ser.Remaining = append(ser.Remaining, int64(i%2))
	}
	r.State = []sim.StateSeries{ser}
	return r
}

// A writer whose context is cancelled stops where it is, with the
// context's error, having written a fraction of the whole: the timeline's
// rows and a long state series' points are checked for it as they go
// (before, a signal during the write of 2 GB of JSON waited for the end,
// 12 s, and the command exited 0).
func TestWritersStopWhenCancelled(t *testing.T) {
	writers := []struct {
		name  string
		write func(ctx context.Context, w io.Writer, r *sim.Result) error
	}{
		{"json sparse", func(ctx context.Context, w io.Writer, r *sim.Result) error {
			return WriteJSONWith(ctx, w, r, WriteOptions{})
		}},
		{"json dense", func(ctx context.Context, w io.Writer, r *sim.Result) error {
			return WriteJSONWith(ctx, w, r, WriteOptions{Dense: true})
		}},
		{"csv sparse", func(ctx context.Context, w io.Writer, r *sim.Result) error {
			return WriteCSVWith(ctx, w, r, WriteOptions{})
		}},
		{"csv dense", func(ctx context.Context, w io.Writer, r *sim.Result) error {
			return WriteCSVWith(ctx, w, r, WriteOptions{Dense: true})
		}},
	}
	results := []struct {
		name string
		r    *sim.Result
	}{
		{"100,000 rows", longResult(100_000, 1)},
		{"a series of 1,000,000 points", longResult(1, 1_000_000)},
	}
	for _, res := range results {
		for _, wr := range writers {
			var whole countingWriter
			if err := wr.write(context.Background(), &whole, res.r); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			w := &cancelAfter{limit: 256 << 10, cancel: cancel}
			err := wr.write(ctx, w, res.r)
			cancel()
			if !errors.Is(err, context.Canceled) {
				t.Errorf("%s, %s: cancelled after %d bytes, the writer returned %v; want context.Canceled", res.name, wr.name, w.limit, err)
			}
			if w.n >= whole.n/2 {
				t.Errorf("%s, %s: cancelled after %d bytes, it wrote %d of the whole %d", res.name, wr.name, w.limit, w.n, whole.n)
			}
		}
	}
}

type countingWriter struct{ n int }

func (w *countingWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

// The sparse CSV, filled in as CSVHeader's contract says (a missing
// client row is every figure 0, a state value holds until the next row
// of its series), is the dense CSV, row for row: every built-in on every
// topology it runs on.
func TestSparseCSVDensifiesToDense(t *testing.T) {
	for _, name := range scenarios.Builtin() {
		f, err := scenarios.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, kind := range []sim.TopologyKind{"", sim.Local, sim.Racy, sim.SplitBrain} {
			sc := f.Scenario
			if kind != "" {
				sc.Topology.Kind = kind
			}
			if sim.Placement(&sc) != nil {
				continue
			}
			r, err := sim.Run(context.Background(), sc, sim.Options{})
			if err != nil {
				t.Fatalf("%s on %s: %v", name, kind, err)
			}
			var sparse, dense bytes.Buffer
			if err := WriteCSVWith(context.Background(), &sparse, r, WriteOptions{Label: "a"}); err != nil {
				t.Fatal(err)
			}
			if err := WriteCSVWith(context.Background(), &dense, r, WriteOptions{Dense: true, Label: "a"}); err != nil {
				t.Fatal(err)
			}
			got := fillCSV(t, r, read(t, sparse.Bytes()))
			want := read(t, dense.Bytes())
			if sparse.Len() > dense.Len() {
				t.Errorf("%s on %s: the sparse CSV is longer than the dense (%d > %d bytes)", name, kind, sparse.Len(), dense.Len())
			}
			if !slices.EqualFunc(got, want, slices.Equal) {
				t.Errorf("%s on %s: the sparse CSV filled in is not the dense CSV (%d rows vs %d)", name, kind, len(got), len(want))
			}
		}
	}
}

func read(t *testing.T, b []byte) [][]string {
	t.Helper()
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// fillCSV is a reader of the sparse CSV that wants every row back, as
// CSVHeader documents it: the steps are r's (t_s of each is its start,
// a state row's its end), each missing client row all zeros, each
// missing state row its series' value before.
func fillCSV(t *testing.T, r *sim.Result, rows [][]string) [][]string {
	t.Helper()
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	out := [][]string{rows[0]}
	stepUs := int64(math.Round(r.StepS * 1e6))
	durUs := int64(math.Round(r.DurationS * 1e6))
	steps := int((durUs + stepUs - 1) / stepUs)
	ts := func(us int64) string { return strconv.FormatFloat(float64(us)/1e6, 'f', -1, 64) }
	given := map[string][]string{}
	var run []string
	var series [][]string // the state rows, in order
	for _, row := range rows[1:] {
		run = row[:col["series"]]
		if row[col["series"]] == "client" {
			given[row[col["t_s"]]+"\x00"+row[col["client"]]] = row
		} else {
			series = append(series, row)
		}
	}
	for st := range steps {
		for _, c := range r.Clients {
			row, ok := given[ts(int64(st)*stepUs)+"\x00"+c.Name]
			if !ok {
				row = append(slices.Clone(run), "client", ts(int64(st)*stepUs), c.Name, c.Key, "", "0", "0", "0", "0", "0", "0", "0", "0", "0", "", "a")
			}
			out = append(out, row)
		}
	}
	// Each series: from its first row to its last, a row at every step's
	// end, holding the value of the row at or before it.
	for i := 0; i < len(series); {
		j := i
		id := func(row []string) string { return row[col["key"]] + "\x00" + row[col["copy"]] }
		for j < len(series) && id(series[j]) == id(series[i]) {
			j++
		}
		first, last := series[i][col["t_s"]], series[j-1][col["t_s"]]
		k, on := i, false
		for st := range steps {
			at := ts(min(int64(st+1)*stepUs, durUs))
			on = on || at == first
			if !on {
				continue
			}
			for k+1 < j && series[k+1][col["t_s"]] == at {
				k++
			}
			row := slices.Clone(series[k])
			row[col["t_s"]] = at
			out = append(out, row)
			if at == last {
				break
			}
		}
		i = j
	}
	if len(out) == 0 {
		t.Fatal(fmt.Sprintf("no rows from %d", len(rows)))
	}
	return out
}

// Every step's rows of a long fine run are refused up front, not written
// (a year at 1 µs runs in a moment and would be 3 × 10¹³ rows): as JSON
// and CSV alike, with ErrDense and nothing on the writer; a run that fits
// is written.
func TestDenseRefusedPastMaxDenseRows(t *testing.T) {
	huge := &sim.Result{Scenario: "huge", DurationS: 3600, StepS: 1e-6, TimelineSparse: true,
		Clients: []sim.ClientResult{{Name: "a", Key: "a"}}}
	for name, write := range map[string]func(io.Writer, *sim.Result) error{
		"json": func(w io.Writer, r *sim.Result) error {
			return WriteJSONWith(context.Background(), w, r, WriteOptions{Dense: true})
		},
		"csv": func(w io.Writer, r *sim.Result) error {
			return WriteCSVWith(context.Background(), w, r, WriteOptions{Dense: true})
		},
	} {
		// Past a megabyte the writer fails: without the check the rows
		// would be written until then.
		w := &cappedWriter{left: 1 << 20}
		err := write(w, huge)
		if !errors.Is(err, sim.ErrDense) || !sim.IsTooBig(err) || w.n != 0 || !strings.Contains(err.Error(), "3,600,000,000 rows") {
			t.Errorf("%s: %v, %d bytes written; want ErrDense for 3,600,000,000 rows and nothing written", name, err, w.n)
		}
		small := *huge
		small.StepS = 1
		var b strings.Builder
		if err := write(&b, &small); err != nil || b.Len() == 0 {
			t.Errorf("%s at a 1 s step: %v, %d bytes", name, err, b.Len())
		}
	}
}

// cappedWriter takes left bytes, then fails.
type cappedWriter struct{ n, left int }

func (w *cappedWriter) Write(p []byte) (int, error) {
	if len(p) > w.left {
		return 0, errors.New("capped")
	}
	w.n += len(p)
	w.left -= len(p)
	return len(p), nil
}

// A write that fails (a full disk, a closed pipe) stops the rows being
// made, as JSON and CSV: before, its error stuck in the buffer while every
// row of a dense result was still made and thrown away (5 million here,
// seen by how often the context was asked).
func TestAFailedWriteStopsTheRows(t *testing.T) {
	r := &sim.Result{Scenario: "long", DurationS: 5000, StepS: 0.001, TimelineSparse: true,
		Clients: []sim.ClientResult{{Name: "a", Key: "a"}}}
	for name, write := range map[string]func(context.Context, io.Writer) error{
		"json": func(ctx context.Context, w io.Writer) error {
			return WriteJSONWith(ctx, w, r, WriteOptions{Dense: true})
		},
		"csv": func(ctx context.Context, w io.Writer) error {
			return WriteCSVWith(ctx, w, r, WriteOptions{Dense: true})
		},
	} {
		ctx := &askedContext{Context: context.Background()}
		err := write(ctx, &cappedWriter{left: 64 << 10})
		if err == nil || !strings.Contains(err.Error(), "capped") {
			t.Errorf("%s: %v, want the writer's error", name, err)
		}
		if ctx.asked > 10 {
			t.Errorf("%s: the context was asked %d times after the write failed: the rows went on being made", name, ctx.asked)
		}
	}
}

// askedContext counts how often it is asked whether it is done.
type askedContext struct {
	context.Context
	asked int
}

func (c *askedContext) Err() error {
	c.asked++
	return nil
}
