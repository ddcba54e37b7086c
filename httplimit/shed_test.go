package httplimit

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/store"
)

// testPriorityHeader is the header these tests' middlewares read
// priorities from.
const testPriorityHeader = "X-Priority"

func newShedder(t testing.TB, rate algorithms.Rate, burst int64, reserve [3]int64) *Shedder {
	t.Helper()
	alg, err := algorithms.NewShedder(rate, burst, reserve)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewShedder(alg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// unlimited is a limiter that admits everything a test sends it.
func unlimited(t testing.TB) store.Limiter {
	return store.NewMemory(tokenBucket(t, algorithms.Rate{N: 1_000_000, Per: time.Second}, 1_000_000))
}

// A fleet of 10 refilling 1/s, of which normal requests leave 2 and
// sheddable ones 5, all at one instant unless a step moves the clock: the
// sheddable requests are shed first, then the normal ones, while the
// critical ones take the last tokens; once the clock moves a critical
// request passes again. Every 503 has Retry-After (the wait for its
// priority's reserve plus its cost), ShedHeader naming its priority, no
// RateLimit fields and a one-line body, and the handler never ran for it.
func TestShedderStepByStep(t *testing.T) {
	clk := newClock()
	m, _ := newMetrics(t)
	next := &counting{}
	h := mustNew(t, Config{Limiter: unlimited(t), Clock: clk.Now, Metrics: m,
		Shedder:  newShedder(t, algorithms.Rate{N: 1, Per: time.Second}, 10, [3]int64{0, 2, 5}),
		Priority: PriorityFromHeader(testPriorityHeader)}, next)
	steps := []struct {
		advance    time.Duration
		priority   string
		want       int
		retryAfter string // on a 503
	}{
		{0, "sheddable", 200, ""}, // 10 → 9
		{0, "sheddable", 200, ""},
		{0, "sheddable", 200, ""},
		{0, "sheddable", 200, ""},
		{0, "sheddable", 200, ""}, // 6 → 5: the sheddable reserve
		{0, "sheddable", 503, "1"},
		{0, "normal", 200, ""}, // 5 → 4
		{0, "", 200, ""},       // no header: normal
		{0, "urgent", 200, ""}, // unknown: normal, 3 → 2
		{0, "normal", 503, "1"},
		{0, "sheddable", 503, "4"}, // 2 tokens, needs 5 + 1 at 1/s
		{0, "critical", 200, ""},   // 2 → 1, at the instant the others are shed
		{0, "critical", 200, ""},   // 1 → 0
		{0, "critical", 503, "1"},  // nothing left, even for critical
		{time.Second, "critical", 200, ""},
		{0, "sheddable", 503, "6"},
	}
	var served, shed int
	for i, s := range steps {
		clk.Advance(s.advance)
		calls := next.calls.Load()
		w := get(h, "X-API-Key", "k", testPriorityHeader, s.priority)
		what := fmt.Sprintf("step %d (%s)", i, s.priority)
		if w.Code != s.want {
			t.Fatalf("%s: status %d, want %d", what, w.Code, s.want)
		}
		ran := next.calls.Load() - calls
		if s.want == http.StatusOK {
			served++
			if ran != 1 || w.Header().Get(ShedHeader) != "" || w.Header().Get("RateLimit") == "" {
				t.Errorf("%s: handler ran %d times, %s %q, RateLimit %q; want once, no shed header, the limit's fields",
					what, ran, ShedHeader, w.Header().Get(ShedHeader), w.Header().Get("RateLimit"))
			}
			continue
		}
		shed++
		wantPriority := s.priority
		if p, err := algorithms.ParsePriority(s.priority); err != nil || p > algorithms.Sheddable {
			wantPriority = "normal"
		}
		checkShed(t, what, w.Header(), w.Body.String(), wantPriority, s.retryAfter)
		if ran != 0 {
			t.Errorf("%s: the handler ran for a shed request", what)
		}
	}
	wantCounts(t, m, map[string]float64{DecisionAllowed: float64(served), DecisionShed: float64(shed)})
}

// checkShed checks a shed answer's headers and body.
func checkShed(t *testing.T, what string, h http.Header, body, priority, retryAfter string) {
	t.Helper()
	if got := h.Get(ShedHeader); got != priority {
		t.Errorf("%s: %s %q, want %q", what, ShedHeader, got, priority)
	}
	if got := h.Get("Retry-After"); got != retryAfter {
		t.Errorf("%s: Retry-After %q, want %q", what, got, retryAfter)
	}
	for _, f := range []string{fieldPolicy, fieldRateLimit, fieldLimit, fieldRemaining, fieldReset} {
		if v, ok := h[f]; ok {
			t.Errorf("%s: a shed answer carries %s: %q", what, f, v)
		}
	}
	if strings.Count(body, "\n") != 1 || !strings.HasPrefix(body, "503 Service Unavailable: ") || !strings.Contains(body, priority) {
		t.Errorf("%s: body %q, want one line saying 503 and the priority", what, body)
	}
}

// A 429 never reaches the shedder and takes none of its capacity; a
// request a fail-open store let through and one a limit in shadow mode
// let through do, and are counted as shed, not failed_open or
// would_reject.
func TestShedderOnlyWeighsWhatTheLimitLetThrough(t *testing.T) {
	t.Run("429", func(t *testing.T) {
		m, _ := newMetrics(t)
		h := mustNew(t, Config{Limiter: store.NewMemory(tokenBucket(t, algorithms.Rate{N: 1, Per: time.Hour}, 2)),
			Clock: newClock().Now, Metrics: m, Shedder: newShedder(t, algorithms.Rate{N: 1, Per: time.Hour}, 3, [3]int64{})}, &counting{})
		for i, want := range []int{200, 200, 429, 429, 429} {
			if w := get(h, "X-API-Key", "a"); w.Code != want {
				t.Fatalf("key a, request %d: %d, want %d", i, w.Code, want)
			}
		}
		// The shedder took 2 of its 3: one left, for b; c finds none.
		if w := get(h, "X-API-Key", "b"); w.Code != 200 {
			t.Fatalf("key b: %d, want 200 (the 429s took nothing from the shedder)", w.Code)
		}
		if w := get(h, "X-API-Key", "c"); w.Code != 503 || w.Header().Get(ShedHeader) != "normal" {
			t.Fatalf("key c: %d %s %q, want 503 shed normal", w.Code, ShedHeader, w.Header().Get(ShedHeader))
		}
		wantCounts(t, m, map[string]float64{DecisionAllowed: 3, DecisionRejected: 3, DecisionShed: 1})
	})
	t.Run("fail-open", func(t *testing.T) {
		m, _ := newMetrics(t)
		down := &flaky{next: unlimited(t)}
		down.down.Store(true)
		next := &counting{}
		h := mustNew(t, Config{Limiter: down, OnError: store.FailOpen, Clock: newClock().Now, Metrics: m,
			Shedder: newShedder(t, algorithms.Rate{N: 1, Per: time.Hour}, 1, [3]int64{})}, next)
		if w := get(h, "X-API-Key", "a"); w.Code != 200 {
			t.Fatalf("first: %d, want 200 failed open", w.Code)
		}
		w := get(h, "X-API-Key", "a")
		if w.Code != 503 || w.Header().Get(DecidedByHeader) != "fail-open" {
			t.Fatalf("second: %d decided by %q, want 503 shed, still saying fail-open let it through", w.Code, w.Header().Get(DecidedByHeader))
		}
		checkShed(t, "second", w.Header(), w.Body.String(), "normal", "3600")
		if next.calls.Load() != 1 {
			t.Errorf("handler ran %d times, want 1", next.calls.Load())
		}
		wantCounts(t, m, map[string]float64{DecisionFailedOpen: 1, DecisionShed: 1})
	})
	t.Run("shadow", func(t *testing.T) {
		m, _ := newMetrics(t)
		h := mustNew(t, Config{Limiter: store.NewMemory(tokenBucket(t, algorithms.Rate{N: 1, Per: time.Hour}, 1)), Shadow: true,
			Clock: newClock().Now, Metrics: m, Shedder: newShedder(t, algorithms.Rate{N: 1, Per: time.Hour}, 2, [3]int64{})}, &counting{})
		for i, want := range []int{200, 200, 503} {
			if w := get(h, "X-API-Key", "a"); w.Code != want {
				t.Fatalf("request %d: %d, want %d", i, w.Code, want)
			}
		}
		wantCounts(t, m, map[string]float64{DecisionAllowed: 1, DecisionWouldReject: 1, DecisionShed: 1})
	})
}

// A request the limit admitted with a lease (a concurrency limit) and the
// shedder then refused gives the lease back: the one slot is free for the
// next request, and the release is counted.
func TestShedReleasesLease(t *testing.T) {
	s := newRecordingStore(concurrency(t, 1, time.Minute))
	m, _ := newMetrics(t)
	next := &counting{}
	h := mustNew(t, Config{Limiter: s, Clock: newClock().Now, Metrics: m, Key: func(*http.Request) string { return "k" },
		Shedder:  newShedder(t, algorithms.Rate{N: 1, Per: time.Hour}, 2, [3]int64{0, 1, 1}),
		Priority: PriorityFromHeader(testPriorityHeader)}, next)
	if w := get(h, testPriorityHeader, "sheddable"); w.Code != 200 {
		t.Fatalf("first: %d, want 200", w.Code)
	}
	waitRelease(t, s)
	w := get(h, testPriorityHeader, "sheddable")
	if w.Code != 503 || w.Header().Get(ShedHeader) != "sheddable" {
		t.Fatalf("second: %d %q, want 503 shed sheddable", w.Code, w.Header().Get(ShedHeader))
	}
	if r := waitRelease(t, s); r.lease != s.Leases()[1] {
		t.Errorf("released lease %d, want the shed request's %d", r.lease, s.Leases()[1])
	}
	if w := get(h, testPriorityHeader, "critical"); w.Code != 200 {
		t.Fatalf("third: %d, want 200: the shed request's slot was given back", w.Code)
	}
	waitRelease(t, s)
	if rel, failed := releaseCounts(m); rel != 3 || failed != 0 {
		t.Errorf("releases counted: %v released, %v failed; want 3, 0", rel, failed)
	}
	if next.calls.Load() != 2 {
		t.Errorf("handler ran %d times, want 2", next.calls.Load())
	}
	wantCounts(t, m, map[string]float64{DecisionAllowed: 2, DecisionShed: 1})
}

func TestPriorityFromHeader(t *testing.T) {
	read := PriorityFromHeader("x-ratelim-priority")
	for _, tt := range []struct {
		values []string
		want   algorithms.Priority
	}{
		{nil, algorithms.Normal},
		{[]string{""}, algorithms.Normal},
		{[]string{"critical"}, algorithms.Critical},
		{[]string{" Critical "}, algorithms.Critical},
		{[]string{"SHEDDABLE"}, algorithms.Sheddable},
		{[]string{"normal"}, algorithms.Normal},
		{[]string{"urgent"}, algorithms.Normal},
		{[]string{"critical!"}, algorithms.Normal},
		{[]string{"sheddable", "critical"}, algorithms.Sheddable}, // the first
	} {
		r, _ := http.NewRequest(http.MethodGet, "/", nil)
		for _, v := range tt.values {
			r.Header.Add("X-Ratelim-Priority", v)
		}
		if got := read(r); got != tt.want {
			t.Errorf("%q: %s, want %s", tt.values, got, tt.want)
		}
	}
}

func TestShedderConfig(t *testing.T) {
	if _, err := NewShedder(nil); err == nil {
		t.Error("NewShedder(nil) built a shedder")
	}
	if _, err := New(Config{Limiter: unlimited(t), Shedder: &Shedder{}}); err == nil {
		t.Error("New took a zero Shedder, which would shed every request")
	}
	var zero Shedder
	if d := zero.Take(1, 1, algorithms.Critical); d.Allowed || d.RetryAfter != algorithms.Never {
		t.Errorf("the zero Shedder decided %+v, want a refusal for good", d)
	}
	// A priority past Sheddable is Sheddable, in the header too.
	h := mustNew(t, Config{Limiter: unlimited(t), Clock: newClock().Now,
		Shedder:  newShedder(t, algorithms.Rate{N: 1, Per: time.Hour}, 2, [3]int64{0, 1, 1}),
		Priority: func(*http.Request) algorithms.Priority { return 9 }}, &counting{})
	get(h, "X-API-Key", "a")
	if w := get(h, "X-API-Key", "a"); w.Code != 503 || w.Header().Get(ShedHeader) != "sheddable" {
		t.Errorf("priority 9: %d %q, want 503 shed as sheddable", w.Code, w.Header().Get(ShedHeader))
	}
}

// Random sequences of requests, of random keys, costs and priorities, at
// random instants of a fixed test clock, through a per-key limit and the
// shedder, against an oracle: the fleet's tokens counted exactly, in the
// bucket's units (one token is Per in µs; a µs refills N). Every answer
// is the oracle's: a 429 takes nothing from the shedder; a request the
// limit admitted passes if and only if the tokens hold its cost and its
// priority's reserve, so critical traffic is never shed while the tokens
// hold its cost; and what the fleet served never exceeds its capacity,
// burst + rate × elapsed, at any point.
func TestShedderProperties(t *testing.T) {
	var shedBy [3]int // over every seed: the property must have been put to the test
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 0x5eed))
		rate := algorithms.Rate{N: 1 + rng.Int64N(20), Per: time.Duration(1+rng.Int64N(3)) * time.Second}
		burst := 2 + rng.Int64N(30)
		normal := rng.Int64N(burst)
		reserve := [3]int64{0, normal, normal + rng.Int64N(burst-normal)}
		clk := newClock()
		m, _ := newMetrics(t)
		h := mustNew(t, Config{Limiter: store.NewMemory(tokenBucket(t, algorithms.Rate{N: 5, Per: time.Second}, 8)),
			Clock: clk.Now, Metrics: m, Shedder: newShedder(t, rate, burst, reserve),
			Priority: PriorityFromHeader(testPriorityHeader),
			Cost: func(r *http.Request) int64 {
				var c int64
				fmt.Sscan(r.Header.Get("X-Cost"), &c)
				return c
			}}, &counting{})

		per := rate.Per.Microseconds()
		capacity := burst * per
		avail := capacity // the oracle's tokens, in units
		var elapsed, servedCost int64
		for i := range 400 {
			if rng.IntN(3) == 0 {
				dt := rng.Int64N(2 * per / rate.N)
				clk.Advance(time.Duration(dt) * time.Microsecond)
				elapsed += dt
				avail = min(capacity, avail+dt*rate.N)
			}
			p := algorithms.Priority(rng.IntN(3))
			cost := 1 + rng.Int64N(3)
			key := fmt.Sprint("k", rng.IntN(4))
			w := get(h, "X-API-Key", key, "X-Cost", fmt.Sprint(cost), testPriorityHeader, p.String())
			what := fmt.Sprintf("seed %d, request %d (%s, cost %d, tokens %d/%d units, reserve %v, rate %v)", seed, i, p, cost, avail, capacity, reserve, rate)
			if w.Code == http.StatusTooManyRequests {
				if w.Header().Get(ShedHeader) != "" {
					t.Fatalf("%s: a 429 says shed", what)
				}
				continue
			}
			fits := avail >= (cost+reserve[p])*per
			switch {
			case w.Code == http.StatusOK && fits:
				avail -= cost * per
				servedCost += cost
			case w.Code == http.StatusServiceUnavailable && !fits:
				shedBy[p]++
				if w.Header().Get(ShedHeader) != p.String() || w.Header().Get("Retry-After") == "" || w.Header().Get("Retry-After") == "0" {
					t.Fatalf("%s: shed with %s %q, Retry-After %q", what, ShedHeader, w.Header().Get(ShedHeader), w.Header().Get("Retry-After"))
				}
			case p == algorithms.Critical && w.Code == http.StatusServiceUnavailable:
				t.Fatalf("%s: critical request shed while the tokens held its cost", what)
			default:
				t.Fatalf("%s: status %d, the oracle says fits=%v", what, w.Code, fits)
			}
			if servedCost*per > capacity+elapsed*rate.N {
				t.Fatalf("%s: served %d of cost in %d µs, more than burst + rate × elapsed", what, servedCost, elapsed)
			}
		}
	}
	if shedBy[algorithms.Critical] == 0 || shedBy[algorithms.Normal] == 0 || shedBy[algorithms.Sheddable] == 0 {
		t.Errorf("shed by priority %v: the sequences never ran a priority short", shedBy)
	}
	t.Logf("shed by priority (critical, normal, sheddable): %v", shedBy)
}
