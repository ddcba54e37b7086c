package probe

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/ratelim/ratelim/internal/escape"
	"github.com/ratelim/ratelim/internal/words"
)

// findings are the report's sentences, each saying only what the figures
// show.
func findings(r Report, best fit, est estimates) []string {
	var out []string
	fitText := fmt.Sprintf("Its model decides %d of the %d answers on the probe's key as they were decided", r.Decisions-r.Mismatches, r.Decisions)
	if r.RunnerUp != "" {
		fitText += fmt.Sprintf("; the next best, %s, %d", r.RunnerUp, r.Decisions-r.RunnerUpMismatches)
	}
	out = append(out, fmt.Sprintf("%s (confidence %s). %s.", capitalize(r.Family), r.Confidence, fitText))
	switch best.candidate.family {
	case familyConcurrency:
		out = append(out, fmt.Sprintf("At most %s in flight: a request was refused while %d admitted %s unanswered, whatever the rate.",
			words.Count(r.MaxInFlight, "request", "requests"), r.MaxInFlight, words.Plural(r.MaxInFlight, "one was", "ones were")))
	case familyBucket:
		// What was seen: the run before the first refusal, sent over
		// some time at the probe's rate, is the burst and what refilled
		// while it was sent, not the burst at once.
		first := fmt.Sprintf("the first %s were admitted", words.Count(est.firstRun, "request", "requests"))
		if est.firstRun == 1 {
			first = "the first request was admitted"
		}
		out = append(out, fmt.Sprintf("Rate %s/s (any from %s to %s fits as well), burst %d: %s before the first refusal, sent over %s (the burst and what the rate refilled meanwhile).",
			formatFloat(r.Rate), formatFloat(r.RateRange[0]), formatFloat(r.RateRange[1]), r.Burst, first,
			words.Duration((time.Duration(est.firstSpan)*time.Microsecond).Round(time.Millisecond))))
		if r.Queues {
			out = append(out, fmt.Sprintf("Admitted answers were held: their extra latency grew with the backlog, %.2f× the backlog ÷ rate a queue would give.", r.QueueSlope))
		} else {
			out = append(out, "Admitted answers were not held longer as the bucket emptied: no queue.")
		}
	default:
		fitsAsWell := fmt.Sprintf("windows from %s to %s fit as well", roundDuration(r.WindowLow), roundDuration(r.WindowHigh))
		switch r.Anchor {
		case "first-hit":
			out = append(out, fmt.Sprintf("%s per %s (%s), %s/s; windows anchored at the key's first request.",
				words.Count(r.Limit, "request", "requests"), time.Duration(r.Window), fitsAsWell, formatFloat(r.Rate)))
		case "clock":
			if r.WindowLow == r.WindowHigh {
				fitsAsWell = "no other length of the clock's fits as well"
			} else {
				fitsAsWell = fmt.Sprintf("any of the clock's lengths from %s to %s fits as well", roundDuration(r.WindowLow), roundDuration(r.WindowHigh))
			}
			out = append(out, fmt.Sprintf("%s per %s (%s), %s/s; windows aligned to the clock (multiples of the window since the Unix epoch; the lengths that divide a day were tried).",
				words.Count(r.Limit, "request", "requests"), time.Duration(r.Window), fitsAsWell, formatFloat(r.Rate)))
		default:
			out = append(out, fmt.Sprintf("%s per %s (%s), %s/s; a window that slides with each request.",
				words.Count(r.Limit, "request", "requests"), time.Duration(r.Window), fitsAsWell, formatFloat(r.Rate)))
		}
	}
	fixed := best.candidate.family == familyFixedClock || best.candidate.family == familyFixedFirst
	switch r.RefusedCounted {
	case "yes":
		out = append(out, "Refused requests are counted: sending into a refusal postponed recovery.")
	case "no":
		out = append(out, "Refused requests are not counted: the limit came back while the probe kept sending into refusals.")
	case "unknown":
		if fixed {
			out = append(out, "Whether refused requests are counted cannot show in a fixed window's answers: it refuses until the window ends either way.")
			break
		}
		out = append(out, "Whether refused requests are counted: the answers fit either way.")
	}
	if k := r.Key; k != nil {
		switch k.Keyed {
		case "yes":
			out = append(out, fmt.Sprintf("Keyed by %s: a fresh value was admitted (%d of %d) while the probe's own was refused (%d of %d).", k.Header, k.FreshAdmitted, k.FreshSent, k.OwnRefused, k.OwnSent))
		case "no":
			out = append(out, fmt.Sprintf("Not keyed by %s alone: a fresh value was refused too (%d of %d admitted).", k.Header, k.FreshAdmitted, k.FreshSent))
		default:
			if k.FreshSent == 0 {
				out = append(out, fmt.Sprintf("Whether %s keys the limit is unknown: the key test did not run (the probe's key was never refused twice in a row, or the budget ran out).", k.Header))
				break
			}
			out = append(out, fmt.Sprintf("Whether %s keys the limit is unknown: a fresh value was admitted %d of %d times, the probe's own %d of %d.", k.Header, k.FreshAdmitted, k.FreshSent, k.OwnSent-k.OwnRefused, k.OwnSent))
		}
	}
	out = append(out, headerFindings(r.Headers)...)
	return out
}

