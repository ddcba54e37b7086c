package scenarios

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/internal/words"
	"github.com/ratelim/ratelim/replay"
	"github.com/ratelim/ratelim/sim"
)

const clientWant = "a mapping with name, api_key and traffic"

// clients reads the clients: list and expands each entry's count.
func (d *decoder) clients(n *yaml.Node, sc *sim.Scenario) []sim.Client {
	items := d.list(n, "clients", "a list of clients, each "+clientWant)
	if d.failed() {
		return nil
	}
	if len(items) == 0 {
		d.failf(n, "clients", "empty (want at least one client)")
		return nil
	}
	if len(items) > MaxClients {
		d.failf(n, "clients", "%d clients is too many (want at most %d)", len(items), MaxClients)
		return nil
	}
	var out []sim.Client
	owner := map[string]int{} // expanded name → index of the YAML client
	patterns := 0
	for i, item := range items {
		path := index("clients", i)
		f := d.record(item, path, &clientObject, clientWant)
		if d.failed() {
			return nil
		}
		c, count := d.clientIdentity(f)
		if d.failed() {
			return nil
		}
		nameNode := f.values["name"]
		d.checkIdentity(f, c, sc.Limit.Key)
		tv, ok := f.values["traffic"]
		if !ok {
			d.failf(f.node, f.field("traffic"), "missing: the client sends nothing (want e.g. traffic: {pattern: constant, rate: 5/s})")
			return nil
		}
		logs := d.clientRequests(f, tv, &c, sc)
		if d.failed() {
			return nil
		}
		if len(out)+int(count) > MaxClients {
			d.failf(f.node, path, "%d clients in all is too many (want at most %d after count expands them)", len(out)+int(count), MaxClients)
			return nil
		}
		patterns += int(count) * len(c.Traffic)
		if patterns > MaxPatterns {
			d.failf(f.node, f.field("traffic"), "%d traffic patterns in all is too many (want at most %d over all clients)", patterns, MaxPatterns)
			return nil
		}
		for k := 1; k <= int(count); k++ {
			e := expand(c, k)
			if j, dup := owner[e.Name]; dup {
				if j == i {
					d.failf(nameNode, f.field("name"), "with count %d every client is named %s (want {i} in the name, e.g. %s-{i})", count, quote(e.Name), example(e.Name))
				} else {
					d.failf(nameNode, f.field("name"), "%s is also the name of clients[%d] (want every client's name unique)", quote(e.Name), j)
				}
				return nil
			}
			owner[e.Name] = i
			for _, l := range logs {
				if len(sc.Feeds) >= MaxFeeds {
					d.failf(tv, f.field("traffic"), "more than %d logs replayed in all, counting each client of count (want fewer)", MaxFeeds)
					return nil
				}
				sc.Feeds = append(sc.Feeds, l.ClientFeed(len(out)))
			}
			out = append(out, e)
		}
	}
	return out
}

// clientIdentity reads a client's name, count and identities (api_key,
// user, ip), each bounded as it will be once count expands {i} in it.
func (d *decoder) clientIdentity(f *fields) (sim.Client, int64) {
	var c sim.Client
	nameNode, ok := f.values["name"]
	if !ok {
		d.failf(f.node, f.field("name"), "missing (want e.g. name: web)")
		return c, 0
	}
	c.Name = d.text(nameNode, f.field("name"), "web")
	if !d.failed() && strings.TrimSpace(c.Name) == "" {
		d.failf(nameNode, f.field("name"), "empty (want e.g. name: web)")
	}
	count := int64(1)
	if v, ok := f.values["count"]; ok {
		count = d.integer(v, f.field("count"), 1, MaxClients, "8")
	}
	for _, id := range []struct {
		field string
		dst   *string
	}{{"api_key", &c.APIKey}, {"user", &c.User}, {"ip", &c.IP}} {
		if v, ok := f.values[id.field]; ok {
			*id.dst = d.text(v, f.field(id.field), "web-1")
		}
	}
	if d.failed() {
		return c, count
	}
	// Bounded before expanding: {i} a thousand times in a name, times
	// a count of 10,000, would otherwise be gigabytes of names.
	for _, id := range []struct{ field, text string }{{"name", c.Name}, {"api_key", c.APIKey}, {"user", c.User}, {"ip", c.IP}} {
		if n := expandedLen(id.text, count); n > MaxIdentity {
			d.failf(f.values[id.field], f.field(id.field), "%d bytes once {i} is expanded is too long (want at most %d)", n, MaxIdentity)
			return c, count
		}
	}
	return c, count
}

