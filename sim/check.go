package sim

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/internal/words"
	"github.com/ratelim/ratelim/store"
	"github.com/ratelim/ratelim/topology"
)

// PeerStore returns an error if algorithm is a peer model and store is a
// Redis: a peer has no Lua twin of ratelim's (the libraries that run in
// Redis run their own scripts, with their own state), so it runs on the
// memory store, whose one atomic step per decision is what a script gives.
func PeerStore(algorithm, storeName string) error {
	p := PeerOf(algorithm)
	if p == nil || storeName == "" || storeName == "memory" {
		return nil
	}
	return fmt.Errorf("%s is a model of %s and runs on the memory store only, which decides as one atomic script would (want store: memory)", algorithm, p.Library)
}

// Placement returns an error if one of sc's limits cannot run where sc
// puts its state: a peer model off the memory store (PeerStore), a
// concurrency limit on a topology whose leases are not modelled (a racy
// write or a replica would have to give a lease back too), or a topology
// that counts admissions made elsewhere (synced, owner, regions that
// replicate) off the memory store or on an algorithm that cannot count
// them (countsElsewhere).
func Placement(sc *Scenario) error {
	if err := countsElsewhere(sc); err != nil {
		return err
	}
	if err := inRegions(sc); err != nil {
		return err
	}
	for _, l := range sc.Limits() {
		if err := PeerStore(l.Algorithm, sc.Topology.Store); err != nil {
			return err
		}
		if l.Algorithm != "concurrency" {
			continue
		}
		if k := sc.Topology.RunsAs(); k != Local && k != Shared {
			return fmt.Errorf("concurrency runs on the local or shared topology, not %s: a lease given back through a racy write, to a replica or pushed later is not modelled (want topology: shared or local)", k)
		}
	}
	return nil
}

// check refuses a Scenario the simulator cannot run. Package scenarios has
// already said the same with file and line for a scenario read from YAML;
// this is for one built in Go, and names the field. The parts are checked
// in this order, and the first error found is the one returned.
func (sc *Scenario) check() error {
	for _, part := range []func() error{sc.checkRun, sc.checkLimits, sc.checkTopology, sc.checkFleet, sc.checkStoreCalls, sc.checkClients, sc.checkFaults} {
		if err := part(); err != nil {
			return err
		}
	}
	return nil
}

// bad is the error of a field a user can fix: "field: what is wrong".
func bad(field, format string, args ...any) error {
	return fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...))
}

// checkRun checks the run's length, step, servers, balancer and key.
func (sc *Scenario) checkRun() error {
	switch {
	case sc.Duration <= 0:
		return bad("duration", "must be positive (got %s)", sc.Duration)
	case sc.Step <= 0 || sc.Step > sc.Duration:
		return bad("step", "must be between 1µs and the duration %s (got %s)", sc.Duration, sc.Step)
	case sc.Servers < 1:
		return bad("servers", "must be at least 1 (got %d)", sc.Servers)
	}
	switch sc.Balancer {
	case RoundRobin, Random, KeyHash:
	default:
		return bad("balancer", "unknown balancer %q (want round-robin, random or key-hash)", sc.Balancer)
	}
	switch sc.Limit.Key {
	case KeyAuto, KeyAPIKey, KeyUser, KeyIP:
	default:
		return bad("limit.key", "unknown key %q (want auto, api-key, user or ip)", sc.Limit.Key)
	}
	return nil
}

// checkLimits checks that the limit, and each of Also, builds, on one key.
func (sc *Scenario) checkLimits() error {
	if _, err := algorithms.New(sc.Limit.Algorithm, sc.Limit.Params); err != nil {
		return fmt.Errorf("limit.%w", err)
	}
	for i, l := range sc.Also {
		if _, err := algorithms.New(l.Algorithm, l.Params); err != nil {
			return fmt.Errorf("also[%d].%w", i, err)
		}
		if l.Key != "" && l.Key != sc.Limit.Key {
			return bad(fmt.Sprintf("also[%d].key", i), "%q is not the first limit's %q (want one key for all of a key's limits)", l.Key, sc.Limit.Key)
		}
	}
	if len(sc.Also) > 0 {
		if _, err := sc.NewAlgorithm(); err != nil {
			return fmt.Errorf("also: %w", err)
		}
	}
	return nil
}

