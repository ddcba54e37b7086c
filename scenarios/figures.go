package scenarios

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/ratelim/ratelim/internal/escape"
	"github.com/ratelim/ratelim/internal/words"
	"github.com/ratelim/ratelim/sim"
)

// The figures an expectation bounds are, for the most part, the counts of
// the run's results under their JSON names: a client's (sim.ClientResult),
// a key's (sim.KeyResult) and a step's (sim.TimelineRow, which a span of
// the run adds up). They are read from the result types rather than listed
// here, so that a count added to the results can be bounded at once and a
// count the results drop can no longer be named. Beside them are the
// figures that are no field of their own: allowed_rate, and a client's
// latency percentiles.

// allowedRate is the one rate an expectation bounds: the allowed count per
// second of the run or of the span.
const allowedRate = "allowed_rate"

// percentiles are a client's latency figures, in milliseconds, over the
// whole run: a step's percentiles do not add up over a span.
var percentiles = map[string]func(sim.LatencySummary) float64{
	"p50_ms": func(l sim.LatencySummary) float64 { return l.P50 },
	"p99_ms": func(l sim.LatencySummary) float64 { return l.P99 },
}

// countTable reads the counts of a result type T: its int64 fields, by
// their JSON names, those of the embedded sim.Counts included. Counts of
// requests are int64 throughout the results; an int such as a key's
// Clients (how many share it) is not a figure.
type countTable[T any] struct {
	names []string // in the order T declares them
	read  map[string]func(*T) float64
}

func countsOf[T any]() countTable[T] {
	c := countTable[T]{read: map[string]func(*T) float64{}}
	for _, f := range reflect.VisibleFields(reflect.TypeFor[T]()) {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || f.Type.Kind() != reflect.Int64 || name == "" || name == "-" {
			continue
		}
		c.names = append(c.names, name)
		c.read[name] = func(x *T) float64 { return float64(reflect.ValueOf(x).Elem().FieldByIndex(f.Index).Int()) }
	}
	return c
}

var (
	clientCounts = countsOf[sim.ClientResult]()
	keyCounts    = countsOf[sim.KeyResult]()
	stepCounts   = countsOf[sim.TimelineRow]()

	// clientFigures are a client's over the whole run: its counts,
	// allowed_rate and the latency percentiles.
	clientFigures = append(slices.Clone(clientCounts.names), allowedRate, "p50_ms", "p99_ms")
	// keyFigures are a limiter key's: its counts and allowed_rate.
	keyFigures = append(slices.Clone(keyCounts.names), allowedRate)
	// spanFigures are those the timeline has per step, and so can be
	// taken over a span of the run (during:).
	spanFigures = append(slices.Clone(stepCounts.names), allowedRate)
	// figures are every name an expectation may bound: a client's, then
	// those only the timeline has (served), which over the whole run are
	// its steps added up.
	figures = union(clientFigures, spanFigures)
)

// union is a's names, then those of b that a lacks.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, name := range b {
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// clientFigure is e's figure of client c: over e.During, or when c's
// result lacks it, from the subject's timeline rows (of), else from c's
// result over the whole run.
func clientFigure(e *Expectation, c *sim.ClientResult, r *sim.Result, of func(sim.TimelineRow) bool) float64 {
	if e.During != nil || !slices.Contains(clientFigures, e.Figure) {
		return spanFigure(e, r, of)
	}
	if p, ok := percentiles[e.Figure]; ok {
		return p(c.LatencyMs)
	}
	return wholeRun(clientCounts, c, e.Figure, r.DurationS)
}

// keyFigure is clientFigure for a limiter key: a key's figures are those
// of the clients sharing it, added up (the parser allows a key only the
// figures a KeyResult has).
func keyFigure(e *Expectation, k *sim.KeyResult, r *sim.Result, of func(sim.TimelineRow) bool) float64 {
	if e.During != nil {
		return spanFigure(e, r, of)
	}
	return wholeRun(keyCounts, k, e.Figure, r.DurationS)
}

// wholeRun is x's count figure, or for allowed_rate its allowed count
// over the seconds of the run; NaN, which holds no bound, if T has no
// such count.
func wholeRun[T any](counts countTable[T], x *T, figure string, seconds float64) float64 {
	read, ok := counts.read[countOf(figure)]
	switch {
	case !ok:
		return math.NaN()
	case figure == allowedRate:
		return perSecond(read(x), seconds)
	}
	return read(x)
}