// clientRegion reads the region that serves a client: required on a
// regions topology, refused on another.
func (d *decoder) clientRegion(f *fields, c *sim.Client, sc *sim.Scenario) {
	v, ok := f.values["region"]
	names := make([]string, len(sc.Topology.Regions))
	for i, r := range sc.Topology.Regions {
		names[i] = r.Name
	}
	switch {
	case d.failed():
	case ok && sc.Topology.Kind != sim.Regions:
		d.failf(v, f.field("region"), "only a regions topology serves clients in regions, and this one is %s (want it removed, or kind: regions)", sc.Topology.Kind)
	case ok:
		c.Region = d.choice(v, f.field("region"), "region", names)
	case sc.Topology.Kind == sim.Regions:
		d.failf(f.node, f.field("region"), "missing: on a regions topology each client is served in its region (want region: %s)", names[0])
	}
}

// clientRequests reads what a client sends and how: its traffic (tv), the
// retry policy, priority and service, and the cost of each request. It
// returns the logs the client's traffic replays, one feed each per
// expanded client.
func (d *decoder) clientRequests(f *fields, tv *yaml.Node, c *sim.Client, sc *sim.Scenario) []*replay.Log {
	d.logsRead = d.logsRead[:0]
	c.Traffic = d.traffic(tv, f.field("traffic"), sc)
	logs := append([]*replay.Log(nil), d.logsRead...)
	c.Retry = sim.Retry{Policy: sim.RetryNone}
	if v, ok := f.values["retry"]; ok {
		c.Retry = d.retry(v, f.field("retry"))
	}
	if v, ok := f.values["priority"]; ok {
		c.Priority = d.choice(v, f.field("priority"), "priority", algorithms.Priorities)
	}
	if v, ok := f.values["service"]; ok {
		c.Service = d.service(v, f.field("service"))
	}
	d.clientRegion(f, c, sc)
	// What each of the client's requests costs, unless its traffic
	// pattern says otherwise (a search at 5 beside reads at 1 is two
	// patterns); 1 when neither says.
	cost := int64(1)
	if v, ok := f.values["cost"]; ok {
		cost = d.integer(v, f.field("cost"), 1, MaxCost, "5")
	}
	for i := range c.Traffic {
		if c.Traffic[i].Cost == 0 {
			c.Traffic[i].Cost = cost
		}
	}
	return logs
}

// expandedLen is the length of s with {i} replaced by count, its longest
// expansion.
func expandedLen(s string, count int64) int {
	return len(s) + strings.Count(s, "{i}")*(len(strconv.FormatInt(count, 10))-len("{i}"))
}

// expand returns the k-th client of c's count, {i} replaced by k in its
// name and identities, with a traffic list of its own.
func expand(c sim.Client, k int) sim.Client {
	i := strconv.Itoa(k)
	c.Name = strings.ReplaceAll(c.Name, "{i}", i)
	c.APIKey = strings.ReplaceAll(c.APIKey, "{i}", i)
	c.User = strings.ReplaceAll(c.User, "{i}", i)
	c.IP = strings.ReplaceAll(c.IP, "{i}", i)
	c.Traffic = append([]sim.Traffic(nil), c.Traffic...)
	return c
}

