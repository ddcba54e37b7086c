package peers_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/time/rate"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/algorithms/peers"
)

// peerConfig is one configuration a Go peer's differential test runs.
type peerConfig struct {
	rate      algorithms.Rate
	burst     int64
	origin    algorithms.Time
	backwards bool  // whether the clock now and then steps back
	bigCost   int64 // if > 0, now and then a cost this large
}

func (c peerConfig) params() algorithms.Params {
	return algorithms.Params{Rate: c.rate, Burst: c.burst, Origin: c.origin}
}

// origin2026 is a wall-clock origin of today's magnitude.
var origin2026 = algorithms.FromTime(time.Date(2026, 12, 4, 17, 0, 0, 0, time.UTC))

var peerConfigs = []peerConfig{
	{rate: algorithms.Rate{N: 3, Per: time.Second}, burst: 1, origin: origin2026},
	{rate: algorithms.Rate{N: 3, Per: time.Second}, burst: 5, origin: origin2026, backwards: true},
	{rate: algorithms.Rate{N: 100, Per: time.Minute}, burst: 10, origin: origin2026},
	{rate: algorithms.Rate{N: 100, Per: time.Minute}, burst: 100, origin: 0, backwards: true},
	{rate: algorithms.Rate{N: 7, Per: 500 * time.Millisecond}, burst: 3, origin: origin2026, backwards: true},
	{rate: algorithms.Rate{N: 7, Per: 500 * time.Millisecond}, burst: 1000, origin: origin2026},
	{rate: algorithms.Rate{N: 1000, Per: time.Second}, burst: 50, origin: origin2026, backwards: true, bigCost: 1 << 40},
	{rate: algorithms.Rate{N: 1, Per: time.Hour}, burst: 2, origin: origin2026, backwards: true},
}

// peerRequest is one arrival of a differential test.
type peerRequest struct {
	at   algorithms.Time
	cost int64
}

// peerRequests draws n arrivals for c from seed: ties (a third of the gaps
// are 0), gaps around one emission interval, now and then one long enough
// to refill the bucket (rarely enough that a large burst is drained too),
// costs 0 to 3 (or up to burst + 1 for a small burst), and, where c says
// so, a clock that steps back by up to a burst's worth (3 requests in 100)
// and costs far over the burst.
func peerRequests(c peerConfig, seed uint64, n int) []peerRequest {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	emission := max(int64(c.rate.Per/time.Microsecond)/c.rate.N, 1) // µs
	reqs := make([]peerRequest, n)
	now := algorithms.Time(rng.Int64N(1_000_000))
	maxCost := max(int64(3), min(c.burst+1, 4))
	for i := range reqs {
		switch r := rng.IntN(100); {
		case rng.Int64N(4*c.burst) == 0: // long enough to refill, now and then
			now += algorithms.Time(1 + rng.Int64N(2*c.burst*emission+1))
		case r < 33: // a tie
		case r < 93:
			now += algorithms.Time(1 + rng.Int64N(2*emission))
		case r < 97:
			now += algorithms.Time(1 + rng.Int64N(10*emission))
		case c.backwards:
			now -= algorithms.Time(1 + rng.Int64N(c.burst*emission+1))
		default:
			now += algorithms.Time(rng.Int64N(1000))
		}
		cost := rng.Int64N(maxCost + 1)
		if c.bigCost > 0 && rng.IntN(50) == 0 {
			cost = c.burst + rng.Int64N(c.bigCost)
		}
		reqs[i] = peerRequest{at: now, cost: cost}
	}
	return reqs
}

// limiterField returns a pointer to one of l's unexported fields, for the
// test to read the real limiter's state or copy it. Reading and copying
// through reflect keeps the copy typed (time.Time holds a pointer).
func limiterField(l *rate.Limiter, name string) reflect.Value {
	f := reflect.ValueOf(l).Elem().FieldByName(name)
	return reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
}

// cloneLimiter copies l's limit, burst, tokens, last and lastEvent into a
// new Limiter, so that ReserveN, which reserves, can be asked what it would
// say without changing l. rate.Limiter has no copy of its own.
func cloneLimiter(l *rate.Limiter) *rate.Limiter {
	c := new(rate.Limiter)
	for _, name := range []string{"limit", "burst", "tokens", "last", "lastEvent"} {
		limiterField(c, name).Set(limiterField(l, name))
	}
	return c
}

