package web

// The page's controls, built from the file actually loaded: its limit or
// limits (each parameter its algorithm reads), its topology (and what
// that kind reads), servers and balancer, each fault's start and end, and
// each client group's rate. Each control's name is a setting's name, as
// `ratelim sim` takes it: an override name where a flag sets the field
// (algorithm, topology, on-error), a field's path otherwise (limit.burst,
// faults[0].start, clients[web].traffic.rate).

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/simrun"
)

// Control is one input of the page. Value is what the run used and
// FileValue what the file says (set to it, the run is the file's); both
// are text a setting takes. For kind "duration" they are a number and
// Unit ("12s", "0.5ms") or "never", so that parseFloat reads the number,
// and the page writes a slider's number back followed by Unit. Min, Max
// and Step bound a slider in Unit (for "rate", per second, a hint);
// Choices list a "choice"'s values: every value its field takes, those
// the run would refuse with it included (Playground.Choices filters them);
// a duration's words ("never"), only those that run.
type Control struct {
	Name      string   `json:"name"`
	Label     string   `json:"label"`
	Group     string   `json:"group"`
	Kind      string   `json:"kind"`
	Value     string   `json:"value"`
	FileValue string   `json:"fileValue"`
	Choices   []string `json:"choices,omitempty"`
	Min       float64  `json:"min"`
	Max       float64  `json:"max"`
	Step      float64  `json:"step"`
	Unit      string   `json:"unit,omitempty"`
	Help      string   `json:"help,omitempty"`
}

// The groups and kinds of controls.
const (
	groupLimit    = "limit"
	groupTopology = "topology"
	groupFaults   = "faults"
	groupTraffic  = "traffic"

	kindChoice   = "choice"
	kindInt      = "int"
	kindDuration = "duration"
	kindRate     = "rate"
)

// Bounds on how many controls a file gets of each repeated kind: a file
// of a thousand faults gets sliders for the first few, the rest set with
// the YAML.
const (
	maxFaultControls  = 16
	maxClientControls = 32
	maxPatterns       = 8
	maxServers        = 64
)

// controls are file0's controls, valued as fileA (file0 with run A's
// settings, sets) ran. A slider's end the run would refuse is not
// offered: a rate's range is in its own unit and a window's starts where
// rate × window reaches 1; nor a duration's word ("never") the run would
// refuse (runnable). A choice control lists every value its field takes:
// which of them run with sets is Playground.Choices' to find, when the
// page's list opens.
func controls(file0, fileA *scenarios.File, sets []scenarios.Setting) []Control {
	out := unfilteredControls(file0, fileA)
	for i := range out {
		if c := &out[i]; c.Kind != kindChoice && len(c.Choices) > 0 {
			c.Choices = slices.DeleteFunc(c.Choices, func(v string) bool { return v != c.Value && !runnable(file0, sets, c.Name, v) })
		}
	}
	return out
}

// unfilteredControls are controls' controls with every choice listed.
func unfilteredControls(file0, fileA *scenarios.File) []Control {
	b := &controlBuilder{file0: file0, fileA: fileA}
	b.limit()
	b.topology()
	b.faults()
	b.traffic()
	return b.out
}

// runnable reports whether the run of file with sets and name set to
// value would start: scenarios.Apply takes it and the simulator's checks
// pass (starts). What it costs was measured natively over every built-in's
// choices: 1.2–2.7 ms a Run, 18 ms for api-quotas (48 choices, two
// limits' algorithms).
func runnable(file *scenarios.File, sets []scenarios.Setting, name, value string) bool {
	trial := slices.DeleteFunc(slices.Clone(sets), func(s scenarios.Setting) bool { return s.Name == name })
	trial = append(trial, scenarios.Setting{Name: name, Value: value, Flag: flagOf(name)})
	simrun.CLIOrder(trial)
	f, err := scenarios.Apply(file, trial)
	return err == nil && starts(f.Scenario)
}

// starts reports whether the simulator's checks pass sc: a run bounded
// at one request stops at its estimate, after them, and runs nothing.
func starts(sc sim.Scenario) bool {
	_, err := sim.Run(context.Background(), sc, sim.Options{MaxRequests: 1, MaxMemory: MaxMemory})
	return err == nil || errors.As(err, new(*sim.TooBigError))
}

