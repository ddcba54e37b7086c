package algorithms

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// Fixed instants for the step tables, as in x/time/rate's tests.
const (
	t0 = Time(0)
	ms = Time(1000)
	s1 = Time(1_000_000)
)

type step struct {
	at          Time
	cost        int64
	allowed     bool
	remaining   int64
	retryAfter  time.Duration
	resetAfter  time.Duration
	delay       time.Duration
	checkTiming bool // compare retryAfter, resetAfter and delay too
}

// run replays steps through alg from the zero State and reports the first
// step whose decision differs from the table.
func run(t *testing.T, alg Algorithm, steps []step) {
	t.Helper()
	var st State
	for i, s := range steps {
		var d Decision
		st, d = alg.Step(st, s.at, s.cost)
		if d.Allowed != s.allowed || d.Remaining != s.remaining {
			t.Fatalf("step %d (t=%dµs cost=%d): allowed=%v remaining=%d, want allowed=%v remaining=%d (state %+v)",
				i, s.at, s.cost, d.Allowed, d.Remaining, s.allowed, s.remaining, st)
		}
		if s.checkTiming && (d.RetryAfter != s.retryAfter || d.ResetAfter != s.resetAfter || d.Delay != s.delay) {
			t.Fatalf("step %d (t=%dµs cost=%d): retry=%v reset=%v delay=%v, want retry=%v reset=%v delay=%v",
				i, s.at, s.cost, d.RetryAfter, d.ResetAfter, d.Delay, s.retryAfter, s.resetAfter, s.delay)
		}
	}
}

func must[A Algorithm](a A, err error) Algorithm {
	if err != nil {
		panic(err)
	}
	return a
}

var tenPerSecond = Rate{N: 10, Per: time.Second}

func TestTokenBucketSteps(t *testing.T) {
	tb := must(NewTokenBucket(tenPerSecond, 3))
	run(t, tb, []step{
		{at: t0, cost: 1, allowed: true, remaining: 2, resetAfter: 100 * time.Millisecond, checkTiming: true},
		{at: t0, cost: 1, allowed: true, remaining: 1, resetAfter: 200 * time.Millisecond, checkTiming: true},
		{at: t0, cost: 1, allowed: true, remaining: 0, resetAfter: 300 * time.Millisecond, checkTiming: true},
		{at: t0, cost: 1, allowed: false, remaining: 0, retryAfter: 100 * time.Millisecond, resetAfter: 300 * time.Millisecond, checkTiming: true},
		{at: 50 * ms, cost: 1, allowed: false, remaining: 0, retryAfter: 50 * time.Millisecond, resetAfter: 250 * time.Millisecond, checkTiming: true},
		{at: 100 * ms, cost: 1, allowed: true, remaining: 0, resetAfter: 300 * time.Millisecond, checkTiming: true},
		{at: 100 * ms, cost: 4, allowed: false, remaining: 0, retryAfter: Never, resetAfter: 300 * time.Millisecond, checkTiming: true},
		{at: 10 * s1, cost: 0, allowed: true, remaining: 3, checkTiming: true},
		{at: 10 * s1, cost: 3, allowed: true, remaining: 0, resetAfter: 300 * time.Millisecond, checkTiming: true},
		// The clock goes back a second: nothing refills.
		{at: 9 * s1, cost: 1, allowed: false, remaining: 0, retryAfter: time.Second + 100*time.Millisecond, resetAfter: time.Second + 300*time.Millisecond, checkTiming: true},
		{at: 10*s1 + 100*ms, cost: 1, allowed: true, remaining: 0},
	})
}

func TestTokenBucketThirdOfASecondIsExact(t *testing.T) {
	// 3/s is an emission interval of 333333.3 µs. Under demand every
	// millisecond for 1000 s the bucket must admit its burst plus every
	// whole token earned by the last request, no more and no fewer: a float
	// or a rounded interval would drift by a few.
	tb := must(NewTokenBucket(Rate{N: 3, Per: time.Second}, 3))
	var st State
	allowed := 0
	for at := Time(0); at < 1000*s1; at += 1000 { // every ms for 1000 s
		var d Decision
		st, d = tb.Step(st, at, 1)
		if d.Allowed {
			allowed++
		}
	}
	if want := 3 + 2999; allowed != want { // 3 × 999.999 s = 2999.997 tokens
		t.Fatalf("admitted %d in 1000 s at 3/s, want %d", allowed, want)
	}
}

