package replay

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/internal/escape"
	"github.com/ratelim/ratelim/internal/words"
	"github.com/ratelim/ratelim/trace"
)

// maxKeysListed is how many throttled keys a row's line names.
const maxKeysListed = 4

// rateText is a rate as --limit takes it, its period in words: "1/s",
// "15/10m".
func rateText(r algorithms.Rate) string {
	switch r.Per {
	case time.Second, time.Minute, time.Hour:
		return r.String()
	}
	return fmt.Sprintf("%d/%s", r.N, words.Duration(r.Per))
}

// rowLimit is a row's limit as flags give it: "--limit 1/s --burst 14",
// "--algorithm sliding-window --limit 1200/m" (a window algorithm's, its
// window the period), the algorithm named unless it is the default.
func (f *Frontier) rowLimit(row FrontierRow) string {
	p := row.Params
	algorithm := ""
	if a := f.Scenario.Limit.Algorithm; a != DefaultAlgorithm {
		// The command to paste replays the same algorithm.
		algorithm = "--algorithm " + a + " "
	}
	if f.Window {
		return algorithm + "--limit " + rateText(p.Rate)
	}
	return fmt.Sprintf("%s--limit %s --burst %d", algorithm, rateText(p.Rate), p.Burst)
}

// DefaultAlgorithm is the algorithm replay uses unless told.
const DefaultAlgorithm = "token-bucket"

// RowName is a row's limit in short, as the table names it: "1/s burst
// 14", "1200/m".
func RowName(f *Frontier, row FrontierRow) string { return f.rowName(row) }

// rowName is a row's limit in short: "1/s burst 14", "1200/m".
func (f *Frontier) rowName(row FrontierRow) string {
	if f.Window {
		return rateText(row.Params.Rate)
	}
	return fmt.Sprintf("%s burst %s", rateText(row.Params.Rate), words.Thousands(row.Params.Burst))
}

