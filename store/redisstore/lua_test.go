package redisstore

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"pgregory.net/rapid"

	"github.com/ratelim/ratelim/algorithms"
)

// The differential tests: every Lua twin must reach the Go step's Decision,
// field for field, at every request of random sequences, and leave in Redis
// exactly the State the Go step returns.

// luaRequest is one request of a sequence: its instant and its cost.
type luaRequest struct {
	now  algorithms.Time
	cost int64
}

// luaStats counts what the differential runs exercised, for the test log.
type luaStats struct {
	mu                                          sync.Mutex
	sequences, requests                         int
	allowed, rejected, backwards, negativeNow   int
	peeks, overLimit, never, delayed, farAheadG int
}

func (s *luaStats) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprintf("%d sequences (shrinking included), %d requests: %d allowed, %d rejected, "+
		"%d with the clock going backwards, %d at negative instants, %d peeks (cost 0), "+
		"%d with cost above the limit, %d RetryAfter=Never, %d with a Delay, %d in GCRA/leaky's far-ahead branch",
		s.sequences, s.requests, s.allowed, s.rejected, s.backwards, s.negativeNow, s.peeks,
		s.overLimit, s.never, s.delayed, s.farAheadG)
}

// luaLimit is the algorithm's capacity: the burst or the limit per window.
func luaLimit(alg algorithms.Algorithm) int64 {
	if wl, ok := alg.(windowLimiter); ok {
		return wl.Limit()
	}
	return alg.Params().Burst
}

// luaScales returns, in µs, the interval between two requests at the
// sustained rate and the span over which the limiter forgets (a full
// bucket's refill, or the window).
func luaScales(alg algorithms.Algorithm) (interval, span int64) {
	p := alg.Params()
	per := int64(p.Rate.Per / time.Microsecond)
	if p.Window == 0 {
		interval = max(per/p.Rate.N, 1)
		return interval, max(p.Burst*per/p.Rate.N, 1)
	}
	w := int64(p.Window / time.Microsecond)
	return max(w/luaLimit(alg), 1), w
}

func luaDescribe(alg algorithms.Algorithm) string {
	p := alg.Params()
	if p.Window == 0 {
		return fmt.Sprintf("%s rate=%d/%s burst=%d", alg.Name(), p.Rate.N, p.Rate.Per, p.Burst)
	}
	return fmt.Sprintf("%s rate=%d/%s window=%s (limit %d) origin=%d", alg.Name(), p.Rate.N, p.Rate.Per, p.Window, luaLimit(alg), p.Origin)
}

// luaDrawAlgorithm draws valid parameters for the named algorithm, rates
// that do not divide evenly (3/s, 7/m) included.
func luaDrawAlgorithm(t *rapid.T, name string) algorithms.Algorithm {
	per := rapid.SampledFrom([]time.Duration{
		time.Second, time.Minute, 250 * time.Millisecond, 3 * time.Second, 700 * time.Millisecond,
	}).Draw(t, "per")
	n := rapid.Int64Range(1, 50).Draw(t, "n")
	p := algorithms.Params{Rate: algorithms.Rate{N: n, Per: per}}
	// The wall clock Time 0 stands for: the Unix epoch (a live server),
	// a midnight (the simulator's default), or an instant on no window's
	// boundary, which puts the windows' starts off virtual 0.
	p.Origin = rapid.SampledFrom([]algorithms.Time{0, 1_796_083_200_000_000, 1_796_083_200_123_457}).Draw(t, "origin")
	switch name {
	case "token-bucket", "gcra", "leaky-bucket":
		p.Burst = rapid.Int64Range(1, 20).Draw(t, "burst")
	default:
		p.Window = rapid.SampledFrom([]time.Duration{
			100 * time.Millisecond, time.Second, 1500 * time.Millisecond,
		}).Draw(t, "window")
		// rate × window must admit at least one request per window: lift
		// a rate too slow for the window to the slowest that is not,
		// keeping distinct draws distinct.
		if minN := int64((per + p.Window - 1) / p.Window); n < minN {
			p.Rate.N = minN + n - 1
		}
	}
	alg, err := algorithms.New(name, p)
	if err != nil {
		t.Fatalf("building %s from %+v: %v", name, p, err)
	}
	return alg
}