func TestGCRASteps(t *testing.T) {
	g := must(NewGCRA(tenPerSecond, 2))
	run(t, g, []step{
		{at: t0, cost: 1, allowed: true, remaining: 1, resetAfter: 100 * time.Millisecond, checkTiming: true},
		{at: t0, cost: 1, allowed: true, remaining: 0, resetAfter: 200 * time.Millisecond, checkTiming: true},
		{at: 10 * ms, cost: 1, allowed: false, remaining: 0, retryAfter: 90 * time.Millisecond, resetAfter: 190 * time.Millisecond, checkTiming: true},
		{at: 100 * ms, cost: 1, allowed: true, remaining: 0, resetAfter: 200 * time.Millisecond, checkTiming: true},
		// Days later on a Unix-like clock: no overflow, a full bucket.
		{at: 86400 * 365 * s1, cost: 2, allowed: true, remaining: 0},
		// Back to the epoch: far behind the TAT, nothing passes, no overflow.
		{at: t0, cost: 1, allowed: false, remaining: 0},
	})
}

func TestLeakyBucketDelays(t *testing.T) {
	lb := must(NewLeakyBucket(tenPerSecond, 3))
	run(t, lb, []step{
		{at: t0, cost: 1, allowed: true, remaining: 2, resetAfter: 100 * time.Millisecond, checkTiming: true},
		{at: t0, cost: 1, allowed: true, remaining: 1, resetAfter: 200 * time.Millisecond, delay: 100 * time.Millisecond, checkTiming: true},
		{at: t0, cost: 1, allowed: true, remaining: 0, resetAfter: 300 * time.Millisecond, delay: 200 * time.Millisecond, checkTiming: true},
		{at: t0, cost: 1, allowed: false, remaining: 0, retryAfter: 100 * time.Millisecond, resetAfter: 300 * time.Millisecond, checkTiming: true},
		{at: 250 * ms, cost: 1, allowed: true, remaining: 1, resetAfter: 150 * time.Millisecond, delay: 50 * time.Millisecond, checkTiming: true},
	})
}

func TestFixedWindowSteps(t *testing.T) {
	fw := must(NewFixedWindow(Rate{N: 3, Per: time.Second}, time.Second))
	run(t, fw, []step{
		{at: 900 * ms, cost: 1, allowed: true, remaining: 2, resetAfter: 100 * time.Millisecond, checkTiming: true},
		{at: 900 * ms, cost: 2, allowed: true, remaining: 0, resetAfter: 100 * time.Millisecond, checkTiming: true},
		{at: 950 * ms, cost: 1, allowed: false, remaining: 0, retryAfter: 50 * time.Millisecond, resetAfter: 50 * time.Millisecond, checkTiming: true},
		// The boundary: three more a moment later. Six in 100 ms.
		{at: s1, cost: 3, allowed: true, remaining: 0, resetAfter: time.Second, checkTiming: true},
		// A clock that slips back into the previous window keeps the
		// current count: it does not reopen the old window.
		{at: 990 * ms, cost: 1, allowed: false, remaining: 0, retryAfter: 1010 * time.Millisecond, resetAfter: 1010 * time.Millisecond, checkTiming: true},
		{at: 2 * s1, cost: 4, allowed: false, remaining: 3, retryAfter: Never, checkTiming: true},
	})
}

