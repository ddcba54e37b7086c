package sim

import (
	"context"
	"fmt"
	"time"
)

// Crash kills Servers at Start, mid-request: what they were serving
// never completes, so a concurrency limit's leases they held are
// never given back and count in flight until their TTL. The load
// balancer routes around them until End, when they are back.
const Crash FaultKind = "crash"

var crashServers = FaultField{Name: "servers", Required: true, Missing: "the servers that crash", Example: "servers: [1]",
	Empty: "empty (want the servers that crash, e.g. [1])"}

var crashFault = FaultType{
	Kind:   Crash,
	Fields: []FaultField{crashServers},
	Shade:  ShadeOrange,
	check:  checkCrash,
	span:   func(f Fault) string { return fmt.Sprintf("servers %v", f.Servers) },
	log:    func(Fault) string { return "" },
	banner: func(Scenario, Fault, time.Duration) string { return "CRASH" },
	setup: func(s *sim, _ Fault, _, _ int64) {
		if s.faults.down == nil {
			s.faults.down = make([]bool, s.sc.Servers)
		}
	},
	start: func(_ context.Context, s *sim, i int, t int64) error {
		s.crash(i, s.sc.Faults[i].Servers, t)
		return nil
	},
	end: func(_ context.Context, s *sim, f Fault, _ int64) error {
		for _, srv := range f.Servers {
			s.faults.down[srv] = false
		}
		return nil
	},
}

// checkCrash: some servers, each once, and one left to serve.
func checkCrash(f Fault, at string, servers int, nodes []string) *FaultError {
	if len(f.Servers) == 0 {
		return &FaultError{Field: "servers", Msg: crashServers.Empty}
	}
	if err := checkServers(f.Servers, at, "servers", servers, map[int]string{}); err != nil {
		return err
	}
	if len(f.Servers) >= servers {
		return &FaultError{Field: "servers", Msg: fmt.Sprintf("every server crashes, and no one is left to serve (want fewer than the %d servers)", servers)}
	}
	return nil
}
