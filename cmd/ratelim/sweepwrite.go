package main

// What `ratelim sweep` prints: the table (sim --sweep's columns, or
// --figure's), the JSON (ratelim.sweep/v2) and the CSV, and the line
// saying what a sweep of two fields shows.

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ratelim/ratelim/internal/escape"
	"github.com/ratelim/ratelim/internal/words"
	"github.com/ratelim/ratelim/report"
)

// finite is v for JSON: nil for NaN, which JSON has not.
func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// SweepSchemaV2 names `ratelim sweep --format json`: a row per run, its
// values one per field, and the --figure figures beside the default ones.
const SweepSchemaV2 = "ratelim.sweep/v2"

type sweepJSONv2 struct {
	Schema   string   `json:"schema"`
	Scenario string   `json:"scenario"`
	Fields   []string `json:"fields"`
	// Figures are --figure's, as typed, in the order of each row's
	// figures; empty without --figure.
	Figures []string `json:"figures"`
	// Current is the row of the scenario as given (the file and its
	// flags), -1 for none.
	Current int        `json:"current"`
	Rows    []SweepRow `json:"rows"`
}

// write prints rows as opts.Format says, and draws the plot.
func (p *sweepPlan) write(opts *sweepOptions, rows []SweepRow) error {
	fields := p.fields()
	field := strings.Join(fields, " · ")
	finding := sweepFinding(field, rows)
	if len(fields) > 1 {
		finding = sweepGridFinding(fields, rows)
	}
	if err := opts.Plot.render(func(w io.Writer) error { return p.render(w, rows, opts.Plot) }); err != nil {
		return err
	}
	labels := []string{} // an empty list in the JSON, not null
	for _, f := range p.figures {
		labels = append(labels, f.label())
	}
	switch opts.Format {
	case "json":
		enc := json.NewEncoder(opts.Out)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(sweepJSONv2{Schema: SweepSchemaV2, Scenario: p.sc.Name, Fields: fields, Figures: labels, Current: p.current, Rows: rows})
	case "csv":
		if p.figures != nil {
			return writeFigureCSV(opts.Out, fields, labels, rows, p.current)
		}
		return writeSweepGridCSV(opts.Out, fields, rows, p.current)
	}
	if !opts.Quiet {
		writeSweepTitle(opts.Out, p.sc.Name, rows)
	}
	if p.figures != nil {
		writeFigureRows(opts.Out, fields, labels, p.figures, rows, p.current)
		if !opts.Quiet && p.current >= 0 {
			fmt.Fprintln(opts.Out)
			fmt.Fprintln(opts.Out, currentLegend)
		}
		return nil
	}
	writeSweepRows(opts.Out, fields, rows, p.current)
	if !opts.Quiet {
		writeSweepLegend(opts.Out, finding, p.current)
	}
	return nil
}

// currentMark is put after the value of the row that is the scenario as
// given, and currentLegend says so under the table.
const currentMark, currentLegend = " *", "* the scenario as given: the file and its flags"

// writeSweepLegend is what the default table's columns and marks mean,
// and the finding.
func writeSweepLegend(w io.Writer, finding string, current int) {
	fmt.Fprintln(w, "\nworst 1s: the worst key's most admitted in one second; bound: the most its")
	fmt.Fprintln(w, "design admits in one second (— where none is derived)")
	if current >= 0 {
		fmt.Fprintln(w, currentLegend)
	}
	for _, line := range report.Wrap(escape.Text(finding), 80) {
		fmt.Fprintln(w, line)
	}
}

// markCurrent puts currentMark after the value in the last of the left
// columns of cells' row current+1 (row 0 is the header; -1 marks none),
// once they are cut to widths, and widens that column if it must.
func markCurrent(cells [][]string, left int, widths []int, current int) {
	if current < 0 || left == 0 || current+1 >= len(cells) {
		return
	}
	cells[current+1][left-1] += currentMark
	widths[left-1] = max(widths[left-1], utf8.RuneCountInString(cells[current+1][left-1]))
}

// figureText is a figure as the table shows it: a ratio as the default
// columns show one (1.92×), a percentage with its sign, a count with
// thousands separators, anything else to four figures; — for none.
func figureText(name string, v *float64) string {
	switch {
	case v == nil:
		return "—"
	case name == "admitted_ratio" || name == "peak_ratio":
		return ratioText(*v)
	case name == "rejected_pct":
		return pctText(*v)
	case *v == math.Trunc(*v) && math.Abs(*v) < 1e15:
		return words.Thousands(int64(*v))
	}
	return strconv.FormatFloat(*v, 'g', 4, 64)
}