// TestXTimeRateMatchesTheLibrary drives the real *rate.Limiter and the model
// with the same instants and costs and requires every field to agree: the
// decision, ⌊TokensAt(t)⌋ for Remaining, ReserveN(t, n).DelayFrom(t) on a
// copy for a refusal's RetryAfter, ReserveN(t, burst) for ResetAfter, and
// the state itself, bit for bit: tokens and last.
func TestXTimeRateMatchesTheLibrary(t *testing.T) {
	for ci, c := range peerConfigs {
		p := c.params()
		model, err := peers.NewXTimeRate(p)
		if err != nil {
			t.Fatal(err)
		}
		lim := rate.NewLimiter(rate.Limit(c.rate.PerSecond()), int(c.burst))
		var st algorithms.State
		var counts tally
		for i, r := range peerRequests(c, uint64(ci), peerDecisions) {
			at := time.UnixMicro(int64(c.origin + r.at))
			var want algorithms.Decision
			want.Limit = c.burst
			if r.cost == 0 {
				want.Allowed = true
			} else {
				want.Allowed = lim.AllowN(at, int(r.cost))
				if !want.Allowed {
					want.RetryAfter = cloneLimiter(lim).ReserveN(at, int(r.cost)).DelayFrom(at)
				}
			}
			want.Remaining = max(int64(math.Floor(lim.TokensAt(at))), 0)
			want.ResetAfter = cloneLimiter(lim).ReserveN(at, int(c.burst)).DelayFrom(at)

			var got algorithms.Decision
			st, got = model.Step(st, r.at, r.cost)
			if got != want {
				t.Fatalf("%v burst %d, request %d (t=%d cost=%d): model %+v, library %+v", c.rate, c.burst, i, r.at, r.cost, got, want)
			}
			tokens := math.Float64frombits(uint64(st.N) ^ math.Float64bits(float64(c.burst)))
			libTokens := limiterField(lim, "tokens").Float()
			last := limiterField(lim, "last").Interface().(time.Time)
			if math.Float64bits(tokens) != math.Float64bits(libTokens) ||
				(!last.IsZero() && last.UnixMicro() != int64(c.origin)+st.T) {
				t.Fatalf("%v burst %d, request %d (t=%d cost=%d): model state %v tokens at %d, library %v at %v",
					c.rate, c.burst, i, r.at, r.cost, tokens, st.T, libTokens, last)
			}
			counts.add(r.cost, got.Allowed)
		}
		counts.check(t, fmt.Sprintf("%v burst %d origin %d", c.rate, c.burst, c.origin))
	}
}

// TestXTimeRateQuirkRefillsTwiceAfterAStepBack is the quirk in the doc
// comment: at 1/s with burst 2, a request at 10 s, the clock stepped back to
// 9.1 s for the next, then 10.1 s. x/time/rate admits all three, because the
// second wrote last = 9.1 s and the third earns 1 s of tokens; the exact
// token bucket, which keeps last at 10 s, refuses the third.
func TestXTimeRateQuirkRefillsTwiceAfterAStepBack(t *testing.T) {
	p := algorithms.Params{Rate: algorithms.Rate{N: 1, Per: time.Second}, Burst: 2, Origin: origin2026}
	model, _ := peers.NewXTimeRate(p)
	exact, _ := algorithms.NewTokenBucket(p.Rate, p.Burst)
	lim := rate.NewLimiter(1, 2)
	var ms, es algorithms.State
	for i, at := range []algorithms.Time{10_000_000, 9_100_000, 10_100_000} {
		var md, ed algorithms.Decision
		ms, md = model.Step(ms, at, 1)
		es, ed = exact.Step(es, at, 1)
		lib := lim.AllowN(time.UnixMicro(int64(p.Origin+at)), 1)
		if md.Allowed != lib || !md.Allowed {
			t.Fatalf("request %d at %dµs: model %v, library %v, want both admitted", i, at, md.Allowed, lib)
		}
		if wantExact := i < 2; ed.Allowed != wantExact {
			t.Fatalf("request %d at %dµs: token-bucket admitted=%v, want %v", i, at, ed.Allowed, wantExact)
		}
	}
}

// TestXTimeRateQuirkFigures measures the quirk over many decisions: on a
// steady clock x/time/rate and the exact token bucket admit the same
// requests; on a clock that steps back they do not.
func TestXTimeRateQuirkFigures(t *testing.T) {
	for _, backwards := range []bool{false, true} {
		c := peerConfig{rate: algorithms.Rate{N: 100, Per: time.Minute}, burst: 10, origin: origin2026, backwards: backwards}
		model, _ := peers.NewXTimeRate(c.params())
		exact, _ := algorithms.NewTokenBucket(c.rate, c.burst)
		var ms, es algorithms.State
		var allowed, remaining, modelAdmits, exactAdmits int
		for _, r := range peerRequests(c, 42, peerDecisions) {
			var md, ed algorithms.Decision
			ms, md = model.Step(ms, r.at, r.cost)
			es, ed = exact.Step(es, r.at, r.cost)
			if md.Allowed != ed.Allowed {
				allowed++
			}
			if md.Remaining != ed.Remaining {
				remaining++
			}
			if md.Allowed && r.cost > 0 {
				modelAdmits++
			}
			if ed.Allowed && r.cost > 0 {
				exactAdmits++
			}
		}
		t.Logf("backwards=%v: over %d decisions x-time-rate and token-bucket disagreed on %d admissions and %d remainings; admitted %d vs %d",
			backwards, peerDecisions, allowed, remaining, modelAdmits, exactAdmits)
		if !backwards && allowed != 0 {
			t.Errorf("steady clock: %d admissions differ, want 0", allowed)
		}
		if backwards && modelAdmits <= exactAdmits {
			t.Errorf("stepping clock: x-time-rate admitted %d, token-bucket %d, want more", modelAdmits, exactAdmits)
		}
	}
}

