package scenarios

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/store"
	"github.com/ratelim/ratelim/topology"
)

// OverrideNames are the fields a command line (--duration 10s) or an
// expectation's with: ({duration: 10s}) may set over a scenario's own, in
// the order they are applied. A with: spells on-error as on_error.
func OverrideNames() []string { return slices.Clone(overrideNames) }

var overrideNames = []string{"algorithm", "topology", "store", "servers", "balancer", "key", "seed", "duration", "step", "on-error", "rtt", "sync-interval", "replication-lag", "wall-clock", "shadow"}

// Override returns sc with values (override name → the text as typed) in
// place of its own. Each value is read by the code that reads the file's
// field, so it is refused with the file's message and bounds (a duration
// in whole microseconds and at most MaxDuration, at most MaxServers
// servers, a store URL with a host); the error is an *Error whose Field is
// field(name), e.g. "--duration", and no line. The scenario is then checked
// as a whole, as a file's is: a partition's groups must still name every
// server, a clock skew's servers must exist, every client must have the
// identity the limit keys by, and the algorithm must suit the limit (the
// parameters it lacks are filled by sim.WithAlgorithm's rule). A shorter
// duration cuts the faults to it; one that starts after it is dropped.
func Override(sc sim.Scenario, values map[string]string, field func(name string) string) (sim.Scenario, error) {
	given, err := canonicalOverrides(values, field)
	if err != nil {
		return sc, err
	}
	nodes := map[string]*yaml.Node{}
	for name, value := range given {
		// A value as a YAML scalar of its own, so the file's readers see
		// exactly what they would have in the file (a plain, untagged
		// scalar: "8" is an int, "8s" a string).
		nodes[name] = &yaml.Node{Kind: yaml.ScalarNode, Value: value}
	}
	return overrideNodes(sc, nodes, field)
}

// overrideNodes is Override of values already read as YAML, keyed by
// their names as overrideNames spells them: Apply's, read as a path's
// value is (" 2" is 2, as servers:  2 is in the file).
func overrideNodes(sc sim.Scenario, given map[string]*yaml.Node, field func(name string) string) (sim.Scenario, error) {
	d := &decoder{}
	for _, name := range overrideNames {
		n, ok := given[name]
		if !ok {
			continue
		}
		sc = d.override(sc, name, n, field(name))
		if d.failed() {
			return sc, d.err
		}
	}
	if err := sim.Placement(&sc); err != nil {
		name := "algorithm"
		if _, ok := given["store"]; ok {
			name = "store"
		} else if _, ok := given["topology"]; ok {
			name = "topology"
		}
		return sc, &Error{Field: field(name), Msg: err.Error()}
	}
	return sc, nil
}

// canonicalOverrides returns values keyed by their names as overrideNames
// spells them (on_error is on-error), or an *Error for a name that is not
// one.
func canonicalOverrides(values map[string]string, field func(name string) string) (map[string]string, error) {
	known := map[string]bool{}
	for _, name := range overrideNames {
		known[name] = true
	}
	given := map[string]string{}
	for name, v := range values {
		canon := strings.ReplaceAll(name, "_", "-")
		if !known[canon] {
			return nil, &Error{Field: field(name), Msg: unknown("setting", name, overrideNames)}
		}
		given[canon] = v
	}
	return given, nil
}

// override returns sc with the override name set to n, read as the file's
// field is; f is what an error calls the field. After an error, sc is
// returned as far as it was set.
func (d *decoder) override(sc sim.Scenario, name string, n *yaml.Node, f string) sim.Scenario {
	switch name {
	case "algorithm":
		alg := d.choice(n, f, "algorithm", algorithms.Names())
		if d.failed() {
			break
		}
		next, err := sim.WithAlgorithm(sc, alg)
		if err != nil {
			d.failf(n, f, "%s cannot use the scenario's limit: %s", alg, wanting(err, "a limit it accepts"))
			break
		}
		sc = next
	case "topology":
		sc = sim.WithTopology(sc, sim.TopologyKind(d.choice(n, f, "topology", topologyKinds)))
	case "store":
		sc.Topology.Store = d.storeName(n, f)
	case "servers":
		servers := int(d.integer(n, f, 1, MaxServers, "4"))
		if !d.failed() {
			d.serversFit(n, f, servers, &sc)
		}
		sc.Servers = servers
	case "balancer":
		sc.Balancer = sim.Balancer(d.choice(n, f, "balancer", balancers))
	case "key":
		sc.Limit.Key = sim.KeyBy(d.choice(n, f, "key", keyKinds))
		if !d.failed() {
			d.everyClientKeyed(n, f, sc)
		}
	case "seed":
		sc.Seed = d.seed(n, f, "1") // the file's example: the same message as seed: x
	case "duration":
		dur := d.runDuration(n, f)
		if !d.failed() {
			sc = withDuration(sc, dur)
		}
	case "step":
		// The timeline's resolution: a longer step keeps a long run's
		// timeline (steps × clients rows) small; every total is the same.
		st := d.positive(n, f, "1s")
		if !d.failed() && st > sc.Duration {
			d.failf(n, f, "%s is longer than the duration %s (want at most the duration, e.g. 1s)", st, sc.Duration)
		}
		if !d.failed() {
			sc.Step = st
		}
	case "on-error":
		sc.Topology.OnError = store.Policy(d.choice(n, f, "policy", onErrorPolicies))
	case "rtt":
		sc.Topology.RTT = d.roundTrip(n, f, "500us")
	case "replication-lag":
		switch k := sc.Topology.Kind; {
		case k == sim.Regions && n.Value == "never":
			sc.Topology.ReplicationLag = sim.ReplicationNone
		case k == sim.Regions || k == sim.SplitBrain || k == sim.Cluster:
			sc.Topology.ReplicationLag = d.nonNegative(n, f, "200ms")
			if !d.failed() && sc.Topology.ReplicationLag > sim.MaxSyncInterval {
				d.failf(n, f, "%s is longer than the simulator models (want at most %s)", n.Value, sim.MaxSyncInterval)
			}
		default:
			d.failf(n, f, "only a split-brain, cluster or regions topology replicates, and this one is %s (want --topology regions, split-brain or cluster with it)", k)
		}
	case "sync-interval":
		if sc.Topology.Kind != sim.Synced {
			d.failf(n, f, "only a synced topology has it, and this one is %s (want --topology synced with it)", sc.Topology.Kind)
			break
		}
		sc.Topology.SyncInterval = d.syncInterval(n, f)
	case "wall-clock":
		sc.WallClock = d.wallClock(n, f)
	case "shadow":
		on, until := d.shadowAll(n, f)
		if !d.failed() {
			sc = shadowEveryLimit(sc, on, until)
		}
	}
	return sc
}

