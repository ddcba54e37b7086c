package sim

import (
	"context"
	"time"
)

// Outage fails every store call: the fail policy decides each request
// meanwhile. A local topology's jars have no store to lose.
const Outage FaultKind = "outage"

var outageFault = FaultType{
	Kind:   Outage,
	Fields: []FaultField{},
	Shade:  ShadeGrey,
	span:   func(Fault) string { return "" },
	log:    func(Fault) string { return ": every store call fails" },
	banner: func(sc Scenario, _ Fault, _ time.Duration) string {
		if sc.Topology.Kind == Local {
			return "STORE DOWN: no effect, each server has its own jar"
		}
		return "STORE DOWN — " + failing(sc)
	},
	start: func(_ context.Context, s *sim, _ int, _ int64) error {
		s.topo.OutageStarts()
		return nil
	},
	end: func(_ context.Context, s *sim, _ Fault, _ int64) error {
		s.topo.OutageEnds()
		return nil
	},
}