// luaDrawRequests draws 1..maxLen requests: time deltas of 0, a few µs,
// milliseconds, around the emission interval and the window or refill
// span, long idle spells, and now and then a negative one (clock skew);
// costs mostly 1, sometimes 0..3, the limit, or above it.
func luaDrawRequests(t *rapid.T, alg algorithms.Algorithm, maxLen int) []luaRequest {
	interval, span := luaScales(alg)
	limit := luaLimit(alg)
	start := rapid.OneOf(
		rapid.Just(int64(0)),
		rapid.Int64Range(0, 10_000_000_000),                            // a virtual clock, hours in
		rapid.Int64Range(1_700_000_000_000_000, 1_800_000_000_000_000), // a Unix clock
	).Draw(t, "start")
	count := rapid.IntRange(1, maxLen).Draw(t, "requests")
	reqs := make([]luaRequest, count)
	now := start
	for i := range reqs {
		var delta int64
		switch kind := rapid.IntRange(0, 99).Draw(t, "delta kind"); {
		case kind < 10:
			delta = 0
		case kind < 25:
			delta = rapid.Int64Range(1, 100).Draw(t, "µs")
		case kind < 38:
			delta = rapid.Int64Range(1, 999).Draw(t, "ms") * 1000
		case kind < 58:
			delta = rapid.Int64Range(1, 3).Draw(t, "intervals")*interval + rapid.Int64Range(-2, 2).Draw(t, "jitter")
		case kind < 70:
			delta = rapid.Int64Range(0, interval).Draw(t, "part of an interval")
		case kind < 82:
			delta = rapid.Int64Range(1, 2).Draw(t, "spans")*span + rapid.Int64Range(-2, 2).Draw(t, "jitter")
		case kind < 88:
			delta = rapid.Int64Range(3_600_000_000, 300_000_000_000).Draw(t, "idle")
		case kind < 93:
			// A clock a few µs behind: just past a full bucket's TAT.
			delta = -rapid.Int64Range(1, 3).Draw(t, "small skew")
		default:
			delta = -rapid.Int64Range(1, 2*span+interval).Draw(t, "skew")
		}
		now += delta
		var cost int64
		switch kind := rapid.IntRange(0, 99).Draw(t, "cost kind"); {
		case kind < 70:
			cost = 1
		case kind < 85:
			cost = rapid.Int64Range(0, 3).Draw(t, "cost")
		case kind < 90:
			cost = limit
		case kind < 98:
			cost = limit + rapid.Int64Range(1, 3).Draw(t, "over")
		default:
			cost = -1 // counts as 0
		}
		reqs[i] = luaRequest{now: algorithms.Time(now), cost: cost}
	}
	return reqs
}

// luaReadState reads the key back in the layout the twins write.
func luaReadState(ctx context.Context, c redis.Cmdable, key, name string) (algorithms.State, error) {
	return readState(ctx, c, key, name == "sliding-log")
}

func luaSameState(a, b algorithms.State) bool {
	return a.T == b.T && a.N == b.N && a.Prev == b.Prev && slices.Equal(a.Log, b.Log)
}

func luaZeroState(s algorithms.State) bool { return luaSameState(s, algorithms.State{}) }

// luaWantTTL is the TTL the twins set after a decision.
func luaWantTTL(d algorithms.Decision) time.Duration {
	ms := (int64(d.ResetAfter/time.Microsecond) + 999) / 1000
	return time.Duration(ms+1000) * time.Millisecond
}

type luaFataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// luaCheckSequence runs reqs through the Go step and the Lua twin on key and
// fails at the first request where the Decisions, the stored State or the
// TTL differ. exactTTL is for miniredis, whose TTLs do not count down.
func luaCheckSequence(t luaFataler, ctx context.Context, c *redis.Client, key string,
	alg algorithms.Algorithm, reqs []luaRequest, exactTTL bool, stats *luaStats) {
	t.Helper()
	s, err := scriptFor(alg)
	if err != nil {
		t.Fatalf("scriptFor(%s): %v", alg.Name(), err)
	}
	var st algorithms.State
	for i, r := range reqs {
		next, want := alg.Step(st, r.now, r.cost)
		got, err := s.run(ctx, c, key, r.now, false, r.cost)
		if err != nil {
			t.Fatalf("step %d of %d: %s, now=%d cost=%d: %v", i, len(reqs), luaDescribe(alg), r.now, r.cost, err)
		}
		if got != want {
			t.Fatalf("step %d of %d: %s, now=%d cost=%d, state before %+v:\n  Go:  %+v\n  Lua: %+v",
				i, len(reqs), luaDescribe(alg), r.now, r.cost, st, want, got)
		}
		stored, err := luaReadState(ctx, c, key, alg.Name())
		if err != nil {
			t.Fatalf("step %d: %s: reading the key back: %v", i, luaDescribe(alg), err)
		}
		if !luaSameState(stored, next) {
			t.Fatalf("step %d of %d: %s, now=%d cost=%d, state before %+v:\n  Go state:     %+v\n  stored state: %+v",
				i, len(reqs), luaDescribe(alg), r.now, r.cost, st, next, stored)
		}
		if !luaZeroState(next) {
			ttl, err := c.PTTL(ctx, key).Result()
			if err != nil {
				t.Fatalf("step %d: PTTL: %v", i, err)
			}
			wantTTL := luaWantTTL(want)
			if exactTTL && ttl != wantTTL || !exactTTL && (ttl <= 0 || ttl > wantTTL) {
				t.Fatalf("step %d: %s, now=%d cost=%d, %+v: PTTL %v, want %v", i, luaDescribe(alg), r.now, r.cost, want, ttl, wantTTL)
			}
		}
		stats.note(alg, st, r, want, i > 0 && r.now < reqs[i-1].now)
		st = next
	}
	stats.mu.Lock()
	stats.sequences++
	stats.mu.Unlock()
}

func (s *luaStats) note(alg algorithms.Algorithm, prev algorithms.State, r luaRequest, d algorithms.Decision, backwards bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests++
	if d.Allowed {
		s.allowed++
	} else {
		s.rejected++
	}
	if backwards {
		s.backwards++
	}
	if r.now < 0 {
		s.negativeNow++
	}
	if r.cost <= 0 {
		s.peeks++
	}
	if r.cost > luaLimit(alg) {
		s.overLimit++
	}
	if d.RetryAfter == algorithms.Never {
		s.never++
	}
	if d.Delay > 0 {
		s.delayed++
	}
	if n := alg.Name(); n == "gcra" || n == "leaky-bucket" {
		p := alg.Params()
		capacity := p.Burst * int64(p.Rate.Per/time.Microsecond)
		if prev.T-int64(r.now) > capacity/p.Rate.N+1 {
			s.farAheadG++
		}
	}
}

// luaDifferentialAll runs the differential check for all six algorithms,
// one rapid property each, with keys under prefix.
func luaDifferentialAll(t *testing.T, c *redis.Client, prefix string, maxLen int, exactTTL bool) *luaStats {
	ctx := context.Background()
	stats := &luaStats{}
	var seq int
	for _, name := range algorithms.ExactNames() {
		t.Run(name, func(t *testing.T) {
			rapid.Check(t, func(rt *rapid.T) {
				alg := luaDrawAlgorithm(rt, name)
				reqs := luaDrawRequests(rt, alg, maxLen)
				seq++
				key := fmt.Sprintf("%s%s:%d", prefix, name, seq)
				luaCheckSequence(rt, ctx, c, key, alg, reqs, exactTTL, stats)
			})
		})
	}
	return stats
}

func newLuaMiniredis(t *testing.T) (*miniredis.Miniredis, *redis.Client) {
	t.Helper()
	mr := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = c.Close() })
	return mr, c
}

func TestLuaDifferentialMiniredis(t *testing.T) {
	_, c := newLuaMiniredis(t)
	stats := luaDifferentialAll(t, c, "luatest:", 60, true)
	t.Logf("miniredis: %s", stats)
}