// runnableB reports whether run B, run A's file fileA with name set to
// value after A's settings, would start: as versus applies and checks it.
func runnableB(fileA *scenarios.File, name, value string) bool {
	fileB, err := simrun.Versus{Settings: []scenarios.Setting{{Name: name, Value: value, Flag: "--vs " + name}}}.Apply(fileA)
	return err == nil && checkWork(fileB) == nil && checkSteps(fileB) == nil && starts(fileB.Scenario)
}

// controlBuilder collects one file's controls.
type controlBuilder struct {
	file0, fileA *scenarios.File
	out          []Control
	lists        map[listKey][]*yaml.Node // entries' memo
}

// add appends c valued by get on each file: Value run A's, FileValue the
// file's ("" where the file does not read it). A control run A does not
// read is left out.
func (b *controlBuilder) add(c Control, get func(f *scenarios.File) (string, bool)) {
	v, ok := get(b.fileA)
	if !ok {
		return
	}
	c.Value = v
	c.FileValue, _ = get(b.file0)
	b.out = append(b.out, c)
}

// limit adds the algorithm and what it reads, for the limit or each of
// the limits.
func (b *controlBuilder) limit() {
	if _, many := scenarios.Value(b.file0, "limits"); !many {
		b.add(Control{Name: "algorithm", Label: "algorithm", Group: groupLimit, Kind: kindChoice, Choices: algorithms.Names(),
			Help: "the limiter (a missing window is 1s, a missing burst one second of the rate)"},
			func(f *scenarios.File) (string, bool) { return f.Scenario.Limit.Algorithm, true })
		b.params("limit", "", func(sc sim.Scenario) (sim.Limit, bool) { return sc.Limit, true })
		return
	}
	limits := b.file0.Scenario.Limits()
	for i, l := range limits {
		sel := selector(l.Name, i, func(name string) bool { return true })
		prefix := "limits[" + sel + "]"
		at := func(sc sim.Scenario) (sim.Limit, bool) {
			all := sc.Limits()
			if i >= len(all) {
				return sim.Limit{}, false
			}
			return all[i], true
		}
		name := or(l.Name, strconv.Itoa(i))
		b.add(Control{Name: prefix + ".algorithm", Label: name + " algorithm", Group: groupLimit, Kind: kindChoice, Choices: algorithms.Names(),
			Help: "the limiter of limit " + name},
			func(f *scenarios.File) (string, bool) {
				l, ok := at(f.Scenario)
				return l.Algorithm, ok
			})
		b.params(prefix, name+" ", at)
	}
}

// params adds each parameter of the limit at prefix that its algorithm
// reads, as run A has it.
func (b *controlBuilder) params(prefix, label string, at func(sim.Scenario) (sim.Limit, bool)) {
	reads := func(f *scenarios.File, param string) (sim.Limit, bool) {
		l, ok := at(f.Scenario)
		if !ok {
			return l, false
		}
		info, ok := algorithms.Lookup(l.Algorithm)
		return l, ok && slices.Contains(info.Params, param)
	}
	lA, ok := at(b.fileA.Scenario)
	if !ok {
		return
	}
	// A slider's range is the file's and the run's together: it does
	// not move under the hand that drags it.
	p := lA.Params
	if l0, ok := at(b.file0.Scenario); ok {
		p.Burst, p.Window = max(p.Burst, l0.Params.Burst), max(p.Window, l0.Params.Window)
		if l0.Params.Rate.PerSecond() > p.Rate.PerSecond() {
			p.Rate = l0.Params.Rate
		}
	}
	windowed := func(l sim.Limit) time.Duration {
		if info, ok := algorithms.Lookup(l.Algorithm); ok && slices.Contains(info.Params, "window") {
			return l.Params.Window
		}
		return 0
	}
	b.add(rateControl(Control{Name: prefix + ".rate", Label: label + "rate", Group: groupLimit,
		Help: "the sustained rate, e.g. 10/s, 600/m, 5000/h"}, p.Rate, windowed(lA)),
		func(f *scenarios.File) (string, bool) {
			l, ok := reads(f, "rate")
			return l.Params.Rate.String(), ok
		})
	minBurst := 1.0
	if lA.Algorithm == "nginx-limit-req" {
		minBurst = 0
	}
	b.add(Control{Name: prefix + ".burst", Label: label + "burst", Group: groupLimit, Kind: kindInt,
		Min: minBurst, Max: float64(max(4*p.Burst, 100)), Step: 1,
		Help: "the bucket's size: what a quiet key may send at once"},
		func(f *scenarios.File) (string, bool) {
			l, ok := reads(f, "burst")
			return strconv.FormatInt(l.Params.Burst, 10), ok
		})
	b.add(atLeast(positive(durationControl(Control{Name: prefix + ".window", Label: label + "window", Group: groupLimit,
		Help: "the window the rate is counted over"}, p.Window, time.Hour)), oneRequest(lA.Params.Rate)),
		func(f *scenarios.File) (string, bool) {
			l, ok := reads(f, "window")
			return durationText(l.Params.Window, "s"), ok
		})
	b.add(Control{Name: prefix + ".max_in_flight", Label: label + "max in flight", Group: groupLimit, Kind: kindInt,
		Min: 1, Max: float64(max(4*p.Burst, 100)), Step: 1,
		Help: "requests in flight at most, per key"},
		func(f *scenarios.File) (string, bool) {
			l, ok := reads(f, "max_in_flight")
			return strconv.FormatInt(l.Params.Burst, 10), ok
		})
	b.add(positive(durationControl(Control{Name: prefix + ".lease_ttl", Label: label + "lease TTL", Group: groupLimit,
		Help: "how long a request's slot is held if its server never releases it"}, p.Window, time.Hour)),
		func(f *scenarios.File) (string, bool) {
			l, ok := reads(f, "lease_ttl")
			return durationText(l.Params.Window, "s"), ok
		})
}

