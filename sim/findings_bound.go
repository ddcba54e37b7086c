package sim

// The finding that weighs a key's worst second against the most its
// topology's design allows it: a synced topology's (topology.Synced), a
// two-tier one's (topology.TwoTier), regions' (topology.Regions).

import (
	"fmt"
	"time"

	"github.com/ratelim/ratelim/internal/words"
)

// FindingDesignBound: a key's most admitted within one second against
// the most its topology's design allows it (KeyResult.DesignBound1s): on
// a synced topology, the servers its requests reached each blind to the
// others' admissions of up to two sync intervals; on regions, each region
// blind to the others' for the replication lag (or for good); on a
// two-tier one failing open, the servers' local tiers alone. Value:
// measured ÷ bound.
const FindingDesignBound FindingKind = "design-bound"

// designBoundFindings weighs the key that came closest to its bound:
// on a synced run, among those that admitted more than an exact
// limiter's worst second (a dropped push, which the bound does not
// cover, is said); on a two-tier run, among those that failed open, which
// the local tiers held.
func designBoundFindings(r *Result) []Finding {
	var best Finding
	found := false
	for _, k := range r.Keys {
		if k.DesignBound1s == 0 {
			continue
		}
		ratio := float64(k.MaxAllowed1s) / float64(k.DesignBound1s)
		if found && ratio <= best.Value {
			continue
		}
		var text string
		switch {
		case r.Synced != nil && r.Synced.IntervalMs > 0 && k.MaxAllowed1s > k.IdealMaxAllowed1s && k.FailedOpen == 0:
			interval := words.Duration(time.Duration(r.Synced.IntervalMs * float64(time.Millisecond)))
			text = fmt.Sprintf("key %s got %s admitted within 1 s, an exact limiter %s; %s pushing every %s allow it at most %s (%.0f%% of that reached)",
				k.Key, words.Thousands(k.MaxAllowed1s), words.Thousands(k.IdealMaxAllowed1s),
				words.Count(int64(k.DesignServers), "server", "servers"), interval, words.Thousands(k.DesignBound1s), 100*ratio)
			if r.Synced.Dropped > 0 {
				text += fmt.Sprintf("; %s never reached the shared copy, which the bound does not cover", words.Count(r.Synced.DroppedAdmissions, "admission", "admissions"))
			}
		case r.Regions != nil && k.DesignServers > 1 && k.MaxAllowed1s > k.IdealMaxAllowed1s && k.FailedOpen == 0:
			blind := "sharing no counts"
			if r.Regions.ReplicationLagMs >= 0 {
				blind = fmt.Sprintf("replicating after %gms", r.Regions.ReplicationLagMs)
			}
			text = fmt.Sprintf("key %s got %s admitted within 1 s, an exact limiter %s; %d regions %s allow it at most %s (%.0f%% of that reached)",
				k.Key, words.Thousands(k.MaxAllowed1s), words.Thousands(k.IdealMaxAllowed1s), k.DesignServers, blind, words.Thousands(k.DesignBound1s), 100*ratio)
			if r.Regions.Lost > 0 {
				text += fmt.Sprintf("; %s were lost on the way, which the bound does not cover", words.Count(r.Regions.Lost, "replicated admission", "replicated admissions"))
			}
		case r.Owner != nil && k.MaxAllowed1s > k.IdealMaxAllowed1s && k.FailedOpen == 0:
			text = fmt.Sprintf("key %s got %s admitted within 1 s, an exact limiter %s; %s answering from their caches allow it at most %s (%.0f%% of that reached)",
				k.Key, words.Thousands(k.MaxAllowed1s), words.Thousands(k.IdealMaxAllowed1s), words.Count(int64(k.DesignServers), "node", "nodes"), words.Thousands(k.DesignBound1s), 100*ratio)
		case r.TwoTier != nil && k.FailedOpen > 0:
			text = fmt.Sprintf("key %s failed open %s times, and the local tiers of %s (%g/s, burst %d each) held it to %s within 1 s, at most %s (%.0f%% of that reached)",
				k.Key, words.Thousands(k.FailedOpen), words.Count(int64(k.DesignServers), "server", "servers"), r.TwoTier.LocalRatePerS, r.TwoTier.LocalBurst,
				words.Thousands(k.MaxAllowed1s), words.Thousands(k.DesignBound1s), 100*ratio)
		default:
			continue
		}
		best, found = Finding{Kind: FindingDesignBound, Key: k.Key, Value: round2(ratio), Text: text}, true
	}
	if !found {
		return nil
	}
	return []Finding{best}
}
