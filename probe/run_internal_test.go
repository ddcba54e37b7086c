package probe

import (
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// newTestProber is a prober whose sender sends to url at up to 100/s
// until deadline.
func newTestProber(url string, deadline time.Time) *prober {
	s := &sender{client: &http.Client{}, url: url, minGap: 10 * time.Millisecond, maxRequests: 100,
		deadline: deadline, end: deadline.Add(time.Second), sem: make(chan struct{}, maxInFlight)}
	return &prober{s: s, opts: Options{MaxRate: 100, MaxRequests: 100, MaxDuration: time.Until(deadline)}, start: time.Now()}
}

// TestRecoverEndsByTheDeadline: against a server that refuses every
// request, the recover phase's growing waits (50 ms × 1.5ⁿ: requests at
// 1.04 s, 1.61 s and then 2.46 s) stop at the deadline, 1.7 s away, and
// never sleep past it (they did: the wait after 1.61 s ran to 2.46 s).
func TestRecoverEndsByTheDeadline(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	t.Cleanup(srv.Close)
	start := time.Now()
	deadline := start.Add(1700 * time.Millisecond)
	p := newTestProber(srv.URL, deadline)
	if err := p.recover(t.Context(), "", 100); err != errStop {
		t.Errorf("recover returned %v, want errStop", err)
	}
	// A bound, not a speed: the next wait would have ended 760 ms past
	// the deadline; 500 ms allows a loaded machine's late timers.
	if over := time.Since(deadline); over > 500*time.Millisecond {
		t.Errorf("recover returned %s after its deadline", over.Round(time.Millisecond))
	}
	if n := len(p.s.observed()); n == 0 {
		t.Error("recover sent nothing")
	}
}

// TestGapAtSaturates: the gap between requests at a rate is never
// negative, however small the rate (1e-300/s wrapped round to a negative
// gap, and the probe sent as fast as it could).
func TestGapAtSaturates(t *testing.T) {
	for _, rate := range []float64{1e-300, 1e-10, 0, -1} {
		if g := gapAt(rate); g != math.MaxInt64 {
			t.Errorf("gapAt(%g) = %d, want the longest duration", rate, g)
		}
	}
	if g := gapAt(100); g != 10*time.Millisecond {
		t.Errorf("gapAt(100) = %s, want 10ms", g)
	}
}

// TestPolicyWindowInWholeSeconds: RateLimit-Policy's w is whole seconds,
// so a bucket that refills in 0.5 s may say 1, and agrees only in those
// terms, said so; one that refills in 1.9 s may not say 1 (it agreed:
// within a second either way passed).
func TestPolicyWindowInWholeSeconds(t *testing.T) {
	for _, c := range []struct {
		burst               int64
		agrees, wholeSecond bool
	}{{5, true, true}, {19, false, false}, {10, true, false}} {
		r := Report{Rate: 10, RateRange: [2]float64{10, 10}, Burst: c.burst}
		obs := []Observation{{Status: 200, Headers: map[string]string{"Ratelimit-Policy": `"default";q=5;w=1`}}}
		for _, cl := range claims(obs, r) {
			if cl.Field == "RateLimit-Policy w" && (cl.Agrees != c.agrees || cl.WholeSeconds != c.wholeSecond) {
				t.Errorf("w=1 for a refill in %gs: agrees %v, whole seconds %v; want %v, %v", cl.Observed, cl.Agrees, cl.WholeSeconds, c.agrees, c.wholeSecond)
			}
		}
	}
}
