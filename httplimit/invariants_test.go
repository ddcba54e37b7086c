package httplimit

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/store"
)

// What a client reads must hold for every algorithm, whatever the arrivals:
//
//   - a 429 says no quota remains, carries Retry-After ≥ 1 s and ≥ the
//     decision's RetryAfter, and its reset is its Retry-After;
//   - an admission's reset is the decision's ResetAfter rounded up: never
//     early, less than a second late;
//   - a client that waits what Retry-After said is admitted;
//   - while a key is only rejected, the instant a rejection points to
//     (now + Retry-After) is never earlier than the instant the limiter
//     gave for the previous one: the reset does not wobble backwards.
//     (It may sit up to 1 s later, since delay-seconds are whole seconds
//     counted from an instant that is not; the limiter's own instant, now +
//     RetryAfter, never moves earlier at all.)
//
// The test runs in a synctest bubble so that the leaky bucket's delays pass
// in fake time.
func TestAnswerInvariants(t *testing.T) {
	for _, info := range algorithms.Exact() {
		t.Run(info.Name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				// rapid asks a *testing.T for its deadline, which a
				// bubble's T refuses; wrapped, it is asked nothing.
				rapid.Check(bubbleT{t}, func(rt *rapid.T) { checkAnswers(rt, info) })
			})
		})
	}
}

// bubbleT is a *testing.T that rapid does not recognise as one.
type bubbleT struct{ *testing.T }

// keyHistory is what the test remembers of a key's previous answer.
type keyHistory struct {
	rejectedBefore bool      // it was a 429
	limiterAt      time.Time // now + RetryAfter of that 429
	passAt         time.Time // now + Retry-After of that 429
}

func checkAnswers(rt *rapid.T, info algorithms.Info) {
	p := algorithms.Params{
		Rate:   algorithms.Rate{N: rapid.Int64Range(1, 20).Draw(rt, "rate"), Per: rapid.SampledFrom([]time.Duration{time.Second, 2 * time.Second, time.Minute}).Draw(rt, "per")},
		Burst:  rapid.Int64Range(1, 10).Draw(rt, "burst"),
		Window: rapid.SampledFrom([]time.Duration{time.Second, 1500 * time.Millisecond, 3 * time.Second, time.Minute}).Draw(rt, "window"),
	}
	alg, err := info.Build(p)
	if err != nil {
		rt.Skipf("%s: %v", info.Name, err) // a window too short for the rate
	}
	lim := &spy{next: store.NewMemory(alg)}
	clk := newClock()
	cfg := Config{Limiter: lim, Clock: clk.Now, Key: func(r *http.Request) string { return r.Header.Get("K") }}
	cfg.Limit, cfg.Window = QuotaOf(alg)
	h := mustNew(rt, cfg, &counting{})

	hist := map[string]*keyHistory{"a": {}, "b": {}}
	steps := rapid.IntRange(1, 150).Draw(rt, "steps")
	for i := range steps {
		// Whole microseconds, as the limiter counts time.
		gap := rapid.OneOf(
			rapid.Just(int64(0)),
			rapid.Int64Range(0, 50_000),
			rapid.Int64Range(0, 4_000_000),
		).Draw(rt, "gap_us")
		clk.Advance(time.Duration(gap) * time.Microsecond)
		key := rapid.SampledFrom([]string{"a", "b"}).Draw(rt, "key")
		now := clk.Now()

		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("K", key)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		a := readAnswer(rt, w.Code, w.Header())
		d := lim.Last()
		kh := hist[key]
		if !a.hasRateFields {
			rt.Fatalf("step %d: no RateLimit fields on a %d", i, w.Code)
		}
		if a.reset() < 0 {
			rt.Fatalf("step %d: negative reset %d", i, a.reset())
		}
		switch w.Code {
		case http.StatusTooManyRequests:
			if d.Allowed {
				rt.Fatalf("step %d: 429 for an admitted decision", i)
			}
			if a.remaining() != 0 || a.limit.params["r"] != 0 {
				rt.Fatalf("step %d: a 429 says %d remain", i, a.remaining())
			}
			if a.retryAfter < 1 {
				rt.Fatalf("step %d: 429 with Retry-After %d", i, a.retryAfter)
			}
			retry := time.Duration(a.retryAfter) * time.Second
			if retry < d.RetryAfter {
				rt.Fatalf("step %d: Retry-After %v is earlier than the limiter's %v", i, retry, d.RetryAfter)
			}
			if a.reset() != a.retryAfter {
				rt.Fatalf("step %d: 429 reset %d ≠ Retry-After %d", i, a.reset(), a.retryAfter)
			}
			limiterAt := now.Add(d.RetryAfter)
			passAt := now.Add(retry)
			if kh.rejectedBefore {
				if limiterAt.Before(kh.limiterAt) {
					rt.Fatalf("step %d: the limiter's retry instant moved earlier, %v → %v, with nothing admitted",
						i, kh.limiterAt.Sub(t0), limiterAt.Sub(t0))
				}
				if passAt.Before(kh.limiterAt) {
					rt.Fatalf("step %d: Retry-After points to %v, before the %v the previous answer's decision named",
						i, passAt.Sub(t0), kh.limiterAt.Sub(t0))
				}
				if !now.Before(kh.passAt) {
					rt.Fatalf("step %d: rejected at %v although the previous 429 said to come back at %v",
						i, now.Sub(t0), kh.passAt.Sub(t0))
				}
			}
			*kh = keyHistory{rejectedBefore: true, limiterAt: limiterAt, passAt: passAt}
		case http.StatusOK:
			if !d.Allowed {
				rt.Fatalf("step %d: 200 for a rejected decision", i)
			}
			if a.retryAfter != -1 {
				rt.Fatalf("step %d: Retry-After on an admission", i)
			}
			reset := time.Duration(a.reset()) * time.Second
			if reset < d.ResetAfter || reset >= d.ResetAfter+time.Second {
				rt.Fatalf("step %d: reset %v for ResetAfter %v (want rounded up)", i, reset, d.ResetAfter)
			}
			if want := min(max(d.Remaining, 0), a.trio[0]); a.remaining() != want {
				rt.Fatalf("step %d: remaining %d, decision %d", i, a.remaining(), d.Remaining)
			}
			*kh = keyHistory{}
		default:
			rt.Fatalf("step %d: status %d", i, w.Code)
		}
		if a.trio[0] != cfg.Limit {
			rt.Fatalf("step %d: limit %d, configured %d", i, a.trio[0], cfg.Limit)
		}
	}
}
