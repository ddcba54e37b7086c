package httplimit

import (
	"fmt"
	"net/http"

	"github.com/ratelim/ratelim/routecost"
)

// CostRule prices the requests of a route: those whose method is Method
// ("" for any) and whose path matches Glob cost Cost each. It is
// [routecost.Rule], whose rules price a logged request in `ratelim replay
// --cost` too, so that a replay spends what the middleware would; the
// alias keeps a middleware's configuration in one package's names.
type CostRule = routecost.Rule

// CostByRoute returns a [Config.Cost] that prices a request by the first
// of rules matching its method and URL path, 1 when none does:
//
//	cost, err := httplimit.CostByRoute(
//		httplimit.CostRule{Method: "GET", Glob: "/search*", Cost: 5},
//		httplimit.CostRule{Method: "POST", Cost: 10},
//	)
//
// Order the rules from the most particular: the first match wins. It
// reports an error for a rule whose cost is outside 1 to routecost.Max or
// whose glob does not parse, which would otherwise never match.
func CostByRoute(rules ...CostRule) (func(*http.Request) int64, error) {
	for i, r := range rules {
		if err := r.Check(); err != nil {
			return nil, fmt.Errorf("httplimit: cost rule %d (%s): %w", i+1, r, err)
		}
	}
	rules = append([]CostRule(nil), rules...) // the caller's slice may change
	return func(req *http.Request) int64 {
		return routecost.Of(rules, req.Method, req.URL.Path)
	}, nil
}
