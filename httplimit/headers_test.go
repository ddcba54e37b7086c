package httplimit

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
)

func TestParseSFList(t *testing.T) {
	good := map[string]int{
		`"default";q=100;w=10`:                        1,
		`"permin";q=50;w=60, "perhr";q=1000;w=3600`:   2,
		`"a\"b\\c";r=0;t=5`:                           1,
		`"x";flag`:                                    1,
		` "x";q=1`:                                    1,
		`"burst";q=100;w=60,"daily";q=1000;w=86400`:   2,
		`"default";r=999999999999999;t=0`:             1,
		`"d";q=1;   w=2`:                              1,
		`"d";q=-1`:                                    1,
		`"sliding";q=100;w=60;burst=1000`:             1,
		`"d" , "e"`:                                   2,
		`"default";r=50;t=30`:                         1,
		`"permin";q=50;w=60,"perhr";q=1000;w=3600 `:   2,
		`"peruser";q=100;w=60`:                        1,
		`"default";q=100;w=10,"default";q=100;w=10`:   2,
		`"with space";q=1`:                            1,
		`"*";q=1`:                                     1,
		`"d";q=1;*x=2`:                                1,
		`"d";a.b-c_d=3`:                               1,
		`"d";q=000000000000001`:                       1,
		`"d";q=1,"e";q=2,"f";q=3`:                     3,
		`"d";q=1;q=2`:                                 1,
		`"d";q=1  ,  "e";q=2`:                         2,
		"\"d\";q=1\t,\t\"e\";q=2":                     2,
		`"d";q=1;w=60;pk=1`:                           1,
		`"d";r=0`:                                     1,
		`"d";t=0;r=0`:                                 1,
		`"default";q=5`:                               1,
		`"default";r=5;t=1`:                           1,
		`"d";q=1;w=1,"d";q=2;w=2,"d";q=3;w=3,"d";q=4`: 4,
	}
	for s, n := range good {
		items, err := parseSFList(s)
		if err != nil || len(items) != n {
			t.Errorf("parseSFList(%q) = %d items, %v; want %d items", s, len(items), err, n)
		}
	}
	for _, s := range []string{``, `default;q=1`, `"d";q=1.5`, `"d";Q=1`, `"d";q=`, `"d";q=1,`, `"d" "e"`,
		`"d";q=1234567890123456`, `"unterminated`, `"bad\escape"`, `"d";q=1;`, `"d";q="1"`} {
		if _, err := parseSFList(s); err == nil {
			t.Errorf("parseSFList(%q) succeeded, want an error", s)
		}
	}
}

// failer is what the header checks need of a *testing.T or a *rapid.T.
type failer interface {
	Helper()
	Fatalf(format string, args ...any)
}

// answer is what a client reads in one response's rate-limit fields.
type answer struct {
	status        int
	policy        sfItem
	limit         sfItem
	trio          [3]int64 // RateLimit-Limit, -Remaining, -Reset
	retryAfter    int64    // -1 when absent
	hasRateFields bool
}

