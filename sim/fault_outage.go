package sim

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ratelim/ratelim/internal/words"
)

// Outage fails every store call: the fail policy decides each request
// meanwhile. A local topology's jars have no store to lose. On a regions
// topology, an outage with a region takes that region down, its store
// and its servers: its clients are served by the next region up.
const Outage FaultKind = "outage"

var outageFault = FaultType{
	Kind:   Outage,
	Fields: []FaultField{{Name: "region"}},
	Shade:  ShadeGrey,
	check: func(f Fault, at string, _ int, nodes []string) *FaultError {
		if f.Region != "" && nodes != nil && !slices.Contains(nodes, f.Region) {
			return &FaultError{At: at, Field: "region", Msg: fmt.Sprintf("%q is not a region of this topology (want %s)", f.Region, words.OneOf(nodes))}
		}
		return nil
	},
	span: func(f Fault) string { return f.Region },
	log: func(f Fault) string {
		if f.Region != "" {
			return ": region " + f.Region + " is down, its clients go to the next region up"
		}
		return ": every store call fails"
	},
	banner: func(sc Scenario, f Fault, _ time.Duration) string {
		switch {
		case f.Region != "":
			return "REGION " + strings.ToUpper(f.Region) + " DOWN — its clients served elsewhere"
		case sc.Topology.Kind == Owner:
			return "NODES CUT OFF — each answers from its cache, hits and status dropped"
		case sc.Topology.Kind == Local:
			return "STORE DOWN: no effect, each server has its own jar"
		}
		return "STORE DOWN — " + failing(sc)
	},
	start: func(_ context.Context, s *sim, i int, _ int64) error {
		if r := s.sc.Faults[i].Region; r != "" {
			s.topo.RegionDownStarts(slices.Index(s.stores.names, r))
			return nil
		}
		s.topo.OutageStarts()
		return nil
	},
	end: func(_ context.Context, s *sim, f Fault, _ int64) error {
		if f.Region != "" {
			s.topo.RegionDownEnds(slices.Index(s.stores.names, f.Region))
			return nil
		}
		s.topo.OutageEnds()
		return nil
	},
}
