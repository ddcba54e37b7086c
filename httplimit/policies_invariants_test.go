package httplimit

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/store"
)

// What a client reads from a key with several limits must hold whatever
// the limits and the arrivals (readAnswerPolicies checks each answer):
// RateLimit names a policy RateLimit-Policy lists, r ≤ its q, a 429 says
// r=0 with Retry-After ≥ 1, ≥ t and ≥ the limiter's RetryAfter; and, here,
// RateLimit-Policy lists exactly the policies enforcing at that instant, in
// order, the answer is a 429 exactly when the decision refused, and
// ShadowHeader is set exactly when it says WouldReject. Random limits of
// every exact algorithm, one to three to a key, some shadowed for good or
// until an instant the run crosses, on the memory store. In a synctest
// bubble, for the leaky bucket's delays.
func TestPolicyAnswerInvariants(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rapid.Check(bubbleT{t}, checkPolicyAnswers)
	})
}

func checkPolicyAnswers(rt *rapid.T) {
	exact := algorithms.Exact()
	n := rapid.IntRange(1, 3).Draw(rt, "limits")
	policies := make([]algorithms.Policy, n)
	for i := range policies {
		info := exact[rapid.IntRange(0, len(exact)-1).Draw(rt, "algorithm")]
		p := algorithms.Params{
			Rate:   algorithms.Rate{N: rapid.Int64Range(1, 20).Draw(rt, "rate"), Per: rapid.SampledFrom([]time.Duration{time.Second, time.Minute}).Draw(rt, "per")},
			Burst:  rapid.Int64Range(1, 10).Draw(rt, "burst"),
			Window: rapid.SampledFrom([]time.Duration{time.Second, 3 * time.Second, time.Minute}).Draw(rt, "window"),
		}
		alg, err := info.Build(p)
		if err != nil {
			rt.Skipf("%s: %v", info.Name, err)
		}
		policies[i] = algorithms.Policy{Name: string(rune('a' + i)), Algorithm: alg}
		switch rapid.IntRange(0, 2).Draw(rt, "shadow") {
		case 1:
			policies[i].Shadow = true
		case 2:
			policies[i].Shadow = true
			policies[i].ShadowUntil = algorithms.FromTime(t0.Add(time.Duration(rapid.Int64Range(1, 10_000_000).Draw(rt, "until_us")) * time.Microsecond))
		}
	}
	multi, err := algorithms.NewMulti(policies)
	if err != nil {
		rt.Fatalf("%v", err)
	}
	lim := &spy{next: store.NewMemory(multi)}
	clk := newClock()
	h := mustNew(rt, Config{Limiter: lim, Policies: QuotasOf(multi), Clock: clk.Now, Key: func(r *http.Request) string { return r.Header.Get("K") }}, &counting{})

	steps := rapid.IntRange(1, 100).Draw(rt, "steps")
	for i := range steps {
		gap := rapid.OneOf(rapid.Just(int64(0)), rapid.Int64Range(0, 50_000), rapid.Int64Range(0, 3_000_000)).Draw(rt, "gap_us")
		clk.Advance(time.Duration(gap) * time.Microsecond)
		now := algorithms.FromTime(clk.Now())
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("K", rapid.SampledFrom([]string{"a", "b"}).Draw(rt, "key"))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		d := lim.Last()
		rd, retryAfter, ok := readAnswerPolicies(rt, w.Code, w.Header())

		var enforcing []string
		for _, p := range policies {
			if !p.Shadow || (p.ShadowUntil != 0 && now >= p.ShadowUntil) {
				enforcing = append(enforcing, p.Name)
			}
		}
		var listed []string
		for _, q := range rd.Policies {
			listed = append(listed, q.Name)
		}
		switch {
		case len(enforcing) == 0 && ok:
			rt.Fatalf("step %d: RateLimit fields %v while no policy enforces", i, w.Header())
		case len(enforcing) > 0 && !slices.Equal(listed, enforcing):
			rt.Fatalf("step %d: RateLimit-Policy lists %v, want the enforcing %v", i, listed, enforcing)
		case ok && rd.Policy != policies[d.Binding].Name:
			rt.Fatalf("step %d: RateLimit names %q, the decision's Binding is %q", i, rd.Policy, policies[d.Binding].Name)
		}
		if (w.Code == http.StatusTooManyRequests) == d.Allowed || (w.Code != http.StatusOK && w.Code != http.StatusTooManyRequests) {
			rt.Fatalf("step %d: status %d for a decision Allowed=%v", i, w.Code, d.Allowed)
		}
		if !d.Allowed && time.Duration(retryAfter)*time.Second < d.RetryAfter {
			rt.Fatalf("step %d: Retry-After %d s before the limiter's %s", i, retryAfter, d.RetryAfter)
		}
		if shadowed := w.Header().Get(ShadowHeader) == "would-reject"; shadowed != d.WouldReject {
			rt.Fatalf("step %d: %s %q for WouldReject=%v", i, ShadowHeader, w.Header().Get(ShadowHeader), d.WouldReject)
		}
	}
}

// The same rules whatever the limiter says, even what a Multi never says
// (a Binding out of range, a remaining below 0 or above q, a refusal by a
// policy the configuration calls shadowed, RetryAfter 0 or Never): the
// answer never breaks them.
func TestPolicyAnswersFromAnyDecision(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, algorithms.MaxLimits).Draw(rt, "policies")
		qs := make([]Quota, n)
		for i := range qs {
			qs[i] = Quota{Name: string(rune('a' + i)), Limit: rapid.Int64Range(1, 1_000_000_000_000_000).Draw(rt, "q"),
				Window: time.Duration(rapid.Int64Range(0, 100_000).Draw(rt, "w_ms")) * time.Millisecond,
				Shadow: rapid.Bool().Draw(rt, "shadow")}
			if qs[i].Shadow && rapid.Bool().Draw(rt, "until") {
				qs[i].ShadowUntil = t0.Add(time.Duration(rapid.Int64Range(-5, 5).Draw(rt, "until_s")) * time.Second)
			}
		}
		lim := &fixed{}
		clk := newClock()
		h := mustNew(rt, Config{Limiter: lim, Policies: qs, Clock: clk.Now}, &counting{})
		for range rapid.IntRange(1, 20).Draw(rt, "steps") {
			clk.Advance(time.Duration(rapid.Int64Range(0, 3_000_000).Draw(rt, "gap_us")) * time.Microsecond)
			lim.d = algorithms.Decision{
				Allowed:           rapid.Bool().Draw(rt, "allowed"),
				Limit:             rapid.Int64Range(-5, 1<<62).Draw(rt, "limit"),
				Remaining:         rapid.Int64Range(-5, 1<<62).Draw(rt, "remaining"),
				RetryAfter:        rapid.SampledFrom([]time.Duration{0, time.Microsecond, 1500 * time.Millisecond, time.Hour, algorithms.Never}).Draw(rt, "retry"),
				BindingResetAfter: time.Duration(rapid.Int64Range(-1, 1<<50).Draw(rt, "reset")),
				Binding:           rapid.IntRange(-1, n).Draw(rt, "binding"),
				WouldReject:       rapid.Bool().Draw(rt, "would_reject"),
			}
			lim.d.ResetAfter = lim.d.BindingResetAfter
			w := get(h)
			readAnswerPolicies(rt, w.Code, w.Header())
		}
	})
}