// checkTopology checks the topology's kind and store.
func (sc *Scenario) checkTopology() error {
	t := sc.Topology
	if !slices.Contains(topology.Kinds(), t.Kind) {
		return bad("topology.kind", "unknown topology %q (want %s)", t.Kind, words.OneOf(topology.Kinds()))
	}
	if t.Store != "" && t.Store != "memory" && t.Store != "miniredis" && !strings.HasPrefix(t.Store, "redis") {
		return bad("topology.store", "unknown store %q (want memory, miniredis or redis://host:port)", t.Store)
	}
	switch {
	case t.Timeout < 0:
		return bad("topology.timeout", "negative (got %s)", t.Timeout)
	case t.Kind == Cluster && (t.Masters < 0 || t.Masters > MaxMasters):
		return bad("topology.masters", "%d masters (want 1 to %d)", t.Masters, MaxMasters)
	case t.Kind == Cluster && (t.Replicas < 0 || t.Replicas > MaxReplicas):
		return bad("topology.replicas", "%d replicas (want 0 to %d)", t.Replicas, MaxReplicas)
	case t.NodeTimeout < 0:
		return bad("topology.node_timeout", "negative (got %s)", t.NodeTimeout)
	case t.Kind == Synced && t.SyncInterval > MaxSyncInterval:
		return bad("topology.sync_interval", "%s (want at most %s, 0 for every request, or never)", t.SyncInterval, MaxSyncInterval)
	case t.Kind == Synced && t.SyncInterval > 0 && t.SyncInterval < time.Microsecond:
		return bad("topology.sync_interval", "%s (want at least 1µs, or 0 for every request)", t.SyncInterval)
	case t.Kind == Synced && t.SyncInterval < 0 && t.SyncInterval != SyncNever:
		return bad("topology.sync_interval", "%s (want a positive duration, 0 for every request, or never)", t.SyncInterval)
	case t.SyncWait < 0 || t.SyncWait > MaxSyncInterval:
		return bad("topology.sync_wait", "%s (want 1us to %s)", t.SyncWait, MaxSyncInterval)
	case t.BatchLimit < 0 || t.BatchLimit > MaxBatchLimit:
		return bad("topology.batch_limit", "%d (want 1 to %d)", t.BatchLimit, MaxBatchLimit)
	case t.Kind == Owner && t.Breaker != nil:
		return bad("topology.breaker", "an owner topology's node decides from its cache, with no store call to break (want no breaker)")
	case t.ReplicationLag > MaxSyncInterval:
		return bad("topology.replication_lag", "%s (want at most %s)", t.ReplicationLag, MaxSyncInterval)
	case t.Kind == Regions:
		return sc.checkRegions()
	case t.Kind == TwoTier && t.Local == nil:
		return bad("topology.local", "missing: a two-tier topology's local tier (want e.g. local: {rate: 25/s, burst: 10})")
	case t.Kind == TwoTier && t.Breaker != nil:
		return bad("topology.breaker", "a two-tier server's local tier decides before any store call; a breaker behind it is not modelled (want no breaker on a two-tier topology)")
	case t.RunsAs() == Synced && t.Breaker != nil:
		return bad("topology.breaker", "a synced server decides in its own memory (want no breaker on a synced topology)")
	case t.Breaker != nil && (t.Breaker.Failures < 1 || t.Breaker.Cooldown <= 0):
		return bad("topology.breaker", "failures %d, cooldown %s (want at least 1 failure and a positive cooldown)", t.Breaker.Failures, t.Breaker.Cooldown)
	}
	return nil
}

// inRegions refuses a scenario whose clients or faults are in regions on
// another kind than regions (where no region would take its clients or go
// down), and a regions topology whose regions the scenario does not name
// (a --topology regions over a file without them).
func inRegions(sc *Scenario) error {
	t := sc.Topology
	regional := slices.ContainsFunc(sc.Clients, func(c Client) bool { return c.Region != "" }) ||
		slices.ContainsFunc(sc.Faults, func(f Fault) bool { return f.Region != "" })
	switch {
	case t.Kind != Regions && regional:
		return fmt.Errorf("its clients and faults are in regions, which only a regions topology has (want topology: regions, not %s)", t.Kind)
	case t.Kind == Regions && len(t.Regions) == 0:
		return errors.New("a regions topology's regions and each client's are written in the file (want topology.regions and clients[].region)")
	}
	return nil
}

// MaxRegions bounds a regions topology's regions.
const MaxRegions = 16

// checkRegions checks a regions topology: named regions, each with
// servers, adding up to the scenario's; every client in one of them.
func (sc *Scenario) checkRegions() error {
	t := sc.Topology
	if len(t.Regions) < 1 || len(t.Regions) > MaxRegions {
		return bad("topology.regions", "%d regions (want 1 to %d, written in the file with each client's region: regions: [{name: us, servers: 2}, {name: eu, servers: 2}])", len(t.Regions), MaxRegions)
	}
	total := 0
	for i, r := range t.Regions {
		switch {
		case r.Name == "":
			return bad(fmt.Sprintf("topology.regions[%d].name", i), "empty (want e.g. eu)")
		case slices.ContainsFunc(t.Regions[:i], func(o Region) bool { return o.Name == r.Name }):
			return bad(fmt.Sprintf("topology.regions[%d].name", i), "%q twice (want each region named once)", r.Name)
		case r.Servers < 1:
			return bad(fmt.Sprintf("topology.regions[%d].servers", i), "%d (want at least 1)", r.Servers)
		}
		total += r.Servers
	}
	if total != sc.Servers {
		return bad("servers", "%d, but the regions hold %d (want them equal)", sc.Servers, total)
	}
	for i, c := range sc.Clients {
		if !slices.ContainsFunc(t.Regions, func(r Region) bool { return r.Name == c.Region }) {
			return bad(fmt.Sprintf("clients[%d].region", i), "%q is not a region (want one of the topology's)", c.Region)
		}
	}
	for i, f := range sc.Faults {
		if f.Region != "" && !slices.ContainsFunc(t.Regions, func(r Region) bool { return r.Name == f.Region }) {
			return bad(fmt.Sprintf("faults[%d].region", i), "%q is not a region (want one of the topology's)", f.Region)
		}
	}
	return nil
}