// writeFigureRows is the table of --figure: a column per field, then
// one per figure, cut to fit 80 columns; the row current (-1 none)
// marked.
func writeFigureRows(w io.Writer, fields, figures []string, figs []sweepFigure, rows []SweepRow, current int) {
	// The fields and figures as typed, a subject a name from the file:
	// escaped, as the values are.
	var header []string
	for _, h := range append(slices.Clone(fields), figures...) {
		header = append(header, escape.Text(h))
	}
	cells := [][]string{header}
	for _, r := range rows {
		line := make([]string, 0, len(fields)+len(figures))
		for _, v := range r.Values {
			line = append(line, escape.Text(v))
		}
		for k, v := range r.Figures {
			line = append(line, figureText(figs[k].name, v))
		}
		cells = append(cells, line)
	}
	writeCells(w, cells, len(fields), current)
}

// tableWidth is the width every table of a sweep fits.
const tableWidth = 80

// minFieldWidth is the narrowest a field's column is cut to: an ellipsis
// and enough of a value on each side of it to tell it apart.
const minFieldWidth = 8

// writeCells lays cells out in columns two spaces apart, the first left
// columns left-aligned (the values) and the rest right-aligned (the
// figures), within tableWidth: the values' columns cut where their
// values are alike (cutColumn), and figures past the width in another
// table below, the values' columns again, never a figure's name cut
// into one another figure's could also be. The row current (0 the first
// after the header; -1 none) is marked after its values (markCurrent).
func writeCells(w io.Writer, cells [][]string, left int, current int) {
	widths := make([]int, len(cells[0]))
	for _, row := range cells {
		for j, c := range row {
			widths[j] = max(widths[j], utf8.RuneCountInString(c))
		}
	}
	// The values take at most half the width, the widest cut first.
	leftTotal := func() int {
		n := 0
		for j := range left {
			n += widths[j] + 2
		}
		return n
	}
	mark := 0
	if current >= 0 {
		mark = utf8.RuneCountInString(currentMark)
	}
	fitLeft := func() {
		for leftTotal()+mark > tableWidth/2 {
			widest := 0
			for j := range left {
				if widths[j] > widths[widest] {
					widest = j
				}
			}
			if widths[widest] <= minFieldWidth {
				break
			}
			widths[widest]--
		}
	}
	fitLeft()
	if legend := letterHeaders(cells[0][:left], widths[:left]); legend != nil {
		// A field's name cut would lose what tells it apart: a letter,
		// and the names in full above the table.
		for _, line := range legend {
			fmt.Fprintln(w, line)
		}
		for j := range left {
			widths[j] = 0
			for _, row := range cells {
				widths[j] = max(widths[j], utf8.RuneCountInString(row[j]))
			}
		}
		fitLeft()
	}
	for j := range left {
		cutColumn(cells, j, widths[j])
	}
	markCurrent(cells, left, widths, current)
	// The figures, as many to a table as fit beside the values.
	var groups [][]int
	used := tableWidth
	for j := left; j < len(widths); j++ {
		room := tableWidth - leftTotal()
		if widths[j] > room {
			// A figure too wide alone beside the values: cut it, as
			// nothing else will share its table.
			widths[j] = max(room, 6)
			cutColumn(cells, j, widths[j])
		}
		if len(groups) == 0 || used+2+widths[j] > tableWidth {
			groups = append(groups, nil)
			used = leftTotal() - 2
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], j)
		used += 2 + widths[j]
	}
	if len(groups) == 0 {
		groups = [][]int{nil}
	}
	for g, cols := range groups {
		if g > 0 {
			fmt.Fprintln(w)
		}
		for _, row := range cells {
			var line strings.Builder
			for j := range left {
				if j > 0 {
					line.WriteString("  ")
				}
				line.WriteString(pad(row[j], widths[j], false))
			}
			for _, j := range cols {
				line.WriteString("  ")
				line.WriteString(pad(row[j], widths[j], true))
			}
			fmt.Fprintln(w, strings.TrimRight(line.String(), " "))
		}
	}
}

// letterHeaders, when a field's name in headers is wider than its column
// (widths), heads every field's column with a letter instead (A, B, in
// place) and returns the line, wrapped at tableWidth, that names each in
// full: "A = clients[app].traffic.rate, B = topology.failover_after".
// A name cut to fit loses its middle, often what tells it apart
// (clients[app]…rate); nil when every name fits.
func letterHeaders(headers []string, widths []int) []string {
	cut := false
	for j, h := range headers {
		cut = cut || utf8.RuneCountInString(h) > widths[j]
	}
	if !cut {
		return nil
	}
	names := make([]string, len(headers))
	for j, h := range headers {
		letter := string(rune('A' + j))
		names[j] = letter + " = " + h
		headers[j] = letter
	}
	return report.Wrap(strings.Join(names, ", "), tableWidth)
}

// cutColumn cuts column j of cells (its header row 0 and its values) to
// width runes by cutKeeping, the values where they are alike.
func cutColumn(cells [][]string, j, width int) {
	values := make([]string, 0, len(cells)-1)
	for _, row := range cells[1:] {
		values = append(values, row[j])
	}
	prefix, suffix := commonEnds(values)
	cells[0][j] = cutKeeping(cells[0][j], width, 0, 0)
	for _, row := range cells[1:] {
		row[j] = cutKeeping(row[j], width, prefix, suffix)
	}
}

