package sim

// Faults: when each begins and ends, and what it changes while it lasts.

import (
	"context"

	"github.com/ratelim/ratelim/algorithms"
)

// faultState is what the faults in force change, and what the Result
// says of them: latency is the round trip during a latency fault, -1
// when none; down, the servers a crash killed; spans, the Result's
// faults; notes, the texts of log entries scheduled for later.
type faultState struct {
	// rtt is the round trip in force, in µs: the topology's, or a latency
	// fault's while one lasts. Set when it changes, not worked out from a
	// Duration per request.
	rtt   int64
	skews []skew
	down  []bool
	spans []FaultSpan
	notes []string
	// jitter is Options.ClusterJitter: nil draws from the run's source.
	jitter func(n int64) int64
}

type skew struct {
	server        int
	start, end    int64
	offset        int64
	driftPerMicro float64
}

func (s *sim) setupFaults() {
	for i, f := range s.sc.Faults {
		start, end := int64(algorithms.At(f.Start)), int64(algorithms.At(f.End))
		s.schedule(event{at: start, kind: evFaultStart, arg: int32(i)})
		s.schedule(event{at: end, kind: evFaultEnd, arg: int32(i)})
		if setup := typeOf(f.Kind).setup; setup != nil {
			setup(s, f, start, end)
		}
		s.faults.spans = append(s.faults.spans, SpanOf(f))
	}
}

// SpanOf is how a Result reports fault f: its kind, window and, in words,
// its details (its kind's span).
func SpanOf(f Fault) FaultSpan {
	span := FaultSpan{Kind: string(f.Kind), StartS: f.Start.Seconds(), EndS: f.End.Seconds()}
	if ft := typeOf(f.Kind); ft != nil {
		span.Detail = ft.span(f)
	}
	return span
}

// serverClock is what server's clock reads at true time t.
func (s *sim) serverClock(server int, t int64) int64 {
	for _, sk := range s.faults.skews {
		if sk.server == server && t >= sk.start && t < sk.end {
			return t + sk.offset + int64(sk.driftPerMicro*float64(t-sk.start))
		}
	}
	return t
}

// decisionClock is the instant a request that server sends at true time
// t is decided at: the server's clock, or the store's own (the true time)
// on a store clock, which no server's skew reaches.
func (s *sim) decisionClock(server int, t int64) algorithms.Time {
	// No skew at all, the commonest case, is asked first.
	if len(s.faults.skews) == 0 || s.sc.Topology.Clock == StoreClock {
		return algorithms.Time(t)
	}
	return algorithms.Time(s.serverClock(server, t))
}

func (s *sim) rtt() int64 { return s.faults.rtt }

// faultStart logs fault i's start, then does what its kind does then.
func (s *sim) faultStart(ctx context.Context, i int, t int64) error {
	f := s.sc.Faults[i]
	ft := typeOf(f.Kind)
	s.logf(t, "%s begins%s", f.Kind, ft.log(f))
	if ft.start == nil {
		return nil
	}
	return ft.start(ctx, s, i, t)
}

// faultEnd logs fault f's end, then does what its kind does then.
func (s *sim) faultEnd(ctx context.Context, f Fault, t int64) error {
	s.logf(t, "%s ends", f.Kind)
	if end := typeOf(f.Kind).end; end != nil {
		return end(ctx, s, f, t)
	}
	return nil
}

// resyncReplica is a partition's heal: the copies that followed another
// (a split brain's replica, a cluster shard's other nodes) lose their
// writes during the partition and take every key of the run from it
// (route's Resync, as the live fleet heals).
func (s *sim) resyncReplica(ctx context.Context, t int64) error {
	if err := s.resyncCopies(ctx, t); err != nil {
		return err
	}
	if s.stores.cluster != nil {
		s.healCluster(t)
		return nil
	}
	s.logf(t, "heal: the replica's writes are lost; every server is back on the primary")
	return nil
}

// resyncCopies copies every key of the run from the copy each follows.
func (s *sim) resyncCopies(ctx context.Context, t int64) error {
	names := func(yield func(string) bool) {
		for _, k := range s.keys {
			if !yield(k.name) {
				return
			}
		}
	}
	return s.route.Resync(ctx, names, algorithms.Time(t))
}