func TestSlidingLogSteps(t *testing.T) {
	sl := must(NewSlidingLog(Rate{N: 3, Per: time.Second}, time.Second))
	run(t, sl, []step{
		{at: 900 * ms, cost: 3, allowed: true, remaining: 0, resetAfter: time.Second, checkTiming: true},
		// Unlike the fixed window, the boundary changes nothing.
		{at: s1, cost: 1, allowed: false, remaining: 0, retryAfter: 900 * time.Millisecond, resetAfter: 900 * time.Millisecond, checkTiming: true},
		// The window is (t − 1 s, t]: the 0.9 s entries leave at 1.9 s.
		{at: 1900*ms - 1, cost: 1, allowed: false, remaining: 0, retryAfter: time.Microsecond, resetAfter: time.Microsecond, checkTiming: true},
		{at: 1900 * ms, cost: 2, allowed: true, remaining: 1, resetAfter: time.Second, checkTiming: true},
		{at: 2 * s1, cost: 2, allowed: false, remaining: 1, retryAfter: 900 * time.Millisecond, resetAfter: 900 * time.Millisecond, checkTiming: true},
	})
}

func TestSlidingWindowSteps(t *testing.T) {
	sw := must(NewSlidingWindow(Rate{N: 10, Per: time.Second}, time.Second))
	run(t, sw, []step{
		{at: 500 * ms, cost: 10, allowed: true, remaining: 0, resetAfter: 1500 * time.Millisecond, checkTiming: true},
		// At 1.2 s the previous window weighs 80%: estimate 8, room 2.
		{at: 1200 * ms, cost: 0, allowed: true, remaining: 2},
		{at: 1200 * ms, cost: 3, allowed: false, remaining: 2, retryAfter: 100 * time.Millisecond, resetAfter: 800 * time.Millisecond, checkTiming: true},
		{at: 1300 * ms, cost: 3, allowed: true, remaining: 0},
		// Estimate at 1.9 s: 10 × 10% + 3 = 4. Cost 8 must wait for the next
		// window, until this window's 3 weigh 2 or less: a third of it in.
		{at: 1900 * ms, cost: 8, allowed: false, remaining: 6, retryAfter: 100*time.Millisecond + 333334*time.Microsecond, resetAfter: 1100 * time.Millisecond, checkTiming: true},
		{at: 5 * s1, cost: 10, allowed: true, remaining: 0},
	})
}

func TestBadParamsNameTheParameter(t *testing.T) {
	second := Rate{N: 1, Per: time.Second}
	tests := []struct {
		name   string
		params Params
		want   string
	}{
		{"token-bucket", Params{Rate: Rate{N: 0, Per: time.Second}, Burst: 1}, "rate:"},
		{"token-bucket", Params{Rate: Rate{N: -5, Per: time.Second}, Burst: 1}, "rate:"},
		{"gcra", Params{Rate: Rate{N: 1, Per: 0}, Burst: 1}, "rate:"},
		{"gcra", Params{Rate: second, Burst: 0}, "burst:"},
		{"leaky-bucket", Params{Rate: second, Burst: -1}, "burst:"},
		{"token-bucket", Params{Rate: Rate{N: 1, Per: time.Hour}, Burst: 1 << 40}, "burst:"},
		{"fixed-window", Params{Rate: second, Window: 0}, "window:"},
		{"sliding-log", Params{Rate: second, Window: -time.Second}, "window:"},
		{"sliding-window", Params{Rate: second, Window: 100 * time.Millisecond}, "window:"}, // 0.1 per window
		{"sliding-window", Params{Rate: Rate{N: 0, Per: time.Second}, Window: time.Second}, "rate:"},
		{"token-buckets", Params{Rate: second, Burst: 1}, "algorithm:"},
	}
	for _, tt := range tests {
		_, err := New(tt.name, tt.params)
		var pe *ParamError
		if !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("New(%q, %+v) = %v, want a ParamError starting %q", tt.name, tt.params, err, tt.want)
		}
	}
}

func TestNewBuildsEveryCatalogEntry(t *testing.T) {
	p := Params{Rate: tenPerSecond, Burst: 5, Window: time.Second}
	for _, name := range Names() {
		a, err := New(name, p)
		if err != nil {
			t.Fatalf("New(%q): %v", name, err)
		}
		if a.Name() != name {
			t.Errorf("New(%q).Name() = %q", name, a.Name())
		}
		info, _ := Lookup(name)
		if slices.Contains(info.Params, "rate") && a.Params().Rate != p.Rate {
			t.Errorf("%s: Params().Rate = %v, want %v", name, a.Params().Rate, p.Rate)
		}
	}
}