// spanFigure adds up e's figure over the timeline rows of the subject (of)
// whose step starts within e.During, the whole run if nil; allowed_rate is
// the allowed count per second of the span.
func spanFigure(e *Expectation, r *sim.Result, of func(sim.TimelineRow) bool) float64 {
	from, to := 0.0, r.DurationS
	if e.During != nil {
		from, to = e.During.From.Seconds(), e.During.To.Seconds()
	}
	read, ok := stepCounts.read[countOf(e.Figure)]
	if !ok {
		return math.NaN()
	}
	sum := 0.0
	for i := range r.Timeline {
		row := &r.Timeline[i]
		if row.TS >= from && row.TS < to && of(*row) {
			sum += read(row)
		}
	}
	if e.Figure == allowedRate {
		return perSecond(sum, math.Min(to, r.DurationS)-from)
	}
	return sum
}

// countOf is the count a figure is read from: allowed for allowed_rate,
// else the figure itself.
func countOf(figure string) string {
	if figure == allowedRate {
		return "allowed"
	}
	return figure
}

// perSecond is n over seconds, 0 for a span of no time.
func perSecond(n, seconds float64) float64 {
	if seconds <= 0 {
		return 0
	}
	return n / seconds
}

// FigureNames are the figures Figure reads, as an expectation names them:
// a client's counts, allowed_rate and latency percentiles, then those
// only the timeline has (served).
func FigureNames() []string { return slices.Clone(figures) }

// Figure is a run's figure by the name an expectation gives it, of a
// subject: "" for every client, a client's name, or key=KEY for a limiter
// key. Over every client a count is the clients' added up, and a most in
// a second (max_allowed_1s, ideal_max_allowed_1s) the largest any key
// had, as sim.Result.Totals takes it; a latency percentile does not add
// up and wants a client. An unknown figure,
// client or key, or a figure the subject has not, is an error saying
// which would do.
func Figure(r *sim.Result, name, subject string) (float64, error) {
	if !slices.Contains(figures, name) {
		return 0, &Error{Field: "figure", Msg: unknown("figure", name, figures)}
	}
	e := &Expectation{Figure: name}
	if key, ok := strings.CutPrefix(subject, "key="); ok {
		if !slices.Contains(keyFigures, name) {
			return 0, &Error{Field: "figure", Msg: fmt.Sprintf("%s is a client's figure, not a key's (a key has %s)", name, words.OneOf(keyFigures))}
		}
		for i := range r.Keys {
			if k := &r.Keys[i]; k.Key == key {
				return keyFigure(e, k, r, nil), nil
			}
		}
		return 0, &Error{Field: "figure", Msg: fmt.Sprintf("%s: %s has no limiter key %s (want one of %s)", name, escape.Text(r.Scenario), quote(key), keyNames(r))}
	}
	if subject != "" {
		for i := range r.Clients {
			if c := &r.Clients[i]; c.Name == subject {
				return clientFigure(e, c, r, func(row sim.TimelineRow) bool { return row.Client == c.Name }), nil
			}
		}
		return 0, &Error{Field: "figure", Msg: fmt.Sprintf("%s: %s has no client %s (want one of %s)", name, escape.Text(r.Scenario), quote(subject), escape.Text(clientNames(r)))}
	}
	switch {
	case percentiles[name] != nil:
		return 0, &Error{Field: "figure", Msg: fmt.Sprintf("%s does not add up over clients (want %s:CLIENT)", name, name)}
	case !slices.Contains(clientFigures, name):
		// Only the timeline has it: every row's.
		return spanFigure(e, r, func(sim.TimelineRow) bool { return true }), nil
	case slices.Contains(keyFigures, name):
		t := r.Totals()
		return wholeRun(keyCounts, &t, name, r.DurationS), nil
	}
	// A client's count a key has not (retries): the clients' added up.
	sum := 0.0
	for i := range r.Clients {
		sum += wholeRun(clientCounts, &r.Clients[i], name, r.DurationS)
	}
	return sum, nil
}

// keyNames are r's limiter keys for a message, the first eight.
func keyNames(r *sim.Result) string {
	var names []string
	for i, k := range r.Keys {
		if i == 8 {
			names = append(names, "...")
			break
		}
		names = append(names, k.Key)
	}
	// Keys come from the file or a log: escaped for a terminal.
	return escape.Text(words.OneOf(names))
}
