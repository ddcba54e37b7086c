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

	"github.com/ratelim/ratelim/internal/escape"
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
	// MaxAsk characters. It may name the run's values by their paths in
	// braces, as Value takes them, so that it stays true when a setting
	// changes them:
	//
	//	The limit is {limit.rate}, burst {limit.burst}: how many of app's requests get through?
	//
	// Ask is the text as written; Text fills the placeholders.
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
	// extreme the chosen clients share. A figure that is no number (NaN,
	// an infinity) is 0 here and "—" in Text, so that an Answer always
	// encodes as JSON.
	Value float64
	// Clients are, for a pick, every client whose figure is the extreme,
	// in the file's order (clients tied at it are all the answer); nil
	// otherwise, and nil when every client ties (AllTied).
	Clients []string
	// AllTied reports whether, for a pick of two or more clients, every
	// client has the same figure: the pick names nobody, and Text says
	// so ("none" for the most of a figure that is 0 for all, else "all
	// alike (N)").
	AllTied bool
	// Text is the answer as a page shows it: the number as the CLI's
	// tables write a figure (words.Figure: "250", "1,000", "0.5", "—"),
	// the clients' names joined by ", " ("bastion-1, bastion-2"), or for
	// a full tie "none" or "all alike (250)". Names are the file's, not
	// escaped: a terminal escapes them, a page sets them as text.
	Text string
}

// Answer is r's answer to q: r is the run of the file q is from (of the
// file as Apply made it, with the same clients). An error says why the
// figure cannot be read: a subject the run does not have (a setting that
// renamed it, say), an *Error at the question's line (File is the
// caller's to fill: Answer has no file name), its Field question.client,
// question.key or question.figure, and a want that names the setting
// that asks about one the run has:
//
//	question.client: the run has no client "bastion-1" (want one of b-1, b-2, web or db; or --set question.client=b-1)
func (q *Question) Answer(r *sim.Result) (Answer, error) {
	if q.Pick == "" {
		if err := q.subjectIn(r); err != nil {
			return Answer{}, err
		}
		v, err := q.figure(r, q.Subject)
		if err != nil {
			return Answer{}, err
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			// No number (a percentile of no latencies): none to encode
			// as JSON either.
			return Answer{Text: words.Figure(v)}, nil
		}
		return Answer{Value: v, Text: words.Figure(v)}, nil
	}
	if q.Pick != PickMost && q.Pick != PickLeast {
		return Answer{}, &Error{Line: q.Line, Field: "question.pick", Msg: unknown("pick", q.Pick, picks)}
	}
	var a Answer
	numbered := 0 // clients whose figure is a number
	for i := range r.Clients {
		name := r.Clients[i].Name
		v, err := q.figure(r, name)
		if err != nil {
			return Answer{}, err
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue // no number to compare (a percentile of nothing)
		}
		numbered++
		better := a.Clients == nil || (q.Pick == PickMost && v > a.Value) || (q.Pick == PickLeast && v < a.Value)
		switch {
		case better:
			a.Value, a.Clients = v, []string{name}
		case v == a.Value:
			a.Clients = append(a.Clients, name)
		}
	}
	if a.Clients == nil {
		// No client, or none with a number for the figure (a
		// percentile where no request was admitted).
		return Answer{}, &Error{Line: q.Line, Field: "question.figure", Msg: fmt.Sprintf("no client has a number for %s to pick from (want a figure every client has, e.g. --set question.figure=allowed)", q.Figure)}
	}
	if numbered > 1 && len(a.Clients) == numbered {
		// Every client at the extreme names nobody: "refused most" of
		// three clients none of which was refused is not an answer.
		a.Clients, a.AllTied = nil, true
		a.Text = fmt.Sprintf("all alike (%s)", words.Figure(a.Value))
		if q.Pick == PickMost && a.Value == 0 {
			a.Text = "none"
		}
		return a, nil
	}
	a.Text = strings.Join(a.Clients, ", ")
	return a, nil
}

// figure is q's figure of subject in r, its error at the question's
// line and field.
func (q *Question) figure(r *sim.Result, subject string) (float64, error) {
	v, err := Figure(r, q.Figure, subject)
	if err != nil {
		msg := err.Error()
		if e, ok := err.(*Error); ok {
			msg = e.Msg
		}
		return 0, &Error{Line: q.Line, Field: "question.figure", Msg: msg}
	}
	return v, nil
}

// subjectIn is the error for a question about a client or key r does
// not have: nil when it has it, or the question is about every client.
func (q *Question) subjectIn(r *sim.Result) error {
	field, what, subject := "question.client", "client", q.Subject
	var names []string
	if key, ok := strings.CutPrefix(q.Subject, "key="); ok {
		field, what, subject = "question.key", "key", key
		for _, k := range r.Keys {
			names = append(names, k.Key)
		}
	} else {
		names = clientNamesOf(r)
	}
	if subject == "" && q.Subject == "" || slices.Contains(names, subject) {
		return nil
	}
	want := "a run with a " + what
	if len(names) > 0 {
		list := names
		if len(list) > 8 {
			list = append(slices.Clone(list[:8]), "…")
		}
		want = fmt.Sprintf("one of %s; or --set %s", strings.Join(list, ", "), words.ShellWord(field+"="+names[0]))
	}
	// Names come from the file or a log: escaped for a terminal.
	return &Error{Line: q.Line, Field: field, Msg: escape.Text(fmt.Sprintf("the run has no %s %s (want %s)", what, quote(subject), want))}
}

