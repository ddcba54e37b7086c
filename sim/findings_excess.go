package sim

// Findings that weigh what the run admitted against one exact limiter on
// the same arrivals: its worst second, its total and why, a peer
// library's own quirk, or that it was exact.

import (
	"fmt"
	"strings"
	"time"

	"github.com/ratelim/ratelim/internal/words"
)

const (
	// WorstWindow: the most a key admitted within one second, against the
	// most an exact limiter admitted within one second on the same
	// arrivals. A fixed window's boundary shows here even when the run's
	// total is exact. Value: the ratio.
	FindingWorstWindow FindingKind = "worst-window"
	// OverAdmitted: the run admitted more than one exact limiter would
	// have on the same arrivals, and the likeliest reason (jars per
	// server, a racy read-then-write, a split brain). Value: the ratio.
	FindingOverAdmitted FindingKind = "over-admitted"
	// Peer: a model of a library people deploy (redis_rate, envoy's
	// ratelimit, ...) decided otherwise than one exact limiter of the same
	// limit on the same arrivals, with nothing in the topology or the
	// store's failures to explain it: the library's own behaviour, which
	// the finding names. Value: the requests decided otherwise.
	FindingPeer FindingKind = "peer"
	// Exact: none of the above: the limiter admitted what an exact one
	// would have. Value: the admitted ratio.
	FindingExact FindingKind = "exact"
)

const fixedWindowReason = "a fixed window lets a second burst through at its boundary"

// worstWindow is the key admitted the most in one second against an
// exact limiter; the fixed window is named as the reason only when the
// topology does not explain it instead.
func worstWindow(r *Result, topologyExplains bool) (Finding, bool) {
	var best Finding
	found := false
	byKey := clientsByKey(r)
	for _, k := range r.Keys {
		// A key that failed open is explained by that finding.
		if k.IdealMaxAllowed1s == 0 || k.MaxAllowed1s-k.IdealMaxAllowed1s < 2 || k.FailedOpen > 0 {
			continue
		}
		ratio := float64(k.MaxAllowed1s) / float64(k.IdealMaxAllowed1s)
		if ratio < overRatio || (found && ratio <= best.Value) {
			continue
		}
		who := "key " + k.Key
		if members := byKey[k.Key]; len(members) == 1 {
			who = r.Clients[members[0]].Name
		}
		text := fmt.Sprintf("%s got %s admitted within 1 s, %s an exact limiter's worst second (%s)",
			who, words.Thousands(k.MaxAllowed1s), times(ratio), words.Thousands(k.IdealMaxAllowed1s))
		if reason := algorithmReason(r); reason != "" && !topologyExplains {
			text += ": " + reason
		}
		best, found = Finding{Kind: FindingWorstWindow, Key: k.Key, Value: round2(ratio), Text: text}, true
	}
	return best, found
}

// overAdmitted is the run's total against an exact limiter's, and
// whether the store topology is the reason.
func overAdmitted(r *Result, t KeyResult, topology string) (f Finding, ok, topological bool) {
	if t.IdealAllowed == 0 {
		return Finding{}, false, false
	}
	ratio := float64(t.Allowed) / float64(t.IdealAllowed)
	if ratio < overRatio {
		return Finding{}, false, false
	}
	text := fmt.Sprintf("admitted %s what one exact limiter would on the same arrivals", times(ratio))
	reason, topological := overCause(r, t, topology)
	if reason != "" {
		text += ": " + reason
	}
	return Finding{Kind: FindingOverAdmitted, Value: round2(ratio), Text: text}, true, topological
}

// overCause names what made r admit more than an exact limiter, only where
// the figures bear it out: requests failed open that account for at least
// half the excess; jars or a race only with more than one server to hold
// them; a split brain only with a partition to split it; a fixed window's
// boundary only when nothing in the topology explains it instead.
func overCause(r *Result, t KeyResult, topology string) (reason string, topological bool) {
	if excess := t.Allowed - t.IdealAllowed; t.FailedOpen > 0 && 2*t.FailedOpen >= excess {
		return "the requests that failed open were admitted unchecked", false
	}
	if excess := t.Allowed - t.IdealAllowed; t.WouldReject > 0 && 2*t.WouldReject >= excess {
		return "the limit was in shadow mode, refusing nothing", false
	}
	if topology != "" {
		return topology, true
	}
	return algorithmReason(r), false
}

// algorithmReason is what in r's algorithm itself lets more through than
// an exact limiter: a fixed window's boundary, a peer's of that family
// too; "" for the others (a peer's own quirk is its finding).
func algorithmReason(r *Result) string {
	if Family(r.Algorithm) == "fixed-window" {
		return fixedWindowReason
	}
	return ""
}

