package peers

// An internal test: the differential test against miniredis needs the
// model to print numbers as gopher-lua does (RedisRate.shortest), which no
// exported API should offer.

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/internal/testsize"
)

// Origins for the tests: Unix µs of 2026-01-01 and 2025-01-01. They are in
// different binades of seconds since 2017 (above and below 2^28 s, which
// was 2025-07-05), where a double's spacing is 2^-24 s and 2^-25 s, and
// the ties round differently.
const (
	origin2026 = algorithms.Time(1767225600_000_000)
	origin2025 = algorithms.Time(1735689600_000_000)
)

// redisRateRace reports whether the test binary runs under the race
// detector, which slows miniredis's Lua tenfold.
func redisRateRace() bool {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "-race" {
				return s.Value == "true"
			}
		}
	}
	return false
}

type redisRateReq struct {
	at   algorithms.Time
	cost int64
}

// redisRateRequests draws n arrivals for limit p: ties (30%), gaps of a
// few µs, of up to two emission intervals and of up to a whole burst's
// refill, costs mostly 1 but 0..3 and now and then burst+1; with back
// set, 3% of arrivals step the clock back by up to two intervals.
func redisRateRequests(rng *rand.Rand, n int, p algorithms.Params, back bool) []redisRateReq {
	interval := max(int64(p.Rate.Per/time.Microsecond)/p.Rate.N, 1)
	reqs := make([]redisRateReq, n)
	at := algorithms.Time(rng.Int64N(1_000_000_000))
	for i := range reqs {
		switch r := rng.IntN(100); {
		case r < 30:
		case r < 50:
			at += algorithms.Time(1 + rng.Int64N(1000))
		case r < 80:
			at += algorithms.Time(rng.Int64N(2 * interval))
		default:
			at += algorithms.Time(rng.Int64N(3*interval*p.Burst/2 + 1))
		}
		if back && rng.IntN(100) < 3 {
			at -= algorithms.Time(1 + rng.Int64N(2*interval))
		}
		cost := int64(1)
		switch r := rng.IntN(100); {
		case r < 1:
			cost = p.Burst + 1
		case r < 40:
			cost = rng.Int64N(4)
		}
		reqs[i] = redisRateReq{at, cost}
	}
	return reqs
}

// fromResult is the Decision a redis_rate.Result stands for: admitted if
// it admitted something, or, for a cost of 0, if it took the admitting
// branch (RetryAfter −1); RetryAfter −1 is 0.
func fromResult(res *redis_rate.Result, cost int64) algorithms.Decision {
	d := algorithms.Decision{
		Allowed:    res.Allowed > 0 || (cost == 0 && res.RetryAfter == -1),
		Limit:      int64(res.Limit.Burst),
		Remaining:  int64(res.Remaining),
		RetryAfter: res.RetryAfter,
		ResetAfter: res.ResetAfter,
	}
	if d.RetryAfter == -1 {
		d.RetryAfter = 0
	}
	return d
}

