package scenarios

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratelim/ratelim/internal/words"
	"github.com/ratelim/ratelim/sim"
)

// questionBase is a scenario of three clients, two of them on one key,
// for the question: cases to append to.
const questionBase = `name: q
duration: 10s
limit: {rate: 10/s, burst: 10, key: api-key}
clients:
  - {name: 'web-{i}', count: 2, api_key: web, traffic: {pattern: constant, rate: 5/s}}
  - {name: batch, api_key: batch, traffic: {pattern: constant, rate: 20/s}}
`

func TestQuestionErrors(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       string // the error's exact file:line: field: prefix
		msg        string // and a part of what it says
	}{
		{"not a mapping", "question: how many?\n", "q.yaml:7: question: ", "is not a mapping"},
		{"ask missing", "question: {figure: allowed}\n", "q.yaml:7: question.ask: ", "missing"},
		{"figure missing", "question: {ask: 'how many?'}\n", "q.yaml:7: question.figure: ", "missing"},
		{"unknown field", "question: {ask: 'how many?', figure: allowed, clients: batch}\n", "q.yaml:7: question.clients: ", `did you mean "client"?`},
		{"unknown figure", "question: {ask: 'how many?', figure: alowed}\n", "q.yaml:7: question.figure: ", `unknown figure "alowed", did you mean "allowed"? (want sent, allowed, rejected`},
		{"empty ask", "question: {ask: ' ', figure: allowed}\n", "q.yaml:7: question.ask: ", "empty"},
		{"two lines", "question: {ask: \"how\\nmany?\", figure: allowed}\n", "q.yaml:7: question.ask: ", "want one line of text"},
		{"right-to-left override", "question: {ask: \"How many\\u202e?\", figure: allowed}\n", "q.yaml:7: question.ask: ", "a format character, U+202E (want one line of plain text)"},
		{"zero-width space", "question: {ask: \"How\\u200bmany?\", figure: allowed}\n", "q.yaml:7: question.ask: ", "U+200B"},
		{"a placeholder of no field", "question: {ask: 'At {limit.rat}, how many?', figure: allowed}\n", "q.yaml:7: question.ask: ", "{limit.rat} names no field the file writes (want {PATH} of a field the file sets, e.g. {limit.rate}"},
		{"a placeholder of no path", "question: {ask: 'At {limit..rate}, how many?', figure: allowed}\n", "q.yaml:7: question.ask: ", "{limit..rate} is not a field's path (want {PATH}"},
		{"an empty placeholder", "question: {ask: 'At {}, how many?', figure: allowed}\n", "q.yaml:7: question.ask: ", "{} is not a field's path"},
		{"a placeholder not closed", "question: {ask: 'At {limit.rate, how many?', figure: allowed}\n", "q.yaml:7: question.ask: ", `"{" has no match, at "{limit.rate, how many?" (want {PATH}`},
		{"a brace not opened", "question: {ask: 'At limit.rate}, how many?', figure: allowed}\n", "q.yaml:7: question.ask: ", `"}" has no match`},
		{"too long", "question: {ask: " + strings.Repeat("a", MaxAsk+1) + ", figure: allowed}\n", "q.yaml:7: question.ask: ", "201 characters (want at most 200"},
		{"unknown client", "question: {ask: 'how many?', figure: allowed, client: bach}\n", "q.yaml:7: question.client: ", `the run has no client "bach", did you mean "batch"? (want one of web-1, web-2, batch)`},
		{"a client before count expands it", "question: {ask: 'how many?', figure: allowed, client: 'web-{i}'}\n", "q.yaml:7: question.client: ", `no client "web-{i}"`},
		{"a glob", "question: {ask: 'how many?', figure: allowed, client: 'web-*'}\n", "q.yaml:7: question.client: ", `no client "web-*"`},
		{"unknown key", "question: {ask: 'how many?', figure: allowed, key: webb}\n", "q.yaml:7: question.key: ", `the run has no key "webb", did you mean "web"? (want one of web, batch)`},
		{"a key's figure", "question: {ask: 'how many?', figure: retries, key: web}\n", "q.yaml:7: question.figure: ", "a key has no retries"},
		{"client and key", "question: {ask: 'how many?', figure: allowed, client: batch, key: web}\n", "q.yaml:7: question.key: ", "given with client:"},
		{"pick and client", "question: {ask: 'who?', figure: allowed, client: batch, pick: most}\n", "q.yaml:7: question.client: ", "given with pick:"},
		{"unknown pick", "question: {ask: 'who?', figure: allowed, pick: mostly}\n", "q.yaml:7: question.pick: ", `unknown pick "mostly", did you mean "most"? (want most or least)`},
		{"a percentile over every client", "question: {ask: 'how slow?', figure: p99_ms}\n", "q.yaml:7: question.figure: ", "p99_ms does not add up over clients"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("q.yaml", []byte(questionBase+tt.yaml))
			if err == nil {
				t.Fatalf("no error (want %s...%s)", tt.want, tt.msg)
			}
			if got := err.Error(); !strings.HasPrefix(got, tt.want) || !strings.Contains(got, tt.msg) {
				t.Errorf("got  %s\nwant %s...%s...", got, tt.want, tt.msg)
			}
		})
	}
}

