package sim

// Findings about how the limit itself is set: in shadow mode, with a
// longer quota beside it, counting cost, queueing instead of refusing.

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/ratelim/ratelim/internal/words"
)

const (
	// Shadow: the limit ran in shadow mode (a dark launch) and would have
	// refused requests it let through: whom it would have throttled, and
	// how many. Value: the requests it would have refused.
	FindingShadow FindingKind = "shadow"
	// Quota: on a key with several limits, a client was refused mostly
	// by one that is not the strictest per second: it kept within its
	// per-second limit and ran out of a longer quota (an hourly one).
	// Value: the requests that limit refused.
	FindingQuota FindingKind = "quota"
	// Costly: a client was refused while it sent fewer requests a second
	// than the limit's rate, because its requests cost more than 1 each
	// (a search costing 5): the limit counts the work asked, not the
	// requests. Value: the requests refused.
	FindingCostly FindingKind = "costly"
	// Queued: a leaky bucket made admitted requests wait in its queue
	// instead of refusing them. Value: the longest wait at the 99th
	// percentile, in seconds.
	FindingQueued FindingKind = "queued"
)

// shadowFinding is what a limit in shadow mode would have done: the
// requests it would have refused, and whose, the most first.
func shadowFinding(r *Result, t KeyResult) (Finding, bool) {
	shadowed := r.Limit.Shadow
	limit, untilS := "the limit", r.Limit.ShadowUntilS
	if len(r.Limit.Limits) > 0 {
		// Several limits: name the shadowed ones.
		var names []string
		shadowed, untilS = false, 0
		for _, p := range r.Limit.Limits {
			if p.Shadow {
				shadowed = true
				names = append(names, strconv.Quote(p.Name))
				untilS = max(untilS, p.ShadowUntilS)
			}
		}
		if shadowed {
			limit = "the " + nameList(names) + " limit"
			if len(names) > 1 {
				limit += "s"
			}
		}
	}
	if !shadowed || t.WouldReject == 0 {
		return Finding{}, false
	}
	var hit []ClientResult
	for _, c := range r.Clients {
		if c.WouldReject > 0 {
			hit = append(hit, c)
		}
	}
	slices.SortStableFunc(hit, func(a, b ClientResult) int { return cmp.Compare(b.WouldReject, a.WouldReject) })
	var names []string
	for _, c := range hit {
		names = append(names, c.Name)
	}
	when := "in shadow mode"
	if untilS > 0 {
		when = fmt.Sprintf("in shadow mode until %gs", untilS)
	}
	text := fmt.Sprintf("%s, %s would have refused %s and let them through (%s of them %s's): it would throttle %s",
		when, limit, requests(t.WouldReject), words.Thousands(hit[0].WouldReject), hit[0].Name, nameList(names))
	return Finding{Kind: FindingShadow, Client: hit[0].Name, Value: float64(t.WouldReject), Text: text}, true
}

// quotaFinding is the client that a key's longer quota held down the
// most: refused mostly by a limit whose window is longer than the
// shortest limit's, while the short one refused it little. The quota a
// client meets only after minutes of traffic its per-second limit let
// through is the lesson of publishing both.
func quotaFinding(r *Result) (Finding, bool) {
	limits := r.Limit.Limits
	if len(limits) < 2 {
		return Finding{}, false
	}
	horizon := func(p PolicyResult) float64 {
		if p.WindowS > 0 {
			return p.WindowS
		}
		return float64(max(p.Burst, 1)) / max(p.RatePerS, 1e-300) // a bucket's refill time
	}
	shortest := 0
	for i, p := range limits {
		if horizon(p) < horizon(limits[shortest]) {
			shortest = i
		}
	}
	best, bestLimit, bestN := -1, -1, int64(0)
	for ci, c := range r.Clients {
		for i, p := range limits {
			n := c.RejectedBy[p.Name]
			if i == shortest || n <= bestN || n <= c.RejectedBy[limits[shortest].Name] {
				continue
			}
			best, bestLimit, bestN = ci, i, n
		}
	}
	if best < 0 {
		return Finding{}, false
	}
	c, p, s := r.Clients[best], limits[bestLimit], limits[shortest]
	text := fmt.Sprintf("%s kept within %q (%s) but ran out of %q (%s): %s refused by %q, %s by %q",
		c.Name, s.Name, s.Text(), p.Name, p.Text(), requests(bestN), p.Name, words.Thousands(c.RejectedBy[s.Name]), s.Name)
	return Finding{Kind: FindingQuota, Client: c.Name, Value: float64(bestN), Text: text}, true
}

// costlyFinding is the client most refused while sending fewer requests
// a second than the limit's rate, its requests costing more than one unit
// each: what a limit that counts requests would have let through, and the
// backend would have paid for.
func costlyFinding(r *Result) (Finding, bool) {
	if r.DurationS <= 0 || r.Limit.RatePerS <= 0 {
		return Finding{}, false
	}
	best := -1
	for i, c := range r.Clients {
		if c.CostSent <= c.Sent || c.Rejected == 0 || float64(c.Sent)/r.DurationS > r.Limit.RatePerS {
			continue
		}
		if best < 0 || c.Rejected > r.Clients[best].Rejected {
			best = i
		}
	}
	if best < 0 {
		return Finding{}, false
	}
	c := r.Clients[best]
	text := fmt.Sprintf("%s was refused %s of %s though it sent %s, under the limit's %s: at a cost of %s a request it asked for %s of quota",
		c.Name, words.Thousands(c.Rejected), requests(c.Sent), words.Rate(float64(c.Sent)/r.DurationS), words.Rate(r.Limit.RatePerS),
		strconv.FormatFloat(float64(c.CostSent)/float64(c.Sent), 'g', 3, 64), words.Rate(float64(c.CostSent)/r.DurationS))
	return Finding{Kind: FindingCostly, Client: c.Name, Value: float64(c.Rejected), Text: text}, true
}

// minQueueWait is the wait in a leaky bucket's queue, beyond the round
// trip, that is worth a finding.
const minQueueWait = 0.1 // seconds

// queued is a leaky bucket's lesson: what it admits, it delays.
func queued(r *Result) (Finding, bool) {
	if Family(r.Algorithm) != "leaky-bucket" {
		return Finding{}, false
	}
	var worst ClientResult
	for _, c := range r.Clients {
		if c.LatencyMs.P99 > worst.LatencyMs.P99 {
			worst = c
		}
	}
	wait := (worst.LatencyMs.P99 - r.RTTMs) / 1000
	if wait < minQueueWait {
		return Finding{}, false
	}
	text := fmt.Sprintf("%s's admitted requests waited up to %.1f s in the queue (p99): a leaky bucket delays a burst to its rate instead of letting it through", worst.Name, wait)
	return Finding{Kind: FindingQueued, Client: worst.Name, Value: math.Round(wait*1000) / 1000, Text: text}, true
}

// Text says one of a key's limits as people write it: "10/s, burst 20",
// "1,000 per 1h", "at most 10 in flight, leases of 20s".
func (p PolicyResult) Text() string {
	if p.MaxInFlight > 0 {
		return words.Concurrency(p.MaxInFlight, p.LeaseTTLS)
	}
	if p.WindowS > 0 {
		w := time.Duration(p.WindowS * float64(time.Second))
		return fmt.Sprintf("%s per %s", words.Thousands(int64(math.Round(p.RatePerS*p.WindowS))), words.Duration(w))
	}
	return fmt.Sprintf("%s/s, burst %s", strconv.FormatFloat(p.RatePerS, 'g', 4, 64), words.Thousands(p.Burst))
}
