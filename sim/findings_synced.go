package sim

// The finding that weighs a synced topology's worst second against the
// most its design allows (topology.Synced's bound).

import (
	"fmt"
	"time"

	"github.com/ratelim/ratelim/internal/words"
)

// FindingSyncedBound: on a synced topology, a key's most admitted within
// one second against the most the design allows it (SyncedBound): the
// servers its requests reached, each blind to the others' admissions of
// up to two sync intervals. Value: measured ÷ bound.
const FindingSyncedBound FindingKind = "synced-bound"

// syncedBoundFindings weighs each key of a synced run that admitted more
// than an exact limiter's worst second against its bound; the key that
// came closest to it leads. A dropped push, which the bound does not
// cover, is said.
func syncedBoundFindings(r *Result) []Finding {
	if r.Synced == nil || r.Synced.IntervalMs <= 0 {
		return nil
	}
	var best Finding
	found := false
	for _, k := range r.Keys {
		if k.SyncedBound1s == 0 || k.MaxAllowed1s <= k.IdealMaxAllowed1s || k.FailedOpen > 0 {
			continue
		}
		ratio := float64(k.MaxAllowed1s) / float64(k.SyncedBound1s)
		if found && ratio <= best.Value {
			continue
		}
		interval := words.Duration(time.Duration(r.Synced.IntervalMs * float64(time.Millisecond)))
		text := fmt.Sprintf("key %s got %s admitted within 1 s, an exact limiter %s; %s pushing every %s allow it at most %s (%.0f%% of that reached)",
			k.Key, words.Thousands(k.MaxAllowed1s), words.Thousands(k.IdealMaxAllowed1s),
			words.Count(int64(k.SyncedServers), "server", "servers"), interval, words.Thousands(k.SyncedBound1s), 100*ratio)
		if r.Synced.Dropped > 0 {
			text += fmt.Sprintf("; %s never reached the shared copy, which the bound does not cover", words.Count(r.Synced.DroppedAdmissions, "admission", "admissions"))
		}
		best, found = Finding{Kind: FindingSyncedBound, Key: k.Key, Value: round2(ratio), Text: text}, true
	}
	if !found {
		return nil
	}
	return []Finding{best}
}
