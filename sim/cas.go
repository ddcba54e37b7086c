package sim

import (
	"context"
	"errors"

	"github.com/ratelim/ratelim/route"
	"github.com/ratelim/ratelim/store"
)

// casWait is a request whose admission waits for its compare-and-swap to
// land: the request, and how many swaps it has tried.
type casWait struct {
	p     pending
	tries int
}

// logWrites says in the run's log how its algorithm writes a shared store
// (route.Writes), on the racy topology, where it matters: a library whose
// store decides in one atomic operation cannot race, and one that swaps
// retries instead of overwriting.
func (s *sim) logWrites() {
	if s.sc.Topology.Kind != Racy {
		return
	}
	switch s.route.Writes {
	case route.CompareAndSwap:
		s.logf(0, "%s writes with a compare-and-swap: a request whose key another server wrote since its read reads again (at most %d tries)", s.alg.Name(), route.MaxCASAttempts)
	case route.Atomic:
		s.logf(0, "%s reads and writes its store in one atomic operation: servers sharing it cannot race, so it decides as on the shared topology", s.alg.Name())
	}
}

// scheduleCAS sends w's compare-and-swap, to land at at, with the request
// p waiting for it, on its tries-th attempt.
func (s *sim) scheduleCAS(w store.Pending, p pending, tries int, at int64) {
	slot := s.scheduleWrite(w, at)
	for int(slot) >= len(s.racy.casWaits) {
		s.racy.casWaits = append(s.racy.casWaits, casWait{})
	}
	s.racy.casWaits[slot] = casWait{p: p, tries: tries}
}

// takeCASWait returns the request waiting on slot's swap, and frees it.
func (s *sim) takeCASWait(slot int32) casWait {
	cw := s.racy.casWaits[slot]
	s.racy.casWaits[slot] = casWait{}
	return cw
}

// swap lands w's compare-and-swap at at. If the key is as the request read
// it, the admission stands; if another server wrote it since, the request
// reads again on its server's clock now and, still admitted, tries another
// swap a round trip later, up to route.MaxCASAttempts, after which the fail
// policy answers the library's error.
func (s *sim) swap(ctx context.Context, w store.Pending, cw casWait, at int64) error {
	o := &s.req
	o.p = cw.p
	p, d := &o.p, &o.d
	*d = store.Decision{}
	swapped, err := w.CompareAndWrite(ctx)
	switch {
	case err != nil:
		if !errors.Is(err, errStoreDown) {
			return err
		}
		*d = s.stores.policy.Decide(err)
	case swapped:
		*d = store.Decision{Decision: w.Decision}
	case cw.tries >= route.MaxCASAttempts:
		*d = s.stores.policy.Decide(route.ErrCASExhausted)
	default:
		again, err := s.route.Read(ctx, p.target, s.keys[p.key].name, s.decisionClock(p.server, at), p.cost)
		if err != nil {
			if !errors.Is(err, errStoreDown) {
				return err
			}
			*d = s.stores.policy.Decide(err)
			break
		}
		if again.Decision.Allowed {
			s.scheduleCAS(again, *p, cw.tries+1, at+s.rtt())
			return nil
		}
		*d = store.Decision{Decision: again.Decision}
	}
	s.conclude(o, at, at-p.t)
	return nil
}