// writeFrontier writes the frontier: how its rows were chosen, the
// outliers and the rule that found them, a row per limit (every figure
// measured by its replay), the keys each throttles, the recommended row,
// and any row whose replay differs from what the profiles predicted.
func writeFrontier(w io.Writer, rep *Report) error {
	f := rep.Frontier
	lim := f.Scenario.Limit
	fmt.Fprintln(w)
	bulk := "every key but the outliers"
	if f.Quantile > 0 {
		bulk = fmt.Sprintf("%g%% of the keys", 100*f.Quantile)
	}
	headroom := fmt.Sprintf("%g%% headroom", 100*f.Headroom)
	var how string
	switch {
	case f.Window:
		how = fmt.Sprintf("Suggested limits for %s: for each window, the count that spares %s, plus %s; each replayed, and every figure below is its replay's.", lim.Algorithm, bulk, headroom)
	case f.Pinned:
		how = fmt.Sprintf("Suggested limit for %s at %s: the smallest burst that spares %s, plus %s; replayed, and every figure below is its replay's.", lim.Algorithm, rateText(f.Rows[0].Params.Rate), bulk, headroom)
	default:
		lo, hi := f.bulkRange()
		how = fmt.Sprintf("Suggested limits for %s: rates on a 1-2-5 grid from the bulk's median mean rate (%s/s) to its busiest second (%s); at each, the smallest burst that spares %s, plus %s; each replayed, and every figure below is its replay's.",
			lim.Algorithm, strconv.FormatFloat(lo, 'g', 2, 64), words.Thousands(int64(hi)), bulk, headroom)
	}
	if res := trace.ResolutionText(rep.Log.Stats.Resolution); res != "" {
		how += " Measured on " + ResolutionText(rep.Log) + "."
	}
	writeWrapped(w, "", how)
	writeOutliers(w, rep)
	fmt.Fprintln(w)

	var tw table
	if f.Window {
		tw.add("", "WINDOW", "NEEDS", "LIMIT", "SPARED", "THROTTLED", "REJECTED", "%")
	} else {
		tw.add("", "RATE", "NEEDS", "BURST", "SPARED", "THROTTLED", "REJECTED", "%")
	}
	for i, row := range f.Rows {
		mark := ""
		switch {
		case i == f.Recommended:
			mark = "*"
		case row.BelowBulkMean:
			mark = "~"
		}
		t := row.Totals
		cells := []string{mark}
		if f.Window {
			cells = append(cells, words.Duration(row.Params.Window), words.Thousands(row.Need), rateText(row.Params.Rate))
		} else {
			cells = append(cells, rateText(row.Params.Rate), words.Thousands(row.Need), words.Thousands(row.Params.Burst))
		}
		cells = append(cells, fmt.Sprintf("%s of %s", words.Thousands(int64(row.Spared())), words.Thousands(int64(t.Keys))),
			keysText(t.Throttled), words.Thousands(t.Rejected), percent(t.Rejected, t.Requests))
		tw.add(cells...)
	}
	if err := tw.write(w); err != nil {
		return err
	}
	fmt.Fprintln(w, "NEEDS: what spares the bulk, before headroom.")
	writeMeanFloorNote(w, rep)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Keys each throttles (requests refused), and the key of the bulk setting NEEDS:")
	for _, row := range f.Rows {
		name := f.rowName(row)
		if row.SetBy >= 0 {
			name += ", set by " + tableKey(f.Scenario.Clients[row.SetBy].Name)
		}
		writeWrapped(w, "  ", name+": "+throttledText(row))
	}
	fmt.Fprintln(w)
	if f.Recommended < 0 {
		at := ""
		for _, row := range f.Rows {
			if row.BelowBulkMean {
				at = " at or above " + rateFigure(f.MeanFloor) + "/s"
			}
		}
		writeWrapped(w, "", fmt.Sprintf("No row%s spares %s on replay: none is recommended (a larger --headroom, or another algorithm).", at, bulk))
	} else {
		row := f.Rows[f.Recommended]
		why := fmt.Sprintf("spares every key but the outliers and throttles %s of the %s", words.Thousands(int64(row.OutliersThrottled)), words.Count(f.Outliers.Count(), "outlier", "outliers"))
		switch n := f.Outliers.Count(); {
		case n == 0:
			why = "spares every key"
		case row.OutliersThrottled == n && n == 1:
			why = "spares every key but the outlier, which it throttles"
		case row.OutliersThrottled == n && n == 2:
			why = "spares every key but the outliers, and throttles both"
		case row.OutliersThrottled == n:
			why = fmt.Sprintf("spares every key but the outliers, and throttles all %s of them", words.Thousands(int64(n)))
		}
		if f.Quantile > 0 {
			why = fmt.Sprintf("spares %s of %s", words.Thousands(int64(row.Spared())), words.Count(row.Totals.Keys, "key", "keys"))
		}
		writeWrapped(w, "", fmt.Sprintf("Recommended (*): %s. It %s, refusing %s of %s (%s%%).",
			f.rowLimit(row), why, words.Thousands(row.Totals.Rejected), words.Count(row.Totals.Requests, "request", "requests"), percent(row.Totals.Rejected, row.Totals.Requests)))
	}
	if f.AboveGrid > 0 {
		top := trace.GridRates()[len(trace.GridRates())-1]
		writeWrapped(w, "", fmt.Sprintf("note: the bulk reaches %s requests a second, above the grid's top rate %s: no row here spares it at its own pace (give --limit to pin a higher rate).", rateFigure(f.AboveGrid), rateText(top)))
	}
	writePredictionNotes(w, rep)
	writeCoarseNote(w, rep)
	return nil
}

