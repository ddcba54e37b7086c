package store

import (
	"net/url"
	"strings"
)

// The names of a store, from what a scenario's topology.store or a --store
// flag holds: "" or "memory", "miniredis", or a Redis URL, which may carry
// a password. One rule for every place that prints one.

// Embedded is the store URL of the in-process Redis: miniredis, which runs
// the real Lua twins but costs ~300 µs a call (it builds a Lua state each
// time), so it is for tests and demonstrations, not for speed. The driver
// store/redisstore opens it.
const Embedded = "miniredis"

// KindOf is the kind of store s opens: "memory" (for "" too), "miniredis",
// "redis-cluster" (redis+cluster:// or rediss+cluster://) or "redis". It
// never includes the URL, so a result that records it can be shared.
func KindOf(s string) string {
	switch {
	case s == "":
		return "memory"
	case strings.HasPrefix(s, "redis"):
		if strings.Contains(s, "cluster") {
			return "redis-cluster"
		}
		return "redis"
	}
	return s
}

// Redacted is s for a person to read: "memory" for "", a Redis URL with
// its password replaced by "xxxxx" (url.URL.Redacted), and a URL that does
// not parse as only its kind, since it may hold a password where a parser
// would not find it.
func Redacted(s string) string {
	if !strings.HasPrefix(s, "redis") {
		return KindOf(s)
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return KindOf(s)
	}
	return u.Redacted()
}
