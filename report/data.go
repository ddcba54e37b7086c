package report

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/ratelim/ratelim/sim"
)

// This file writes a Result for scripts: the JSON and the CSV.

// WriteOptions choose how WriteJSONWith and WriteCSVWith write a Result.
type WriteOptions struct {
	// Dense writes every timeline row and state point, as the Result holds
	// them. By default the output is sparse (sim.Result.TimelineSparse):
	// it leaves out the rows in which nothing happened to their client
	// and the state points that repeat the one before, so that its size
	// follows what happened, not the run's steps × clients.
	Dense bool
	// Label names the run in the CSV's last column, run (a --vs side's
	// label, "on-error=fail-closed"); empty for one run.
	Label string
	// NoHeader leaves out the CSV's header: the second run of a
	// comparison, under the first's.
	NoHeader bool
}

// checkEvery is how many rows, points or elements a writer visits (writes
// or leaves out) between two looks at its context: a few milliseconds'
// work.
const checkEvery = 4096

// workCheck returns a visit for a writer to call with each row, point or
// element it writes or leaves out: every checkEvery of them, it looks at
// ctx, and returns the error that stops the write once ctx is cancelled.
func workCheck(ctx context.Context) func() error {
	work := 0
	return func() error {
		if work++; work >= checkEvery {
			work = 0
			if ctx.Err() != nil {
				return stopped(ctx)
			}
		}
		return nil
	}
}

// stopped is the error of a write its context stopped.
func stopped(ctx context.Context) error {
	return fmt.Errorf("report: writing stopped: %w", context.Cause(ctx))
}

// WriteJSON writes r as one indented ratelim.result/v1 object (sim.Schema),
// sparse: WriteJSONWith with the default options.
func WriteJSON(w io.Writer, r *sim.Result) error {
	return WriteJSONWith(context.Background(), w, r, WriteOptions{})
}