func TestLuaDifferentialRealRedis(t *testing.T) {
	url := os.Getenv("REDIS_URL")
	if url == "" {
		t.Skip("REDIS_URL not set: skipping the real-Redis differential test (.ci/run sets it)")
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatalf("REDIS_URL %q: %v", url, err)
	}
	c := redis.NewClient(opt)
	t.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("REDIS_URL %q: %v", url, err)
	}
	prefix := fmt.Sprintf("ratelim:luatest:%d:%d:", os.Getpid(), time.Now().UnixNano())
	t.Cleanup(func() {
		var keys []string
		iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		if err := iter.Err(); err != nil {
			t.Errorf("scanning %s*: %v", prefix, err)
		}
		for chunk := range slices.Chunk(keys, 500) {
			if err := c.Del(ctx, chunk...).Err(); err != nil {
				t.Errorf("deleting test keys: %v", err)
			}
		}
	})
	stats := luaDifferentialAll(t, c, prefix, 40, false)
	t.Logf("real Redis: %s", stats)
}

// TestLuaEdgeCases pins the branches random sequences may miss: a clock far
// backwards, costs of 0 and above the limit, instants before the epoch, a
// Unix clock after a long idle spell.
func TestLuaEdgeCases(t *testing.T) {
	_, c := newLuaMiniredis(t)
	ctx := context.Background()
	params := []algorithms.Params{
		{Rate: algorithms.Rate{N: 3, Per: time.Second}, Burst: 2, Window: 1500 * time.Millisecond},
		{Rate: algorithms.Rate{N: 7, Per: time.Minute}, Burst: 5, Window: 60 * time.Second},
		{Rate: algorithms.Rate{N: 1, Per: 3 * time.Second}, Burst: 1, Window: 3 * time.Second},
		// Time 0 at a wall-clock instant on no window's boundary: the
		// windows' starts fall between virtual instants, before 0 too.
		{Rate: algorithms.Rate{N: 3, Per: time.Second}, Burst: 2, Window: 1500 * time.Millisecond, Origin: 1_796_083_200_123_457},
	}
	const unix = 1_750_000_000_123_457
	sequences := map[string][]luaRequest{
		"burst then reject": {{0, 1}, {0, 1}, {0, 1}, {0, 1}, {1, 1}, {333_333, 1}, {333_334, 1}, {333_334, 0}},
		"just backwards":    {{1_000_000, 2}, {999_999, 1}, {999_998, 0}, {999_999, 1}, {1_000_000, 0}, {1_000_001, 1}},
		"far backwards":     {{10_000_000, 2}, {10_000_000, 2}, {1, 1}, {1, 0}, {-5_000_000, 1}, {9_999_999, 1}, {10_000_001, 1}},
		"cost over limit":   {{0, 100}, {5, 1}, {5, 100}, {1_000_000, 0}, {2_000_000, 100}},
		"before the epoch":  {{-7_777_777, 1}, {-7_777_777, 1}, {-1_500_001, 1}, {-1, 1}, {0, 1}, {1_499_999, 1}, {-3_000_000, 2}},
		"unix clock":        {{unix, 1}, {unix + 1, 1}, {unix + 2, 3}, {unix - 2_000_000, 1}, {unix + 86_400_000_000, 1}, {unix + 86_400_000_001, 0}},
		"peeks only":        {{0, 0}, {5, 0}, {unix, 0}, {unix, -3}},
	}
	n := 0
	for _, name := range algorithms.ExactNames() {
		for _, p := range params {
			alg, err := algorithms.New(name, p)
			if err != nil {
				t.Fatalf("%s %+v: %v", name, p, err)
			}
			for label, reqs := range sequences {
				n++
				t.Run(fmt.Sprintf("%s/%d-per-%s-origin-%d/%s", name, alg.Params().Rate.N, alg.Params().Rate.Per, alg.Params().Origin, label), func(t *testing.T) {
					luaCheckSequence(t, ctx, c, fmt.Sprintf("edge:%d", n), alg, reqs, true, &luaStats{})
				})
			}
		}
	}
}

// luaAlgorithms returns one instance of each algorithm, with a rate that
// does not divide a second.
func luaAlgorithms(t *testing.T) []algorithms.Algorithm {
	t.Helper()
	var algs []algorithms.Algorithm
	for _, name := range algorithms.ExactNames() {
		alg, err := algorithms.New(name, algorithms.Params{
			Rate: algorithms.Rate{N: 3, Per: time.Second}, Burst: 2, Window: time.Second,
		})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		algs = append(algs, alg)
	}
	return algs
}

