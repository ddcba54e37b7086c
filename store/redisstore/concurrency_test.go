package redisstore

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"pgregory.net/rapid"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/store"
)

// The concurrency tests: the Lua twin (lua/concurrency.lua) and its release
// script (lib/release.lua) against algorithms.Concurrency, alone and as
// one limit of a Multi, on random sequences of takes and releases; a key
// hammered by goroutines that never holds more than its limit; leases
// that expire when their holder never gives them back.

// concHeld is a lease an admitted request holds, as the test keeps it.
type concHeld struct {
	lease algorithms.Time
	cost  int64
}

// concDraw draws a limiter: 1 to 5 in flight, a TTL from a millisecond to
// a minute.
func concDraw(t *rapid.T) *algorithms.Concurrency {
	limit := rapid.Int64Range(1, 5).Draw(t, "max in flight")
	ttl := rapid.SampledFrom([]time.Duration{
		time.Millisecond, 50 * time.Millisecond, 700 * time.Millisecond, time.Second, 10 * time.Second, time.Minute,
	}).Draw(t, "ttl")
	c, err := algorithms.NewConcurrency(limit, ttl)
	if err != nil {
		t.Fatalf("NewConcurrency(%d, %s): %v", limit, ttl, err)
	}
	return c
}

// concStart draws where a sequence's clock starts: 0, hours into a virtual
// clock, a Unix clock, or before the epoch.
func concStart(t *rapid.T) algorithms.Time {
	return algorithms.Time(rapid.OneOf(
		rapid.Just(int64(0)),
		rapid.Int64Range(0, 10_000_000_000),
		rapid.Int64Range(1_700_000_000_000_000, 1_800_000_000_000_000),
		rapid.Int64Range(-10_000_000_000, -1),
	).Draw(t, "start"))
}

// concStep draws the clock's next move on the scale of ttl (µs): none, a
// few µs, part of a TTL, about one TTL (either side of an expiry), several,
// and now and then backwards, a little or by up to a TTL.
func concStep(t *rapid.T, ttl int64) int64 {
	switch kind := rapid.IntRange(0, 99).Draw(t, "delta kind"); {
	case kind < 20:
		return 0
	case kind < 35:
		return rapid.Int64Range(1, 100).Draw(t, "µs")
	case kind < 60:
		return rapid.Int64Range(0, ttl).Draw(t, "part of a ttl")
	case kind < 72:
		return ttl + rapid.Int64Range(-2, 2).Draw(t, "jitter")
	case kind < 80:
		return rapid.Int64Range(2, 5).Draw(t, "ttls") * ttl
	case kind < 90:
		return -rapid.Int64Range(1, 3).Draw(t, "small skew")
	default:
		return -rapid.Int64Range(1, ttl).Draw(t, "skew")
	}
}

// concDrawRelease picks what to give back from held: mostly a lease held,
// with its cost (now and then another), which leaves held; sometimes one
// given back already or expired (a release twice, or too late), a lease
// never taken, or 0.
func concDrawRelease(t *rapid.T, held []concHeld, now algorithms.Time) (concHeld, []concHeld) {
	switch kind := rapid.IntRange(0, 99).Draw(t, "release kind"); {
	case kind < 70 && len(held) > 0:
		i := rapid.IntRange(0, len(held)-1).Draw(t, "which")
		h := held[i]
		if rapid.IntRange(0, 4).Draw(t, "other cost") == 0 {
			h.cost = rapid.Int64Range(0, 4).Draw(t, "release cost")
		}
		return h, slices.Delete(held, i, i+1)
	case kind < 85 && len(held) > 0:
		return held[rapid.IntRange(0, len(held)-1).Draw(t, "again")], held
	case kind < 97:
		return concHeld{now + algorithms.Time(rapid.Int64Range(-5, 100_000_000).Draw(t, "never taken")), 1}, held
	default:
		return concHeld{0, 1}, held
	}
}