// WriteJSONWith writes r as one indented ratelim.result/v1 object
// (sim.Schema), sparse unless opts.Dense, and stops, with ctx's error
// wrapped, once ctx is cancelled.
//
// The arrays that grow with a run (clients, keys, the timeline of steps ×
// clients rows, the state series) are written an element at a time rather
// than encoded whole: at 100,000 clients × 30 steps the whole encoding
// would be a second copy of the result, gigabytes, in memory. The bytes
// are those json.Encoder (two-space indent, no HTML escaping) writes, of
// r or, sparse, of r.Sparse().
func WriteJSONWith(ctx context.Context, w io.Writer, r *sim.Result, opts WriteOptions) error {
	if opts.Dense {
		if err := sim.CheckDense(r); err != nil {
			return err
		}
	}
	streamed, err := streamJSON(ctx, w, r, opts.Dense)
	if err != nil || streamed {
		return err
	}
	// A layout streamJSON does not know: the whole, encoded at once.
	if !opts.Dense {
		r = r.Sparse()
	} else if r.TimelineSparse {
		dense := *r
		dense.Densify()
		r = &dense
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

// streamJSON is WriteJSONWith's streaming: it writes nothing and returns
// false when the encoder's layout is not the one it cuts.
func streamJSON(ctx context.Context, w io.Writer, r *sim.Result, dense bool) (bool, error) {
	rest := *r
	rest.TimelineSparse = !dense
	holes := cutHoles(r, &rest, dense)
	var head bytes.Buffer
	enc := json.NewEncoder(&head)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&rest); err != nil {
		return false, err
	}
	parts, tail, ok := splitAtHoles(head.Bytes(), holes)
	if !ok {
		return false, nil
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	hw := newHoleWriter(ctx, bw)
	for i, h := range holes {
		bw.Write(parts[i])
		if err := hw.write(h); err != nil {
			return true, err
		}
	}
	bw.Write(tail)
	return true, bw.Flush()
}

// A jsonHole is one of the Result's arrays, streamed an element at a time
// where its encoding in the rest of the Result left "null".
type jsonHole struct {
	field string
	// each calls emit with each element in turn, and stops at the first
	// error, calling visit for each it leaves out, for the context's
	// checks.
	each func(emit func(any) error, visit func() error) error
}

// cutHoles takes the arrays streamed element by element out of rest, a
// copy of r, and returns them in the Result's field order; an empty one is
// left to the encoder, which writes []. Written sparse, the timeline
// leaves out its empty rows and each series its repeated points; dense, a
// sparse Result's are put back as they are written (sim.Result.EachRow,
// StateAs).
func cutHoles(r, rest *sim.Result, dense bool) []jsonHole {
	var holes []jsonHole
	if len(r.Clients) > 0 {
		rest.Clients = nil
		holes = append(holes, jsonHole{"clients", every(r.Clients)})
	}
	if len(r.Keys) > 0 {
		rest.Keys = nil
		holes = append(holes, jsonHole{"keys", every(r.Keys)})
	}
	if len(r.Timeline) > 0 || (dense && r.TimelineSparse && len(r.Clients) > 0) {
		rest.Timeline = nil
		holes = append(holes, jsonHole{"timeline", func(emit func(any) error, visit func() error) error {
			if dense && r.TimelineSparse {
				// Put back row by row, never all at once.
				return r.EachRow(true, func(row *sim.TimelineRow) error { return emit(row) })
			}
			for i := range r.Timeline {
				var err error
				if !dense && r.Timeline[i].Empty() {
					err = visit()
				} else {
					err = emit(&r.Timeline[i])
				}
				if err != nil {
					return err
				}
			}
			return nil
		}})
	}
	if len(r.State) > 0 {
		rest.State = nil
		holes = append(holes, jsonHole{"state", func(emit func(any) error, _ func() error) error {
			for i := range r.State {
				s := r.StateAs(i, dense)
				if err := emit(&s); err != nil {
					return err
				}
			}
			return nil
		}})
	}
	return holes
}

// splitAtHoles cuts the encoding of the rest at its holes, before anything
// is written, so that a layout it does not know is found first (the whole
// is then encoded instead: ok false): the text before each hole, and what
// follows the last.
func splitAtHoles(text []byte, holes []jsonHole) (parts [][]byte, tail []byte, ok bool) {
	for _, h := range holes {
		// A top-level field is the only text at two spaces' indent, and
		// the holes come in the Result's field order.
		before, after, found := bytes.Cut(text, []byte("\n  \""+h.field+"\": null,"))
		if !found {
			return nil, nil, false
		}
		parts = append(parts, before)
		text = after
	}
	return parts, text, true
}

// holeWriter writes a hole's elements as json.Encoder would have, indented
// in the Result, checking the context as it goes.
type holeWriter struct {
	ctx   context.Context
	bw    *bufio.Writer
	elem  bytes.Buffer
	enc   *json.Encoder
	visit func() error
}

func newHoleWriter(ctx context.Context, bw *bufio.Writer) *holeWriter {
	check := workCheck(ctx)
	hw := &holeWriter{ctx: ctx, bw: bw, visit: func() error {
		if err := check(); err != nil {
			return err
		}
		// A write that failed (a full disk, a closed pipe) stops the
		// rest: bufio keeps its error, and a Write gives it back.
		_, err := bw.Write(nil)
		return err
	}}
	hw.enc = json.NewEncoder(&hw.elem)
	hw.enc.SetIndent("    ", "  ")
	hw.enc.SetEscapeHTML(false)
	return hw
}

// write writes h's field and the array of its elements.
func (hw *holeWriter) write(h jsonHole) error {
	bw := hw.bw
	bw.WriteString("\n  \"" + h.field + "\": [")
	n := 0
	err := h.each(func(v any) error {
		if err := hw.visit(); err != nil {
			return err
		}
		if n > 0 {
			bw.WriteString(",")
		}
		bw.WriteString("\n    ")
		n++
		return hw.element(v)
	}, hw.visit)
	if err != nil {
		return err
	}
	if n == 0 {
		// Every element left out: the encoder's empty array.
		bw.WriteString("],")
	} else {
		bw.WriteString("\n  ],")
	}
	return nil
}

// element writes one element of a hole.
func (hw *holeWriter) element(v any) error {
	if s, ok := v.(*sim.StateSeries); ok {
		// A series has a point per step: millions, a second's encoding,
		// on a long run.
		return writeSeries(hw.bw, s, func() error {
			if hw.ctx.Err() != nil {
				return stopped(hw.ctx)
			}
			return nil
		})
	}
	hw.elem.Reset()
	if err := hw.enc.Encode(v); err != nil {
		return err
	}
	hw.bw.Write(bytes.TrimSuffix(hw.elem.Bytes(), []byte("\n")))
	return nil
}

// every is a hole's elements when none is left out: each of xs.
func every[T any](xs []T) func(emit func(any) error, _ func() error) error {
	return func(emit func(any) error, _ func() error) error {
		for i := range xs {
			if err := emit(&xs[i]); err != nil {
				return err
			}
		}
		return nil
	}
}

// writeSeries writes s as the encoder writes it as an element of a
// top-level array (indented by four spaces, then two a level), its points
// checkEvery at a time, calling ctxErr before each batch: the fields but
// the points are the encoder's own, and each batch of points is encoded
// compact and laid out a number a line, as the encoder lays them.
func writeSeries(bw *bufio.Writer, s *sim.StateSeries, ctxErr func() error) error {
	bare := *s
	if len(s.TS) > 0 {
		bare.TS = nil
	}
	if len(s.Remaining) > 0 {
		bare.Remaining = nil
	}
	var head bytes.Buffer
	enc := json.NewEncoder(&head)
	enc.SetIndent("    ", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&bare); err != nil {
		return err
	}
	text := bytes.TrimSuffix(head.Bytes(), []byte("\n"))
	points := func(field string, n int, chunk func(from, to int) any) error {
		if n == 0 {
			return nil
		}
		hole := []byte("\"" + field + "\": null")
		before, after, ok := bytes.Cut(text, hole)
		if !ok {
			return fmt.Errorf("report: no %s in a state series' encoding", field)
		}
		bw.Write(before)
		bw.WriteString("\"" + field + "\": [")
		for from := 0; from < n; from += checkEvery {
			// A batch of points is a check's worth of work.
			if err := ctxErr(); err != nil {
				return err
			}
			compact, err := json.Marshal(chunk(from, min(from+checkEvery, n)))
			if err != nil {
				return err
			}
			for i, num := range bytes.Split(bytes.Trim(compact, "[]"), []byte(",")) {
				if from > 0 || i > 0 {
					bw.WriteByte(',')
				}
				bw.WriteString("\n        ")
				bw.Write(num)
			}
		}
		bw.WriteString("\n      ]")
		text = after
		return nil
	}
	if err := points("t_s", len(s.TS), func(from, to int) any { return s.TS[from:to] }); err != nil {
		return err
	}
	if err := points("remaining", len(s.Remaining), func(from, to int) any { return s.Remaining[from:to] }); err != nil {
		return err
	}
	bw.Write(text)
	return nil
}

// CSVHeader returns the CSV's columns. One header serves both kinds of row,
// so that the CSVs of several runs concatenate (drop the later headers):
// series "client" rows are one client's figures over one step (key is the
// client's limiter key); series "state" rows are one key's remaining
// allowance in one store copy at the end of a step (its t_s is that end,
// where a client row's is the step's start). A column a row has no
// figure for is empty. The first six columns name the run.
//
// Unless written dense (WriteOptions.Dense, ratelim sim --dense), the CSV
// is sparse as the JSON is (sim.Result.TimelineSparse), with the same
// header and no column to say so: a client with no row for a step sent
// nothing and was served nothing in it, and a state row's remaining
// holds until the next state row of its key and copy (the first and last
// of each are always there). Summed, the rows give the same totals.
func CSVHeader() []string { return slices.Clone(csvHeader) }

var csvHeader = []string{"scenario", "algorithm", "topology", "servers", "on_error", "seed", "series", "t_s", "client", "key", "copy",
	"sent", "allowed", "rejected", "failed_open", "failed_closed", "retries", "served", "p50_ms", "p99_ms", "remaining", "run"}

// WriteCSV writes r's timeline, a row per client per step, then its state
// series, a row per key per store copy per step; the columns are
// CSVHeader. It is sparse: WriteCSVWith with the default options.
func WriteCSV(w io.Writer, r *sim.Result) error {
	return WriteCSVWith(context.Background(), w, r, WriteOptions{})
}

// WriteCSVWith writes r's timeline and state series as WriteCSV does, as
// opts say (sparse unless Dense, the run's label, the header), and stops,
// with ctx's error wrapped, once ctx is cancelled.
func WriteCSVWith(ctx context.Context, w io.Writer, r *sim.Result, opts WriteOptions) error {
	if opts.Dense {
		if err := sim.CheckDense(r); err != nil {
			return err
		}
	}
	cw := csv.NewWriter(w)
	if !opts.NoHeader {
		cw.Write(csvHeader)
	}
	check := workCheck(ctx)
	visit := func() error {
		if err := check(); err != nil {
			return err
		}
		// A write that failed (a full disk, a closed pipe) stops the
		// rest: its error sticks, and the rows were still being made.
		return cw.Error()
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	run := []string{r.Scenario, r.Algorithm, r.Topology, strconv.Itoa(r.Servers), r.OnError, strconv.FormatUint(r.Seed, 10)}
	keyOf := make(map[string]string, len(r.Clients))
	for _, c := range r.Clients {
		keyOf[c.Name] = c.Key
	}
	row := make([]string, 0, len(csvHeader))
	err := r.EachRow(opts.Dense, func(t *sim.TimelineRow) error {
		if err := visit(); err != nil {
			return err
		}
		row = append(append(row[:0], run...), "client", f(t.TS), t.Client, keyOf[t.Client], "", i(t.Sent), i(t.Allowed), i(t.Rejected),
			i(t.FailedOpen), i(t.FailedClosed), i(t.Retries), i(t.Served), f(t.P50Ms), f(t.P99Ms), "", opts.Label)
		cw.Write(row)
		return nil
	})
	if err != nil {
		return err
	}
	for si := range r.State {
		s := r.StateAs(si, opts.Dense)
		for j, ts := range s.TS {
			if err := visit(); err != nil {
				return err
			}
			remaining := ""
			if j < len(s.Remaining) && s.Remaining[j] >= 0 {
				remaining = i(s.Remaining[j])
			}
			copyName := s.Copy
			if s.Limit != "" {
				copyName += "/" + s.Limit // one of a key's several limits
			}
			row = append(append(row[:0], run...), "state", f(ts), "", s.Key, copyName, "", "", "", "", "", "", "", "", "", remaining, opts.Label)
			cw.Write(row)
		}
	}
	cw.Flush()
	return cw.Error()
}
