// Package routecost prices requests by route: a [Rule] says that the
// requests of one method and path glob cost so many units of a key's
// quota ("GET /search*=5"), and [Of] prices a request by the first rule
// that matches it.
//
// The same rules price a live request in the middleware
// (httplimit.CostByRoute) and a logged one in `ratelim replay --cost`
// (package replay), so that a replay spends what the middleware would. The
// package imports nothing but the standard library, so the scenario
// loader, which reads replay's logs, does not link in the middleware's
// dependencies (Prometheus, the Redis client) for one type.
package routecost

import (
	"fmt"
	"path"
	"strconv"
	"strings"
)

// Max bounds what one request may cost, as scenarios bound a traffic
// pattern's: past a billion units a cost is a typo, and a product of
// costs and counts must stay far from overflowing.
const Max = 1 << 30

// Rule prices the requests of a route: those whose method is Method
// ("" for any) and whose path matches Glob (path.Match: "*" within one
// segment; "" for any) cost Cost each. A search that costs the backend
// five page reads is "GET /search*=5".
type Rule struct {
	Method string
	Glob   string
	Cost   int64
}

// Parse reads "[METHOD ]GLOB=COST" ("GET /api/search*=5",
// "/export/*=20", "POST=10").
func Parse(s string) (Rule, error) {
	lhs, rhs, ok := strings.Cut(s, "=")
	if !ok {
		return Rule{}, fmt.Errorf("cost %q has no = (want e.g. 'GET /search*=5')", s)
	}
	cost, err := strconv.ParseInt(strings.TrimSpace(rhs), 10, 64)
	if err != nil || cost < 1 || cost > Max {
		return Rule{}, fmt.Errorf("cost %q: %q is not a cost (want a whole number from 1 to %d)", s, rhs, Max)
	}
	r := Rule{Cost: cost}
	fields := strings.Fields(lhs)
	switch {
	case len(fields) == 2:
		r.Method, r.Glob = strings.ToUpper(fields[0]), fields[1]
	case len(fields) == 1 && strings.HasPrefix(fields[0], "/"):
		r.Glob = fields[0]
	case len(fields) == 1:
		r.Method = strings.ToUpper(fields[0])
	default:
		return Rule{}, fmt.Errorf("cost %q: want a method, a path glob or both before = (e.g. 'GET /search*=5')", s)
	}
	if err := r.Check(); err != nil {
		return Rule{}, fmt.Errorf("cost %q: %w", s, err)
	}
	return r, nil
}

// Check says what is wrong with r, if anything: a cost outside 1 to
// [Max], or a glob that does not parse and so would never match.
func (r Rule) Check() error {
	if r.Cost < 1 || r.Cost > Max {
		return fmt.Errorf("cost %d (want a whole number from 1 to %d)", r.Cost, Max)
	}
	if r.Glob != "" {
		if _, err := path.Match(r.Glob, "/"); err != nil {
			return fmt.Errorf("%q is not a glob: %v (want e.g. /search*)", r.Glob, err)
		}
	}
	return nil
}

// String is r as Parse reads it.
func (r Rule) String() string {
	return strings.TrimSpace(r.Method+" "+r.Glob) + "=" + strconv.FormatInt(r.Cost, 10)
}

// Matches reports whether a request of method to urlPath is of r's route
// (the method compared without regard to case).
func (r Rule) Matches(method, urlPath string) bool {
	if r.Method != "" && !strings.EqualFold(r.Method, method) {
		return false
	}
	if r.Glob == "" {
		return true
	}
	ok, _ := path.Match(r.Glob, urlPath)
	return ok
}

// Of is what a request of method to urlPath costs by the first of rules
// that matches it; 1 when none does.
func Of(rules []Rule, method, urlPath string) int64 {
	for _, r := range rules {
		if r.Matches(method, urlPath) {
			return r.Cost
		}
	}
	return 1
}