// concTTL is the PTTL the twin leaves on a key whose last lease expires
// at last: a second after it, rounded up to the millisecond.
func concTTL(now algorithms.Time, last int64) time.Duration {
	return time.Duration((last-int64(now)+999)/1000+1000) * time.Millisecond
}

// concStats counts what the differential runs exercised, for the log.
type concStats struct {
	takes, allowed, refused, never, capped, releases, freed, inside, backwards atomic.Int64
}

func (s *concStats) String() string {
	return fmt.Sprintf("%d takes (%d allowed, %d refused: %d never, %d with Retry-After capped), "+
		"%d releases (%d freed a lease), %d leases put inside the log (a clock gone backwards), %d ops with the clock backwards",
		s.takes.Load(), s.allowed.Load(), s.refused.Load(), s.never.Load(), s.capped.Load(),
		s.releases.Load(), s.freed.Load(), s.inside.Load(), s.backwards.Load())
}

// concCheckSequence runs a drawn sequence of takes and releases on key
// through algorithms.Concurrency (the oracle), the memory store and the
// Redis store r, and fails at the first operation where a Decision or a
// Load differs, or where the key's TTL is not a second past its last
// lease (exactly on miniredis, whose TTLs do not count down; at most that
// on a real server). Every few operations it Saves the oracle's state
// under another key and Loads it back.
func concCheckSequence(t *rapid.T, ctx context.Context, c *redis.Client, r *Store, exactTTL bool, stats *concStats) {
	alg := concDraw(t)
	ttl := int64(alg.Params().Window / time.Microsecond)
	mem := store.NewMemory(alg)
	r.script, _ = scriptFor(alg)
	const key = "k"
	k := r.opts.Prefix + key
	var st algorithms.State
	var held []concHeld
	var wantTTL time.Duration
	now := concStart(t)
	for i := range rapid.IntRange(1, 50).Draw(t, "ops") {
		step := concStep(t, ttl)
		now += algorithms.Time(step)
		if step < 0 {
			stats.backwards.Add(1)
		}
		prev := st
		var op string
		if len(held) > 0 && rapid.IntRange(0, 2).Draw(t, "release?") == 0 || rapid.IntRange(0, 19).Draw(t, "stray release?") == 0 {
			var h concHeld
			h, held = concDrawRelease(t, held, now)
			op = fmt.Sprintf("Release(now=%d, lease=%d, cost=%d)", now, h.lease, h.cost)
			if h.lease != 0 {
				st = alg.Release(st, now, h.lease, h.cost)
			}
			if err := r.Release(ctx, key, now, h.lease, h.cost); err != nil {
				t.Fatalf("op %d %s: Redis: %v", i, op, err)
			}
			if err := mem.Release(ctx, key, now, h.lease, h.cost); err != nil {
				t.Fatalf("op %d %s: memory: %v", i, op, err)
			}
			stats.releases.Add(1)
			if len(st.Log) < len(prev.Log) && !slices.Equal(alg.Release(prev, now, 0, 0).Log, st.Log) {
				stats.freed.Add(1)
			}
			if !store.EqualStates(prev, st) && len(st.Log) > 0 {
				wantTTL = concTTL(now, st.Log[len(st.Log)-1])
			}
		} else {
			cost := rapid.Int64Range(0, 3).Draw(t, "cost")
			if rapid.IntRange(0, 19).Draw(t, "over?") == 0 {
				cost = alg.Params().Burst + 1
			}
			op = fmt.Sprintf("Take(now=%d, cost=%d)", now, cost)
			var want algorithms.Decision
			st, want = alg.Step(st, now, cost)
			got, err := r.Take(ctx, key, now, cost)
			if err != nil {
				t.Fatalf("op %d %s: Redis: %v", i, op, err)
			}
			if got.Decision != want {
				t.Fatalf("op %d %s, max %d ttl %d µs, state before %v:\n  Go:    %+v\n  Redis: %+v",
					i, op, alg.Params().Burst, ttl, prev.Log, want, got.Decision)
			}
			if d, _ := mem.Take(ctx, key, now, cost); d.Decision != want {
				t.Fatalf("op %d %s: state before %v:\n  Go:     %+v\n  memory: %+v", i, op, prev.Log, want, d.Decision)
			}
			if want.Allowed && cost > 0 {
				held = append(held, concHeld{want.Lease, cost})
				if n := len(st.Log); st.Log[n-1] != int64(want.Lease) {
					stats.inside.Add(1)
				}
			}
			stats.takes.Add(1)
			switch {
			case want.Allowed:
				stats.allowed.Add(1)
			case want.RetryAfter == algorithms.Never:
				stats.refused.Add(1)
				stats.never.Add(1)
			default:
				stats.refused.Add(1)
				if want.RetryAfter == algorithms.MaxConcurrencyRetry {
					stats.capped.Add(1)
				}
			}
			wantTTL = luaWantTTL(want)
		}
		stored, err := r.Load(ctx, key)
		if err != nil {
			t.Fatalf("op %d %s: Load: %v", i, op, err)
		}
		inMemory, _ := mem.Load(ctx, key)
		if !store.EqualStates(stored, st) || !store.EqualStates(inMemory, st) {
			t.Fatalf("op %d %s, state before %v:\n  Go state:    %v\n  Redis Load:  %v\n  memory Load: %v",
				i, op, prev.Log, st.Log, stored.Log, inMemory.Log)
		}
		if len(st.Log) > 0 {
			got := c.PTTL(ctx, k).Val()
			if exactTTL && got != wantTTL || !exactTTL && (got <= 0 || got > wantTTL) {
				t.Fatalf("op %d %s: PTTL %v, want %v", i, op, got, wantTTL)
			}
		}
		if i%7 == 6 {
			if err := r.Save(ctx, "saved", st, time.Minute); err != nil {
				t.Fatalf("op %d: Save: %v", i, err)
			}
			if back, err := r.Load(ctx, "saved"); err != nil || !store.EqualStates(back, st) {
				t.Fatalf("op %d: Save then Load: %v, %v; want %v", i, back.Log, err, st.Log)
			}
		}
	}
}