func TestQuestionRead(t *testing.T) {
	tests := []struct {
		yaml string
		want Question
	}{
		{"question: {ask: ' How many? ', figure: allowed}\n", Question{Ask: "How many?", Figure: "allowed", Line: 7}},
		{"question: {ask: 'How many?', figure: allowed, client: web-2}\n", Question{Ask: "How many?", Figure: "allowed", Subject: "web-2", Line: 7}},
		{"question: {ask: 'How many?', figure: allowed_rate, key: web}\n", Question{Ask: "How many?", Figure: "allowed_rate", Subject: "key=web", Line: 7}},
		{"question:\n  ask: 'Whose is slowest?'\n  figure: p99_ms\n  pick: most\n", Question{Ask: "Whose is slowest?", Figure: "p99_ms", Pick: PickMost, Line: 8}},
	}
	for _, tt := range tests {
		f, err := Parse("q.yaml", []byte(questionBase+tt.yaml))
		if err != nil {
			t.Fatalf("%s: %v", tt.yaml, err)
		}
		if f.Question == nil || *f.Question != tt.want {
			t.Errorf("%s: got %+v, want %+v", tt.yaml, f.Question, tt.want)
		}
	}
	f, err := Parse("q.yaml", []byte(questionBase))
	if err != nil || f.Question != nil {
		t.Errorf("a file without question: has Question %+v, %v (want nil)", f.Question, err)
	}
}

