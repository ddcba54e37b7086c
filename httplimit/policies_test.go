package httplimit

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/store"
)

// fixed is a limiter that answers the decision it holds, whatever it is
// asked: the header tests choose the decision.
type fixed struct{ d algorithms.Decision }

func (f *fixed) Take(context.Context, string, algorithms.Time, int64) (store.Decision, error) {
	return store.Decision{Decision: f.d}, nil
}

// burstHourly are the two policies of the header tests: 10/s with a burst
// of 20, and 1000 an hour.
var burstHourly = []Quota{{Name: "burst", Limit: 20, Window: 2 * time.Second}, {Name: "hourly", Limit: 1000, Window: time.Hour}}

func TestPolicyHeaders(t *testing.T) {
	shadowHourly := []Quota{burstHourly[0], {Name: "hourly", Limit: 1000, Window: time.Hour, Shadow: true}}
	hourlyFrom := func(at time.Time) []Quota {
		return []Quota{burstHourly[0], {Name: "hourly", Limit: 1000, Window: time.Hour, Shadow: true, ShadowUntil: at}}
	}
	tests := []struct {
		name     string
		policies []Quota
		at       time.Duration // after t0
		d        algorithms.Decision
		status   int
		// The fields, "" for absent.
		policy, rateLimit, limit, remaining, reset, retryAfter, shadow string
		metric                                                         string
	}{
		{name: "admitted, the hourly policy binds", policies: burstHourly,
			d:      algorithms.Decision{Allowed: true, Limit: 1000, Remaining: 3, Binding: 1, BindingResetAfter: 1500 * time.Millisecond, ResetAfter: time.Hour},
			status: 200, policy: `"burst";q=20;w=2, "hourly";q=1000;w=3600`, rateLimit: `"hourly";r=3;t=2`,
			limit: "1000", remaining: "3", reset: "2", metric: DecisionAllowed},
		{name: "admitted, the burst binds", policies: burstHourly,
			d:      algorithms.Decision{Allowed: true, Limit: 20, Remaining: 19, Binding: 0, BindingResetAfter: 100 * time.Millisecond, ResetAfter: time.Hour},
			status: 200, policy: `"burst";q=20;w=2, "hourly";q=1000;w=3600`, rateLimit: `"burst";r=19;t=1`,
			limit: "20", remaining: "19", reset: "1", metric: DecisionAllowed},
		{name: "429 by the burst", policies: burstHourly,
			d:      algorithms.Decision{Limit: 20, RetryAfter: 80 * time.Millisecond, Binding: 0, BindingResetAfter: 2 * time.Second, ResetAfter: time.Hour},
			status: 429, policy: `"burst";q=20;w=2, "hourly";q=1000;w=3600`, rateLimit: `"burst";r=0;t=1`,
			limit: "20", remaining: "0", reset: "1", retryAfter: "1", metric: DecisionRejected},
		{name: "429 by the hourly", policies: burstHourly,
			d:      algorithms.Decision{Limit: 1000, Remaining: 12, RetryAfter: 1801500 * time.Millisecond, Binding: 1, ResetAfter: time.Hour},
			status: 429, policy: `"burst";q=20;w=2, "hourly";q=1000;w=3600`, rateLimit: `"hourly";r=0;t=1802`,
			limit: "1000", remaining: "0", reset: "1802", retryAfter: "1802", metric: DecisionRejected},
		{name: "remaining above q is clamped", policies: burstHourly,
			d:      algorithms.Decision{Allowed: true, Limit: 1000, Remaining: 5000, Binding: 1},
			status: 200, policy: `"burst";q=20;w=2, "hourly";q=1000;w=3600`, rateLimit: `"hourly";r=1000;t=0`,
			limit: "1000", remaining: "1000", reset: "0", metric: DecisionAllowed},
		{name: "a shadowed policy is not listed", policies: shadowHourly,
			d:      algorithms.Decision{Allowed: true, Limit: 20, Remaining: 7, Binding: 0, BindingResetAfter: 1300 * time.Millisecond, ResetAfter: time.Hour},
			status: 200, policy: `"burst";q=20;w=2`, rateLimit: `"burst";r=7;t=2`,
			limit: "20", remaining: "7", reset: "2", metric: DecisionAllowed},
		{name: "would-reject", policies: shadowHourly,
			d:      algorithms.Decision{Allowed: true, WouldReject: true, Limit: 20, Remaining: 7, Binding: 0, BindingResetAfter: time.Second},
			status: 200, policy: `"burst";q=20;w=2`, rateLimit: `"burst";r=7;t=1`,
			limit: "20", remaining: "7", reset: "1", shadow: "would-reject", metric: DecisionWouldReject},
		{name: "shadowed until later: not listed", policies: hourlyFrom(t0.Add(time.Minute)), at: time.Minute - time.Microsecond,
			d:      algorithms.Decision{Allowed: true, Limit: 20, Remaining: 7, Binding: 0, BindingResetAfter: time.Second},
			status: 200, policy: `"burst";q=20;w=2`, rateLimit: `"burst";r=7;t=1`,
			limit: "20", remaining: "7", reset: "1", metric: DecisionAllowed},
		{name: "shadowed until now: listed", policies: hourlyFrom(t0.Add(time.Minute)), at: time.Minute,
			d:      algorithms.Decision{Allowed: true, Limit: 20, Remaining: 7, Binding: 0, BindingResetAfter: time.Second},
			status: 200, policy: `"burst";q=20;w=2, "hourly";q=1000;w=3600`, rateLimit: `"burst";r=7;t=1`,
			limit: "20", remaining: "7", reset: "1", metric: DecisionAllowed},
		{name: "every policy shadowed: no fields",
			policies: []Quota{{Name: "burst", Limit: 20, Window: 2 * time.Second, Shadow: true}, shadowHourly[1]},
			d:        algorithms.Decision{Allowed: true, WouldReject: true, Limit: 20, Binding: 0},
			status:   200, shadow: "would-reject", metric: DecisionWouldReject},
		{name: "refused by a policy the config says is shadowed: listed all the same", policies: shadowHourly,
			d:      algorithms.Decision{Limit: 1000, RetryAfter: 3 * time.Second, Binding: 1},
			status: 429, policy: `"burst";q=20;w=2, "hourly";q=1000;w=3600`, rateLimit: `"hourly";r=0;t=3`,
			limit: "1000", remaining: "0", reset: "3", retryAfter: "3", metric: DecisionRejected},
		{name: "names quoted", policies: []Quota{{Name: `per "user"`, Limit: 5}, {Name: `a\b`, Limit: 9, Window: 1500 * time.Millisecond}},
			d:      algorithms.Decision{Allowed: true, Limit: 9, Remaining: 1, Binding: 1, BindingResetAfter: time.Second},
			status: 200, policy: `"per \"user\"";q=5, "a\\b";q=9;w=2`, rateLimit: `"a\\b";r=1;t=1`,
			limit: "9", remaining: "1", reset: "1", metric: DecisionAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newClock()
			clk.Advance(tt.at)
			m, _ := newMetrics(t)
			h := mustNew(t, Config{Limiter: &fixed{tt.d}, Policies: tt.policies, Clock: clk.Now, Metrics: m}, &counting{})
			w := get(h)
			if w.Code != tt.status {
				t.Fatalf("status %d, want %d", w.Code, tt.status)
			}
			hd := w.Header()
			for _, f := range []struct{ name, want string }{
				{"RateLimit-Policy", tt.policy}, {"RateLimit", tt.rateLimit}, {"RateLimit-Limit", tt.limit},
				{"RateLimit-Remaining", tt.remaining}, {"RateLimit-Reset", tt.reset}, {"Retry-After", tt.retryAfter},
				{ShadowHeader, tt.shadow},
			} {
				if got := hd.Values(f.name); strings.Join(got, "|") != f.want {
					t.Errorf("%s = %q, want %q", f.name, got, f.want)
				}
			}
			wantCounts(t, m, map[string]float64{tt.metric: 1})
		})
	}
}