func headerFindings(h HeaderFindings) []string {
	if len(h.Sent) == 0 {
		return []string{"The answers carry no rate-limit fields (no Retry-After, RateLimit or X-RateLimit-*)."}
	}
	var out []string
	ra := h.RetryAfter
	if ra.WithField > 0 {
		s := fmt.Sprintf("Retry-After on %d of %d refusals: %d on time, %d early (a later request was still refused), %d late (admitted again over a second before it)",
			ra.WithField, ra.Refusals, ra.OnTime, ra.Early, ra.Late)
		if ra.Unverifiable > 0 {
			s += fmt.Sprintf(", %d not followed by an admission", ra.Unverifiable)
		}
		out = append(out, s+".")
	} else if ra.Refusals > 0 {
		out = append(out, fmt.Sprintf("No Retry-After on any of the %d refusals.", ra.Refusals))
	}
	for _, c := range h.Claims {
		verdict := "agrees"
		switch {
		case !c.Agrees:
			verdict = "does not agree"
		case c.WholeSeconds:
			verdict = fmt.Sprintf("agrees only to the field's whole seconds (%s s in whole seconds is %s s)", formatFloat(c.Observed), formatFloat(c.Says))
		}
		unit := ""
		if strings.HasSuffix(c.Field, " w") {
			unit = " s" // the draft's w: whole seconds
		}
		behaviour := formatFloat(c.Observed) + unit
		if c.ObservedRange != nil {
			behaviour += fmt.Sprintf(" (any from %s to %s%s fits as well)", formatFloat(c.ObservedRange[0]), formatFloat(c.ObservedRange[1]), unit)
		}
		out = append(out, fmt.Sprintf("%s says %s%s, the behaviour %s: it %s.", c.Field, formatFloat(c.Says), unit, behaviour, verdict))
	}
	if h.Remaining.Checked > 0 {
		out = append(out, fmt.Sprintf("The remaining quota sent agrees (within 1) with the fitted limiter's on %d of %d admitted answers.", h.Remaining.Agree, h.Remaining.Checked))
	}
	return out
}

