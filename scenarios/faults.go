package scenarios

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ratelim/ratelim/sim"
)

var (
	faultKinds = []string{string(sim.Partition), string(sim.Outage), string(sim.Latency), string(sim.ClockSkew), string(sim.Crash)}
	// kindFields are the fields each kind of fault reads besides kind,
	// start and end.
	kindFields = map[sim.FaultKind][]string{
		sim.Partition: {"groups"},
		sim.Outage:    {},
		sim.Latency:   {"rtt"},
		sim.ClockSkew: {"servers", "offset", "drift"},
		sim.Crash:     {"servers"},
	}
)

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
	return out
}

// fault reads one fault: its kind and span (faultSpan), then the fields
// its kind reads.
func (d *decoder) fault(f *fields, sc *sim.Scenario) sim.Fault {
	ft := d.faultSpan(f, sc)
	if d.failed() {
		return ft
	}
	switch ft.Kind {
	case sim.Partition:
		v, ok := f.values["groups"]
		if !ok {
			d.failf(f.node, f.field("groups"), "missing: a partition splits the servers into groups (want e.g. groups: [[0, 1], [2, 3]])")
			return ft
		}
		ft.Groups = d.groups(v, f.field("groups"), sc.Servers)
	case sim.Latency:
		v, ok := f.values["rtt"]
		if !ok {
			d.failf(f.node, f.field("rtt"), "missing: the round trip during the spike (want e.g. rtt: 50ms)")
			return ft
		}
		ft.RTT = d.roundTrip(v, f.field("rtt"), "50ms")
	case sim.Crash:
		v, ok := f.values["servers"]
		if !ok {
			d.failf(f.node, f.field("servers"), "missing: the servers that crash (want e.g. servers: [1])")
			return ft
		}
		ft.Servers = d.serverList(v, f.field("servers"), sc.Servers, map[int]string{})
		switch {
		case d.failed():
		case len(ft.Servers) == 0:
			d.failf(v, f.field("servers"), "empty (want the servers that crash, e.g. [1])")
		case len(ft.Servers) >= sc.Servers:
			d.failf(v, f.field("servers"), "every server crashes, and no one is left to serve (want fewer than the %d servers)", sc.Servers)
		}
	case sim.ClockSkew:
		d.clockSkew(f, &ft, sc)
	}
	return ft
}

// faultSpan reads a fault's kind, refuses the fields its kind does not
// read, and reads when it starts and ends: within the run, end after start.
func (d *decoder) faultSpan(f *fields, sc *sim.Scenario) sim.Fault {
	var ft sim.Fault
	kv, ok := f.values["kind"]
	if !ok {
		d.failf(f.node, f.field("kind"), "missing (want %s)", oneOf(faultKinds))
		return ft
	}
	ft.Kind = sim.FaultKind(d.choice(kv, f.field("kind"), "fault kind", faultKinds))
	if d.failed() {
		return ft
	}
	own := kindFields[ft.Kind]
	for _, name := range f.order {
		if name != "kind" && name != "start" && name != "end" && !slices.Contains(own, name) {
			want := "start and end only"
			if len(own) > 0 {
				want = "start, end, " + strings.Join(own, ", ")
			}
			d.failf(f.keys[name], f.field(name), "not a field of fault kind %s (want %s)", ft.Kind, want)
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

// clockSkew reads a clock skew's offset, drift (at least one of them) and
// servers (all of them when left out) into ft.
func (d *decoder) clockSkew(f *fields, ft *sim.Fault, sc *sim.Scenario) {
	if !f.has("offset") && !f.has("drift") {
		d.failf(f.node, f.path, "a clock skew needs an offset, a drift or both (want e.g. offset: 2s or drift: 0.01)")
		return
	}
	if v, ok := f.values["servers"]; ok {
		ft.Servers = d.serverList(v, f.field("servers"), sc.Servers, map[int]string{})
		if !d.failed() && len(ft.Servers) == 0 {
			d.failf(v, f.field("servers"), "empty (want the servers whose clock is wrong, e.g. [0]; leave it out for all)")
		}
	}
	if v, ok := f.values["offset"]; ok {
		ft.Offset = d.duration(v, f.field("offset"), "2s")
		if !d.failed() && (ft.Offset > maxOffset || ft.Offset < -maxOffset) {
			d.failf(v, f.field("offset"), "%s is more than a day (want at most %s either way)", ft.Offset, maxOffset)
		}
	}
	if v, ok := f.values["drift"]; ok {
		ft.Drift = d.number(v, f.field("drift"), "0.01")
		if !d.failed() && (ft.Drift < -1 || ft.Drift > 1) {
			d.failf(v, f.field("drift"), "%s is more than a second per second (want -1 to 1, e.g. 0.01 for 1%% fast)", v.Value)
		}
	}
}

// groups reads a partition's groups: at least two, none empty, every
// server in exactly one.
func (d *decoder) groups(n *yaml.Node, path string, servers int) [][]int {
	items := d.list(n, path, "a list of groups of servers, e.g. [[0, 1], [2, 3]]")
	if d.failed() {
		return nil
	}
	if len(items) < 2 {
		d.failf(n, path, "%d group is no partition (want at least two groups, e.g. [[0, 1], [2, 3]])", len(items))
		return nil
	}
	seen := map[int]string{} // server → the group that has it
	var out [][]int
	for i, item := range items {
		g := d.serverList(item, index(path, i), servers, seen)
		if d.failed() {
			return nil
		}
		if len(g) == 0 {
			d.failf(item, index(path, i), "empty group (want at least one server, e.g. [0])")
			return nil
		}
		out = append(out, g)
	}
	var missing []string
	for s := range servers {
		if _, ok := seen[s]; !ok {
			missing = append(missing, fmt.Sprint(s))
		}
	}
	if len(missing) > 0 {
		noun := "server " + missing[0] + " is"
		if len(missing) > 1 {
			noun = "servers " + oneOf(missing) + " are"
			noun = strings.Replace(noun, " or ", " and ", 1)
		}
		d.failf(n, path, "%s in no group (want every server from 0 to %d in exactly one group)", noun, servers-1)
		return nil
	}
	return out
}

// serverList reads a list of server numbers, each below servers and not
// already in seen (which it adds them to, naming path as their owner).
func (d *decoder) serverList(n *yaml.Node, path string, servers int, seen map[int]string) []int {
	items := d.list(n, path, "a list of server numbers, e.g. [0, 1]")
	var out []int
	for j, item := range items {
		field := index(path, j)
		s := int(d.integer(item, field, 0, int64(servers-1), "0"))
		if d.failed() {
			if item.Kind == yaml.ScalarNode && item.ShortTag() == "!!int" {
				// Say what the servers are, not only that the number is out of range.
				d.err.Msg = fmt.Sprintf("server %s does not exist (want 0 to %d: servers are numbered from 0)", item.Value, servers-1)
			}
			return nil
		}
		if owner, dup := seen[s]; dup {
			if owner == path {
				d.failf(item, field, "server %d is listed twice (want each server once)", s)
			} else {
				d.failf(item, field, "server %d is already in %s (want each server in one group only)", s, owner)
			}
			return nil
		}
		seen[s] = path
		out = append(out, s)
	}
	return out
}
