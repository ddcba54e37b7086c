package scenarios

// The topology: how the servers share limiter state (kind, store, rtt,
// on_error, clock) and a split brain's replication and failover.

import (
	"net/url"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/store"
	"github.com/ratelim/ratelim/topology"
)

// topology reads the topology: mapping; present is false when the file has
// none, and the defaults (one shared memory store, DefaultRTT away) hold.
func (d *decoder) topology(n *yaml.Node, present bool, top *yaml.Node) sim.Topology {
	t := sim.Topology{
		Kind:              sim.Shared,
		Store:             DefaultStore,
		OnError:           store.FailOpen,
		Clock:             sim.ServerClock,
		PrimaryStopsAfter: sim.PrimaryNeverStops,
	}

	if !present {
		t.RTT = DefaultRTT
		return t
	}
	f := d.record(n, "topology", &topologyObject, "a mapping with kind, store, rtt and on_error")
	if v, ok := f.values["kind"]; ok {
		t.Kind = sim.TopologyKind(d.choice(v, "topology.kind", "topology", topologyKinds))
	}
	if v, ok := f.values["store"]; ok {
		t.Store = d.storeName(v, "topology.store")
	}
	t.RTT = DefaultRTT
	if t.Kind == sim.Local {
		t.RTT = 0
	}
	if v, ok := f.values["rtt"]; ok {
		t.RTT = d.roundTrip(v, "topology.rtt", "500us")
	}
	if v, ok := f.values["on_error"]; ok {
		t.OnError = store.Policy(d.choice(v, "topology.on_error", "policy", onErrorPolicies))
	}
	if v, ok := f.values["clock"]; ok {
		t.Clock = sim.ClockSource(d.choice(v, "topology.clock", "clock", clockSources))
	}
	if d.failed() {
		return t
	}
	if v, ok := f.values["replication_lag"]; ok {
		switch {
		case t.Kind == sim.Regions && v.Kind == yaml.ScalarNode && v.Value == "never":
			t.ReplicationLag = sim.ReplicationNone
		case v.Kind == yaml.ScalarNode && v.Value == "never":
			d.failf(v, "topology.replication_lag", "never is for regions that share nothing, and this one is %s (want a duration, e.g. 100ms)", t.Kind)
		default:
			t.ReplicationLag = d.nonNegative(v, "topology.replication_lag", "100ms")
			if !d.failed() && t.ReplicationLag > sim.MaxSyncInterval {
				d.failf(v, "topology.replication_lag", "%s is longer than the simulator models (want at most %s, e.g. 200ms)", short(v.Value), sim.MaxSyncInterval)
			}
		}
	} else if t.Kind == sim.Regions {
		t.ReplicationLag = sim.ReplicationNone
	}
	if v, ok := f.values["failover_after"]; ok {
		if v.Kind == yaml.ScalarNode && v.Value == "never" {
			t.FailoverAfter = sim.FailoverNever
		} else {
			t.FailoverAfter = d.nonNegative(v, "topology.failover_after", "2s or never")
		}
	}
	if v, ok := f.values["primary_stops_after"]; ok {
		if v.Kind == yaml.ScalarNode && v.Value == "never" {
			t.PrimaryStopsAfter = sim.PrimaryNeverStops
		} else {
			t.PrimaryStopsAfter = d.nonNegative(v, "topology.primary_stops_after", "15s or never")
		}
	}
	if v, ok := f.values["timeout"]; ok {
		t.Timeout = d.roundTrip(v, "topology.timeout", "100ms")
	}
	if v, ok := f.values["breaker"]; ok && !d.failed() {
		if t.Kind == sim.Local {
			d.failf(v, "topology.breaker", "a local jar is in the server's memory, with no store call to break (want it removed, or another kind)")
			return t
		}
		t.Breaker = d.breaker(v, "topology.breaker")
	}
	d.cluster(f, &t)
	d.synced(f, &t)
	d.localTier(f, &t)
	d.ownerFields(f, &t)
	d.regions(f, &t)
	if v, ok := f.values["breaker"]; ok && !d.failed() && t.RunsAs() == sim.Synced {
		d.failf(v, "topology.breaker", "a synced server decides in its own memory; its pushes and reads have no breaker in this model (want it removed, sync_interval: 0, or another kind)")
	}
	if v, ok := f.values["breaker"]; ok && !d.failed() && t.Kind == sim.Owner {
		d.failf(v, "topology.breaker", "an owner topology's node decides from its cache, with no store call to break (want it removed, or another kind)")
	}
	if v, ok := f.values["breaker"]; ok && !d.failed() && t.Kind == sim.TwoTier {
		d.failf(v, "topology.breaker", "a two-tier server's local tier decides before any store call; a breaker behind it is not modelled (want it removed, or another kind)")
	}
	// A split-brain setting on another kind would do nothing, silently.
	// Its default value does nothing anywhere, and may stay (DESIGN.md's
	// example lists them all on a shared topology, to document them).
	if !d.failed() && t.Kind != sim.SplitBrain {
		set := map[string]bool{
			// A cluster's replicas trail their masters too.
			"replication_lag":     t.ReplicationLag != 0 && t.Kind != sim.Cluster && t.Kind != sim.Regions,
			"failover_after":      t.FailoverAfter != 0,
			"primary_stops_after": t.PrimaryStopsAfter != sim.PrimaryNeverStops,
		}
		for _, name := range f.order {
			if set[name] {
				kinds := "split-brain"
				if name == "replication_lag" {
					kinds = "split-brain, cluster or regions"
				}
				d.failf(f.values[name], f.field(name), "only a %s topology has it, and this one is %s (want it removed, or kind: %s)", kinds, t.Kind, kinds)
				return t
			}
		}
	}
	return t
}

