package redisstore

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratelim/ratelim/algorithms"
)

// luaFS holds the Lua twins of the algorithms, one file per algorithm named
// after it (lua/token-bucket.lua, ..., lua/concurrency.lua), each one
// function that decides a request on one key without writing and returns
// the reply with the commit that writes it (see lib/prelude.lua); and
// lua/multi.lua, which runs them all for the limits of one key. The ARGV
// contract is at the top of each file. The concurrency twin also holds
// concurrency_release, which lib/release.lua's script runs to give a lease
// back.
//
//go:embed lua/*.lua lua/lib/*.lua
var luaFS embed.FS

// luaLibs are the shared parts a twin is loaded with, in order, from
// lua/lib/: Redis runs each EVAL as one self-contained chunk, with no
// require, so the store prepends them. Every twin gets the prelude.
var luaLibs = map[string][]string{
	"gcra":         {"prelude", "tat"},
	"leaky-bucket": {"prelude", "tat"},
}

// luaMulti is the file of the script for a key with several limits: not a
// twin of one algorithm, so not in luaTwins.
const luaMulti = "multi.lua"

// luaTwins maps an algorithm's name to its parsed script, built once;
// luaMultiScript is the script for every limit of a key at once, and
// luaReleaseScript the one that gives back a lease (lib/release.lua).
var luaTwins, luaMultiScript, luaReleaseScript = loadLuaScripts()

// luaConcurrency is the name of the twin that hands out leases.
const luaConcurrency = "concurrency"

// luaStepName is the name of an algorithm's function in its twin:
// token-bucket's is token_bucket.
func luaStepName(alg string) string { return strings.ReplaceAll(alg, "-", "_") }

// loadLuaScripts builds each twin's script, its libraries + its function +
// lib/single.lua's driver, which calls the function on KEYS[1] and commits
// at once; the multi script, the libraries + every twin's functions +
// multi.lua; and the release script, the prelude + concurrency.lua +
// lib/release.lua.
func loadLuaScripts() (twins map[string]*redis.Script, multi, release *redis.Script) {
	entries, err := luaFS.ReadDir("lua")
	if err != nil {
		panic(fmt.Sprintf("store: reading embedded Lua scripts: %v", err))
	}
	read := func(name string) string {
		src, err := luaFS.ReadFile(path.Join("lua", name))
		if err != nil {
			panic(fmt.Sprintf("store: reading embedded %s: %v", name, err))
		}
		return string(src) + "\n"
	}
	driver := read("lib/single.lua")
	twins = make(map[string]*redis.Script, len(entries))
	var all strings.Builder
	all.WriteString(read("lib/prelude.lua"))
	all.WriteString(read("lib/tat.lua"))
	for _, e := range entries {
		if e.IsDir() || e.Name() == luaMulti {
			continue
		}
		name := strings.TrimSuffix(e.Name(), ".lua")
		libs, ok := luaLibs[name]
		if !ok {
			libs = []string{"prelude"}
		}
		var src strings.Builder
		for _, lib := range libs {
			src.WriteString(read("lib/" + lib + ".lua"))
		}
		twin := read(e.Name())
		src.WriteString(twin)
		src.WriteString(strings.ReplaceAll(driver, "STEP", luaStepName(name)))
		twins[name] = redis.NewScript(src.String())
		all.WriteString(twin)
	}
	all.WriteString(read(luaMulti))
	release = redis.NewScript(read("lib/prelude.lua") + read(luaConcurrency+".lua") + read("lib/release.lua"))
	return twins, redis.NewScript(all.String()), release
}

// windowLimiter is what the window algorithms have beyond Algorithm: the
// limit per window, rate × window rounded down, which their twins take as
// an argument rather than recompute.
type windowLimiter interface{ Limit() int64 }