// topology adds the topology's kind and what that kind reads, the
// servers and the balancer.
func (b *controlBuilder) topology() {
	topo := func(f *scenarios.File) sim.Topology { return f.Scenario.Topology }
	kindIs := func(kinds ...sim.TopologyKind) func(f *scenarios.File) bool {
		return func(f *scenarios.File) bool { return slices.Contains(kinds, topo(f).Kind) }
	}
	hasStore := func(f *scenarios.File) bool { return topo(f).Kind != sim.Local }
	override := func(name string, reads func(*scenarios.File) bool) func(f *scenarios.File) (string, bool) {
		return func(f *scenarios.File) (string, bool) {
			if reads != nil && !reads(f) {
				return "", false
			}
			return simrun.ScenarioSetting(f.Scenario, name), true
		}
	}
	// Ranges of the file's and the run's values together, as params'.
	tA, t0 := topo(b.fileA), topo(b.file0)
	tA.RTT, tA.SyncInterval, tA.ReplicationLag = max(tA.RTT, t0.RTT), max(tA.SyncInterval, t0.SyncInterval), max(tA.ReplicationLag, t0.ReplicationLag)
	tA.FailoverAfter, tA.SyncWait = max(tA.FailoverAfter, t0.FailoverAfter), max(tA.SyncWait, t0.SyncWait)
	b.add(Control{Name: "topology", Label: "topology", Group: groupTopology, Kind: kindChoice, Choices: scenarios.Choices("topology.kind"),
		Help: "where the counter lives: a jar per server (local), one store (shared), or a design between"},
		override("topology", nil))
	b.add(Control{Name: "on-error", Label: "on error", Group: groupTopology, Kind: kindChoice, Choices: scenarios.Choices("topology.on_error"),
		Help: "what a server does when the store fails"},
		override("on-error", hasStore))
	duration := func(name string, unit string, of func(sim.Topology) time.Duration, reads func(*scenarios.File) bool) func(f *scenarios.File) (string, bool) {
		return func(f *scenarios.File) (string, bool) {
			if !reads(f) {
				return "", false
			}
			return durationText(of(topo(f)), unit), true
		}
	}
	b.add(durationControl(Control{Name: "rtt", Label: "round trip", Group: groupTopology, Unit: "ms",
		Help: "one store round trip"}, tA.RTT, scenarios.MaxRTT),
		duration("rtt", "ms", func(t sim.Topology) time.Duration { return t.RTT }, hasStore))
	b.add(durationControl(Control{Name: "sync-interval", Label: "sync interval", Group: groupTopology, Unit: "ms", Choices: []string{"never"},
		Help: "how often each server pushes its admissions (0: every request, never: local jars)"}, tA.SyncInterval, time.Minute),
		duration("sync-interval", "ms", func(t sim.Topology) time.Duration { return t.SyncInterval }, kindIs(sim.Synced)))
	b.add(durationControl(Control{Name: "replication-lag", Label: "replication lag", Group: groupTopology, Unit: "ms", Choices: []string{"never"},
		Help: "how long a write takes to reach the other copies"}, tA.ReplicationLag, time.Minute),
		duration("replication-lag", "ms", func(t sim.Topology) time.Duration { return t.ReplicationLag }, kindIs(sim.SplitBrain, sim.Cluster, sim.Regions)))
	b.add(durationControl(Control{Name: "topology.failover_after", Label: "failover after", Group: groupTopology, Choices: []string{"never"},
		Help: "how long cut-off servers see errors before they use the replica"}, tA.FailoverAfter, b.fileA.Scenario.Duration),
		duration("topology.failover_after", "s", func(t sim.Topology) time.Duration { return t.FailoverAfter }, kindIs(sim.SplitBrain)))
	b.add(durationControl(Control{Name: "topology.sync_wait", Label: "sync wait", Group: groupTopology, Unit: "ms",
		Help: "a node's wait before it sends queued hits or status"}, tA.SyncWait, time.Minute),
		duration("topology.sync_wait", "ms", func(t sim.Topology) time.Duration { return t.SyncWait }, kindIs(sim.Owner)))
	local := func(f *scenarios.File) (*sim.LocalTier, bool) {
		t := topo(f)
		return t.Local, t.Kind == sim.TwoTier && t.Local != nil
	}
	if l, ok := local(b.fileA); ok {
		b.add(rateControl(Control{Name: "topology.local.rate", Label: "local rate", Group: groupTopology,
			Help: "each server's local bucket refill, per key"}, l.Rate, 0),
			func(f *scenarios.File) (string, bool) {
				l, ok := local(f)
				if !ok {
					return "", false
				}
				return l.Rate.String(), true
			})
		b.add(Control{Name: "topology.local.burst", Label: "local burst", Group: groupTopology, Kind: kindInt,
			Min: 1, Max: float64(max(4*l.Burst, 100)), Step: 1,
			Help: "each server's local bucket size"},
			func(f *scenarios.File) (string, bool) {
				l, ok := local(f)
				if !ok {
					return "", false
				}
				return strconv.FormatInt(l.Burst, 10), true
			})
	}
	// A fault that names servers (a partition's groups, a crash's
	// servers, a cluster's nodes) names them by index: other counts of
	// servers break it, so the file's count is kept.
	namesServers := slices.ContainsFunc(b.entries(b.file0, "faults"), func(f *yaml.Node) bool {
		return nodeAt(f, "groups").Kind != 0 || nodeAt(f, "servers").Kind != 0 || nodeAt(f, "nodes").Kind != 0
	})
	if !namesServers {
		b.add(Control{Name: "servers", Label: "servers", Group: groupTopology, Kind: kindInt,
			Min: 1, Max: float64(max(maxServers, b.fileA.Scenario.Servers, b.file0.Scenario.Servers)), Step: 1,
			Help: "API servers the balancer spreads requests over"},
			override("servers", func(f *scenarios.File) bool { return topo(f).Kind != sim.Regions }))
	}
	b.add(Control{Name: "balancer", Label: "balancer", Group: groupTopology, Kind: kindChoice, Choices: scenarios.Choices("balancer"),
		Help: "how requests are spread over the servers"},
		override("balancer", nil))
}

