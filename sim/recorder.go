package sim

import (
	"context"
	"math"
	"math/bits"
	"slices"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/store"
)

// histogram counts latencies in µs in log-linear buckets: exact below 256 µs,
// then 128 buckets per doubling (under 1% error), whatever the number of
// requests. Round trips such as 500 µs fall on a bucket edge and are
// reported exactly.
//
// The 7,680 buckets are kept in blocks of 128, each allocated when a
// latency first falls in it: a client whose requests all take one round
// trip holds one block (1 KiB), not 60 KiB, and clearing the histogram at
// every step costs the blocks it used, not all of them.
type histogram struct {
	blocks [histBlocks]*[histBlock]int64
	// used are the indexes of the allocated blocks, for reset.
	used []uint8
	n    int64
}

const (
	histExact   = 256 // values below are their own bucket
	histSub     = 128 // buckets per doubling above
	histShift   = 7   // log2(histSub)
	histBuckets = histExact + 58*histSub
	histBlock   = 128
	histBlocks  = histBuckets / histBlock
)

func newHistogram() *histogram { return &histogram{} }

func histIndex(v int64) int {
	if v < histExact {
		return int(max(v, 0))
	}
	e := bits.Len64(uint64(v)) - histShift - 1 // v >> e is in [histSub, 2·histSub)
	return min(histExact+(e-1)*histSub+int(v>>e)-histSub, histBuckets-1)
}

func histValue(i int) int64 {
	if i < histExact {
		return int64(i)
	}
	e := (i-histExact)/histSub + 1
	sub := int64((i-histExact)%histSub + histSub)
	return sub << e
}

// addAt counts one value in bucket i, histIndex(value): a value counted in
// two histograms is indexed once.
func (h *histogram) addAt(i int) {
	b := h.blocks[i/histBlock]
	if b == nil {
		b = new([histBlock]int64)
		h.blocks[i/histBlock] = b
		h.used = append(h.used, uint8(i/histBlock))
	}
	b[i%histBlock]++
	h.n++
}

// quantile returns the smallest bucket value with at least q of the counts
// at or below it; 0 for an empty histogram.
func (h *histogram) quantile(q float64) int64 {
	if h.n == 0 {
		return 0
	}
	rank := int64(q*float64(h.n) + 0.9999999)
	rank = min(max(rank, 1), h.n)
	var seen int64
	for bi, b := range h.blocks {
		if b == nil {
			continue
		}
		for j, c := range b {
			seen += c
			if seen >= rank {
				return histValue(bi*histBlock + j)
			}
		}
	}
	return histValue(histBuckets - 1)
}

// reset empties the histogram, keeping its blocks for the next step.
func (h *histogram) reset() {
	if h.n == 0 {
		return
	}
	for _, bi := range h.used {
		clear(h.blocks[bi][:])
	}
	h.n = 0
}

// peakWindow tracks the most admissions in any window of length w, exactly,
// from admission times that arrive in order: a queue of the admissions still
// inside the window ending at the latest one, kept in a ring that grows to
// the busiest window's count and is never moved about otherwise.
type peakWindow struct {
	w    int64
	ring []int64 // the admissions within w of the latest; a power of two long
	head int     // the oldest, in ring
	n    int     // how many
	peak int64
}

func (p *peakWindow) add(at int64) {
	mask := len(p.ring) - 1
	for p.n > 0 && p.ring[p.head] <= at-p.w {
		p.head = (p.head + 1) & mask
		p.n--
	}
	if p.n == len(p.ring) {
		grown := make([]int64, max(2*len(p.ring), 16))
		copy(grown, p.ring[p.head:])
		copy(grown[len(p.ring)-p.head:], p.ring[:p.head])
		p.ring, p.head, mask = grown, 0, len(grown)-1
	}
	p.ring[(p.head+p.n)&mask] = at
	p.n++
	p.peak = max(p.peak, int64(p.n))
}

// peakPair are the peak windows of what was admitted and of what the exact
// limiter would have admitted. Until the two first disagree they have seen
// the same admissions, so one ring serves both; at the first disagreement
// the ideal's is copied from it and each goes its own way.
type peakPair struct {
	actual, ideal peakWindow
	split         bool
}

func newPeakPair() peakPair { return peakPair{actual: peakWindow{w: 1_000_000}} }

