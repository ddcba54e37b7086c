package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/ratelim/ratelim/internal/escape"
	"github.com/ratelim/ratelim/internal/words"
	"github.com/ratelim/ratelim/plots"
	"github.com/ratelim/ratelim/report"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/store"
)

// maxSweepValues is the most values one --sweep takes: a table of 32 rows
// still reads on a screen, and 32 runs at --max-memory each are already
// many for one machine.
const maxSweepValues = 32

// sweepExcess is the worst second's ratio to the exact limiter's past
// which the findings line counts a value as over-admitting: 5% is what
// compare calls within the shared store, and above rounding on a worst
// second of 20.
const sweepExcess = 1.05

// planSimSweep plans `sim --sweep FIELD=VALUES` as `ratelim sweep
// SCENARIO FIELD=VALUES` is planned (planSweep), its errors naming
// --sweep: any field --vs takes, read by the field's own reader with the
// flags (scenarios.Apply), a flag setting the field swept refused
// (checkOnePlace), and the runs bounded together before any starts. At
// most one --sweep: ratelim sweep takes two.
func planSimSweep(opts *simOptions) (*sweepPlan, error) {
	if len(opts.Sweep) > 1 {
		return nil, badInput("--sweep: given %d times (want one FIELD=V1,V2,...: a sweep varies one field; ratelim sweep varies two)", len(opts.Sweep))
	}
	if err := checkSweepFlags(opts); err != nil {
		return nil, err
	}
	if f := opts.Sweep[0]; !strings.Contains(f, "=") || strings.TrimSpace(strings.SplitN(f, "=", 2)[0]) == "" {
		return nil, badInput("--sweep %q: want FIELD=V1,V2,..., e.g. --sweep sync-interval=0,10ms,100ms,never", f)
	}
	return planSweep(context.Background(), &sweepOptions{streams: opts.streams, Scenario: opts.Scenario, Axes: opts.Sweep,
		Format: opts.Format, Quiet: opts.Quiet, Limits: opts.Limits, Plot: opts.Plot, ErrIsTerminal: opts.ErrIsTerminal,
		over: opts.over, by: "--sweep"})
}

// sweepLabel is a value as the table, the JSON and the plot show it: as
// typed, but a store URL without its password.
func sweepLabel(field, value string) string {
	if field == "store" {
		return store.Redacted(value)
	}
	return value
}

// SweepRow is one value of a sweep: the run's totals against the exact
// limiter on the same arrivals, and the worst key's worst second.
type SweepRow struct {
	// Value is the field's value as typed (a store without its password);
	// of two fields, both, " · " between.
	Value string `json:"value"`
	// Values are the value of each field, for `ratelim sweep`.
	Values []string `json:"values,omitempty"`
	// Figures are --figure's, in its order, nil where there is none (a
	// ratio of nothing), for `ratelim sweep`.
	Figures []*float64 `json:"figures,omitempty"`
	// Allowed and IdealAllowed are the run's totals, every key's, and what
	// one exact limiter admits on the same arrivals; AdmittedRatio is the
	// one ÷ the other, 0 when the exact limiter admitted nothing.
	Allowed       int64   `json:"allowed"`
	IdealAllowed  int64   `json:"ideal_allowed"`
	AdmittedRatio float64 `json:"admitted_ratio"`
	// WorstKey is the key whose worst second (MaxAllowed1s) is the most
	// over the exact limiter's (IdealMaxAllowed1s); PeakRatio is that
	// ratio, 0 when the exact limiter admitted nothing on any key.
	WorstKey          string  `json:"worst_key"`
	MaxAllowed1s      int64   `json:"max_allowed_1s"`
	IdealMaxAllowed1s int64   `json:"ideal_max_allowed_1s"`
	PeakRatio         float64 `json:"peak_ratio"`
	// DesignBound1s is the worst key's design_bound_1s: the most the
	// design lets it admit in a second, 0 where none is derived.
	DesignBound1s int64 `json:"design_bound_1s,omitempty"`
	// Result is the run's summary, without its timeline and state.
	Result *sim.Result `json:"result"`
}

