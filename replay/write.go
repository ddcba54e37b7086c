package replay

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/internal/escape"
	"github.com/ratelim/ratelim/routecost"
	"github.com/ratelim/ratelim/sim"
)

// Schema names the JSON a replay writes.
const Schema = "ratelim.replay/v1"

// Report is a replay: the log, the runs (one, or two with --vs side by
// side), and the suggested limits when asked for.
type Report struct {
	Log         *Log
	Runs        []*Run
	Suggestions []Suggestion
}

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

// LimitText describes a run's limit: "token-bucket 100/m burst 20".
func LimitText(l sim.Limit) string {
	p := l.Params
	s := l.Algorithm + " " + p.Rate.String()
	for _, name := range paramsOf(l.Algorithm) {
		switch name {
		case "burst":
			s += fmt.Sprintf(" burst %d", p.Burst)
		case "window":
			s += " window " + sim.ShortDuration(p.Window)
		}
	}
	return s
}

// paramsOf are the parameters the named algorithm reads.
func paramsOf(algorithm string) []string {
	for _, info := range algorithms.Catalog() {
		if info.Name == algorithm {
			return info.Params
		}
	}
	return nil
}

// TopologyText describes where a run's counter lives: "shared memory, 1
// server".
func TopologyText(sc sim.Scenario) string {
	storeName := sim.StoreLabel(sc.Topology.Store)
	if storeName == "" {
		storeName = "memory"
	}
	servers := "1 server"
	if sc.Servers != 1 {
		servers = fmt.Sprintf("%d servers", sc.Servers)
	}
	return fmt.Sprintf("%s %s, %s", sc.Topology.Kind, storeName, servers)
}

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

// The JSON document, ratelim.replay/v1.
type (
	jsonReport struct {
		Schema      string           `json:"schema"`
		Log         jsonLog          `json:"log"`
		Runs        []jsonRun        `json:"runs"`
		Suggestions []jsonSuggestion `json:"suggestions,omitempty"`
	}
	jsonLog struct {
		File         string  `json:"file"`
		Format       string  `json:"format"`
		Key          string  `json:"key"`
		First        string  `json:"first"`
		Last         string  `json:"last"`
		Speed        float64 `json:"speed"`
		Lines        int     `json:"lines"`
		Requests     int64   `json:"requests"`
		Keys         int     `json:"keys"`
		Keyless      int     `json:"keyless"`
		Filtered     int     `json:"filtered"`
		SkippedLines int     `json:"skipped_lines"`
		// Costs are the --cost rules requests were priced by, as given;
		// absent when every request cost 1. Added to v1.
		Costs []string `json:"costs,omitempty"`
	}
	jsonLimit struct {
		Algorithm string  `json:"algorithm"`
		Rate      string  `json:"rate"`
		Burst     int64   `json:"burst,omitempty"`
		WindowS   float64 `json:"window_s,omitempty"`
	}
	jsonRun struct {
		Label       string    `json:"label"`
		Limit       jsonLimit `json:"limit"`
		Topology    string    `json:"topology"`
		Store       string    `json:"store"`
		Servers     int       `json:"servers"`
		PeakWindowS float64   `json:"peak_window_s"`
		Totals      jsonTotal `json:"totals"`
		Keys        []jsonKey `json:"keys,omitempty"`
	}
	jsonTotal struct {
		Keys          int   `json:"keys"`
		ThrottledKeys int   `json:"throttled_keys"`
		Requests      int64 `json:"requests"`
		Rejected      int64 `json:"rejected"`
	}
	jsonKey struct {
		Key                 string `json:"key"`
		Requests            int64  `json:"requests"`
		Rejected            int64  `json:"rejected"`
		FirstRejected       string `json:"first_rejected,omitempty"`
		WorstMinute         string `json:"worst_minute,omitempty"`
		WorstMinuteRejected int64  `json:"worst_minute_rejected,omitempty"`
		Peak                int    `json:"peak,omitempty"`
		BurstNeeded         int64  `json:"burst_needed,omitempty"`
	}
	jsonSuggestion struct {
		Quantile      float64   `json:"quantile"`
		Peak          int       `json:"peak"`
		Burst         int64     `json:"burst"`
		UntouchedKeys int       `json:"untouched_keys"`
		Tried         jsonLimit `json:"tried"`
		Totals        jsonTotal `json:"totals"`
	}
)

