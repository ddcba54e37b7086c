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
	"github.com/ratelim/ratelim/internal/words"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/trace"
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
	// Location is the zone the table's times are in: UTC when nil. (The
	// JSON and CSV are in UTC whatever it is.)
	Location *time.Location
}

// TableWidth is the terminal width a table fits unless TableOptions.Wide.
const TableWidth = 80

// DefaultTop is the keys a table lists unless told.
const DefaultTop = 20

// clock formats the log's instants for the table, in its zone: the time
// of day when the log spans one day there, else with the date.
type clock struct {
	layout, minute string
	loc            *time.Location
}

func newClock(l *Log, loc *time.Location) clock {
	if loc == nil {
		loc = time.UTC
	}
	ck := clock{"01-02 15:04:05.999", "01-02 15:04", loc}
	if l.First.In(loc).Format(time.DateOnly) == l.Last.In(loc).Format(time.DateOnly) {
		ck = clock{"15:04:05.999", "15:04", loc}
	}
	if OffsetChanges(l.First, l.Last, loc) {
		// 02:30 twice on the night clocks go back: each time says which.
		ck.layout += " MST"
		ck.minute += " MST"
	}
	return ck
}

// OffsetChanges says loc's offset from UTC changes between first and
// last (a daylight-saving change): times of day then need their zone's
// abbreviation or offset to say which of two they are.
func OffsetChanges(first, last time.Time, loc *time.Location) bool {
	_, end := first.In(loc).ZoneBounds()
	return !end.IsZero() && !end.After(last)
}

// zoneName names the clock's zone as it was given: "UTC", "Europe/Paris".
func (ck clock) zoneName() string { return ck.loc.String() }

func percent(part, whole int64) string {
	if whole == 0 {
		return "0.0"
	}
	return strconv.FormatFloat(100*float64(part)/float64(whole), 'f', 1, 64)
}

// WriteTable writes rep for a person to read: what the log holds, the
// limit (or limits, side by side) it was replayed through, a row per key
// with the first run's most refused keys first, each run's totals, and the
// suggested limits when rep has them.
func WriteTable(w io.Writer, rep *Report, opts TableOptions) error {
	ck := newClock(rep.Log, opts.Location)
	writeLogSummary(w, rep.Log, ck)
	if len(rep.Runs) > 0 {
		if warn := ResolutionWarning(rep.Log, rep.Runs[0].Scenario.Limit); warn != "" {
			writeWrapped(w, "  ", warn)
		}
	}
	if len(rep.Runs) == 0 {
		// --suggest recommended no limit: no replay is shown as chosen.
		fmt.Fprintln(w, "  no limit replayed for the table of keys: --suggest recommended none (below)")
	} else {
		writeRunLimits(w, rep.Runs)
		fmt.Fprintln(w)
		if err := keyTable(rep, opts, ck).write(w); err != nil {
			return err
		}
		writeRunTotals(w, rep.Runs)
	}
	if rep.Frontier != nil {
		if err := writeFrontier(w, rep); err != nil {
			return err
		}
	}
	return nil
}

// writeLogSummary writes what the log holds: its requests, keys and span,
// how it was read and played, and what of it the table does not count.
func writeLogSummary(w io.Writer, l *Log, ck clock) {
	firstLayout, lastLayout := time.DateTime, time.DateTime
	if !strings.HasPrefix(ck.minute, "01-02") {
		lastLayout = time.TimeOnly
	}
	if OffsetChanges(l.First, l.Last, ck.loc) {
		firstLayout += " MST"
		lastLayout += " MST"
	}
	first, last := l.First.In(ck.loc).Format(firstLayout), l.Last.In(ck.loc).Format(lastLayout)
	fmt.Fprintf(w, "replay of %s\n", escape.Text(name(l.Path)))
	fmt.Fprintf(w, "  %s from %s, %s to %s %s\n", words.Count(l.Requests, "request", "requests"), words.Count(len(l.Keys), "key", "keys"),
		first, last, ck.zoneName())
	fmt.Fprintf(w, "  %s log, keyed by %s", l.Trace.Format, keySpec(l))
	if res := ResolutionText(l); res != "" {
		fmt.Fprintf(w, ", %s", res)
	}
	if l.Speed != 1 {
		fmt.Fprintf(w, ", played at %g×", l.Speed)
	}
	fmt.Fprintln(w)
	if l.SpreadSkipped {
		writeWrapped(w, "  ", fmt.Sprintf("not spread: its %s are finer than the limit refills (every %s), so each request is replayed at its logged instant", trace.ResolutionText(l.Stats.Resolution), words.Duration(l.SpreadFinerThan)))
	}
	if len(l.Costs) > 0 {
		fmt.Fprintf(w, "  requests priced by route: %s; any other costs 1\n", strings.Join(costTexts(l.Costs), ", "))
	}
	if kl := l.Stats.Keyless; kl > 0 && l.Only == "" {
		fmt.Fprintf(w, "  %s requests without a key are not limited and not counted below\n", words.Thousands(int64(kl)))
	}
	if n := l.Stats.Bad; n > 0 {
		fmt.Fprintf(w, "  %s skipped", words.Count(n, "bad line", "bad lines"))
		if len(l.Skipped) > 0 {
			fmt.Fprintf(w, ", the first: %s", escape.Text(l.Skipped[0].Error()))
		}
		fmt.Fprintln(w)
	}
}