// readAnswer parses and checks the syntax of every rate-limit field of h:
// the draft's two Structured Fields, the -06 trio (non-negative integers),
// Retry-After (delay-seconds), and that the two sets agree.
func readAnswer(t failer, status int, h http.Header) answer {
	t.Helper()
	a := answer{status: status, retryAfter: -1}
	if ra := h.Values("Retry-After"); len(ra) > 0 {
		if len(ra) != 1 {
			t.Fatalf("Retry-After sent %d times", len(ra))
		}
		a.retryAfter = delaySeconds(t, "Retry-After", ra[0])
	}
	names := []string{"RateLimit-Policy", "RateLimit", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"}
	present := 0
	for _, n := range names {
		if len(h.Values(n)) > 0 {
			present++
		}
	}
	switch present {
	case 0:
		return a
	case len(names):
	default:
		t.Fatalf("only %d of the %d RateLimit fields sent: %v", present, len(names), h)
	}
	a.hasRateFields = true
	for i, n := range names[2:] {
		a.trio[i] = delaySeconds(t, n, h.Get(n))
	}
	a.policy = oneSFItem(t, "RateLimit-Policy", h.Get("RateLimit-Policy"), "q", "w")
	a.limit = oneSFItem(t, "RateLimit", h.Get("RateLimit"), "r", "t")
	if a.policy.name != a.limit.name {
		t.Fatalf("RateLimit names policy %q, RateLimit-Policy %q", a.limit.name, a.policy.name)
	}
	if _, ok := a.policy.params["q"]; !ok {
		t.Fatalf("RateLimit-Policy %q has no q", h.Get("RateLimit-Policy"))
	}
	if w, ok := a.policy.params["w"]; ok && w <= 0 {
		t.Fatalf("RateLimit-Policy w=%d, want a positive window", w)
	}
	if _, ok := a.limit.params["r"]; !ok {
		t.Fatalf("RateLimit %q has no r", h.Get("RateLimit"))
	}
	for k, v := range a.policy.params {
		if v < 0 {
			t.Fatalf("RateLimit-Policy %s=%d is negative", k, v)
		}
	}
	for k, v := range a.limit.params {
		if v < 0 {
			t.Fatalf("RateLimit %s=%d is negative", k, v)
		}
	}
	if a.policy.params["q"] != a.trio[0] || a.limit.params["r"] != a.trio[1] || a.limit.params["t"] != a.trio[2] {
		t.Fatalf("the draft's fields (q=%d r=%d t=%d) disagree with the -06 trio %v",
			a.policy.params["q"], a.limit.params["r"], a.limit.params["t"], a.trio)
	}
	if a.trio[1] > a.trio[0] {
		t.Fatalf("Remaining %d exceeds Limit %d", a.trio[1], a.trio[0])
	}
	return a
}

func (a answer) remaining() int64 { return a.trio[1] }
func (a answer) reset() int64     { return a.trio[2] }

// delaySeconds parses a non-negative integer of seconds, as Retry-After's
// delay-seconds and the -06 fields are: digits only, no sign, no space.
func delaySeconds(t failer, field, v string) int64 {
	t.Helper()
	if v == "" || strings.TrimLeft(v, "0123456789") != "" {
		t.Fatalf("%s: %q is not a number of seconds", field, v)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.Fatalf("%s: %q: %v", field, v, err)
	}
	return n
}

func oneSFItem(t failer, field, v string, keys ...string) sfItem {
	t.Helper()
	items, err := parseSFList(v)
	if err != nil {
		t.Fatalf("%s: %q is not a Structured Field List: %v", field, v, err)
	}
	if len(items) != 1 {
		t.Fatalf("%s: %q has %d policies, want 1", field, v, len(items))
	}
	for _, k := range items[0].order {
		if !strings.Contains(strings.Join(keys, ","), k) {
			t.Fatalf("%s: %q has unexpected parameter %s", field, v, k)
		}
	}
	return items[0]
}

func TestCeilSeconds(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want int64
	}{
		{-time.Second, 0},
		{0, 0},
		{time.Nanosecond, 1},
		{time.Microsecond, 1},
		{999 * time.Millisecond, 1},
		{time.Second, 1},
		{time.Second + time.Microsecond, 2},
		{59*time.Second + 999*time.Millisecond, 60},
		{time.Hour, 3600},
		{algorithms.Never, 9223372037}, // 292 years: Retry-After for a request that can never pass
	}
	for _, tt := range tests {
		if got := ceilSeconds(tt.d); got != tt.want {
			t.Errorf("ceilSeconds(%v) = %d, want %d", tt.d, got, tt.want)
		}
	}
}

