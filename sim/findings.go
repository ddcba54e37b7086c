package sim

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
)

// The lessons a run can show. Each is computed from the Result's figures
// alone, so a live run's result (sim.Replay) has them too.
const (
	// FailedClosed: the store was unreachable and the fail-closed policy
	// refused requests, some from clients the limiter would have admitted
	// in full. Value: the requests refused so.
	FindingFailedClosed FindingKind = "failed-closed"
	// FailedOpen: the store was unreachable and the fail-open policy
	// admitted requests unchecked. Value: the requests admitted so.
	FindingFailedOpen FindingKind = "failed-open"
	// Queued: a leaky bucket made admitted requests wait in its queue
	// instead of refusing them. Value: the longest wait at the 99th
	// percentile, in seconds.
	FindingQueued FindingKind = "queued"
	// WorstWindow: the most a key admitted within one second, against the
	// most an exact limiter admitted within one second on the same
	// arrivals. A fixed window's boundary shows here even when the run's
	// total is exact. Value: the ratio.
	FindingWorstWindow FindingKind = "worst-window"
	// OverAdmitted: the run admitted more than one exact limiter would
	// have on the same arrivals, and the likeliest reason (jars per
	// server, a racy read-then-write, a split brain). Value: the ratio.
	FindingOverAdmitted FindingKind = "over-admitted"
	// CopiesDiverged: copies of one key's state (a jar per server, the
	// two sides of a partition) disagreed about what is left. Value: the
	// widest gap, in unit requests.
	FindingCopiesDiverged FindingKind = "copies-diverged"
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
	// Peer: a model of a library people deploy (redis_rate, envoy's
	// ratelimit, ...) decided otherwise than one exact limiter of the same
	// limit on the same arrivals, with nothing in the topology or the
	// store's failures to explain it: the library's own behaviour, which
	// the finding names. Value: the requests decided otherwise.
	FindingPeer FindingKind = "peer"
	// Shadow: the limit ran in shadow mode (a dark launch) and would have
	// refused requests it let through: whom it would have throttled, and
	// how many. Value: the requests it would have refused.
	FindingShadow FindingKind = "shadow"
	// Quota: on a key with several limits, a client was refused mostly
	// by one that is not the strictest per second: it kept within its
	// per-second limit and ran out of a longer quota (an hourly one).
	// Value: the requests that limit refused.
	FindingQuota FindingKind = "quota"
	// Leaked: a server crashed mid-request holding a concurrency limit's
	// leases, which nothing gave back until they expired: slots counted in
	// flight though nothing ran, and requests refused that an exact
	// limiter without the crash admitted. Value: those requests.
	FindingLeaked FindingKind = "leaked"
	// Shed: the fleet's load shedder turned requests away with 503 for
	// want of capacity, the lower priorities first: whose, and that the
	// critical ones were kept. Value: the requests shed.
	FindingShed FindingKind = "shed"
	// Costly: a client was refused while it sent fewer requests a second
	// than the limit's rate, because its requests cost more than 1 each
	// (a search costing 5): the limit counts the work asked, not the
	// requests. Value: the requests refused.
	FindingCostly FindingKind = "costly"
	// NoAnswer: requests of a live run got no HTTP answer (a refused
	// connection, a reset, a timeout): no limiter decided them, and the
	// run's other figures are of the rest. Value: the requests
	// unanswered.
	FindingNoAnswer FindingKind = "no-answer"
	// Exact: none of the above: the limiter admitted what an exact one
	// would have. Value: the admitted ratio.
	FindingExact FindingKind = "exact"
)

// FindingKinds are every kind, in the order Findings ranks them: the
// earlier, the more it explains of what a run shows.
func FindingKinds() []FindingKind { return slices.Clone(findingKinds) }

var findingKinds = []FindingKind{
	FindingNoAnswer, FindingFailedClosed, FindingFailedOpen, FindingLeaked, FindingShed, FindingShadow, FindingQuota, FindingCostly, FindingQueued, FindingWorstWindow, FindingOverAdmitted,
	FindingCopiesDiverged, FindingLostUnderShare, FindingRetriesWasted, FindingIsolated, FindingPeer, FindingExact,
}

