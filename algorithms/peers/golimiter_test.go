package peers_test

import (
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sethvargo/go-limiter/memorystore"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/algorithms/peers"
)

var goLimiterConfigs = []winConfig{
	{rate: algorithms.Rate{N: 3, Per: time.Second}, window: time.Second, maxCost: 4},
	{rate: algorithms.Rate{N: 100, Per: time.Minute}, window: time.Minute, maxCost: 60},
	{rate: algorithms.Rate{N: 7, Per: 500 * time.Millisecond}, window: 500 * time.Millisecond, maxCost: 8},
	{rate: algorithms.Rate{N: 1, Per: time.Second}, window: 1500 * time.Millisecond, maxCost: 2},
	// Tokens² > Interval in ns: a tick earns 2000 of 5000 tokens, and
	// 333.33… of 3000 (a float product truncated: 2 ticks earn 666, 3 earn
	// 999 or 1000 as the rounding falls).
	{rate: algorithms.Rate{N: 5000, Per: 10 * time.Millisecond}, window: 10 * time.Millisecond, maxCost: 800},
	{rate: algorithms.Rate{N: 3000, Per: time.Millisecond}, window: time.Millisecond, maxCost: 400},
	// An interval that is not a whole number of µs: go-limiter keeps ns.
	{rate: algorithms.Rate{N: 4, Per: time.Second}, window: 1234567891 * time.Nanosecond, maxCost: 5},
}

// TestGoLimiterMatchesLibrary drives the real go-limiter memorystore and
// the model with the same instants, on three keys: a request of cost c is c
// calls of Take, and the model's Decision must be the last one's (limit,
// remaining, reset as reset − now, ok). After every step the store's Get,
// which reads the bucket's availableTokens as they are, must equal the
// model's state; a cost of 0 is a peek, which must leave both alone.
//
// The store reads the wall clock through its internal/fasttime, and on
// every platform but Windows that is time.now reached by go:linkname, the
// runtime's real clock, which a synctest bubble does not fake (the bubble
// fakes time.Now alone). So the test builds itself again against a copy of
// the published module whose fasttime.go is the library's own
// fasttime_windows.go (Now is uint64(time.Now().UnixNano()), the same
// nanoseconds, read through time.Now) without its build constraint, by a
// replace directive in a go.mod of its own (-modfile; the repository's is
// not touched), and runs the comparison in that build, in a synctest
// bubble; the store's sweeper goroutine is stopped with Close before the
// bubble ends. Every other file of the library is compiled as published.
func TestGoLimiterMatchesLibrary(t *testing.T) {
	if os.Getenv(goLimiterRebuilt) == "" {
		goLimiterRebuild(t)
		return
	}
	for _, c := range goLimiterConfigs {
		t.Run(c.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { goLimiterDifferential(t, c) })
		})
	}
}

// goLimiterRebuilt is set in the environment of the build whose go-limiter
// reads time.Now.
const goLimiterRebuilt = "RATELIM_TEST_GOLIMITER_REBUILT"