// script is an algorithm's Lua twin with the algorithm's parameters ready to
// pass as ARGV[3:]; or, for a key with several limits ([algorithms.Multi]),
// the multi script with each limit's twin in limits.
type script struct {
	name   string
	lua    *redis.Script
	params []any // ARGV[3:]: N, per µs, burst; or window µs, limit (and origin µs); or TTL µs, max, retry cap µs
	limit  int64 // Decision.Limit: the burst, the limit per window, or the most in flight
	// aligned is set for the twins whose windows sit on the wall clock
	// (fixed-window, sliding-window): their last parameter is the
	// algorithm's Params.Origin, which args sends as 0 on the store's
	// clock, whose now is Unix µs already.
	aligned bool
	// leases is set for the concurrency twin, whose reply carries a sixth
	// value, the lease, and whose key Release gives leases back in.
	leases bool

	// limits is set for a Multi: each limit's twin, in order (their
	// name, params and limit make the limit's ARGV; their lua is not
	// run), and shadow each limit's shadow_until (lua/multi.lua).
	limits []*script
	shadow []string
}

// scriptFor returns the Lua twin of alg, or an error if alg has none: only
// the six exact algorithms of package algorithms and its concurrency
// limiter have one, and a wrapper or any other implementation of Algorithm
// would not match its twin. A Multi has the multi script when every one of
// its limits has a twin.
func scriptFor(alg algorithms.Algorithm) (*script, error) {
	if alg == nil {
		return nil, errors.New("store: no Lua script for a nil algorithm")
	}
	var params []any
	var limit int64
	var aligned bool
	switch alg := alg.(type) {
	case *algorithms.Multi:
		return multiScriptFor(alg)
	case *algorithms.TokenBucket, *algorithms.GCRA, *algorithms.LeakyBucket:
		p := alg.Params()
		params = []any{p.Rate.N, int64(p.Rate.Per / time.Microsecond), p.Burst}
		limit = p.Burst
	case *algorithms.FixedWindow, *algorithms.SlidingLog, *algorithms.SlidingWindow:
		wl, ok := alg.(windowLimiter)
		if !ok {
			return nil, fmt.Errorf("store: %s (%T) has no Limit method", alg.Name(), alg)
		}
		limit = wl.Limit()
		params = []any{int64(alg.Params().Window / time.Microsecond), limit}
		if _, log := alg.(*algorithms.SlidingLog); !log {
			params, aligned = append(params, int64(alg.Params().Origin)), true
		}
	case *algorithms.Concurrency:
		p := alg.Params()
		params = []any{int64(p.Window / time.Microsecond), p.Burst, int64(algorithms.MaxConcurrencyRetry / time.Microsecond)}
		limit = p.Burst
	default:
		return nil, fmt.Errorf("store: no Lua script for algorithm %q (%T): Redis runs only the built-in algorithms", alg.Name(), alg)
	}
	lua, ok := luaTwins[alg.Name()]
	if !ok {
		return nil, fmt.Errorf("store: no Lua script embedded for algorithm %q", alg.Name())
	}
	return &script{name: alg.Name(), lua: lua, params: params, limit: limit, aligned: aligned, leases: alg.Name() == luaConcurrency}, nil
}

// multiScriptFor returns the multi script for m's limits, each of which
// must be one of the algorithms with a twin.
func multiScriptFor(m *algorithms.Multi) (*script, error) {
	s := &script{name: m.Name(), lua: luaMultiScript}
	for _, p := range m.Policies() {
		if _, nested := p.Algorithm.(*algorithms.Multi); nested {
			return nil, fmt.Errorf("store: limit %q of %s is itself several limits: Redis runs one level of limits per key", p.Name, m.Name())
		}
		sub, err := scriptFor(p.Algorithm)
		if err != nil {
			return nil, fmt.Errorf("store: limit %q of %s: %w", p.Name, m.Name(), err)
		}
		shadow := "" // enforcing
		if p.Shadow {
			shadow = strconv.FormatInt(int64(p.ShadowUntil), 10)
		}
		s.limits = append(s.limits, sub)
		s.shadow = append(s.shadow, shadow)
	}
	return s, nil
}