// checkIdentity requires the identity the limiter keys by: without it,
// every such client would share the empty key, silently.
func (d *decoder) checkIdentity(f *fields, c sim.Client, key sim.KeyBy) {
	switch key {
	case sim.KeyAuto:
		if c.APIKey == "" && c.User == "" && c.IP == "" {
			d.failf(f.node, f.path, "no api_key, user or ip (want at least one: the limiter keys requests by the first of them)")
		}
	case sim.KeyAPIKey:
		if c.APIKey == "" {
			d.failf(f.node, f.field("api_key"), "missing, and limit.key is api-key (want e.g. api_key: %s)", example(c.Name))
		}
	case sim.KeyUser:
		if c.User == "" {
			d.failf(f.node, f.field("user"), "missing, and limit.key is user (want e.g. user: %s)", example(c.Name))
		}
	case sim.KeyIP:
		if c.IP == "" {
			d.failf(f.node, f.field("ip"), "missing, and limit.key is ip (want e.g. ip: 203.0.113.7)")
		}
	}
}

func example(name string) string {
	if name == "" || len(name) > 40 || strings.ContainsAny(name, " :#{}[],\"'") {
		return "web"
	}
	return name
}

// patterns are the traffic patterns a file may name: the simulator's
// (sim.Patterns, in the order they are taught), then trace.
var patterns = append(patternNames(), "trace")

func patternNames() []string {
	var names []string
	for _, p := range sim.Patterns() {
		names = append(names, string(p.Name))
	}
	return names
}

// isTracePattern reports whether n is {pattern: trace, ...}: a log's
// requests, read by traceLog, not a pattern the simulator generates.
func isTracePattern(n *yaml.Node) bool {
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "pattern" {
			v := resolve(n.Content[i+1])
			return v.Kind == yaml.ScalarNode && v.Value == "trace"
		}
	}
	return false
}

// patternFields are the fields each pattern reads, pattern first;
// patternNeeds those it cannot do without: each pattern's own
// (sim.Patterns).
var (
	patternFields = map[sim.Pattern][]string{}
	patternNeeds  = map[sim.Pattern][]string{}
	fieldExample  = map[string]string{
		"rate": "100/s", "from": "0/s", "to": "100/s", "count": "40", "at": "10s",
		"spread": "100ms", "on": "2s", "off": "3s", "start": "5s", "stop": "25s", "cost": "1",
	}
)

func init() {
	for _, p := range sim.Patterns() {
		patternFields[p.Name] = append([]string{"pattern"}, p.Fields...)
		patternNeeds[p.Name] = p.Needs
	}
}

const trafficWant = "a pattern such as {pattern: constant, rate: 5/s}, or a list of them"

// traffic reads one pattern or a list of them.
func (d *decoder) traffic(n *yaml.Node, path string, sc *sim.Scenario) []sim.Traffic {
	n = resolve(n)
	switch n.Kind {
	case yaml.MappingNode:
		if isTracePattern(n) {
			d.traceLog(n, path, &tracePatternObject, 0)
			return nil
		}
		return []sim.Traffic{d.pattern(n, path, sc)}
	case yaml.SequenceNode:
		if len(n.Content) == 0 {
			d.failf(n, path, "empty: the client sends nothing (want %s)", trafficWant)
			return nil
		}
		out := make([]sim.Traffic, 0, len(n.Content))
		for j, item := range n.Content {
			if isTracePattern(item) {
				d.traceLog(item, index(path, j), &tracePatternObject, 0)
				if d.failed() {
					return nil
				}
				continue
			}
			out = append(out, d.pattern(item, index(path, j), sc))
			if d.failed() {
				return nil
			}
		}
		return out
	}
	if isNull(n) {
		d.failf(n, path, "empty: the client sends nothing (want %s)", trafficWant)
	} else {
		d.failf(n, path, "%s is not a traffic pattern (want %s)", describe(n), trafficWant)
	}
	return nil
}