func (p *peakPair) add(at int64, allowed, ideal bool) {
	if !p.split {
		if allowed == ideal {
			if allowed {
				p.actual.add(at)
			}
			return
		}
		p.split = true
		p.ideal = p.actual
		p.ideal.ring = slices.Clone(p.actual.ring)
	}
	if allowed {
		p.actual.add(at)
	}
	if ideal {
		p.ideal.add(at)
	}
}

// idealPeak is the exact limiter's peak.
func (p *peakPair) idealPeak() int64 {
	if !p.split {
		return p.actual.peak
	}
	return p.ideal.peak
}

// recording is what the recorder keeps as the run goes. timeline is the
// Result's timeline itself, steps × clients rows, written as requests are
// recorded: a run keeps one copy of it, not a recorder's and then the
// Result's. state are the state series; keepState is Options.StateOf;
// copyGap the copies' widest disagreement so far; progress is
// Options.Progress; weighted is set once a request costs more than 1:
// the Result then gives the quota asked for and given (cost_sent,
// cost_allowed).
type recording struct {
	timeline  []TimelineRow
	state     []StateSeries
	keepState func(key string) bool
	copyGap   copyGap
	progress  func(done, total time.Duration)
	weighted  bool
}

// exactLimiter is the limiter a run is measured against (idealFor), and
// the cheapest way it steps the recorder's own state, asked once.
type exactLimiter struct {
	alg  algorithms.Algorithm
	step stepper
}

func newExactLimiter(alg algorithms.Algorithm) exactLimiter {
	ideal := idealFor(alg)
	return exactLimiter{alg: ideal, step: newStepper(ideal)}
}

// counts are one client's figures over a step or a run.
type counts struct {
	Counts
	Retries int64
	// Served counts admissions in the step they leave the queue: a
	// leaky bucket's delay moves them later.
	Served int64
	// RetriesAllowed are the retries admitted: what retrying won.
	RetriesAllowed int64
	// IdealAllowed, FalseAllows and FalseDenies compare with the exact
	// limiter fed the same arrivals.
	IdealAllowed, FalseAllows, FalseDenies int64
}

func (c *counts) add(o *counts) {
	c.Counts.Add(o.Counts)
	c.Retries += o.Retries
	c.Served += o.Served
	c.RetriesAllowed += o.RetriesAllowed
	c.IdealAllowed += o.IdealAllowed
	c.FalseAllows += o.FalseAllows
	c.FalseDenies += o.FalseDenies
}

// record writes down one request's outcome: the exact limiter's verdict
// of the same arrival, then one tally into its step's row and its
// client's totals, its peak windows, when it was served, its latency.
func (s *sim) record(o *outcome) {
	c := s.clients[o.p.client]
	row := &s.rec.timeline[s.stepOf(o.at)*len(s.clients)+o.p.client]
	if o.noAnswer {
		t := o.tally()
		row.count(t)
		c.total.count(t)
		return
	}
	// Counted always, given in the Result only if some request cost more
	// than 1 (a feed's costs are known as they arrive).
	s.rec.weighted = s.rec.weighted || o.p.cost > 1
	// The exact limiter sees the same arrival on the true clock. The
	// key's ideal state is the recorder's alone, and only its verdict is
	// read. (Admit is called here, not through a method of the recorder:
	// see stepper.)
	k := &s.keys[c.key]
	if is := &s.exact.step; is.admit != nil {
		o.idealAllowed = is.admit.Admit(&k.ideal, algorithms.Time(o.at), o.p.cost)
	} else {
		d := is.whole(&k.ideal, algorithms.Time(o.at), o.p.cost)
		o.idealAllowed, o.idealLease = d.Allowed, d.Lease
	}
	allowed := o.allowed()
	if !allowed && c.total.Rejected == 0 {
		s.logf(o.at, "%s: first rejection", c.Name)
	}
	t := o.tally()
	row.count(t)
	c.total.count(t)
	c.peaks.add(o.at, allowed, o.idealAllowed)
	if k.clients > 1 {
		// A key of one client has that client's peaks (keyResult).
		k.peaks.add(o.at, allowed, o.idealAllowed)
	}
	if allowed {
		s.serve(o, row)
	} else if c.rejectedBy != nil && o.d.Policy == "" && !o.shed && o.d.Binding < len(c.rejectedBy) {
		// A request the load shedder turned away was admitted by every
		// limit: it is counted in Shed, no limit's refusal.
		c.rejectedBy[o.d.Binding]++
	}
	i := histIndex(o.latency)
	c.hist.addAt(i)
	c.step.addAt(i)
}

// stepOf is the step instant t falls in.
func (s *sim) stepOf(t int64) int { return min(int(t/s.clock.stepLen), s.clock.nSteps-1) }