// multiTag opens the hash tag of a Multi's limit keys; see [Store].
const multiTag = "{#"

// keys returns the Redis keys of key under prefix: prefix+key for one
// limit; for a Multi, one per limit, prefix + "{#" + key + "}:" + i with i
// the limit's index, which hash to one cluster slot (see [Store]).
func (s *script) keys(prefix, key string) ([]string, error) {
	if s.limits == nil {
		return []string{prefix + key}, nil
	}
	if err := multiPrefixError(prefix); err != nil {
		return nil, err
	}
	keys := make([]string, len(s.limits))
	base := prefix + multiTag + key + "}:"
	for i := range keys {
		keys[i] = base + strconv.Itoa(i)
	}
	return keys, nil
}

// leaseKeys returns the Redis keys under prefix where key's leases live:
// the key itself for the concurrency twin; for a Multi, its concurrency
// limits' keys (some of s.keys's); none when no limit hands out leases.
func (s *script) leaseKeys(prefix, key string) ([]string, error) {
	if s.limits == nil {
		if !s.leases {
			return nil, nil
		}
		return []string{prefix + key}, nil
	}
	all, err := s.keys(prefix, key)
	if err != nil {
		return nil, err
	}
	var keys []string
	for i, l := range s.limits {
		if l.leases {
			keys = append(keys, all[i])
		}
	}
	return keys, nil
}

// listLayout reports whether the twin of the algorithm named name keeps
// its state as a LIST of instants (the sliding log's entries, the
// concurrency limiter's leases) rather than a "T N P" string.
func listLayout(name string) bool { return name == "sliding-log" || name == luaConcurrency }

// multiPrefixError says why prefix cannot hold a Multi's keys: its first
// "{" is followed at once by "}". Cluster then hashes the whole key (an
// empty hash tag counts as none), and a key's limits would land on
// different slots, where no script can reach them all. Any other prefix
// works: a tag it opens closes, at the latest, at the "}" after the key.
func multiPrefixError(prefix string) error {
	if i := strings.IndexByte(prefix, '{'); i >= 0 && i+1 < len(prefix) && prefix[i+1] == '}' {
		return fmt.Errorf("store: prefix %q holds an empty hash tag \"{}\": the limits of a key would hash to different cluster slots (want no \"{}\" before any other brace pair)", prefix)
	}
	return nil
}

// scriptNow is a script's ARGV[1]: now in µs, or "" to have the script
// read the store's clock (Redis TIME, lib/prelude.lua's script_now).
func scriptNow(now algorithms.Time, storeClock bool) string {
	if storeClock {
		return ""
	}
	return strconv.FormatInt(int64(now), 10)
}

// args returns the script's ARGV: now in µs, or "" to have the script read
// the store's clock (Redis TIME) when storeClock is set; the cost, negative
// counting as 0; then the algorithm's parameters, or, for a Multi, each
// limit's algorithm, three parameters and shadow_until (lua/multi.lua).
// On the store's clock an aligned twin's origin is 0: Redis TIME is Unix
// µs, the wall clock itself.
func (s *script) args(now algorithms.Time, storeClock bool, cost int64) []any {
	at := scriptNow(now, storeClock)
	if s.limits != nil {
		argv := make([]any, 0, 2+5*len(s.limits))
		argv = append(argv, at, max(cost, 0))
		for i, l := range s.limits {
			argv = append(argv, l.name)
			argv = l.appendParams(argv, storeClock)
			for range 3 - len(l.params) {
				argv = append(argv, 0)
			}
			argv = append(argv, s.shadow[i])
		}
		return argv
	}
	argv := make([]any, 0, 2+len(s.params))
	argv = append(argv, at, max(cost, 0))
	return s.appendParams(argv, storeClock)
}

