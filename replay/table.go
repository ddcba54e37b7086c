package replay

// The table a person reads: what the log holds, the limits it was
// replayed through, a row per key (the runs side by side under --vs),
// each run's totals, and the suggested limits; narrowed to TableWidth
// columns unless asked to be wide.

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ratelim/ratelim/internal/escape"
	"github.com/ratelim/ratelim/sim"
)

// TableOptions tune WriteTable.
type TableOptions struct {
	// Top is how many keys the table lists, most refused first; 0 lists
	// every key.
	Top int
	// Wide keeps every column. Otherwise a table wider than TableWidth
	// leaves out, in turn, the first refusal's instant and the worst
	// minute (the JSON and CSV have both), and says so.
	Wide bool
}

// TableWidth is the terminal width a table fits unless TableOptions.Wide.
const TableWidth = 80

// DefaultTop is the keys a table lists unless told.
const DefaultTop = 20

// clock formats the log's instants for the table: the time of day when
// the log spans one day, else with the date.
type clock struct{ layout, minute string }

func newClock(l *Log) clock {
	if l.First.UTC().Format(time.DateOnly) == l.Last.UTC().Format(time.DateOnly) {
		return clock{"15:04:05.999", "15:04"}
	}
	return clock{"01-02 15:04:05.999", "01-02 15:04"}
}

func percent(part, whole int64) string {
	if whole == 0 {
		return "0.0"
	}
	return strconv.FormatFloat(100*float64(part)/float64(whole), 'f', 1, 64)
}

// WriteTable writes rep for a person to read.
func WriteTable(w io.Writer, rep *Report, opts TableOptions) error {
	l := rep.Log
	ck := newClock(l)
	last := l.Last.UTC().Format(time.DateTime)
	if ck.minute == "15:04" {
		last = l.Last.UTC().Format(time.TimeOnly)
	}
	fmt.Fprintf(w, "replay of %s\n", escape.Text(name(l.Path)))
	fmt.Fprintf(w, "  %s requests from %s keys, %s to %s UTC\n", thousands(l.Requests), thousands(int64(len(l.Keys))),
		l.First.UTC().Format(time.DateTime), last)
	fmt.Fprintf(w, "  %s log, keyed by %s", l.Trace.Format, keySpec(l))
	if l.Speed != 1 {
		fmt.Fprintf(w, ", played at %g×", l.Speed)
	}
	fmt.Fprintln(w)
	if len(l.Costs) > 0 {
		fmt.Fprintf(w, "  requests priced by route: %s; any other costs 1\n", strings.Join(costTexts(l.Costs), ", "))
	}
	if kl := l.Stats.Keyless; kl > 0 && l.Only == "" {
		fmt.Fprintf(w, "  %s requests without a key are not limited and not counted below\n", thousands(int64(kl)))
	}
	if n := l.Stats.Bad; n > 0 {
		fmt.Fprintf(w, "  %s bad lines skipped", thousands(int64(n)))
		if len(l.Skipped) > 0 {
			fmt.Fprintf(w, ", the first: %s", escape.Text(l.Skipped[0].Error()))
		}
		fmt.Fprintln(w)
	}
	vs := len(rep.Runs) > 1
	for i, run := range rep.Runs {
		text := "limit " + LimitText(run.Scenario.Limit) + ", " + TopologyText(run.Scenario)
		if !vs {
			fmt.Fprintf(w, "  %s\n", text)
			continue
		}
		// A run's label is what --vs changed; on a line of its own when
		// the two do not fit one.
		label := fmt.Sprintf("  %c (%s): ", 'A'+i, run.Label)
		if utf8.RuneCountInString(label+text) > TableWidth {
			label = strings.TrimSuffix(label, " ") + "\n     "
		}
		fmt.Fprintf(w, "%s%s\n", label, text)
	}
	fmt.Fprintln(w)
	var tw table
	first := rep.Runs[0]
	peakHead := "PEAK/" + sim.ShortDuration(first.PeakWindow)
	head := []string{"KEY", "REQUESTS"}
	// The columns a narrow table leaves out, in the order it does.
	var firstCols, worstCols []int
	for i := range rep.Runs {
		if vs {
			// Side by side, the first refusal is left to the JSON and CSV.
			run := string(rune('A' + i))
			head = append(head, "REJECTED "+run, "WORST MINUTE "+run)
			worstCols = append(worstCols, len(head)-1)
		} else {
			head = append(head, "REJECTED", "%", "FIRST 429", "WORST MINUTE")
			firstCols = append(firstCols, len(head)-2)
			worstCols = append(worstCols, len(head)-1)
		}
	}
	hasPeaks := len(l.Peaks) > 0
	if hasPeaks {
		head = append(head, peakHead)
	}
	tw.add(head...)
	others := make([]map[string]KeyReport, len(rep.Runs))
	for i, run := range rep.Runs[1:] {
		others[i+1] = make(map[string]KeyReport, len(run.Keys))
		for _, k := range run.Keys {
			others[i+1][k.Key] = k
		}
	}
	shown := first.Keys
	if opts.Top > 0 && len(shown) > opts.Top {
		shown = shown[:opts.Top]
	}
	for _, k := range shown {
		row := []string{escape.Text(k.Key), thousands(k.Requests)}
		for i := range rep.Runs {
			kr := k
			if i > 0 {
				kr = others[i][k.Key]
			}
			firstAt, worst := "-", "-"
			if kr.Rejected > 0 {
				firstAt = kr.FirstRejected.Format(ck.layout)
				worst = fmt.Sprintf("%s (%s)", kr.WorstMinute.Format(ck.minute), thousands(kr.WorstMinuteRejected))
			}
			row = append(row, thousands(kr.Rejected))
			if !vs {
				row = append(row, percent(kr.Rejected, kr.Requests), firstAt)
			}
			row = append(row, worst)
		}
		if hasPeaks {
			row = append(row, thousands(int64(k.Peak)))
		}
		tw.add(row...)
	}
	if rest := len(first.Keys) - len(shown); rest > 0 {
		var rejected int64
		for _, k := range first.Keys[len(shown):] {
			rejected += k.Rejected
		}
		tw.note(fmt.Sprintf("(%s more keys, %s requests rejected; --top 0 lists every key)", thousands(int64(rest)), thousands(rejected)))
	}
	total := []string{"TOTAL", thousands(first.Totals.Requests)}
	for _, run := range rep.Runs {
		total = append(total, thousands(run.Totals.Rejected))
		if !vs {
			total = append(total, percent(run.Totals.Rejected, run.Totals.Requests), "")
		}
		total = append(total, "")
	}
	tw.add(total...)
	if !opts.Wide {
		var left []string
		if tw.width() > TableWidth && len(firstCols) > 0 {
			tw.drop(firstCols)
			left = append(left, "first 429s")
		}
		if tw.width() > TableWidth {
			tw.drop(worstCols)
			left = append(left, "worst minutes")
		}
		if len(left) > 0 {
			tw.note(fmt.Sprintf("(%s left out to fit %d columns; --wide shows them)",
				strings.Join(left, " and "), TableWidth))
		}
	}
	if err := tw.write(w); err != nil {
		return err
	}
	for i, run := range rep.Runs {
		label := ""
		if vs {
			label = fmt.Sprintf("%c: ", 'A'+i)
		}
		fmt.Fprintf(w, "%s%s of %s keys throttled, %s of %s requests rejected (%s%%)\n", label,
			thousands(int64(run.Totals.Throttled)), thousands(int64(run.Totals.Keys)),
			thousands(run.Totals.Rejected), thousands(run.Totals.Requests), percent(run.Totals.Rejected, run.Totals.Requests))
	}
	if len(rep.Suggestions) > 0 {
		return writeSuggestions(w, rep)
	}
	return nil
}

