package scenarios

import (
	"context"
	"slices"
	"strings"
	"testing"

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
	if _, err := g.Question.Answer(r); err == nil || !strings.Contains(err.Error(), `no client "web-1"`) {
		t.Errorf("the answer for a client the run lacks: %v", err)
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
	for _, tt := range tests {
		got, err := tt.q.Answer(r)
		if err != nil {
			t.Errorf("%+v: %v", tt.q, err)
			continue
		}
		if got.Value != tt.want.Value || got.Text != tt.want.Text || !slices.Equal(got.Clients, tt.want.Clients) {
			t.Errorf("%+v: got %+v, want %+v", tt.q, got, tt.want)
		}
	}
	if _, err := (&Question{Figure: "allowed", Subject: "d"}).Answer(r); err == nil {
		t.Error("an answer for a client the run lacks: no error")
	}
}

func TestFigureText(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 250: "250", 1000: "1,000", 2268: "2,268", 0.5: "0.5", 10.3333333: "10.33", -3: "-3"} {
		if got := figureText(v); got != want {
			t.Errorf("figureText(%g) = %q, want %q", v, got, want)
		}
	}
}

// builtinAnswers are what each built-in's question must answer: the
// answer its lesson claims, from the file's own expect: lines and
// comments (cited beside each), not from a run. A number is bounded
// (lo..hi), a pick names its clients.
var builtinAnswers = map[string]struct {
	lo, hi  float64
	clients []string
}{
	// expect: sync-job allowed equals 1000 (its hourly quota).
	"api-quotas": {lo: 1000, hi: 1000},
	// expect: checkout rejected equals 0; the others are shed (min 3000, min 1000).
	"black-friday": {clients: []string{"checkout"}},
	// comments: checkout fails open "for the whole thirty seconds, the worst of
	// the four"; expect: checkout failed_open min 590.
	"cluster-partition": {clients: []string{"checkout"}},
	// expect: batch-job would_reject min 200 in 0–15s; at most what it sends
	// then, 25/s × 15s.
	"dark-launch": {lo: 200, hi: 375},
	// expect: reader and exporter rejected equals 0, search-page min 100.
	"expensive-search": {clients: []string{"search-page"}},
	// expect: home rejected max 0; every office-* min 1 in 10–20s.
	"nat": {clients: []string{"home"}},
	// comments: app "is admitted 10/s, then 20/s during the split":
	// 20 + 10/s × 20s + 20/s × 10s = 420, against the limit's 320.
	"partition": {lo: 400, hi: 440},
	// expect: checkout allowed min 380; comments: "1.25× what its limit
	// allows" (320), so about 400.
	"race": {lo: 380, hi: 480},
	// expect: drain-rack-2 rejected min 20 of 40; comments: "10 + 5 tokens".
	"rack-drain": {lo: 10, hi: 20},
	// expect: eager allowed max 82, patient min 90, jittery min 95.
	"retry-storm": {clients: []string{"eager"}},
	// expect: bastion-* allowed max 260; comments: 50 + 10/s × 20s = 250.
	"runaway-healthcheck": {lo: 240, hi: 260},
	// expect: reports rejected min 20 in 20–40s, 0 before and after; at
	// most what it sends in those 20 s, 4.5/s × 20s.
	"slow-endpoint": {lo: 20, hi: 90},
	// expect: scraper failed_open min 900; at most its 100/s × 10s.
	"store-outage": {lo: 900, hi: 1000},
	// expect: flash-bot allowed min 1800; comments: never synced, 3,576.
	"sync-interval": {lo: 1800, hi: 3576},
	// expect: importer allowed min 1990; comments: "2,000 admitted of a
	// quota of 1,000".
	"two-regions": {lo: 1990, hi: 2000},
	// expect: boundary max_allowed_1s min 200, of the 200 it sends.
	"window-boundary": {lo: 200, hi: 200},
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
			if a.Value < want.lo || a.Value > want.hi || a.Text != figureText(a.Value) || a.Clients != nil {
				t.Errorf("%q: %+v (want %g..%g)", q.Ask, a, want.lo, want.hi)
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
