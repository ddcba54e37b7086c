package sim

// What follows a decision: the run's stages, each a policy that stands
// after the limit, in the order a real fleet applies them.

import (
	"math"
	"slices"

	"github.com/ratelim/ratelim/algorithms"
)

// stage is one policy a decided request passes through: it reads the
// outcome so far and adds its part (shadow mode lets a refusal through,
// the load shedder turns an admission away, the recorder writes it down, a
// lease is held until the request is served, a refusal is retried). A run
// has the stages its scenario uses, built once (setupStages), and
// conclude passes every decided request through them in order.
type stage interface {
	conclude(s *sim, o *outcome)
}

// setupStages builds the stages sc uses, in the order they apply: shadow
// mode, then the load shedder (it weighs what the limit let through, as
// Stripe orders them), then the recorder, then the lease held until the
// request is served (it needs the exact limiter's lease, which the
// recorder takes), then whoever observes the run, then the retry of a
// refusal. observe is Options.Observe.
func (s *sim) setupStages(observe func(Observation)) error {
	s.stages = s.stages[:0]
	limits := s.sc.Limits()
	switch {
	case len(limits) > 1 && slices.ContainsFunc(limits, func(l Limit) bool { return l.Shadow }):
		s.stages = append(s.stages, shadowSeveral{})
	case s.sc.Limit.Shadow:
		until := int64(math.MaxInt64)
		if s.sc.Limit.ShadowUntil > 0 {
			until = int64(algorithms.At(s.sc.Limit.ShadowUntil))
		}
		s.stages = append(s.stages, shadowOne{until: until})
	}
	if s.sc.Shedder != nil {
		sh, err := s.sc.Shedder.New()
		if err != nil {
			return err
		}
		s.shed = &shedStage{shedder: sh}
		s.stages = append(s.stages, s.shed)
	}
	recordAt := len(s.stages)
	s.stages = append(s.stages, recordStage{})
	if slices.ContainsFunc(limits, func(l Limit) bool { return l.Algorithm == "concurrency" }) {
		s.leases = &leaseStage{}
		s.stages = append(s.stages, s.leases)
	}
	if observe != nil {
		s.stages = append(s.stages, observeStage(observe))
	}
	if slices.ContainsFunc(s.clients, func(c *clientRun) bool { return c.retries }) {
		s.stages = append(s.stages, retryStage{})
	}
	s.beforeRecord, s.afterRecord = s.stages[:recordAt], s.stages[recordAt+1:]
	return nil
}

// conclude passes the request in o, decided (o.p and o.d filled in) at
// instant at after it waited latency for its decision, through the run's
// stages.
func (s *sim) conclude(o *outcome, at, latency int64) {
	o.at, o.latency, o.shadowed, o.shed, o.noAnswer = at, latency, false, false, false
	o.idealLease, o.idealAllowed = 0, false
	// The lease the limit handed out, if it admitted: a request shed
	// after it was admitted gives its lease back at once, as the
	// middleware does.
	o.lease = 0
	if o.d.Allowed && o.d.Policy == "" {
		o.lease = o.d.Lease
	}
	// The recorder, in every run, is called here, not through the stage
	// interface: the stages of a plain run are the recorder alone, and
	// the loop and its call through an interface cost a simulated request
	// 25 instructions.
	for _, st := range s.beforeRecord {
		st.conclude(s, o)
	}
	recordStage{}.conclude(s, o)
	for _, st := range s.afterRecord {
		st.conclude(s, o)
	}
}

// recordStage writes the outcome down (sim.record), once the stages that
// may change its decision have spoken: the wait the decision set (a
// leaky bucket's queue) is then known, and added to the request's.
type recordStage struct{}

func (recordStage) conclude(s *sim, o *outcome) {
	if o.d.Delay != 0 { // a leaky bucket's alone: no division per request for the rest
		o.latency += int64(algorithms.At(o.d.Delay))
	}
	s.record(o)
}

// observeStage hands each outcome to whoever observes the run
// (Options.Observe), as a live run records it.
type observeStage func(Observation)

func (f observeStage) conclude(_ *sim, o *outcome) {
	f(Observation{Client: o.p.client, At: algorithms.Time(o.at).Duration(), Cost: o.p.cost, Attempt: o.p.attempt, Decision: o.d,
		Latency: algorithms.Time(o.latency).Duration(), Shadowed: o.shadowed, Shed: o.shed, Seq: o.p.seq})
}
