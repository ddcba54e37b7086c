package sim

import (
	"math"
	"slices"
	"strconv"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/store"
)

// Algorithms are the six exact algorithms' names, in teaching order: what
// a view that switches a scenario's algorithm (with WithAlgorithm) cycles
// through. A Limit's Algorithm may also be a peer model's
// (algorithms.Names lists every one); a view cycling from one starts again
// at the first exact algorithm.
func Algorithms() []string { return algorithms.ExactNames() }

// PeerOf is the provenance of the named algorithm when it models a
// library people deploy (which library, version and file, its quirk),
// nil for one of the six exact algorithms or an unknown name.
func PeerOf(algorithm string) *algorithms.Provenance {
	if info, ok := algorithms.Lookup(algorithm); ok {
		return info.Peer
	}
	return nil
}

// Family is the exact algorithm the named one is, or is a variant of: a
// peer model's Provenance.Family (nginx's limit_req is a leaky bucket,
// envoy's a fixed window), the name itself otherwise.
func Family(algorithm string) string {
	if p := PeerOf(algorithm); p != nil {
		return p.Family
	}
	return algorithm
}

// Reads reports whether l's algorithm reads the named parameter ("rate",
// "burst" or "window"): a bucket has no window, a window algorithm no
// burst. An unknown algorithm reads none.
func (l Limit) Reads(param string) bool {
	for _, info := range algorithms.Catalog() {
		if info.Name == l.Algorithm {
			return slices.Contains(info.Params, param)
		}
	}
	return false
}

// FailsClosed reports whether a server that cannot reach the store refuses
// the request (on_error: fail-closed) rather than admitting it (fail-open,
// the default).
func (t Topology) FailsClosed() bool { return t.OnError == store.FailClosed }

// RateText writes a rate kept per second (LimitResult.RatePerS) in the
// unit it was most likely given in: 100/m, not 1.6666666666666667/s; one
// that is whole in no unit to four figures a second.
func RateText(perS float64) string {
	for _, u := range []struct {
		seconds float64
		unit    string
	}{{1, "/s"}, {60, "/m"}, {3600, "/h"}, {86400, "/d"}} {
		n := perS * u.seconds
		if r := math.Round(n); r >= 1 && math.Abs(n-r) < 1e-9*r {
			return strconv.FormatFloat(r, 'f', -1, 64) + u.unit
		}
	}
	return strconv.FormatFloat(perS, 'g', 4, 64) + "/s"
}