// clientNamesOf are r's clients' names, in order.
func clientNamesOf(r *sim.Result) []string {
	names := make([]string, len(r.Clients))
	for i := range r.Clients {
		names[i] = r.Clients[i].Name
	}
	return names
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
			// A setting of one (question.pick=most on a file that asks
			// about a client) cannot take the file's other away: the
			// whole mapping can, and the want writes it.
			keep := pair[0]
			if d.injected[f.values[pair[1]]] != nil {
				keep = pair[1]
			}
			whole := fmt.Sprintf("question={ask: %s, figure: %s, %s: %s}", strconv.Quote(q.Ask), q.Figure, keep, f.values[keep].Value)
			d.failf(f.keys[pair[1]], f.field(pair[1]), "given with %s: (want a client or a key to ask about, or pick: to ask which client; to change one for the other, set the whole question: --set %s)", pair[0], words.ShellWord(whole))
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

// Text is q's Ask with every placeholder filled with its value in f, the
// file q is from as Apply made it (Value: the settings' value, else the
// file's): "The limit is {limit.rate}" reads "The limit is 100000/s" once
// a page's slider sets limit.rate. A placeholder with no value in f (a
// setting that replaced the mapping it was in) stays as written, braces
// and all. Values are the file's text, not escaped: a terminal escapes
// them, a page sets them as text.
func (q *Question) Text(f *File) string {
	var b strings.Builder
	rest := q.Ask
	for {
		at, end, ok := nextPlaceholder(rest)
		if !ok || at < 0 {
			b.WriteString(rest)
			return b.String()
		}
		b.WriteString(rest[:at])
		if v, ok := Value(f, rest[at+1:end]); ok {
			b.WriteString(v)
		} else {
			b.WriteString(rest[at : end+1])
		}
		rest = rest[end+1:]
	}
}

// nextPlaceholder finds the first {path} in s: at is its {, end its
// matching } (braces nest: {clients[web-{i}].traffic.rate} is one); at
// is -1 when s has none, and ok false when a { is never closed or a }
// never opened.
func nextPlaceholder(s string) (at, end int, ok bool) {
	at = strings.IndexAny(s, "{}")
	if at < 0 {
		return -1, 0, true
	}
	if s[at] == '}' {
		return at, at, false
	}
	depth := 0
	for i := at; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 {
				return at, i, true
			}
		}
	}
	return at, len(s), false
}

const placeholderWant = "want {PATH} of a field the file sets, e.g. {limit.rate} or {clients[web].traffic.rate}"

// placeholders checks the {path}s in an ask: each closed, each a path
// (Value's), and each naming a field the file writes, in the tree with
// any settings in place. A file's own ask on a run that settings changed
// is checked for its paths only: a setting may take a field away (a
// whole limit: mapping), and Text then writes the placeholder as is.
func (d *decoder) placeholders(n *yaml.Node, field, s string) {
	for rest := s; ; {
		at, end, ok := nextPlaceholder(rest)
		switch {
		case !ok:
			d.failf(n, field, "%s has no match, at %s (%s)", quote(rest[at:at+1]), quote(rest[at:min(len(rest), at+24)]), placeholderWant)
			return
		case at < 0:
			return
		}
		path := rest[at+1 : end]
		if _, err := parsePath(settingKey(path)); err != nil || path == "" {
			d.failf(n, field, "{%s} is not a field's path (%s)", path, placeholderWant)
			return
		}
		if !(d.settingsGiven && d.injected[n] == nil) && d.root != nil {
			if _, ok := valueAt(d.root, path); !ok {
				d.failf(n, field, "{%s} names no field the file writes (%s)", path, placeholderWant)
				return
			}
		}
		rest = rest[end+1:]
	}
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
	case strings.ContainsFunc(s, isFormat):
		// An invisible one (U+200B) or one that turns the text around
		// (U+202E): the page and a terminal would show another question.
		d.failf(n, field, "a format character, %U (want one line of plain text)", firstRune(s[strings.IndexFunc(s, isFormat):]))
	case utf8.RuneCountInString(s) > MaxAsk:
		d.failf(n, field, "%d characters (want at most %d, one line on a slide)", utf8.RuneCountInString(s), MaxAsk)
	default:
		d.placeholders(n, field, s)
	}
	return s
}

// isFormat says whether r is a Unicode format character (Cf): invisible,
// or one that reorders the text around it.
func isFormat(r rune) bool { return unicode.Is(unicode.Cf, r) }

// firstRune is s's first character.
func firstRune(s string) rune {
	r, _ := utf8.DecodeRuneInString(s)
	return r
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
	d.notOneOf(n, field, fmt.Sprintf("the run has no %s %s", what, quote(s)), s, names)
	return ""
}
