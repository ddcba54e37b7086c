// The faults applied live: Fleet.Fault makes a scenario's outage,
// partition or crash real on the running fleet, after sim has checked it
// as a scenario file's fault is checked (sim.Fault.Check); resync is a
// split brain's heal.

package live

import (
	"context"
	"maps"
	"math/rand/v2"
	"slices"

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
// are the simulator's only. A fault is checked first against the fleet's
// servers (sim.Fault.Check), so one from the control listener and one from
// this process are held to a scenario file's rules; a refusal names the
// field.
func (f *Fleet) Fault(fault sim.Fault, start bool) error {
	if err := fault.Check("", len(f.URLs), f.topo.Copies()); err != nil {
		return err
	}
	switch fault.Kind {
	case sim.Crash:
		return f.crash(fault.Servers, start)
	case sim.Outage:
		return f.outage(start)
	case sim.Partition:
		return f.partition(fault, start)
	}
	return nil
}

// outage stops the store at a fault's start and brings it back at its end.
func (f *Fleet) outage(start bool) error {
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
	return nil
}

// partition cuts the servers outside fault's first group off at its
// start, and heals at its end.
func (f *Fleet) partition(fault sim.Fault, start bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if start {
		draw := func(n int64) int64 {
			d := rand.Int64N(n)
			f.draws = append(f.draws, d)
			return d
		}
		return f.topo.PartitionStarts(context.Background(), f.clock(), fault.Partition(), draw, f.route.SaveCopy)
	}
	return f.topo.PartitionEnds(f.clock(), f.resync)
}

// ClusterDraws are what the fleet's partitions drew for a simulated
// cluster's failure detection and election, in the order drawn: given to
// the simulator as sim.Options.ClusterJitter (ReplayDraws), a run on the
// arrivals the fleet saw fails over at the instants the fleet did.
func (f *Fleet) ClusterDraws() []int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.draws)
}

// ReplayDraws is a sim.Options.ClusterJitter that gives draws in order,
// then the middle of each range asked for.
func ReplayDraws(draws []int64) func(n int64) int64 {
	return func(n int64) int64 {
		if len(draws) == 0 {
			return n / 2
		}
		d := draws[0]
		draws = draws[1:]
		return d
	}
}

// resync is a split brain's heal: the replica's writes during the
// partition are lost, each key decided on either copy since the last heal
// is copied from the primary (route's Resync, as the simulator heals), and
// replication resumes. f.mu is held.
func (f *Fleet) resync() error {
	ctx, cancel := context.WithTimeout(context.Background(), clearTimeout)
	defer cancel()
	if err := f.route.Resync(ctx, maps.Keys(f.healKeys), f.clock()); err != nil {
		return err
	}
	clear(f.healKeys)
	return nil
}
