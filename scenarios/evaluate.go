package scenarios

import (
	"fmt"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/ratelim/ratelim/internal/words"
	"github.com/ratelim/ratelim/sim"
)

// Outcome is one expectation checked against one subject of a run: a
// client, or a limiter key. An expectation whose subject is a glob has an
// outcome per client or key it matches.
type Outcome struct {
	Expectation *Expectation
	Subject     string
	Got         float64
	OK          bool
	// GotText, when set, says what was got better than Got: for a
	// finding or a lesson, the kinds the run found.
	GotText string
}

// String renders the outcome as `ratelim check` prints it, without the
// verdict: "bastion-3 allowed_rate <= 11 (got 10.4)".
func (o Outcome) String() string {
	if o.GotText != "" {
		return fmt.Sprintf("%s (got %s)", o.Claim(), o.GotText)
	}
	return fmt.Sprintf("%s (got %s)", o.Claim(), formatFigure(o.Got))
}

// Claim is what the outcome checked, without what it got:
// "bastion-3 allowed_rate <= 11".
func (o Outcome) Claim() string {
	e := o.Expectation
	if e.Figure == "lesson" || e.Figure == "finding" {
		return e.Text
	}
	return fmt.Sprintf("%s %s %s", o.Subject, e.Figure, e.boundsText())
}

// Evaluate checks e against r. It is an error, and the expectation's fault,
// when its subject matches no client or key of the run, or when its figure
// cannot be taken over a span; the error names the file and line.
func Evaluate(file string, e *Expectation, r *sim.Result) ([]Outcome, error) {
	bad := func(format string, args ...any) error {
		return &Error{File: file, Line: e.Line, Field: "expect", Msg: fmt.Sprintf(format, args...)}
	}
	found := func() string {
		var kinds []string
		for _, f := range r.Findings {
			k := string(f.Kind)
			switch {
			case f.Client != "":
				k += " (" + f.Client + ")"
			case f.Key != "":
				k += " (key " + f.Key + ")"
			}
			kinds = append(kinds, k)
		}
		if len(kinds) == 0 {
			return "no findings"
		}
		return strings.Join(kinds, ", ")
	}
	switch e.Figure {
	case "lesson":
		got := 0.0
		if len(r.Findings) > 0 && r.Findings[0].Kind == e.Finding {
			got = 1
		}
		return []Outcome{{Expectation: e, Subject: "lesson", Got: got, OK: got == 1, GotText: found()}}, nil
	case "finding":
		got := 0.0
		for _, f := range r.Findings {
			if f.Kind == e.Finding && (e.Client == "" || globMatch(e.Client, f.Client)) && (e.Key == "" || globMatch(e.Key, f.Key)) {
				got++
			}
		}
		return []Outcome{{Expectation: e, Subject: "finding", Got: got, OK: got > 0, GotText: found()}}, nil
	}
	if e.During != nil && !slices.Contains(spanFigures, e.Figure) {
		return nil, bad("%s cannot be taken over a span (want one of %s with during)", e.Figure, words.OneOf(spanFigures))
	}
	var outs []Outcome
	if e.Client != "" {
		for _, c := range r.Clients {
			if !globMatch(e.Client, c.Name) {
				continue
			}
			got := clientFigure(e, &c, r, func(row sim.TimelineRow) bool { return row.Client == c.Name })
			outs = append(outs, Outcome{Expectation: e, Subject: c.Name, Got: got, OK: e.holds(got)})
		}
		if len(outs) == 0 {
			return nil, bad("client %q matches no client of %s (want one of %s)", e.Client, r.Scenario, clientNames(r))
		}
		return outs, nil
	}
	for _, k := range r.Keys {
		if !globMatch(e.Key, k.Key) {
			continue
		}
		clients := map[string]bool{}
		for _, c := range r.Clients {
			if c.Key == k.Key {
				clients[c.Name] = true
			}
		}
		got := keyFigure(e, &k, r, func(row sim.TimelineRow) bool { return clients[row.Client] })
		outs = append(outs, Outcome{Expectation: e, Subject: "key " + k.Key, Got: got, OK: e.holds(got)})
	}
	if len(outs) == 0 {
		return nil, bad("key %q matches no limiter key of %s", e.Key, r.Scenario)
	}
	return outs, nil
}

func globMatch(pattern, name string) bool {
	ok, err := path.Match(pattern, name)
	return err == nil && ok
}

func clientNames(r *sim.Result) string {
	var names []string
	for i, c := range r.Clients {
		if i == 8 {
			names = append(names, "...")
			break
		}
		names = append(names, c.Name)
	}
	return words.OneOf(names)
}

// holds reports whether got is within e's bounds. Equality allows for
// float rounding in rates.
func (e *Expectation) holds(got float64) bool {
	const eps = 1e-9
	if math.IsNaN(got) {
		return false
	}
	if e.Equals != nil && math.Abs(got-*e.Equals) > eps*math.Max(1, math.Abs(*e.Equals)) {
		return false
	}
	if e.Min != nil && got < *e.Min-eps {
		return false
	}
	if e.Max != nil && got > *e.Max+eps {
		return false
	}
	return true
}

func (e *Expectation) boundsText() string {
	var s string
	switch {
	case e.Equals != nil:
		s = "== " + formatFigure(*e.Equals)
	case e.Min != nil && e.Max != nil:
		s = "in [" + formatFigure(*e.Min) + ", " + formatFigure(*e.Max) + "]"
	case e.Min != nil:
		s = ">= " + formatFigure(*e.Min)
	case e.Max != nil:
		s = "<= " + formatFigure(*e.Max)
	}
	if e.During != nil {
		s += fmt.Sprintf(" during %s–%s", e.During.From, e.During.To)
	}
	return s
}

func formatFigure(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}
