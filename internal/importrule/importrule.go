// Package importrule writes down ratelim's package layering, and its test
// holds the module to it: a package imports only what sits below it, so
// that each can be read, tested and linked without what sits above.
//
// From the bottom:
//
//   - algorithms: the limiters as pure functions and the catalog of them
//     by name. It imports the standard library and its own integer
//     arithmetic (algorithms/internal/exact, which imports the standard
//     library alone), nothing else. A package's internal packages count
//     as part of it in every rule below.
//   - algorithms/peers (the models of limiter libraries, which register
//     themselves in algorithms' catalog) imports algorithms alone;
//     routecost (request cost rules) imports no ratelim package; nor does
//     internal/words (how a figure is written for a person), which every
//     package above algorithms may import.
//   - store and topology import algorithms alone, and link no third-party
//     package. The Redis backend is a driver beside store, as database/sql's
//     drivers are: store/redisstore imports algorithms and store (and the
//     Redis client, go-redis, and the embedded server, miniredis), and
//     registers itself with store in its init. Only a program that opens a
//     Redis store links it: cmd/ratelim with a blank import, and live.
//   - the packages that run a scenario or read what it gave (store, sim,
//     scenarios, plots, report, tui) link neither go-redis nor miniredis:
//     drawing a Result does not carry a Redis client.
//   - route (a request's way to its decision, shared by the simulator
//     and the live fleet) imports algorithms, store and topology alone.
//   - sim imports algorithms, algorithms/peers, store, topology, route and
//     internal packages: never the loaders, servers or views above it
//     (scenarios, replay, live, httplimit, report, plots, tui, cmd). It
//     imports algorithms/peers so that every program that runs a scenario
//     knows every kind by name.
//   - scenarios and replay, the loaders, never link the HTTP side
//     (httplimit, live) nor the views, nor Prometheus.
//   - simrun, the run pipeline of ratelim sim as a library (settings,
//     run, expectations, the JSON), is what the browser playground links
//     besides the CLI: it builds for GOOS=js GOARCH=wasm, so it imports
//     no terminal (tui, bubbletea), no HTTP side (httplimit, live, net/http),
//     no process (os/exec) and no Redis client; and cmd/ratelim imports
//     it, so that there is one pipeline.
//   - web, the browser playground's logic (a permalink's state, a run
//     and everything the page shows of it), and web/wasm, its bridge to
//     the page, build for GOOS=js GOARCH=wasm as simrun does, and import
//     what simrun may not; web runs what ratelim sim runs, through
//     simrun.
//   - web/site (the playground as a static site: build, export, serve)
//     imports web/static (the page's files) and internal helpers alone:
//     it builds the simulator as a program, go build ./web/wasm, and
//     links none of it. web/static imports nothing but embed.
//   - probe (ratelim probe: a designed sequence of requests and a pure
//     analysis of their answers) imports no ratelim package but the
//     internal helpers (escape, words, sat); its tests start ratelim
//     serve, nginx and haproxy to probe.
//   - internal packages import no ratelim package outside internal/:
//     a helper that imports what it helps runs the graph backwards
//     (scenarios/scenariotest, which opens scenarios, lives beside them).
//   - a test helper (a package whose name ends in "test", or syncbuf or
//     testsize) is imported by tests only.
//
// Every rule is over the packages' builds, test files excluded, and
// transitive: the test names the path of imports that breaks one, e.g.
// "forbidden import: scenarios -> replay -> httplimit".
package importrule

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// Module is the module path the rules name packages under.
const Module = "github.com/ratelim/ratelim"

// A Rule constrains what one package, or each package under a prefix
// ending in "/...", depends on, directly or through others.
type Rule struct {
	Pkg string // module-relative: "sim", "internal/..."
	// Only lists the module's packages Pkg may depend on; nil leaves them
	// free, an empty non-nil slice allows none. "internal/..." allows all
	// under internal/. A package's own internal packages (P/internal/...)
	// are part of it: P may import them, and naming P allows them too.
	Only []string
	// Not lists packages, module-relative ("httplimit") or not
	// ("github.com/prometheus/..."), that Pkg must not depend on;
	// "third-party" is every package outside the standard library and
	// the module.
	Not []string
	// Need lists module packages Pkg must depend on.
	Need []string
	Why  string // what the rule keeps, for the failure message
}

