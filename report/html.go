// Package report turns one finished run into something to hand on: a
// self-contained HTML page for a design review or a CI artefact (HTML),
// and an animated timeline for a slide (GIF).
//
// It reads a *sim.Result and what the caller already has — the scenario's
// YAML, the timeline already drawn — and never runs the simulator, so the
// same result always gives the same bytes. The page loads nothing: its
// CSS is inline, its image a data: URI, so it opens from file:// on a
// machine with no network, and every string that came from the scenario
// (names, summaries, the source) is escaped by html/template: a client
// called <script> is text on the page, not code.
package report

import (
	_ "embed"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/ratelim/ratelim/internal/escape"
	"github.com/ratelim/ratelim/internal/words"
	"github.com/ratelim/ratelim/sim"
)

// Image is a figure already drawn, to be inlined in the page.
type Image struct {
	// Format is "png" or "svg".
	Format string
	Data   []byte
}

// Options are what a report shows besides the result.
type Options struct {
	// Summary is the scenario's one-line summary, if it has one.
	Summary string
	// Source is the scenario's YAML as it was read, shown verbatim.
	Source []byte
	// SourceName says where the source came from: a file's path, or
	// "built-in NAME".
	SourceName string
	// Plot is the timeline, drawn by plots.Timeline; no Data, no figure.
	Plot Image
	// Command is the command line that reproduces the run, shown in the
	// run's metadata.
	Command string
	// ExpectNote, when set, says why some or all of the scenario's
	// expectations were not evaluated (they need other runs, or flags
	// changed the scenario).
	ExpectNote string
	// Versus, when set, is a second run beside this one (report --vs):
	// what differs, client by client, as text.
	Versus *Versus
}

// Versus is a second run beside the page's: its title ("A on-error=
// fail-open vs B on-error=fail-closed") and the rows that compare the two,
// as the CLI writes them.
type Versus struct {
	Title string
	Rows  string
}

//go:embed report.html.tmpl
var pageText string

// pageTemplate is the report template, parsed on the first page written
// rather than in the package's init: a program that never writes a page
// (the browser playground, which links report for the table and the JSON)
// then links no template parser, and starts without parsing one.
var pageTemplate struct {
	once sync.Once
	t    *template.Template
}

// page returns the parsed report template.
func page() *template.Template {
	pageTemplate.once.Do(func() { pageTemplate.t = parsePage() })
	return pageTemplate.t
}

func parsePage() *template.Template {
	return template.Must(template.New("report").Funcs(template.FuncMap{
		"num": words.Thousands,
		"ms":  func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) },
		// Event times are to the microsecond; a reader wants milliseconds.
		"sec": func(v float64) string { return strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64) + " s" },
		"got": func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) },
		// A shard's keys: the first ten, and how many more.
		"keys": func(keys []string) string {
			if len(keys) <= 10 {
				return strings.Join(keys, ", ")
			}
			return strings.Join(keys[:10], ", ") + fmt.Sprintf(" and %s more", words.Thousands(int64(len(keys)-10)))
		},
	}).Parse(pageText))
}