// summarise fills row from r.
func (row *SweepRow) summarise(r *sim.Result) {
	t := r.Totals()
	row.Allowed, row.IdealAllowed = t.Allowed, t.IdealAllowed
	if t.IdealAllowed > 0 {
		row.AdmittedRatio = float64(t.Allowed) / float64(t.IdealAllowed)
	}
	worst := -1
	for i, k := range r.Keys {
		if k.IdealMaxAllowed1s <= 0 {
			continue
		}
		ratio := float64(k.MaxAllowed1s) / float64(k.IdealMaxAllowed1s)
		if worst < 0 || ratio > row.PeakRatio {
			worst, row.PeakRatio = i, ratio
		}
	}
	if worst < 0 {
		// No key had an exact second to compare with: the most admitted.
		for i, k := range r.Keys {
			if worst < 0 || k.MaxAllowed1s > r.Keys[worst].MaxAllowed1s {
				worst = i
			}
		}
	}
	if worst >= 0 {
		k := r.Keys[worst]
		row.WorstKey, row.MaxAllowed1s, row.IdealMaxAllowed1s, row.DesignBound1s = k.Key, k.MaxAllowed1s, k.IdealMaxAllowed1s, k.DesignBound1s
	}
	summary := *r
	summary.Timeline, summary.State = nil, nil
	row.Result = &summary
}

// SweepSchema names `sim --sweep --format json`.
const SweepSchema = "ratelim.sweep/v1"

type sweepJSON struct {
	Schema   string     `json:"schema"`
	Scenario string     `json:"scenario"`
	Field    string     `json:"field"`
	Rows     []SweepRow `json:"rows"`
}

// simSweep runs `sim --sweep`'s plan as `ratelim sweep` runs one
// (sweepPlan.run), then writes sim's table, ratelim.sweep/v1 JSON or CSV,
// and plot.
func simSweep(ctx context.Context, opts *simOptions, p *sweepPlan) error {
	sopts := &sweepOptions{streams: opts.streams, Quiet: opts.Quiet, ErrIsTerminal: opts.ErrIsTerminal}
	if p.note != "" && !opts.Quiet {
		fmt.Fprintf(opts.ErrOut, "ratelim: %s\n", escape.Text(p.note))
	}
	rows, err := p.run(ctx, sopts)
	if err != nil {
		return err
	}
	field := p.axes[0].field
	for i := range rows {
		rows[i].Values = nil // v1 has a row's one value, as Value
	}
	finding := sweepFinding(field, rows)
	if err := opts.Plot.render(func(w io.Writer) error {
		return renderSweep(w, p.sc.Name, field, finding, rows, opts.Plot)
	}); err != nil {
		return err
	}
	switch opts.Format {
	case "json":
		enc := json.NewEncoder(opts.Out)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(sweepJSON{Schema: SweepSchema, Scenario: p.sc.Name, Field: field, Rows: rows})
	case "csv":
		return writeSweepCSV(opts.Out, field, rows)
	}
	if !opts.Quiet {
		writeSweepTitle(opts.Out, p.sc.Name, rows)
	}
	writeSweepRows(opts.Out, []string{field}, rows, p.current)
	if !opts.Quiet {
		writeSweepLegend(opts.Out, finding, p.current)
	}
	return nil
}