// writeMeanFloorNote explains the rows marked ~ and says the rule a row is
// recommended by.
func writeMeanFloorNote(w io.Writer, rep *Report) {
	f := rep.Frontier
	below := false
	for _, row := range f.Rows {
		below = below || row.BelowBulkMean
	}
	at := ""
	if f.MeanFloorKey >= 0 {
		at = " at or above " + rateFigure(f.MeanFloor) + "/s"
		if below {
			writeWrapped(w, "", fmt.Sprintf("~: below %s/s, the bulk's busiest mean rate (%s, %s/s) plus %g%% headroom: such a row spares that key only because the log ends, its burst growing with the log's span; never recommended.",
				rateFigure(f.MeanFloor), tableKey(f.Scenario.Clients[f.MeanFloorKey].Name), rateFigure(f.BusiestMean), 100*f.Headroom))
		}
	}
	rule := "Rule: of the rows" + at + " that spare the bulk on replay, the one throttling the most outliers, then refusing the most, is recommended (*)."
	if f.Outliers.Count() == 0 {
		rule = "Rule: of the rows" + at + " that spare every key on replay, the one refusing the most, then of the lowest rate, is recommended (*)."
	}
	if f.Quantile > 0 {
		rule = "Rule: of the rows" + at + " that spare that share of the keys on replay, the one throttling the fewest keys that are not outliers, then refusing the most, is recommended (*)."
	}
	writeWrapped(w, "", rule)
}

// tableKeyWidth is the most columns a key takes in the table's lines: a
// longer one keeps its start and end around an ellipsis (the JSON and CSV
// have it whole).
const tableKeyWidth = 40

// tableKey is key as the table shows it: escaped, at most tableKeyWidth
// columns.
func tableKey(key string) string {
	r := []rune(escape.Text(key))
	if len(r) <= tableKeyWidth {
		return string(r)
	}
	head := (tableKeyWidth - 1) / 2
	tail := tableKeyWidth - 1 - head
	return string(r[:head]) + "…" + string(r[len(r)-tail:])
}

// countFigure is a count that may be a median of two, with thousands
// separated: "120,000", "18.5".
func countFigure(x float64) string {
	whole := math.Floor(x)
	text := words.Thousands(int64(whole))
	if frac := x - whole; frac != 0 {
		text += strings.TrimPrefix(strconv.FormatFloat(frac, 'f', -1, 64), "0")
	}
	return text
}

// rateFigure is a rate in requests a second, to two significant digits:
// "0.19", "12", "1,500".
func rateFigure(perSecond float64) string {
	if perSecond >= 100 {
		return words.Thousands(int64(math.Round(perSecond)))
	}
	return strconv.FormatFloat(perSecond, 'g', 2, 64)
}

// writeCoarseNote names the rows whose limit refills faster than the
// log's times are fine, replayed as logged: their figures count a tick's
// requests as arriving at once.
func writeCoarseNote(w io.Writer, rep *Report) {
	var coarse []string
	for _, row := range rep.Frontier.Rows {
		lim := rep.Frontier.Scenario.Limit
		lim.Params = row.Params
		if ResolutionWarning(rep.Log, lim) != "" {
			coarse = append(coarse, rep.Frontier.rowName(row))
		}
	}
	if len(coarse) == 0 {
		return
	}
	writeWrapped(w, "", fmt.Sprintf("note: %s %s faster than the log's %s: a tick's requests arrive at once in %s replay (--spread paces them).",
		words.OneOf(coarse), words.Plural(len(coarse), "refills", "refill"), trace.ResolutionText(rep.Log.Stats.Resolution), words.Plural(len(coarse), "its", "their")))
}