func TestFieldsFor(t *testing.T) {
	q := quota{quotedName: `"default"`}
	tests := []struct {
		name  string
		q     quota
		d     algorithms.Decision
		want  fields
		retry int64
	}{
		{name: "allowed", q: q,
			d:    algorithms.Decision{Allowed: true, Limit: 10, Remaining: 7, ResetAfter: 1200 * time.Millisecond},
			want: fields{limit: 10, remaining: 7, reset: 2}},
		{name: "allowed, full", q: q,
			d:    algorithms.Decision{Allowed: true, Limit: 10, Remaining: 10},
			want: fields{limit: 10, remaining: 10, reset: 0}},
		{name: "allowed, last one", q: q,
			d:    algorithms.Decision{Allowed: true, Limit: 10, Remaining: 0, ResetAfter: 10 * time.Second},
			want: fields{limit: 10, remaining: 0, reset: 10}},
		{name: "configured limit wins", q: quota{quotedName: `"default"`, limit: 5},
			d:    algorithms.Decision{Allowed: true, Limit: 10, Remaining: 7, ResetAfter: time.Second},
			want: fields{limit: 5, remaining: 5, reset: 1}},
		{name: "negative remaining", q: q,
			d:    algorithms.Decision{Allowed: true, Limit: 10, Remaining: -3, ResetAfter: -time.Second},
			want: fields{limit: 10, remaining: 0, reset: 0}},
		{name: "rejected: reset is Retry-After", q: q,
			d:    algorithms.Decision{Limit: 10, RetryAfter: 2100 * time.Millisecond, ResetAfter: 9 * time.Second},
			want: fields{limit: 10, remaining: 0, reset: 3}, retry: 3},
		{name: "rejected soon: at least 1 s", q: q,
			d:    algorithms.Decision{Limit: 10, RetryAfter: 20 * time.Millisecond, ResetAfter: 9 * time.Second},
			want: fields{limit: 10, remaining: 0, reset: 1}, retry: 1},
		{name: "rejected with no wait: still 1 s", q: q,
			d:    algorithms.Decision{Limit: 10},
			want: fields{limit: 10, remaining: 0, reset: 1}, retry: 1},
		{name: "rejected, estimate said some remain", q: q,
			d:    algorithms.Decision{Limit: 10, Remaining: 4, RetryAfter: time.Second},
			want: fields{limit: 10, remaining: 0, reset: 1}, retry: 1},
		{name: "rejected, never", q: q,
			d:    algorithms.Decision{Limit: 10, RetryAfter: algorithms.Never},
			want: fields{limit: 10, remaining: 0, reset: 9223372037}, retry: 9223372037},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, retry := tt.q.fieldsFor(tt.d)
			if got != tt.want || retry != tt.retry {
				t.Errorf("fieldsFor(%+v) = %+v, retry %d; want %+v, retry %d", tt.d, got, retry, tt.want, tt.retry)
			}
		})
	}
}

func TestWriteFieldsSyntax(t *testing.T) {
	tests := []struct {
		q          quota
		f          fields
		policy, rl string
	}{
		{newQuota(`"default"`, 50, 5), fields{limit: 50, remaining: 3, reset: 2},
			`"default";q=50;w=5`, `"default";r=3;t=2`},
		{quota{quotedName: `"default"`, window: 5}, fields{limit: 50, remaining: 3, reset: 2},
			`"default";q=50;w=5`, `"default";r=3;t=2`},
		{quota{quotedName: `"default"`}, fields{limit: 50, remaining: 0, reset: 0},
			`"default";q=50`, `"default";r=0;t=0`},
		{quota{quotedName: `"a \"b\""`, window: 60}, fields{limit: 1, remaining: 1, reset: 60},
			`"a \"b\"";q=1;w=60`, `"a \"b\"";r=1;t=60`},
	}
	for _, tt := range tests {
		h := http.Header{}
		tt.q.write(h, tt.f)
		if got := h.Get("RateLimit-Policy"); got != tt.policy {
			t.Errorf("RateLimit-Policy = %q, want %q", got, tt.policy)
		}
		if got := h.Get("RateLimit"); got != tt.rl {
			t.Errorf("RateLimit = %q, want %q", got, tt.rl)
		}
		a := readAnswer(t, http.StatusOK, h)
		if a.trio != [3]int64{tt.f.limit, tt.f.remaining, tt.f.reset} {
			t.Errorf("trio = %v, want %+v", a.trio, tt.f)
		}
	}
}

func TestQuoteSFString(t *testing.T) {
	for name, want := range map[string]string{"default": `"default"`, `a"b\c`: `"a\"b\\c"`, "per user": `"per user"`} {
		got, err := quoteSFString(name)
		if err != nil || got != want {
			t.Errorf("quoteSFString(%q) = %q, %v; want %q", name, got, err, want)
		}
		items, err := parseSFList(got + ";q=1")
		if err != nil || items[0].name != name {
			t.Errorf("%s does not parse back to %q: %v %v", got, name, items, err)
		}
	}
	for _, name := range []string{"tab\there", "é", "nl\n"} {
		if _, err := quoteSFString(name); err == nil {
			t.Errorf("quoteSFString(%q) succeeded, want an error", name)
		}
	}
}