// TestLuaStoreClock checks the ARGV[1] = "" path: the script reads the
// store's clock (miniredis's SetTime) and decides as the Go step would at
// that instant, ignoring the now passed in.
func TestLuaStoreClock(t *testing.T) {
	mr, c := newLuaMiniredis(t)
	ctx := context.Background()
	base := time.UnixMicro(1_700_000_000_123_456)
	offsets := []time.Duration{0, time.Microsecond, 100 * time.Millisecond, 333_334 * time.Microsecond,
		400 * time.Millisecond, -50 * time.Millisecond, 2 * time.Second}
	for _, alg := range luaAlgorithms(t) {
		t.Run(alg.Name(), func(t *testing.T) {
			s, err := scriptFor(alg)
			if err != nil {
				t.Fatal(err)
			}
			if argv := s.args(42, true, 1); argv[0] != "" {
				t.Fatalf("args with the store clock: ARGV[1] = %q, want \"\"", argv[0])
			}
			if s.aligned {
				// Redis TIME is the wall clock itself: an origin for a
				// virtual clock must not move the windows again.
				p := alg.Params()
				p.Origin = 123
				moved, err := algorithms.New(alg.Name(), p)
				if err != nil {
					t.Fatal(err)
				}
				shifted, err := scriptFor(moved)
				if err != nil {
					t.Fatal(err)
				}
				if argv := shifted.args(42, true, 1); argv[len(argv)-1] != int64(0) {
					t.Errorf("args with the store clock: origin %v, want 0", argv[len(argv)-1])
				}
				if argv := shifted.args(42, false, 1); argv[len(argv)-1] != int64(123) {
					t.Errorf("args with the caller's clock: origin %v, want 123", argv[len(argv)-1])
				}
			}
			key := "clock:" + alg.Name()
			var st algorithms.State
			for i, off := range offsets {
				at := base.Add(off)
				mr.SetTime(at)
				next, want := alg.Step(st, algorithms.FromTime(at), 1)
				got, err := s.run(ctx, c, key, 42, true, 1) // 42 must be ignored
				if err != nil {
					t.Fatalf("request %d at %s: %v", i, at, err)
				}
				if got != want {
					t.Fatalf("request %d at store time %d µs:\n  Go:  %+v\n  Lua: %+v", i, algorithms.FromTime(at), want, got)
				}
				st = next
			}
		})
	}
}

// TestLuaTTL checks that a request leaves the key with a TTL of the reset
// time plus the 1 s floor, and that once that TTL has run out (the key
// expired, the zero State) the next decision is the one the Go step makes
// from the state it would have kept.
func TestLuaTTL(t *testing.T) {
	mr, c := newLuaMiniredis(t)
	ctx := context.Background()
	for _, alg := range luaAlgorithms(t) {
		t.Run(alg.Name(), func(t *testing.T) {
			s, err := scriptFor(alg)
			if err != nil {
				t.Fatal(err)
			}
			key := "ttl:" + alg.Name()
			const now = algorithms.Time(5_000_000_000)
			st, d := alg.Step(algorithms.State{}, now, 2)
			got, err := s.run(ctx, c, key, now, false, 2)
			if err != nil {
				t.Fatal(err)
			}
			if got != d {
				t.Fatalf("Go %+v, Lua %+v", d, got)
			}
			ttl, err := c.PTTL(ctx, key).Result()
			if err != nil {
				t.Fatal(err)
			}
			if ttl <= 0 {
				t.Fatalf("PTTL %v after a request, want > 0", ttl)
			}
			if want := luaWantTTL(d); ttl != want {
				t.Fatalf("PTTL %v, want ceil(reset %v) + 1s = %v", ttl, d.ResetAfter, want)
			}
			mr.FastForward(ttl)
			if mr.Exists(key) {
				t.Fatalf("key still there after its TTL")
			}
			later := now + algorithms.At(ttl)
			_, want := alg.Step(st, later, 1)
			got, err = s.run(ctx, c, key, later, false, 1)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Fatalf("after expiry: Go (kept state) %+v, Lua (expired key) %+v", want, got)
			}
		})
	}
}

type luaUnknownAlgorithm struct{}