var concSeq atomic.Int64

func concDifferential(t *testing.T, c *redis.Client, prefix string, exactTTL bool) {
	ctx := context.Background()
	var stats concStats
	rapid.Check(t, func(rt *rapid.T) {
		p := fmt.Sprintf("%s%d:", prefix, concSeq.Add(1))
		r := &Store{client: c, opts: Options{Prefix: p}, loaded: new(atomic.Bool), derived: true}
		concCheckSequence(rt, ctx, c, r, exactTTL, &stats)
	})
	t.Logf("%s", &stats)
}

// TestConcurrencyLuaDifferentialMiniredis: the twin decides every take as
// algorithms.Concurrency.Step does, field for field (the lease included),
// the release script gives back what Release does, and the key holds the
// oracle's (and the memory store's) lease log after every operation.
func TestConcurrencyLuaDifferentialMiniredis(t *testing.T) {
	_, c := newLuaMiniredis(t)
	concDifferential(t, c, "conctest:", true)
}

// TestConcurrencyLuaDifferentialRealRedis is the same on the server
// REDIS_URL names.
func TestConcurrencyLuaDifferentialRealRedis(t *testing.T) {
	c := realRedisClient(t)
	prefix := fmt.Sprintf("ratelim:conctest:%d:%d:", os.Getpid(), time.Now().UnixNano())
	t.Cleanup(func() { deleteUnder(t, c, prefix) })
	concDifferential(t, c, prefix, false)
}