var redisRateConfigs = []struct {
	name string
	p    algorithms.Params
	n    int // decisions without -race, on a real redis-server
	// mini is the decisions on miniredis, where a call costs ~300 µs and
	// the library's AllowN itself is called: 100,000 in the first
	// configuration, 10,000 in the others (the real server runs n).
	// These are the exhaustive sizes (testsize); go test ./... runs at
	// most 20,000 on miniredis, where the model printing seconds to 14
	// digits (Redis's tostring) instead of gopher-lua's shortest is found
	// at decision 4,526 of 100/m burst 100, and a fifth of n on the real
	// server.
	mini   int
	back   bool
	seed   uint64
	checkT bool // compare the stored TAT after every decision
}{
	{"3/s burst 5", algorithms.Params{Rate: algorithms.Rate{N: 3, Per: time.Second}, Burst: 5, Origin: origin2026}, 100_000, 100_000, false, 1, false},
	{"3/s burst 5 in 2025", algorithms.Params{Rate: algorithms.Rate{N: 3, Per: time.Second}, Burst: 5, Origin: origin2025}, 100_000, 10_000, false, 2, true},
	{"10/s burst 1", algorithms.Params{Rate: algorithms.Rate{N: 10, Per: time.Second}, Burst: 1, Origin: origin2026}, 100_000, 10_000, false, 3, true},
	{"100/m burst 100", algorithms.Params{Rate: algorithms.Rate{N: 100, Per: time.Minute}, Burst: 100, Origin: origin2026}, 100_000, 10_000, false, 4, true},
	{"7/500ms burst 3", algorithms.Params{Rate: algorithms.Rate{N: 7, Per: 500 * time.Millisecond}, Burst: 3, Origin: origin2026}, 100_000, 10_000, false, 5, true},
	{"10/s burst 50, clock steps back", algorithms.Params{Rate: algorithms.Rate{N: 10, Per: time.Second}, Burst: 50, Origin: origin2026}, 100_000, 10_000, true, 6, true},
}

// TestRedisRateMatchesTheLibraryOnMiniredis drives the real
// redis_rate.Limiter, through a go-redis client, on a miniredis whose
// clock is set to Origin + at before each AllowN, and the model with the
// same instants and costs: every field of every Result must match, and
// the TAT the script stored must be the model's, bit for bit. miniredis
// runs the script on gopher-lua, whose tostring prints the shortest
// decimal that reads back (Redis's Lua prints 14 digits): the model is
// switched to it here; TestRedisRateMatchesRedis checks the 14 digits.
func TestRedisRateMatchesTheLibraryOnMiniredis(t *testing.T) {
	ctx := context.Background()
	for _, c := range redisRateConfigs {
		t.Run(c.name, func(t *testing.T) {
			// A server of its own, whose clock no other configuration
			// sets: the configurations run at once, one per core.
			t.Parallel()
			mr := miniredis.RunT(t)
			rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
			t.Cleanup(func() { rdb.Close() })
			limiter := redis_rate.NewLimiter(rdb)
			n := testsize.Pick(min(c.mini, 20_000), c.mini)
			if redisRateRace() {
				n = min(n/10, 1000)
			}
			m := must(NewRedisRate(c.p)).(*RedisRate)
			m.shortest = true
			limit := redis_rate.Limit{Rate: int(c.p.Rate.N), Period: c.p.Rate.Per, Burst: int(c.p.Burst)}
			key := "differential " + c.name
			var st algorithms.State
			for i, r := range redisRateRequests(rand.New(rand.NewPCG(c.seed, 14)), n, c.p, c.back) {
				mr.SetTime(time.UnixMicro(int64(c.p.Origin + r.at)))
				res, err := limiter.AllowN(ctx, key, limit, int(r.cost))
				if err != nil {
					t.Fatal(err)
				}
				var d algorithms.Decision
				st, d = m.Step(st, r.at, r.cost)
				if want := fromResult(res, r.cost); d != want {
					t.Fatalf("decision %d (at %dµs, cost %d): model %+v, redis_rate %+v", i, r.at, r.cost, d, want)
				}
				if c.checkT || i%64 == 0 {
					stored, err := rdb.Get(ctx, "rate:"+key).Float64()
					if errors.Is(err, redis.Nil) {
						stored, err = 0, nil
					}
					if err != nil {
						t.Fatal(err)
					}
					if model := math.Float64frombits(uint64(st.N)); model != stored {
						t.Fatalf("decision %d (at %dµs, cost %d): model TAT %v, stored %v", i, r.at, r.cost, model, stored)
					}
				}
			}
			t.Logf("%d decisions, no mismatch", n)
		})
	}
}

