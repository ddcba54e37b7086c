package sim

// The fleet's load shedder: after the limit, it turns away with 503 what
// the fleet has no capacity for, the lower priorities first.

import (
	"slices"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/store"
)

// shedStage is the fleet's load shedder and its state. It stands after the
// limit, as Stripe orders them: what it weighs is the load that reaches
// the API, and a 503 has spent the client's quota.
type shedStage struct {
	shedder *algorithms.Shedder
	state   algorithms.State
}

// conclude asks the shedder whether a request the limit admitted (or a
// fail-open let through) is served, and turns its decision into the 503
// if not.
func (sh *shedStage) conclude(s *sim, o *outcome) {
	if !o.d.Allowed {
		return
	}
	var sd algorithms.Decision
	sh.state, sd = sh.shedder.StepPriority(sh.state, algorithms.Time(o.at), o.p.cost, s.clients[o.p.client].priority)
	if sd.Allowed {
		return
	}
	o.d = store.Decision{Decision: algorithms.Decision{Limit: sd.Limit, RetryAfter: sd.RetryAfter, ResetAfter: sd.ResetAfter}}
	o.shed = true
}

// FleetKey is the key of the state series that follows a load shedder's
// capacity: what the fleet could still take at once, which each priority
// may use down to its reserve.
const FleetKey = "(fleet)"

// sample adds the shedder's capacity left at the end of the step ending
// at t to its state series in series.
func (sh *shedStage) sample(series []StateSeries, t int64) []StateSeries {
	i := slices.IndexFunc(series, func(ser StateSeries) bool { return ser.Key == FleetKey })
	if i < 0 {
		series = append(series, StateSeries{Key: FleetKey, Copy: "shedder"})
		i = len(series) - 1
	}
	series[i].addPoint(seconds(t), sh.room(t)) // sparse, as the keys' (sampler)
	return series
}

// room is the shedder's capacity left at the end of the step ending at t.
func (sh *shedStage) room(t int64) int64 {
	_, d := sh.shedder.Step(sh.state, algorithms.Time(t-1), 0)
	return d.Remaining
}
