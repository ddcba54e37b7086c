package sim

// Assembling the Result from what the recorder wrote down.

import (
	"cmp"
	"slices"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/store"
)

// finalResult is result with its Findings: what a run returns. A
// snapshot, drawn many times a second, does without.
func (s *sim) finalResult() *Result {
	return withFindings(s.result(false))
}

// lastResult is finalResult for a run that is over and will not be asked
// again (Run, a replay): the recorder's timeline rows are let go once the
// Result's are made, so that a run's end does not hold its rows twice
// while it assembles the rest (a million clients' results).
func (s *sim) lastResult() *Result {
	return withFindings(s.result(true))
}

// withFindings gives r its Findings.
func withFindings(r *Result) *Result {
	r.Findings = Findings(r)
	return r
}

// ended reports whether the run has recorded everything it will: Advance
// never goes past the duration, so nothing after it is ever recorded.
func (s *sim) ended() bool { return s.clock.now >= s.clock.duration }

// result assembles the Result from what was recorded; with release, the
// last use of the recorder's timeline.
func (s *sim) result(release bool) *Result {
	sc := s.sc
	timeline := s.rec.timeline.sparse(s.clients, s.clock.stepLen, s.clock.nSteps)
	if release {
		s.rec.timeline = timelineRows{}
	}
	r := &Result{
		Schema:    Schema,
		Scenario:  sc.Name,
		Algorithm: s.alg.Name(),
		Topology:  string(cmp.Or(s.askedKind, sc.Topology.Kind)),
		Store:     store.KindOf(sc.Topology.Store),
		Servers:   sc.Servers,
		Seed:      sc.Seed,
		DurationS: sc.Duration.Seconds(),
		StepS:     sc.Step.Seconds(),
		Limit:     limitResult(sc, s.alg),
		Shedder:   s.shed.result(sc.Shedder),
		Shards:    s.shardResults(),
		Breaker:   s.breakerResult(),
		Synced:    s.syncedResult(),
		TwoTier:   s.twoTierResult(),
		Owner:     s.ownerResult(),
		Regions:   s.regionsResult(),
		Balancer:  string(sc.Balancer),
		OnError:   string(s.stores.policy),
		Clock:     string(sc.Topology.Clock),
		WallClock: wallClockOf(sc),
		RTTMs:     millis(int64(algorithms.At(sc.Topology.RTT))),
		TimeoutMs: millis(int64(algorithms.At(sc.Topology.Timeout))),
		Requests:  s.sent.requests,
		Faults:    s.faults.spans,
		copyGap:   new(s.rec.copyGap),
		Clients:   make([]ClientResult, 0, len(s.clients)),
		Keys:      make([]KeyResult, 0, len(s.keys)),
		Timeline:  timeline,
		// The timeline in proportion to what happened: a reader that
		// needs every step's row puts them back (Densify, EachRow).
		TimelineSparse: true,
		Expectations:   []ExpectationResult{},
		Findings:       []Finding{},
		Events:         append([]LogEntry{}, s.log...),
	}
	if r.Faults == nil {
		r.Faults = []FaultSpan{}
	}
	r.State, r.ZeroRemaining = s.states(release)
	for _, c := range s.clients {
		r.Clients = append(r.Clients, s.clientResult(c))
	}
	r.Keys = s.keyResults(r.Keys)
	if !s.rec.weighted {
		unweigh(r)
	}
	return r
}

// limitResult describes sc's limit, or its several, as alg runs it.
func limitResult(sc Scenario, alg algorithms.Algorithm) LimitResult {
	p := alg.Params()
	l := LimitResult{
		RatePerS: p.Rate.PerSecond(),
		Burst:    p.Burst,
		WindowS:  p.Window.Seconds(),
		Key:      string(sc.Limit.Key),
		// Only the defaults the algorithm reads: a window filled for one
		// algorithm means nothing to another.
		Defaulted:    defaultedOf(sc.Limit.Algorithm, sc.Limit),
		Delay:        p.Delay,
		NoDelay:      p.NoDelay,
		Shadow:       sc.Limit.Shadow,
		ShadowUntilS: sc.Limit.ShadowUntil.Seconds(),
	}
	if sc.Limit.Algorithm == "concurrency" {
		l.MaxInFlight, l.LeaseTTLS = sc.Limit.Params.Burst, sc.Limit.Params.Window.Seconds()
		l.Burst, l.WindowS = 0, 0
	}
	if len(sc.Also) > 0 {
		l.Limits = policyResults(sc)
	}
	return l
}

// result describes the run's load shedder, of spec; nil without one.
func (sh *shedStage) result(spec *Shedder) *ShedderResult {
	if sh == nil {
		return nil
	}
	reserve := sh.shedder.Reserve()
	out := &ShedderResult{CapacityPerS: spec.Capacity.PerSecond(), Burst: spec.Burst, Reserve: map[string]int64{}}
	for i, name := range algorithms.Priorities {
		out.Reserve[name] = reserve[i]
	}
	return out
}