// allowNSource returns the allowN script of the redis_rate module in the
// build, read from its source in the module cache.
func allowNSource(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/go-redis/redis_rate/v10").Output()
	if err != nil {
		t.Skipf("cannot locate redis_rate's source: %v", err)
	}
	src, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "lua.go"))
	if err != nil {
		t.Skipf("cannot read redis_rate's lua.go: %v", err)
	}
	_, rest, ok := strings.Cut(string(src), "var allowN = redis.NewScript(`")
	script, _, ok2 := strings.Cut(rest, "`)")
	if !ok || !ok2 {
		t.Fatal("lua.go has no allowN script")
	}
	return script
}

// TestRedisRateMatchesRedis runs on a real Redis (REDIS_URL, skipped
// without it), whose TIME cannot be set. What can be compared is compared:
// the library's own allowN script, read from its source, with TIME's two
// strings passed in as ARGV[5] and ARGV[6] instead (the only change), on
// Redis's Lua 5.1 and its %.14g tostring, its reply parsed as AllowN
// parses it; and a call of the real AllowN, after which Redis holds a
// script whose SHA1 is that of the text the test patched.
func TestRedisRateMatchesRedis(t *testing.T) {
	url := os.Getenv("REDIS_URL")
	if url == "" {
		t.Skip("REDIS_URL not set")
	}
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { rdb.Close() })
	ctx := context.Background()
	src := allowNSource(t)

	// The text read is the script the library runs.
	sum := sha1.Sum([]byte(src))
	if _, err := redis_rate.NewLimiter(rdb).Allow(ctx, "ratelim-test-sha", redis_rate.PerSecond(1)); err != nil {
		t.Fatal(err)
	}
	if ok, err := rdb.ScriptExists(ctx, hex.EncodeToString(sum[:])).Result(); err != nil || !ok[0] {
		t.Fatalf("Redis does not hold a script with the SHA1 of allowN as read (%v, %v)", ok, err)
	}
	rdb.Del(ctx, "rate:ratelim-test-sha")

	const call = `redis.call("TIME")`
	if strings.Count(src, call) != 1 {
		t.Fatalf("allowN calls TIME %d times, want once", strings.Count(src, call))
	}
	script := redis.NewScript(strings.Replace(src, call, "{ARGV[5], ARGV[6]}", 1))
	// dur is rate.go's.
	dur := func(f float64) time.Duration {
		if f == -1 {
			return -1
		}
		return time.Duration(f * float64(time.Second))
	}
	for _, c := range redisRateConfigs {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // each on a key of its own; the client is safe to share
			n := testsize.Pick(c.n/5, c.n)
			if redisRateRace() {
				n = min(n/10, 1000)
			}
			m := must(NewRedisRate(c.p)).(*RedisRate)
			limit := redis_rate.Limit{Rate: int(c.p.Rate.N), Period: c.p.Rate.Per, Burst: int(c.p.Burst)}
			key := "rate:ratelim-test " + c.name
			rdb.Del(ctx, key)
			t.Cleanup(func() { rdb.Del(ctx, key) })
			var st algorithms.State
			for i, r := range redisRateRequests(rand.New(rand.NewPCG(c.seed, 14)), n, c.p, c.back) {
				wall := int64(c.p.Origin + r.at)
				sec, us := wall/1_000_000, wall%1_000_000
				v, err := script.Run(ctx, rdb, []string{key}, limit.Burst, limit.Rate, limit.Period.Seconds(), int(r.cost), sec, us).Slice()
				if err != nil {
					t.Fatal(err)
				}
				retryAfter, err1 := strconv.ParseFloat(v[2].(string), 64)
				resetAfter, err2 := strconv.ParseFloat(v[3].(string), 64)
				if err := errors.Join(err1, err2); err != nil {
					t.Fatal(err)
				}
				want := fromResult(&redis_rate.Result{Limit: limit, Allowed: int(v[0].(int64)), Remaining: int(v[1].(int64)),
					RetryAfter: dur(retryAfter), ResetAfter: dur(resetAfter)}, r.cost)
				var d algorithms.Decision
				st, d = m.Step(st, r.at, r.cost)
				if d != want {
					t.Fatalf("decision %d (at %dµs, cost %d): model %+v, Redis %+v (reply %q)", i, r.at, r.cost, d, want, v)
				}
			}
			t.Logf("%d decisions, no mismatch", n)
		})
	}
}

