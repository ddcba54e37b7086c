package scenarios

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/ratelim/ratelim/internal/words"
	"github.com/ratelim/ratelim/sim"
)

// Question is what a file asks a class before the run (its question:
// mapping): a teacher's question whose answer, once the run shows it,
// is the lesson. It is one of the run's figures, the same Figure reads
// for an expectation:
//
//	question: {ask: "How many of bastion-1's requests get through?", figure: allowed, client: bastion-1}
//
// or which client has the most (or least) of one:
//
//	question: {ask: "Which client is refused most?", figure: rejected, pick: most}
//
// A question changes nothing of the run, and `ratelim check` does not
// read it: it is for a page that hides the result until a guess is made.
type Question struct {
	// Ask is the question as a teacher asks it: one line, at most
	// MaxAsk characters.
	Ask string
	// Figure is the figure that answers it: one of FigureNames.
	Figure string
	// Subject is whose figure, as Figure takes it: "" for every client
	// added up, a client's name, or key=KEY for a limiter key.
	Subject string
	// Pick is "" when the answer is Figure's number for Subject, or
	// "most" or "least" when it is the client with the most or least of
	// Figure (Subject is then "").
	Pick string
	// Line is the question:'s line in the file; 0 when a setting made it.
	Line int
}

// MaxAsk is the longest question, in characters: one line on a slide.
const MaxAsk = 200

// The picks: whom a pick question asks for.
const (
	PickMost  = "most"
	PickLeast = "least"
)

var picks = []string{PickMost, PickLeast}

// Answer is a run's answer to a Question.
type Answer struct {
	// Value is the figure: for Pick "", Subject's; for a pick, the
	// extreme the chosen clients share.
	Value float64
	// Clients are, for a pick, every client whose figure is the extreme,
	// in the file's order (clients tied at it are all the answer); nil
	// otherwise.
	Clients []string
	// Text is the answer as a page shows it: the number as the CLI writes
	// a figure ("250", "1,000", "0.5"), or the clients' names joined by
	// ", " ("bastion-1, bastion-2"). Names are the file's, not escaped:
	// a terminal escapes them, a page sets them as text.
	Text string
}

// Answer is r's answer to q: r is the run of the file q is from (of the
// file as Apply made it, with the same clients). An error says why the
// figure cannot be read: a subject the run does not have (a setting that
// renamed it, say), as Figure says it.
func (q *Question) Answer(r *sim.Result) (Answer, error) {
	if q.Pick == "" {
		v, err := Figure(r, q.Figure, q.Subject)
		if err != nil {
			return Answer{}, err
		}
		return Answer{Value: v, Text: figureText(v)}, nil
	}
	if q.Pick != PickMost && q.Pick != PickLeast {
		return Answer{}, &Error{Field: "question.pick", Msg: unknown("pick", q.Pick, picks)}
	}
	var a Answer
	for i := range r.Clients {
		name := r.Clients[i].Name
		v, err := Figure(r, q.Figure, name)
		if err != nil {
			return Answer{}, err
		}
		if math.IsNaN(v) {
			continue
		}
		better := a.Clients == nil || (q.Pick == PickMost && v > a.Value) || (q.Pick == PickLeast && v < a.Value)
		switch {
		case better:
			a.Value, a.Clients = v, []string{name}
		case v == a.Value:
			a.Clients = append(a.Clients, name)
		}
	}
	if a.Clients == nil {
		return Answer{}, &Error{Field: "question.figure", Msg: fmt.Sprintf("%s: the run has no client to pick (want a run with clients)", q.Figure)}
	}
	a.Text = strings.Join(a.Clients, ", ")
	return a, nil
}

