package sim

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/store"
)

// Observation is one request as it happened somewhere other than in the
// simulator (a live load run against real servers): which client sent it,
// when (from the run's start), and what it got.
type Observation struct {
	Client   int // index into Scenario.Clients
	At       time.Duration
	Cost     int64
	Attempt  int // 0 for a first try, n for the n-th retry
	Decision store.Decision
	Latency  time.Duration
	// Shadowed says the answer let the request through saying a limit in
	// shadow mode would have refused it (X-RateLimit-Shadow).
	Shadowed bool
	// Shed says the answer was the load shedder's 503 (X-RateLimit-Shed),
	// not the limit's 429: counted among the rejected, and as shed.
	Shed bool
	// Seq orders observations made at the same instant: the order in
	// which they were sent.
	Seq uint64
	// Service is how long its lease is held if admitted: what the server
	// held it for, when a live run's answer said so (from the decision to
	// the release), else what the request asked (its client's Service,
	// drawn per request sent). 0 for a client served at once.
	Service time.Duration
	// NoAnswer says the request got no HTTP answer (a refused
	// connection, a reset, a timeout): nothing decided it, so it is
	// counted as Counts.NoAnswer, never as rejected, and its Decision is
	// not read.
	NoAnswer bool
}

// Replay builds the Result of observations made while sc's traffic ran for
// real, with the simulator's recorder: the same figures, the same exact
// limiter to compare with, the same JSON. Observations may come in any
// order; they are taken in time order, and by Seq at one instant. Store state is not observed, so the
// Result's state series is empty; events are what happened during the run
// (faults applied, say), added to the log. On a concurrency limit the
// exact limiter's lease of each request it admitted is given back at
// At + Service, the instant the request was served, as a run's lease
// stage gives it back.
func Replay(sc Scenario, observations []Observation, events []LogEntry) (*Result, error) {
	if err := sc.check(); err != nil {
		return nil, &SetupError{err}
	}
	ctx := context.Background() // a replay has no store to call
	s, err := newRecording(ctx, sc, Options{})
	if err != nil {
		return nil, &SetupError{err}
	}
	s.observed = true
	obs := append([]Observation(nil), observations...)
	sort.SliceStable(obs, func(i, j int) bool {
		if obs[i].At != obs[j].At {
			return obs[i].At < obs[j].At
		}
		return obs[i].Seq < obs[j].Seq
	})
	step := 0
	for _, o := range obs {
		t := min(max(int64(algorithms.At(o.At)), 0), s.clock.duration-1)
		if o.Client < 0 || o.Client >= len(s.clients) {
			continue
		}
		for ; step < s.steps() && t >= int64(step+1)*s.clock.stepLen; step++ {
			s.endStep(ctx, step, int64(step+1)*s.clock.stepLen)
		}
		s.releaseDue(ctx, t)
		s.sent.requests++
		oc := &outcome{p: pending{client: o.Client, key: s.clients[o.Client].key, t: t, cost: max(o.Cost, 1), attempt: o.Attempt,
			service: max(int64(algorithms.At(o.Service)), 0)}, d: o.Decision, at: t,
			latency: int64(algorithms.At(o.Latency)), shadowed: o.Shadowed, shed: o.Shed, noAnswer: o.NoAnswer}
		s.record(oc)
		if s.leases != nil && oc.idealLease != 0 {
			// The exact limiter's lease of a request it admitted is
			// given back when the request was served, at o.At +
			// o.Service, as the simulator's lease stage gives it back
			// (leaseStage.hold): else a concurrency limit's exact
			// limiter fills up with its first admissions and refuses
			// the rest. The service's own lease is not ours to hold
			// (0).
			s.leases.hold(s, &oc.p, 0, oc.idealLease, t, true)
		}
	}
	s.releaseDue(ctx, s.clock.duration)
	for ; step < s.steps(); step++ {
		s.endStep(ctx, step, min(int64(step+1)*s.clock.stepLen, s.clock.duration))
	}
	for _, f := range sc.Faults {
		s.faults.spans = append(s.faults.spans, SpanOf(f))
	}
	s.log = append(s.log, events...)
	sort.SliceStable(s.log, func(i, j int) bool { return s.log[i].TS < s.log[j].TS })
	return s.lastResult(), nil
}

// CheckReplay returns the error Replay would refuse sc with, whatever
// the observations: a caller about to send sc's traffic for real (a live
// check) checks it before the first request, not after the run.
func CheckReplay(sc Scenario) error {
	if err := sc.check(); err != nil {
		return &SetupError{err}
	}
	if _, err := sc.NewAlgorithm(); err != nil {
		return &SetupError{fmt.Errorf("limit.%w", err)}
	}
	if sc.Shedder != nil {
		if _, err := sc.Shedder.New(); err != nil {
			return &SetupError{fmt.Errorf("shedder: %w", err)}
		}
	}
	return nil
}

// releaseDue gives back the exact limiter's leases due by t, in the order
// they fall due: the requests served by then.
func (s *sim) releaseDue(ctx context.Context, t int64) {
	for s.queue.len() > 0 && s.queue.items[0].at <= t {
		e := s.queue.pop()
		// A replay has no store: release gives back the exact
		// limiter's lease alone, which cannot fail.
		_ = s.release(ctx, e.arg, e.at)
	}
}

// FindingsShown is what r teaches of the kinds shown says can be shown
// (a live run's: scenarios.LiveCheck), most telling first: Findings(r)
// without the rest, and exact when none is left. The filter comes before
// exact is decided: a finding that is not shown (a design's bound, a
// store's copies) must not stand in for exact and then be dropped,
// leaving nothing.
func FindingsShown(r *Result, shown func(FindingKind) bool) []Finding {
	var out []Finding
	for _, f := range Findings(r) {
		if shown(f.Kind) {
			out = append(out, f)
		}
	}
	if len(out) == 0 && shown(FindingExact) {
		out = append(out, exactFinding(r.Totals()))
	}
	return out
}