// TestRedisRateRefusesATie is the quirk: burst requests at one instant on
// a new key, which the exact GCRA admits all of. redis_rate refuses the
// last whenever its increments round up at the magnitude of now: 3/s in
// 2025 (spacing 2^-25 s: the fifth waits 59 ns), 10/s in 2026 (spacing
// 2^-24 s: 119 ns). The real library on miniredis agrees.
func TestRedisRateRefusesATie(t *testing.T) {
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { rdb.Close() })
	limiter := redis_rate.NewLimiter(rdb)
	tests := []struct {
		name  string
		p     algorithms.Params
		retry time.Duration // the last request's Retry-After
	}{
		{"3/s burst 5 in 2025", algorithms.Params{Rate: algorithms.Rate{N: 3, Per: time.Second}, Burst: 5, Origin: origin2025}, 59 * time.Nanosecond},
		{"10/s burst 5 in 2026", algorithms.Params{Rate: algorithms.Rate{N: 10, Per: time.Second}, Burst: 5, Origin: origin2026}, 119 * time.Nanosecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := must(NewRedisRate(tt.p))
			exact := must(algorithms.NewGCRA(tt.p.Rate, tt.p.Burst))
			const at = algorithms.Time(123_456_789) // any instant in the binade will do
			mr.SetTime(time.UnixMicro(int64(tt.p.Origin + at)))
			limit := redis_rate.Limit{Rate: int(tt.p.Rate.N), Period: tt.p.Rate.Per, Burst: int(tt.p.Burst)}
			var st, est algorithms.State
			var d, ed algorithms.Decision
			for i := range tt.p.Burst {
				st, d = m.Step(st, at, 1)
				est, ed = exact.Step(est, at, 1)
				res, err := limiter.Allow(context.Background(), tt.name, limit)
				if err != nil {
					t.Fatal(err)
				}
				if lib := fromResult(res, 1); lib.Allowed != d.Allowed || lib.Remaining != d.Remaining || lib.RetryAfter != d.RetryAfter {
					t.Fatalf("request %d: model %+v, redis_rate %+v", i+1, d, lib)
				}
				if !ed.Allowed {
					t.Fatalf("request %d: the exact GCRA refused it: %+v", i+1, ed)
				}
				if last := i == tt.p.Burst-1; d.Allowed == last {
					t.Fatalf("request %d of %d: %+v, want all but the last admitted", i+1, tt.p.Burst, d)
				}
			}
			if d.RetryAfter != tt.retry {
				t.Errorf("the last request's Retry-After is %v, want %v", d.RetryAfter, tt.retry)
			}
			// A microsecond later it passes.
			if _, d := m.Step(st, at+1, 1); !d.Allowed {
				t.Errorf("refused again 1µs later: %+v", d)
			}
		})
	}
}

// TestRedisRateDisagreesWithTheExactGCRA counts, over random sequences,
// the decisions where redis_rate and the exact GCRA differ from the same
// history (after a disagreement both start again on a new key). Every one
// is a refusal of a request the exact GCRA admits.
func TestRedisRateDisagreesWithTheExactGCRA(t *testing.T) {
	n := 250_000
	if redisRateRace() {
		n = 10_000
	}
	total, refused, admitted := 0, 0, 0
	for _, c := range redisRateConfigs {
		m := must(NewRedisRate(c.p))
		exact := must(algorithms.NewGCRA(c.p.Rate, c.p.Burst))
		var st, est algorithms.State
		for _, r := range redisRateRequests(rand.New(rand.NewPCG(c.seed, 2017)), n, c.p, false) {
			var d, ed algorithms.Decision
			st, d = m.Step(st, r.at, r.cost)
			est, ed = exact.Step(est, r.at, r.cost)
			total++
			if d.Allowed != ed.Allowed {
				if ed.Allowed {
					refused++
				} else {
					admitted++
				}
				st, est = algorithms.State{}, algorithms.State{}
			}
		}
	}
	t.Logf("over %d decisions redis_rate refused %d that the exact GCRA admitted, and admitted %d that it refused", total, refused, admitted)
	if refused == 0 || admitted != 0 {
		t.Errorf("refused %d, admitted %d: want some refusals and no extra admission", refused, admitted)
	}
}