func TestXTimeRateEdges(t *testing.T) {
	tenPerSecond := algorithms.Rate{N: 10, Per: time.Second}
	x, err := peers.NewXTimeRate(algorithms.Params{Rate: tenPerSecond, Burst: 3, Origin: origin2026})
	if err != nil {
		t.Fatal(err)
	}
	full := algorithms.State{} // a key never seen: a full bucket
	tests := []struct {
		name string
		prev algorithms.State
		at   algorithms.Time
		cost int64
		want algorithms.Decision
		same bool // the state must come back unchanged
	}{
		{"zero state", full, 5, 1, algorithms.Decision{Allowed: true, Limit: 3, Remaining: 2, ResetAfter: 100 * time.Millisecond}, false},
		{"zero state peek", full, -1 << 62, 0, algorithms.Decision{Allowed: true, Limit: 3, Remaining: 3}, true},
		{"negative cost peeks", full, 0, -4, algorithms.Decision{Allowed: true, Limit: 3, Remaining: 3}, true},
		{"cost over burst", full, 0, 4, algorithms.Decision{Limit: 3, Remaining: 3, RetryAfter: algorithms.Never}, true},
		{"huge cost", full, 0, math.MaxInt64, algorithms.Decision{Limit: 3, Remaining: 3, RetryAfter: algorithms.Never}, true},
		{"whole burst", full, 0, 3, algorithms.Decision{Allowed: true, Limit: 3, Remaining: 0, ResetAfter: 300 * time.Millisecond}, false},
		{"extreme instant", full, math.MaxInt64, 1, algorithms.Decision{Allowed: true, Limit: 3, Remaining: 2, ResetAfter: 100 * time.Millisecond}, false},
	}
	for _, tt := range tests {
		next, d := x.Step(tt.prev, tt.at, tt.cost)
		if d != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, d, tt.want)
		}
		if tt.same && !reflect.DeepEqual(next, tt.prev) {
			t.Errorf("%s: state moved to %+v", tt.name, next)
		}
	}

	// Empty at 1 s, then the clock steps back 50 ms: nothing earned, and a
	// request is refused for the 100 ms a token takes, measured from the
	// earlier instant, as the library measures it. A peek at the earlier
	// instant leaves last where it was.
	st, _ := x.Step(full, 1_000_000, 3)
	peeked, d := x.Step(st, 950_000, 0)
	if d.Remaining != 0 || !reflect.DeepEqual(peeked, st) {
		t.Errorf("peek after a step back: %+v, state %+v, want remaining 0 and state %+v", d, peeked, st)
	}
	if _, d := x.Step(st, 950_000, 1); d.Allowed || d.RetryAfter != 100*time.Millisecond || d.ResetAfter != 300*time.Millisecond {
		t.Errorf("after a step back: %+v, want refused, retry 100ms, reset 300ms", d)
	}
	if _, d := x.Step(st, 1_100_000, 2); d.Allowed || d.RetryAfter != 100*time.Millisecond {
		t.Errorf("2 at 1.1 s: %+v, want refused with 100ms to wait", d)
	}

	wantParamErrors(t, "NewXTimeRate", peers.NewXTimeRate, []paramCase{
		{algorithms.Params{Rate: algorithms.Rate{N: 0, Per: time.Second}, Burst: 1}, "rate"},
		{algorithms.Params{Rate: algorithms.Rate{N: 1, Per: 0}, Burst: 1}, "rate"},
		{algorithms.Params{Rate: tenPerSecond, Burst: 0}, "burst"},
		{algorithms.Params{Rate: algorithms.Rate{N: 1, Per: time.Hour}, Burst: 1 << 40}, "burst"},
	})
	if got := x.Params(); got != (algorithms.Params{Rate: tenPerSecond, Burst: 3, Origin: origin2026}) {
		t.Errorf("Params() = %+v", got)
	}

	var zero peers.XTimeRate
	if _, d := zero.Step(full, 0, 1); d.Allowed || d.RetryAfter != algorithms.Never {
		t.Errorf("zero XTimeRate admitted: %+v", d)
	}
	if _, d := zero.Step(full, 0, 0); !d.Allowed {
		t.Errorf("zero XTimeRate refused a peek: %+v", d)
	}
}