// everyClientKeyed checks that every client of sc has the identity its
// limit is keyed by: one without would share the key "(none)" with every
// other such client.
func (d *decoder) everyClientKeyed(n *yaml.Node, f string, sc sim.Scenario) {
	for _, c := range sc.Clients {
		if sim.KeyOf(c, sc.Limit.Key) == "(none)" {
			d.failf(n, f, "client %s has no %s to be keyed by, so every such client would share one key (want a key every client has)", quote(c.Name), sc.Limit.Key)
			return
		}
	}
}

// withDuration returns sc run for dur, its step at most dur and its faults
// cut to it: a fault that starts at or after dur is dropped.
func withDuration(sc sim.Scenario, dur time.Duration) sim.Scenario {
	sc.Duration = dur
	sc.Step = min(sc.Step, dur)
	var kept []sim.Fault
	for _, ft := range sc.Faults {
		if ft.Start < dur {
			ft.End = min(ft.End, dur)
			kept = append(kept, ft)
		}
	}
	sc.Faults = kept
	return sc
}

// shadowEveryLimit returns sc with every limit's shadow mode replaced, the
// global switch of a dark launch. The caller's scenario keeps its own
// limits: sc.Also is copied before it is changed.
func shadowEveryLimit(sc sim.Scenario, on bool, until time.Duration) sim.Scenario {
	sc.Limit.Shadow, sc.Limit.ShadowUntil = on, until
	sc.Also = slices.Clone(sc.Also)
	for i := range sc.Also {
		sc.Also[i].Shadow, sc.Also[i].ShadowUntil = on, until
	}
	return sc
}

// FlagField names an override given as a command-line flag: --on-error.
func FlagField(name string) string { return "--" + strings.ReplaceAll(name, "_", "-") }

// The choices of the fields that an override shares with the file.
var (
	topologyKinds = kindNames(topology.Kinds())
	balancers     = []string{string(sim.RoundRobin), string(sim.Random), string(sim.KeyHash)}
	keyKinds      = []string{string(sim.KeyAuto), string(sim.KeyAPIKey), string(sim.KeyUser), string(sim.KeyIP)}
)

// kindNames are the topology kinds as a field's choices.
func kindNames(kinds []topology.Kind) []string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = string(k)
	}
	return names
}

// Seed reads a seed typed on a command line (text) as a file's seed: is
// read, with the file's message naming field (e.g. "--seed"). A command
// that takes a seed outside a scenario (replay's --spread) reads it here,
// so that it is bounded and worded as everywhere else.
func Seed(text, field string) (uint64, error) {
	d := &decoder{}
	seed := d.seed(&yaml.Node{Kind: yaml.ScalarNode, Value: text}, field, "1")
	if d.failed() {
		return 0, d.err
	}
	return seed, nil
}

// seed reads a whole number from 0 to 2^64-1.
func (d *decoder) seed(n *yaml.Node, field, example string) uint64 {
	var seed uint64
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || n.Decode(&seed) != nil {
		d.notA(n, field, "a whole number from 0 to 2^64-1", example)
	}
	return seed
}

// runDuration reads a run's duration: positive, in whole microseconds, and
// at most MaxDuration.
func (d *decoder) runDuration(n *yaml.Node, field string) time.Duration {
	v := d.positive(n, field, "30s")
	if !d.failed() && v > MaxDuration {
		d.failf(n, field, "%s is longer than the simulator runs (want at most %s, a year)", short(n.Value), hours(MaxDuration))
	}
	return v
}

// hours writes a long duration as Go would read it, in hours.
func hours(d time.Duration) string { return fmt.Sprintf("%dh", int64(d.Hours())) }

// wanting is err's text, with what to write instead if it does not say.
func wanting(err error, want string) string {
	msg := err.Error()
	if !strings.Contains(msg, "(want ") {
		msg += " (want " + want + ")"
	}
	return msg
}

// shadowAll reads the shadow override: true or false for the whole run,
// or the instant every limit enforces from (15s), shadow until then.
func (d *decoder) shadowAll(n *yaml.Node, field string) (bool, time.Duration) {
	if n.ShortTag() == "!!bool" {
		return d.boolean(n, field), 0
	}
	if _, err := time.ParseDuration(n.Value); err != nil {
		d.failf(n, field, "%q is not true, false or a duration (want true for the whole run, or the instant the limits enforce from, e.g. 15s)", n.Value)
		return false, 0
	}
	return true, d.positive(n, field, "15s")
}
