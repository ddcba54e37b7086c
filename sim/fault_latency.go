package sim

import (
	"context"
	"fmt"
	"time"

	"github.com/ratelim/ratelim/algorithms"
)

// Latency makes every store round trip RTT while it lasts: a latency
// spike. A local topology's jars need no round trip.
const Latency FaultKind = "latency"

var latencyFault = FaultType{
	Kind:   Latency,
	Fields: []FaultField{required("rtt", "the round trip during the spike", "rtt: 50ms")},
	Shade:  ShadeSkyBlue,
	check: func(f Fault, _ string, _ int, _ []string) *FaultError {
		if f.RTT < 0 {
			return &FaultError{Field: "rtt", Msg: fmt.Sprintf("%s is negative (want 0 or more, e.g. 50ms)", f.RTT)}
		}
		return nil
	},
	span: func(f Fault) string { return "rtt " + f.RTT.String() },
	log:  func(f Fault) string { return fmt.Sprintf(": round trip %s", f.RTT) },
	banner: func(sc Scenario, f Fault, _ time.Duration) string {
		if sc.Topology.Kind == Local {
			return "LATENCY: no effect, local jars need no round trip"
		}
		return fmt.Sprintf("LATENCY: rtt %s (normally %s)", f.RTT, sc.Topology.RTT)
	},
	start: func(_ context.Context, s *sim, i int, _ int64) error {
		s.faults.rtt = int64(algorithms.At(s.sc.Faults[i].RTT))
		return nil
	},
	end: func(_ context.Context, s *sim, _ Fault, _ int64) error {
		s.faults.rtt = int64(algorithms.At(s.sc.Topology.RTT))
		return nil
	},
}