// Bounds of a cluster's shape, the simulator's (sim.MaxMasters,
// sim.MaxReplicas), and of its node timeout.
const (
	MaxMasters     = sim.MaxMasters
	MaxReplicas    = sim.MaxReplicas
	MaxNodeTimeout = time.Hour
)

// MaxBreakerFailures bounds a circuit breaker's failures in a row.
const MaxBreakerFailures = 1_000_000

// breaker reads a circuit breaker: failures in a row, and its cooldown.
func (d *decoder) breaker(n *yaml.Node, field string) *sim.Breaker {
	f := d.record(n, field, &breakerObject, "a mapping {failures: 5, cooldown: 1s}")
	if d.failed() {
		return nil
	}
	b := &sim.Breaker{}
	for _, name := range []string{"failures", "cooldown"} {
		if _, ok := f.values[name]; !ok {
			d.failf(f.node, field+"."+name, "missing (want e.g. breaker: {failures: 5, cooldown: 1s})")
			return nil
		}
	}
	b.Failures = int(d.integer(f.values["failures"], field+".failures", 1, MaxBreakerFailures, "5"))
	if !d.failed() {
		b.Cooldown = d.positive(f.values["cooldown"], field+".cooldown", "1s")
	}
	if !d.failed() && b.Cooldown > MaxNodeTimeout {
		d.failf(f.values["cooldown"], field+".cooldown", "%s is longer than the simulator models (want at most %s, e.g. 1s)", short(f.values["cooldown"].Value), MaxNodeTimeout)
	}
	return b
}

// cluster reads a cluster's fields (masters, replicas, node_timeout,
// full_coverage), refused on another kind.
func (d *decoder) cluster(f *fields, t *sim.Topology) {
	if d.failed() {
		return
	}
	t.Replicas = 1
	if t.Kind == sim.Cluster {
		t.Masters, t.NodeTimeout = topology.DefaultMasters, topology.DefaultNodeTimeout
		if _, ok := f.values["timeout"]; !ok {
			t.Timeout = sim.DefaultClusterTimeout
		}
	}
	for _, name := range []string{"masters", "replicas", "node_timeout", "full_coverage"} {
		v, ok := f.values[name]
		switch {
		case !ok:
			continue
		case t.Kind != sim.Cluster:
			d.onlyOn(v, f.field(name), sim.Cluster, t.Kind, "it")
			return
		}
		field := "topology." + name
		switch name {
		case "masters":
			t.Masters = int(d.integer(v, field, 1, MaxMasters, "3"))
		case "replicas":
			t.Replicas = int(d.integer(v, field, 0, MaxReplicas, "1"))
		case "node_timeout":
			t.NodeTimeout = d.positive(v, field, "15s")
			if !d.failed() && t.NodeTimeout > MaxNodeTimeout {
				d.failf(v, field, "%s is longer than the simulator models (want at most %s, e.g. 15s)", short(v.Value), MaxNodeTimeout)
			}
		case "full_coverage":
			t.PartialCoverage = !d.boolean(v, field)
		}
		if d.failed() {
			return
		}
	}
	if t.Kind != sim.Cluster {
		t.Replicas = 0
	}
}