// pattern reads one traffic pattern at path: its kind, the fields that
// kind reads, each within the run of sc.
func (d *decoder) pattern(n *yaml.Node, path string, sc *sim.Scenario) sim.Traffic {
	tr := sim.Traffic{} // Cost 0 until the client's cost, or 1, fills it
	if d.patterns++; d.patterns > MaxPatterns {
		d.failf(resolve(n), path, "more than %d traffic patterns in all (want fewer)", MaxPatterns)
		return tr
	}
	f := d.record(n, path, &patternObject, trafficWant)
	if d.failed() {
		return tr
	}
	pv, ok := f.values["pattern"]
	if !ok {
		d.failf(f.node, f.field("pattern"), "missing (want %s)", words.OneOf(patterns))
		return tr
	}
	tr.Pattern = sim.Pattern(d.choice(pv, f.field("pattern"), "pattern", patterns))
	if d.failed() {
		return tr
	}
	d.patternFieldsFit(f, tr.Pattern)
	if d.failed() {
		return tr
	}
	end := sc.Duration
	for _, name := range f.order {
		v, field := f.values[name], f.field(name)
		switch name {
		case "rate":
			tr.Rate = d.rate(v, field, false)
		case "from":
			tr.From = d.rate(v, field, true)
		case "to":
			tr.To = d.rate(v, field, true)
		case "count":
			tr.Count = int(d.integer(v, field, 1, 1_000_000_000, "40"))
		case "at":
			tr.At = d.nonNegative(v, field, "10s")
			if !d.failed() && tr.At >= end {
				d.failf(v, field, "%s is not within the run (want less than the duration, %s)", tr.At, end)
			}
		case "spread":
			tr.Spread = d.nonNegative(v, field, "100ms")
		case "on":
			tr.On = d.positive(v, field, "2s")
		case "off":
			tr.Off = d.positive(v, field, "3s")
		case "start":
			tr.Start = d.nonNegative(v, field, "5s")
			if !d.failed() && tr.Start >= end {
				d.failf(v, field, "%s is not within the run (want less than the duration, %s)", tr.Start, end)
			}
		case "stop":
			tr.Stop = d.nonNegative(v, field, "25s")
			if !d.failed() && tr.Stop > end {
				d.failf(v, field, "%s is after the end of the run (want at most the duration, %s; or 0 for the end)", tr.Stop, end)
			}
		case "cost":
			tr.Cost = d.integer(v, field, 1, MaxCost, "1")
		case "pattern":
		default:
			// A field a pattern of the simulator's reads (sim.Patterns)
			// that this decoder has no reader for: a bug, said rather
			// than the field silently dropped.
			d.failf(v, field, "pattern %s reads it, but this decoder does not (a bug in ratelim: want a reader in scenarios/clients.go)", tr.Pattern)
		}
		if d.failed() {
			return tr
		}
	}
	d.checkPatternShape(f, tr, end)
	return tr
}

// patternFieldsFit checks a traffic mapping's fields against its pattern:
// each is one the pattern reads, and those it needs are all there.
func (d *decoder) patternFieldsFit(f *fields, pattern sim.Pattern) {
	own := patternFields[pattern]
	for _, name := range f.order {
		if !slices.Contains(own, name) {
			d.failf(f.keys[name], f.field(name), "not a field of pattern %s (want %s)", pattern, words.OneOf(own[1:]))
			return
		}
	}
	for _, name := range patternNeeds[pattern] {
		if !f.has(name) {
			d.failf(f.node, f.field(name), "missing: pattern %s needs it (want e.g. %s: %s)", pattern, name, fieldExample[name])
			return
		}
	}
}

// checkPatternShape checks what no one field shows: a ramp that sends
// something, a stop after the start, a burst that ends within the run
// (end, the run's duration).
func (d *decoder) checkPatternShape(f *fields, tr sim.Traffic, end time.Duration) {
	if field, problem := sim.PatternProblem(tr, end); problem != "" {
		d.failf(f.values[field], f.field(field), "%s", problem)
	}
	if tr.Stop != 0 && tr.Stop <= tr.Start {
		d.failf(f.values["stop"], f.field("stop"), "%s is not after start %s (want a stop later than the start, or 0 for the end of the run)", tr.Stop, tr.Start)
	}
}

