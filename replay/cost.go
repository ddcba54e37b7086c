package replay

import (
	"github.com/ratelim/ratelim/httplimit"
	"github.com/ratelim/ratelim/trace"
)

// MaxCost bounds a request's cost, as scenarios bound a traffic pattern's.
const MaxCost = httplimit.MaxCost

// CostRule prices the requests of a route (httplimit.CostRule: the same
// rules price a request in the middleware, so that a replay spends what
// the middleware would).
type CostRule = httplimit.CostRule

// ParseCostRule reads "[METHOD ]GLOB=COST" ("GET /api/search*=5",
// "/export/*=20", "POST=10").
func ParseCostRule(s string) (CostRule, error) { return httplimit.ParseCostRule(s) }

// costOf is what rec costs by the first rule that matches it; 1 when none
// does.
func costOf(rules []CostRule, rec trace.Record) int64 {
	return httplimit.CostOf(rules, rec.Method, rec.Path)
}
