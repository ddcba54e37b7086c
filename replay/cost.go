package replay

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/ratelim/ratelim/trace"
)

// MaxCost bounds a request's cost, as scenarios bound a traffic pattern's.
const MaxCost = 1 << 30

// CostRule prices the requests of a route: those whose method is Method
// ("" for any) and whose path matches Glob (path.Match: "*" within one
// segment; "" for any) cost Cost each. A search that costs the backend
// five page reads is "GET /search*=5".
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
	if r.Glob != "" {
		if _, err := path.Match(r.Glob, "/"); err != nil {
			return CostRule{}, fmt.Errorf("cost %q: %q is not a glob: %v (want e.g. /search*)", s, r.Glob, err)
		}
	}
	return r, nil
}

// String is r as ParseCostRule reads it.
func (r CostRule) String() string {
	return strings.TrimSpace(r.Method+" "+r.Glob) + "=" + strconv.FormatInt(r.Cost, 10)
}

// matches reports whether rec is of r's route.
func (r CostRule) matches(rec trace.Record) bool {
	if r.Method != "" && !strings.EqualFold(r.Method, rec.Method) {
		return false
	}
	if r.Glob == "" {
		return true
	}
	ok, _ := path.Match(r.Glob, rec.Path)
	return ok
}

// costOf is what rec costs by the first rule that matches it; 1 when none
// does.
func costOf(rules []CostRule, rec trace.Record) int64 {
	for _, r := range rules {
		if r.matches(rec) {
			return r.Cost
		}
	}
	return 1
}