// A key with two limits on the memory store, step by step: a bucket of 2
// refilling 1/s ("burst") and 3 a minute ("minute"), on a clock moved by
// hand. Each answer lists both and names the one that binds.
func TestPoliciesStepByStep(t *testing.T) {
	bucket := tokenBucket(t, algorithms.Rate{N: 1, Per: time.Second}, 2)
	minute, err := algorithms.NewSlidingLog(algorithms.Rate{N: 3, Per: time.Minute}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	multi, err := algorithms.NewMulti([]algorithms.Policy{{Name: "burst", Algorithm: bucket}, {Name: "minute", Algorithm: minute}})
	if err != nil {
		t.Fatal(err)
	}
	clk := newClock()
	h := mustNew(t, Config{Limiter: store.NewMemory(multi), Policies: QuotasOf(multi), Clock: clk.Now}, &counting{})
	const both = `"burst";q=2;w=2, "minute";q=3;w=60`
	steps := []struct {
		at        time.Duration // after t0
		status    int
		rateLimit string
	}{
		{0, 200, `"burst";r=1;t=1`},                  // burst 1 left, minute 2
		{0, 200, `"burst";r=0;t=2`},                  // burst 0, minute 1
		{0, 429, `"burst";r=0;t=1`},                  // the bucket refuses: back in 1 s
		{time.Second, 200, `"minute";r=0;t=60`},      // both have 0 left: the one with the longer reset binds
		{3 * time.Second, 429, `"minute";r=0;t=57`},  // the bucket has 2; the minute refuses until the first falls out
		{60 * time.Second, 200, `"minute";r=1;t=60`}, // the two of t0 fell out; 1 left of each, the minute resets later
	}
	for i, st := range steps {
		clk.mu.Lock()
		clk.now = t0.Add(st.at)
		clk.mu.Unlock()
		w := get(h)
		if w.Code != st.status || w.Header().Get("RateLimit") != st.rateLimit || w.Header().Get("RateLimit-Policy") != both {
			t.Fatalf("step %d at %s: %d RateLimit %q Policy %q; want %d %q %q", i, st.at, w.Code,
				w.Header().Get("RateLimit"), w.Header().Get("RateLimit-Policy"), st.status, st.rateLimit, both)
		}
		readAnswerPolicies(t, w.Code, w.Header())
	}
}

func TestNewRejectsBadPolicies(t *testing.T) {
	bucket := tokenBucket(t, algorithms.Rate{N: 1, Per: time.Second}, 2)
	multi, _ := algorithms.NewMulti([]algorithms.Policy{{Name: "a", Algorithm: bucket}, {Name: "b", Algorithm: bucket}})
	q := func(name string) Quota { return Quota{Name: name, Limit: 1} }
	many := make([]Quota, algorithms.MaxLimits+1)
	for i := range many {
		many[i] = q(string(rune('a' + i)))
	}
	tests := map[string]Config{
		"no name":              {Policies: []Quota{q("a"), q("")}},
		"a name twice":         {Policies: []Quota{q("a"), q("a")}},
		"not printable":        {Policies: []Quota{q("a"), q("b\n")}},
		"not ASCII":            {Policies: []Quota{q("é")}},
		"limit 0":              {Policies: []Quota{{Name: "a"}}},
		"negative window":      {Policies: []Quota{{Name: "a", Limit: 1, Window: -time.Second}}},
		"too many":             {Policies: many},
		"beside Limit":         {Policies: []Quota{q("a")}, Limit: 5},
		"beside PolicyName":    {Policies: []Quota{q("a")}, PolicyName: "x"},
		"ShadowUntil alone":    {Policies: []Quota{q("a")}, ShadowUntil: time.Unix(1, 0)},
		"one for a multi of 2": {Policies: []Quota{q("a")}, Limiter: store.NewMemory(multi)},
		"two for one limit":    {Policies: []Quota{q("a"), q("b")}, Limiter: store.NewMemory(bucket)},
	}
	for name, cfg := range tests {
		if cfg.Limiter == nil {
			cfg.Limiter = store.NewMemory(bucket)
		}
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: New succeeded, want an error", name)
		} else if !strings.HasPrefix(err.Error(), "httplimit: ") {
			t.Errorf("%s: error %q does not start with the package name", name, err)
		}
	}
}

