package sim

// The copies-diverged finding: copies of one key's state that disagreed,
// seen as the run went (copyGap) or read back from its state series.

import (
	"fmt"
	"math"
	"slices"

	"github.com/ratelim/ratelim/topology"
)

const (
	// CopiesDiverged: copies of one key's state (a jar per server, the
	// two sides of a partition) disagreed about what is left. Value: the
	// widest gap, in unit requests.
	FindingCopiesDiverged FindingKind = "copies-diverged"
)

// copyGap is the widest disagreement between a key's copies of the state
// at a step's end: the first key (in the run's order) to reach the widest
// spread, at the first step it did.
type copyGap struct {
	key      string
	keyIndex int
	copies   int
	spread   int64
	at       float64
}

// see takes in one key's copies at one step's end (lo and hi, the least
// and most remaining among those that answered; hi < 0 when none did),
// seen in any order of steps and keys that keeps each key's steps in
// order.
func (g *copyGap) see(key string, keyIndex, copies int, lo, hi int64, at float64) {
	if hi < 0 {
		return
	}
	if spread := hi - lo; spread > g.spread || (spread == g.spread && spread > 0 && keyIndex < g.keyIndex) {
		*g = copyGap{key, keyIndex, copies, spread, at}
	}
}

func copiesDiverged(r *Result) (Finding, bool) {
	limit := r.Limit.Burst
	if r.Limit.WindowS > 0 {
		limit = int64(r.Limit.RatePerS * r.Limit.WindowS)
	}
	threshold := max(2, limit/10)
	worst := r.copyGap
	if worst == nil {
		// A Result read back from its JSON: the gap from its series.
		worst = gapOfSeries(r.State, r.ZeroRemaining, copiesOf(r), followsAnother(r))
	}
	if worst.spread < threshold {
		return Finding{}, false
	}
	text := fmt.Sprintf("key %s: its %d copies disagreed by up to %s at %gs", worst.key, worst.copies, requests(worst.spread), worst.at)
	switch r.Topology {
	case string(Local):
		text += ", each server counting alone"
	case string(Synced):
		text += ", each server counting alone between pushes"
	case string(SplitBrain), string(Cluster):
		text += ", each side of the split counting alone"
	}
	return Finding{Kind: FindingCopiesDiverged, Key: worst.key, Value: float64(worst.spread), Text: text}, true
}

// gapOfSeries is the copyGap of a run's state series. zero is the
// Result's ZeroRemaining: given, a key has copies copies, those without a
// series in the zero state (its room, the least of its limits'). With
// writers, the copies also take writes from another (a split brain, a
// cluster), and a series counts only once it decided for itself
// (DecidedFromS): a copy that only followed cannot have counted apart.
func gapOfSeries(state []StateSeries, zero []int64, copies int, writers bool) *copyGap {
	worst := &copyGap{}
	zeroRoom := int64(-1)
	if len(zero) > 0 {
		zeroRoom = slices.Min(zero)
	}
	state = byCopy(state)
	byKey := map[string][]StateSeries{}
	var order []string
	for _, s := range state {
		if _, ok := byKey[s.Key]; !ok {
			order = append(order, s.Key)
		}
		byKey[s.Key] = append(byKey[s.Key], s)
	}
	for ki, key := range order {
		series := byKey[key]
		n := len(series)
		if zeroRoom >= 0 && !writers {
			n = max(n, copies)
		}
		if n < 2 {
			continue
		}
		for i := range series[0].Remaining {
			at := series[0].TS[i]
			lo, hi := int64(math.MaxInt64), int64(-1)
			if len(series) < n {
				lo, hi = zeroRoom, zeroRoom // a copy no request reached
			}
			compared := n
			if writers {
				compared = 0
			}
			for _, s := range series {
				if writers {
					if s.DecidedFromS == nil || *s.DecidedFromS >= at {
						continue
					}
					compared++
				}
				if i < len(s.Remaining) && s.Remaining[i] >= 0 {
					lo, hi = min(lo, s.Remaining[i]), max(hi, s.Remaining[i])
				}
			}
			if compared > 1 {
				worst.see(key, ki, compared, lo, hi, at)
			}
		}
	}
	return worst
}

// byCopy folds the series of a key's several limits into one per key and
// copy: at each instant the least any limit had left (unknown if one was),
// the room of the key as a whole. Series of one limit are returned as
// they are.
func byCopy(state []StateSeries) []StateSeries {
	var out []StateSeries
	at := map[[2]string]int{}
	for _, s := range state {
		if s.Limit == "" {
			out = append(out, s)
			continue
		}
		id := [2]string{s.Key, s.Copy}
		i, ok := at[id]
		if !ok {
			at[id] = len(out)
			out = append(out, StateSeries{Key: s.Key, Copy: s.Copy, TS: s.TS, Remaining: slices.Clone(s.Remaining), DecidedFromS: s.DecidedFromS})
			continue
		}
		folded := out[i].Remaining
		for j := range min(len(folded), len(s.Remaining)) {
			if folded[j] < 0 || s.Remaining[j] < 0 {
				folded[j] = -1
			} else {
				folded[j] = min(folded[j], s.Remaining[j])
			}
		}
	}
	return out
}

// copiesOf is how many copies of a key's state r's topology keeps where
// every copy counts for itself: a jar per server on a local topology,
// else one. (A split brain's and a cluster's copies follow one another:
// followsAnother.)
func copiesOf(r *Result) int {
	return topology.CopyCount(topology.Config{Kind: TopologyKind(r.Topology), Servers: r.Servers})
}

// followsAnother reports whether r's copies also take writes from another
// (a split brain's replica, a cluster's), so that only those that decided
// for themselves are compared.
func followsAnother(r *Result) bool {
	return r.Topology == string(SplitBrain) || r.Topology == string(Cluster)
}