// throttledText names the keys a row throttled, the most refused first,
// with what it refused of each: "203.0.113.9 (2,281), 198.51.100.7
// (2,679)", "none".
func throttledText(row FrontierRow) string {
	if len(row.Throttled) == 0 {
		return "none"
	}
	var parts []string
	for i, k := range row.Throttled {
		if i == maxKeysListed {
			var rest int64
			for _, k := range row.Throttled[i:] {
				rest += k.Rejected
			}
			parts = append(parts, fmt.Sprintf("and %s more (%s)", words.Thousands(int64(len(row.Throttled)-i)), words.Thousands(rest)))
			break
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", tableKey(k.Key), words.Thousands(k.Rejected)))
	}
	return strings.Join(parts, ", ")
}

// writeOutliers states the outlier rule, its figures per window, and the
// outliers with their scores.
func writeOutliers(w io.Writer, rep *Report) {
	f := rep.Frontier
	o := f.Outliers
	var wins []string
	for _, ws := range o.Windows {
		wins = append(wins, words.Duration(ws.Window))
	}
	fmt.Fprintln(w)
	if o.TooFew {
		writeWrapped(w, "", fmt.Sprintf("Outliers: too few keys for the outlier rule (want %d or more): %s, every one of the bulk.", trace.MinOutlierKeys, words.Count(len(f.Keys), "key", "keys")))
		return
	}
	writeWrapped(w, "", fmt.Sprintf("Outliers: keys whose busiest %s is more than %g robust deviations above the bulk's (z = (ln count − median) / (1.4826 × MAD of ln count), the MAD at least ln 1.5): %s of %s.",
		words.OneOf(wins), trace.OutlierZ, words.Thousands(int64(o.Count())), words.Count(len(f.Keys), "key", "keys")))
	var tw table
	tw.add("  WINDOW", "MEDIAN", "BULK MAX", "MAD")
	for _, ws := range o.Windows {
		tw.add("  "+words.Duration(ws.Window), countFigure(ws.Median), words.Thousands(int64(ws.BulkMax)), strconv.FormatFloat(ws.MAD, 'f', 2, 64))
	}
	tw.write(w)
	if o.Count() > 0 {
		fmt.Fprintln(w, "  The outliers, their busiest count in each window and their highest z:")
		keysTable(rep, "  OUTLIER", func(i int) bool { return o.Is[i] }).write(w)
	}
	near := 0
	for _, b := range o.Near {
		if b {
			near++
		}
	}
	if near > 0 {
		writeWrapped(w, "  ", fmt.Sprintf("Close to the rule (z over %g), kept in the bulk, so their needs count:", trace.NearZ))
		keysTable(rep, "  NEAR", func(i int) bool { return o.Near[i] }).write(w)
	}
}

// keysTable is a table of the keys of the frontier that pick says, their
// busiest count in each of the outlier rule's windows and their highest
// z, first heading the key column.
func keysTable(rep *Report, first string, pick func(i int) bool) *table {
	f := rep.Frontier
	o := f.Outliers
	var kt table
	head := []string{first, "REQUESTS"}
	for _, ws := range o.Windows {
		head = append(head, words.Duration(ws.Window))
	}
	kt.add(append(head, "z")...)
	names := f.Scenario.Clients
	for i, k := range f.Keys {
		if !pick(i) {
			continue
		}
		row := []string{"  " + tableKey(names[i].Name), words.Thousands(int64(k.Requests))}
		for wi := range o.Windows {
			row = append(row, words.Thousands(int64(k.Busiest[wi])))
		}
		kt.add(append(row, strconv.FormatFloat(o.MaxZ(i), 'f', 1, 64))...)
	}
	return &kt
}

// writePredictionNotes flags each row whose replay throttled other keys
// than the profiles predict one exact limiter would: a sliding-window
// counter estimates, a fixed window forgives at its edges, a jar per
// server admits more. The rows show the replay's figures; this says
// where they part from the prediction.
func writePredictionNotes(w io.Writer, rep *Report) {
	f := rep.Frontier
	names := f.Scenario.Clients
	for _, row := range f.Rows {
		predicted := map[string]bool{}
		for _, i := range row.Predicted {
			predicted[names[i].Name] = true
		}
		same := len(predicted) == len(row.Throttled)
		for _, k := range row.Throttled {
			same = same && predicted[k.Key]
		}
		if same {
			continue
		}
		writeWrapped(w, "", fmt.Sprintf("note: %s was predicted, from the keys' profiles, to throttle %s; its replay throttled %s (the row shows the replay).",
			f.rowName(row), keysText(len(row.Predicted)), keysText(len(row.Throttled))))
	}
}
