package httplimit

import (
	"fmt"
	"net/http"
	"path"
	"strconv"
	"strings"
)

// MaxCost bounds what one request may cost, as scenarios bound a traffic
// pattern's: past a billion units a cost is a typo, and a product of
// costs and counts must stay far from overflowing.
const MaxCost = 1 << 30

// CostRule prices the requests of a route: those whose method is Method
// ("" for any) and whose path matches Glob (path.Match: "*" within one
// segment; "" for any) cost Cost each. A search that costs the backend
// five page reads is "GET /search*=5". The same rules price a logged
// request in `ratelim replay --cost` and a live one in [CostByRoute], so
// a replay spends what the middleware would.
type CostRule struct {
	Method string
	Glob   string
	Cost   int64
}

// ParseCostRule reads "[METHOD ]GLOB=COST" ("GET /api/search*=5",
// "/export/*=20", "POST=10").
func ParseCostRule(s string) (CostRule, error) {
	lhs, rhs, ok := strings.Cut(s, "=")
	if !ok {
		return CostRule{}, fmt.Errorf("cost %q has no = (want e.g. 'GET /search*=5')", s)
	}
	cost, err := strconv.ParseInt(strings.TrimSpace(rhs), 10, 64)
	if err != nil || cost < 1 || cost > MaxCost {
		return CostRule{}, fmt.Errorf("cost %q: %q is not a cost (want a whole number from 1 to %d)", s, rhs, MaxCost)
	}
	r := CostRule{Cost: cost}
	fields := strings.Fields(lhs)
	switch {
	case len(fields) == 2:
		r.Method, r.Glob = strings.ToUpper(fields[0]), fields[1]
	case len(fields) == 1 && strings.HasPrefix(fields[0], "/"):
		r.Glob = fields[0]
	case len(fields) == 1:
		r.Method = strings.ToUpper(fields[0])
	default:
		return CostRule{}, fmt.Errorf("cost %q: want a method, a path glob or both before = (e.g. 'GET /search*=5')", s)
	}
	if err := r.check(); err != nil {
		return CostRule{}, fmt.Errorf("cost %q: %w", s, err)
	}
	return r, nil
}

// check says what is wrong with r, if anything.
func (r CostRule) check() error {
	if r.Cost < 1 || r.Cost > MaxCost {
		return fmt.Errorf("cost %d (want a whole number from 1 to %d)", r.Cost, MaxCost)
	}
	if r.Glob != "" {
		if _, err := path.Match(r.Glob, "/"); err != nil {
			return fmt.Errorf("%q is not a glob: %v (want e.g. /search*)", r.Glob, err)
		}
	}
	return nil
}

// String is r as ParseCostRule reads it.
func (r CostRule) String() string {
	return strings.TrimSpace(r.Method+" "+r.Glob) + "=" + strconv.FormatInt(r.Cost, 10)
}

// Matches reports whether a request of method to urlPath is of r's route
// (the method compared without regard to case).
func (r CostRule) Matches(method, urlPath string) bool {
	if r.Method != "" && !strings.EqualFold(r.Method, method) {
		return false
	}
	if r.Glob == "" {
		return true
	}
	ok, _ := path.Match(r.Glob, urlPath)
	return ok
}

// CostOf is what a request of method to urlPath costs by the first of
// rules that matches it; 1 when none does.
func CostOf(rules []CostRule, method, urlPath string) int64 {
	for _, r := range rules {
		if r.Matches(method, urlPath) {
			return r.Cost
		}
	}
	return 1
}

// CostByRoute returns a [Config.Cost] that prices a request by the first
// of rules matching its method and URL path, 1 when none does:
//
//	cost, err := httplimit.CostByRoute(
//		httplimit.CostRule{Method: "GET", Glob: "/search*", Cost: 5},
//		httplimit.CostRule{Method: "POST", Cost: 10},
//	)
//
// Order the rules from the most particular: the first match wins. It
// reports an error for a rule whose cost is outside 1 to MaxCost or whose
// glob does not parse, which would otherwise never match.
func CostByRoute(rules ...CostRule) (func(*http.Request) int64, error) {
	for i, r := range rules {
		if err := r.check(); err != nil {
			return nil, fmt.Errorf("httplimit: cost rule %d (%s): %w", i+1, r, err)
		}
	}
	rules = append([]CostRule(nil), rules...) // the caller's slice may change
	return func(req *http.Request) int64 {
		return CostOf(rules, req.Method, req.URL.Path)
	}, nil
}
