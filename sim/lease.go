package sim

// Requests in flight: a concurrency limit's leases, given back when a
// request has been served, and never when its server crashed first.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/internal/words"
	"github.com/ratelim/ratelim/topology"
)

// releaser is a copy of the state that can give a lease back: a jar, the
// memory store, a Redis running the concurrency twin.
type releaser interface {
	Release(ctx context.Context, key string, now, lease algorithms.Time, cost int64) error
}

// inFlight is an admitted request that holds a lease until it is served.
type inFlight struct {
	key, server int
	lease       algorithms.Time // 0: the request was refused, only the exact limiter admitted it
	idealLease  algorithms.Time // the exact limiter's lease of the same request, 0 if it refused
	cost        int64
	lost        bool // its server crashed: it will never be served
}

// leaseStage holds the leases of admitted requests until they are served:
// a run with a concurrency limit has one. flights are the requests that
// hold a lease, by slot.
type leaseStage struct {
	flights slots[inFlight]
}

// conclude holds the lease the limit handed out, and the exact limiter's,
// until the request is served; a request the load shedder turned away is
// not served, and gives its lease back at once.
func (l *leaseStage) conclude(s *sim, o *outcome) {
	if o.lease != 0 || o.idealLease != 0 {
		l.hold(s, &o.p, o.lease, o.idealLease, o.at+o.latency, !o.shed)
	}
}

// hold schedules the release of lease, the one an admitted request took
// (0 if none), and of idealLease, the exact limiter's (0 if none), when
// its client's service time after at has passed; at at itself when the
// request is not served (the load shedder turned it away after the limit
// admitted it).
//
// The exact limiter the run is measured against takes leases too, on the
// true clock, and gives them back at the same instant: a crash is a fault
// it does not have, so what the leak costs shows as false denies.
func (l *leaseStage) hold(s *sim, p *pending, lease, idealLease algorithms.Time, at int64, served bool) {
	done := at
	if served {
		done += s.serviceOf(p)
	}
	f := inFlight{key: p.key, server: p.server, lease: lease, idealLease: idealLease, cost: p.cost}
	e := event{at: done, kind: evRelease, arg: l.flights.put(f)}
	if p.releaseSeq == 0 {
		s.schedule(e)
		return
	}
	e.seq = p.releaseSeq
	s.queue.push(e)
}

// serviceOf is how long p takes to serve, in µs: its given service time,
// or a draw from its client's Service.
func (s *sim) serviceOf(p *pending) int64 {
	if p.service >= 0 {
		return p.service
	}
	return s.serviceTime(p.client)
}

// serviceTime draws how long client's request takes to serve, in µs.
func (s *sim) serviceTime(client int) int64 {
	sv := s.clients[client].Service
	mean := int64(algorithms.At(sv.Mean))
	if !sv.Exponential || mean <= 0 {
		return mean
	}
	// Inverse transform; capped at 50 means so that one draw in 10^21
	// cannot hold a lease for ever.
	u := s.rng.Float64()
	return int64(math.Min(-math.Log(1-u), 50) * float64(mean))
}

// leastServiceTime is the shortest time client's request can hold its
// lease, in µs: its service time when fixed, 0 when drawn or when a load
// shedder may turn it away unserved.
func (s *sim) leastServiceTime(client int) int64 {
	if c := s.clients[client]; !c.Service.Exponential && !c.givenServices && s.shed == nil {
		return max(int64(algorithms.At(c.Service.Mean)), 0)
	}
	return 0
}