func limitJSON(l sim.Limit) jsonLimit {
	j := jsonLimit{Algorithm: l.Algorithm, Rate: l.Params.Rate.String()}
	for _, name := range paramsOf(l.Algorithm) {
		switch name {
		case "burst":
			j.Burst = l.Params.Burst
		case "window":
			j.WindowS = l.Params.Window.Seconds()
		}
	}
	return j
}

func totalsJSON(t Totals) jsonTotal {
	return jsonTotal{Keys: t.Keys, ThrottledKeys: t.Throttled, Requests: t.Requests, Rejected: t.Rejected}
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// WriteJSON writes rep as one ratelim.replay/v1 object.
func WriteJSON(w io.Writer, rep *Report) error {
	l := rep.Log
	doc := jsonReport{Schema: Schema, Log: jsonLog{
		File: name(l.Path), Format: l.Trace.Format.String(), Key: keySpec(l),
		First: stamp(l.First), Last: stamp(l.Last), Speed: l.Speed,
		Lines: l.Stats.Lines, Requests: l.Requests, Keys: len(l.Keys), Keyless: l.Stats.Keyless,
		Filtered: l.Stats.Filtered, SkippedLines: l.Stats.Bad, Costs: costTexts(l.Costs),
	}}
	for _, run := range rep.Runs {
		sc := run.Scenario
		jr := jsonRun{Label: run.Label, Limit: limitJSON(sc.Limit), Topology: string(sc.Topology.Kind),
			Store: sim.StoreLabel(sc.Topology.Store), Servers: sc.Servers, PeakWindowS: run.PeakWindow.Seconds(), Totals: totalsJSON(run.Totals)}
		if jr.Store == "" {
			jr.Store = "memory"
		}
		jr.Keys = make([]jsonKey, len(run.Keys))
		for i, k := range run.Keys {
			jr.Keys[i] = jsonKey{Key: escape.Data(k.Key), Requests: k.Requests, Rejected: k.Rejected, FirstRejected: stamp(k.FirstRejected),
				WorstMinute: stamp(k.WorstMinute), WorstMinuteRejected: k.WorstMinuteRejected, Peak: k.Peak, BurstNeeded: k.Burst}
		}
		doc.Runs = append(doc.Runs, jr)
	}
	for _, s := range rep.Suggestions {
		lim := rep.Runs[0].Scenario.Limit
		lim.Params = s.Params
		doc.Suggestions = append(doc.Suggestions, jsonSuggestion{Quantile: s.Quantile, Peak: s.InWindow, Burst: s.Burst,
			UntouchedKeys: s.Untouched, Tried: limitJSON(lim), Totals: totalsJSON(s.Run.Totals)})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(doc)
}

// CSVHeader is the header of WriteCSV's rows.
var CSVHeader = []string{"run", "key", "requests", "rejected", "first_rejected", "worst_minute", "worst_minute_rejected", "peak", "burst_needed"}

// WriteCSV writes a row per key and run, under one header.
func WriteCSV(w io.Writer, rep *Report) error {
	cw := csv.NewWriter(w)
	cw.Write(CSVHeader)
	for _, run := range rep.Runs {
		for _, k := range run.Keys {
			cw.Write([]string{run.Label, escape.Data(k.Key), itoa(k.Requests), itoa(k.Rejected), stamp(k.FirstRejected), stamp(k.WorstMinute),
				itoa(k.WorstMinuteRejected), itoa(int64(k.Peak)), itoa(k.Burst)})
		}
	}
	cw.Flush()
	return cw.Error()
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func keysText(n int) string {
	if n == 1 {
		return "1 key"
	}
	return thousands(int64(n)) + " keys"
}

// costTexts are rules as people write them: "GET /search*=5".
func costTexts(rules []routecost.Rule) []string {
	var out []string
	for _, r := range rules {
		out = append(out, r.String())
	}
	return out
}