// runSweep makes n runs on workers goroutines, run i of the scenario
// scenarioOf(i), made as the run starts, and hands each result to
// done(i, result, err) as the run ends, from the goroutine that ran it:
// done keeps what it needs (a row) and the result is dropped, so a
// sweep holds the runs in flight and the rows, never every run's
// timeline. It shows, on a terminal, how far the runs have got: each
// run's share of its virtual time, averaged. done is called once per
// run, whatever order they finish in.
func runSweep(ctx context.Context, prog *progress, n int, scenarioOf func(i int) (sim.Scenario, error), opts sim.Options, workers int, done func(i int, r *sim.Result, err error)) {
	var mu sync.Mutex
	share := make([]float64, n) // each run's done ÷ total
	finished := 0
	tell := func() {
		sum := 0.0
		for _, s := range share {
			sum += s
		}
		prog.show(fmt.Sprintf("%d of %d runs done, %.0f%% of their time", finished, n, 100*sum/float64(n)))
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, max(n, 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				o := opts
				o.Progress = func(d, total time.Duration) {
					mu.Lock()
					defer mu.Unlock()
					if total > 0 {
						share[i] = min(1, float64(d)/float64(total))
					}
					tell()
				}
				sc, err := scenarioOf(i)
				var r *sim.Result
				if err == nil {
					r, err = sim.Run(ctx, sc, o)
				}
				done(i, r, err)
				mu.Lock()
				share[i] = 1
				finished++
				tell()
				mu.Unlock()
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	prog.done()
}

// writeSweepTitle is the line naming the scenario and the settings
// every run had alike (read from the rows' results: a field swept by
// path, limit.algorithm or topology.kind, is left out as its flag's name
// is), the limit, and the exact limiter's figures where every row has
// the same (each on its own run's arrivals).
func writeSweepTitle(w io.Writer, name string, rows []SweepRow) {
	parts := []string{escape.Text(name)}
	add := func(text func(r *sim.Result) string) {
		first := text(rows[0].Result)
		for _, r := range rows[1:] {
			if text(r.Result) != first {
				return
			}
		}
		parts = append(parts, escape.Text(first))
	}
	add(func(r *sim.Result) string { return r.Topology })
	add(func(r *sim.Result) string { return r.Algorithm })
	add(func(r *sim.Result) string {
		return fmt.Sprintf("%d %s", r.Servers, words.Plural(r.Servers, "server", "servers"))
	})
	add(func(r *sim.Result) string { return fmt.Sprintf("seed %d", r.Seed) })
	add(func(r *sim.Result) string { return time.Duration(r.DurationS * float64(time.Second)).String() })
	add(func(r *sim.Result) string { return "store " + store.Redacted(r.Store) })
	fmt.Fprintln(w, strings.Join(parts, " · "))
	for i, line := range report.Wrap(escape.Text(sweepLimitLine(rows)), 78) {
		if i > 0 {
			line = "  " + line
		}
		fmt.Fprintln(w, line)
	}
	same := true
	for _, r := range rows[1:] {
		same = same && r.IdealAllowed == rows[0].IdealAllowed && r.WorstKey == rows[0].WorstKey && r.IdealMaxAllowed1s == rows[0].IdealMaxAllowed1s
	}
	switch {
	case same && len(rows) == 1:
		fmt.Fprintf(w, "the exact limiter on the same arrivals: admitted %s, worst second %s\n", words.Thousands(rows[0].IdealAllowed), words.Thousands(rows[0].IdealMaxAllowed1s))
	case same:
		// Each run's exact limiter sees that run's arrivals, which the
		// sweep may have changed (a client's rate) though the totals
		// came out alike: the figures are the same, not the arrivals.
		fmt.Fprintf(w, "in every run the exact limiter on its arrivals admitted %s, worst second %s\n", words.Thousands(rows[0].IdealAllowed), words.Thousands(rows[0].IdealMaxAllowed1s))
	}
	fmt.Fprintln(w)
}

// sweepLimitLine is the limit the runs had, as sim's title states it:
// "limit 20/s, burst 100, keyed by ip" when every run had the same, and
// each part that differs between runs named as swept: "limit 20/s,
// burst swept, keyed by ip". A key of several limits has its limits in
// one part: "limits per-second 10/s, burst 10; hourly 1000/h, burst
// 1000".
func sweepLimitLine(rows []SweepRow) string {
	type part struct{ name, text string }
	partsOf := func(r *sim.Result) []part {
		l := r.Limit
		key := "keyed by " + l.Key
		if l.Key == string(sim.KeyAuto) {
			key = "keyed by caller (api-key, else user, else ip)"
		}
		var ps []part
		switch {
		case len(l.Limits) > 0:
			texts := make([]string, len(l.Limits))
			for i, p := range l.Limits {
				texts[i] = p.Name + " " + p.Text()
				if p.Shadow {
					texts[i] += " (shadow)"
				}
			}
			ps = append(ps, part{"limits", strings.Join(texts, "; ")})
		case l.MaxInFlight > 0:
			ps = append(ps, part{"concurrency", words.Concurrency(l.MaxInFlight, l.LeaseTTLS)})
		default:
			ps = append(ps, part{"rate", words.Rate(l.RatePerS)})
			if l.WindowS > 0 {
				ps = append(ps, part{"window", "window " + strconv.FormatFloat(l.WindowS, 'f', -1, 64) + "s"})
			} else {
				ps = append(ps, part{"burst", fmt.Sprintf("burst %d", l.Burst)})
			}
		}
		if l.Shadow && len(l.Limits) == 0 {
			ps = append(ps, part{"shadow", "shadow"})
		}
		return append(ps, part{"key", key})
	}
	first := partsOf(rows[0].Result)
	texts := make([]string, len(first))
	for i, p := range first {
		texts[i] = p.text
	}
	for _, r := range rows[1:] {
		ps := partsOf(r.Result)
		if len(ps) != len(first) {
			return "limit swept: its kind differs between runs"
		}
		for i, p := range ps {
			if p.name != first[i].name {
				return "limit swept: its kind differs between runs"
			}
			if p.text != first[i].text {
				texts[i] = p.name + " swept"
			}
		}
	}
	if first[0].name == "limits" {
		return "limits " + strings.Join(texts, ", ")
	}
	return "limit " + strings.Join(texts, ", ")
}

// writeSweepRows is the table: a row per value (per pair of values, a
// column for each field), the worst key's name in the last column when
// the runs have more than one key, cut to fit 80 columns; the row
// current (-1 none) marked after its values (markCurrent).
func writeSweepRows(w io.Writer, fields []string, rows []SweepRow, current int) {
	cells := [][]string{{"admitted", "÷ exact", "worst 1s", "÷ exact", "bound"}}
	manyKeys, keyW := false, 3
	for _, r := range rows {
		bound := "—"
		if r.DesignBound1s > 0 {
			bound = words.Thousands(r.DesignBound1s)
		}
		cells = append(cells, []string{words.Thousands(r.Allowed), sweepRatio(r.AdmittedRatio), words.Thousands(r.MaxAllowed1s), sweepRatio(r.PeakRatio), bound})
		manyKeys = manyKeys || (r.Result != nil && len(r.Result.Keys) > 1)
		keyW = max(keyW, utf8.RuneCountInString(escape.Text(r.WorstKey)))
	}
	widths := make([]int, len(cells[0]))
	for _, row := range cells {
		for j, c := range row {
			widths[j] = max(widths[j], utf8.RuneCountInString(c))
		}
	}
	figuresW := 0
	for _, wd := range widths {
		figuresW += 2 + wd
	}
	// The fields' columns share what the figures and a key of up to 12
	// leave of 80, each cut where its values are alike (cutKeeping),
	// its name in the middle.
	if manyKeys {
		figuresW += 2 + min(keyW, 12)
	}
	if current >= 0 {
		figuresW += utf8.RuneCountInString(currentMark)
	}
	room := max(tableWidth-figuresW-2*(len(fields)-1), minFieldWidth*len(fields))
	fieldCells := make([][]string, len(rows)+1)
	fieldCells[0] = slices.Clone(fields)
	for i, r := range rows {
		for j := range fields {
			fieldCells[i+1] = append(fieldCells[i+1], escape.Text(rowValue(r, j)))
		}
	}
	fit := func() []int {
		fieldW := make([]int, len(fields))
		for _, row := range fieldCells {
			for j, c := range row {
				fieldW[j] = max(fieldW[j], utf8.RuneCountInString(c))
			}
		}
		for total := 0; ; total = 0 {
			widest := 0
			for j, wd := range fieldW {
				total += wd
				if wd > fieldW[widest] {
					widest = j
				}
			}
			if total <= room || fieldW[widest] <= minFieldWidth {
				break
			}
			fieldW[widest]--
		}
		return fieldW
	}
	fieldW := fit()
	if legend := letterHeaders(fieldCells[0], fieldW); legend != nil {
		// A name cut would lose what tells it apart: a letter, and the
		// names in full above the table.
		for _, line := range legend {
			fmt.Fprintln(w, line)
		}
		fieldW = fit()
	}
	for j := range fields {
		cutColumn(fieldCells, j, fieldW[j])
	}
	markCurrent(fieldCells, len(fields), fieldW, current)
	join := func(row []string) string {
		parts := make([]string, len(fields))
		for j := range fields {
			parts[j] = pad(row[j], fieldW[j], false)
		}
		return strings.Join(parts, "  ")
	}
	used := utf8.RuneCountInString(join(fieldCells[0]))
	for _, wd := range widths {
		used += 2 + wd
	}
	for i, row := range cells {
		line := join(fieldCells[i])
		for j, c := range row {
			line += "  " + pad(c, widths[j], true)
		}
		if manyKeys {
			key := "key"
			if i > 0 {
				key = escape.Text(rows[i-1].WorstKey)
			}
			line += "  " + cut(key, max(3, tableWidth-used-2))
		}
		fmt.Fprintln(w, line)
	}
}

// rowValue is r's value of field j: of Values, or Value for `sim
// --sweep`'s one field.
func rowValue(r SweepRow, j int) string {
	if j < len(r.Values) {
		return r.Values[j]
	}
	return r.Value
}

// pad pads s with spaces to width runes, on the left when right-aligned.
func pad(s string, width int, right bool) string {
	n := width - utf8.RuneCountInString(s)
	if n <= 0 {
		return s
	}
	if right {
		return strings.Repeat(" ", n) + s
	}
	return s + strings.Repeat(" ", n)
}

// cut shortens s to width runes, its end an ellipsis when cut.
func cut(s string, width int) string {
	r := []rune(s)
	if len(r) <= width {
		return s
	}
	return string(r[:width-1]) + "…"
}

// sweepRatio is a ratio as the table shows it; — where there is none.
func sweepRatio(v float64) string {
	if v <= 0 {
		return "—"
	}
	return ratioText(v)
}

// sweepFinding says in a line what the rows show: at which values the
// worst second is more than sweepExcess over the exact limiter's ("from
// V on" only when every value after V is too, and none before), how far
// over at most, and whether a worst second passed its design bound.
func sweepFinding(field string, rows []SweepRow) string {
	var over []int
	most, least := 0, 0
	for i, r := range rows {
		if r.PeakRatio > sweepExcess {
			over = append(over, i)
		}
		if r.PeakRatio > rows[most].PeakRatio {
			most = i
		}
		if r.PeakRatio < rows[least].PeakRatio {
			least = i
		}
	}
	// Every value at the most, in order: "1s and never".
	var mostAt []string
	for _, r := range rows {
		if r.PeakRatio == rows[most].PeakRatio {
			mostAt = append(mostAt, r.Value)
		}
	}
	upTo := sweepRatio(rows[most].PeakRatio) + " at " + andList(mostAt)
	var s string
	switch {
	case len(over) == 0:
		s = fmt.Sprintf("at every %s the worst second is within 5%% of the exact limiter's (at most %s)", field, upTo)
	case len(over) == len(rows):
		s = fmt.Sprintf("at every %s the worst second is more than 5%% over the exact limiter's: from %s at %s up to %s", field, sweepRatio(rows[least].PeakRatio), rows[least].Value, upTo)
		if rows[least].PeakRatio == rows[most].PeakRatio {
			// One ratio at every value (or one value): no "from ... up to".
			s = fmt.Sprintf("at every %s the worst second is more than 5%% over the exact limiter's: %s", field, upTo)
		}
	case over[0] == len(rows)-len(over):
		i := over[0]
		s = fmt.Sprintf("the worst second is within 5%% of the exact limiter's up to %s %s, and more from %s on: %s there", field, rows[i-1].Value, rows[i].Value, sweepRatio(rows[i].PeakRatio))
		if rows[most].PeakRatio != rows[i].PeakRatio {
			s += ", up to " + upTo
		}
	default:
		var names []string
		for _, i := range over {
			names = append(names, rows[i].Value)
		}
		s = fmt.Sprintf("the worst second is more than 5%% over the exact limiter's at %s %s", field, andList(names))
		if len(mostAt) == len(over) {
			s += " (" + sweepRatio(rows[most].PeakRatio) + ")"
		} else {
			s += ", up to " + upTo
		}
	}
	var past []string
	for _, r := range rows {
		if r.DesignBound1s > 0 && r.MaxAllowed1s > r.DesignBound1s {
			past = append(past, r.Value)
		}
	}
	if len(past) > 0 {
		s += fmt.Sprintf("; past its design bound at %s", andList(past))
	}
	return s
}

func writeSweepCSV(w io.Writer, field string, rows []SweepRow) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"field", "value", "allowed", "ideal_allowed", "admitted_ratio", "worst_key", "max_allowed_1s", "ideal_max_allowed_1s", "peak_ratio", "design_bound_1s"})
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	for _, r := range rows {
		cw.Write([]string{field, r.Value, i(r.Allowed), i(r.IdealAllowed), f(r.AdmittedRatio), r.WorstKey, i(r.MaxAllowed1s), i(r.IdealMaxAllowed1s), f(r.PeakRatio), i(r.DesignBound1s)})
	}
	cw.Flush()
	return cw.Error()
}