// serve counts an admitted request as served in the step it leaves the
// queue (row's, without a delay); after the run's end, in no step at all.
func (s *sim) serve(o *outcome, row *TimelineRow) {
	if o.d.Delay <= 0 {
		if o.at < s.clock.duration {
			row.Served++
		}
	} else if at := o.at + int64(algorithms.At(o.d.Delay)); at < s.clock.duration {
		s.rec.timeline[s.stepOf(at)*len(s.clients)+o.p.client].Served++
	}
}

// endStep closes step i at t: per-step latency quantiles, and the state of
// every key in every store copy: kept in the state series for the keys
// Options.StateOf chooses, and seen by the copies' widest disagreement (a
// finding) whether kept or not.
func (s *sim) endStep(ctx context.Context, i int, t int64) {
	for ci, c := range s.clients {
		row := &s.rec.timeline[i*len(s.clients)+ci]
		row.P50Ms, row.P99Ms = millis(c.step.quantile(0.5)), millis(c.step.quantile(0.99))
		c.step.reset()
	}
	// A key with several limits has a series per limit, each following
	// that limit's own room; the copies' gap is the key's as a whole.
	var limits []Limit
	var policies []algorithms.Policy
	if m, ok := s.alg.(*algorithms.Multi); ok {
		limits, policies = s.sc.Limits(), m.Policies()
	}
	perKey := max(len(limits), 1)
	if s.rec.state == nil {
		s.rec.state = []StateSeries{}
		for ki, k := range s.keys {
			if s.stateKept(ki) {
				for _, name := range s.stores.names {
					for li := range perKey {
						ser := StateSeries{Key: k.name, Copy: name}
						if limits != nil {
							ser.Limit = limits[li].Name
						}
						s.rec.state = append(s.rec.state, ser)
					}
				}
			}
		}
	}
	copies := len(s.stores.copies) > 1
	j := 0
	var each [algorithms.MaxLimits]int64
	for ki, k := range s.keys {
		kept := s.stateKept(ki)
		if !kept && !copies {
			continue // nothing to keep, and one copy cannot disagree
		}
		lo, hi := int64(math.MaxInt64), int64(-1)
		for _, cp := range s.stores.copies {
			st, err := cp.Load(ctx, k.name)
			remaining := int64(-1) // unknown: the store did not answer
			for li := range perKey {
				each[li] = -1
			}
			if err == nil {
				// Peek a microsecond before the step's end: what the step
				// left, before a window that ends with it resets.
				if policies != nil {
					// The copies' gap is on the room of the key as a
					// whole, the least any of its limits has left, as
					// the series in the JSON give it back.
					remaining = math.MaxInt64
					for li, p := range policies {
						var sub algorithms.State
						if li < len(st.Sub) {
							sub = st.Sub[li]
						}
						_, d := p.Algorithm.Step(sub, algorithms.Time(t-1), 0)
						each[li] = d.Remaining
						remaining = min(remaining, d.Remaining)
					}
				} else {
					_, d := s.alg.Step(st, algorithms.Time(t-1), 0)
					remaining = d.Remaining
					each[0] = remaining
				}
				lo, hi = min(lo, remaining), max(hi, remaining)
			}
			if kept {
				for li := range perKey {
					ser := &s.rec.state[j]
					ser.TS = append(ser.TS, seconds(t))
					ser.Remaining = append(ser.Remaining, each[li])
					j++
				}
			}
		}
		if copies {
			s.rec.copyGap.see(k.name, ki, len(s.stores.copies), lo, hi, seconds(t))
		}
	}
	if s.shed != nil && !s.observed && (s.rec.keepState == nil || s.rec.keepState(FleetKey)) {
		s.rec.state = s.shed.sample(s.rec.state, t)
	}
	if s.rec.progress != nil {
		s.rec.progress(algorithms.Time(t).Duration(), s.sc.Duration)
	}
}

// stateKept reports whether the state series keep key ki's state.
func (s *sim) stateKept(ki int) bool {
	return s.rec.keepState == nil || s.rec.keepState(s.keys[ki].name)
}

func seconds(us int64) float64 { return float64(us) / 1e6 }

func millis(us int64) float64 { return float64(us) / 1e3 }

// finalResult is result with its Findings: what a run returns. A
// snapshot, drawn many times a second, does without.
func (s *sim) finalResult() *Result {
	r := s.result()
	r.Findings = Findings(r)
	return r
}

