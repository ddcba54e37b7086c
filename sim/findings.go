package sim

// Findings: the lessons a run shows, each computed from the Result's
// figures alone, so a live run's result (sim.Replay) has them too. The
// table findingRules is the one list of them, in lesson order; each
// detector lives beside the kind it detects (findings_*.go).

import (
	"slices"
	"strings"
)

// findingRule is one lesson a run can show: its kind, what a finding of
// it is about ("client": its Client is set; "key": its Key is set; "":
// the run as a whole), and the detector that finds it in a run's figures
// (none, one, or one per client or key it is about).
type findingRule struct {
	kind    FindingKind
	subject string
	detect  func(x *detection) []Finding
}

// findingRules are every lesson, in the order Findings ranks them: the
// earlier, the more it explains of what a run shows. What the store and
// the fleet did first (a request no one decided, a store down, a lease
// leaked, load shed), then how the limit is set, then what it admitted
// against one exact limiter, then clients against each other, then a
// peer library's own behaviour (about the library, where the others are
// about the traffic and the topology), and exact when nothing else is.
var findingRules = []findingRule{
	{FindingNoAnswer, "", func(x *detection) []Finding {
		if x.t.NoAnswer == 0 {
			return nil
		}
		return []Finding{noAnswerFinding(x.t)}
	}},
	{FindingFailedClosed, "", func(x *detection) []Finding { return found(failedClosed(x.r, x.t)) }},
	{FindingFailedOpen, "client", func(x *detection) []Finding { return found(failedOpen(x.r, x.t)) }},
	{FindingFailedOver, "key", func(x *detection) []Finding { return shardFindings(x.r, FindingFailedOver) }},
	{FindingFenced, "key", func(x *detection) []Finding { return shardFindings(x.r, FindingFenced) }},
	{FindingMasterUnreachable, "key", func(x *detection) []Finding { return shardFindings(x.r, FindingMasterUnreachable) }},
	{FindingUncovered, "", func(x *detection) []Finding { return found(uncoveredFinding(x.r)) }},
	{FindingLeaked, "client", func(x *detection) []Finding { return found(leakedFinding(x.r)) }},
	{FindingShed, "client", func(x *detection) []Finding { return found(shedFinding(x.r)) }},
	{FindingShadow, "client", func(x *detection) []Finding { return found(shadowFinding(x.r, x.t)) }},
	{FindingQuota, "client", func(x *detection) []Finding { return found(quotaFinding(x.r)) }},
	{FindingCostly, "client", func(x *detection) []Finding { return found(costlyFinding(x.r)) }},
	{FindingQueued, "client", func(x *detection) []Finding { return found(queued(x.r)) }},
	{FindingWorstWindow, "key", (*detection).worstFirst},
	{FindingOverAdmitted, "", (*detection).overThenWorst},
	{FindingDesignBound, "key", func(x *detection) []Finding { return designBoundFindings(x.r) }},
	{FindingCopiesDiverged, "key", func(x *detection) []Finding { return found(copiesDiverged(x.r)) }},
	{FindingLostUnderShare, "key", func(x *detection) []Finding { return lostUnderShare(x.r) }},
	{FindingRetriesWasted, "client", func(x *detection) []Finding { return retriesWasted(x.r) }},
	{FindingIsolated, "", func(x *detection) []Finding {
		// Not where neighbours on one key lost too: the opposite lesson.
		return found(isolated(x.r, x.saw(FindingLostUnderShare)))
	}},
	{FindingPeer, "", func(x *detection) []Finding { return found(peerFinding(x.r, x.t, x.topology)) }},
	{FindingExact, "", func(x *detection) []Finding {
		if len(x.out) > 0 {
			return nil
		}
		return []Finding{exactFinding(x.t)}
	}},
}

// FindingKinds are every kind, in the order Findings ranks them: the
// earlier, the more it explains of what a run shows.
func FindingKinds() []FindingKind {
	kinds := make([]FindingKind, len(findingRules))
	for i, rule := range findingRules {
		kinds[i] = rule.kind
	}
	return kinds
}

// FindingSubject says what a finding of kind is about: "client" (its
// Client is set), "key" (its Key is set), or "" (the run as a whole).
func FindingSubject(kind FindingKind) string {
	for _, rule := range findingRules {
		if rule.kind == kind {
			return rule.subject
		}
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

// detection is one run's findings being found: the Result, what several
// detectors read (its totals, what its topology can explain), and the
// findings so far.
type detection struct {
	r        *Result
	t        KeyResult
	topology string
	out      []Finding
	// worst and over are the worst second and the total against an exact
	// limiter, weighed together (weigh): which of the two comes first
	// depends on the figures.
	weighed         bool
	worst, over     Finding
	worstOK, overOK bool
	overIsTopology  bool
}

// found is a detector's one finding, if it found it.
func found(f Finding, ok bool) []Finding {
	if !ok {
		return nil
	}
	return []Finding{f}
}

// saw reports whether a finding of kind was found so far.
func (x *detection) saw(kind FindingKind) bool {
	return slices.ContainsFunc(x.out, func(f Finding) bool { return f.Kind == kind })
}

// weigh finds the worst second and the over-admission, once.
func (x *detection) weigh() {
	if x.weighed {
		return
	}
	x.weighed = true
	x.worst, x.worstOK = worstWindow(x.r, x.topology != "")
	x.over, x.overOK, x.overIsTopology = overAdmitted(x.r, x.t, x.topology)
}

// worstFirst is the worst second when it comes before the over-admission:
// a boundary burst is the lesson even when the total is as over, since it
// says where the excess went. Jars per server, a race or a split brain
// explain the worst second as well as the total, and then the total comes
// first.
func (x *detection) worstFirst() []Finding {
	x.weigh()
	if !x.worstOK || (x.overOK && (x.overIsTopology || x.worst.Value < x.over.Value)) {
		return nil
	}
	x.worstOK = false
	x.over.Text = strings.TrimSuffix(x.over.Text, ": "+algorithmReason(x.r)) // said once is enough
	return []Finding{x.worst}
}

// overThenWorst is the over-admission, then the worst second if it did
// not come first.
func (x *detection) overThenWorst() []Finding {
	x.weigh()
	var out []Finding
	if x.overOK {
		out = append(out, x.over)
	}
	if x.worstOK {
		out = append(out, x.worst)
	}
	return out
}

// Findings computes what r teaches, most telling first (the order of
// FindingKinds, but that the worst second may follow the over-admission
// it explains); never empty: a run with nothing to say finds it exact.
func Findings(r *Result) []Finding {
	if r.TimelineSparse && r.copyGap == nil {
		// Sparse and read back from a JSON: the copies' state series are
		// compared step by step, so each needs every step's point. A
		// run's own Result has its copies' widest gap from the recorder
		// (copyGap) and reads no series. The timeline's rows are only ever
		// summed: its empty steps are not put back.
		dense := *r
		dense.State = r.denseState(false)
		r = &dense
	}
	// Once, for the findings that read them: the totals, and what the
	// topology can explain (a split brain's reads the whole timeline).
	x := &detection{r: r, t: r.Totals(), topology: topologyCause(r)}
	for _, rule := range findingRules {
		x.out = append(x.out, rule.detect(x)...)
	}
	return x.out
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
