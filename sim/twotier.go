package sim

// The two-tier topology's run (topology.TwoTier): each server's local
// token bucket decides first; what it admits goes on to the shared store.

import (
	"cmp"
	"fmt"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/internal/sat"
	"github.com/ratelim/ratelim/store"
)

// twoTierRun is a two-tier run's local tiers, a jar of the local bucket
// per server, and what they spared the shared store.
type twoTierRun struct {
	locals []*jar
	// refused are the requests a local tier refused: store calls spared.
	refused int64
}

// setupTwoTier builds each server's local tier.
func (s *sim) setupTwoTier() error {
	tp := s.sc.Topology
	if tp.Kind != TwoTier {
		return nil
	}
	if tp.Local == nil {
		return bad("topology.local", "missing (want e.g. local: {rate: 25/s, burst: 10})")
	}
	alg, err := algorithms.NewTokenBucket(tp.Local.Rate, tp.Local.Burst)
	if err != nil {
		return fmt.Errorf("topology.local.%w", err)
	}
	keys := newKeyIndex(s.keys)
	dense := jarsDense(int64(len(s.keys)), int64(s.sc.Servers))
	tt := &twoTierRun{}
	s.reach = newKeyServers(len(s.keys), s.sc.Servers)
	for range s.sc.Servers {
		tt.locals = append(tt.locals, newJar(alg, keys, dense))
	}
	s.twoTier = tt
	return nil
}

// localRefuses passes request p through its server's local tier: true,
// with d its refusal (a 429 at once, no round trip), when the tier
// refuses it.
func (s *sim) localRefuses(p *pending, d *store.Decision) bool {
	tt := s.twoTier
	s.reach.add(p.key, p.server)
	tt.locals[p.server].takeInto(&d.Decision, p.key, p.now, p.cost, s.observed || s.clients[p.client].waitsRetryAfter)
	if d.Allowed {
		*d = store.Decision{}
		return false
	}
	tt.refused++
	p.latency = 0
	return true
}

// TwoTierResult is a two-tier run's local tier and what it spared.
type TwoTierResult struct {
	LocalRatePerS float64 `json:"local_rate_per_s"`
	LocalBurst    int64   `json:"local_burst"`
	// RefusedLocally are the requests a server's local tier refused:
	// store calls spared.
	RefusedLocally int64 `json:"refused_locally"`
}

func (s *sim) twoTierResult() *TwoTierResult {
	tp := s.sc.Topology
	if cmp.Or(s.askedKind, tp.Kind) != TwoTier || tp.Local == nil {
		return nil
	}
	out := &TwoTierResult{LocalRatePerS: tp.Local.Rate.PerSecond(), LocalBurst: tp.Local.Burst}
	if s.twoTier != nil {
		out.RefusedLocally = s.twoTier.refused
	}
	return out
}

// twoTierBoundOf is the most a two-tier topology admits of a key in any
// span of T, in units of cost, its requests reaching servers servers
// (topology.TwoTier): N × L(T), the local tiers alone, for a key that
// failed open; min(C(T), N × L(T)) for one the shared store always
// decided.
func twoTierBoundOf(alg algorithms.Algorithm, local *LocalTier, span time.Duration, servers int, failedOpen bool) (int64, bool) {
	if local == nil {
		return 0, false
	}
	tiers := sat.Mul(int64(max(servers, 1)), bucketSpan(algorithms.Params{Rate: local.Rate, Burst: local.Burst}, span))
	if failedOpen {
		return tiers, true
	}
	shared, ok := exactSpan(alg, span)
	if !ok {
		return 0, false
	}
	return min(shared, tiers), true
}

// exactSpan is C(T): the most one exact copy of alg admits in any span
// of T, in units of cost (SyncedBound with one server).
func exactSpan(alg algorithms.Algorithm, span time.Duration) (int64, bool) {
	return blindBound(alg, span, 0, 1)
}