// faults adds each fault's start and end, within the run.
func (b *controlBuilder) faults() {
	faults := b.entries(b.file0, "faults")
	kinds := map[string]int{}
	for _, f := range faults {
		kind, _ := scalarAt(f, "kind")
		kinds[kind]++
	}
	seen := map[string]int{}
	for i, f := range faults[:min(len(faults), maxFaultControls)] {
		kind, _ := scalarAt(f, "kind")
		seen[kind]++
		label := kind
		if kinds[kind] > 1 {
			label = fmt.Sprintf("%s %d", kind, seen[kind])
		}
		for _, end := range []string{"start", "end"} {
			b.add(durationControl(Control{Name: fmt.Sprintf("faults[%d].%s", i, end), Label: label + " " + end, Group: groupFaults,
				Help: "when the " + kind + " " + map[string]string{"start": "starts", "end": "ends"}[end]}, 0, b.fileA.Scenario.Duration),
				func(f *scenarios.File) (string, bool) {
					faults := b.entries(f, "faults")
					if i >= len(faults) {
						return "", false
					}
					text, ok := scalarAt(faults[i], end)
					if d, err := time.ParseDuration(text); ok && err == nil {
						return durationText(d, "s"), true
					}
					return text, ok
				})
		}
	}
	// A fault's instants are on the run's steps, at most its duration,
	// and its start before its end: a start slider stops a step short of
	// the run's end, an end slider a step after the run's start.
	seconds := func(name string) (float64, bool) {
		i := slices.IndexFunc(b.out, func(c Control) bool { return c.Name == name })
		if i < 0 {
			return 0, false
		}
		v, err := strconv.ParseFloat(strings.TrimSuffix(b.out[i].Value, "s"), 64)
		return v, err == nil
	}
	for i := range b.out {
		c := &b.out[i]
		if c.Group != groupFaults {
			continue
		}
		c.Min, c.Max, c.Step = 0, b.fileA.Scenario.Duration.Seconds(), b.fileA.Scenario.Step.Seconds()
		fault, end, _ := strings.Cut(c.Name, "].")
		switch end {
		case "start":
			if e, ok := seconds(fault + "].end"); ok {
				c.Max = max(min(c.Max, e-c.Step), c.Min)
			}
		case "end":
			if st, ok := seconds(fault + "].start"); ok {
				c.Min = min(st+c.Step, c.Max)
			}
		}
	}
}