// renderSweep draws the sweep: the ratios of each row, on the values as
// typed.
func renderSweep(w io.Writer, scenario, field, finding string, rows []SweepRow, p plotFlags) error {
	points := make([]plots.SweepPoint, len(rows))
	for i, r := range rows {
		points[i] = plots.SweepPoint{Label: r.Value, PeakRatio: r.PeakRatio, AdmittedRatio: r.AdmittedRatio}
		if r.DesignBound1s > 0 && r.IdealMaxAllowed1s > 0 {
			points[i].BoundRatio = float64(r.DesignBound1s) / float64(r.IdealMaxAllowed1s)
		}
	}
	return plots.Sweep(w, plots.SweepData{Scenario: scenario, Field: field, Finding: finding, Over: sweepExcess, Points: points}, p.options())
}

// checkSweepFlags refuses what --sweep does not go with: --vs, --tui,
// --live, an animated plot (a flag setting the field swept is
// checkOnePlace's).
func checkSweepFlags(opts *simOptions) error {
	switch {
	case len(opts.Vs) > 0:
		return badInput("--sweep and --vs do not go together (a sweep varies one field over its values; for two runs side by side, --vs alone)")
	case opts.TUI:
		return badInput("--sweep and --tui do not go together (the TUI plays one run; --plot draws the sweep)")
	case opts.Live:
		return badInput("--sweep and --live do not go together (a live run is one at a time on real time)")
	case opts.Plot.format == "gif":
		return badInput("--plot: --sweep draws a still chart; write it as .png or .svg")
	}
	return nil
}

// andList joins items as a sentence does: "a", "a and b", "a, b and c".
func andList(items []string) string {
	if len(items) <= 1 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}