// commonEnds are the runes every one of values starts with, and ends
// with (not counting those of the prefix).
func commonEnds(values []string) (prefix, suffix int) {
	if len(values) < 2 {
		return 0, 0
	}
	runes := make([][]rune, len(values))
	shortest := -1
	for i, v := range values {
		runes[i] = []rune(v)
		if shortest < 0 || len(runes[i]) < shortest {
			shortest = len(runes[i])
		}
	}
	same := func(at func(r []rune) rune) bool {
		for _, r := range runes[1:] {
			if at(r) != at(runes[0]) {
				return false
			}
		}
		return true
	}
	for prefix < shortest && same(func(r []rune) rune { return r[prefix] }) {
		prefix++
	}
	for suffix < shortest-prefix && same(func(r []rune) rune { return r[len(r)-1-suffix] }) {
		suffix++
	}
	return prefix, suffix
}

// cutKeeping shortens s to width runes with an ellipsis where it leaves
// runes out: inside the prefix or the suffix it shares with the other
// values of its column where one can take the cut, so that values that
// differ still do (clients[flash-bot] and clients[flood] cut to
// "cl…flash-bot" and "cl…flood" rather than one "clients[…"), or else
// in the middle, keeping both ends.
func cutKeeping(s string, width, prefix, suffix int) string {
	r := []rune(s)
	if len(r) <= width {
		return s
	}
	if width < 2 {
		return string(r[:width])
	}
	drop := len(r) - width + 1 // the runes left out, for one ellipsis
	switch {
	case prefix-1 >= drop:
		// Within the shared prefix, after at least its first rune.
		start := max(1, min(prefix-drop, (width-1)/2))
		return string(r[:start]) + "…" + string(r[start+drop:])
	case suffix-1 >= drop:
		// Within the shared suffix, before at least its last rune.
		end := len(r) - 1
		return string(r[:end-drop]) + "…" + string(r[end:])
	}
	start := (width - 1) / 2
	return string(r[:start]) + "…" + string(r[start+drop:])
}

// writeFigureCSV is --figure's CSV: a column per field, then per figure
// (an empty cell for none), then current: true on the row of the
// scenario as given (current), false on the others.
func writeFigureCSV(w io.Writer, fields, figures []string, rows []SweepRow, current int) error {
	cw := csv.NewWriter(w)
	cw.Write(append(append(slices.Clone(fields), figures...), "current"))
	for i, r := range rows {
		line := slices.Clone(r.Values)
		for _, v := range r.Figures {
			if v == nil {
				line = append(line, "")
				continue
			}
			line = append(line, strconv.FormatFloat(*v, 'f', -1, 64))
		}
		cw.Write(append(line, strconv.FormatBool(i == current)))
	}
	cw.Flush()
	return cw.Error()
}

// writeSweepGridCSV is `ratelim sweep`'s default CSV: a column per
// field, named by it, as --figure's CSV has, then sim --sweep's figures,
// then current, as --figure's CSV has it.
func writeSweepGridCSV(w io.Writer, fields []string, rows []SweepRow, current int) error {
	cw := csv.NewWriter(w)
	cw.Write(append(slices.Clone(fields), "allowed", "ideal_allowed", "admitted_ratio", "worst_key", "max_allowed_1s", "ideal_max_allowed_1s", "peak_ratio", "design_bound_1s", "current"))
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	for n, r := range rows {
		cw.Write(append(slices.Clone(r.Values), i(r.Allowed), i(r.IdealAllowed), f(r.AdmittedRatio), r.WorstKey, i(r.MaxAllowed1s), i(r.IdealMaxAllowed1s), f(r.PeakRatio), i(r.DesignBound1s), strconv.FormatBool(n == current)))
	}
	cw.Flush()
	return cw.Error()
}

// sweepGridFinding says in a line what the rows of two fields show: at
// how many pairs the worst second is more than sweepExcess over the
// exact limiter's, and the most; a grid has no order for sweepFinding's
// "from V on".
func sweepGridFinding(fields []string, rows []SweepRow) string {
	over, most := 0, 0
	for i, r := range rows {
		if r.PeakRatio > sweepExcess {
			over++
		}
		if r.PeakRatio > rows[most].PeakRatio {
			most = i
		}
	}
	at := runLabel(fields, rows[most].Values)
	switch over {
	case 0:
		return fmt.Sprintf("at every pair the worst second is within 5%% of the exact limiter's (at most %s, at %s)", sweepRatio(rows[most].PeakRatio), at)
	case len(rows):
		return fmt.Sprintf("at every pair the worst second is more than 5%% over the exact limiter's, up to %s at %s", sweepRatio(rows[most].PeakRatio), at)
	}
	return fmt.Sprintf("the worst second is more than 5%% over the exact limiter's at %d of %d pairs, up to %s at %s", over, len(rows), sweepRatio(rows[most].PeakRatio), at)
}