// WriteText writes the report for a person, wrapped at 80 columns, with
// the limit block after it.
func WriteText(w io.Writer, r Report) error {
	var b strings.Builder
	// Target and KeyHeader may come from a file (--from): escaped, so
	// that no byte of theirs drives the terminal.
	fmt.Fprintf(&b, "probe %s\n", escape.Text(r.Target))
	fmt.Fprintf(&b, "  %d requests (%d answered) in %.1f s\n", r.Requests, r.Answered, r.Seconds)
	if r.Limited && r.Family != "" {
		b.WriteString(wrap(escape.Text(r.Family), 80, "  family      ", "              "))
		switch {
		case r.MaxInFlight > 0:
			fmt.Fprintf(&b, "  in flight   %d at once\n", r.MaxInFlight)
		case r.Limit > 0:
			fmt.Fprintf(&b, "  limit       %d per %s (%s/s)\n", r.Limit, time.Duration(r.Window), formatFloat(r.Rate))
		default:
			fmt.Fprintf(&b, "  rate        %s/s\n  burst       %d\n", formatFloat(r.Rate), r.Burst)
		}
		fmt.Fprintf(&b, "  refused     counted: %s\n", r.RefusedCounted)
		fmt.Fprintf(&b, "  confidence  %s (%d of %d answers as the model decides)\n", r.Confidence, r.Decisions-r.Mismatches, r.Decisions)
	}
	b.WriteString("\n")
	for _, f := range r.Findings {
		b.WriteString(wrap(escape.Text(f), 80, "", "  "))
	}
	if block := LimitBlock(r); block != "" {
		b.WriteString("\nA limit block to paste into a scenario:\n\n")
		b.WriteString(block)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON writes the report as indented JSON, with the limit block.
func WriteJSON(w io.Writer, r Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(struct {
		Report
		LimitBlock string `json:"limit_block,omitempty"`
	}{r, LimitBlock(r)})
}

// LimitBlock is the scenario limit: block that reproduces what was found,
// for ratelim's scenarios (docs/scenarios.md); "" when nothing was found.
// What ratelim's algorithms cannot say (windows anchored at a first hit,
// refusals counted, a tie) is said in comments above it.
func LimitBlock(r Report) string {
	if !r.Limited || r.Algorithm == "" {
		return ""
	}
	var b strings.Builder
	// Every line of the comment starts with "#": the target escaped has
	// no newline of its own to start a YAML line with.
	b.WriteString(wrap(fmt.Sprintf("probed %s: %s, confidence %s", escape.Text(r.Target), r.Family, r.Confidence), 80, "# ", "# "))
	switch {
	case r.Algorithm == "haproxy-req-rate":
		b.WriteString("# HAProxy's http_req_rate: periods from the key's first hit, refusals counted\n")
	case r.Anchor == "first-hit":
		b.WriteString("# its windows start at the key's first request; ratelim's start on the clock\n")
	}
	if r.RefusedCounted == "yes" && r.Algorithm != "haproxy-req-rate" {
		b.WriteString("# it counts refused requests too; ratelim's algorithms count admissions only\n")
	}
	if r.MaxInFlight > 0 {
		b.WriteString("# lease_ttl is not observable from outside: 30s is a guess to edit\n")
	}
	b.WriteString("limit:\n")
	fmt.Fprintf(&b, "  algorithm: %s\n", r.Algorithm)
	switch {
	case r.MaxInFlight > 0:
		fmt.Fprintf(&b, "  max_in_flight: %d\n  lease_ttl: 30s\n", r.MaxInFlight)
	case r.Limit > 0:
		window := time.Duration(r.Window)
		fmt.Fprintf(&b, "  rate: %s\n", windowRate(r.Limit, window))
		fmt.Fprintf(&b, "  window: %s\n", words.Duration(window))
	default:
		rate := r.Rate
		if r.exactRate > 0 {
			rate = r.exactRate
		}
		fmt.Fprintf(&b, "  rate: %s\n", bucketRate(rate))
		fmt.Fprintf(&b, "  burst: %d\n", r.Burst)
	}
	// A scenario keys by the headers ratelim's servers read: say so when
	// the probe found the limit keyed by one of them.
	if k := r.Key; k != nil && k.Keyed == "yes" {
		switch http.CanonicalHeaderKey(k.Header) {
		case "X-Api-Key":
			b.WriteString("  key: api-key\n")
		case "X-User":
			b.WriteString("  key: user\n")
		}
	}
	return b.String()
}

// windowRate writes limit per window as a rate whose product with the
// window is limit exactly: 20/s for 40 per 2 s, 7/1.5s otherwise.
func windowRate(limit int64, window time.Duration) string {
	switch {
	case window%time.Second == 0 && limit%int64(window/time.Second) == 0:
		return fmt.Sprintf("%d/s", limit/int64(window/time.Second))
	case window == time.Minute:
		return fmt.Sprintf("%d/m", limit)
	case window == time.Hour:
		return fmt.Sprintf("%d/h", limit)
	}
	return fmt.Sprintf("%d/%s", limit, words.Duration(window))
}

// bucketRate writes a rate per second as ParseRate reads it: per second
// when whole, else per minute, else per hour, else over the power of ten of seconds
// that makes it whole.
func bucketRate(perSecond float64) string {
	if perSecond == math.Trunc(perSecond) {
		return fmt.Sprintf("%d/s", int64(perSecond))
	}
	if m := perSecond * 60; math.Abs(m-math.Round(m)) < 1e-9 {
		return fmt.Sprintf("%d/m", int64(math.Round(m)))
	}
	if h := perSecond * 3600; math.Abs(h-math.Round(h)) < 1e-9 {
		return fmt.Sprintf("%d/h", int64(math.Round(h)))
	}
	// Not whole in any unit: to four significant digits, as the report
	// says it (49.95/s, never 499524/10000s).
	perSecond = round4(perSecond)
	if perSecond == math.Trunc(perSecond) {
		return fmt.Sprintf("%d/s", int64(perSecond))
	}
	for per := 10.0; per < 1e4; per *= 10 {
		if n := perSecond * per; math.Abs(n-math.Round(n)) < 1e-6 {
			return fmt.Sprintf("%d/%gs", int64(math.Round(n)), per)
		}
	}
	return fmt.Sprintf("%d/%gs", int64(math.Round(perSecond*1e4)), 1e4)
}

func roundDuration(d Duration) time.Duration {
	return time.Duration(d).Round(time.Millisecond)
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// wrap breaks text into lines of at most width columns (counting runes),
// the first prefixed by first and the rest by rest.
func wrap(text string, width int, first, rest string) string {
	var b strings.Builder
	line, prefix := "", first
	for _, word := range strings.Fields(text) {
		if line != "" && len([]rune(prefix+line+" "+word)) > width {
			b.WriteString(prefix + line + "\n")
			line, prefix = "", rest
		}
		if line == "" {
			line = word
		} else {
			line += " " + word
		}
	}
	if line != "" {
		b.WriteString(prefix + line + "\n")
	}
	return b.String()
}