// The simulator's bounds of a cluster's shape: Redis Cluster's masters
// are bounded by its 16,384 slots, far past what a run shows; a key's
// copies that took writes are marked in 8 bits (keyRun.decided), one per
// node of its shard.
const (
	MaxMasters  = 64
	MaxReplicas = 5
)

// checkFleet checks the clients' priorities, the load shedder, and that
// each limit can run where the topology puts its state.
func (sc *Scenario) checkFleet() error {
	for i, c := range sc.Clients {
		if c.Priority != "" {
			if _, err := algorithms.ParsePriority(c.Priority); err != nil {
				return fmt.Errorf("clients[%d].%w", i, err)
			}
		}
	}
	if sc.Shedder != nil {
		if _, err := sc.Shedder.New(); err != nil {
			return fmt.Errorf("shedder.%w", err)
		}
	}
	if err := Placement(sc); err != nil {
		return bad("topology", "%v", err)
	}
	return nil
}

// checkStoreCalls checks what a store call is: its fail policy, whose
// clock it is decided on, its round trip.
func (sc *Scenario) checkStoreCalls() error {
	t := sc.Topology
	switch t.OnError {
	case "", store.FailOpen, store.FailClosed:
	default:
		return bad("topology.on_error", "unknown policy %q (want fail-open or fail-closed)", t.OnError)
	}
	switch t.Clock {
	case ServerClock, StoreClock:
	default:
		return bad("topology.clock", "unknown clock %q (want server or store)", t.Clock)
	}
	if t.RTT < 0 {
		return bad("topology.rtt", "must not be negative (got %s)", t.RTT)
	}
	return nil
}

// checkClients checks that every client sends something, and the service
// times its arrivals give.
func (sc *Scenario) checkClients() error {
	fed, err := sc.checkFeeds()
	if err != nil {
		return err
	}
	for i, c := range sc.Clients {
		if len(c.Traffic) == 0 && !fed[i] {
			return bad(fmt.Sprintf("clients[%d].traffic", i), "client %q sends nothing", c.Name)
		}
		for j, tr := range c.Traffic {
			field := fmt.Sprintf("clients[%d].traffic[%d].services", i, j)
			switch {
			case len(tr.Services) > 0 && tr.Pattern != Times:
				return bad(field, "given with pattern %s (want pattern times: a service time per listed arrival)", tr.Pattern)
			case len(tr.Services) > len(tr.Times):
				return bad(field, "%d service times for %d arrivals (want at most one per arrival)", len(tr.Services), len(tr.Times))
			}
			for k, d := range tr.Services {
				if d < 0 {
					return bad(fmt.Sprintf("%s[%d]", field, k), "negative (got %s)", d)
				}
			}
		}
	}
	return nil
}

// checkFaults checks each fault's window, and the fault itself as its
// kind checks it (Fault.Check).
func (sc *Scenario) checkFaults() error {
	for i, f := range sc.Faults {
		field := fmt.Sprintf("faults[%d]", i)
		if f.Start < 0 || f.End <= f.Start {
			return bad(field, "window %s–%s is empty or negative", f.Start, f.End)
		}
		// Nodes are held to the topology a file names by its decoder; a
		// run may change the topology (--topology, --vs, the TUI's t),
		// and a node another topology does not have is then ignored.
		if err := f.Check(field, sc.Servers, nil); err != nil {
			return err
		}
		// A region's outage on another kind would take nothing down,
		// silently.
		if f.Region != "" && sc.Topology.Kind != Regions {
			return bad(field+".region", "only a regions topology has regions, and this one is %s (want region removed, or kind: regions)", sc.Topology.Kind)
		}
		if len(f.Nodes) > 0 && sc.Topology.Kind == Owner {
			return bad(field+".nodes", "an owner topology's nodes are its servers' and go where they go (want nodes removed: groups place them)")
		}
	}
	if i, err := ClusterPartitionsSettle(*sc, sc.Faults); err != nil {
		return bad(fmt.Sprintf("faults[%d]", i), "%v", err)
	}
	return nil
}