func (luaUnknownAlgorithm) Name() string              { return "token-bucket" } // a name is not enough
func (luaUnknownAlgorithm) Params() algorithms.Params { return algorithms.Params{} }
func (luaUnknownAlgorithm) Step(prev algorithms.State, _ algorithms.Time, _ int64) (algorithms.State, algorithms.Decision) {
	return prev, algorithms.Decision{Allowed: true}
}

func TestScriptForUnknownAlgorithm(t *testing.T) {
	if s, err := scriptFor(luaUnknownAlgorithm{}); err == nil {
		t.Fatalf("scriptFor(an unknown type) = %+v, want an error", s)
	}
	if s, err := scriptFor(nil); err == nil {
		t.Fatalf("scriptFor(nil) = %+v, want an error", s)
	}
	for _, alg := range luaAlgorithms(t) {
		if _, err := scriptFor(alg); err != nil {
			t.Errorf("scriptFor(%s): %v", alg.Name(), err)
		}
	}
	// A peer model has no twin of ratelim's: the libraries that run in
	// Redis run their own scripts, on their own state.
	for _, info := range algorithms.Catalog() {
		if info.Peer == nil {
			continue
		}
		alg, err := info.Build(algorithms.Params{Rate: algorithms.Rate{N: 10, Per: time.Second}, Burst: 5, Window: time.Second})
		if err != nil {
			t.Fatalf("%s: %v", info.Name, err)
		}
		if s, err := scriptFor(alg); err == nil {
			t.Errorf("scriptFor(%s) = %+v, want an error: a peer has no Lua twin", info.Name, s)
		}
	}
	// Every algorithm that is not a peer model has a twin: the six exact
	// ones and the concurrency limiter.
	var own []string
	for _, info := range algorithms.Catalog() {
		if info.Peer == nil {
			own = append(own, info.Name)
		}
	}
	if len(luaTwins) != len(own) {
		t.Errorf("embedded %d scripts, want one per algorithm (%v)", len(luaTwins), own)
	}
	for _, name := range own {
		if luaTwins[name] == nil {
			t.Errorf("no Lua twin embedded for %s", name)
		}
	}
}

func TestScriptDecode(t *testing.T) {
	s := &script{name: "x", limit: 7}
	d, err := s.decode([]int64{0, 3, -1, 1500, 0})
	if err != nil {
		t.Fatal(err)
	}
	want := algorithms.Decision{Limit: 7, Remaining: 3, RetryAfter: algorithms.Never, ResetAfter: 1500 * time.Microsecond}
	if d != want {
		t.Fatalf("decode = %+v, want %+v", d, want)
	}
	if _, err := s.decode([]int64{1, 2}); err == nil {
		t.Fatal("decode of a short reply: no error")
	}
}

// TestScriptNoScriptFallback flushes the server's script cache between two
// runs: the second must fall back from EVALSHA to EVAL and still decide.
func TestScriptNoScriptFallback(t *testing.T) {
	_, c := newLuaMiniredis(t)
	ctx := context.Background()
	for _, alg := range luaAlgorithms(t) {
		s, err := scriptFor(alg)
		if err != nil {
			t.Fatal(err)
		}
		key := "noscript:" + alg.Name()
		st, want := alg.Step(algorithms.State{}, 1_000_000, 1)
		if got, err := s.run(ctx, c, key, 1_000_000, false, 1); err != nil || got != want {
			t.Fatalf("%s first run: %+v, %v; want %+v", alg.Name(), got, err, want)
		}
		if err := c.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		err = c.EvalSha(ctx, s.lua.Hash(), []string{key}, s.args(1_000_001, false, 1)...).Err()
		if err == nil || !strings.HasPrefix(err.Error(), "NOSCRIPT") {
			t.Fatalf("%s: EVALSHA after SCRIPT FLUSH: %v, want NOSCRIPT", alg.Name(), err)
		}
		_, want = alg.Step(st, 1_000_001, 1)
		if got, err := s.run(ctx, c, key, 1_000_001, false, 1); err != nil || got != want {
			t.Fatalf("%s run after SCRIPT FLUSH: %+v, %v; want %+v", alg.Name(), got, err, want)
		}
	}
}
