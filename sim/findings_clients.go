package sim

// Findings about clients against each other: neighbours on one key,
// retries that won nothing, a key that kept trouble where it began.

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ratelim/ratelim/internal/words"
)

const (
	// LostUnderShare: clients sharing a key were refused while sending
	// less than their share of its limit (the rate divided among the
	// key's clients): a neighbour used the quota. Value: requests lost.
	FindingLostUnderShare FindingKind = "lost-under-share"
	// RetriesWasted: a client's retries were almost all refused too, so
	// retrying multiplied its requests and won (nearly) nothing. Value:
	// retries refused.
	FindingRetriesWasted FindingKind = "retries-wasted"
	// Isolated: the limit held some clients down hard while clients on
	// other keys lost nothing: the key kept the trouble where it began.
	// Value: the clients that lost nothing.
	FindingIsolated FindingKind = "isolated"
)

func lostUnderShare(r *Result) []Finding {
	var out []Finding
	byKey := clientsByKey(r)
	for _, k := range r.Keys {
		members := byKey[k.Key]
		if len(members) < 2 || r.DurationS <= 0 {
			continue
		}
		share := r.Limit.RatePerS / float64(len(members))
		var losers []string
		var lost int64
		var top ClientResult
		for _, i := range members {
			c := r.Clients[i]
			if c.Allowed > top.Allowed {
				top = c
			}
			refused := c.Rejected - c.FailedClosed
			if refused > 0 && float64(c.Sent-c.Retries)/r.DurationS <= share {
				losers = append(losers, c.Name)
				lost += refused
			}
		}
		if len(losers) == 0 {
			continue
		}
		text := fmt.Sprintf("%s had %s refused sending under %s share of key %s (%s/s ÷ %d clients)",
			nameList(losers), requests(lost), their(len(losers)), k.Key, strconv.FormatFloat(r.Limit.RatePerS, 'f', -1, 64), len(members))
		if !slices.Contains(losers, top.Name) && top.Allowed > 0 {
			text += fmt.Sprintf("; %s took %s of the key's %s admitted", top.Name, words.Thousands(top.Allowed), words.Thousands(k.Allowed))
		}
		out = append(out, Finding{Kind: FindingLostUnderShare, Key: k.Key, Value: float64(lost), Text: text})
	}
	slices.SortStableFunc(out, func(a, b Finding) int { return cmp.Compare(b.Value, a.Value) })
	return out
}

func retriesWasted(r *Result) []Finding {
	var out []Finding
	// The retrier that did best, to contrast with.
	var best ClientResult
	bestShare := -1.0
	for _, c := range r.Clients {
		if c.Retries >= minRetries {
			if s := float64(c.RetriesAllowed) / float64(c.Retries); s > bestShare {
				best, bestShare = c, s
			}
		}
	}
	for _, c := range r.Clients {
		if c.Retries < minRetries || float64(c.RetriesAllowed) > wastedShare*float64(c.Retries) {
			continue
		}
		won := "won almost nothing"
		if c.RetriesAllowed == 0 {
			won = "won nothing"
		}
		text := fmt.Sprintf("%s sent %s and %s admitted: retrying %s", c.Name, words.Count(c.Retries, "retry", "retries"),
			admittedCount(c.RetriesAllowed), won)
		if bestShare > wastedShare && best.Name != c.Name {
			text += fmt.Sprintf(" (%s got %s of its %s retries admitted)", best.Name, words.Thousands(best.RetriesAllowed), words.Thousands(best.Retries))
		}
		out = append(out, Finding{Kind: FindingRetriesWasted, Client: c.Name, Value: float64(c.Retries - c.RetriesAllowed), Text: text})
	}
	return out
}

// isolated is the lesson of a per-caller key: some clients held down hard
// while those on other keys lost nothing. Not where neighbours on a held
// key lost too (that is lost-under-share, the opposite lesson).
func isolated(r *Result, shared bool) (Finding, bool) {
	if shared {
		return Finding{}, false
	}
	heldKeys := map[string]bool{}
	var held []string
	lo, hi := 1.0, 0.0 // the shares of their requests the held had refused
	for _, c := range r.Clients {
		refused := c.Rejected - c.FailedClosed
		if c.Sent > 0 && float64(refused) >= heldShare*float64(c.Sent) {
			held = append(held, c.Name)
			heldKeys[c.Key] = true
			share := float64(refused) / float64(c.Sent)
			lo, hi = min(lo, share), max(hi, share)
		}
	}
	var spared []string
	for _, c := range r.Clients {
		if c.Sent > 0 && c.Rejected == 0 && !heldKeys[c.Key] {
			spared = append(spared, c.Name)
		}
	}
	if len(held) == 0 || len(spared) == 0 {
		return Finding{}, false
	}
	refusedText := percentOf(lo)
	if percentOf(hi) != refusedText {
		refusedText = strings.TrimSuffix(percentOf(lo), "%") + "–" + percentOf(hi)
	}
	text := fmt.Sprintf("%s had %s of %s requests refused; %s, on other keys, lost none",
		nameList(held), refusedText, their(len(held)), nameList(spared))
	return Finding{Kind: FindingIsolated, Value: float64(len(spared)), Text: text}, true
}

// clientsByKey indexes r's clients by limiter key, in the result's order:
// one pass, so that findings over keys cost clients + keys, not their
// product (100,000 clients on their own keys).
func clientsByKey(r *Result) map[string][]int {
	out := make(map[string][]int, len(r.Keys))
	for i, c := range r.Clients {
		out[c.Key] = append(out[c.Key], i)
	}
	return out
}
