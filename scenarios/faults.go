package scenarios

import (
	"errors"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ratelim/ratelim/internal/words"
	"github.com/ratelim/ratelim/sim"
)

// faultKinds are the fault kinds, as sim registers them.
var faultKinds = sim.FaultKinds()

const faultWant = "a mapping such as {kind: outage, start: 10s, end: 20s}"

// faults reads the faults: list: each within the run, and no two of one
// kind at once.
func (d *decoder) faults(n *yaml.Node, sc *sim.Scenario) []sim.Fault {
	items := d.list(n, "faults", "a list of faults, each "+faultWant)
	if len(items) > MaxFaults {
		d.failf(n, "faults", "%d faults is too many (want at most %d)", len(items), MaxFaults)
		return nil
	}
	var out []sim.Fault
	var nodes []*fields
	for i, item := range items {
		f := d.record(item, index("faults", i), &faultObject, faultWant)
		if d.failed() {
			return nil
		}
		out = append(out, d.fault(f, sc))
		nodes = append(nodes, f)
		if d.failed() {
			return nil
		}
	}
	// Overlaps: sort each kind's windows by start; a window that starts
	// before the previous one ends overlaps it. The later of the two in
	// the file is blamed.
	order := make([]int, len(out))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		fa, fb := out[order[a]], out[order[b]]
		if fa.Kind != fb.Kind {
			return fa.Kind < fb.Kind
		}
		return fa.Start < fb.Start
	})
	for k := 1; k < len(order); k++ {
		i, j := order[k-1], order[k]
		a, b := out[i], out[j]
		if a.Kind != b.Kind || b.Start >= a.End {
			continue
		}
		first, later := i, j
		if first > later {
			first, later = later, first
		}
		o := out[first]
		d.failf(nodes[later].node, index("faults", later), "overlaps faults[%d], %s from %s to %s (want faults of one kind one after the other)", first, o.Kind, o.Start, o.End)
		return nil
	}
	// On a cluster, a partition waits for the one before to settle.
	if i, err := sim.ClusterPartitionsSettle(*sc, out); err != nil {
		d.failf(nodes[i].node, index("faults", i), "%v", err)
		return nil
	}
	return out
}

// fault reads one fault: its kind and span (faultSpan), then the fields
// its kind reads, each by its reader (faultFieldReaders), then has sim
// check it (Fault.Check), placing an error on the line of the field it
// names.
func (d *decoder) fault(f *fields, sc *sim.Scenario) sim.Fault {
	ft := d.faultSpan(f, sc)
	if d.failed() {
		return ft
	}
	kind, _ := sim.FaultTypeOf(ft.Kind)
	for _, field := range kind.Fields {
		if field.Required && !f.has(field.Name) {
			d.failf(f.node, f.field(field.Name), "missing: %s (want e.g. %s)", field.Missing, field.Example)
			return ft
		}
	}
	if len(kind.AnyOf) > 0 && !slices.ContainsFunc(kind.AnyOf, f.has) {
		d.failf(f.node, f.path, "%s", kind.AnyOfWant)
		return ft
	}
	for _, field := range kind.Fields {
		v, ok := f.values[field.Name]
		if !ok {
			continue
		}
		if empty := faultFieldReaders[field.Name](d, v, f.field(field.Name), &ft); d.failed() {
			return ft
		} else if empty && field.Empty != "" {
			d.failf(v, f.field(field.Name), "%s", field.Empty)
			return ft
		}
	}
	if v, ok := f.values["region"]; ok && sc.Topology.Kind != sim.Regions {
		d.failf(v, f.field("region"), "only a regions topology has regions, and this one is %s (want region removed, or kind: regions)", sc.Topology.Kind)
		return ft
	}
	if v, ok := f.values["nodes"]; ok && sc.Topology.Kind == sim.Owner {
		d.failf(v, f.field("nodes"), "an owner topology's nodes are its servers' and go where they go (want nodes removed: groups place them)")
		return ft
	}
	if v, ok := f.values["nodes"]; ok && sc.Topology.Kind == sim.Local {
		d.failf(v, f.field("nodes"), "a local topology keeps each key's state in its server's memory: there is no store node to place (want nodes removed, or another kind)")
		return ft
	}
	if err := ft.Check(f.path, sc.Servers, sim.NodeNames(*sc)); err != nil {
		var fe *sim.FaultError
		if errors.As(err, &fe) {
			d.failf(f.nodeAt(fe.Field), fe.Path(), "%s", fe.Msg)
		} else {
			d.failf(f.node, f.path, "%v", err)
		}
	}
	return ft
}