// TestQuestionText fills an ask's placeholders with the run's values:
// the file's, then a setting's; a placeholder whose field a setting
// took away stays as written.
func TestQuestionText(t *testing.T) {
	f, err := Parse("q.yaml", []byte(questionBase+"question: {ask: \"The limit is {limit.rate}, burst {burst}; {clients[web-{i}].traffic.rate} each: how many of {clients[1].name}'s?\", figure: allowed, client: batch}\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		sets []Setting
		want string
	}{
		{nil, "The limit is 10/s, burst 10; 5/s each: how many of batch's?"},
		{[]Setting{{Name: "limit.rate", Value: "100000/s"}, {Name: "burst", Value: "7"}}, "The limit is 100000/s, burst 7; 5/s each: how many of batch's?"},
		{[]Setting{{Name: "clients[web-{i}].traffic", Value: "{pattern: constant, rate: 9/s}"}}, "The limit is 10/s, burst 10; 9/s each: how many of batch's?"},
		{[]Setting{{Name: "limit", Value: "{algorithm: fixed-window, rate: 3/s, window: 1s, key: api-key}"}}, "The limit is 3/s, burst {burst}; 5/s each: how many of batch's?"},
	} {
		g, err := Apply(f, tt.sets)
		if err != nil {
			t.Fatalf("%v: %v", tt.sets, err)
		}
		if got := g.Question.Text(g); got != tt.want {
			t.Errorf("%v: Text %q, want %q", tt.sets, got, tt.want)
		}
	}
	// A setting's ask is checked against the run it makes.
	if _, err := Apply(f, []Setting{{Name: "question.ask", Value: "At {limit.window}?", Flag: "--set question.ask"}}); err == nil || !strings.Contains(err.Error(), "{limit.window} names no field the file writes") {
		t.Errorf("a set ask with a placeholder of no field: %v", err)
	}
}

// TestSettingsKeepTheAskTrue: on every built-in, a setting of each value
// its ask names shows in the question Text writes; an ask says no value
// a setting can change except through a placeholder (the review's case:
// expensive-search at 100000/s still read "20 units a second").
func TestSettingsKeepTheAskTrue(t *testing.T) {
	for _, name := range Builtin() {
		f, err := Open(name)
		if err != nil {
			t.Fatal(err)
		}
		ask := f.Question.Ask
		for rest := ask; ; {
			at, end, ok := nextPlaceholder(rest)
			if !ok || at < 0 {
				break
			}
			path := rest[at+1 : end]
			rest = rest[end+1:]
			old, ok := Value(f, path)
			value := nudged(t, old, ok)
			g, err := Apply(f, []Setting{{Name: path, Value: value}})
			if err != nil {
				t.Errorf("%s: %s=%s: %v", name, path, value, err)
				continue
			}
			if text := g.Question.Text(g); !strings.Contains(text, value) {
				t.Errorf("%s: %s=%s: the question reads %q", name, path, value, text)
			}
		}
		// The numbers left in the ask are none a setting changes: no
		// digit outside a placeholder but a client's or a server's name.
		bare := regexp.MustCompile(`\{[^{}]*(\{[^{}]*\}[^{}]*)*\}`).ReplaceAllString(ask, "")
		if d := regexp.MustCompile(`[0-9][0-9.,/]*\s*(s|ms|m|h|%|/s|a second|an hour|units|×)?`).FindString(bare); d != "" && !allowedDigits(name, bare) {
			t.Errorf("%s: the ask states %q outside a placeholder: %q", name, d, ask)
		}
	}
}

// nudged is a value a little off old: a duration 100ms later, a rate or
// a count one more.
func nudged(t *testing.T, old string, ok bool) string {
	t.Helper()
	if d, err := time.ParseDuration(old); err == nil {
		return words.Duration(d + 100*time.Millisecond)
	}
	n, unit, _ := strings.Cut(old, "/")
	i, err := strconv.Atoi(n)
	if !ok || err != nil {
		t.Fatalf("a placeholder's value %q: not a duration, rate or count", old)
	}
	if unit != "" {
		unit = "/" + unit
	}
	return strconv.Itoa(i+1) + unit
}

// allowedDigits says whether the digits left in a built-in's ask name
// things, not settings (bastion-1, rack 1 and rack 2: names of clients;
// 429: HTTP's status).
func allowedDigits(name, bare string) bool {
	for _, n := range []string{"bastion-1", "Rack 1", "rack 2", "429"} {
		bare = strings.ReplaceAll(bare, n, "")
	}
	return !strings.ContainsAny(bare, "0123456789")
}

// TestQuestionSettings sets a question's fields as any field is set:
// read, checked and blamed on the setting.
func TestQuestionSettings(t *testing.T) {
	f, err := Parse("q.yaml", []byte(questionBase+"question: {ask: 'How many?', figure: allowed, client: web-1}\n"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := Apply(f, []Setting{{Name: "question.client", Value: "batch"}, {Name: "question.figure", Value: "rejected"}})
	if err != nil {
		t.Fatal(err)
	}
	if q := g.Question; q.Subject != "batch" || q.Figure != "rejected" || q.Ask != "How many?" {
		t.Errorf("question after settings: %+v (want batch's rejected)", q)
	}
	// A pick set on a client's question: the want says how, as the
	// whole mapping (pasted into a shell, then read by Apply, it runs).
	_, err = Apply(f, []Setting{{Name: "question.pick", Value: "most", Flag: "--set question.pick"}})
	const how = `--set 'question={ask: "How many?", figure: allowed, pick: most}')`
	if err == nil || !strings.HasSuffix(err.Error(), how) {
		t.Errorf("a pick set on a client's question: %v (want ...%s)", err, how)
	}
	if _, err := Apply(f, []Setting{{Name: "question", Value: `{ask: "How many?", figure: allowed, pick: most}`}}); err != nil {
		t.Errorf("the want's own setting: %v", err)
	}
	if f.Question.Subject != "web-1" {
		t.Errorf("Apply changed the file's own question: %+v", f.Question)
	}
	_, err = Apply(f, []Setting{{Name: "question.client", Value: "bach", Flag: "--set question.client"}})
	if err == nil || err.Error() != `--set question.client: the run has no client "bach", did you mean "batch"? (want one of web-1, web-2, batch)` {
		t.Errorf("an unknown client set: %v", err)
	}
	// A setting that renames the clients leaves the file's own question
	// unchecked: the run is made, and Answer says what is missing.
	g, err = Apply(f, []Setting{{Name: "clients[0].name", Value: "app-{i}"}})
	if err != nil {
		t.Fatalf("a run whose settings rename the question's client: %v", err)
	}
	r, err := sim.Run(context.Background(), g.Scenario, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The error is at the question's line, on question.client, and says
	// which setting asks about a client the run has.
	_, err = g.Question.Answer(r)
	var e *Error
	if !errors.As(err, &e) || e.Line != 7 || e.Field != "question.client" ||
		e.Msg != `the run has no client "web-1" (want one of app-1, app-2, batch; or --set question.client=app-1)` {
		t.Errorf("the answer for a client the run lacks: %#v", err)
	}
	kf, err := Parse("q.yaml", []byte(questionBase+"question: {ask: 'How many?', figure: allowed, key: web}\n"))
	if err != nil {
		t.Fatal(err)
	}
	k, err := Apply(kf, []Setting{{Name: "clients[0].api_key", Value: "app"}})
	if err != nil {
		t.Fatal(err)
	}
	if r, err = sim.Run(context.Background(), k.Scenario, sim.Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err = k.Question.Answer(r); !errors.As(err, &e) || e.Field != "question.key" || !strings.HasSuffix(e.Msg, "; or --set question.key=app)") {
		t.Errorf("the answer for a key the run lacks: %#v", err)
	}
}

// TestAnswerPick checks a pick on results made to tie, whatever the
// simulator does: every client at the extreme, in the run's order.
func TestAnswerPick(t *testing.T) {
	r := &sim.Result{Scenario: "t", DurationS: 10, Clients: []sim.ClientResult{
		{Name: "a", Counts: sim.Counts{Sent: 10, Allowed: 5, Rejected: 5}},
		{Name: "b", Counts: sim.Counts{Sent: 30, Allowed: 9, Rejected: 21}},
		{Name: "c", Counts: sim.Counts{Sent: 12, Allowed: 9, Rejected: 3}},
	}, Keys: []sim.KeyResult{
		{Key: "a", Counts: sim.Counts{Sent: 10, Allowed: 5, Rejected: 5}},
		{Key: "bc", Counts: sim.Counts{Sent: 42, Allowed: 18, Rejected: 24}},
	}}
	tests := []struct {
		q    Question
		want Answer
	}{
		{Question{Figure: "allowed", Pick: PickMost}, Answer{Value: 9, Clients: []string{"b", "c"}, Text: "b, c"}},
		{Question{Figure: "allowed", Pick: PickLeast}, Answer{Value: 5, Clients: []string{"a"}, Text: "a"}},
		{Question{Figure: "rejected", Pick: PickMost}, Answer{Value: 21, Clients: []string{"b"}, Text: "b"}},
		{Question{Figure: "sent"}, Answer{Value: 52, Text: "52"}},
		{Question{Figure: "allowed_rate", Subject: "a"}, Answer{Value: 0.5, Text: "0.5"}},
		{Question{Figure: "allowed_rate", Subject: "c"}, Answer{Value: 0.9, Text: "0.9"}},
		{Question{Figure: "allowed_rate"}, Answer{Value: 2.3, Text: "2.3"}},
	}
	// Every client alike names nobody.
	tied := &sim.Result{Scenario: "t", DurationS: 10, Clients: []sim.ClientResult{
		{Name: "a", Counts: sim.Counts{Sent: 10, Allowed: 10}},
		{Name: "b", Counts: sim.Counts{Sent: 10, Allowed: 10}},
		{Name: "c", Counts: sim.Counts{Sent: 10, Allowed: 10}, LatencyMs: sim.LatencySummary{P99: math.NaN()}},
	}}
	for _, tt := range []struct {
		q    Question
		want Answer
	}{
		{Question{Figure: "rejected", Pick: PickMost}, Answer{Value: 0, AllTied: true, Text: "none"}},
		{Question{Figure: "rejected", Pick: PickLeast}, Answer{Value: 0, AllTied: true, Text: "all alike (0)"}},
		{Question{Figure: "allowed", Pick: PickMost}, Answer{Value: 10, AllTied: true, Text: "all alike (10)"}},
		// c has no number and is left out: a and b, every client that
		// has one, tie at 0.
		{Question{Figure: "p99_ms", Pick: PickMost}, Answer{Value: 0, AllTied: true, Text: "none"}},
	} {
		got, err := tt.q.Answer(tied)
		if err != nil {
			t.Errorf("tied %+v: %v", tt.q, err)
			continue
		}
		if got.Value != tt.want.Value || got.Text != tt.want.Text || got.AllTied != tt.want.AllTied || got.Clients != nil {
			t.Errorf("tied %+v: got %+v, want %+v", tt.q, got, tt.want)
		}
	}
	for _, tt := range tests {
		got, err := tt.q.Answer(r)
		if err != nil {
			t.Errorf("%+v: %v", tt.q, err)
			continue
		}
		if got.Value != tt.want.Value || got.Text != tt.want.Text || got.AllTied || !slices.Equal(got.Clients, tt.want.Clients) {
			t.Errorf("%+v: got %+v, want %+v", tt.q, got, tt.want)
		}
	}
	if _, err := (&Question{Figure: "allowed", Subject: "d"}).Answer(r); err == nil {
		t.Error("an answer for a client the run lacks: no error")
	}
	// No client with a number for the figure: nothing to pick.
	none := &sim.Result{Scenario: "t", Clients: []sim.ClientResult{{Name: "a", LatencyMs: sim.LatencySummary{P99: math.NaN()}}}}
	_, err := (&Question{Figure: "p99_ms", Pick: PickMost, Line: 9}).Answer(none)
	if e, ok := err.(*Error); !ok || e.Line != 9 || e.Field != "question.figure" || !strings.Contains(e.Msg, "no client has a number for p99_ms") {
		t.Errorf("a pick of no numbers: %#v", err)
	}
}

// TestAnswerNoNumber: a figure that is no number is "—", and the
// answer still encodes as JSON (a page's Response carries it).
func TestAnswerNoNumber(t *testing.T) {
	r := &sim.Result{Scenario: "t", DurationS: 10, Clients: []sim.ClientResult{
		{Name: "a", LatencyMs: sim.LatencySummary{P99: math.NaN()}},
		{Name: "b", LatencyMs: sim.LatencySummary{P99: math.Inf(1)}},
	}}
	for _, subject := range []string{"a", "b"} {
		a, err := (&Question{Figure: "p99_ms", Subject: subject}).Answer(r)
		if err != nil {
			t.Fatal(err)
		}
		if a.Text != "—" {
			t.Errorf("%s's p99_ms: Text %q (want —)", subject, a.Text)
		}
		if _, err := json.Marshal(a); err != nil {
			t.Errorf("%s's p99_ms: %v", subject, err)
		}
	}
}

// builtinAnswers are what each built-in's question must answer: the
// answer its lesson claims. Where the run has the baseline (the ideal,
// one exact limiter's figure for the subject), the answer is held to it
// at the lesson's ratio: an over-admitted file's answer is the ideal
// times what its summary says, an isolated or quota one's is the ideal.
// Elsewhere it is bounded by the file's expect: lines and comments (cited
// beside each), and a pick names its clients.
var builtinAnswers = map[string]struct {
	figure  string  // the figure the ask names
	ideal   string  // the ideal figure of the subject to hold the answer to
	ratio   float64 // the answer is ideal × ratio (ratio within ±tol)
	tol     float64
	atLeast bool // ratio is the least the answer may be, over ideal
	lo, hi  float64
	clients []string
	text    string // a regexp the answer's Text must match
}{
	// "a quota of 1,000": sync-job, well within the rate, gets its quota.
	"api-quotas": {figure: "allowed", ideal: "ideal_allowed", ratio: 1, text: `^1,000$`},
	// expect: checkout rejected equals 0; the others are shed (min 3000, min 1000).
	"black-friday": {figure: "shed", clients: []string{"checkout"}},
	// comments: checkout fails open "for the whole thirty seconds, the worst of
	// the four"; expect: checkout failed_open min 590.
	"cluster-partition": {figure: "failed_open", clients: []string{"checkout"}},
	// expect: batch-job would_reject min 200 in 0–15s; at most what it sends
	// then, 25/s × 15s.
	"dark-launch": {figure: "would_reject", lo: 200, hi: 375},
	// expect: reader and exporter rejected equals 0, search-page min 100.
	"expensive-search": {figure: "rejected", clients: []string{"search-page"}},
	// expect: home rejected max 0; every office-* min 1 in 10–20s.
	"nat": {figure: "rejected", clients: []string{"home"}},
	// summary: "each side counts alone, so 2× the limit", for the 10 s of
	// the split's 30: more than the ideal by a fifth at least.
	"partition": {figure: "allowed", ideal: "ideal_allowed", ratio: 1.2, atLeast: true},
	// comments: "1.25× what its limit allows".
	"race": {figure: "allowed", ideal: "ideal_allowed", ratio: 1.25, tol: 0.05},
	// lost under share: rack 2 gets what the shared bucket leaves, which
	// one exact limiter gives it too.
	"rack-drain": {figure: "allowed", ideal: "ideal_allowed", ratio: 1},
	// expect: eager allowed max 82, patient min 90, jittery min 95.
	"retry-storm": {figure: "allowed", clients: []string{"eager"}},
	// isolated: a runaway bastion gets what its own limit gives it.
	"runaway-healthcheck": {figure: "allowed", ideal: "ideal_allowed", ratio: 1},
	// expect: reports rejected min 20 in 20–40s, 0 before and after; at
	// most what it sends in those 20 s, 4.5/s × 20s.
	"slow-endpoint": {figure: "rejected", lo: 20, hi: 90},
	// expect: scraper failed_open min 900; at most its 100/s × 10s.
	"store-outage": {figure: "failed_open", lo: 900, hi: 1000, text: `^(900|9\d\d|1,000)$`},
	// summary: "a burst gets 2.5×" of what one exact limiter admits.
	"sync-interval": {figure: "allowed", ideal: "ideal_allowed", ratio: 2.5, tol: 0.1, text: `^\d,\d{3}$`},
	// comments: "2,000 admitted of a quota of 1,000": each region's own.
	"two-regions": {figure: "allowed", ideal: "ideal_allowed", ratio: 2, tol: 0.01},
	// the lesson: twice the limit within one second, across a boundary.
	"window-boundary": {figure: "max_allowed_1s", ideal: "ideal_max_allowed_1s", ratio: 2, text: `^200$`},
}

// TestBuiltinQuestions runs each built-in and checks that its question is
// answered as its lesson says.
func TestBuiltinQuestions(t *testing.T) {
	for _, name := range Builtin() {
		t.Run(name, func(t *testing.T) {
			want, ok := builtinAnswers[name]
			if !ok {
				t.Fatalf("no expected answer for %s: add one to builtinAnswers, from its lesson", name)
			}
			f, err := Open(name)
			if err != nil {
				t.Fatal(err)
			}
			q := f.Question
			if q == nil {
				t.Fatal("no question: (want one drawn from its lesson)")
			}
			// Where a reader looks for it: under the lesson it asks about.
			if !regexp.MustCompile(`(?m)^lesson:.*\nquestion:`).Match(f.Source) {
				t.Errorf("question: (line %d) is not on the line after lesson:", q.Line)
			}
			if q.Figure != want.figure {
				t.Errorf("%q is answered by %s (want %s, the figure it asks about)", q.Ask, q.Figure, want.figure)
			}
			if (want.clients != nil) != (q.Pick != "") {
				t.Fatalf("question %+v: the table wants a pick=%v", q, want.clients != nil)
			}
			r, err := sim.Run(context.Background(), f.Scenario, sim.Options{})
			if err != nil {
				t.Fatal(err)
			}
			a, err := q.Answer(r)
			if err != nil {
				t.Fatalf("%q: %v", q.Ask, err)
			}
			if want.clients != nil {
				if !slices.Equal(a.Clients, want.clients) || a.Text != strings.Join(want.clients, ", ") {
					t.Errorf("%q: %+v (want %v)", q.Ask, a, want.clients)
				}
				return
			}
			if want.text != "" && !regexp.MustCompile(want.text).MatchString(a.Text) {
				t.Errorf("%q: Text %q (want %s)", q.Ask, a.Text, want.text)
			}
			if a.Clients != nil || a.AllTied {
				t.Errorf("%q: %+v names clients", q.Ask, a)
			}
			if want.ideal == "" {
				if a.Value < want.lo || a.Value > want.hi {
					t.Errorf("%q: %+v (want %g..%g)", q.Ask, a, want.lo, want.hi)
				}
				return
			}
			ideal, err := Figure(r, want.ideal, q.Subject)
			if err != nil || ideal <= 0 {
				t.Fatalf("%s of %q: %g, %v", want.ideal, q.Subject, ideal, err)
			}
			ratio := a.Value / ideal
			switch {
			case want.atLeast && ratio < want.ratio:
				t.Errorf("%q: %s is %.3g× the %s %s (want at least %g×)", q.Ask, a.Text, ratio, want.ideal, words.Figure(ideal), want.ratio)
			case !want.atLeast && math.Abs(ratio-want.ratio) > want.tol*want.ratio:
				t.Errorf("%q: %s is %.3g× the %s %s (want %g× ± %g%%)", q.Ask, a.Text, ratio, want.ideal, words.Figure(ideal), want.ratio, 100*want.tol)
			}
			t.Logf("%q: %s", q.Ask, a.Text)
		})
	}
	for name := range builtinAnswers {
		if !slices.Contains(Builtin(), name) {
			t.Errorf("builtinAnswers has %s, which is no built-in", name)
		}
	}
}

// TestSubjectErrorsAlike: a question's unknown client and an
// expectation's end alike (notOneOf): the closest name, and at most
// eight names with … after them.
func TestSubjectErrorsAlike(t *testing.T) {
	const many = `name: q
duration: 10s
limit: {rate: 10/s, burst: 10}
clients:
  - {name: 'web-{i}', count: 10, api_key: 'k{i}', traffic: {pattern: constant, rate: 1/s}}
`
	const tail = `, did you mean "web-1"? (want one of web-1, web-2, web-3, web-4, web-5, web-6, web-7, web-8, …)`
	for _, text := range []string{
		"question: {ask: 'How many?', figure: allowed, client: wbe-1}\n",
		"expect:\n  - {client: wbe-1, allowed: {min: 1}}\n",
	} {
		_, err := Parse("q.yaml", []byte(many+text))
		if err == nil || !strings.HasSuffix(err.Error(), tail) {
			t.Errorf("%s: %v (want ...%s)", text, err, tail)
		}
	}
}

// TestReadsAsComparesWhatIsAsked: Written's self-check finds a text whose
// scenario is the same but whose question or expectation is not.
func TestReadsAsComparesWhatIsAsked(t *testing.T) {
	const asked = "question: {ask: 'How many?', figure: allowed, client: batch}\nexpect:\n  - {client: batch, allowed: {max: 200}}\n"
	f, err := Parse("q.yaml", []byte(questionBase+asked))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ from, to, want string }{
		{"client: batch}", "client: web-1}", "question is"},
		{"'How many?'", "'How many of them?'", "question is"},
		{"max: 200", "max: 201", "expect[0] is"},
	} {
		text := strings.Replace(string(f.Source), tt.from, tt.to, 1)
		diff, err := readsAs(f, []byte(text), f, nil)
		if err != nil || !strings.HasPrefix(diff, tt.want) {
			t.Errorf("%s -> %s: %q, %v (want %s...)", tt.from, tt.to, diff, err, tt.want)
		}
	}
	if diff, err := readsAs(f, f.Source, f, nil); diff != "" || err != nil {
		t.Errorf("the file itself: %q, %v", diff, err)
	}
}