func TestParseRate(t *testing.T) {
	tests := []struct {
		in   string
		want Rate
		err  bool
	}{
		{"10/s", Rate{10, time.Second}, false},
		{"100/m", Rate{100, time.Minute}, false},
		{"5000/h", Rate{5000, time.Hour}, false},
		{"3/500ms", Rate{3, 500 * time.Millisecond}, false},
		{" 7 ", Rate{7, time.Second}, false},
		{"fast", Rate{}, true},
		{"10/fortnight", Rate{}, true},
		{"0/s", Rate{}, true},
		{"-1/s", Rate{}, true},
		{"1/-1s", Rate{}, true},
		{"99999999999999999999/s", Rate{}, true},
	}
	for _, tt := range tests {
		got, err := ParseRate(tt.in)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.err)
		}
	}
	if _, err := ParseRate("99999999999999999999/s"); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Errorf("a count past int64: %v, want it called too large", err)
	}
	if s := (Rate{N: 7, Per: time.Minute}).String(); s != "7/m" {
		t.Errorf("String() = %q, want 7/m", s)
	}
}

func TestStepNeverModifiesPrev(t *testing.T) {
	sl := must(NewSlidingLog(Rate{N: 5, Per: time.Second}, time.Second))
	prev := State{Log: make([]int64, 2, 10)}
	prev.Log[0], prev.Log[1] = 1, 2
	backing := prev.Log[:cap(prev.Log)]
	next, _ := sl.Step(prev, 3, 2)
	next, _ = sl.Step(next, 4, 1)
	for i := 2; i < cap(backing); i++ {
		if backing[i] != 0 {
			t.Fatalf("Step wrote into prev's backing array at %d: %v", i, backing)
		}
	}
	if len(prev.Log) != 2 || prev.Log[0] != 1 || prev.Log[1] != 2 || len(next.Log) != 5 {
		t.Fatalf("prev = %v, next = %v", prev.Log, next.Log)
	}
}

func TestGCRARemainingNeverNegativeAfterASmallStepBack(t *testing.T) {
	// A fast rate (n > per/2) and a step back of a microsecond put the
	// backlog up to 2n units above capacity, more than one token's worth.
	g := must(NewGCRA(Rate{N: 1_000_000, Per: time.Second}, 1))
	st, _ := g.Step(State{}, 10, 1)
	_, d := g.Step(st, 9, 1)
	if d.Allowed || d.Remaining != 0 {
		t.Fatalf("after a 1µs step back: %+v, want rejected with remaining 0", d)
	}
}

// Register adds a kind after those in the catalog, under its own name, and
// refuses what would make a name mean two things or build nothing.
func TestRegister(t *testing.T) {
	defer func(saved []Info) { registered = saved }(registered)
	before := Names()
	build := func(p Params) (Algorithm, error) { return NewTokenBucket(p.Rate, p.Burst) }
	Register(Info{Name: "test-kind", Params: []string{"rate", "burst"}, Build: build,
		Peer: &Provenance{Library: "test", Family: "token-bucket"}})
	if got, want := Names(), append(slices.Clone(before), "test-kind"); !slices.Equal(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
	if got := PeerNames(); got[len(got)-1] != "test-kind" {
		t.Errorf("PeerNames() = %v, want test-kind last", got)
	}
	if _, err := New("test-kind", Params{Rate: tenPerSecond, Burst: 5}); err != nil {
		t.Errorf("New(test-kind): %v", err)
	}
	for _, tt := range []struct {
		info Info
		want string
	}{
		{Info{Name: "token-bucket", Build: build}, "already in the catalog"},
		{Info{Name: "test-kind", Build: build}, "already in the catalog"},
		{Info{Name: "", Build: build}, "needs a Name and a Build"},
		{Info{Name: "no-build"}, "needs a Name and a Build"},
	} {
		func() {
			defer func() {
				msg, _ := recover().(string)
				if !strings.Contains(msg, tt.want) {
					t.Errorf("Register(%q) panicked with %q, want %q", tt.info.Name, msg, tt.want)
				}
			}()
			Register(tt.info)
		}()
	}
	if _, ok := Lookup("no-build"); ok {
		t.Error("a refused Info is in the catalog")
	}
}