func TestQuotaOf(t *testing.T) {
	perSec := func(n int64) algorithms.Rate { return algorithms.Rate{N: n, Per: time.Second} }
	tests := []struct {
		alg    string
		p      algorithms.Params
		limit  int64
		window time.Duration
	}{
		{"token-bucket", algorithms.Params{Rate: perSec(10), Burst: 50}, 50, 5 * time.Second},
		{"gcra", algorithms.Params{Rate: perSec(3), Burst: 10}, 10, 3333333333 * time.Nanosecond},
		{"leaky-bucket", algorithms.Params{Rate: algorithms.Rate{N: 100, Per: time.Minute}, Burst: 5}, 5, 3 * time.Second},
		{"fixed-window", algorithms.Params{Rate: algorithms.Rate{N: 100, Per: time.Minute}, Window: time.Minute}, 100, time.Minute},
		{"sliding-log", algorithms.Params{Rate: perSec(10), Window: 2 * time.Second}, 20, 2 * time.Second},
		{"sliding-window", algorithms.Params{Rate: perSec(10), Window: 500 * time.Millisecond}, 5, 500 * time.Millisecond},
		// In flight: q requests at once, no window (the lease TTL is none).
		{"concurrency", algorithms.Params{Burst: 20, Window: 30 * time.Second}, 20, 0},
	}
	for _, tt := range tests {
		alg, err := algorithms.New(tt.alg, tt.p)
		if err != nil {
			t.Fatal(err)
		}
		limit, window := QuotaOf(alg)
		if limit != tt.limit || window != tt.window {
			t.Errorf("QuotaOf(%s %+v) = %d, %v; want %d, %v", tt.alg, tt.p, limit, window, tt.limit, tt.window)
		}
	}
	if l, w := QuotaOf(nil); l != 0 || w != 0 {
		t.Errorf("QuotaOf(nil) = %d, %v; want 0, 0", l, w)
	}
}

func TestReadRateLimit(t *testing.T) {
	tests := []struct {
		name      string
		header    http.Header
		remaining int64
		reset     time.Duration
		ok        bool
	}{
		{"structured", http.Header{"Ratelimit": {`"default";r=7;t=3`}}, 7, 3 * time.Second, true},
		{"structured, no t", http.Header{"Ratelimit": {`"default";r=0`}}, 0, 0, true},
		{"structured, no r", http.Header{"Ratelimit": {`"default";t=3`}}, 0, 0, false},
		{"structured, malformed", http.Header{"Ratelimit": {`default;r=7`}}, 0, 0, false},
		{"structured, a decimal", http.Header{"Ratelimit": {`"default";r=7.5`}}, 0, 0, false},
		{"structured, r a Boolean", http.Header{"Ratelimit": {`"default";r;t=3`}}, 0, 0, false},
		{"structured, never", http.Header{"Ratelimit": {`"default";r=0;t=9223372037`}}, 0, algorithms.Never, true},
		{"older pair", http.Header{"Ratelimit-Remaining": {"4"}, "Ratelimit-Reset": {"2"}}, 4, 2 * time.Second, true},
		{"older pair, bad reset", http.Header{"Ratelimit-Remaining": {"4"}, "Ratelimit-Reset": {"soon"}}, 4, 0, true},
		{"older pair, negative", http.Header{"Ratelimit-Remaining": {"-1"}}, 0, 0, false},
		{"neither", http.Header{}, 0, 0, false},
	}
	for _, tt := range tests {
		r, reset, ok := ReadRateLimit(tt.header)
		if r != tt.remaining || reset != tt.reset || ok != tt.ok {
			t.Errorf("%s: %d, %s, %v; want %d, %s, %v", tt.name, r, reset, ok, tt.remaining, tt.reset, tt.ok)
		}
	}
	// What the middleware writes, it reads back.
	h := http.Header{}
	newQuota(`"default"`, 10, 1).write(h, fields{limit: 10, remaining: 3, reset: 5})
	if r, reset, ok := ReadRateLimit(h); !ok || r != 3 || reset != 5*time.Second {
		t.Errorf("the middleware's own fields %v read as %d, %s, %v", h, r, reset, ok)
	}
}
