package sim

// The findings of a cluster's shards: what a partition did to each one's
// keys (Result.Shards), told per shard with the requests it touched.

import (
	"fmt"
	"strings"

	"github.com/ratelim/ratelim/internal/words"
)

const (
	// FindingFailedOver: a shard's master was failed by the majority and
	// a replica elected in its place; the admissions the old master took
	// during the partition were lost. Value: the admissions lost.
	FindingFailedOver FindingKind = "failed-over"
	// FindingFenced: a shard's master, cut off from the majority of
	// masters for the node timeout, answered CLUSTERDOWN for every key.
	// Value: the requests it refused so.
	FindingFenced FindingKind = "fenced"
	// FindingMasterUnreachable: a shard's keys' requests waited for a
	// master on the other side of a partition, until the server's
	// timeout. Value: the requests that waited.
	FindingMasterUnreachable FindingKind = "master-unreachable"
	// FindingUncovered: with full coverage required, nodes answered
	// CLUSTERDOWN for every key while a failed master's slots had no
	// master. Value: the requests refused so.
	FindingUncovered FindingKind = "uncovered"
)

// shardFindings are the findings of kind, one per shard that shows it.
func shardFindings(r *Result, kind FindingKind) []Finding {
	var out []Finding
	for _, sh := range r.Shards {
		if len(sh.Keys) == 0 {
			continue
		}
		var text string
		var value int64
		switch kind {
		case FindingFailedOver:
			promoted, ok := eventOf(sh, "promoted")
			if !ok {
				continue
			}
			value = sh.Lost
			text = fmt.Sprintf("%s was elected in %s's place at %gs; the %s %s took during the partition were lost", promoted.Node, sh.Master, round2(promoted.TS), words.Count(sh.Lost, "admission", "admissions"), sh.Master)
			if n := countEvents(sh, "promoted"); n > 1 {
				text = fmt.Sprintf("%d failovers, the first at %gs (%s in %s's place); the %s the old masters took during the partitions were lost", n, round2(promoted.TS), promoted.Node, sh.Master, words.Count(sh.Lost, "admission", "admissions"))
			}
		case FindingFenced:
			fenced, ok := eventOf(sh, "fenced")
			if !ok || sh.Fenced == 0 {
				continue
			}
			value = sh.Fenced
			text = fmt.Sprintf("%s, cut off from the majority of masters, answered CLUSTERDOWN from %gs: %s %s", fenced.Node, round2(fenced.TS), requests(sh.Fenced), policyDid(r))
		case FindingMasterUnreachable:
			if sh.TimedOut == 0 {
				continue
			}
			value = sh.TimedOut
			wait := ""
			if r.TimeoutMs > 0 {
				wait = fmt.Sprintf(" %gms", r.TimeoutMs)
			}
			text = fmt.Sprintf("%s waited%s for a master across the partition, then %s", requests(sh.TimedOut), wait, policyDid(r))
		}
		keys := affectedBy(sh, kind)
		if len(keys) == 0 {
			keys = sh.Keys
		}
		out = append(out, Finding{Kind: kind, Key: keys[0], Value: float64(value), Text: shardName(sh, keys) + ": " + text})
	}
	return out
}

// uncoveredFinding is the run's CLUSTERDOWN for slots without a master.
func uncoveredFinding(r *Result) (Finding, bool) {
	var n int64
	var windows []string
	for _, sh := range r.Shards {
		n += sh.Uncovered
		failed, ok := eventOf(sh, "failed")
		if !ok {
			continue
		}
		window := fmt.Sprintf("%s's from %gs", sh.Master, round2(failed.TS))
		if promoted, ok := eventOf(sh, "promoted"); ok {
			window = fmt.Sprintf("%s's %g–%gs", sh.Master, round2(failed.TS), round2(promoted.TS))
		}
		windows = append(windows, window)
	}
	if n == 0 {
		return Finding{}, false
	}
	text := fmt.Sprintf("full coverage: nodes answered CLUSTERDOWN for every key while a failed master's slots had none (%s): %s %s", strings.Join(windows, ", "), requests(n), policyDid(r))
	return Finding{Kind: FindingUncovered, Value: float64(n), Text: text}, true
}

// shardName is "key orders (shard 0, slots 0–5460)", or "keys a, b and c
// (…)": keys, of shard sh.
func shardName(sh ShardResult, keys []string) string {
	noun := "key "
	if len(keys) > 1 {
		noun = "keys "
	}
	return fmt.Sprintf("%s%s (shard %d, slots %d–%d)", noun, nameList(keys), sh.Shard, sh.FirstSlot, sh.LastSlot)
}

// affectedBy are sh's keys whose requests met what a finding of kind
// tells: a fence's CLUSTERDOWN, a wait across the partition; nil for a
// kind about the shard as a whole (a failover).
func affectedBy(sh ShardResult, kind FindingKind) []string {
	var keys []string
	for _, k := range sh.Affected {
		if (kind == FindingFenced && k.Fenced > 0) || (kind == FindingMasterUnreachable && k.TimedOut > 0) {
			keys = append(keys, k.Key)
		}
	}
	return keys
}

// countEvents is how many of sh's events are what.
func countEvents(sh ShardResult, what string) int {
	n := 0
	for _, e := range sh.Events {
		if e.What == what {
			n++
		}
	}
	return n
}

// eventOf is sh's first event of what.
func eventOf(sh ShardResult, what string) (ShardEvent, bool) {
	for _, e := range sh.Events {
		if e.What == what {
			return e, true
		}
	}
	return ShardEvent{}, false
}

// policyDid is what the fail policy did with a request the store did not
// decide: "failed open" or "failed closed".
func policyDid(r *Result) string {
	if r.OnError == "fail-closed" {
		return "failed closed"
	}
	return "failed open"
}

// lostAdmissions are the admissions failovers discarded in r.
func lostAdmissions(r *Result) (lost int64, shards []string) {
	for _, sh := range r.Shards {
		if sh.Lost > 0 {
			lost += sh.Lost
			shards = append(shards, fmt.Sprintf("%s then %s", sh.Master, sh.EndMaster))
		}
	}
	return lost, shards
}