var (
	retryPolicies = []string{string(sim.RetryNone), string(sim.RetryImmediate), string(sim.RetryAfter), string(sim.RetryBackoff)}
)

// The simulator's backoff defaults, for checking base ≤ cap when only one
// of them is set.
const (
	defaultBackoffBase = sim.DefaultBackoffBase
	defaultBackoffCap  = sim.DefaultBackoffCap
)

const retryWant = "none, immediate, retry-after or backoff, or a mapping such as {policy: backoff, base: 100ms, cap: 5s, max: 8}"

// retry reads a policy name or a mapping with the policy and its numbers.
func (d *decoder) retry(n *yaml.Node, path string) sim.Retry {
	n = resolve(n)
	r := sim.Retry{Policy: sim.RetryNone}
	if n.Kind == yaml.ScalarNode && !isNull(n) {
		r.Policy = sim.RetryPolicy(d.choice(n, path, "retry policy", retryPolicies))
		return r
	}
	if n.Kind != yaml.MappingNode {
		d.notA(n, path, "a retry policy", retryWant)
		return r
	}
	f := d.record(n, path, &retryObject, retryWant)
	pv, ok := f.values["policy"]
	if !ok {
		d.failf(f.node, f.field("policy"), "missing (want %s)", words.OneOf(retryPolicies))
		return r
	}
	r.Policy = sim.RetryPolicy(d.choice(pv, f.field("policy"), "retry policy", retryPolicies))
	if d.failed() {
		return r
	}
	for _, name := range f.order {
		switch {
		case (name == "base" || name == "cap") && r.Policy != sim.RetryBackoff:
			d.failf(f.keys[name], f.field(name), "only policy backoff waits a %s, and this one is %s (want it removed, or policy: backoff)", name, r.Policy)
			return r
		case name == "max" && r.Policy == sim.RetryNone:
			d.failf(f.keys[name], f.field(name), "policy none never retries (want it removed, or another policy)")
			return r
		}
	}
	base, ceiling := defaultBackoffBase, defaultBackoffCap
	if v, ok := f.values["base"]; ok {
		r.Base = d.positive(v, f.field("base"), "100ms")
		base = r.Base
	}
	if v, ok := f.values["cap"]; ok {
		r.Cap = d.positive(v, f.field("cap"), "5s")
		ceiling = r.Cap
	}
	if v, ok := f.values["max"]; ok {
		r.Max = int(d.integer(v, f.field("max"), 1, MaxRetries, "8"))
	}
	if !d.failed() && base > ceiling {
		at, field := f.values["cap"], f.field("cap")
		if at == nil {
			at, field = f.values["base"], f.field("base")
		}
		d.failf(at, field, "%s", fmt.Sprintf("the cap %s is below the base %s (want base ≤ cap)", ceiling, base))
	}
	return r
}

// maxService bounds a request's service time: a day is longer than any
// request an API serves.
const maxService = 24 * time.Hour

// service reads how long a client's requests take to serve: a duration
// (every request takes it) or {mean: 2s, dist: exponential}.
func (d *decoder) service(n *yaml.Node, field string) sim.Service {
	var sv sim.Service
	if n.Kind == yaml.ScalarNode {
		sv.Mean = d.nonNegative(n, field, "200ms")
	} else {
		f := d.record(n, field, &serviceObject, "a duration such as 200ms, or {mean: 200ms, dist: exponential}")
		if d.failed() {
			return sv
		}
		v, ok := f.values["mean"]
		if !ok {
			d.failf(f.node, field+".mean", "missing (want e.g. mean: 200ms)")
			return sv
		}
		sv.Mean = d.nonNegative(v, field+".mean", "200ms")
		if v, ok := f.values["dist"]; ok {
			sv.Exponential = d.choice(v, field+".dist", "distribution", serviceDists) == "exponential"
		}
	}
	if !d.failed() && sv.Mean > maxService {
		d.failf(n, field, "%s is longer than any request is served (want at most %s)", sv.Mean, maxService)
	}
	return sv
}