// FindingSubject says what a finding of kind is about: "client" (its
// Client is set), "key" (its Key is set), or "" (the run as a whole).
func FindingSubject(kind FindingKind) string {
	switch kind {
	case FindingFailedOpen, FindingQueued, FindingRetriesWasted, FindingShadow, FindingQuota, FindingCostly, FindingLeaked, FindingShed:
		return "client"
	case FindingWorstWindow, FindingCopiesDiverged, FindingLostUnderShare:
		return "key"
	}
	return ""
}

// Thresholds below which a difference is noise, not a lesson.
const (
	// overRatio is how far above an exact limiter a run or a second must
	// admit to be over: 5%.
	overRatio = 1.05
	// wastedShare is the share of retries admitted at or under which
	// retrying won nothing worth its cost.
	wastedShare = 0.10
	// minRetries is how many retries a client must send before what they
	// won says anything.
	minRetries = 10
	// heldShare is the share of its requests a client must lose to count
	// as held down in FindingIsolated.
	heldShare = 0.5
)

const fixedWindowReason = "a fixed window lets a second burst through at its boundary"

// Findings computes what r teaches, most telling first (the order of
// FindingKinds); never empty: a run with nothing to say finds it exact.
func Findings(r *Result) []Finding {
	if r.TimelineSparse {
		// Read back from a sparse JSON: the copies' state series are
		// compared step by step, so each needs every step's point.
		dense := *r
		dense.Densify()
		r = &dense
	}
	// Once, for the findings that read them: the totals, and what the
	// topology can explain (a split brain's reads the whole timeline).
	t := r.Totals()
	topology := topologyCause(r)
	var out []Finding
	if t.NoAnswer > 0 {
		out = append(out, noAnswerFinding(t))
	}
	out = append(out, failedFindings(r, t)...)
	if f, ok := leakedFinding(r); ok {
		out = append(out, f)
	}
	if f, ok := shedFinding(r); ok {
		out = append(out, f)
	}
	if f, ok := shadowFinding(r, t); ok {
		out = append(out, f)
	}
	if f, ok := quotaFinding(r); ok {
		out = append(out, f)
	}
	if f, ok := costlyFinding(r); ok {
		out = append(out, f)
	}
	if f, ok := queued(r); ok {
		out = append(out, f)
	}
	worst, worstOK := worstWindow(r, topology != "")
	over, overOK, topological := overAdmitted(r, t, topology)
	// A boundary burst is the lesson even when the total is as over: it
	// says where the excess went. Jars per server, a race or a split
	// brain explain the worst second as well as the total.
	if worstOK && (!overOK || (!topological && worst.Value >= over.Value)) {
		out = append(out, worst)
		worstOK = false
		over.Text = strings.TrimSuffix(over.Text, ": "+algorithmReason(r)) // said once is enough
	}
	if overOK {
		out = append(out, over)
	}
	if worstOK {
		out = append(out, worst)
	}
	if f, ok := copiesDiverged(r); ok {
		out = append(out, f)
	}
	shared := lostUnderShare(r)
	out = append(out, shared...)
	out = append(out, retriesWasted(r)...)
	if f, ok := isolated(r, len(shared) > 0); ok {
		out = append(out, f)
	}
	// Last of the lessons: what the library did otherwise is about the
	// library, where the others are about the traffic and the topology.
	if f, ok := peerFinding(r, t, topology); ok {
		out = append(out, f)
	}
	if len(out) == 0 {
		ratio := 1.0
		if t.IdealAllowed > 0 {
			ratio = float64(t.Allowed) / float64(t.IdealAllowed)
		}
		out = append(out, Finding{Kind: FindingExact, Value: round2(ratio),
			Text: fmt.Sprintf("admitted %s what one exact limiter would on the same arrivals", times(ratio))})
	}
	return out
}

// Headline is r's lesson in one line: its first finding.
func Headline(r *Result) string {
	if len(r.Findings) > 0 {
		return r.Findings[0].Text
	}
	if f := Findings(r); len(f) > 0 {
		return f[0].Text
	}
	return ""
}