// traffic adds each client group's rate, where its pattern has one (or
// each of its patterns', for a list of them).
func (b *controlBuilder) traffic() {
	clients := b.entries(b.file0, "clients")
	clients = clients[:min(len(clients), maxClientControls)]
	names := make([]string, len(clients))
	for i, c := range clients {
		names[i], _ = scalarAt(c, "name")
	}
	unique := func(name string) bool {
		n := 0
		for _, other := range names {
			if other == name {
				n++
			}
		}
		return n == 1
	}
	for i, name := range names {
		prefix := "clients[" + selector(name, i, unique) + "].traffic"
		// One pattern (traffic: {rate: ...}), or a list of them.
		patterns := []any{nil}
		if n := len(nodeAt(clients[i], "traffic").Content); nodeAt(clients[i], "traffic").Kind == yaml.SequenceNode {
			patterns = nil
			for j := range min(n, maxPatterns) {
				patterns = append(patterns, j)
			}
		}
		for j, pattern := range patterns {
			keys := []any{"traffic", "rate"}
			path := prefix + ".rate"
			label := name + " rate"
			if pattern != nil {
				keys = []any{"traffic", j, "rate"}
				path = fmt.Sprintf("%s[%d].rate", prefix, j)
				label = fmt.Sprintf("%s rate (pattern %d)", name, j+1)
			}
			text, ok := scalarAt(clients[i], keys...)
			if !ok {
				continue
			}
			rate, _ := algorithms.ParseRate(text)
			b.add(rateControl(Control{Name: path, Label: label, Group: groupTraffic,
				Help: "what " + name + " sends, e.g. 5/s"}, rate, 0),
				func(f *scenarios.File) (string, bool) {
					clients := b.entries(f, "clients")
					if i >= len(clients) {
						return "", false
					}
					return scalarAt(clients[i], keys...)
				})
		}
	}
}

// entries are the entries of f's list at name (clients, faults) as the
// run reads them, every setting f was made with in place
// (scenarios.Value), each read once per file: a file's text is parsed
// once for all its controls, not once for each.
func (b *controlBuilder) entries(f *scenarios.File, name string) []*yaml.Node {
	key := listKey{f, name}
	if got, ok := b.lists[key]; ok {
		return got
	}
	var out []*yaml.Node
	if text, ok := scenarios.Value(f, name); ok {
		var doc yaml.Node
		if yaml.Unmarshal([]byte(text), &doc) == nil && len(doc.Content) == 1 && doc.Content[0].Kind == yaml.SequenceNode {
			out = doc.Content[0].Content
		}
	}
	if b.lists == nil {
		b.lists = map[listKey][]*yaml.Node{}
	}
	b.lists[key] = out
	return out
}

