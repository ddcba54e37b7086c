package report

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/ratelim/ratelim/internal/escape"
	"github.com/ratelim/ratelim/internal/words"
	"github.com/ratelim/ratelim/sim"
)

// This file writes a Result for a terminal: the table and its findings.
// The CSV and the JSON are in data.go, the HTML page in html.go.

// TableOptions choose what a table shows.
type TableOptions struct {
	// Wide shows every column; otherwise a column that says nothing on
	// this run (all zero, or latency no more than the round trip) is left
	// out, so that the table fits 80 columns.
	Wide bool
}

// WriteTable writes r for people: a header naming the run, one aligned row
// per client, and what the run teaches (its findings).
func WriteTable(w io.Writer, r *sim.Result) error { return WriteTableWith(w, r, TableOptions{}) }

// WriteTableWith is WriteTable with options.
func WriteTableWith(w io.Writer, r *sim.Result, opts TableOptions) error {
	// Broken between its parts only, so that a long algorithm name (a
	// key's several limits) moves the rest to a second line whole.
	title := []string{escape.Text(r.Scenario), r.Algorithm, r.Topology + " on " + r.Store,
		fmt.Sprintf("%d %s", r.Servers, words.Plural(r.Servers, "server", "servers")), fmt.Sprintf("seed %d", r.Seed), fmt.Sprintf("%gs", r.DurationS)}
	if r.Live {
		title = append(title, "LIVE over HTTP")
	}
	line := ""
	for _, part := range title {
		switch {
		case line == "":
			line = part
		case utf8.RuneCountInString(line)+3+utf8.RuneCountInString(part) > 80: // 3: " · "
			fmt.Fprintln(w, line)
			line = "  · " + part
		default:
			line += " · " + part
		}
	}
	fmt.Fprintln(w, line)
	limit := fmt.Sprintf("limit %s, %s", limitText(r), keyedText(r.Limit.Key))
	if len(r.Limit.Limits) > 0 {
		parts := make([]string, len(r.Limit.Limits))
		for i, p := range r.Limit.Limits {
			parts[i] = fmt.Sprintf("%s %s", escape.Text(p.Name), p.Text())
			switch {
			case p.Shadow && p.ShadowUntilS > 0:
				parts[i] += fmt.Sprintf(" (shadow until %gs)", p.ShadowUntilS)
			case p.Shadow:
				parts[i] += " (shadow)"
			}
		}
		limit = fmt.Sprintf("limits %s; %s", strings.Join(parts, "; "), keyedText(r.Limit.Key))
	}
	if p := sim.PeerOf(r.Algorithm); p != nil {
		limit += fmt.Sprintf(" · models %s %s", p.Library, p.Version)
	}
	switch {
	case r.Limit.Shadow && r.Limit.ShadowUntilS > 0:
		limit += fmt.Sprintf(" · shadow until %gs, enforced after", r.Limit.ShadowUntilS)
	case r.Limit.Shadow:
		limit += " · shadow mode: decides, counts, refuses nothing"
	}
	switch {
	case r.Synced != nil && r.Synced.IntervalMs > 0:
		limit += fmt.Sprintf(" · each server pushes every %gms", r.Synced.IntervalMs)
	case r.Synced != nil && r.Synced.IntervalMs < 0:
		limit += " · servers never push"
	case r.Synced != nil:
		limit += " · servers push at every request"
	case r.Owner != nil:
		limit += fmt.Sprintf(" · nodes send hits and status %gms after the first", r.Owner.SyncWaitMs)
	case r.Regions != nil && r.Regions.ReplicationLagMs < 0:
		limit += " · regions share no counts"
	case r.Regions != nil:
		limit += fmt.Sprintf(" · regions replicate after %gms", r.Regions.ReplicationLagMs)
	case r.TwoTier != nil:
		limit += fmt.Sprintf(" · a local tier of %g/s, burst %d on each server", r.TwoTier.LocalRatePerS, r.TwoTier.LocalBurst)
	}
	for _, f := range r.Faults {
		if r.Regions != nil && f.Kind == string(sim.Outage) && f.Detail != "" {
			limit += fmt.Sprintf(" · %s down %g–%gs", escape.Text(f.Detail), f.StartS, f.EndS)
			continue
		}
		limit += fmt.Sprintf(" · %s %g–%gs", f.Kind, f.StartS, f.EndS)
	}
	for i, line := range Wrap(limit, 78) {
		if i > 0 {
			line = "  " + line
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintln(w)
	if err := writeRows(w, r, opts); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if len(r.Shards) > 0 {
		writeShards(w, r.Shards)
		fmt.Fprintln(w)
	}
	return WriteFindings(w, r, 4)
}

// maxShardLines is how many shards the table lists before it says how
// many more there are.
const maxShardLines = 12

// writeShards writes a cluster's shards, a line each: its slots, its
// master at the start and at the end, its keys, and what they met: the
// requests that waited for a master across a partition, those answered
// CLUSTERDOWN, and the admissions a failover lost.
func writeShards(w io.Writer, shards []sim.ShardResult) {
	fmt.Fprintf(w, "  %-5s %-11s %-24s %-16s %6s %5s %5s\n", "shard", "slots", "master", "keys", "waited", "down", "lost")
	for i, sh := range shards {
		if i == maxShardLines && len(shards) > maxShardLines+1 {
			fmt.Fprintf(w, "  … %d more shards (--format json has each)\n", len(shards)-i)
			return
		}
		master := sh.Master
		if sh.EndMaster != sh.Master {
			master += " → " + sh.EndMaster
		}
		keys := "none"
		if len(sh.Keys) > 0 {
			keys = escape.Text(sh.Keys[0])
			if len(sh.Keys) > 1 {
				keys += fmt.Sprintf(" +%d", len(sh.Keys)-1)
			}
		}
		fmt.Fprintf(w, "  %-5s %-11s %-24s %-16s %6s %5s %5s\n", fmt.Sprintf("s%d", sh.Shard), fmt.Sprintf("%d–%d", sh.FirstSlot, sh.LastSlot),
			master, clip(keys, 16), words.Thousands(sh.TimedOut), words.Thousands(sh.Fenced+sh.Uncovered), words.Thousands(sh.Lost))
	}
}

// WriteFindings writes r's first n findings for an 80-column terminal: the
// headline, then the others each after a "·", wrapped with a hanging
// indent.
func WriteFindings(w io.Writer, r *sim.Result, n int) error {
	findings := r.Findings
	if len(findings) == 0 {
		findings = sim.Findings(r)
	}
	for i, f := range findings[:min(n, len(findings))] {
		first, rest := "", "  "
		if i > 0 {
			first, rest = "· ", "  "
		}
		// A finding names clients and keys, which came from input.
		for j, line := range Wrap(escape.Text(f.Text), 80-len(rest)) {
			lead := rest
			if j == 0 {
				lead = first
			}
			if _, err := fmt.Fprintf(w, "%s%s\n", lead, line); err != nil {
				return err
			}
		}
	}
	return nil
}

// Wrap breaks text into lines of at most width runes at spaces; a word
// longer than width has a line to itself. Blank text is one empty line,
// so that a row still has its place.
func Wrap(text string, width int) []string {
	var lines []string
	var line strings.Builder
	n := 0
	for _, word := range strings.Fields(text) {
		wn := utf8.RuneCountInString(word)
		if n > 0 && n+1+wn > width {
			lines = append(lines, line.String())
			line.Reset()
			n = 0
		}
		if n > 0 {
			line.WriteByte(' ')
			n++
		}
		line.WriteString(word)
		n += wn
	}
	if n > 0 || len(lines) == 0 {
		lines = append(lines, line.String())
	}
	return lines
}

// keyedText says how the limit is keyed: "keyed by ip"; auto names what
// it picks, the first identity each request has.
func keyedText(key string) string {
	if key == string(sim.KeyAuto) {
		return "keyed by caller (api-key, else user, else ip)"
	}
	return "keyed by " + key
}

// WriteTableRows writes the table's header row and one row per client,
// aligned: the table without its title and findings (sim -q), with the
// columns the table would show (those that say something on r; every one
// when opts.Wide).
func WriteTableRows(w io.Writer, r *sim.Result, opts TableOptions) error {
	return writeRows(w, r, opts)
}

// tableColumn is one column of the client table.
type tableColumn struct {
	name string
	cell func(c sim.ClientResult) string
	// says is whether the column tells anything on r; a column that does
	// not is left out of a table that is not wide.
	says func(r *sim.Result) bool
}

// noAnswerColumn counts a live run's requests that got no HTTP answer: a
// figure only a live run has, so a simulation's table leaves it out even
// when wide.
const noAnswerColumn = "no answer"

func anyClient(f func(c sim.ClientResult) bool) func(r *sim.Result) bool {
	return func(r *sim.Result) bool { return slices.ContainsFunc(r.Clients, f) }
}

func always(*sim.Result) bool { return true }

var tableColumns = []tableColumn{
	{"sent", func(c sim.ClientResult) string { return itoa(c.Sent) }, always},
	{"allowed", func(c sim.ClientResult) string { return itoa(c.Allowed) }, always},
	{"rejected", func(c sim.ClientResult) string { return itoa(c.Rejected) }, always},
	// Requests that got no HTTP answer: no limiter decided them, so they
	// are not among the rejected.
	{noAnswerColumn, func(c sim.ClientResult) string { return itoa(c.NoAnswer) }, anyClient(func(c sim.ClientResult) bool { return c.NoAnswer != 0 })},
	{"fail-open", func(c sim.ClientResult) string { return itoa(c.FailedOpen) }, anyClient(func(c sim.ClientResult) bool { return c.FailedOpen != 0 })},
	{"fail-closed", func(c sim.ClientResult) string { return itoa(c.FailedClosed) }, anyClient(func(c sim.ClientResult) bool { return c.FailedClosed != 0 })},
	{"retries", func(c sim.ClientResult) string { return itoa(c.Retries) }, anyClient(func(c sim.ClientResult) bool { return c.Retries != 0 })},
	{"cost sent", func(c sim.ClientResult) string { return itoa(c.CostSent) }, anyClient(func(c sim.ClientResult) bool { return c.CostSent != 0 })},
	{"cost allowed", func(c sim.ClientResult) string { return itoa(c.CostAllowed) }, anyClient(func(c sim.ClientResult) bool { return c.CostSent != 0 })},
	{"peak/1s", func(c sim.ClientResult) string { return itoa(c.MaxAllowed1s) }, always},
	{"ideal", func(c sim.ClientResult) string { return itoa(c.IdealAllowed) }, always},
	{"p99 ms", func(c sim.ClientResult) string { return strconv.FormatFloat(c.LatencyMs.P99, 'f', -1, 64) },
		func(r *sim.Result) bool {
			return slices.ContainsFunc(r.Clients, func(c sim.ClientResult) bool { return c.LatencyMs.P99 > r.RTTMs })
		}},
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// narrowFirst are the columns a table too wide for 80 columns leaves out,
// in this order, until it fits: the latency (a live run's), the peak, the
// cost sent (cost allowed stays). --wide shows them all.
var narrowFirst = []string{"p99 ms", "peak/1s", "cost sent"}

// fitColumns drops narrowFirst's columns from cols until a row of r's table
// (the client column nameWidth wide, each column padded by 2) fits 80
// columns, or none is left to drop.
func fitColumns(r *sim.Result, cols []tableColumn, nameWidth int) []tableColumn {
	rowWidth := func(cols []tableColumn) int {
		n := 2 + nameWidth
		for _, col := range cols {
			w := utf8.RuneCountInString(col.name)
			for _, c := range r.Clients {
				w = max(w, utf8.RuneCountInString(col.cell(c)))
			}
			n += 2 + w
		}
		return n
	}
	for _, name := range narrowFirst {
		if rowWidth(cols) <= 80 {
			break
		}
		cols = slices.DeleteFunc(cols, func(c tableColumn) bool { return c.name == name })
	}
	return cols
}

func writeRows(w io.Writer, r *sim.Result, opts TableOptions) error {
	// A client's name came from input (a YAML name, a log's key): it is
	// shown escaped, and padded by what it shows.
	names := make([]string, len(r.Clients))
	width := len("client")
	for i, c := range r.Clients {
		names[i] = escape.Text(c.Name)
		width = max(width, utf8.RuneCountInString(names[i]))
	}
	var cols []tableColumn
	for _, col := range tableColumns {
		if (opts.Wide || col.says(r)) && (r.Live || col.name != noAnswerColumn) {
			cols = append(cols, col)
		}
		if col.name == "rejected" {
			// Several limits: whose refusals they were.
			for _, p := range r.Limit.Limits {
				cols = append(cols, tableColumn{name: "by " + p.Name, cell: func(c sim.ClientResult) string { return itoa(c.RejectedBy[p.Name]) }})
			}
		}
	}
	if !opts.Wide {
		cols = fitColumns(r, cols, width)
	}
	// The tabwriter writes a row's cells and padding piece by piece:
	// straight onto a file that is a system call each, 4.6 s of a
	// million-client table's 5.8 (issue 29).
	bw := bufio.NewWriterSize(w, 64<<10)
	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-*s\t", width, "client")
	for _, col := range cols {
		fmt.Fprintf(tw, "%s\t", col.name)
	}
	fmt.Fprintln(tw)
	for i, c := range r.Clients {
		fmt.Fprintf(tw, "%-*s\t", width, names[i])
		for _, col := range cols {
			fmt.Fprintf(tw, "%s\t", col.cell(c))
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return bw.Flush()
}

// clip is s cut to at most n runes, its last an ellipsis when cut.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