func writeSuggestions(w io.Writer, rep *Report) error {
	run := rep.Runs[0]
	p := run.Scenario.Limit.Params
	fmt.Fprintln(w)
	if p.Window > 0 {
		fmt.Fprintf(w, "Limits that leave a share of keys untouched, from each key's peak in any %s,\n", sim.ShortDuration(run.PeakWindow))
	} else {
		fmt.Fprintf(w, "Bursts that leave a share of keys untouched at %s, from each key's requests,\n", p.Rate)
	}
	window := p.Window > 0
	lim := run.Scenario.Limit
	if window {
		fmt.Fprintf(w, "each replayed by %s (window %s) to count what it would refuse:\n", lim.Algorithm, sim.ShortDuration(p.Window))
	} else {
		fmt.Fprintf(w, "each replayed by %s to count what it would refuse:\n", lim.Algorithm)
	}
	var tw table
	peak := "PEAK/" + sim.ShortDuration(run.PeakWindow)
	if window {
		tw.add("UNTOUCHED", "KEYS", peak, "LIMIT", "REJECTED", "%", "THROTTLED")
	} else {
		tw.add("UNTOUCHED", "KEYS", "BURST", "REJECTED", "%", "THROTTLED")
	}
	for _, s := range rep.Suggestions {
		row := []string{fmt.Sprintf("%g%%", 100*s.Quantile), fmt.Sprintf("%s of %s", thousands(int64(s.Untouched)), thousands(int64(len(rep.Log.Keys))))}
		if window {
			row = append(row, thousands(int64(s.InWindow)), s.Params.Rate.String())
		} else {
			row = append(row, thousands(s.Burst))
		}
		row = append(row, thousands(s.Run.Totals.Rejected), percent(s.Run.Totals.Rejected, s.Run.Totals.Requests), keysText(s.Run.Totals.Throttled))
		tw.add(row...)
	}
	return tw.write(w)
}

// table lays out rows in columns two spaces apart, the first (the key)
// aligned left and the figures right; a note is a line of its own.
type table struct {
	rows [][]string // a note is a row of one cell, with noteMark before it
}

const noteMark = "\x00"

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) note(text string) { t.rows = append(t.rows, []string{noteMark, text}) }

// drop removes the columns at the indexes cols from every row.
func (t *table) drop(cols []int) {
	for ri, r := range t.rows {
		if r[0] == noteMark {
			continue
		}
		kept := r[:0:0]
		for i, c := range r {
			if !slices.Contains(cols, i) {
				kept = append(kept, c)
			}
		}
		t.rows[ri] = kept
	}
}

// width is the widest line write would write, notes aside.
func (t *table) width() int {
	widths := t.widths()
	n := 0
	for _, w := range widths {
		n += w + 2
	}
	return max(n-2, 0)
}

func (t *table) widths() []int {
	var widths []int
	for _, r := range t.rows {
		if r[0] == noteMark {
			continue
		}
		for i, c := range r {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	return widths
}

func (t *table) write(w io.Writer) error {
	widths := t.widths()
	var b strings.Builder
	for _, r := range t.rows {
		if r[0] == noteMark {
			b.WriteString(r[1] + "\n")
			continue
		}
		var line strings.Builder
		for i, c := range r {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			switch {
			case i == 0:
				line.WriteString(c + pad)
			default:
				line.WriteString("  " + pad + c)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func keySpec(l *Log) string {
	if s := l.Trace.Key.String(); s != "" {
		return s
	}
	return "its default key"
}

func keysText(n int) string {
	if n == 1 {
		return "1 key"
	}
	return thousands(int64(n)) + " keys"
}
