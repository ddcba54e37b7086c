package replay

import (
	"github.com/ratelim/ratelim/routecost"
	"github.com/ratelim/ratelim/trace"
)

// costOf is what rec costs by the first of rules that matches it; 1 when
// none does. The rules are routecost's, which price a live request in the
// middleware (httplimit.CostByRoute) too, so that a replay spends what
// the middleware would.
func costOf(rules []routecost.Rule, rec trace.Record) int64 {
	return routecost.Of(rules, rec.Method, rec.Path)
}