// appendParams appends s's parameters to argv, an aligned twin's origin
// as 0 on the store's clock.
func (s *script) appendParams(argv []any, storeClock bool) []any {
	argv = append(argv, s.params...)
	if s.aligned && storeClock {
		argv[len(argv)-1] = int64(0)
	}
	return argv
}

// run decides one request on key inside the store: EVALSHA, falling back to
// EVAL when the server does not have the script cached (NOSCRIPT).
func (s *script) run(ctx context.Context, c redis.Scripter, key string, now algorithms.Time, storeClock bool, cost int64) (algorithms.Decision, error) {
	keys, err := s.keys("", key)
	if err != nil {
		return algorithms.Decision{}, err
	}
	return s.runKeys(ctx, c, keys, now, storeClock, cost)
}

// runKeys is run on the key's Redis keys, s.keys's.
func (s *script) runKeys(ctx context.Context, c redis.Scripter, keys []string, now algorithms.Time, storeClock bool, cost int64) (algorithms.Decision, error) {
	reply, err := s.lua.Run(ctx, c, keys, s.args(now, storeClock, cost)...).Int64Slice()
	if err != nil {
		return algorithms.Decision{}, fmt.Errorf("store: %s script on key %q: %w", s.name, keys[0], err)
	}
	return s.decode(reply)
}

// decode turns the script's reply {allowed, remaining, retry_after_us,
// reset_after_us, delay_us}, with the lease after them for the
// concurrency twin, into a Decision; a Multi's, {..., delay_us, lease}
// per limit and the shadow mask, into each limit's Decision, merged by
// [algorithms.Combine] as the memory store's Multi merges them.
func (s *script) decode(reply []int64) (algorithms.Decision, error) {
	if s.limits != nil {
		return s.decodeMulti(reply)
	}
	want := 5
	if s.leases {
		want = 6
	}
	if len(reply) != want {
		return algorithms.Decision{}, fmt.Errorf("store: %s script replied %d values, want %d", s.name, len(reply), want)
	}
	return decodeOne(reply, s.limit), nil
}

// decodeOne reads one limit's reply: five values, or six with the lease.
func decodeOne(reply []int64, limit int64) algorithms.Decision {
	d := algorithms.Decision{
		Allowed:    reply[0] == 1,
		Limit:      limit,
		Remaining:  reply[1],
		RetryAfter: luaDuration(reply[2]),
		ResetAfter: luaDuration(reply[3]),
		Delay:      luaDuration(reply[4]),
	}
	if len(reply) > 5 {
		d.Lease = algorithms.Time(reply[5])
	}
	return d
}

// multiWidth is how many values the multi script replies per limit: the
// five of every twin and the lease.
const multiWidth = 6

func (s *script) decodeMulti(reply []int64) (algorithms.Decision, error) {
	n := len(s.limits)
	if len(reply) != multiWidth*n+1 {
		return algorithms.Decision{}, fmt.Errorf("store: %s script replied %d values, want %d (%d per limit and the shadow mask)", s.name, len(reply), multiWidth*n+1, multiWidth)
	}
	var ds [algorithms.MaxLimits]algorithms.Decision
	for i, l := range s.limits {
		ds[i] = decodeOne(reply[multiWidth*i:multiWidth*(i+1)], l.limit)
	}
	mask := reply[multiWidth*n]
	if mask < 0 || mask >= 1<<n {
		return algorithms.Decision{}, fmt.Errorf("store: %s script replied shadow mask %d, want 0 to %d", s.name, mask, 1<<n-1)
	}
	return algorithms.Combine(ds[:n], uint(mask)), nil
}

// luaDuration converts a script's µs to a Duration as the algorithms'
// micros does; -1 is algorithms.Never.
func luaDuration(us int64) time.Duration {
	switch {
	case us == -1:
		return algorithms.Never
	case us <= 0:
		return 0
	case us > int64(algorithms.Never/time.Microsecond):
		return algorithms.Never
	}
	return time.Duration(us) * time.Microsecond
}