// TestRedisRateEdges steps the model through the cases that are not a
// plain admission, with the script's figures worked out by hand at 1/s,
// burst 2, in 2026 (spacing 2^-24 s, so whole and half seconds are exact).
func TestRedisRateEdges(t *testing.T) {
	p := algorithms.Params{Rate: algorithms.Rate{N: 1, Per: time.Second}, Burst: 2, Origin: origin2026}
	m := must(NewRedisRate(p))
	tests := []struct {
		name string
		prev algorithms.State
		at   algorithms.Time
		cost int64
		want algorithms.Decision
		same bool // the state must come back unchanged
	}{
		{"a new key admits and resets after one interval", algorithms.State{}, s1, 1,
			algorithms.Decision{Allowed: true, Limit: 2, Remaining: 1, ResetAfter: time.Second}, false},
		{"a peek on a new key writes nothing", algorithms.State{}, s1, 0,
			algorithms.Decision{Allowed: true, Limit: 2, Remaining: 2}, true},
		{"a peek on a full key writes nothing", tatAt(p, 3*s1), s1, 0,
			algorithms.Decision{Allowed: true, Limit: 2, Remaining: 0, ResetAfter: 2 * time.Second}, true},
		{"a full key refuses until the next interval", tatAt(p, 3*s1), s1, 1,
			algorithms.Decision{Limit: 2, RetryAfter: time.Second, ResetAfter: 2 * time.Second}, true},
		// (cost − burst) intervals, though no wait will do: the library says so.
		{"a cost above burst gets a finite Retry-After", algorithms.State{}, s1, 5,
			algorithms.Decision{Limit: 2, RetryAfter: 3 * time.Second}, true},
		{"a huge cost's Retry-After overflows to Never", algorithms.State{}, s1, math.MaxInt64,
			algorithms.Decision{Limit: 2, RetryAfter: algorithms.Never}, true},
		{"a clock gone back past the burst refuses even a peek", tatAt(p, 10*s1), s1, 0,
			algorithms.Decision{Limit: 2, RetryAfter: 7 * time.Second, ResetAfter: 9 * time.Second}, true},
		{"a clock gone back a little finds the TAT further ahead", tatAt(p, 2*s1), s1 / 2, 1,
			algorithms.Decision{Limit: 2, RetryAfter: 500 * time.Millisecond, ResetAfter: 1500 * time.Millisecond}, true},
		{"a state of another algorithm (Prev 0) is a new key", algorithms.State{T: 5, N: 7}, s1, 1,
			algorithms.Decision{Allowed: true, Limit: 2, Remaining: 1, ResetAfter: time.Second}, false},
		{"negative cost is a peek", algorithms.State{}, s1, -3,
			algorithms.Decision{Allowed: true, Limit: 2, Remaining: 2}, true},
	}
	for _, tt := range tests {
		next, d := m.Step(tt.prev, tt.at, tt.cost)
		if d != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, d, tt.want)
		}
		if tt.same && !reflect.DeepEqual(next, tt.prev) {
			t.Errorf("%s: state moved from %+v to %+v", tt.name, tt.prev, next)
		}
		if !tt.same && (next.Prev != 1 || next.T < int64(tt.at)) {
			t.Errorf("%s: state %+v, want a TAT at or after now", tt.name, next)
		}
	}
	// Extreme instants and states do not panic.
	for _, at := range []algorithms.Time{math.MinInt64, -1, math.MaxInt64} {
		for _, prev := range []algorithms.State{{}, {T: math.MaxInt64, N: int64(math.Float64bits(math.Inf(1))), Prev: 1}, {N: -1, Prev: 1}} {
			m.Step(prev, at, 1)
		}
	}
}

