// The faults applied live: Fleet.Fault makes a scenario's outage,
// partition or crash real on the running fleet, after checkFaultServers
// has held it to a scenario file's rules; resync is a split brain's heal.

package live

import (
	"context"
	"fmt"
	"maps"

	"github.com/ratelim/ratelim/sim"
)

// Fault applies a scenario fault for real, at its start or its end: an
// outage stops the store (a redis-server the fleet started is killed and
// restarted; miniredis is closed and restarted; other stores are cut off),
// a partition cuts the servers outside its first group off from the store
// and, on a split brain, fails them over to the replica after
// failover_after: the simulator's topology, applied on the fleet's clock.
// A crash kills its servers: each abandons the requests it is serving (their
// connections cut, their leases never given back, held in the store until
// their TTL, as Abandoned counts) and answers nothing until the crash ends;
// the load run routes around them meanwhile. Latency and clock-skew faults
// are the simulator's only.
func (f *Fleet) Fault(fault sim.Fault, start bool) error {
	if err := checkFaultServers(fault, len(f.URLs)); err != nil {
		return err
	}
	switch fault.Kind {
	case sim.Crash:
		return f.crash(fault.Servers, start)
	case sim.Outage:
		switch {
		case f.redis != nil && start:
			return f.redis.Stop()
		case f.redis != nil:
			return f.redis.Start(context.Background())
		case len(f.embedded) > 0:
			for _, r := range f.embedded {
				if start {
					r.Embedded().Close()
				} else if err := r.Embedded().Restart(); err != nil {
					return err
				}
			}
			return nil
		}
		f.mu.Lock()
		if start {
			f.topo.OutageStarts()
		} else {
			f.topo.OutageEnds()
		}
		f.mu.Unlock()
	case sim.Partition:
		var keep []int
		if len(fault.Groups) > 0 {
			keep = fault.Groups[0]
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if start {
			return f.topo.PartitionStarts(context.Background(), f.clock(), keep, f.route.SaveReplica)
		}
		return f.topo.PartitionEnds(f.resync)
	}
	return nil
}

// checkFaultServers refuses a fault naming servers a fleet of n cannot
// apply it to, whatever its kind, by the rules a scenario file's faults
// keep (scenarios' serverList): every number is a server (0 to n-1), none
// is listed twice in servers, each is in one group only; a partition has
// groups; a crash has servers and leaves one to serve. Fleet.Fault checks
// here first, so a fault from the control listener and one from this
// process are held to the same rules; a refusal names the field.
func checkFaultServers(fault sim.Fault, n int) error {
	exists := func(field string, s int) error {
		if s < 0 || s >= n {
			return fmt.Errorf("%s: server %d does not exist (want 0 to %d: servers are numbered from 0)", field, s, n-1)
		}
		return nil
	}
	listed := make(map[int]bool, len(fault.Servers))
	for _, s := range fault.Servers {
		if err := exists("servers", s); err != nil {
			return err
		}
		if listed[s] {
			return fmt.Errorf("servers: server %d is listed twice (want each server once)", s)
		}
		listed[s] = true
	}
	groupOf := map[int]int{}
	for gi, g := range fault.Groups {
		if len(g) == 0 {
			return fmt.Errorf("groups: group %d is empty (want server numbers in each, e.g. 0,1|2,3)", gi)
		}
		for _, s := range g {
			if err := exists("groups", s); err != nil {
				return err
			}
			if prev, ok := groupOf[s]; ok {
				if prev == gi {
					return fmt.Errorf("groups: server %d is listed twice in group %d (want each server once)", s, gi)
				}
				return fmt.Errorf("groups: server %d is in group %d and group %d (want each server in one group only)", s, prev, gi)
			}
			groupOf[s] = gi
		}
	}
	switch fault.Kind {
	case sim.Partition:
		if len(fault.Groups) == 0 {
			return fmt.Errorf("groups: a partition splits the servers into groups (want e.g. 0,1|2,3; the first keeps the primary)")
		}
	case sim.Crash:
		if len(fault.Servers) == 0 {
			return fmt.Errorf("servers: a crash needs the servers that crash (want e.g. 1)")
		}
		if len(fault.Servers) >= n {
			return fmt.Errorf("servers: every server crashes, and no one is left to serve (want fewer than the %d servers)", n)
		}
	}
	return nil
}

// resync is a split brain's heal: the replica's writes during the
// partition are lost, each key decided on either copy since the last heal
// is copied from the primary (route's Resync, as the simulator heals), and
// replication resumes. f.mu is held.
func (f *Fleet) resync() error {
	ctx, cancel := context.WithTimeout(context.Background(), clearTimeout)
	defer cancel()
	if err := f.route.Resync(ctx, maps.Keys(f.healKeys)); err != nil {
		return err
	}
	clear(f.healKeys)
	return nil
}