func TestQuotasOf(t *testing.T) {
	bucket := tokenBucket(t, algorithms.Rate{N: 10, Per: time.Second}, 20)
	hourly, err := algorithms.NewFixedWindow(algorithms.Rate{N: 1000, Per: time.Hour}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	until := algorithms.FromTime(t0.Add(time.Minute))
	multi, err := algorithms.NewMulti([]algorithms.Policy{
		{Name: "burst", Algorithm: bucket},
		{Name: "hourly", Algorithm: hourly, Shadow: true, ShadowUntil: until},
		{Name: "dark", Algorithm: hourly, Shadow: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := QuotasOf(multi)
	want := []Quota{
		{Name: "burst", Limit: 20, Window: 2 * time.Second},
		{Name: "hourly", Limit: 1000, Window: time.Hour, Shadow: true, ShadowUntil: t0.Add(time.Minute)},
		{Name: "dark", Limit: 1000, Window: time.Hour, Shadow: true},
	}
	if len(got) != len(want) {
		t.Fatalf("QuotasOf = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].Name != want[i].Name || got[i].Limit != want[i].Limit || got[i].Window != want[i].Window ||
			got[i].Shadow != want[i].Shadow || !got[i].ShadowUntil.Equal(want[i].ShadowUntil) {
			t.Errorf("QuotasOf[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
	if got := QuotasOf(bucket); len(got) != 1 || got[0] != (Quota{Name: DefaultPolicyName, Limit: 20, Window: 2 * time.Second}) {
		t.Errorf("QuotasOf(a bucket) = %+v", got)
	}
	if got := QuotasOf(nil); got != nil {
		t.Errorf("QuotasOf(nil) = %+v, want nil", got)
	}
}

func TestReadFields(t *testing.T) {
	both := []Quota{{Name: "burst", Limit: 20, Window: 2 * time.Second}, {Name: "hourly", Limit: 1000, Window: time.Hour}}
	tests := []struct {
		name   string
		header http.Header
		want   Reading
		listed bool
		err    string // a part of the error; "" for none
	}{
		{"two policies", http.Header{"Ratelimit": {`"hourly";r=3;t=2`}, "Ratelimit-Policy": {`"burst";q=20;w=2, "hourly";q=1000;w=3600`}},
			Reading{Policy: "hourly", Remaining: 3, Reset: 2 * time.Second, Policies: both}, true, ""},
		{"on two lines", http.Header{"Ratelimit": {`"burst";r=0;t=1`}, "Ratelimit-Policy": {`"burst";q=20;w=2`, `"hourly";q=1000;w=3600`}},
			Reading{Policy: "burst", Remaining: 0, Reset: time.Second, Policies: both}, true, ""},
		{"unlisted", http.Header{"Ratelimit": {`"daily";r=0;t=9`}, "Ratelimit-Policy": {`"burst";q=20;w=2, "hourly";q=1000;w=3600`}},
			Reading{Policy: "daily", Remaining: 0, Reset: 9 * time.Second, Policies: both}, false, ""},
		{"no policy field", http.Header{"Ratelimit": {`"default";r=1`}},
			Reading{Policy: "default", Remaining: 1}, false, ""},
		{"no w", http.Header{"Ratelimit": {`"d";r=1;t=0`}, "Ratelimit-Policy": {`"d";q=5`}},
			Reading{Policy: "d", Remaining: 1, Policies: []Quota{{Name: "d", Limit: 5}}}, true, ""},
		{"no fields", http.Header{}, Reading{}, false, ErrNoFields.Error()},
		{"no r", http.Header{"Ratelimit": {`"d";t=1`}}, Reading{}, false, "want r"},
		{"a token, not a string", http.Header{"Ratelimit": {`d;r=1`}}, Reading{}, false, "RateLimit"},
		{"negative t", http.Header{"Ratelimit": {`"d";r=1;t=-1`}}, Reading{}, false, "want r"},
		{"r a Boolean", http.Header{"Ratelimit": {`"d";r`}}, Reading{}, false, "want r"},
		{"t a Boolean", http.Header{"Ratelimit": {`"d";r=1;t=?1`}}, Reading{}, false, "want r"},
		{"q a Boolean", http.Header{"Ratelimit": {`"d";r=1`}, "Ratelimit-Policy": {`"d";q=?1`}},
			Reading{Policy: "d", Remaining: 1}, false, "member 1"},
		{"policy without q", http.Header{"Ratelimit": {`"d";r=1`}, "Ratelimit-Policy": {`"d";w=5`}},
			Reading{Policy: "d", Remaining: 1}, false, "member 1"},
		{"policy with w=0", http.Header{"Ratelimit": {`"d";r=1`}, "Ratelimit-Policy": {`"d";q=1;w=0`}},
			Reading{Policy: "d", Remaining: 1}, false, "member 1"},
		{"policy list malformed", http.Header{"Ratelimit": {`"d";r=1`}, "Ratelimit-Policy": {`"d";q=1,`}},
			Reading{Policy: "d", Remaining: 1}, false, "RateLimit-Policy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadFields(tt.header)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one saying %q", err, tt.err)
				}
				if tt.err == ErrNoFields.Error() && !errors.Is(err, ErrNoFields) {
					t.Fatalf("error %v is not ErrNoFields", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Policy != tt.want.Policy || got.Remaining != tt.want.Remaining || got.Reset != tt.want.Reset ||
				len(got.Policies) != len(tt.want.Policies) {
				t.Fatalf("ReadFields = %+v, want %+v", got, tt.want)
			}
			for i := range got.Policies {
				if got.Policies[i] != tt.want.Policies[i] {
					t.Errorf("policy %d = %+v, want %+v", i, got.Policies[i], tt.want.Policies[i])
				}
			}
			if _, listed := got.Quota(); listed != tt.listed {
				t.Errorf("Quota() listed = %v, want %v", listed, tt.listed)
			}
		})
	}
}

// readAnswerPolicies checks what a client relies on in an answer of the
// several-policies path: the five fields all or none; RateLimit names a
// policy RateLimit-Policy lists; r ≤ that policy's q; the -06 trio carries
// the same q, r, t; on a 429, r = 0 and Retry-After ≥ 1 and ≥ t. It returns
// the reading, and whether there were fields.
func readAnswerPolicies(t failer, status int, h http.Header) (Reading, int64, bool) {
	t.Helper()
	retryAfter := int64(-1)
	if ra := h.Values("Retry-After"); len(ra) > 0 {
		if len(ra) != 1 {
			t.Fatalf("Retry-After sent %d times", len(ra))
		}
		retryAfter = delaySeconds(t, "Retry-After", ra[0])
	}
	names := []string{"RateLimit-Policy", "RateLimit", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"}
	present := 0
	for _, n := range names {
		if vs := h.Values(n); len(vs) == 1 {
			present++
		} else if len(vs) > 1 {
			t.Fatalf("%s sent %d times", n, len(vs))
		}
	}
	switch present {
	case 0:
		if status == http.StatusTooManyRequests {
			t.Fatalf("a 429 with no RateLimit fields")
		}
		return Reading{}, retryAfter, false
	case len(names):
	default:
		t.Fatalf("only %d of the %d RateLimit fields sent: %v", present, len(names), h)
	}
	rd, err := ReadFields(h)
	if err != nil {
		t.Fatalf("%v", err)
	}
	q, listed := rd.Quota()
	if !listed {
		t.Fatalf("RateLimit names %q, which RateLimit-Policy %q does not list", rd.Policy, h.Get("RateLimit-Policy"))
	}
	seen := map[string]bool{}
	for _, p := range rd.Policies {
		if seen[p.Name] {
			t.Fatalf("RateLimit-Policy %q lists %q twice", h.Get("RateLimit-Policy"), p.Name)
		}
		seen[p.Name] = true
	}
	trio := [3]int64{}
	for i, n := range names[2:] {
		trio[i] = delaySeconds(t, n, h.Get(n))
	}
	reset := trio[2]
	if trio[0] != q.Limit || trio[1] != rd.Remaining || seconds(reset) != rd.Reset {
		t.Fatalf("the -06 trio %v disagrees with the binding policy's q=%d r=%d t=%s", trio, q.Limit, rd.Remaining, rd.Reset)
	}
	if rd.Remaining > q.Limit {
		t.Fatalf("r=%d above q=%d", rd.Remaining, q.Limit)
	}
	if status == http.StatusTooManyRequests {
		if rd.Remaining != 0 {
			t.Fatalf("a 429 says r=%d", rd.Remaining)
		}
		if retryAfter < 1 || retryAfter < reset {
			t.Fatalf("a 429 with Retry-After %d and t=%d", retryAfter, reset)
		}
	} else if retryAfter != -1 {
		t.Fatalf("Retry-After on a %d", status)
	}
	return rd, retryAfter, true
}

// The global shadow switch over several policies: Shadow with Policies
// lets everything through with no RateLimit fields, marks what either
// policy would have refused, and from ShadowUntil enforces both as they
// are, the first refusal naming the policy that binds.
func TestGlobalShadowOverPolicies(t *testing.T) {
	bucket := tokenBucket(t, algorithms.Rate{N: 1, Per: time.Hour}, 2)
	minute, err := algorithms.NewSlidingLog(algorithms.Rate{N: 3, Per: time.Minute}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	multi, err := algorithms.NewMulti([]algorithms.Policy{{Name: "burst", Algorithm: bucket}, {Name: "minute", Algorithm: minute}})
	if err != nil {
		t.Fatal(err)
	}
	clk := newClock()
	m, reg := newMetrics(t)
	next := &counting{}
	h := mustNew(t, Config{Limiter: store.NewMemory(multi), Policies: QuotasOf(multi), Clock: clk.Now, Metrics: m,
		Shadow: true, ShadowUntil: t0.Add(time.Second)}, next)
	for i, wouldReject := range []bool{false, false, true, true} {
		w := get(h)
		if w.Code != http.StatusOK || (w.Header().Get(ShadowHeader) == "would-reject") != wouldReject {
			t.Fatalf("shadowed request %d: %d %s %q; want 200, would-reject %v", i, w.Code, ShadowHeader, w.Header().Get(ShadowHeader), wouldReject)
		}
		if w.Header().Get("RateLimit") != "" || w.Header().Get("RateLimit-Policy") != "" {
			t.Fatalf("shadowed request %d carries RateLimit fields: %v", i, w.Header())
		}
	}
	clk.Advance(time.Second)
	w := get(h)
	if w.Code != http.StatusTooManyRequests || w.Header().Get(ShadowHeader) != "" || !strings.HasPrefix(w.Header().Get("RateLimit"), `"burst";r=0`) {
		t.Fatalf("after the flip: %d %v; want a 429 naming burst", w.Code, w.Header())
	}
	if next.calls.Load() != 4 {
		t.Errorf("handler ran %d times, want the 4 shadowed requests", next.calls.Load())
	}
	wantRequests(t, reg, map[string]int{DecisionAllowed: 2, DecisionWouldReject: 2, DecisionRejected: 1})
}