// TestConcurrencyLuaEdgeCases pins the branches: duplicate leases given
// back one cost at a time, a release of more than is held, of a lease
// expired, twice; a clock gone backwards putting a lease inside the log;
// a cost above the limit; leases expiring at exactly their instant.
func TestConcurrencyLuaEdgeCases(t *testing.T) {
	_, c := newLuaMiniredis(t)
	ctx := context.Background()
	alg, err := algorithms.NewConcurrency(3, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	type op struct {
		release     bool
		now         algorithms.Time
		lease, cost int64 // lease: a Release's
	}
	take := func(now algorithms.Time, cost int64) op { return op{now: now, cost: cost} }
	give := func(now algorithms.Time, lease, cost int64) op { return op{true, now, lease, cost} }
	for name, ops := range map[string][]op{
		"duplicates":        {take(0, 1), take(0, 1), take(0, 1), take(0, 1), give(1, 1_000_000, 1), take(2, 1), give(3, 1_000_000, 3), take(4, 2)},
		"more than held":    {take(0, 2), give(1, 1_000_000, 5), take(2, 3), take(3, 1)},
		"expired":           {take(0, 1), take(500_000, 1), give(1_000_000, 1_000_000, 1), take(1_000_000, 2), take(1_000_000, 1)},
		"twice":             {take(0, 1), give(1, 1_000_000, 1), give(2, 1_000_000, 1), take(3, 3)},
		"backwards":         {take(1_000_000, 1), take(500_000, 1), take(0, 1), take(10, 1), give(20, 1_500_000, 1), take(30, 1)},
		"backwards, a cost": {take(900_000, 1), take(0, 2), give(5, 1_000_000, 1), take(6, 1), give(7, 1_900_000, 2), take(8, 1)},
		"over the limit":    {take(0, 4), take(0, 3), take(1, 4), take(2, 0)},
		"at the instant":    {take(0, 2), take(999_999, 1), take(1_000_000, 2), take(1_999_999, 1), take(2_000_000, 3)},
		"cost 0 release":    {take(0, 1), take(600_000, 1), give(1_200_000, 1_600_000, 0), take(1_200_001, 0)},
		"retry capped":      {take(0, 3), take(1, 1), take(999_000, 1), take(999_999, 3)},
	} {
		t.Run(name, func(t *testing.T) {
			r := redisOn(t, c, alg, "edge:"+name+":")
			var st algorithms.State
			for i, o := range ops {
				if o.release {
					st = alg.Release(st, o.now, algorithms.Time(o.lease), o.cost)
					if err := r.Release(ctx, "k", o.now, algorithms.Time(o.lease), o.cost); err != nil {
						t.Fatalf("op %d: %v", i, err)
					}
				} else {
					var want algorithms.Decision
					st, want = alg.Step(st, o.now, o.cost)
					got, err := r.Take(ctx, "k", o.now, o.cost)
					if err != nil {
						t.Fatalf("op %d: %v", i, err)
					}
					if got.Decision != want {
						t.Fatalf("op %d %+v:\n  Go:  %+v\n  Lua: %+v", i, o, want, got.Decision)
					}
				}
				if stored, err := r.Load(ctx, "k"); err != nil || !store.EqualStates(stored, st) {
					t.Fatalf("op %d %+v: Load %v, %v; Go %v", i, o, stored.Log, err, st.Log)
				}
			}
		})
	}
}

// concMultiDraw draws a Multi of a token bucket, a concurrency limit and
// now and then a third exact limit, in random order, any of them at times
// in shadow mode.
func concMultiDraw(t *rapid.T) (*algorithms.Multi, int64) {
	conc := concDraw(t)
	ps := []algorithms.Policy{
		{Name: "bucket", Algorithm: luaDrawAlgorithm(t, "token-bucket")},
		{Name: "in-flight", Algorithm: conc},
	}
	if rapid.Bool().Draw(t, "third limit") {
		name := rapid.SampledFrom(algorithms.ExactNames()).Draw(t, "third algorithm")
		ps = append(ps, algorithms.Policy{Name: "third", Algorithm: luaDrawAlgorithm(t, name)})
	}
	for i := range ps {
		if rapid.IntRange(0, 5).Draw(t, "shadow") == 0 {
			ps[i].Shadow = true
		}
	}
	perm := rapid.Permutation(ps).Draw(t, "order")
	m, err := algorithms.NewMulti(perm)
	if err != nil {
		t.Fatalf("NewMulti: %v", err)
	}
	return m, int64(conc.Params().Window / time.Microsecond)
}

// TestConcurrencyInMultiMiniredis: a key with a token bucket and a
// concurrency limit (and at times a third limit) decides every take as
// algorithms.Multi.Step does, the lease included (Combine reads it from
// the concurrency limit's reply), gives leases back as Multi.Release does,
// and holds the oracle's state in every limit after every operation.
func TestConcurrencyInMultiMiniredis(t *testing.T) {
	_, c := newLuaMiniredis(t)
	concMultiDifferential(t, c, "concmulti:")
}

// TestConcurrencyInMultiRealRedis is the same on REDIS_URL's server.
func TestConcurrencyInMultiRealRedis(t *testing.T) {
	c := realRedisClient(t)
	prefix := fmt.Sprintf("ratelim:concmulti:%d:%d:", os.Getpid(), time.Now().UnixNano())
	t.Cleanup(func() { deleteUnder(t, c, prefix) })
	concMultiDifferential(t, c, prefix)
}

func concMultiDifferential(t *testing.T, c *redis.Client, prefix string) {
	ctx := context.Background()
	var takes, leases, refusedHolding, releases atomic.Int64
	rapid.Check(t, func(rt *rapid.T) {
		m, ttl := concMultiDraw(rt)
		r := redisOn(rt, c, m, fmt.Sprintf("%s%d:", prefix, concSeq.Add(1)))
		mem := store.NewMemory(m)
		const key = "k"
		var st algorithms.State
		var held []concHeld
		now := concStart(rt)
		for i := range rapid.IntRange(1, 40).Draw(rt, "ops") {
			now += algorithms.Time(concStep(rt, ttl))
			prev := st
			var op string
			if len(held) > 0 && rapid.IntRange(0, 2).Draw(rt, "release?") == 0 {
				var h concHeld
				h, held = concDrawRelease(rt, held, now)
				op = fmt.Sprintf("Release(now=%d, lease=%d, cost=%d)", now, h.lease, h.cost)
				if h.lease != 0 {
					st = m.Release(st, now, h.lease, h.cost)
				}
				if err := r.Release(ctx, key, now, h.lease, h.cost); err != nil {
					rt.Fatalf("op %d %s: Redis: %v", i, op, err)
				}
				if err := mem.Release(ctx, key, now, h.lease, h.cost); err != nil {
					rt.Fatalf("op %d %s: memory: %v", i, op, err)
				}
				releases.Add(1)
			} else {
				cost := rapid.Int64Range(0, 3).Draw(rt, "cost")
				op = fmt.Sprintf("Take(now=%d, cost=%d)", now, cost)
				var want algorithms.Decision
				st, want = m.Step(st, now, cost)
				got, err := r.Take(ctx, key, now, cost)
				if err != nil {
					rt.Fatalf("op %d %s: Redis: %v", i, op, err)
				}
				if got.Decision != want {
					rt.Fatalf("op %d %s on %s, state before %+v:\n  Go:    %+v\n  Redis: %+v", i, op, multiDescribe(m), prev, want, got.Decision)
				}
				if d, _ := mem.Take(ctx, key, now, cost); d.Decision != want {
					rt.Fatalf("op %d %s on %s:\n  Go:     %+v\n  memory: %+v", i, op, multiDescribe(m), want, d.Decision)
				}
				takes.Add(1)
				if want.Lease != 0 {
					leases.Add(1)
					held = append(held, concHeld{want.Lease, cost})
				} else if !want.Allowed && len(held) > 0 {
					refusedHolding.Add(1)
				}
			}
			stored, err := r.Load(ctx, key)
			if err != nil {
				rt.Fatalf("op %d %s: Load: %v", i, op, err)
			}
			inMemory, _ := mem.Load(ctx, key)
			if !sameState(stored, st) || !sameState(inMemory, st) {
				rt.Fatalf("op %d %s on %s, state before %+v:\n  Go state:    %+v\n  Redis Load:  %+v\n  memory Load: %+v",
					i, op, multiDescribe(m), prev, st, stored, inMemory)
			}
		}
	})
	t.Logf("%d takes, %d took a lease, %d refused while leases were held; %d releases",
		takes.Load(), leases.Load(), refusedHolding.Load(), releases.Load())
}

// concStores returns the stores the concurrency properties run on: memory,
// miniredis, and the REDIS_URL server when it is set.
func concStores(t *testing.T, alg algorithms.Algorithm) map[string]interface {
	store.Limiter
	store.Releaser
	store.KV
} {
	t.Helper()
	mini, err := Open(context.Background(), alg, Options{URL: store.Embedded, Prefix: "conc:"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mini.Close() })
	stores := map[string]interface {
		store.Limiter
		store.Releaser
		store.KV
	}{"memory": store.NewMemory(alg), "miniredis": mini}
	if real := openRealRedis(t, alg); real != nil {
		stores["redis-server"] = real
	}
	return stores
}

// TestConcurrencyGoroutinesNeverOverHold: goroutines take and give back
// leases on one key at once; the requests in flight by the test's own
// count (admitted and not yet given back: counted up after the store
// admits, down before the release is sent, so the count never runs ahead
// of the store's) never exceed the limit, the limit is reached, and once
// every lease is back the key holds none. The TTL is an hour: nothing
// expires.
func TestConcurrencyGoroutinesNeverOverHold(t *testing.T) {
	const limit, goroutines, perGoroutine = 4, 8, 40
	alg, err := algorithms.NewConcurrency(limit, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range concStores(t, alg) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			var clock, inFlight, peak, admitted, refused atomic.Int64
			clock.Store(1_000_000)
			var wg sync.WaitGroup
			errs := make(chan error, goroutines)
			for g := range goroutines {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range perGoroutine {
						cost := int64(1 + (g+i)%2)
						d, err := s.Take(ctx, "hot", algorithms.Time(clock.Add(1)), cost)
						if err != nil {
							errs <- err
							return
						}
						if !d.Allowed {
							refused.Add(1)
							continue
						}
						admitted.Add(1)
						n := inFlight.Add(cost)
						for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
						}
						if n > limit {
							errs <- fmt.Errorf("%d in flight, limit %d", n, limit)
							return
						}
						time.Sleep(50 * time.Microsecond) // the request runs
						inFlight.Add(-cost)
						if err := s.Release(ctx, "hot", algorithms.Time(clock.Add(1)), d.Lease, cost); err != nil {
							errs <- err
							return
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			if peak.Load() < limit-1 {
				t.Errorf("peak %d in flight: the goroutines never came near the limit %d", peak.Load(), limit)
			}
			st, err := s.Load(ctx, "hot")
			if err != nil {
				t.Fatal(err)
			}
			if len(st.Log) != 0 {
				t.Errorf("every lease given back, yet the key holds %v", st.Log)
			}
			t.Logf("%d admitted, %d refused, peak %d in flight of %d", admitted.Load(), refused.Load(), peak.Load(), limit)
		})
	}
}

// TestConcurrencyLeasesExpire: a holder that crashes never gives its
// leases back; until their TTL the key is full, and from the instant they
// expire it admits again, on every store. On miniredis, where the key
// itself expires a second after its last lease, FastForward drops it.
func TestConcurrencyLeasesExpire(t *testing.T) {
	const ttl = 2 * time.Second
	alg, err := algorithms.NewConcurrency(2, ttl)
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range concStores(t, alg) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			const t0 = algorithms.Time(5_000_000)
			for _, step := range []struct {
				now       algorithms.Time
				cost      int64
				allowed   bool
				remaining int64
				retry     time.Duration
			}{
				{t0, 2, true, 0, 0}, // the holder takes both slots, then crashes
				{t0 + 1, 1, false, 0, algorithms.MaxConcurrencyRetry},                    // leaked: full
				{t0 + algorithms.At(ttl) - 500_000, 1, false, 0, 500 * time.Millisecond}, // nearly expired: the wait is what is left
				{t0 + algorithms.At(ttl) - 1, 1, false, 0, time.Microsecond},
				{t0 + algorithms.At(ttl), 1, true, 1, 0}, // expired at their instant
				{t0 + algorithms.At(ttl), 1, true, 0, 0},
			} {
				d, err := s.Take(ctx, "crashed", step.now, step.cost)
				if err != nil {
					t.Fatal(err)
				}
				if d.Allowed != step.allowed || d.Remaining != step.remaining || d.RetryAfter != step.retry {
					t.Fatalf("at %d cost %d: %+v, want allowed %v remaining %d retry %v",
						step.now, step.cost, d.Decision, step.allowed, step.remaining, step.retry)
				}
			}
			mini, ok := s.(*Store)
			if !ok || mini.Embedded() == nil {
				return
			}
			k := mini.opts.Prefix + "crashed"
			if got, want := mini.Embedded().TTL(k), ttl+time.Second; got != want {
				t.Fatalf("TTL %v, want the TTL plus a second, %v", got, want)
			}
			mini.Embedded().FastForward(ttl + time.Second)
			if mini.Embedded().Exists(k) {
				t.Fatal("key still there a second after its last lease expired")
			}
		})
	}
}