// Rules are ratelim's layering, as the package doc tells it.
var Rules = append([]Rule{
	{Pkg: "algorithms/internal/...", Only: []string{}, Not: []string{"third-party"},
		Why: "the limiters' arithmetic is below them: the standard library only"},
	{Pkg: "algorithms", Only: []string{}, Not: []string{"third-party"},
		Why: "the limiters are pure: the standard library and their arithmetic only"},
	{Pkg: "routecost", Only: []string{}, Not: []string{"third-party"},
		Why: "cost rules are shared by the middleware and the loaders, below both"},
	{Pkg: "internal/words", Only: []string{},
		Why: "words format plain values for every view; they know no ratelim type"},
	{Pkg: "algorithms/peers", Only: []string{"algorithms"}, Not: []string{"third-party"},
		Why: "the peer models are pure too, built on algorithms' types"},
	{Pkg: "store", Only: []string{"algorithms"},
		Why: "a store steps algorithms; it knows nothing of who calls it"},
	{Pkg: "store/redisstore", Only: []string{"algorithms", "store"},
		Why: "the Redis driver is a store: it knows nothing of who opens it"},
	{Pkg: "topology", Only: []string{"algorithms"},
		Why: "a topology is data about algorithms"},
	{Pkg: "route", Only: []string{"algorithms", "store", "topology"},
		Why: "the way to a decision is below the simulator and the fleet that share it"},
	{Pkg: "sim", Only: []string{"algorithms", "algorithms/peers", "store", "topology", "route", "internal/..."},
		Need: []string{"algorithms/peers"},
		Why:  "the simulator sits below every loader, server and view; it builds every kind by name"},
	{Pkg: "scenarios", Not: []string{"httplimit", "live", "report", "plots", "tui", "cmd/...", "github.com/prometheus/..."},
		Why: "the YAML loader does not link the HTTP side or the views"},
	{Pkg: "replay", Not: []string{"httplimit", "live", "report", "plots", "tui", "cmd/...", "github.com/prometheus/..."},
		Why: "a replay reads logs into the simulator; it does not link the HTTP side"},
	{Pkg: "probe", Only: []string{"internal/..."},
		Why: "probe sends with net/http and fits its own models to what it saw: no package of ratelim's but the internal helpers (escaping, words, saturating arithmetic), so its analysis reads, and runs, alone"},
	{Pkg: "simrun", Not: []string{"cmd/...", "tui", "live", "httplimit", "probe", "store/redisstore", "net/http", "os/exec", "github.com/charmbracelet/...", "github.com/prometheus/..."},
		Why: "the run pipeline is linked into the browser playground: it builds for GOOS=js GOARCH=wasm, with no terminal, HTTP side, process or Redis client"},
	{Pkg: "web", Not: []string{"cmd/...", "tui", "live", "httplimit", "probe", "store/redisstore", "net/http", "os/exec", "github.com/charmbracelet/...", "github.com/prometheus/...", "github.com/redis/go-redis/...", "github.com/alicebob/miniredis/..."},
		Need: []string{"simrun"},
		Why:  "the playground's logic is linked into the browser: it builds for GOOS=js GOARCH=wasm, with no terminal, HTTP side, process or Redis client, and runs what ratelim sim runs (simrun)"},
	{Pkg: "web/wasm", Not: []string{"cmd/...", "tui", "live", "httplimit", "probe", "store/redisstore", "net/http", "os/exec", "github.com/charmbracelet/...", "github.com/prometheus/...", "github.com/redis/go-redis/...", "github.com/alicebob/miniredis/..."},
		Need: []string{"web"},
		Why:  "the bridge is the page's whole program: package web's functions on globalThis, and nothing a browser tab cannot run"},
	{Pkg: "cmd/ratelim", Need: []string{"simrun"},
		Why: "ratelim sim writes what simrun writes: one pipeline for the CLI and the browser playground"},
	{Pkg: "web/site", Only: []string{"web/site", "web/static", "internal/..."},
		Why: "the playground's site builds the simulator as a program (go build ./web/wasm) and exports or serves files: it links nothing of the simulator, so ratelim web costs the CLI no more than the page's files"},
	{Pkg: "web/static", Only: []string{}, Not: []string{"third-party"},
		Why: "the playground's page files, embedded, and nothing else"},
	{Pkg: "internal/...", Only: []string{"internal/..."},
		Why: "an internal helper never imports a package above it"},
}, noRedis("store", "sim", "scenarios", "plots", "report", "tui", "simrun")...)

// noRedis are the rules that keep the Redis client and the embedded Redis
// out of pkgs: they open Redis, if at all, through store.Open and the
// driver a program links (store/redisstore).
func noRedis(pkgs ...string) []Rule {
	var rules []Rule
	for _, p := range pkgs {
		rules = append(rules, Rule{Pkg: p, Not: []string{"github.com/redis/go-redis/...", "github.com/alicebob/miniredis/..."},
			Why: "Redis is a driver a program links (store/redisstore), not a dependency of what runs or reads a simulation"})
	}
	return rules
}