// regions reads a regions topology's regions: required there, refused on
// another kind.
func (d *decoder) regions(f *fields, t *sim.Topology) {
	v, ok := f.values["regions"]
	switch {
	case d.failed():
		return
	case !ok && t.Kind == sim.Regions:
		d.failf(f.node, f.field("regions"), "missing: a regions topology's regions (want e.g. regions: [{name: us, servers: 2}, {name: eu, servers: 2}])")
		return
	case !ok:
		return
	case t.Kind != sim.Regions:
		d.onlyOn(v, f.field("regions"), sim.Regions, t.Kind, "them")
		return
	}
	items := d.list(v, "topology.regions", "a list of regions, e.g. [{name: us, servers: 2}, {name: eu, servers: 2}]")
	if !d.failed() && (len(items) == 0 || len(items) > sim.MaxRegions) {
		d.failf(v, "topology.regions", "%d regions (want 1 to %d)", len(items), sim.MaxRegions)
		return
	}
	for i, item := range items {
		path := index("topology.regions", i)
		rf := d.record(item, path, &regionObject, "a mapping {name: eu, servers: 2}")
		if d.failed() {
			return
		}
		for _, name := range []string{"name", "servers"} {
			if _, ok := rf.values[name]; !ok {
				d.failf(rf.node, path+"."+name, "missing (want e.g. {name: eu, servers: 2})")
				return
			}
		}
		r := sim.Region{Name: d.text(rf.values["name"], path+".name", "eu")}
		if !d.failed() {
			r.Servers = int(d.integer(rf.values["servers"], path+".servers", 1, MaxServers, "2"))
		}
		if d.failed() {
			return
		}
		if slices.ContainsFunc(t.Regions, func(o sim.Region) bool { return o.Name == r.Name }) {
			d.failf(rf.values["name"], path+".name", "%q names an earlier region too (want each region named once)", r.Name)
			return
		}
		t.Regions = append(t.Regions, r)
	}
}

// ownerFields reads an owner topology's sync_wait and batch_limit,
// refused on another kind.
func (d *decoder) ownerFields(f *fields, t *sim.Topology) {
	for _, name := range []string{"sync_wait", "batch_limit"} {
		v, ok := f.values[name]
		switch {
		case d.failed() || !ok:
			continue
		case t.Kind != sim.Owner:
			d.onlyOn(v, f.field(name), sim.Owner, t.Kind, "it")
			return
		case name == "sync_wait":
			t.SyncWait = d.positive(v, "topology.sync_wait", "100ms")
			if !d.failed() && t.SyncWait > sim.MaxSyncInterval {
				d.failf(v, "topology.sync_wait", "%s is longer than the simulator models (want at most %s, e.g. 100ms)", short(v.Value), sim.MaxSyncInterval)
			}
		default:
			t.BatchLimit = int(d.integer(v, "topology.batch_limit", 1, sim.MaxBatchLimit, "1000"))
		}
	}
}