// listKey names a list of one file.
type listKey struct {
	f    *scenarios.File
	name string
}

// nodeAt is the node at keys (a mapping's key, a sequence's index) under
// n, or an empty node when there is none.
func nodeAt(n *yaml.Node, keys ...any) *yaml.Node {
	for _, k := range keys {
		var next *yaml.Node
		switch k := k.(type) {
		case string:
			for i := 0; n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == k {
					next = n.Content[i+1]
				}
			}
		case int:
			if n.Kind == yaml.SequenceNode && k < len(n.Content) {
				next = n.Content[k]
			}
		}
		if next == nil {
			return &yaml.Node{}
		}
		n = next
	}
	return n
}

// scalarAt is the text of the scalar at keys under n.
func scalarAt(n *yaml.Node, keys ...any) (string, bool) {
	at := nodeAt(n, keys...)
	return at.Value, at.Kind == yaml.ScalarNode
}

// plainName is a name a setting's path may select an entry by as it is.
var plainName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// selector is how a path names entry i of a list: by its name when that
// is plain and names it alone, else by its index.
func selector(name string, i int, unique func(string) bool) string {
	if plainName.MatchString(name) && unique(name) {
		if _, err := strconv.Atoi(name); err != nil {
			return name
		}
	}
	return strconv.Itoa(i)
}

// durationControl is c as a duration slider in its Unit (s when none)
// from 0 (or a step) to at least four times value, at most limit.
func durationControl(c Control, value, limit time.Duration) Control {
	c.Kind = kindDuration
	if c.Unit == "" {
		c.Unit = "s"
	}
	scale := map[string]time.Duration{"s": time.Second, "ms": time.Millisecond}[c.Unit]
	top := max(4*value, 10*scale)
	if limit > 0 {
		top = min(top, limit)
	}
	c.Max = float64(top) / float64(scale)
	c.Step = 1
	if c.Max <= 20 {
		c.Step = 0.1
	}
	return c
}

// rateControl is c as a rate, typed as text ("10/s", "600/m"): its
// Min, Max and Step are a hint in the rate's own unit (Unit "/h" for
// 1000/h: a rate is a whole number per its period), from 1 to four
// times it or 100; over a window (> 0), from where rate × window
// reaches one request.
func rateControl(c Control, r algorithms.Rate, window time.Duration) Control {
	per := r.Per
	if per <= 0 {
		per = time.Second
	}
	c.Kind, c.Unit, c.Step = kindRate, "/"+strings.TrimPrefix(algorithms.Rate{N: 1, Per: per}.String(), "1/"), 1
	c.Min, c.Max = 1, float64(max(4*r.N, 100))
	if window > 0 {
		c.Min = max(c.Min, math.Ceil(float64(per)/float64(window)))
	}
	return c
}

// oneRequest is the shortest window over which r admits one request
// (rate × window ≥ 1), 0 for no rate.
func oneRequest(r algorithms.Rate) time.Duration {
	if r.N <= 0 || r.Per <= 0 {
		return 0
	}
	return time.Duration(math.Ceil(float64(r.Per) / float64(r.N)))
}

// atLeast is the duration slider c from least up, rounded up to its
// step.
func atLeast(c Control, least time.Duration) Control {
	scale := map[string]time.Duration{"s": time.Second, "ms": time.Millisecond}[c.Unit]
	if m := float64(least) / float64(scale); m > c.Min {
		c.Min = math.Ceil(m/c.Step) * c.Step
		c.Max = max(c.Max, c.Min)
	}
	return c
}

// positive is c from its first step up: a duration that must be more
// than 0.
func positive(c Control) Control {
	c.Min = c.Step
	return c
}

// durationText is d as a duration control's value: its number in unit,
// as few digits as say it ("12s", "0.5ms"), or never when negative.
func durationText(d time.Duration, unit string) string {
	if d < 0 {
		return "never"
	}
	scale := map[string]time.Duration{"s": time.Second, "ms": time.Millisecond}[unit]
	return strconv.FormatFloat(float64(d)/float64(scale), 'f', -1, 64) + unit
}

// or is s, or otherwise when s is empty.
func or(s, otherwise string) string {
	if s == "" {
		return otherwise
	}
	return s
}