// keyResults appends each key's figures to out: its clients' totals
// added up, and its peak windows (its one client's, for a key of one).
func (s *sim) keyResults(out []KeyResult) []KeyResult {
	keyTotals := make([]counts, len(s.keys))
	peaks := make([]*clientRun, len(s.keys)) // whose peak windows a key's are
	for _, c := range s.clients {
		keyTotals[c.key].add(&c.total)
		if s.keys[c.key].clients == 1 {
			peaks[c.key] = c
		}
	}
	for i := range s.keys {
		k := &s.keys[i]
		pp := &k.peaks
		if c := peaks[i]; c != nil {
			pp = &c.peaks
		}
		t := keyTotals[i]
		out = append(out, KeyResult{
			Key: k.name, Clients: k.clients,
			Counts:       t.Counts,
			MaxAllowed1s: pp.actual.peak, IdealAllowed: t.IdealAllowed, IdealMaxAllowed1s: pp.idealPeak(),
			FalseAllows: t.FalseAllows, FalseDenies: t.FalseDenies,
		})
		if s.reach != nil {
			out[len(out)-1].DesignBound1s, out[len(out)-1].DesignServers = s.designKeyBound(i, t.FailedOpen > 0), int(s.reach.count[i])
		}
	}
	return out
}

// unweigh clears the costs of a Result whose every request cost 1: its
// costs are its counts, and left out they keep its JSON as it was.
func unweigh(r *Result) {
	for i := range r.Clients {
		r.Clients[i].CostSent, r.Clients[i].CostAllowed = 0, 0
	}
	for i := range r.Keys {
		r.Keys[i].CostSent, r.Keys[i].CostAllowed = 0, 0
	}
	for i := range r.Timeline {
		r.Timeline[i].CostSent, r.Timeline[i].CostAllowed = 0, 0
	}
}

// clientResult is client c's figures so far.
func (s *sim) clientResult(c *clientRun) ClientResult {
	t := c.total
	return ClientResult{
		Name: c.Name, Key: s.keys[c.key].name,
		Counts: t.Counts, Retries: t.Retries, RetriesAllowed: t.RetriesAllowed,
		MaxAllowed1s: c.peaks.actual.peak, IdealAllowed: t.IdealAllowed, IdealMaxAllowed1s: c.peaks.idealPeak(),
		FalseAllows: t.FalseAllows, FalseDenies: t.FalseDenies,
		LatencyMs:  LatencySummary{P50: millis(c.hist.quantile(0.5)), P99: millis(c.hist.quantile(0.99))},
		RejectedBy: s.rejectedBy(c),
		Priority:   s.priorityOf(c),
	}
}

// priorityOf is c's priority on a run with a load shedder, "" otherwise.
func (s *sim) priorityOf(c *clientRun) string {
	if s.shed == nil {
		return ""
	}
	return c.priority.String()
}

// rejectedBy is c's refusals by the name of the limit that refused, on a
// key with several limits: every limit named, those that refused nothing
// with 0, so that a reader sees which did not bind as well as which did.
func (s *sim) rejectedBy(c *clientRun) map[string]int64 {
	if c.rejectedBy == nil {
		return nil
	}
	out := make(map[string]int64, len(c.rejectedBy))
	for i, l := range s.sc.Limits() {
		out[l.Name] = c.rejectedBy[i]
	}
	return out
}

// policyResults describes each of a key's several limits.
func policyResults(sc Scenario) []PolicyResult {
	limits := sc.Limits()
	out := make([]PolicyResult, len(limits))
	for i, l := range limits {
		p := l.Params
		out[i] = PolicyResult{
			Name: l.Name, Algorithm: l.Algorithm,
			RatePerS: p.Rate.PerSecond(), Burst: p.Burst, WindowS: p.Window.Seconds(),
			Shadow: l.Shadow, ShadowUntilS: l.ShadowUntil.Seconds(),
		}
		if l.Algorithm == "concurrency" {
			out[i].MaxInFlight, out[i].LeaseTTLS = p.Burst, p.Window.Seconds()
			out[i].Burst, out[i].WindowS = 0, 0
			continue
		}
		if info, ok := algorithms.Lookup(l.Algorithm); ok {
			// Only what the algorithm reads: a window means nothing to
			// a bucket, a burst nothing to a window.
			if !slices.Contains(info.Params, "burst") {
				out[i].Burst = 0
			}
			if !slices.Contains(info.Params, "window") {
				out[i].WindowS = 0
			}
		}
	}
	return out
}

// wallClockOf is sc's wall clock for the Result when an algorithm reads
// it: a peer model, or a fixed or sliding window, whose windows it
// aligns.
func wallClockOf(sc Scenario) string {
	for _, l := range sc.Limits() {
		if PeerOf(l.Algorithm) != nil || l.Algorithm == "fixed-window" || l.Algorithm == "sliding-window" {
			return time.UnixMicro(int64(sc.Origin())).UTC().Format(time.RFC3339Nano)
		}
	}
	return ""
}

// defaultedOf names the parameters of l filled by default that the
// algorithm name reads.
func defaultedOf(name string, l Limit) []string {
	var out []string
	for _, info := range algorithms.Catalog() {
		if info.Name != name {
			continue
		}
		if l.DefaultWindow && slices.Contains(info.Params, "window") {
			out = append(out, "window")
		}
		if l.DefaultBurst && slices.Contains(info.Params, "burst") {
			out = append(out, "burst")
		}
	}
	return out
}