// ended reports whether the run has recorded everything it will: Advance
// never goes past the duration, so nothing after it is ever recorded.
func (s *sim) ended() bool { return s.clock.now >= s.clock.duration }

// result assembles the Result from what was recorded.
func (s *sim) result() *Result {
	sc := s.sc
	p := s.alg.Params()
	r := &Result{
		Schema:    Schema,
		Scenario:  sc.Name,
		Algorithm: s.alg.Name(),
		Topology:  string(sc.Topology.Kind),
		Store:     store.KindOf(sc.Topology.Store),
		Servers:   sc.Servers,
		Seed:      sc.Seed,
		DurationS: sc.Duration.Seconds(),
		StepS:     sc.Step.Seconds(),
		Limit: LimitResult{
			RatePerS: p.Rate.PerSecond(),
			Burst:    p.Burst,
			WindowS:  p.Window.Seconds(),
			Key:      string(sc.Limit.Key),
			// Only the defaults the algorithm reads: a window filled
			// for one algorithm means nothing to another.
			Defaulted:    defaultedOf(sc.Limit.Algorithm, sc.Limit),
			Delay:        p.Delay,
			NoDelay:      p.NoDelay,
			Shadow:       sc.Limit.Shadow,
			ShadowUntilS: sc.Limit.ShadowUntil.Seconds(),
		},
		Balancer:     string(sc.Balancer),
		OnError:      string(s.stores.policy),
		Clock:        string(sc.Topology.Clock),
		WallClock:    wallClockOf(sc),
		RTTMs:        millis(int64(algorithms.At(sc.Topology.RTT))),
		Requests:     s.sent.requests,
		Faults:       s.faults.spans,
		State:        s.rec.state,
		copyGap:      new(s.rec.copyGap),
		Clients:      make([]ClientResult, 0, len(s.clients)),
		Keys:         make([]KeyResult, 0, len(s.keys)),
		Timeline:     s.rec.timeline,
		Expectations: []ExpectationResult{},
		Findings:     []Finding{},
		Events:       append([]LogEntry{}, s.log...),
	}
	if sc.Limit.Algorithm == "concurrency" {
		r.Limit.MaxInFlight, r.Limit.LeaseTTLS = sc.Limit.Params.Burst, sc.Limit.Params.Window.Seconds()
		r.Limit.Burst, r.Limit.WindowS = 0, 0
	}
	if len(sc.Also) > 0 {
		r.Limit.Limits = policyResults(sc)
	}
	if s.shed != nil {
		reserve := s.shed.shedder.Reserve()
		r.Shedder = &ShedderResult{CapacityPerS: sc.Shedder.Capacity.PerSecond(), Burst: sc.Shedder.Burst, Reserve: map[string]int64{}}
		for i, name := range algorithms.Priorities {
			r.Shedder.Reserve[name] = reserve[i]
		}
	}
	if r.Faults == nil {
		r.Faults = []FaultSpan{}
	}
	if r.State == nil {
		r.State = []StateSeries{}
	}
	keyTotals := make([]counts, len(s.keys))
	peaks := make([]*clientRun, len(s.keys)) // whose peak windows a key's are
	for _, c := range s.clients {
		keyTotals[c.key].add(&c.total)
		if s.keys[c.key].clients == 1 {
			peaks[c.key] = c
		}
		r.Clients = append(r.Clients, s.clientResult(c))
	}
	for i := range s.keys {
		k := &s.keys[i]
		pp := &k.peaks
		if c := peaks[i]; c != nil {
			pp = &c.peaks
		}
		t := keyTotals[i]
		r.Keys = append(r.Keys, KeyResult{
			Key: k.name, Clients: k.clients,
			Counts:       t.Counts,
			MaxAllowed1s: pp.actual.peak, IdealAllowed: t.IdealAllowed, IdealMaxAllowed1s: pp.idealPeak(),
			FalseAllows: t.FalseAllows, FalseDenies: t.FalseDenies,
		})
	}
	if !s.ended() {
		// Still recording: the Result so far must not change under its
		// holder. An ended run hands its timeline over whole, uncopied
		// (at 100,000 clients × 30 steps, 300 MB saved).
		r.Timeline = slices.Clone(s.rec.timeline)
	}
	if !s.rec.weighted {
		unweigh(r)
	}
	return r
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

// timelineRow is client ci's figures over step.
func (s *sim) timelineRow(step, ci int) TimelineRow { return s.rec.timeline[step*len(s.clients)+ci] }

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