// tatAt is the state the script leaves when its TAT is Origin + at.
func tatAt(p algorithms.Params, at algorithms.Time) algorithms.State {
	m := must(NewRedisRate(p)).(*RedisRate)
	tat := m.luaNow(at)
	return algorithms.State{T: m.instant(tat), N: int64(math.Float64bits(tat)), Prev: 1}
}

func TestRedisRateParams(t *testing.T) {
	p := algorithms.Params{Rate: algorithms.Rate{N: 3, Per: time.Second}, Burst: 5, Window: time.Minute, Origin: origin2026}
	got := must(NewRedisRate(p)).Params()
	if want := (algorithms.Params{Rate: p.Rate, Burst: 5, Origin: origin2026}); got != want {
		t.Errorf("Params() = %+v, want %+v", got, want)
	}
	bad := []struct {
		p     algorithms.Params
		param string
	}{
		{algorithms.Params{Rate: algorithms.Rate{N: 0, Per: time.Second}, Burst: 1}, "rate"},
		{algorithms.Params{Rate: algorithms.Rate{N: 1, Per: time.Nanosecond}, Burst: 1}, "rate"},
		{algorithms.Params{Rate: algorithms.Rate{N: 1, Per: time.Second}}, "burst"},
		{algorithms.Params{Rate: algorithms.Rate{N: 1, Per: time.Hour}, Burst: 1 << 30}, "burst"},
	}
	for _, b := range bad {
		var pe *algorithms.ParamError
		if _, err := NewRedisRate(b.p); !errors.As(err, &pe) || pe.Param != b.param {
			t.Errorf("NewRedisRate(%+v) = %v, want a ParamError on %s", b.p, err, b.param)
		}
	}
	var zero RedisRate
	if next, d := zero.Step(algorithms.State{N: 9, Prev: 1}, s1, 1); d != (algorithms.Decision{RetryAfter: algorithms.Never}) || !reflect.DeepEqual(next, algorithms.State{N: 9, Prev: 1}) {
		t.Errorf("zero RedisRate: %+v, %+v; want a refusal for good, state untouched", d, next)
	}
}

// TestRedisRateDuration checks the 14 digits against strconv's printing,
// where the shortcut cannot decide and where it can.
func TestRedisRateDuration(t *testing.T) {
	m := must(NewRedisRate(algorithms.Params{Rate: algorithms.Rate{N: 1, Per: time.Second}, Burst: 1})).(*RedisRate)
	rng := rand.New(rand.NewPCG(7, 7))
	for i := range 200_000 {
		x := math.Ldexp(float64(rng.Int64N(1<<40)), -24-rng.IntN(10)) // on a grid, as the script's figures are
		if i%2 == 0 {
			x = rng.Float64() * 4000
		}
		f, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 14, 64), 64)
		if got, want := m.duration(x), time.Duration(f*float64(time.Second)); got != want {
			t.Fatalf("duration(%v) = %v, want %v", x, got, want)
		}
	}
}

func TestRedisRateStepDoesNotAllocate(t *testing.T) {
	m := must(NewRedisRate(algorithms.Params{Rate: algorithms.Rate{N: 100, Per: time.Minute}, Burst: 100, Origin: origin2026}))
	var st algorithms.State
	now := algorithms.Time(0)
	if n := testing.AllocsPerRun(1000, func() {
		now += 1234
		st, _ = m.Step(st, now, 1)
	}); n != 0 {
		t.Errorf("Step allocates %v times", n)
	}
}
