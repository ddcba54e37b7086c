package store

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
// after it (lua/token-bucket.lua, ...). Each runs one Step atomically inside
// Redis on one key; the ARGV contract is at the top of each file.
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

// luaTwins maps an algorithm's name to its parsed script, built once.
var luaTwins = loadLuaTwins()

func loadLuaTwins() map[string]*redis.Script {
	entries, err := luaFS.ReadDir("lua")
	if err != nil {
		panic(fmt.Sprintf("store: reading embedded Lua scripts: %v", err))
	}
	read := func(name string) string {
		src, err := luaFS.ReadFile(path.Join("lua", name))
		if err != nil {
			panic(fmt.Sprintf("store: reading embedded %s: %v", name, err))
		}
		return string(src)
	}
	twins := make(map[string]*redis.Script, len(entries))
	for _, e := range entries {
		if e.IsDir() {
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
			src.WriteString("\n")
		}
		src.WriteString(read(e.Name()))
		twins[name] = redis.NewScript(src.String())
	}
	return twins
}

// windowLimiter is what the window algorithms have beyond Algorithm: the
// limit per window, rate × window rounded down, which their twins take as
// an argument rather than recompute.
type windowLimiter interface{ Limit() int64 }

// script is an algorithm's Lua twin with the algorithm's parameters ready to
// pass as ARGV[3:].
type script struct {
	name   string
	lua    *redis.Script
	params []any // ARGV[3:]: N, per µs, burst; or window µs, limit
	limit  int64 // Decision.Limit: the burst, or the limit per window
}

// scriptFor returns the Lua twin of alg, or an error if alg has none: only
// the six algorithms of package algorithms have one, and a wrapper or any
// other implementation of Algorithm would not match its twin.
func scriptFor(alg algorithms.Algorithm) (*script, error) {
	if alg == nil {
		return nil, errors.New("store: no Lua script for a nil algorithm")
	}
	var params []any
	var limit int64
	switch alg.(type) {
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
	default:
		return nil, fmt.Errorf("store: no Lua script for algorithm %q (%T): Redis runs only the built-in algorithms", alg.Name(), alg)
	}
	lua, ok := luaTwins[alg.Name()]
	if !ok {
		return nil, fmt.Errorf("store: no Lua script embedded for algorithm %q", alg.Name())
	}
	return &script{name: alg.Name(), lua: lua, params: params, limit: limit}, nil
}

// args returns the script's ARGV: now in µs, or "" to have the script read
// the store's clock (Redis TIME) when storeClock is set; the cost, negative
// counting as 0; then the algorithm's parameters.
func (s *script) args(now algorithms.Time, storeClock bool, cost int64) []any {
	at := ""
	if !storeClock {
		at = strconv.FormatInt(int64(now), 10)
	}
	argv := make([]any, 0, 2+len(s.params))
	argv = append(argv, at, max(cost, 0))
	return append(argv, s.params...)
}

// run decides one request on key inside the store: EVALSHA, falling back to
// EVAL when the server does not have the script cached (NOSCRIPT).
func (s *script) run(ctx context.Context, c redis.Scripter, key string, now algorithms.Time, storeClock bool, cost int64) (algorithms.Decision, error) {
	reply, err := s.lua.Run(ctx, c, []string{key}, s.args(now, storeClock, cost)...).Int64Slice()
	if err != nil {
		return algorithms.Decision{}, fmt.Errorf("store: %s script on key %q: %w", s.name, key, err)
	}
	return s.decode(reply)
}

// decode turns the script's reply {allowed, remaining, retry_after_us,
// reset_after_us, delay_us} into a Decision.
func (s *script) decode(reply []int64) (algorithms.Decision, error) {
	if len(reply) != 5 {
		return algorithms.Decision{}, fmt.Errorf("store: %s script replied %d values, want 5", s.name, len(reply))
	}
	return algorithms.Decision{
		Allowed:    reply[0] == 1,
		Limit:      s.limit,
		Remaining:  reply[1],
		RetryAfter: luaDuration(reply[2]),
		ResetAfter: luaDuration(reply[3]),
		Delay:      luaDuration(reply[4]),
	}, nil
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