// figureText is a figure as the CLI's tables write one: a whole number
// with thousands separators (1,000), anything else to four significant
// figures (0.5, 10.33); what `ratelim sweep --figure` writes in its
// table (cmd/ratelim's figureText, which this package cannot import).
func figureText(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return words.Thousands(int64(v))
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

const questionWant = `a mapping such as {ask: "How many of bastion-1's requests get through?", figure: allowed, client: bastion-1}`

// question reads the question: mapping, against the scenario's clients
// and keys (sc, read before it).
func (d *decoder) question(n *yaml.Node, sc *sim.Scenario) *Question {
	f := d.record(n, "question", &questionObject, questionWant)
	if d.failed() {
		return nil
	}
	q := &Question{Line: f.node.Line}
	for _, name := range []string{"ask", "figure"} {
		if !f.has(name) {
			d.failf(f.node, f.field(name), "missing (want %s)", questionWant)
			return nil
		}
	}
	q.Ask = d.ask(f.values["ask"], f.field("ask"))
	q.Figure = d.choice(f.values["figure"], f.field("figure"), "figure", figures)
	if d.failed() {
		return nil
	}
	for _, pair := range questionObject.notBoth {
		if f.has(pair[0]) && f.has(pair[1]) {
			d.failf(f.keys[pair[1]], f.field(pair[1]), "given with %s: (want a client or a key to ask about, or pick: to ask which client)", pair[0])
			return nil
		}
	}
	switch {
	case f.has("pick"):
		q.Pick = d.choice(f.values["pick"], f.field("pick"), "pick", picks)
	case f.has("client"):
		// Every figure is a client's: its own, or its timeline rows'.
		q.Subject = d.questionSubject(f.values["client"], f.field("client"), "client", namesOf(sc))
	case f.has("key"):
		key := d.questionSubject(f.values["key"], f.field("key"), "key", keysOf(sc))
		q.Subject = "key=" + key
		if !d.failed() && !slices.Contains(keyFigures, q.Figure) {
			d.failf(f.keys["figure"], f.field("figure"), "a key has no %s, only its clients do (want client: instead of key:, or one of %s)", q.Figure, words.OneOf(keyFigures))
		}
	default:
		if percentiles[q.Figure] != nil {
			d.failf(f.keys["figure"], f.field("figure"), "%s does not add up over clients (want client: NAME, or pick: most to ask whose is highest)", q.Figure)
		}
	}
	if d.failed() {
		return nil
	}
	return q
}

// ask reads a question's text: one line of at most MaxAsk characters.
func (d *decoder) ask(n *yaml.Node, field string) string {
	s := strings.TrimSpace(d.text(n, field, "How many of bastion-1's requests get through?"))
	switch {
	case d.failed():
		return ""
	case s == "":
		d.failf(n, field, "empty (want the question a teacher asks, e.g. \"How many of bastion-1's requests get through?\")")
	case strings.ContainsFunc(s, unicode.IsControl):
		d.failf(n, field, "more than one line, or a control character (want one line of text)")
	case utf8.RuneCountInString(s) > MaxAsk:
		d.failf(n, field, "%d characters (want at most %d, one line on a slide)", utf8.RuneCountInString(s), MaxAsk)
	}
	return s
}

// questionSubject reads a client's name or a limiter key, which must be
// one of names exactly (a question has one answer: no glob). A file's
// own question on a run that settings changed is not checked (the
// settings may rename what it asks about, as an expectation's subject):
// Answer says so instead, and the run is not refused for a question.
func (d *decoder) questionSubject(n *yaml.Node, field, what string, names []string) string {
	s := d.text(n, field, "bastion-1")
	if d.failed() || slices.Contains(names, s) || (d.settingsGiven && d.injected[n] == nil) {
		return s
	}
	list := names
	if len(list) > 8 {
		list = append(slices.Clone(list[:8]), "…")
	}
	msg := fmt.Sprintf("the run has no %s %s", what, quote(s))
	if sug := suggest(s, names); sug != "" {
		msg += fmt.Sprintf(", did you mean %q?", sug)
	}
	d.failf(n, field, "%s (want one of %s)", msg, strings.Join(list, ", "))
	return ""
}