// TestConcurrencyStoreClock: with the store clock, Take and Release both
// decide at Redis TIME (miniredis's SetTime), ignoring the now passed in:
// a release at a store instant after the first lease expired also forgets
// it, as algorithms.Concurrency.Release at that instant does.
func TestConcurrencyStoreClock(t *testing.T) {
	mr, c := newLuaMiniredis(t)
	ctx := context.Background()
	alg, err := algorithms.NewConcurrency(3, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []algorithms.Algorithm{alg, mustMulti(t,
		algorithms.Policy{Name: "bucket", Algorithm: mustAlg(t, "token-bucket", algorithms.Params{Rate: algorithms.Rate{N: 100, Per: time.Second}, Burst: 100})},
		algorithms.Policy{Name: "in-flight", Algorithm: alg})} {
		t.Run(a.Name(), func(t *testing.T) {
			r := redisOn(t, c, a, "clock:"+a.Name()+":")
			r.opts.StoreClock = true
			base := algorithms.Time(1_700_000_000_000_000)
			var st algorithms.State
			var leases []algorithms.Time
			check := func(what string) {
				t.Helper()
				if stored, err := r.Load(ctx, "k"); err != nil || !store.EqualStates(stored, st) {
					t.Fatalf("%s: Load %+v, %v; Go %+v", what, stored, err, st)
				}
			}
			for i, off := range []int64{0, 400_000, 700_000} {
				at := base + algorithms.Time(off)
				mr.SetTime(time.UnixMicro(int64(at)))
				var want algorithms.Decision
				st, want = a.Step(st, at, 1)
				got, err := r.Take(ctx, "k", 42, 1) // 42 must be ignored
				if err != nil {
					t.Fatal(err)
				}
				if got.Decision != want || want.Lease != at+1_000_000 {
					t.Fatalf("take %d at store time %d:\n  Go:    %+v\n  Redis: %+v", i, at, want, got.Decision)
				}
				leases = append(leases, want.Lease)
			}
			check("after the takes")
			// At base + 1.2 s the first lease has expired: the release of
			// the second forgets the first as well.
			at := base + 1_200_000
			mr.SetTime(time.UnixMicro(int64(at)))
			st = a.(interface {
				Release(algorithms.State, algorithms.Time, algorithms.Time, int64) algorithms.State
			}).Release(st, at, leases[1], 1)
			if err := r.Release(ctx, "k", 42, leases[1], 1); err != nil {
				t.Fatal(err)
			}
			check("after the release at the store's instant")
		})
	}
}

// TestConcurrencyReleaseElsewhere: a store whose algorithm hands out no
// leases sends nothing on Release; a negative cost is an error; a Multi
// without a concurrency limit has no lease keys.
func TestConcurrencyReleaseElsewhere(t *testing.T) {
	ctx := context.Background()
	var trips atomic.Int64
	r, err := Open(ctx, tokenBucket(t, 10, 5), Options{URL: store.Embedded})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.client.AddHook(countingHook{&trips})
	if err := r.Release(ctx, "k", 1, 5, 1); err != nil || trips.Load() != 0 {
		t.Errorf("Release on a token bucket: %v, %d round trips; want nil, 0", err, trips.Load())
	}
	if err := r.Release(ctx, "k", 1, 5, -1); err == nil {
		t.Error("Release with a negative cost: no error")
	}
	s, _ := scriptFor(perSecondAndHourly(t))
	if keys, err := s.leaseKeys("", "k"); err != nil || len(keys) != 0 {
		t.Errorf("leaseKeys of a Multi without a concurrency limit: %v, %v", keys, err)
	}
	alg, _ := algorithms.NewConcurrency(2, time.Second)
	s, _ = scriptFor(mustMulti(t, algorithms.Policy{Name: "a", Algorithm: tokenBucket(t, 10, 5)}, algorithms.Policy{Name: "b", Algorithm: alg}))
	all, _ := s.keys("p:", "k")
	if keys, err := s.leaseKeys("p:", "k"); err != nil || !slices.Equal(keys, all[1:]) {
		t.Errorf("leaseKeys of a Multi: %v, %v; want %v", keys, err, all[1:])
	}
	if d, err := s.decode(make([]int64, 11)); err == nil {
		t.Errorf("decode of a Multi reply 5 wide: %+v, want an error", d)
	}
	s, _ = scriptFor(alg)
	if d, err := s.decode([]int64{1, 1, 0, 5, 0, 7}); err != nil || d.Lease != 7 || !d.Allowed {
		t.Errorf("decode of a concurrency reply: %+v, %v", d, err)
	}
	if d, err := s.decode([]int64{1, 1, 0, 5, 0}); err == nil {
		t.Errorf("decode of a concurrency reply without its lease: %+v, want an error", d)
	}
}

// BenchmarkRedisTakeRelease is a concurrency-limited request's cost in
// Redis: its Take and, when it completes, its Release, two scripts and two
// round trips, beside BenchmarkRedisTake's one (a token bucket's Take).
// server-µs/op is both scripts' server time (INFO commandstats, evalsha).
//
//	REDIS_URL=redis://127.0.0.1:6379 go test -run '^$' -bench 'RedisTake' -count 5 ./store
func BenchmarkRedisTakeRelease(b *testing.B) {
	ctx := context.Background()
	alg, err := algorithms.NewConcurrency(50, 10*time.Second)
	if err != nil {
		b.Fatal(err)
	}
	r, err := Open(ctx, alg, Options{URL: benchRedisURL(), Prefix: "ratelim-bench:"})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { r.Clear(ctx); r.Close() }()
	d, err := r.Take(ctx, "k", 0, 1) // loads both scripts
	if err != nil {
		b.Fatal(err)
	}
	if err := r.Release(ctx, "k", 0, d.Lease, 1); err != nil {
		b.Fatal(err)
	}
	var trips atomic.Int64
	r.client.AddHook(countingHook{&trips})
	resetStats := r.embedded == nil && r.client.ConfigResetStat(ctx).Err() == nil
	trips.Store(0)
	now := algorithms.Time(0)
	for b.Loop() {
		now += 100
		d, err := r.Take(ctx, "k", now, 1)
		if err != nil || !d.Allowed {
			b.Fatalf("take: %+v, %v", d, err)
		}
		if err := r.Release(ctx, "k", now+50, d.Lease, 1); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(trips.Load())/float64(b.N), "roundtrips/op")
	if resetStats {
		if us, ok := serverMicrosPerCall(ctx, r.client, "evalsha"); ok {
			b.ReportMetric(2*us, "server-µs/op")
		}
	}
}
