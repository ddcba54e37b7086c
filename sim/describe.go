package sim

import (
	"slices"

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