// goLimiterRebuild runs TestGoLimiterMatchesLibrary again in a build whose
// go-limiter fasttime reads time.Now, and reports its output.
func goLimiterRebuild(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to build the test again with:", err)
	}
	goCmd := func(args ...string) *exec.Cmd {
		cmd := exec.Command("go", args...)
		cmd.Env = append(os.Environ(), goLimiterRebuilt+"=1")
		return cmd
	}
	out, err := goCmd("list", "-m", "-f", "{{.Dir}}\n{{.GoMod}}", "github.com/sethvargo/go-limiter", "github.com/ratelim/ratelim").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	lines := strings.Fields(string(out))
	if len(lines) != 4 {
		t.Fatalf("go list said %q", out)
	}
	published, goMod := lines[0], lines[3]

	dir := t.TempDir()
	module := filepath.Join(dir, "go-limiter")
	err = filepath.WalkDir(published, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(published, path)
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if rel == filepath.Join("internal", "fasttime", "fasttime_windows.go") {
			src, ok := strings.CutPrefix(string(b), "// +build windows\n")
			if !ok || !strings.Contains(src, "return uint64(time.Now().UnixNano())") {
				return fmt.Errorf("go-limiter's %s is not the one this test knows:\n%s", rel, b)
			}
			b, rel = []byte(src), filepath.Join("internal", "fasttime", "fasttime.go")
		} else if rel == filepath.Join("internal", "fasttime", "fasttime.go") {
			return nil // replaced by the Windows one above
		}
		if err := os.MkdirAll(filepath.Join(module, filepath.Dir(rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(module, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(goMod)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(strings.TrimSuffix(goMod, ".mod") + ".sum")
	if err != nil {
		t.Fatal(err)
	}
	mod = fmt.Appendf(mod, "\nreplace github.com/sethvargo/go-limiter => %s\n", module)
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), mod, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"test", "-modfile=" + filepath.Join(dir, "go.mod"), "-run=^TestGoLimiterMatchesLibrary$", "-count=1", "-v"}
	if peerWinRace {
		args = append(args, "-race")
	}
	run, err := goCmd(append(args, ".")...).CombinedOutput()
	t.Logf("go %s\n%s", strings.Join(args, " "), run)
	if err != nil {
		t.Fatalf("the rebuilt test failed: %v", err)
	}
}

func goLimiterDifferential(t *testing.T, c winConfig) {
	ctx := context.Background()
	model, err := peers.NewGoLimiter(algorithms.Params{Rate: c.rate, Window: c.window, Origin: winBubbleOrigin})
	if err != nil {
		t.Fatal(err)
	}
	limit := model.Limit()
	lib, err := memorystore.New(&memorystore.Config{Tokens: uint64(limit), Interval: c.window})
	if err != nil {
		t.Fatal(err)
	}
	defer lib.Close(ctx)
	rng := rand.New(rand.NewPCG(3, uint64(c.window)))
	keys := []string{"a", "b", "c"}
	states := make([]algorithms.State, len(keys))
	now := algorithms.Time(0)
	var counts tally
	for i := range peerWinDecisions {
		gap, cost := winArrivals(rng, c, limit)
		time.Sleep(time.Duration(gap) * time.Microsecond)
		now += algorithms.Time(gap)
		k := winKey(rng)
		prev := states[k]
		next, d := model.Step(prev, now, cost)
		states[k] = next
		nowNs := uint64(time.Now().UnixNano())
		if want := uint64(winBubbleOrigin+now) * 1000; nowNs != want {
			t.Fatalf("the bubble's clock reads %d ns, want %d", nowNs, want)
		}

		if cost > 0 {
			var tokens, remaining, reset uint64
			var ok bool
			for range cost {
				if tokens, remaining, reset, ok, err = lib.Take(ctx, keys[k]); err != nil {
					t.Fatal(err)
				}
			}
			if int64(tokens) != d.Limit || int64(remaining) != d.Remaining || ok != d.Allowed ||
				time.Duration(reset-nowNs) != d.ResetAfter {
				t.Fatalf("decision %d (key %s, t=%dµs, cost %d, state %+v): go-limiter tokens=%d remaining=%d reset=now+%v ok=%v, model %+v",
					i, keys[k], now, cost, prev, tokens, remaining, time.Duration(reset-nowNs), ok, d)
			}
			switch {
			case d.Allowed && d.RetryAfter != 0,
				!d.Allowed && cost > limit && d.RetryAfter != algorithms.Never,
				!d.Allowed && cost <= limit && d.RetryAfter != d.ResetAfter:
				t.Fatalf("decision %d: retry-after %v with %+v", i, d.RetryAfter, d)
			}
		} else if next.T != prev.T || next.N != prev.N || next.Prev != prev.Prev || !d.Allowed {
			t.Fatalf("decision %d: a peek moved the state from %+v to %+v, or refused: %+v", i, prev, next, d)
		}
		// The bucket as stored: Get reports (0, 0) for a key never seen.
		tokens, remaining, err := lib.Get(ctx, keys[k])
		if err != nil {
			t.Fatal(err)
		}
		wantTokens := uint64(limit)
		if next.Prev == 0 {
			wantTokens = 0
		}
		if tokens != wantTokens || int64(remaining) != next.N {
			t.Fatalf("decision %d (key %s, t=%dµs, cost %d): go-limiter holds %d of %d tokens, model state %+v",
				i, keys[k], now, cost, remaining, tokens, next)
		}
		counts.add(cost, d.Allowed)
	}
	counts.check(t, fmt.Sprintf("%d decisions", peerWinDecisions))
}

// go-limiter's tick beside the exact token bucket and sliding log, 100 per
// second (Tokens 100 per Interval 1s; a bucket of 100 refilling at 100/s).
func TestGoLimiterTickDoublesTheBurst(t *testing.T) {
	const ms = algorithms.Time(1000)
	rate := algorithms.Rate{N: 100, Per: time.Second}
	gl := winMust(peers.NewGoLimiter(algorithms.Params{Rate: rate, Window: time.Second}))
	tb := winMust(algorithms.NewTokenBucket(rate, 100))
	log := winMust(algorithms.NewSlidingLog(rate, time.Second))

	// The key's first hit at 0.3s starts its ticks: 1.3s, 2.3s, ... Then
	// 150 requests 1µs before the tick and 150 at it.
	reqs := []algorithms.Time{300 * ms}
	for range 150 {
		reqs = append(reqs, 1300*ms-1)
	}
	for range 150 {
		reqs = append(reqs, 1300*ms)
	}
	admittedAtTick := func(alg algorithms.Algorithm) (n int) {
		var st algorithms.State
		for _, at := range reqs {
			var d algorithms.Decision
			if st, d = alg.Step(st, at, 1); d.Allowed && at >= 1300*ms-1 {
				n++
			}
		}
		return n
	}
	if got := admittedAtTick(gl); got != 199 {
		t.Errorf("go-limiter admitted %d within 1µs of its tick, want 99 + 100", got)
	}
	for _, alg := range []algorithms.Algorithm{tb, log} {
		if got := admittedAtTick(alg); got != 100 {
			t.Errorf("%s admitted %d within the same 1µs, want 100", alg.Name(), got)
		}
	}

	// Over the differential test's traffic, how often it and the exact
	// fixed window and token bucket decide differently, for the record.
	c := goLimiterConfigs[0]
	gl3 := winMust(peers.NewGoLimiter(algorithms.Params{Rate: c.rate, Window: c.window}))
	fixed3 := winMust(algorithms.NewFixedWindow(c.rate, c.window))
	tb3 := winMust(algorithms.NewTokenBucket(c.rate, 3))
	g, f, b, n := winCountAdmitted(c, peerWinDecisions, gl3, fixed3, tb3)
	_, _, _, nb := winCountAdmitted(c, peerWinDecisions, gl3, tb3, fixed3)
	t.Logf("%d decisions (%d of positive cost) at %v: go-limiter admitted %d, fixed-window %d, token-bucket (burst 3) %d; go-limiter disagreed with fixed-window %d times, with token-bucket %d",
		peerWinDecisions, n.positive, c, g, f, b, n.disagree, nb.disagree)
	if n.disagree == 0 || nb.disagree == 0 {
		t.Fatal("go-limiter never disagreed with the exact limiters")
	}
}

// TestGoLimiterPartialRefill: 5000 per 10ms has a fillRate of 10^7 / 5000 =
// 2000 "tokens per tick", not 5000, and a tick sets the bucket rather than
// adding to it.
func TestGoLimiterPartialRefill(t *testing.T) {
	const ms = algorithms.Time(1000)
	g := winMust(peers.NewGoLimiter(algorithms.Params{Rate: algorithms.Rate{N: 5000, Per: 10 * time.Millisecond}, Window: 10 * time.Millisecond}))
	var st algorithms.State
	var d algorithms.Decision
	for i, s := range []struct {
		at        algorithms.Time
		cost      int64
		allowed   bool
		remaining int64
	}{
		{0, 5000, true, 0},                // the new bucket is full
		{10 * ms, 0, true, 2000},          // one tick later: 2000, not 5000
		{10 * ms, 2001, false, 0},         // 2000 spent, the 2001st refused
		{30 * ms, 0, true, 4000},          // two ticks: 4000
		{60 * ms, 1, true, 4999},          // five: capped at 5000
		{70 * ms, 0, true, 2000},          // the next tick sets it down to 2000
		{9*1000*ms + 5*ms, 2, true, 4998}, // a long idle: full again
	} {
		st, d = g.Step(st, s.at, s.cost)
		if d.Allowed != s.allowed || d.Remaining != s.remaining {
			t.Fatalf("step %d (t=%dµs cost %d): %+v, want allowed=%v remaining=%d", i, s.at, s.cost, d, s.allowed, s.remaining)
		}
	}
}

func TestGoLimiterSteps(t *testing.T) {
	const ms = algorithms.Time(1000)
	g := winMust(peers.NewGoLimiter(algorithms.Params{Rate: algorithms.Rate{N: 3, Per: time.Second}, Window: time.Second, Origin: winBubbleOrigin}))
	type step struct {
		at        algorithms.Time
		cost      int64
		allowed   bool
		remaining int64
		retry     time.Duration
		reset     time.Duration
	}
	var st algorithms.State
	for i, s := range []step{
		// A peek on a key never seen: a bucket would start now.
		{at: 300 * ms, cost: 0, allowed: true, remaining: 3, reset: time.Second},
		// The first hit starts the ticks at 1.3s, 2.3s, ...
		{at: 300 * ms, cost: 1, allowed: true, remaining: 2, reset: time.Second},
		// Cost 3 with 2 left: two Takes pass, the third fails; all spent.
		{at: 400 * ms, cost: 3, allowed: false, remaining: 0, retry: 900 * time.Millisecond, reset: 900 * time.Millisecond},
		{at: 400 * ms, cost: 0, allowed: true, remaining: 0, reset: 900 * time.Millisecond},
		// A cost above Tokens never passes.
		{at: 500 * ms, cost: 4, allowed: false, remaining: 0, retry: algorithms.Never, reset: 800 * time.Millisecond},
		// The tick: the whole bucket, even 1µs after the last refusal.
		{at: 1300*ms - 1, cost: 1, allowed: false, remaining: 0, retry: time.Microsecond, reset: time.Microsecond},
		{at: 1300 * ms, cost: 3, allowed: true, remaining: 0, reset: time.Second},
		// The clock steps back, but not before the first hit: no tick.
		{at: 800 * ms, cost: 1, allowed: false, remaining: 0, retry: 500 * time.Millisecond, reset: 500 * time.Millisecond},
		{at: 2300 * ms, cost: 2, allowed: true, remaining: 1, reset: time.Second},
	} {
		prev := st
		var d algorithms.Decision
		st, d = g.Step(st, s.at, s.cost)
		if d.Allowed != s.allowed || d.Remaining != s.remaining || d.RetryAfter != s.retry || d.ResetAfter != s.reset || d.Limit != 3 {
			t.Fatalf("step %d (t=%dµs cost %d): %+v, want allowed=%v remaining=%d retry=%v reset=%v", i, s.at, s.cost, d, s.allowed, s.remaining, s.retry, s.reset)
		}
		if s.cost == 0 && (st.T != prev.T || st.N != prev.N || st.Prev != prev.Prev) {
			t.Fatalf("step %d: a peek moved the state from %+v to %+v", i, prev, st)
		}
	}
	if st.T != int64(300*ms) || st.N != 1 || st.Prev != 3 {
		t.Fatalf("final state %+v, want started at 0.3s, 1 token left, tick 2 (+1)", st)
	}
}

// TestGoLimiterClockBeforeTheFirstHit: a clock stepped back before the
// key's first hit wraps now − startTime round uint64, so the tick is about
// 2^64 / Interval: one refill, and then no tick ever passes lastTick again.
func TestGoLimiterClockBeforeTheFirstHit(t *testing.T) {
	const s1 = algorithms.Time(1_000_000)
	g := winMust(peers.NewGoLimiter(algorithms.Params{Rate: algorithms.Rate{N: 3, Per: time.Second}, Window: time.Second}))
	st, _ := g.Step(algorithms.State{}, 10*s1, 3) // first hit at 10s, all spent
	st, d := g.Step(st, 9*s1, 1)                  // 1s before it
	if !d.Allowed || d.Remaining != 2 {
		t.Fatalf("stepped back before the first hit: %+v, want the bucket refilled", d)
	}
	// (2^64 − 10^9) / 10^9 ticks, and the reset is the wrapped next tick:
	// 2^64 mod 10^9 ns past 9s... measured from now, within one interval.
	if d.ResetAfter <= 0 || d.ResetAfter > time.Second {
		t.Fatalf("reset after %v, want within one interval", d.ResetAfter)
	}
	st, _ = g.Step(st, 9*s1, 2)
	for _, at := range []algorithms.Time{11 * s1, 100 * s1, 86400 * s1} {
		var d algorithms.Decision
		if st, d = g.Step(st, at, 1); d.Allowed {
			t.Fatalf("at %ds the key passed again: %+v; go-limiter's lastTick is past every tick", at/s1, d)
		}
	}
}

func TestGoLimiterEdges(t *testing.T) {
	var zero peers.GoLimiter
	if st, d := zero.Step(algorithms.State{}, 5, 1); d.Allowed || d.RetryAfter != algorithms.Never || st.T != 0 || st.N != 0 || st.Prev != 0 {
		t.Errorf("zero GoLimiter: %+v %+v, want refused for good", st, d)
	}
	if _, d := zero.Step(algorithms.State{}, 5, 0); !d.Allowed {
		t.Errorf("zero GoLimiter refused a peek: %+v", d)
	}
	g := winMust(peers.NewGoLimiter(algorithms.Params{Rate: algorithms.Rate{N: 10, Per: time.Second}, Window: 2 * time.Second, Origin: 42}))
	if p := g.Params(); p.Origin != 42 || p.Window != 2*time.Second || p.Rate.N != 10 || g.Limit() != 20 {
		t.Errorf("Params() = %+v, Limit() = %d", p, g.Limit())
	}
	// Huge and negative costs, instants far apart: no panic, no loop.
	st, d := g.Step(algorithms.State{}, 1<<60, 1<<62)
	if d.Allowed || d.RetryAfter != algorithms.Never || st.N != 0 {
		t.Errorf("cost 2^62: %+v, state %+v (the 20 Takes that passed spend the bucket)", d, st)
	}
	if _, d = g.Step(st, -(1 << 60), -3); !d.Allowed {
		t.Errorf("negative cost is a peek: %+v", d)
	}
}