// localTier reads a two-tier topology's local tier, required there and
// refused on another kind.
func (d *decoder) localTier(f *fields, t *sim.Topology) {
	if d.failed() {
		return
	}
	v, ok := f.values["local"]
	switch {
	case !ok && t.Kind == sim.TwoTier:
		d.failf(f.node, f.field("local"), "missing: a two-tier topology's local tier (want e.g. local: {rate: 25/s, burst: 10})")
		return
	case !ok:
		return
	case t.Kind != sim.TwoTier:
		d.onlyOn(v, f.field("local"), sim.TwoTier, t.Kind, "it")
		return
	}
	lf := d.record(v, "topology.local", &localTierObject, "a mapping {rate: 25/s, burst: 10}")
	if d.failed() {
		return
	}
	for _, name := range []string{"rate", "burst"} {
		if _, ok := lf.values[name]; !ok {
			d.failf(lf.node, "topology.local."+name, "missing (want e.g. local: {rate: 25/s, burst: 10})")
			return
		}
	}
	tier := &sim.LocalTier{Rate: d.rate(lf.values["rate"], "topology.local.rate", false)}
	if !d.failed() {
		tier.Burst = d.integer(lf.values["burst"], "topology.local.burst", 1, 1<<50, "10")
	}
	if !d.failed() {
		if _, err := algorithms.NewTokenBucket(tier.Rate, tier.Burst); err != nil {
			d.failf(v, "topology.local", "%s", err)
			return
		}
		t.Local = tier
	}
}

// synced reads a synced topology's sync_interval (DefaultSyncInterval
// when it has none), refused on another kind.
func (d *decoder) synced(f *fields, t *sim.Topology) {
	if d.failed() {
		return
	}
	v, ok := f.values["sync_interval"]
	switch {
	case !ok:
		if t.Kind == sim.Synced {
			t.SyncInterval = sim.DefaultSyncInterval
		}
		return
	case t.Kind != sim.Synced:
		d.onlyOn(v, f.field("sync_interval"), sim.Synced, t.Kind, "it")
		return
	}
	t.SyncInterval = d.syncInterval(v, "topology.sync_interval")
}

// syncInterval reads a sync interval: a duration up to MaxSyncInterval,
// 0 (every request), or never (also -1, as Kong Rate Limiting
// Advanced spells it; Kong OSS spells every request -1, which is 0 here).
func (d *decoder) syncInterval(v *yaml.Node, field string) time.Duration {
	if v.Kind == yaml.ScalarNode && (v.Value == "never" || v.Value == "-1") {
		return sim.SyncNever
	}
	iv := d.nonNegative(v, field, "100ms, 0 (every request) or never")
	switch {
	case d.failed():
	case iv > sim.MaxSyncInterval:
		d.failf(v, field, "%s is longer than the simulator models (want at most %s, e.g. 100ms)", short(v.Value), sim.MaxSyncInterval)
	case iv > 0 && iv < time.Microsecond:
		d.failf(v, field, "%s is under the simulator's microsecond (want at least 1us, or 0 for every request)", short(v.Value))
	}
	return iv
}

// storeName reads memory, miniredis or a Redis URL: redis://host:port[/db]
// (rediss:// for TLS) for one server, redis+cluster://host:port[,host:port]
// for a cluster, as package store opens them.
func (d *decoder) storeName(n *yaml.Node, field string) string {
	s := d.text(n, field, "memory")
	if d.failed() {
		return ""
	}
	switch {
	case slices.Contains(storeNames, s):
		return s
	case strings.Contains(s, "://"):
		scheme, _, _ := strings.Cut(s, "://")
		if !slices.Contains(storeSchemes, scheme) {
			d.failf(n, field, "unknown store URL scheme %q (want redis://host:port or redis+cluster://host:port,host:port)", scheme)
			return ""
		}
		u, err := url.Parse(s)
		if err != nil || u.Host == "" {
			// The URL may hold a password: it is not repeated.
			d.failf(n, field, "the %s URL names no host:port (want e.g. %s://localhost:6379)", scheme, scheme)
			return ""
		}
		return s
	}
	d.failf(n, field, "%s", unknown("store", s, []string{"memory", "miniredis", "redis://host:port", "redis+cluster://host:port,host:port"}))
	return ""
}

// onlyOn refuses a field that only a topology of kind has, on one of
// another: "only a synced topology has it, and this one is shared (want
// it removed, or kind: synced)". what is "it", or "them" for a list.
func (d *decoder) onlyOn(n *yaml.Node, field string, kind, got sim.TopologyKind, what string) {
	article := "a"
	if strings.ContainsRune("aeiou", rune(kind[0])) {
		article = "an"
	}
	d.failf(n, field, "only %s %s topology has %s, and this one is %s (want %s removed, or kind: %s)", article, kind, what, got, what, kind)
}
