package redisstore

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"pgregory.net/rapid"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/store"
	"github.com/ratelim/ratelim/topology"
)

// The Multi tests: the multi script (lua/multi.lua) against algorithms.Multi
// on random sequences, on miniredis and (with REDIS_URL) a real server; its
// keys on one cluster slot; Load and Save of every limit's state; and a key
// hammered by goroutines never admitting more than any of its limits.

// multiRequest is one request of a sequence on a key with several limits.
type multiRequest struct {
	now  algorithms.Time
	cost int64
}

// multiDraw draws a Multi of 1 to 4 limits, each one of the six exact
// algorithms with luaDrawAlgorithm's parameters, some in shadow mode for
// good or until an instant near the sequence's start; and a sequence of
// 1 to maxLen requests from start: costs 0 to 4, time deltas on the
// limits' own scales, and now and then a clock that steps back.
func multiDraw(t *rapid.T, maxLen int) (*algorithms.Multi, []multiRequest) {
	start := rapid.OneOf(
		rapid.Just(int64(0)),
		rapid.Int64Range(0, 10_000_000_000),
		rapid.Int64Range(1_700_000_000_000_000, 1_800_000_000_000_000),
	).Draw(t, "start")
	n := rapid.IntRange(1, 4).Draw(t, "limits")
	ps := make([]algorithms.Policy, n)
	var intervals, spans []int64
	for i := range ps {
		alg := luaDrawAlgorithm(t, rapid.SampledFrom(algorithms.ExactNames()).Draw(t, "algorithm"))
		interval, span := luaScales(alg)
		intervals, spans = append(intervals, interval), append(spans, span)
		ps[i] = algorithms.Policy{Name: fmt.Sprintf("limit-%d", i), Algorithm: alg}
		switch rapid.IntRange(0, 5).Draw(t, "shadow") {
		case 0:
			ps[i].Shadow = true // for good
		case 1:
			ps[i].Shadow = true
			ps[i].ShadowUntil = algorithms.Time(start + rapid.Int64Range(-span, 3*span).Draw(t, "shadow until"))
		}
	}
	m, err := algorithms.NewMulti(ps)
	if err != nil {
		t.Fatalf("NewMulti: %v", err)
	}
	reqs := make([]multiRequest, rapid.IntRange(1, maxLen).Draw(t, "requests"))
	now := start
	for i := range reqs {
		scale := rapid.IntRange(0, n-1).Draw(t, "scale of limit")
		interval, span := intervals[scale], spans[scale]
		switch kind := rapid.IntRange(0, 99).Draw(t, "delta kind"); {
		case kind < 15:
		case kind < 30:
			now += rapid.Int64Range(1, 100).Draw(t, "µs")
		case kind < 55:
			now += rapid.Int64Range(1, 3).Draw(t, "intervals")*interval + rapid.Int64Range(-2, 2).Draw(t, "jitter")
		case kind < 70:
			now += rapid.Int64Range(0, interval).Draw(t, "part of an interval")
		case kind < 82:
			now += rapid.Int64Range(1, 2).Draw(t, "spans")*span + rapid.Int64Range(-2, 2).Draw(t, "jitter")
		case kind < 87:
			now += rapid.Int64Range(3_600_000_000, 300_000_000_000).Draw(t, "idle")
		case kind < 93:
			now -= rapid.Int64Range(1, 3).Draw(t, "small skew")
		default:
			now -= rapid.Int64Range(1, 2*span+interval).Draw(t, "skew")
		}
		reqs[i] = multiRequest{algorithms.Time(now), rapid.Int64Range(0, 4).Draw(t, "cost")}
	}
	return m, reqs
}

