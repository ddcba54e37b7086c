package sim

import (
	"slices"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/store"
)

// Algorithms are the names a Limit's Algorithm may be, in teaching order:
// what a view that switches a scenario's algorithm (with WithAlgorithm)
// cycles through.
func Algorithms() []string { return algorithms.Names() }

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