// release gives back the lease of the request in slot, served at t,
// unless its server crashed before it was.
func (s *sim) release(ctx context.Context, slot int32, t int64) error {
	l := s.leases
	f := l.flights.take(slot)
	if f.idealLease != 0 {
		if r, ok := s.exact.alg.(leaseHolder); ok {
			k := &s.keys[f.key]
			k.ideal = r.Release(k.ideal, algorithms.Time(t), f.idealLease, f.cost)
		}
	}
	if f.lost || f.lease == 0 {
		return nil
	}
	// The server gives the lease back to the copy it reaches now, as the
	// live fleet's does (route): after a failover, the replica; in an
	// outage or cut off, none, and the lease is held until its TTL.
	now := s.decisionClock(f.server, t)
	target := s.topo.Route(f.server, algorithms.Time(t))
	switch {
	case target == topology.Unreachable:
		s.leaseKept(f, t)
		return nil
	case s.stores.jars != nil:
		s.stores.jars[target].release(f.key, now, f.lease, f.cost)
	default:
		r, ok := s.stores.copies[target].(releaser)
		if !ok {
			return fmt.Errorf("sim: the %s store cannot release a lease", s.sc.Topology.Store)
		}
		if err := r.Release(ctx, s.keys[f.key].name, now, f.lease, f.cost); err != nil && !errors.Is(err, errStoreDown) {
			return fmt.Errorf("sim: releasing a lease: %w", err)
		}
	}
	return s.route.Wrote(ctx, target, s.keys[f.key].name, algorithms.Time(t))
}

// leaseKept counts f's lease, whose server could not reach the store to
// give it back at t, as held until it expires, against the fault that
// cut the server off (an outage, a partition), as a crash's leases are.
func (s *sim) leaseKept(f inFlight, t int64) {
	for i, ft := range s.sc.Faults {
		start, end := int64(algorithms.At(ft.Start)), int64(algorithms.At(ft.End))
		if (ft.Kind != Outage && ft.Kind != Partition) || t < start || t >= end {
			continue
		}
		span := &s.faults.spans[i]
		span.Leaked += f.cost
		span.LeakedUntilS = max(span.LeakedUntilS, seconds(int64(f.lease)))
		return
	}
}

// crash kills servers at t: the requests they were serving are lost, their
// leases held until they expire; until the crash ends the balancer routes
// around them.
func (s *sim) crash(fault int, servers []int, t int64) {
	lost := map[int]int64{}
	var expires int64
	var flights []inFlight
	if s.leases != nil {
		flights = s.leases.flights.items
	}
	for i := range flights {
		f := &flights[i]
		if f.lease == 0 || f.lost {
			continue
		}
		for _, srv := range servers {
			if f.server == srv {
				f.lost = true
				lost[srv] += f.cost
				expires = max(expires, int64(f.lease))
			}
		}
	}
	var held int64
	for _, srv := range servers {
		s.faults.down[srv] = true
		held += lost[srv]
	}
	if held > 0 {
		span := &s.faults.spans[fault]
		span.Leaked, span.LeakedUntilS = held, seconds(expires)
		s.logf(t, "server %v crashed mid-request: %s held until they expire, the last at %s", servers, words.Count(held, "lease", "leases"), words.Duration(algorithms.Time(expires).Duration().Round(time.Millisecond)))
	} else {
		s.logf(t, "server %v crashed, serving nothing that held a lease", servers)
	}
}

// routeAround is server, or the next one up when it is down: a load
// balancer's health check takes a crashed server out of rotation.
func (s *sim) routeAround(server int) int {
	n := len(s.faults.down)
	for i := 0; i < n && s.faults.down[server]; i++ {
		server = (server + 1) % n
	}
	return server
}

// release gives back cost leases named lease on the run's key id.
func (j *jar) release(id int, now, lease algorithms.Time, cost int64) {
	if r, ok := j.step.alg.(leaseHolder); ok {
		st := j.state(id)
		*st = r.Release(*st, now, lease, cost)
	}
}

// Release is release by the key's name.
func (j *jar) Release(_ context.Context, key string, now, lease algorithms.Time, cost int64) error {
	j.release(j.keys.id(key), now, lease, cost)
	return nil
}

// leaseHolder is an algorithm that hands out leases to give back
// (algorithms.Concurrency, or a Multi with one).
type leaseHolder interface {
	Release(prev algorithms.State, now, lease algorithms.Time, cost int64) algorithms.State
}