func multiDescribe(m *algorithms.Multi) string {
	var parts []string
	for _, p := range m.Policies() {
		s := luaDescribe(p.Algorithm)
		if p.Shadow {
			s += fmt.Sprintf(" shadow until %d", p.ShadowUntil)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// sameState reports whether two states hold the same numbers (see
// store.EqualStates) and, for a Multi, as many limits' states.
func sameState(a, b algorithms.State) bool {
	return len(a.Sub) == len(b.Sub) && store.EqualStates(a, b)
}

// redisOn is a Redis store for alg on an open client, under prefix.
func redisOn(t luaFataler, c redis.UniversalClient, alg algorithms.Algorithm, prefix string) *Store {
	t.Helper()
	s, err := scriptFor(alg)
	if err != nil {
		t.Fatalf("scriptFor(%s): %v", alg.Name(), err)
	}
	return &Store{client: c, script: s, opts: Options{Prefix: prefix}, loaded: new(atomic.Bool), derived: true}
}

// multiCheckSequence runs reqs through algorithms.Multi.Step (the oracle),
// the memory store and the multi script on key, and fails at the first
// request where a Decision or a Load differs, or where a limit's key is
// left without an expiry. Every few requests it also Saves the oracle's
// state under another key and Loads it back.
func multiCheckSequence(t luaFataler, ctx context.Context, c *redis.Client, prefix string,
	m *algorithms.Multi, reqs []multiRequest, stats *multiStats) {
	t.Helper()
	r := redisOn(t, c, m, prefix)
	mem := store.NewMemory(m)
	const key = "k"
	var st algorithms.State
	for i, q := range reqs {
		next, want := m.Step(st, q.now, q.cost)
		fail := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("request %d of %d (now=%d cost=%d) on %s, state before %+v: %s",
				i, len(reqs), q.now, q.cost, multiDescribe(m), st, fmt.Sprintf(format, args...))
		}
		got, err := r.Take(ctx, key, q.now, q.cost)
		if err != nil {
			fail("Redis: %v", err)
		}
		if got.Decision != want {
			fail("\n  Go:    %+v\n  Redis: %+v", want, got.Decision)
		}
		if d, _ := mem.Take(ctx, key, q.now, q.cost); d.Decision != want {
			fail("\n  Go:     %+v\n  memory: %+v", want, d.Decision)
		}
		stored, err := r.Load(ctx, key)
		if err != nil {
			fail("Load: %v", err)
		}
		inMemory, _ := mem.Load(ctx, key)
		if !sameState(stored, next) || !sameState(inMemory, next) {
			fail("\n  Go state:     %+v\n  Redis Load:   %+v\n  memory Load:  %+v", next, stored, inMemory)
		}
		keys, _ := r.script.keys(prefix, key)
		for _, k := range keys {
			if ttl := c.PTTL(ctx, k).Val(); ttl == -1 {
				fail("%s has no expiry", k)
			}
		}
		if i%5 == 4 {
			const saved = "saved"
			if err := r.Save(ctx, saved, next, time.Minute); err != nil {
				fail("Save: %v", err)
			}
			if back, err := r.Load(ctx, saved); err != nil || !sameState(back, next) {
				fail("Save then Load: %+v, %v; want %+v", back, err, next)
			}
		}
		stats.note(m, st, q, i > 0 && q.now < reqs[i-1].now, want)
		st = next
	}
}

var multiSeq atomic.Int64

// multiStats counts what the differential runs exercised, for the log.
type multiStats struct {
	requests, allowed, refused, wouldReject, peeked, backwards atomic.Int64
}

func (s *multiStats) String() string {
	return fmt.Sprintf("%d requests: %d allowed (%d would-reject), %d refused (%d with a limit that admitted alone, so peeked), %d with the clock going backwards",
		s.requests.Load(), s.allowed.Load(), s.wouldReject.Load(), s.refused.Load(), s.peeked.Load(), s.backwards.Load())
}

func (s *multiStats) note(m *algorithms.Multi, st algorithms.State, q multiRequest, backwards bool, d algorithms.Decision) {
	s.requests.Add(1)
	if backwards {
		s.backwards.Add(1)
	}
	if d.Allowed {
		s.allowed.Add(1)
		if d.WouldReject {
			s.wouldReject.Add(1)
		}
		return
	}
	s.refused.Add(1)
	for i, p := range m.Policies() {
		var sub algorithms.State
		if i < len(st.Sub) {
			sub = st.Sub[i]
		}
		if _, alone := p.Algorithm.Step(sub, q.now, q.cost); alone.Allowed {
			s.peeked.Add(1)
			return
		}
	}
}

func multiDifferential(t *testing.T, c *redis.Client, prefix string, maxLen int) {
	ctx := context.Background()
	var stats multiStats
	rapid.Check(t, func(rt *rapid.T) {
		m, reqs := multiDraw(rt, maxLen)
		multiCheckSequence(rt, ctx, c, fmt.Sprintf("%s%d:", prefix, multiSeq.Add(1)), m, reqs, &stats)
	})
	t.Logf("%s", &stats)
}

// TestMultiLuaDifferentialMiniredis: the multi script decides every request
// as algorithms.Multi.Step does, field for field, and leaves every limit's
// state as the step's (and the memory store's) State.Sub.
func TestMultiLuaDifferentialMiniredis(t *testing.T) {
	_, c := newLuaMiniredis(t)
	multiDifferential(t, c, "multitest:", 60)
}

// TestMultiLuaDifferentialRealRedis is the same on the server REDIS_URL
// names: rapid's 100 sequences of up to 60 requests, about 3,000
// decisions.
func TestMultiLuaDifferentialRealRedis(t *testing.T) {
	c := realRedisClient(t)
	prefix := fmt.Sprintf("ratelim:multitest:%d:%d:", os.Getpid(), time.Now().UnixNano())
	t.Cleanup(func() { deleteUnder(t, c, prefix) })
	multiDifferential(t, c, prefix, 60)
}

// realRedisClient connects to REDIS_URL, or skips the test when it is not
// set.
func realRedisClient(t *testing.T) *redis.Client {
	t.Helper()
	url := os.Getenv("REDIS_URL")
	if url == "" {
		t.Skip("REDIS_URL not set: skipping the real-Redis part (.ci/run sets it)")
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatalf("REDIS_URL %q: %v", url, err)
	}
	c := redis.NewClient(opt)
	t.Cleanup(func() { _ = c.Close() })
	if err := c.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("REDIS_URL %q: %v", url, err)
	}
	return c
}

func deleteUnder(t *testing.T, c *redis.Client, prefix string) {
	ctx := context.Background()
	var keys []string
	iter := c.Scan(ctx, 0, scanPattern(prefix), 1000).Iterator()
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
}

func mustMulti(t testing.TB, ps ...algorithms.Policy) *algorithms.Multi {
	t.Helper()
	m, err := algorithms.NewMulti(ps)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func mustAlg(t testing.TB, name string, p algorithms.Params) algorithms.Algorithm {
	t.Helper()
	a, err := algorithms.New(name, p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// perSecondAndHourly is the case APIs publish: 10/s with a burst of 20,
// and 1000 an hour.
func perSecondAndHourly(t testing.TB) *algorithms.Multi {
	return mustMulti(t,
		algorithms.Policy{Name: "burst", Algorithm: mustAlg(t, "token-bucket", algorithms.Params{Rate: algorithms.Rate{N: 10, Per: time.Second}, Burst: 20})},
		algorithms.Policy{Name: "hourly", Algorithm: mustAlg(t, "fixed-window", algorithms.Params{Rate: algorithms.Rate{N: 1000, Per: time.Hour}, Window: time.Hour})})
}

// TestMultiLuaStoreClock: with ARGV[1] = "", the script decides at the
// store's clock, shadow mode included: a limit shadowed until an instant
// enforces from the store's instant on, whatever now the caller passed.
func TestMultiLuaStoreClock(t *testing.T) {
	mr, c := newLuaMiniredis(t)
	ctx := context.Background()
	base := algorithms.Time(1_700_000_000_000_000)
	strict := mustAlg(t, "fixed-window", algorithms.Params{Rate: algorithms.Rate{N: 1, Per: time.Second}, Window: time.Second})
	loose := mustAlg(t, "token-bucket", algorithms.Params{Rate: algorithms.Rate{N: 100, Per: time.Second}, Burst: 100})
	m := mustMulti(t,
		algorithms.Policy{Name: "loose", Algorithm: loose},
		algorithms.Policy{Name: "strict", Algorithm: strict, Shadow: true, ShadowUntil: base + 1_500_000})
	r := redisOn(t, c, m, "clock:")
	r.opts.StoreClock = true
	var st algorithms.State
	for i, off := range []int64{0, 1, 2, 1_000_000, 1_499_999, 1_500_000, 1_500_001, 2_000_000, 2_000_001} {
		at := base + algorithms.Time(off)
		mr.SetTime(time.UnixMicro(int64(at)))
		var want algorithms.Decision
		st, want = m.Step(st, at, 1)
		got, err := r.Take(ctx, "k", 42, 1) // 42 must be ignored
		if err != nil {
			t.Fatal(err)
		}
		if got.Decision != want {
			t.Fatalf("request %d at store time +%d µs:\n  Go:    %+v\n  Redis: %+v", i, off, want, got.Decision)
		}
	}
}

// TestMultiKeysShareOneSlot: every limit key of a key K hashes to one
// cluster slot, whatever bytes K holds (braces, empty, binary) and under
// prefixes with braces of their own; the keys are distinct, and none is a
// single-limit store's key for K.
func TestMultiKeysShareOneSlot(t *testing.T) {
	if a, b := topology.HashSlot("{user1000}.following"), topology.HashSlot("{user1000}.followers"); a != b {
		t.Fatalf("the cluster spec's example: slots %d and %d differ", a, b)
	}
	if a, b := topology.HashSlot("foo{}{bar}"), topology.HashSlot("foo{}{baz}"); a == b {
		t.Logf("(an empty tag hashes the whole key; %d and %d collide by chance)", a, b)
	}
	m := mustMulti(t,
		algorithms.Policy{Name: "a", Algorithm: tokenBucket(t, 1, 1)},
		algorithms.Policy{Name: "b", Algorithm: tokenBucket(t, 1, 2)},
		algorithms.Policy{Name: "c", Algorithm: tokenBucket(t, 1, 3)},
		algorithms.Policy{Name: "d", Algorithm: tokenBucket(t, 1, 4)})
	s, err := scriptFor(m)
	if err != nil {
		t.Fatal(err)
	}
	hostile := []string{"", "}", "{", "{}", "}{", "{{}}", "a}b", "a{b", "{a}", "user:{42}", "}:0", "x}:1",
		"\x00", "\xff{\xfe}", "{#", "{#}", "#", strings.Repeat("}", 40), "k\n{x}"}
	prefixes := []string{"", "ratelim:", "run{7}:", "a{", "a}", "{", "}{", "a{b}{}:"}
	for _, prefix := range prefixes {
		seen := map[string]string{}
		for _, k := range hostile {
			keys, err := s.keys(prefix, k)
			if err != nil {
				t.Fatalf("keys(%q, %q): %v", prefix, k, err)
			}
			slot := topology.HashSlot(keys[0])
			for i, rk := range keys {
				if got := topology.HashSlot(rk); got != slot {
					t.Errorf("prefix %q key %q: limit %d's key %q on slot %d, limit 0's %q on %d", prefix, k, i, rk, got, keys[0], slot)
				}
				if rk == prefix+k {
					t.Errorf("prefix %q key %q: limit %d's key is the single-limit key", prefix, k, i)
				}
				if other, dup := seen[rk]; dup {
					t.Errorf("prefix %q: %q is a key of both %q and %q", prefix, rk, other, k)
				}
				seen[rk] = k
				if !strings.HasPrefix(rk, prefix) {
					t.Errorf("%q does not start with the prefix %q: Clear would miss it", rk, prefix)
				}
			}
		}
	}
	for _, bad := range []string{"{}", "run:{}:", "a{}{b}"} {
		if _, err := s.keys(bad, "k"); err == nil {
			t.Errorf("keys under prefix %q (an empty hash tag): no error", bad)
		}
		if _, err := Open(context.Background(), m, Options{URL: store.Embedded, Prefix: bad}); err == nil {
			t.Errorf("Open with a Multi under prefix %q: no error", bad)
		}
	}
}

// TestMultiOnRedisCluster runs a Multi on a real three-node cluster, on
// hostile keys: a script whose keys were on different slots would fail
// with CROSSSLOT. The cluster's own CLUSTER KEYSLOT checks
// topology.HashSlot, the simulator's.
func TestMultiOnRedisCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a three-node Redis Cluster")
	}
	url := startCluster(t)
	ctx := context.Background()
	m := perSecondAndHourly(t)
	r, err := Open(ctx, m, Options{URL: url, Prefix: "cluster-multi:"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	mem := store.NewMemory(m)
	for i, k := range []string{"", "}", "{", "{}", "a}b", "user:{42}", "x{y}z", "plain", "\xff"} {
		keys, _ := r.script.keys(r.opts.Prefix, k)
		if got, err := r.client.ClusterKeySlot(ctx, keys[0]).Result(); err != nil || int(got) != topology.HashSlot(keys[0]) {
			t.Errorf("CLUSTER KEYSLOT %q = %d, %v; topology.HashSlot says %d", keys[0], got, err, topology.HashSlot(keys[0]))
		}
		for j := range 25 {
			now := algorithms.Time(1_700_000_000_000_000 + int64(i*1000+j)*30_000)
			want, _ := mem.Take(ctx, k, now, 1)
			got, err := r.Take(ctx, k, now, 1)
			if err != nil {
				t.Fatalf("key %q request %d: %v", k, j, err)
			}
			if got != want {
				t.Fatalf("key %q request %d: cluster %+v, memory %+v", k, j, got.Decision, want.Decision)
			}
		}
		st, err := r.Load(ctx, k)
		want, _ := mem.Load(ctx, k)
		if err != nil || !sameState(st, want) {
			t.Errorf("key %q: Load %+v, %v; memory %+v", k, st, err, want)
		}
		if err := r.Save(ctx, k, want, time.Minute); err != nil {
			t.Errorf("key %q: Save: %v", k, err)
		}
	}
	if n, err := r.Clear(ctx); err != nil || n != 18 {
		t.Errorf("Clear deleted %d keys, %v; want 9 keys × 2 limits", n, err)
	}
}

// TestScriptForMulti: a Multi of the six algorithms has the multi script
// and the ARGV lua/multi.lua reads; a peer, or a Multi inside a Multi,
// does not, and the error names the limit.
func TestScriptForMulti(t *testing.T) {
	var ps []algorithms.Policy
	for _, alg := range luaAlgorithms(t) {
		ps = append(ps, algorithms.Policy{Name: alg.Name(), Algorithm: alg})
	}
	ps[1].Shadow = true                               // for good
	ps[2].Shadow, ps[2].ShadowUntil = true, 5_000_000 // until 5 s
	ps[3].Shadow, ps[3].ShadowUntil = true, -1        // -1 is an instant, not "enforcing"
	m := mustMulti(t, ps...)
	s, err := scriptFor(m)
	if err != nil {
		t.Fatal(err)
	}
	want := []any{"", int64(2),
		"token-bucket", int64(3), int64(1_000_000), int64(2), "",
		"gcra", int64(3), int64(1_000_000), int64(2), "0",
		"leaky-bucket", int64(3), int64(1_000_000), int64(2), "5000000",
		"fixed-window", int64(1_000_000), int64(3), 0, "-1",
		"sliding-log", int64(1_000_000), int64(3), 0, "",
		"sliding-window", int64(1_000_000), int64(3), 0, "",
	}
	if got := s.args(7, true, 2); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("ARGV\n  got  %v\n  want %v", got, want)
	}

	peer, err := algorithms.New("redis_rate", algorithms.Params{Rate: algorithms.Rate{N: 10, Per: time.Second}, Burst: 5})
	if err != nil {
		t.Fatal(err)
	}
	withPeer := mustMulti(t, algorithms.Policy{Name: "burst", Algorithm: luaAlgorithms(t)[0]}, algorithms.Policy{Name: "library", Algorithm: peer})
	if _, err := scriptFor(withPeer); err == nil || !strings.Contains(err.Error(), `limit "library"`) {
		t.Errorf("scriptFor(a Multi with a peer): %v, want an error naming the limit", err)
	}
	if _, err := Open(context.Background(), withPeer, Options{URL: store.Embedded}); err == nil {
		t.Error("Open with a peer limit: no error")
	}
	nested := mustMulti(t, algorithms.Policy{Name: "inner", Algorithm: m})
	if _, err := scriptFor(nested); err == nil {
		t.Error("scriptFor(a Multi of a Multi): no error")
	}

	two := perSecondAndHourly(t)
	s, _ = scriptFor(two)
	for _, bad := range [][]int64{{1, 2, 3, 4, 5}, make([]int64, 11), make([]int64, 12), append(make([]int64, 12), 4)} {
		if d, err := s.decode(bad); err == nil {
			t.Errorf("decode(%v) = %+v, want an error", bad, d)
		}
	}
}

// multiBounds is a Multi whose limits bind in turn: a bucket of 8 refilled
// 20/s, 10 per fixed second, 6 per sliding half second, and a fixed window
// of 1 per second in shadow mode, which must block nothing.
func multiBounds(t testing.TB) *algorithms.Multi {
	return mustMulti(t,
		algorithms.Policy{Name: "bucket", Algorithm: mustAlg(t, "token-bucket", algorithms.Params{Rate: algorithms.Rate{N: 20, Per: time.Second}, Burst: 8})},
		algorithms.Policy{Name: "second", Algorithm: mustAlg(t, "fixed-window", algorithms.Params{Rate: algorithms.Rate{N: 10, Per: time.Second}, Window: time.Second})},
		algorithms.Policy{Name: "log", Algorithm: mustAlg(t, "sliding-log", algorithms.Params{Rate: algorithms.Rate{N: 12, Per: time.Second}, Window: 500 * time.Millisecond})},
		algorithms.Policy{Name: "dark", Algorithm: mustAlg(t, "fixed-window", algorithms.Params{Rate: algorithms.Rate{N: 1, Per: time.Second}, Window: time.Second}), Shadow: true})
}

// TestMultiConcurrentNeverOverAdmits hammers one key of a Multi from
// goroutines, round after round, every request of a round at one instant:
// the rounds' admissions are exactly what the limits admit one request at
// a time (a store's decisions on a key are serial), so every enforcing
// limit's bound holds: the bucket never passes burst + rate × t, the fixed
// window its 10 a second, the sliding log its 6 in any half second.
func TestMultiConcurrentNeverOverAdmits(t *testing.T) {
	m := multiBounds(t)
	stores := map[string]store.Limiter{"memory": store.NewMemory(m)}
	mini, err := Open(context.Background(), m, Options{URL: store.Embedded, Prefix: "hammer:"})
	if err != nil {
		t.Fatal(err)
	}
	defer mini.Close()
	stores["miniredis"] = mini
	if real := openRealRedis(t, m); real != nil {
		stores["redis-server"] = real
	}
	const goroutines, perRound, rounds = 8, 3, 24
	for name, l := range stores {
		t.Run(name, func(t *testing.T) {
			var oracle algorithms.State
			var admitted []algorithms.Time // the instant of every admitted request
			for round := range rounds {
				now := algorithms.Time(1_000_000 + int64(round)*130_000)
				var got atomic.Int64
				var wg sync.WaitGroup
				errs := make(chan error, goroutines)
				for range goroutines {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for range perRound {
							d, err := l.Take(context.Background(), "hot", now, 1)
							if err != nil {
								errs <- err
								return
							}
							if d.Allowed {
								got.Add(1)
							}
						}
					}()
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					t.Fatal(err)
				}
				var want int64
				for range goroutines * perRound {
					var d algorithms.Decision
					oracle, d = m.Step(oracle, now, 1)
					if d.Allowed {
						want++
					}
				}
				if got.Load() != want {
					t.Fatalf("round %d at %d µs: admitted %d, one at a time %d", round, now, got.Load(), want)
				}
				for range want {
					admitted = append(admitted, now)
				}
			}
			multiCheckBounds(t, admitted)
		})
	}
}

// multiCheckBounds checks multiBounds's enforcing limits over the instants
// of the admitted requests, sorted.
func multiCheckBounds(t *testing.T, admitted []algorithms.Time) {
	t.Helper()
	if len(admitted) == 0 {
		t.Fatal("nothing admitted")
	}
	first := admitted[0]
	for i, at := range admitted {
		// The bucket: 8 at once, then 20 a second.
		if bound := 8 + int64(at-first)*20/1_000_000; int64(i+1) > bound {
			t.Errorf("bucket: %d admitted by %d µs, bound %d", i+1, at, bound)
		}
		// The fixed window: 10 per aligned second.
		inWindow := 0
		for _, b := range admitted {
			if b/1_000_000 == at/1_000_000 {
				inWindow++
			}
		}
		if inWindow > 10 {
			t.Errorf("fixed window: %d admitted in the second of %d µs, limit 10", inWindow, at)
		}
		// The sliding log: 6 in any half second (a window (at-500ms, at]).
		inLog := 0
		for _, b := range admitted {
			if b > at-500_000 && b <= at {
				inLog++
			}
		}
		if inLog > 6 {
			t.Errorf("sliding log: %d admitted in the half second to %d µs, limit 6", inLog, at)
		}
	}
	t.Logf("%d admitted over %d µs", len(admitted), admitted[len(admitted)-1]-first)
}

// TestMultiRacyOnRedis: the racy read-modify-write reads and writes a
// Multi's every limit through Load and Save, and alone (no concurrency)
// decides as the atomic script does (their states may differ: a racy
// refusal writes nothing, the script writes a refusal's refill, which
// decides alike), and a compare-and-swap sees a write to any limit.
func TestMultiRacyOnRedis(t *testing.T) {
	m := perSecondAndHourly(t)
	ctx := context.Background()
	r, err := Open(ctx, m, Options{URL: store.Embedded})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	racy := store.NewRacy(m, r.WithPrefix("racy:"))
	atomicStore := r.WithPrefix("atomic:")
	for i := range 60 {
		now := algorithms.Time(int64(i) * 37_000)
		want, err := atomicStore.Take(ctx, "k", now, int64(i%3))
		if err != nil {
			t.Fatal(err)
		}
		got, err := racy.Take(ctx, "k", now, int64(i%3))
		if err != nil {
			t.Fatal(err)
		}
		if got.Decision != want.Decision {
			t.Fatalf("request %d: racy %+v, script %+v", i, got.Decision, want.Decision)
		}
	}
	// A compare-and-swap fails when another writer moved any limit, here
	// the second only.
	p, err := racy.Read(ctx, "k", 60*37_000, 1)
	if err != nil || !p.Decision.Allowed {
		t.Fatalf("read: %+v, %v", p.Decision, err)
	}
	st, _ := r.WithPrefix("racy:").Load(ctx, "k")
	st.Sub[1].N++
	if err := r.WithPrefix("racy:").Save(ctx, "k", st, time.Minute); err != nil {
		t.Fatal(err)
	}
	if ok, err := p.CompareAndWrite(ctx); ok || err != nil {
		t.Errorf("CompareAndWrite after another write to the second limit: %v, %v; want false", ok, err)
	}
	if _, err := r.WithPrefix("x{}").Take(ctx, "k", 0, 1); err == nil {
		t.Error("Take under a prefix with an empty hash tag: no error")
	}
	if err := r.Save(ctx, "k", algorithms.State{Sub: make([]algorithms.State, 3)}, time.Second); err == nil {
		t.Error("Save of three limits' states on a key with two: no error")
	}
}
