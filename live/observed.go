// The observed scenario: the scenario as a live run really played it, for
// the simulator to decide the traffic the run achieved.

package live

import (
	"cmp"
	"slices"
	"time"

	"github.com/ratelim/ratelim/sim"
)

// ObservedScenario is sc as the live run res really played it: each
// client's traffic replaced by the first tries it sent, at the instants
// the fleet decided them, each with the service time it asked for, and the
// faults at the instants they were applied. The
// simulator run on it decides the traffic a live run achieved, not the
// schedule it may have failed to keep on a loaded machine, so where the
// two disagree the limiter did. Retries are left to the client's retry
// policy, as in any run. Its WallClock is the run's start (res.Started),
// so that windows aligned to the wall clock fall where the live servers'
// fell, whatever instant the run began at.
func ObservedScenario(sc sim.Scenario, res *LoadResult) sim.Scenario {
	obs := slices.Clone(res.Observations)
	slices.SortStableFunc(obs, func(a, b sim.Observation) int {
		if c := cmp.Compare(a.At, b.At); c != 0 {
			return c
		}
		return cmp.Compare(a.Seq, b.Seq)
	})
	times := make([][]time.Duration, len(sc.Clients))
	services := make([][]time.Duration, len(sc.Clients))
	cost := make([]int64, len(sc.Clients))
	for _, o := range obs {
		if o.Attempt == 0 {
			times[o.Client] = append(times[o.Client], o.At)
			services[o.Client] = append(services[o.Client], o.Service)
			cost[o.Client] = o.Cost
		}
	}
	out := sc
	out.Clients = slices.Clone(sc.Clients)
	for i, c := range out.Clients {
		tr := sim.Traffic{Pattern: sim.Times, Times: times[i], Cost: cost[i]}
		if c.Service.Mean > 0 {
			// Each request held as long as it was live (or as it asked,
			// when the answer did not say): a drawn service time is
			// drawn per request sent live and per request admitted in
			// the simulator, so the two would differ, and a loaded
			// server holds a lease longer than asked.
			tr.Services = services[i]
		}
		out.Clients[i].Traffic = []sim.Traffic{tr}
	}
	if len(res.Faults) == len(sc.Faults) {
		out.Faults = slices.Clone(res.Faults)
	}
	if !res.Started.IsZero() {
		out.WallClock = res.Started
	}
	return out
}