// TestHelpers are the packages only tests may import, beside those whose
// name ends in "test".
var TestHelpers = []string{"internal/syncbuf", "internal/testsize"}

// Graph is a set of packages and their direct imports (test files
// excluded), by full import path, with which of them are the standard
// library's.
type Graph struct {
	Imports  map[string][]string
	Standard map[string]bool
}

// rel is pkg relative to the module, "" for a package outside it.
func rel(pkg string) string {
	r, ok := strings.CutPrefix(pkg, Module+"/")
	if !ok {
		return ""
	}
	return r
}

// matches reports whether the full import path pkg is named by pattern:
// module-relative or full, a trailing "/..." for a tree; "third-party" for any
// package outside the standard library.
func (g Graph) matches(pattern, pkg string) bool {
	if pattern == "third-party" {
		return !g.Standard[pkg] && rel(pkg) == ""
	}
	if !strings.Contains(strings.SplitN(pattern, "/", 2)[0], ".") {
		pattern = Module + "/" + pattern
	}
	if tree, ok := strings.CutSuffix(pattern, "/..."); ok {
		return pkg == tree || strings.HasPrefix(pkg, tree+"/")
	}
	return pkg == pattern || strings.HasPrefix(pkg, pattern+"/internal/")
}

// path returns the chain of imports from pkg to the first dependency
// bad reports true for, shortest first, or nil.
func (g Graph) path(pkg string, bad func(string) bool) []string {
	prev := map[string]string{pkg: ""}
	queue := []string{pkg}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, next := range g.Imports[p] {
			if _, seen := prev[next]; seen {
				continue
			}
			prev[next] = p
			if bad(next) {
				chain := []string{next}
				for at := p; at != ""; at = prev[at] {
					chain = append(chain, at)
				}
				slices.Reverse(chain)
				return chain
			}
			queue = append(queue, next)
		}
	}
	return nil
}

// show is a chain of imports as a reader writes it, module-relative.
func show(chain []string) string {
	short := make([]string, len(chain))
	for i, p := range chain {
		if r := rel(p); r != "" {
			short[i] = r
		} else {
			short[i] = p
		}
	}
	return strings.Join(short, " -> ")
}

// Check returns what breaks the rules in g, one line per broken rule and
// package, naming the chain of imports that breaks it; nil if nothing
// does. A rule whose package is not in g is broken too: a rule about a
// package that moved would otherwise hold for nothing.
func Check(g Graph, rules []Rule, testHelpers []string) []string {
	var pkgs []string
	for p := range g.Imports {
		if rel(p) != "" {
			pkgs = append(pkgs, p)
		}
	}
	slices.Sort(pkgs)
	var broken []string
	for _, r := range rules {
		found := false
		for _, p := range pkgs {
			if !g.matches(r.Pkg, p) {
				continue
			}
			found = true
			if r.Only != nil {
				outside := func(dep string) bool {
					if rel(dep) == "" || strings.HasPrefix(dep, p+"/internal/") {
						return false
					}
					return !slices.ContainsFunc(r.Only, func(o string) bool { return g.matches(o, dep) })
				}
				if chain := g.path(p, outside); chain != nil {
					broken = append(broken, fmt.Sprintf("forbidden import: %s (%s may depend on %v only: %s)", show(chain), rel(p), r.Only, r.Why))
				}
			}
			for _, not := range r.Not {
				if chain := g.path(p, func(dep string) bool { return g.matches(not, dep) }); chain != nil {
					broken = append(broken, fmt.Sprintf("forbidden import: %s (%s must not depend on %s: %s)", show(chain), rel(p), not, r.Why))
				}
			}
			for _, need := range r.Need {
				if g.path(p, func(dep string) bool { return g.matches(need, dep) }) == nil {
					broken = append(broken, fmt.Sprintf("missing import: %s does not depend on %s (%s)", rel(p), need, r.Why))
				}
			}
		}
		if !found {
			broken = append(broken, fmt.Sprintf("rule for %s: no such package in the module (did it move?)", r.Pkg))
		}
	}
	helper := func(dep string) bool {
		return rel(dep) != "" && (strings.HasSuffix(path.Base(dep), "test") ||
			slices.ContainsFunc(testHelpers, func(h string) bool { return g.matches(h, dep) }))
	}
	for _, p := range pkgs {
		for _, dep := range g.Imports[p] {
			if helper(dep) && !helper(p) {
				broken = append(broken, fmt.Sprintf("forbidden import: %s -> %s (a test helper, for tests only)", rel(p), rel(dep)))
			}
		}
	}
	return broken
}