func failedFindings(r *Result, t KeyResult) []Finding {
	var out []Finding
	during := outageText(r)
	if t.FailedClosed > 0 {
		var entitled []string
		var lost int64
		for _, c := range r.Clients {
			// Under its limit: an exact limiter would have admitted every
			// first try.
			if c.FailedClosed > 0 && c.IdealAllowed >= c.Sent-c.Retries {
				entitled = append(entitled, c.Name)
				lost += c.FailedClosed
			}
		}
		text := fmt.Sprintf("%s failed closed %s", requests(t.FailedClosed), during)
		if len(entitled) > 0 {
			text += fmt.Sprintf(": %s, under %s limit, lost %s", nameList(entitled), their(len(entitled)), Thousands(lost))
		}
		out = append(out, Finding{Kind: FindingFailedClosed, Value: float64(t.FailedClosed), Text: text})
	}
	if t.FailedOpen > 0 {
		top := slices.MaxFunc(r.Clients, func(a, b ClientResult) int { return cmp.Compare(a.FailedOpen, b.FailedOpen) })
		text := fmt.Sprintf("%s failed open, admitted unchecked %s", requests(t.FailedOpen), during)
		if top.FailedOpen < t.FailedOpen {
			text += fmt.Sprintf("; %s were %s's", Thousands(top.FailedOpen), top.Name)
		}
		out = append(out, Finding{Kind: FindingFailedOpen, Client: top.Name, Value: float64(t.FailedOpen), Text: text})
	}
	return out
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

// outageText names when the store could not be reached: "while the store
// was down (10–20s)".
func outageText(r *Result) string {
	var spans []string
	for _, f := range r.Faults {
		if f.Kind == string(Outage) || f.Kind == string(Partition) {
			spans = append(spans, fmt.Sprintf("%g–%gs", f.StartS, f.EndS))
		}
	}
	cas := ""
	if p := PeerOf(r.Algorithm); p != nil && p.Write == "cas" && r.Topology == string(Racy) {
		cas = fmt.Sprintf("when %s's compare-and-swap found the key changed %d times in a row, servers contending for it", r.Algorithm, maxCASAttempts)
	}
	switch {
	case len(spans) == 0 && cas != "":
		return cas
	case len(spans) == 0:
		return "while the store was unreachable"
	case cas != "":
		return "while the store was unreachable (" + strings.Join(spans, ", ") + ") or " + cas
	}
	return "while the store was unreachable (" + strings.Join(spans, ", ") + ")"
}

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
			who, Thousands(k.MaxAllowed1s), times(ratio), Thousands(k.IdealMaxAllowed1s))
		if reason := algorithmReason(r); reason != "" && !topologyExplains {
			text += ": " + reason
		}
		best, found = Finding{Kind: FindingWorstWindow, Key: k.Key, Value: round2(ratio), Text: text}, true
	}
	return best, found
}

