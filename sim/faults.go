package sim

// Faults: when each begins and ends, and what it changes while it lasts.

import (
	"context"
	"fmt"
	"strings"

	"github.com/ratelim/ratelim/algorithms"
)

// faultState is what the faults in force change, and what the Result
// says of them: latency is the round trip during a latency fault, -1
// when none; down, the servers a crash killed; spans, the Result's
// faults; notes, the texts of log entries scheduled for later.
type faultState struct {
	latency int64
	skews   []skew
	down    []bool
	spans   []FaultSpan
	notes   []string
}

type skew struct {
	server        int
	start, end    int64
	offset        int64
	driftPerMicro float64
}

func (s *sim) setupFaults() {
	for _, f := range s.sc.Faults {
		if f.Kind == Crash && s.faults.down == nil {
			s.faults.down = make([]bool, s.sc.Servers)
		}
	}
	for i, f := range s.sc.Faults {
		start, end := int64(algorithms.At(f.Start)), int64(algorithms.At(f.End))
		s.schedule(event{at: start, kind: evFaultStart, arg: int32(i)})
		s.schedule(event{at: end, kind: evFaultEnd, arg: int32(i)})
		if f.Kind == ClockSkew {
			servers := f.Servers
			if len(servers) == 0 {
				for i := range s.sc.Servers {
					servers = append(servers, i)
				}
			}
			for _, srv := range servers {
				s.faults.skews = append(s.faults.skews, skew{server: srv, start: start, end: end, offset: int64(algorithms.At(f.Offset)), driftPerMicro: f.Drift})
			}
		}
		s.faults.spans = append(s.faults.spans, SpanOf(f))
	}
}

// SpanOf is how a Result reports fault f: its kind, window and, in words,
// its details.
func SpanOf(f Fault) FaultSpan {
	span := FaultSpan{Kind: string(f.Kind), StartS: f.Start.Seconds(), EndS: f.End.Seconds()}
	switch f.Kind {
	case Partition:
		var parts []string
		for _, g := range f.Groups {
			parts = append(parts, strings.Trim(strings.Join(strings.Fields(fmt.Sprint(g)), ","), "[]"))
		}
		span.Detail = "groups " + strings.Join(parts, " | ")
	case Latency:
		span.Detail = "rtt " + f.RTT.String()
	case ClockSkew:
		span.Detail = fmt.Sprintf("servers %v offset %s drift %g", f.Servers, f.Offset, f.Drift)
	case Crash:
		span.Detail = fmt.Sprintf("servers %v", f.Servers)
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
	if s.sc.Topology.Clock == StoreClock {
		return algorithms.Time(t)
	}
	return algorithms.Time(s.serverClock(server, t))
}

func (s *sim) rtt() int64 {
	if s.faults.latency >= 0 {
		return s.faults.latency
	}
	return int64(algorithms.At(s.sc.Topology.RTT))
}

func (s *sim) faultStart(ctx context.Context, i int, t int64) error {
	f := s.sc.Faults[i]
	s.logf(t, "%s begins%s", f.Kind, faultDetail(f))
	switch f.Kind {
	case Outage:
		s.topo.OutageStarts()
	case Latency:
		s.faults.latency = int64(algorithms.At(f.RTT))
	case Crash:
		s.crash(i, f.Servers, t)
	case Partition:
		var keep []int
		if len(f.Groups) > 0 {
			keep = f.Groups[0]
		}
		replicated := s.topo.Replicates()
		// What had reached the replica is all it will have: writes still
		// in flight are lost with the link.
		if err := s.topo.PartitionStarts(ctx, algorithms.Time(t), keep, s.saveReplica); err != nil {
			return err
		}
		if replicated {
			s.schedule(event{at: int64(s.topo.FailoverAt()), kind: evLog, arg: int32(len(s.faults.notes))})
			s.faults.notes = append(s.faults.notes, "failover: the replica is promoted for the cut-off servers")
			if stops, ok := s.topo.IsolatedPrimaryStopsAt(); ok {
				s.schedule(event{at: int64(stops), kind: evLog, arg: int32(len(s.faults.notes))})
				s.faults.notes = append(s.faults.notes, "the isolated primary stops taking writes")
			}
		}
	}
	return nil
}

func (s *sim) faultEnd(ctx context.Context, f Fault, t int64) error {
	s.logf(t, "%s ends", f.Kind)
	switch f.Kind {
	case Outage:
		s.topo.OutageEnds()
	case Latency:
		s.faults.latency = -1
	case Crash:
		for _, srv := range f.Servers {
			s.faults.down[srv] = false
		}
	case Partition:
		// Heal: the replica's writes during the partition are lost; it
		// resynchronises from the primary and everyone is back on it.
		resync := func() error {
			for _, k := range s.keys {
				st, err := s.stores.copies[0].Load(ctx, k.name)
				if err != nil {
					return err
				}
				if err := s.saveReplica(ctx, k.name, st); err != nil {
					return err
				}
			}
			s.logf(t, "heal: the replica's writes are lost; every server is back on the primary")
			return nil
		}
		if err := s.topo.PartitionEnds(resync); err != nil {
			return err
		}
	}
	return nil
}

// faultDetail describes a fault for the log.
func faultDetail(f Fault) string {
	switch f.Kind {
	case Partition:
		return fmt.Sprintf(": servers %v keep the primary, the rest are cut off", f.Groups[0])
	case Latency:
		return fmt.Sprintf(": round trip %s", f.RTT)
	case ClockSkew:
		return fmt.Sprintf(": servers %v off by %s, drifting %g s/s", f.Servers, f.Offset, f.Drift)
	case Outage:
		return ": every store call fails"
	}
	return ""
}