// writeRunLimits writes each run's limit and topology; with several runs,
// each labelled with its column letter and what --vs changed.
func writeRunLimits(w io.Writer, runs []*Run) {
	vs := len(runs) > 1
	for i, run := range runs {
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
}

// keyTable lays out the table of keys: a heading, a row per key shown (the
// first run's order, opts.Top of them), a note on the keys left out, the
// totals, and, unless opts.Wide, the columns that do not fit left out.
func keyTable(rep *Report, opts TableOptions, ck clock) *table {
	var tw table
	first := rep.Runs[0]
	hasPeaks := len(rep.Log.Peaks) > 0
	head, firstCols, worstCols := keyTableHead(rep.Runs, first.PeakWindow, hasPeaks)
	tw.add(head...)
	others := keysOfRuns(rep.Runs)
	shown := first.Keys
	if opts.Top > 0 && len(shown) > opts.Top {
		shown = shown[:opts.Top]
	}
	for _, k := range shown {
		tw.add(keyRow(k, others, hasPeaks, ck)...)
	}
	if rest := len(first.Keys) - len(shown); rest > 0 {
		var rejected int64
		for _, k := range first.Keys[len(shown):] {
			rejected += k.Rejected
		}
		tw.note(fmt.Sprintf("(%s more keys, %s requests rejected; --top 0 lists every key)", words.Thousands(int64(rest)), words.Thousands(rejected)))
	}
	vs := len(rep.Runs) > 1
	total := []string{"TOTAL", words.Thousands(first.Totals.Requests)}
	for _, run := range rep.Runs {
		total = append(total, words.Thousands(run.Totals.Rejected))
		if !vs {
			total = append(total, percent(run.Totals.Rejected, run.Totals.Requests), "")
		}
		total = append(total, "")
	}
	tw.add(total...)
	if !opts.Wide {
		tw.fit(firstCols, worstCols)
	}
	return &tw
}

// keyTableHead is the table's heading, and the columns a narrow table
// leaves out, in the order it does: each run's first refusal (firstCols;
// none side by side, where it is left to the JSON and CSV), then its worst
// minute (worstCols). peakWindow names the peak column, there if hasPeaks.
func keyTableHead(runs []*Run, peakWindow time.Duration, hasPeaks bool) (head []string, firstCols, worstCols []int) {
	head = []string{"KEY", "REQUESTS"}
	for i := range runs {
		if len(runs) > 1 {
			run := string(rune('A' + i))
			head = append(head, "REJECTED "+run, "WORST MINUTE "+run)
			worstCols = append(worstCols, len(head)-1)
		} else {
			head = append(head, "REJECTED", "%", "FIRST 429", "WORST MINUTE")
			firstCols = append(firstCols, len(head)-2)
			worstCols = append(worstCols, len(head)-1)
		}
	}
	if hasPeaks {
		head = append(head, "PEAK/"+words.Duration(peakWindow))
	}
	return head, firstCols, worstCols
}

// keysOfRuns indexes each run's keys after the first by name, for the
// rows, which follow the first run's order; its first entry is nil.
func keysOfRuns(runs []*Run) []map[string]KeyReport {
	others := make([]map[string]KeyReport, len(runs))
	for i, run := range runs[1:] {
		others[i+1] = make(map[string]KeyReport, len(run.Keys))
		for _, k := range run.Keys {
			others[i+1][k.Key] = k
		}
	}
	return others
}

// keyRow is key k's row: its requests, then for each run (others, from
// keysOfRuns) what it refused, and when, and its peak if hasPeaks.
func keyRow(k KeyReport, others []map[string]KeyReport, hasPeaks bool, ck clock) []string {
	vs := len(others) > 1
	row := []string{tableKey(k.Key), words.Thousands(k.Requests)}
	for i := range others {
		kr := k
		if i > 0 {
			kr = others[i][k.Key]
		}
		firstAt, worst := "-", "-"
		if kr.Rejected > 0 {
			firstAt = kr.FirstRejected.In(ck.loc).Format(ck.layout)
			worst = fmt.Sprintf("%s (%s)", kr.WorstMinute.In(ck.loc).Format(ck.minute), words.Thousands(kr.WorstMinuteRejected))
		}
		row = append(row, words.Thousands(kr.Rejected))
		if !vs {
			row = append(row, percent(kr.Rejected, kr.Requests), firstAt)
		}
		row = append(row, worst)
	}
	if hasPeaks {
		row = append(row, words.Thousands(int64(k.Peak)))
	}
	return row
}

// fit leaves out columns until the table fits TableWidth, the first
// refusals (firstCols) before the worst minutes (worstCols), and notes
// what it left out.
func (t *table) fit(firstCols, worstCols []int) {
	var left []string
	if t.width() > TableWidth && len(firstCols) > 0 {
		t.drop(firstCols)
		left = append(left, "first 429s")
		// The columns after those dropped have moved left.
		shifted := make([]int, len(worstCols))
		for i, c := range worstCols {
			shifted[i] = c
			for _, f := range firstCols {
				if f < c {
					shifted[i]--
				}
			}
		}
		worstCols = shifted
	}
	if t.width() > TableWidth {
		t.drop(worstCols)
		left = append(left, "worst minutes")
	}
	if len(left) > 0 {
		t.note(fmt.Sprintf("(%s left out to fit %d columns; --wide shows them)",
			strings.Join(left, " and "), TableWidth))
	}
}

// writeRunTotals writes each run's throttled keys and refused requests.
func writeRunTotals(w io.Writer, runs []*Run) {
	vs := len(runs) > 1
	for i, run := range runs {
		label := ""
		if vs {
			label = fmt.Sprintf("%c: ", 'A'+i)
		}
		fmt.Fprintf(w, "%s%s of %s throttled, %s of %s requests rejected (%s%%)\n", label,
			words.Thousands(int64(run.Totals.Throttled)), words.Count(run.Totals.Keys, "key", "keys"),
			words.Thousands(run.Totals.Rejected), words.Thousands(run.Totals.Requests), percent(run.Totals.Rejected, run.Totals.Requests))
	}
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

// ResolutionText says how fine the log's times are, and how they were
// spread if they were: "whole-second times", "whole-second times spread
// over each 1s".
func ResolutionText(l *Log) string {
	text := trace.ResolutionText(l.Stats.Resolution)
	if text != "" && l.Trace.Spread > 0 {
		text += " spread over each " + words.Duration(l.Trace.Spread)
	}
	return text
}

// RefillInterval is how often limit frees room for one more request: the
// window, for the window algorithms, else a period over the rate's count
// (500ms at 2/s); 0 when the rate refills nothing.
func RefillInterval(limit sim.Limit) time.Duration {
	p := limit.Params
	if p.Window > 0 {
		return p.Window
	}
	if p.Rate.N <= 0 {
		return 0
	}
	return p.Rate.Per / time.Duration(p.Rate.N)
}

// ResolutionWarning is the warning of a log whose times are coarser than
// limit refills, replayed as logged: a tick's requests arrive at once,
// where they came one after another, and the limit refuses more of them
// than it did on the day. "" when the times are fine enough, or spread.
func ResolutionWarning(l *Log, limit sim.Limit) string {
	res, refill := l.Stats.Resolution, RefillInterval(limit)
	if l.Trace.Spread > 0 || res <= 0 || refill <= 0 || res <= refill {
		return ""
	}
	what := fmt.Sprintf("%s refills (%s)", limit.Params.Rate, words.Duration(refill))
	if limit.Params.Window > 0 {
		what = fmt.Sprintf("the %s window", words.Duration(refill))
	}
	tick := "a " + words.Duration(res) + " tick"
	if res == time.Second {
		tick = "a second"
	}
	return fmt.Sprintf("warning: times fall on %s ticks, coarser than %s: %s's requests arrive at once (--spread paces them)", words.Duration(res), what, tick)
}

// writeWrapped writes text in lines of at most TableWidth columns, each
// after indent, broken at spaces.
func writeWrapped(w io.Writer, indent, text string) {
	line := indent
	for _, word := range strings.Fields(text) {
		if line != indent && utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) > TableWidth {
			fmt.Fprintln(w, line)
			line = indent
		}
		if line != indent {
			line += " "
		}
		line += word
	}
	if line != indent {
		fmt.Fprintln(w, line)
	}
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
	return words.Thousands(int64(n)) + " keys"
}