// noAnswerFinding says how many of a live run's requests got no HTTP
// answer, which its other figures leave out.
func noAnswerFinding(t KeyResult) Finding {
	text := fmt.Sprintf("%s of %s requests got no HTTP answer (not counted as rejected): the other figures are of the %s answered",
		Thousands(t.NoAnswer), Thousands(t.Sent), Thousands(t.Sent-t.NoAnswer))
	if t.NoAnswer == t.Sent {
		text = fmt.Sprintf("none of %s requests got an HTTP answer: the run says nothing about a limiter", Thousands(t.Sent))
	}
	return Finding{Kind: FindingNoAnswer, Value: float64(t.NoAnswer), Text: text}
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

// topologyCause is the store topology's part in an over-admission, if it
// can have one on r.
func topologyCause(r *Result) string {
	switch {
	case r.Topology == string(Local) && r.Servers > 1:
		return fmt.Sprintf("%d servers, each with its own jar", r.Servers)
	case r.Topology == string(Racy) && r.Servers > 1:
		return "servers read the same state before either wrote it back"
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
		worst = gapOfSeries(r.State)
	}
	if worst.spread < threshold {
		return Finding{}, false
	}
	text := fmt.Sprintf("key %s: its %d copies disagreed by up to %s at %gs", worst.key, worst.copies, requests(worst.spread), worst.at)
	switch r.Topology {
	case string(Local):
		text += ", each server counting alone"
	case string(SplitBrain):
		text += ", each side of the split counting alone"
	}
	return Finding{Kind: FindingCopiesDiverged, Key: worst.key, Value: float64(worst.spread), Text: text}, true
}

// gapOfSeries is the copyGap of a run's state series.
func gapOfSeries(state []StateSeries) *copyGap {
	worst := &copyGap{}
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
		if len(series) < 2 {
			continue
		}
		for i := range series[0].Remaining {
			lo, hi := int64(math.MaxInt64), int64(-1)
			for _, s := range series {
				if i < len(s.Remaining) && s.Remaining[i] >= 0 {
					lo, hi = min(lo, s.Remaining[i]), max(hi, s.Remaining[i])
				}
			}
			worst.see(key, ki, len(series), lo, hi, series[0].TS[i])
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
			out = append(out, StateSeries{Key: s.Key, Copy: s.Copy, TS: s.TS, Remaining: slices.Clone(s.Remaining)})
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
			text += fmt.Sprintf("; %s took %s of the key's %s admitted", top.Name, Thousands(top.Allowed), Thousands(k.Allowed))
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
		text := fmt.Sprintf("%s sent %s and %s admitted: retrying %s", c.Name, plural64(c.Retries, "retry", "retries"),
			admittedCount(c.RetriesAllowed), won)
		if bestShare > wastedShare && best.Name != c.Name {
			text += fmt.Sprintf(" (%s got %s of its %s retries admitted)", best.Name, Thousands(best.RetriesAllowed), Thousands(best.Retries))
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

var numbered = regexp.MustCompile(`^(.*?)(\d+)$`)

// nameList names clients for a sentence: "office-1…10" for a numbered run
// of one prefix, else "a, b and c", or the first three "and 5 others".
func nameList(names []string) string {
	if len(names) > 2 {
		var prefix string
		first, last := 0, 0
		run := true
		for i, n := range names {
			m := numbered.FindStringSubmatch(n)
			if m == nil {
				run = false
				break
			}
			v, err := strconv.Atoi(m[2])
			if err != nil || (i > 0 && (m[1] != prefix || v != last+1)) {
				run = false
				break
			}
			if i == 0 {
				prefix, first = m[1], v
			}
			last = v
		}
		if run {
			return fmt.Sprintf("%s%d…%d", prefix, first, last)
		}
	}
	switch {
	case len(names) == 1:
		return names[0]
	case len(names) <= 3:
		return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
	default:
		return fmt.Sprintf("%s and %d others", strings.Join(names[:3], ", "), len(names)-3)
	}
}

func their(n int) string {
	if n == 1 {
		return "its"
	}
	return "their"
}

func requests(n int64) string { return plural64(n, "request", "requests") }

func plural64(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return Thousands(n) + " " + many
}

func admittedCount(n int64) string {
	switch n {
	case 0:
		return "none were"
	case 1:
		return "1 was"
	}
	return Thousands(n) + " were"
}

// percentOf is a share as percent does it.
func percentOf(share float64) string { return percent(int64(math.Round(share*1e6)), 1e6) }

// percent is part of whole as "99%", or "<1%" and ">99%" near the ends so
// that a rounded figure never claims all or nothing.
func percent(part, whole int64) string {
	if whole == 0 {
		return "0%"
	}
	p := 100 * float64(part) / float64(whole)
	switch {
	case part > 0 && p < 1:
		return "<1%"
	case part < whole && p > 99:
		return ">99%"
	}
	return fmt.Sprintf("%.0f%%", p)
}

func times(ratio float64) string { return fmt.Sprintf("%.2f×", ratio) }

func round2(v float64) float64 { return math.Round(v*100) / 100 }

// Thousands writes n with a comma every three digits: 158,008.
func Thousands(n int64) string { return humanize.Comma(n) }

// leakedFinding is the crash whose leases cost the most: the requests an
// exact limiter without it admitted and the run refused, and whose.
func leakedFinding(r *Result) (Finding, bool) {
	var crash *FaultSpan
	for i := range r.Faults {
		if f := &r.Faults[i]; f.Leaked > 0 && (crash == nil || f.Leaked > crash.Leaked) {
			crash = f
		}
	}
	if crash == nil {
		return Finding{}, false
	}
	var denied int64
	top := -1
	for i, c := range r.Clients {
		denied += c.FalseDenies
		if c.FalseDenies > 0 && (top < 0 || c.FalseDenies > r.Clients[top].FalseDenies) {
			top = i
		}
	}
	if top < 0 {
		return Finding{}, false
	}
	text := fmt.Sprintf("a crash at %gs (%s) left %s held that no request used until they expired at %s: %s refused that an exact limiter without it admitted, %s of them %s",
		crash.StartS, crash.Detail, plural64(crash.Leaked, "lease", "leases"), ShortDuration(time.Duration(crash.LeakedUntilS*float64(time.Second)).Round(time.Millisecond)),
		requests(denied), Thousands(r.Clients[top].FalseDenies), possessive(r.Clients[top].Name))
	return Finding{Kind: FindingLeaked, Client: r.Clients[top].Name, Value: float64(denied), Text: text}, true
}

// shedFinding says what the load shedder turned away, by priority, and
// whom it spared.
func shedFinding(r *Result) (Finding, bool) {
	if r.Shedder == nil {
		return Finding{}, false
	}
	byPriority := map[string]int64{}
	sent := map[string]int64{}
	top := -1
	var total int64
	for i, c := range r.Clients {
		byPriority[c.Priority] += c.Shed
		sent[c.Priority] += c.Sent
		total += c.Shed
		if c.Shed > 0 && (top < 0 || c.Shed > r.Clients[top].Shed) {
			top = i
		}
	}
	if total == 0 {
		return Finding{}, false
	}
	var parts []string
	for _, p := range slices.Backward([]string{"critical", "normal", "sheddable"}) {
		if sent[p] > 0 {
			parts = append(parts, fmt.Sprintf("%s of %s %s", Thousands(byPriority[p]), Thousands(sent[p]), p))
		}
	}
	text := fmt.Sprintf("the load shedder (%s a second) turned away %s with 503, the lower priorities first: %s; the most from %s",
		Thousands(int64(r.Shedder.CapacityPerS)), requests(total), strings.Join(parts, ", "), r.Clients[top].Name)
	return Finding{Kind: FindingShed, Client: r.Clients[top].Name, Value: float64(total), Text: text}, true
}

// possessive is name's: "batch-job's", "reports'".
func possessive(name string) string {
	if strings.HasSuffix(name, "s") {
		return name + "'"
	}
	return name + "'s"
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
		c.Name, Thousands(c.Rejected), requests(c.Sent), RateText(float64(c.Sent)/r.DurationS), RateText(r.Limit.RatePerS),
		strconv.FormatFloat(float64(c.CostSent)/float64(c.Sent), 'g', 3, 64), RateText(float64(c.CostSent)/r.DurationS))
	return Finding{Kind: FindingCostly, Client: c.Name, Value: float64(c.Rejected), Text: text}, true
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
		c.Name, s.Name, PolicyText(s), p.Name, PolicyText(p), requests(bestN), p.Name, Thousands(c.RejectedBy[s.Name]), s.Name)
	return Finding{Kind: FindingQuota, Client: c.Name, Value: float64(bestN), Text: text}, true
}

// ConcurrencyText says a concurrency limit: "at most 10 in flight, leases
// of 20s".
func ConcurrencyText(maxInFlight int64, leaseTTLS float64) string {
	return fmt.Sprintf("at most %s in flight, leases of %s", Thousands(maxInFlight), ShortDuration(time.Duration(leaseTTLS*float64(time.Second))))
}

// PolicyText says one of a key's limits as people write it: "10/s, burst
// 20", "1,000 per 1h".
func PolicyText(p PolicyResult) string {
	if p.MaxInFlight > 0 {
		return ConcurrencyText(p.MaxInFlight, p.LeaseTTLS)
	}
	if p.WindowS > 0 {
		w := time.Duration(p.WindowS * float64(time.Second))
		return fmt.Sprintf("%s per %s", Thousands(int64(math.Round(p.RatePerS*p.WindowS))), ShortDuration(w))
	}
	return fmt.Sprintf("%s/s, burst %s", strconv.FormatFloat(p.RatePerS, 'g', 4, 64), Thousands(p.Burst))
}

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
		when, limit, requests(t.WouldReject), Thousands(hit[0].WouldReject), hit[0].Name, nameList(names))
	return Finding{Kind: FindingShadow, Client: hit[0].Name, Value: float64(t.WouldReject), Text: text}, true
}
