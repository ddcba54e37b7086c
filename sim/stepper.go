package sim

import "github.com/ratelim/ratelim/algorithms"

// inPlaceStepper is an algorithm that can step a state its caller owns
// without copying it (the sliding log, whose state is a log; the token
// bucket).
type inPlaceStepper interface {
	StepInPlace(st *algorithms.State, now algorithms.Time, cost int64) algorithms.Decision
}

// admitter is an algorithm that can give a decision's verdict alone, and
// the rest of the decision afterwards from the state it left (the token
// bucket): the verdict is all the exact limiter needs, and all most
// requests' decisions are read for.
type admitter interface {
	Admit(st *algorithms.State, now algorithms.Time, cost int64) bool
	DecisionAfter(st algorithms.State, now algorithms.Time, cost int64, allowed bool) algorithms.Decision
}

// stepper steps an algorithm's states where they lie, by the cheapest way
// the algorithm offers, asked once: a simulator's jar and its exact limiter
// each step once per request. Where only the verdict is read, the caller
// tests admit itself and calls Admit directly: through one more call that
// does not inline, a simulated request measured 5–15% slower.
type stepper struct {
	alg     algorithms.Algorithm
	inPlace inPlaceStepper // alg, when it steps a state in place
	admit   admitter       // alg, when it can give its verdict alone
}

func newStepper(alg algorithms.Algorithm) stepper {
	s := stepper{alg: alg}
	s.inPlace, _ = alg.(inPlaceStepper)
	s.admit, _ = alg.(admitter)
	return s
}

// whole steps st for a request of cost at now and returns the whole
// decision.
func (s *stepper) whole(st *algorithms.State, now algorithms.Time, cost int64) algorithms.Decision {
	if s.admit != nil {
		allowed := s.admit.Admit(st, now, cost)
		return s.admit.DecisionAfter(*st, now, cost, allowed)
	}
	if s.inPlace != nil {
		return s.inPlace.StepInPlace(st, now, cost)
	}
	var d algorithms.Decision
	*st, d = s.alg.Step(*st, now, cost)
	return d
}
