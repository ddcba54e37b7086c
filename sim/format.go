package sim

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// WriteJSON writes r as one indented ratelim.result/v1 object.
func WriteJSON(w io.Writer, r *Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

// WriteCSV writes r's timeline: one row per client per step.
func WriteCSV(w io.Writer, r *Result) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"t_s", "client", "sent", "allowed", "rejected", "failed_open", "failed_closed", "retries", "p50_ms", "p99_ms"})
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	for _, row := range r.Timeline {
		cw.Write([]string{f(row.TS), row.Client, i(row.Sent), i(row.Allowed), i(row.Rejected),
			i(row.FailedOpen), i(row.FailedClosed), i(row.Retries), f(row.P50Ms), f(row.P99Ms)})
	}
	cw.Flush()
	return cw.Error()
}

// WriteTable writes r for people: a header naming the run, one aligned row
// per client, and one line that says what to notice.
func WriteTable(w io.Writer, r *Result) error {
	mode := ""
	if r.Live {
		mode = " · LIVE over HTTP"
	}
	fmt.Fprintf(w, "%s · %s · %s on %s · %d server%s · seed %d · %gs%s\n", r.Scenario, r.Algorithm, r.Topology, r.Store,
		r.Servers, plural(r.Servers), r.Seed, r.DurationS, mode)
	fmt.Fprintf(w, "limit %s, keyed by %s", limitText(r), r.Limit.Key)
	for _, f := range r.Faults {
		fmt.Fprintf(w, " · %s %g–%gs", f.Kind, f.StartS, f.EndS)
	}
	fmt.Fprint(w, "\n\n")
	if err := WriteTableRows(w, r); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\n%s\n", Notice(r))
	return err
}

// WriteTableRows writes the table's header row and one row per client,
// aligned: the table without its title and notice, for scripts.
func WriteTableRows(w io.Writer, r *Result) error {
	width := len("client")
	for _, c := range r.Clients {
		width = max(width, len(c.Name))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-*s\tsent\tallowed\trejected\tfail-open\tfail-closed\tretries\tpeak/1s\tideal\tp99 ms\t\n", width, "client")
	for _, c := range r.Clients {
		fmt.Fprintf(tw, "%-*s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t\n", width, c.Name, c.Sent, c.Allowed, c.Rejected,
			c.FailedOpen, c.FailedClosed, c.Retries, c.MaxAllowed1s, c.IdealAllowed, strconv.FormatFloat(c.LatencyMs.P99, 'f', -1, 64))
	}
	return tw.Flush()
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func limitText(r *Result) string {
	rate := strconv.FormatFloat(r.Limit.RatePerS, 'f', -1, 64) + "/s"
	text := fmt.Sprintf("%s burst %d", rate, r.Limit.Burst)
	if r.Limit.WindowS > 0 {
		text = fmt.Sprintf("%s per %gs window", rate, r.Limit.WindowS)
	}
	if len(r.Limit.Defaulted) > 0 {
		text += " (" + strings.Join(r.Limit.Defaulted, " and ") + " by default: the scenario sets none)"
	}
	return text
}

// Notice is the one line that says what a run shows: how much was admitted
// against what one exact limiter would have admitted on the same arrivals,
// and the likeliest reason.
func Notice(r *Result) string {
	t := r.Totals()
	allowed, ideal, failedOpen, failedClosed, falseAllows := t.Allowed, t.IdealAllowed, t.FailedOpen, t.FailedClosed, t.FalseAllows
	if ideal == 0 {
		return "nothing would have been admitted by an exact limiter: no traffic reached the limit"
	}
	ratio := float64(allowed) / float64(ideal)
	var why []string
	hasFault := func(kind FaultKind) bool {
		for _, f := range r.Faults {
			if f.Kind == string(kind) {
				return true
			}
		}
		return false
	}
	switch {
	case r.Topology == string(Local) && r.Servers > 1 && ratio > 1.05:
		why = append(why, fmt.Sprintf("%d servers, each with its own jar", r.Servers))
	case r.Topology == string(Racy) && ratio > 1.05:
		why = append(why, "servers read the same state before either wrote it back")
	case r.Topology == string(SplitBrain) && hasFault(Partition) && ratio > 1.05:
		why = append(why, "each side of the partition counted in its own copy")
	}
	if failedOpen > 0 {
		why = append(why, fmt.Sprintf("%d failed open while the store was unreachable", failedOpen))
	}
	if failedClosed > 0 {
		why = append(why, fmt.Sprintf("%d failed closed while the store was unreachable", failedClosed))
	}
	if r.Algorithm == "fixed-window" && falseAllows > 0 && len(why) == 0 {
		why = append(why, "fixed windows let a second burst through at each boundary")
	}
	line := fmt.Sprintf("admitted %.2f× what one exact limiter would on the same arrivals", ratio)
	if len(why) > 0 {
		line += ": " + strings.Join(why, "; ")
	}
	return line
}