// HTML writes r as one self-contained HTML page: the lesson (the first
// finding) and every finding, the timeline figure, a table of what each
// client (and each shared limiter key) experienced, the expectations as
// evaluated, the faults and events, the run's settings, and the
// scenario's source. Columns that would hold only zeros (fail policy,
// retries, latency) are left out. The same r and opts give the same
// bytes: nothing in it depends on the clock or on map order.
func HTML(w io.Writer, r *sim.Result, opts Options) error {
	if r == nil {
		return errors.New("report: no result to write")
	}
	d, err := newPageData(r, opts)
	if err != nil {
		return err
	}
	if err := page().Execute(w, d); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// pageData is what the template reads: the result, and what is derived
// from it here rather than in template logic.
type pageData struct {
	R          *sim.Result
	Schema     string
	Title      string
	Summary    string
	RunLine    string
	Headline   string
	Findings   []sim.Finding
	Plot       *plotData
	Clients    []sim.ClientResult
	Total      *sim.KeyResult
	Cols       columns
	SharedKeys bool
	// Exact names the limiter the run is measured against.
	Exact      string
	ExpectLine string
	ExpectNote string
	Versus     *Versus
	Meta       []metaItem
	Source     string
	SourceName string
}

type plotData struct {
	Src     template.HTMLAttr
	Alt     string
	Caption string
}

// columns say which optional columns of the client table carry anything.
type columns struct {
	Failed, Retries, Latency, Total bool
}

type metaItem struct{ Name, Value string }

func newPageData(r *sim.Result, opts Options) (*pageData, error) {
	r = shown(r)
	d := &pageData{
		R:          r,
		Schema:     or(r.Schema, sim.Schema),
		Title:      r.Scenario + " · ratelim report",
		Summary:    escape.Text(opts.Summary),
		Headline:   sim.Headline(r),
		Findings:   r.Findings,
		Clients:    r.Clients,
		ExpectNote: opts.ExpectNote,
		Versus:     opts.Versus,
		Source:     escape.Source(string(opts.Source)),
		SourceName: escape.Text(opts.SourceName),
	}
	if len(d.Findings) == 0 {
		d.Findings = sim.Findings(r)
	}
	d.RunLine = fmt.Sprintf("%s · %s on %s · %d %s · %s · seed %d · %s s", r.Algorithm, r.Topology, r.Store,
		r.Servers, words.Plural(r.Servers, "server", "servers"), limitText(r), r.Seed, strconv.FormatFloat(r.DurationS, 'f', -1, 64))
	if len(opts.Plot.Data) > 0 {
		p, err := newPlotData(r, opts.Plot)
		if err != nil {
			return nil, err
		}
		d.Plot = p
	}
	for _, c := range r.Clients {
		d.Cols.Failed = d.Cols.Failed || c.FailedOpen > 0 || c.FailedClosed > 0
		d.Cols.Retries = d.Cols.Retries || c.Retries > 0
		d.Cols.Latency = d.Cols.Latency || c.LatencyMs.P50 > 0 || c.LatencyMs.P99 > 0
	}
	if len(r.Clients) > 1 {
		t := r.Totals()
		d.Total = &t
		d.Cols.Total = true
	}
	for _, k := range r.Keys {
		d.SharedKeys = d.SharedKeys || k.Clients > 1
	}
	d.Exact = exactLimiter(r)
	d.ExpectLine = expectLine(r.Expectations)
	d.Meta = meta(r, opts.Command)
	return d, nil
}

// newPlotData inlines the figure as a data: URI in an <img>: the page
// stays one file, and an SVG shown through <img> cannot run script or
// fetch anything, whatever text it holds.
func newPlotData(r *sim.Result, img Image) (*plotData, error) {
	var mime string
	switch strings.ToLower(img.Format) {
	case "png", "":
		mime = "image/png"
	case "svg":
		mime = "image/svg+xml"
	default:
		return nil, fmt.Errorf("report: cannot inline a %q figure (want png or svg)", img.Format)
	}
	// The attribute is built here from base64, whose alphabet (A–Z a–z
	// 0–9 + / =) cannot end a quoted attribute: as a template.HTMLAttr
	// it is written as is, where html/template would filter a data: URL
	// and spell each "+" as "&#43;" (5% more bytes, for nothing).
	src := template.HTMLAttr(`src="data:` + mime + ";base64," + base64.StdEncoding.EncodeToString(img.Data) + `"`)
	return &plotData{
		Src: src,
		Alt: fmt.Sprintf("Timeline of %s: requests allowed and rejected per client per step, and the limiter's state", r.Scenario),
		Caption: "Each panel is one client, step by step: allowed, rejected, and what the fail policy decided; " +
			"faults are shaded through every panel; the State panel is what each key could still make.",
	}, nil
}

// expectLine counts the expectations that held.
func expectLine(es []sim.ExpectationResult) string {
	if len(es) == 0 {
		return "No expectations were evaluated on this run."
	}
	ok := 0
	for _, e := range es {
		if e.OK {
			ok++
		}
	}
	if ok == len(es) {
		return fmt.Sprintf("All %d hold.", len(es))
	}
	return fmt.Sprintf("%d of %d hold; %d failed.", ok, len(es), len(es)-ok)
}

// meta lists the run's settings, in the order a reader checks them.
func meta(r *sim.Result, command string) []metaItem {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	items := []metaItem{
		{"scenario", r.Scenario},
		{"algorithm", r.Algorithm},
		{"limit", limitText(r)},
		{"keyed by", or(r.Limit.Key, "auto")},
		{"topology", r.Topology},
		{"store", r.Store},
		{"servers", strconv.Itoa(r.Servers)},
		{"balancer", r.Balancer},
		{"on store error", r.OnError},
		{"clock", r.Clock},
		{"store round trip", f(r.RTTMs) + " ms"},
		{"duration", f(r.DurationS) + " s"},
		{"step", f(r.StepS) + " s"},
		{"seed", strconv.FormatUint(r.Seed, 10)},
		{"requests", words.Thousands(r.Requests)},
	}
	if len(r.Limit.Defaulted) > 0 {
		items = append(items, metaItem{"defaulted", strings.Join(r.Limit.Defaulted, ", ") + " (the algorithm was set by a flag)"})
	}
	if r.Live {
		items = append(items, metaItem{"mode", "live: measured over real HTTP"})
	}
	if command != "" {
		items = append(items, metaItem{"reproduce with", command})
	}
	items = append(items, metaItem{"result schema", or(r.Schema, sim.Schema)})
	kept := items[:0]
	for _, it := range items {
		if it.Value != "" {
			kept = append(kept, it)
		}
	}
	return kept
}

// limitText says what the limit is, in the algorithm's own terms.
func limitText(r *sim.Result) string {
	l := r.Limit
	rate := words.Rate(l.RatePerS)
	switch {
	case l.MaxInFlight > 0:
		return words.Concurrency(l.MaxInFlight, l.LeaseTTLS)
	case l.WindowS > 0: // a window algorithm: the result carries no window otherwise
		return fmt.Sprintf("%s per %s s window (%s)", strconv.FormatFloat(l.RatePerS*l.WindowS, 'f', -1, 64),
			strconv.FormatFloat(l.WindowS, 'f', -1, 64), rate) + defaultedText(l)
	case r.Algorithm == "leaky-bucket":
		return fmt.Sprintf("drains %s, queue %d", rate, l.Burst) + defaultedText(l)
	case l.NoDelay:
		return fmt.Sprintf("%s, burst %d nodelay", rate, l.Burst) + defaultedText(l)
	case l.Delay > 0:
		return fmt.Sprintf("%s, burst %d delay=%d", rate, l.Burst, l.Delay) + defaultedText(l)
	}
	return fmt.Sprintf("%s, burst %d", rate, l.Burst) + defaultedText(l)
}

// defaultedText notes the parameters a flag's algorithm got by default.
func defaultedText(l sim.LimitResult) string {
	if len(l.Defaulted) == 0 {
		return ""
	}
	return " (" + strings.Join(l.Defaulted, " and ") + " by default: the scenario sets none)"
}

func or(s, otherwise string) string {
	if s == "" {
		return otherwise
	}
	return s
}

// exactLimiter names what ideal_allowed counts for r's algorithm: the
// token bucket itself for the bucket algorithms (GCRA and the leaky bucket
// admit as it does), a sliding log for the window algorithms.
func exactLimiter(r *sim.Result) string {
	if r.Limit.WindowS > 0 {
		return "one atomic sliding log of the same limit"
	}
	return "one atomic token bucket of the same rate and burst"
}