// topologyCause is the store topology's part in an over-admission, if it
// can have one on r.
func topologyCause(r *Result) string {
	switch {
	case r.Topology == string(Local) && r.Servers > 1:
		return fmt.Sprintf("%d servers, each with its own jar", r.Servers)
	case r.Topology == string(Synced) && r.Servers > 1 && r.Synced != nil && r.Synced.IntervalMs != 0:
		if r.Synced.IntervalMs < 0 {
			return fmt.Sprintf("%d servers, each with its own jar, never synced", r.Servers)
		}
		return fmt.Sprintf("%d servers each counted in their own jar between pushes every %s, blind to the others' admissions since", r.Servers, words.Duration(time.Duration(r.Synced.IntervalMs*float64(time.Millisecond))))
	case r.Topology == string(Regions) && r.Regions != nil && r.Regions.Regions > 1:
		text := "each region's store counted only what it admitted itself"
		if r.Regions.ReplicationLagMs >= 0 {
			text = fmt.Sprintf("each region's store learned the others' admissions %gms late", r.Regions.ReplicationLagMs)
			if r.Regions.Lost > 0 {
				text += fmt.Sprintf(", and %s were lost on the way (a region down, a partition between regions, an outage)", words.Count(r.Regions.Lost, "admission", "admissions"))
			}
		}
		if r.Regions.Moved > 0 {
			text += fmt.Sprintf("; %s were served outside their region while it was down", words.Count(r.Regions.Moved, "request", "requests"))
			if r.Regions.ReplicationLagMs < 0 {
				text += ", on counts that had not seen them"
			}
		}
		return text
	case r.Topology == string(Owner) && r.Servers > 1 && r.Owner != nil:
		return fmt.Sprintf("%d nodes each answered from their own cache, blind to the others' hits until the owner's broadcast (hits sent %gms after the first, the status %gms after that)", r.Servers, r.Owner.SyncWaitMs, r.Owner.SyncWaitMs)
	case r.Topology == string(Racy) && r.Servers > 1:
		return "servers read the same state before either wrote it back"
	case r.Topology == string(Cluster):
		if lost, counted := lostAdmissions(r); lost > 0 {
			return fmt.Sprintf("a failed-over shard counted its keys twice (%s): the %s the old master took in the partition were never seen by the replica elected in its place", strings.Join(counted, "; "), words.Count(lost, "admission", "admissions"))
		}
	case r.Topology == string(SplitBrain):
		for _, f := range r.Faults {
			if f.Kind != string(Partition) {
				continue
			}
			text := "each side of the partition counted in its own copy"
			if key, x := fastestDuring(r, f.StartS, f.EndS); x >= 1.2 {
				text += fmt.Sprintf("; during it (%g–%gs) key %s was admitted %.1f× the limit's rate", f.StartS, f.EndS, key, x)
			}
			return text
		}
	}
	return ""
}

// fastestDuring is the key admitted the most against the limit's rate
// between from and to (seconds), and how many times the rate.
func fastestDuring(r *Result, from, to float64) (string, float64) {
	if !(r.Limit.RatePerS > 0) || to <= from {
		return "", 0
	}
	keyOf := make(map[string]string, len(r.Clients))
	for _, c := range r.Clients {
		keyOf[c.Name] = c.Key
	}
	allowed := map[string]int64{}
	for _, row := range r.Timeline {
		if row.TS >= from-1e-9 && row.TS < to-1e-9 {
			allowed[keyOf[row.Client]] += row.Allowed
		}
	}
	best, bestX := "", 0.0
	for _, k := range r.Keys {
		if x := float64(allowed[k.Key]) / (to - from) / r.Limit.RatePerS; x > bestX {
			best, bestX = k.Key, x
		}
	}
	return best, bestX
}

// peerFinding says what a peer model decided otherwise than one exact
// limiter, where neither the topology nor the store's failures can be the
// cause: with them out of the way, every difference is the library's.
func peerFinding(r *Result, t KeyResult, topology string) (Finding, bool) {
	p := PeerOf(r.Algorithm)
	if p == nil || topology != "" || t.FailedOpen+t.FailedClosed > 0 || t.FalseDenies+t.FalseAllows == 0 {
		return Finding{}, false
	}
	var did []string
	if t.FalseDenies > 0 {
		did = append(did, fmt.Sprintf("refused %s that one exact limiter of the same limit admitted", requests(t.FalseDenies)))
	}
	if t.FalseAllows > 0 {
		what := "that one exact limiter of the same limit refused"
		if len(did) > 0 {
			what = "that it refused"
		}
		did = append(did, fmt.Sprintf("admitted %s %s", requests(t.FalseAllows), what))
	}
	text := fmt.Sprintf("%s %s: %s", r.Algorithm, strings.Join(did, ", and "), p.Quirk)
	return Finding{Kind: FindingPeer, Value: float64(t.FalseDenies + t.FalseAllows), Text: text}, true
}

// exactFinding is what a run with nothing else to say shows: it admitted
// what one exact limiter would have.
func exactFinding(t KeyResult) Finding {
	ratio := 1.0
	if t.IdealAllowed > 0 {
		ratio = float64(t.Allowed) / float64(t.IdealAllowed)
	}
	return Finding{Kind: FindingExact, Value: round2(ratio),
		Text: fmt.Sprintf("admitted %s what one exact limiter would on the same arrivals", times(ratio))}
}