// faultFieldReaders read each field a fault kind may read into the
// fault, by its name: the value as written, which Fault.Check then
// judges. Each says whether it read an empty list.
var faultFieldReaders = map[string]func(d *decoder, n *yaml.Node, path string, ft *sim.Fault) (empty bool){
	"groups": func(d *decoder, n *yaml.Node, path string, ft *sim.Fault) bool {
		items := d.list(n, path, "a list of groups of servers, e.g. [[0, 1], [2, 3]]")
		for i, item := range items {
			g := d.serverNumbers(item, index(path, i))
			if d.failed() {
				return false
			}
			ft.Groups = append(ft.Groups, g)
		}
		return len(items) == 0
	},
	"nodes": func(d *decoder, n *yaml.Node, path string, ft *sim.Fault) bool {
		items := d.list(n, path, "a list of store nodes per group, e.g. [[s0-master], [s1-master, s2-master]]")
		for i, item := range items {
			var side []string
			for j, name := range d.list(item, index(path, i), "a list of store nodes, e.g. [s0-master]") {
				side = append(side, d.text(name, index(index(path, i), j), "s0-master"))
			}
			if d.failed() {
				return false
			}
			if side == nil {
				side = []string{}
			}
			ft.Nodes = append(ft.Nodes, side)
		}
		return len(items) == 0
	},
	"rtt": func(d *decoder, n *yaml.Node, path string, ft *sim.Fault) bool {
		ft.RTT = d.roundTrip(n, path, "50ms")
		return false
	},
	"servers": func(d *decoder, n *yaml.Node, path string, ft *sim.Fault) bool {
		ft.Servers = d.serverNumbers(n, path)
		return !d.failed() && len(ft.Servers) == 0
	},
	"offset": func(d *decoder, n *yaml.Node, path string, ft *sim.Fault) bool {
		ft.Offset = d.duration(n, path, "2s")
		return false
	},
	"region": func(d *decoder, n *yaml.Node, path string, ft *sim.Fault) bool {
		ft.Region = d.text(n, path, "eu")
		return false
	},
	"drift": func(d *decoder, n *yaml.Node, path string, ft *sim.Fault) bool {
		ft.Drift = d.number(n, path, "0.01")
		return false
	},
}

// nodeAt is the node of the field at path in f ("groups[1][0]": the
// first server of the second group), or the mapping itself for "" or a
// path it does not hold.
func (f *fields) nodeAt(path string) *yaml.Node {
	name, rest, _ := strings.Cut(path, "[")
	n, ok := f.values[name]
	if !ok {
		return f.node
	}
	for rest != "" {
		num, after, _ := strings.Cut(rest, "]")
		i, err := strconv.Atoi(num)
		if n = resolve(n); err != nil || n.Kind != yaml.SequenceNode || i < 0 || i >= len(n.Content) {
			return n
		}
		n = resolve(n.Content[i])
		rest = strings.TrimPrefix(after, "[")
	}
	return n
}

// faultSpan reads a fault's kind, refuses the fields its kind does not
// read, and reads when it starts and ends: within the run, end after start.
func (d *decoder) faultSpan(f *fields, sc *sim.Scenario) sim.Fault {
	var ft sim.Fault
	kv, ok := f.values["kind"]
	if !ok {
		d.failf(f.node, f.field("kind"), "missing (want %s)", words.OneOf(faultKinds))
		return ft
	}
	ft.Kind = sim.FaultKind(d.choice(kv, f.field("kind"), "fault kind", faultKinds))
	if d.failed() {
		return ft
	}
	kind, _ := sim.FaultTypeOf(ft.Kind)
	own := kind.FieldNames()
	for _, name := range f.order {
		if name != "kind" && name != "start" && name != "end" && !slices.Contains(own, name) {
			d.failf(f.keys[name], f.field(name), "not a field of fault kind %s (want %s)", ft.Kind, kind.FieldsWant())
			return ft
		}
	}
	for _, name := range []string{"start", "end"} {
		if !f.has(name) {
			d.failf(f.node, f.field(name), "missing (want e.g. start: 10s, end: 20s)")
			return ft
		}
	}
	ft.Start = d.nonNegative(f.values["start"], f.field("start"), "10s")
	ft.End = d.duration(f.values["end"], f.field("end"), "20s")
	if d.failed() {
		return ft
	}
	switch {
	case ft.End <= ft.Start:
		d.failf(f.values["end"], f.field("end"), "%s is not after start %s (want an end later than the start)", ft.End, ft.Start)
	case ft.End > sc.Duration:
		d.failf(f.values["end"], f.field("end"), "%s is after the end of the run (want at most the duration, %s)", ft.End, sc.Duration)
	}
	return ft
}

// serverNumbers reads a list of server numbers, as written: whether
// each is a server of the scenario's is Fault.Check's to say. A number
// too large for an int reads as the largest, which is no server.
func (d *decoder) serverNumbers(n *yaml.Node, path string) []int {
	items := d.list(n, path, "a list of server numbers, e.g. [0, 1]")
	var out []int
	for j, item := range items {
		var s int
		if item.Kind != yaml.ScalarNode || item.ShortTag() != "!!int" {
			d.notA(item, index(path, j), "a whole number", "0")
			return nil
		}
		if item.Decode(&s) != nil {
			s = math.MaxInt
			if strings.HasPrefix(item.Value, "-") {
				s = math.MinInt
			}
		}
		out = append(out, s)
	}
	return out
}

// faultFieldNames are the fields a fault of kind k reads besides kind,
// start and end, for the field table.
func faultFieldNames(k string) []string {
	ft, _ := sim.FaultTypeOf(sim.FaultKind(k))
	return ft.FieldNames()
}
