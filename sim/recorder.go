package sim

// The recorder: what each request adds to the figures as the run goes,
// and what each step's end samples.

import (
	"context"
	"time"

	"github.com/ratelim/ratelim/algorithms"
)

// recording is what the recorder keeps as the run goes. timeline is a
// row per client per step in which something happened to it, written as
// requests are recorded (timelineRows); stepped are the clients with a
// request in the step in progress, whose latency its end writes. sample
// is the keys' state sampled at each step's end (the state series);
// keepState is Options.StateOf;
// copyGap the copies' widest disagreement so far; progress is
// Options.Progress; weighted is set once a request costs more than 1:
// the Result then gives the quota asked for and given (cost_sent,
// cost_allowed).
type recording struct {
	timeline  timelineRows
	stepped   []int32
	sample    sampler
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
	row := s.rec.timeline.at(s.clock.stepOf(o.at), o.p.client)
	if o.noAnswer {
		o.tally().add(row, &c.total)
		return
	}
	// Counted always, given in the Result only if some request cost more
	// than 1 (a feed's costs are known as they arrive).
	if o.p.cost > 1 {
		s.rec.weighted = true
	}
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
	if o.plain() {
		addVerdict(row, &c.total, allowed, o.idealAllowed, o.p.cost)
	} else {
		o.tally().add(row, &c.total)
	}
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
	if !c.hist.bump(i) {
		c.hist.add(i)
	}
	if c.step.empty() {
		s.rec.stepped = append(s.rec.stepped, int32(o.p.client))
	}
	if !c.step.bump(i) {
		c.step.add(i)
	}
}

// stepOf is the step instant t falls in.
func (c *runClock) stepOf(t int64) int {
	if t >= c.lastFrom && t < c.lastTo {
		return c.lastStep
	}
	st := min(int(t/c.stepLen), c.nSteps-1)
	if st == int(t/c.stepLen) { // not the last step clamped: its instants are its own
		c.lastStep, c.lastFrom, c.lastTo = st, int64(st)*c.stepLen, int64(st+1)*c.stepLen
	}
	return st
}

// serve counts an admitted request as served in the step it leaves the
// queue (row's, without a delay); after the run's end, in no step at all.
// A delayed one (a leaky bucket's) is serveLater's, so that serve inlines
// where nearly every admission is recorded.
func (s *sim) serve(o *outcome, row *TimelineRow) {
	if o.d.Delay > 0 {
		s.serveLater(o)
	} else if o.at < s.clock.duration {
		row.Served++
	}
}

// serveLater is serve for a request that waits o.d.Delay.
func (s *sim) serveLater(o *outcome) {
	if at := o.at + int64(algorithms.At(o.d.Delay)); at < s.clock.duration {
		s.rec.timeline.at(s.clock.stepOf(at), o.p.client).Served++
	}
}

// endStep closes step i at t: per-step latency quantiles of the clients
// that had requests in it (the others' are 0, and no row), and the state of
// every key in every store copy it reached (sampleKeys; a copy never
// reached holds the zero state): kept in the state series for the keys
// Options.StateOf chooses, and seen by the copies' widest disagreement (a
// finding) whether kept or not.
func (s *sim) endStep(ctx context.Context, i int, t int64) {
	for _, ci := range s.rec.stepped {
		c := s.clients[ci]
		row := s.rec.timeline.at(i, int(ci))
		row.P50Ms, row.P99Ms = millis(c.step.quantile(0.5)), millis(c.step.quantile(0.99))
		c.step.reset()
	}
	s.rec.stepped = s.rec.stepped[:0]
	limits, policies := s.sampledLimits()
	s.sampleKeys(ctx, t, limits, policies)
	if s.samplesFleet() {
		s.rec.sample.fleet = s.shed.sample(s.rec.sample.fleet, t)
	}
	if s.rec.progress != nil {
		s.rec.progress(algorithms.Time(t).Duration(), s.sc.Duration)
	}
}

// sampledLimits are the limits a key's state is sampled by: a key with
// several limits has a series per limit, each following that limit's own
// room, and the copies' gap is the key's as a whole; nil for one limit.
func (s *sim) sampledLimits() ([]Limit, []algorithms.Policy) {
	if m, ok := s.alg.(*algorithms.Multi); ok {
		return s.sc.Limits(), m.Policies()
	}
	return nil, nil
}

// samplesFleet reports whether a step's end samples the load shedder's
// room.
func (s *sim) samplesFleet() bool {
	return s.shed != nil && !s.observed && (s.rec.keepState == nil || s.rec.keepState(FleetKey))
}

// stateKept reports whether the state series keep key ki's state.
func (s *sim) stateKept(ki int) bool {
	return s.rec.keepState == nil || s.rec.keepState(s.keys[ki].name)
}

func seconds(us int64) float64 { return float64(us) / 1e6 }

func millis(us int64) float64 { return float64(us) / 1e3 }
