package scenarios

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/replay"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/store"
	"github.com/ratelim/ratelim/trace"
)

// The field table: every kind of mapping a scenario file holds, each key
// it may have, what the key's value is and what it means. The parser
// reads a mapping through its object (record refuses a key the object
// lacks), and the JSON Schema ([Schema]) and the reference ([Reference])
// are written from the same objects, so none of the three can name a
// field the others do not. The choices (algorithm names, topology kinds,
// fault kinds, ...) are the lists the parser checks values against.

// An object is one kind of mapping in a scenario file.
type object struct {
	name   string // its definition's name in the schema, and its heading in the reference
	doc    string // one line: what it is and where it is written
	fields []field
	// A mapping whose other fields depend on one of them (a fault's kind,
	// a traffic pattern): variantKey names it, and variantFields gives,
	// for each of variantValues, the fields that value reads, variantKey
	// among them.
	variantKey    string
	variantValues []string
	variantFields func(value string) []string
	// needOne are groups of fields of which the mapping must have at
	// least one (limit or limits); notBoth, pairs it may not have together.
	needOne [][]string
	notBoth [][2]string
	// paths, when set, says the mapping also takes a field's path as a
	// key (limit.burst, clients[web].traffic.rate): what such a key means.
	paths string
}

// wholeFields are the top-level fields a mapping that takes paths
// (object.paths: a with:) also takes whole, as --set 'limit={…}' sets
// one: those of the top the mapping does not name itself (known), but
// the expectations (expect, lesson) and the question, which a run's
// settings do not make.
func wholeFields(known []string) []string {
	var out []string
	for _, name := range scenarioObject.names() {
		if !slices.Contains(known, name) && name != "expect" && name != "lesson" && name != "question" {
			out = append(out, name)
		}
	}
	return out
}

// A field is one key of an object.
type field struct {
	name     string
	value    value
	required bool // the parser refuses the mapping without it
	doc      string
	// kinds, for a topology's field, are the kinds whose run reads it;
	// nil, every kind. The reader refuses one on another kind in the
	// file (onlyOn); Apply refuses a setting of one on a run whose kind
	// is another (a --topology changes it after the file is read).
	kinds []sim.TopologyKind
}

// names returns the object's field names, in the table's order.
func (o *object) names() []string {
	out := make([]string, len(o.fields))
	for i, f := range o.fields {
		out[i] = f.name
	}
	return out
}

// A value is what a field holds.
type value struct {
	kind valueKind
	// choices are a choice's values.
	choices []string
	// lo and hi bound a number or integer when bounded; hiOpen leaves hi
	// out (a share is below 1).
	bounded bool
	lo, hi  float64
	hiOpen  bool
	object  *object // an object's
	item    *value  // a list's items
	anyOf   []value // the forms a value may take
	literal string  // a constant's one value
}

type valueKind int

const (
	textValue     valueKind = iota // any scalar but null, read as text
	integerValue                   // a whole number
	numberValue                    // a number, whole or not
	booleanValue                   // true or false
	durationValue                  // a Go duration, or a bare 0
	rateValue                      // N/s, N/m, N/h, N/<duration> or a bare N
	instantValue                   // a time of day: RFC 3339, or a date and time in UTC
	choiceValue                    // one of choices
	constantValue                  // literal
	storeURLValue                  // a Redis URL
	nullValue                      // nothing: an optional list left empty
	objectValue                    // a mapping: object
	listValue                      // a list of item
	anyOfValue                     // one of the forms in anyOf
)

// The values of the table, each named as the decoder's reader of it
// (duration() is what d.duration reads).
func text() value                  { return value{kind: textValue} }
func boolean() value               { return value{kind: booleanValue} }
func duration() value              { return value{kind: durationValue} }
func rate() value                  { return value{kind: rateValue} }
func instant() value               { return value{kind: instantValue} }
func null() value                  { return value{kind: nullValue} }
func choice(values []string) value { return value{kind: choiceValue, choices: values} }
func constant(s string) value      { return value{kind: constantValue, literal: s} }
func mapping(o *object) value      { return value{kind: objectValue, object: o} }
func listOf(item value) value      { return value{kind: listValue, item: &item} }
func anyOf(forms ...value) value   { return value{kind: anyOfValue, anyOf: forms} }
func integer(lo, hi float64) value { return value{kind: integerValue, bounded: true, lo: lo, hi: hi} }
func number() value                { return value{kind: numberValue} }
func between(lo, hi float64) value { return value{kind: numberValue, bounded: true, lo: lo, hi: hi} }
func belowOne() value              { return value{kind: numberValue, bounded: true, lo: 0, hi: 1, hiOpen: true} }
func storeName() value             { return anyOf(choice(storeNames), value{kind: storeURLValue}) }

// The choices the parser checks values against, that no other package
// lists.
var (
	onErrorPolicies = []string{string(store.FailOpen), string(store.FailClosed)}
	clockSources    = []string{string(sim.ServerClock), string(sim.StoreClock)}
	serviceDists    = []string{"constant", "exponential"}
	logFormats      = []string{trace.Combined.String(), trace.JSONL.String(), trace.CSV.String(), trace.ALB.String()}
	storeNames      = []string{"memory", "miniredis"}
	storeSchemes    = []string{"redis", "rediss", "redis+cluster", "rediss+cluster"}
)

// The objects, from the top of a file down.
var (
	scenarioObject = object{name: "scenario", doc: "a scenario file's top level", fields: []field{
		{name: "name", value: text(), doc: "the scenario's name; default: the file's name without .yaml"},
		{name: "summary", value: text(), doc: "one line: what it teaches, for `ratelim scenarios`"},
		{name: "lesson", value: choice(findingKinds()), doc: "the finding the run must lead with"},
		{name: "question", value: mapping(&questionObject), doc: "what a teacher asks before the run; its answer is a figure of it"},
		{name: "trace", value: mapping(&traceObject), doc: "an access log replayed as clients, one per key"},
		{name: "duration", value: duration(), doc: "the run's length, at most a year; required unless a trace gives it"},
		{name: "seed", value: integer(0, 1<<64-1), doc: "the run's one random source; default 1"},
		{name: "step", value: duration(), doc: "the timeline's resolution; default 1s"},
		{name: "servers", value: integer(1, MaxServers), doc: "API servers, numbered from 0; default 1"},
		{name: "balancer", value: choice(balancers), doc: "how requests reach servers; default round-robin"},
		{name: "wall_clock", value: instant(), doc: "the instant virtual 0 stands for; windows align to it"},
		{name: "limit", value: mapping(&limitObject), doc: "the limit every request passes (or limits:)"},
		{name: "limits", value: listOf(mapping(&limitObject)), doc: "several named limits on one key (or limit:)"},
		{name: "shedder", value: mapping(&shedderObject), doc: "the fleet's priority load shedder, after the limit"},
		{name: "topology", value: mapping(&topologyObject), doc: "where the limit's counter lives"},
		{name: "clients", value: listOf(mapping(&clientObject)), doc: "who sends what; required unless a trace gives them"},
		{name: "faults", value: anyOf(listOf(mapping(&faultObject)), null()), doc: "what goes wrong, and when"},
		{name: "expect", value: anyOf(listOf(mapping(&expectationObject)), null()), doc: "claims `ratelim check` verifies"},
	},
		needOne: [][]string{{"duration", "trace"}, {"limit", "limits"}, {"clients", "trace"}},
		notBoth: [][2]string{{"limit", "limits"}},
	}

	limitObject = object{name: "limit", doc: "a limit: limit:, or each entry of limits:", fields: []field{
		{name: "name", value: text(), doc: "what RateLimit-Policy calls it; required among several"},
		{name: "algorithm", value: choice(algorithms.Names()), doc: "the limiter (`ratelim algorithms`); default token-bucket"},
		{name: "rate", value: rate(), doc: "what it admits: 10/s, 60/m, 1000/h, 5/500ms; a bare N is per second"},
		{name: "burst", value: integer(0, 1<<50), doc: "bucket size: token-bucket, gcra, leaky-bucket, nginx"},
		{name: "window", value: duration(), doc: "the window: fixed-window, sliding-log, sliding-window"},
		{name: "key", value: choice(keyKinds), doc: "what it counts by; auto: api_key, else user, else ip"},
		{name: "delay", value: integer(0, 1<<50), doc: "nginx-limit-req only: requests delayed before refusing"},
		{name: "nodelay", value: boolean(), doc: "nginx-limit-req only: serve the burst at once"},
		{name: "shadow", value: anyOf(boolean(), mapping(&shadowObject)), doc: "count would_reject, refuse nothing: true, or {until: 15s}"},
		{name: "max_in_flight", value: integer(1, 1<<20), doc: "concurrency only: requests in flight at once"},
		{name: "lease_ttl", value: duration(), doc: "concurrency only: when a lease not given back expires"},
	}}

	questionObject = object{name: "question", doc: "what the file asks before the run (question:), answered by a figure", fields: []field{
		{name: "ask", value: text(), required: true, doc: "the question, one line of at most 200 characters"},
		{name: "figure", value: choice(figures), required: true, doc: "the figure that answers it, as expect: names it"},
		{name: "client", value: text(), doc: "whose figure: a client's name, after count: expands it"},
		{name: "key", value: text(), doc: "or a limiter key's; neither: every client's, added up"},
		{name: "pick", value: choice(picks), doc: "most or least: the answer is the client with the most or least of it"},
	},
		notBoth: [][2]string{{"client", "key"}, {"pick", "client"}, {"pick", "key"}},
	}

	shadowObject = object{name: "shadow", doc: "a limit's shadow: mapping", fields: []field{
		{name: "until", value: duration(), required: true, doc: "shadow until this instant of the run, enforced from then"},
	}}

	shedderObject = object{name: "shedder", doc: "the fleet's load shedder (shedder:)", fields: []field{
		{name: "capacity", value: rate(), required: true, doc: "what the fleet serves, e.g. 1000/s"},
		{name: "burst", value: integer(1, 1<<50), doc: "what it absorbs at once; default a second of capacity"},
		{name: "reserve", value: mapping(&reserveObject), doc: "the share each priority leaves to those above it"},
	}}

	reserveObject = object{name: "reserve", doc: "a shedder's reserve: shares of its burst, to 15 digits", fields: reserveFields()}

	topologyObject = object{name: "topology", doc: "where the counter lives (topology:)", fields: []field{
		{name: "kind", value: choice(topologyKinds), doc: "local: a jar per server; shared: one store; default shared"},
		{name: "store", value: storeName(), doc: "memory, miniredis, redis://host:port or redis+cluster://h:p,h:p", kinds: notLocal()},
		{name: "rtt", value: duration(), doc: "one store round trip; default 500us, 0 for local", kinds: notLocal()},
		{name: "on_error", value: choice(onErrorPolicies), doc: "what a server does when the store fails; default fail-open", kinds: notLocal()},
		{name: "clock", value: choice(clockSources), doc: "whose clock the limiter reads; default server"},
		{name: "replication_lag", value: anyOf(duration(), constant("never")), doc: "split-brain, cluster: how far a replica trails; regions: never, or each admission's lag", kinds: []sim.TopologyKind{sim.SplitBrain, sim.Cluster, sim.Regions}},
		{name: "failover_after", value: anyOf(duration(), constant("never")), doc: "split-brain only: when the replica takes over; default 0", kinds: []sim.TopologyKind{sim.SplitBrain}},
		{name: "primary_stops_after", value: anyOf(duration(), constant("never")), doc: "split-brain only: when the primary stops; default never", kinds: []sim.TopologyKind{sim.SplitBrain}},
		{name: "timeout", value: duration(), doc: "a server's wait for a store that does not answer; default 0 (cluster 100ms)", kinds: notLocal()},
		{name: "masters", value: integer(1, MaxMasters), doc: "cluster only: masters, each holding a range of hash slots; default 3", kinds: []sim.TopologyKind{sim.Cluster}},
		{name: "replicas", value: integer(0, MaxReplicas), doc: "cluster only: replicas of each master; default 1", kinds: []sim.TopologyKind{sim.Cluster}},
		{name: "node_timeout", value: duration(), doc: "cluster only: cluster-node-timeout; default 15s", kinds: []sim.TopologyKind{sim.Cluster}},
		{name: "full_coverage", value: boolean(), doc: "cluster only: cluster-require-full-coverage; default true", kinds: []sim.TopologyKind{sim.Cluster}},
		{name: "breaker", value: mapping(&breakerObject), doc: "a circuit breaker in front of each server's store calls"},
		{name: "sync_interval", value: anyOf(duration(), constant("never")), doc: "synced only: each server's push; 0 shared, never local; default 100ms", kinds: []sim.TopologyKind{sim.Synced}},
		{name: "local", value: mapping(&localTierObject), doc: "two-tier only: each server's token bucket in front of the shared limit", kinds: []sim.TopologyKind{sim.TwoTier}},
		{name: "sync_wait", value: duration(), doc: "owner only: a node's wait before it sends queued hits or status; default 100ms", kinds: []sim.TopologyKind{sim.Owner}},
		{name: "batch_limit", value: integer(1, sim.MaxBatchLimit), doc: "owner only: keys queued that make a node send at once; default 1000", kinds: []sim.TopologyKind{sim.Owner}},
		{name: "regions", value: listOf(mapping(&regionObject)), doc: "regions only: each region's name and servers, in order", kinds: []sim.TopologyKind{sim.Regions}},
	}}

	regionObject = object{name: "region", doc: "a region of a regions topology: topology.regions[i]", fields: []field{
		{name: "name", value: text(), required: true, doc: "the region, and its store's node name"},
		{name: "servers", value: integer(1, MaxServers), required: true, doc: "its API servers"},
	}}

	localTierObject = object{name: "local", doc: "a two-tier topology's local tier: topology.local", fields: []field{
		{name: "rate", value: rate(), required: true, doc: "each server's local bucket refill, per key"},
		{name: "burst", value: integer(1, 1<<50), required: true, doc: "each server's local bucket size"},
	}}

	breakerObject = object{name: "breaker", doc: "a circuit breaker: topology.breaker", fields: []field{
		{name: "failures", value: integer(1, MaxBreakerFailures), required: true, doc: "store failures in a row that open it"},
		{name: "cooldown", value: duration(), required: true, doc: "how long it fails calls at once before a probe"},
	}}

	clientObject = object{name: "client", doc: "a client: each entry of clients:", fields: []field{
		{name: "name", value: text(), required: true, doc: "its name; {i} is 1..count in name, api_key, user and ip"},
		{name: "count", value: integer(1, MaxClients), doc: "how many such clients; default 1"},
		{name: "api_key", value: text(), doc: "the API key its requests carry"},
		{name: "user", value: text(), doc: "the user its requests are made as"},
		{name: "ip", value: text(), doc: "the address its requests come from"},
		{name: "traffic", value: traffic(), required: true, doc: "a pattern, or a list of them superposed"},
		{name: "retry", value: anyOf(choice(retryPolicies), mapping(&retryObject)), doc: "what it does after a 429; default none"},
		{name: "cost", value: integer(1, MaxCost), doc: "tokens each request costs, unless its pattern says; default 1"},
		{name: "service", value: anyOf(duration(), mapping(&serviceObject)), doc: "how long a request takes to serve: 2s or {mean, dist}"},
		{name: "priority", value: choice(algorithms.Priorities), doc: "its priority at the shedder; default normal"},
		{name: "region", value: text(), doc: "regions only: the region that serves it while it is up"},
	}}

	patternObject = object{name: "pattern", doc: "a traffic pattern the simulator generates", fields: []field{
		{name: "pattern", value: choice(generated()), required: true, doc: "its shape"},
		{name: "rate", value: rate(), doc: "constant, poisson, on-off: requests per second while on"},
		{name: "from", value: rate(), doc: "ramp: the rate at start (may be 0)"},
		{name: "to", value: rate(), doc: "ramp: the rate at stop (may be 0)"},
		{name: "count", value: integer(1, 1_000_000_000), doc: "burst: how many requests"},
		{name: "at", value: duration(), doc: "burst: when"},
		{name: "spread", value: duration(), doc: "burst: the span its requests are spread evenly over"},
		{name: "on", value: duration(), doc: "on-off: how long it sends"},
		{name: "off", value: duration(), doc: "on-off: how long it pauses"},
		{name: "start", value: duration(), doc: "when it starts; default 0"},
		{name: "stop", value: duration(), doc: "when it stops; default 0, the end of the run"},
		{name: "cost", value: integer(1, MaxCost), doc: "tokens each of its requests costs; default the client's"},
	},
		variantKey:    "pattern",
		variantValues: generated(),
		variantFields: func(p string) []string { return patternFields[sim.Pattern(p)] },
	}

	retryObject = object{name: "retry", doc: "a client's retry: mapping", fields: []field{
		{name: "policy", value: choice(retryPolicies), required: true, doc: "none, immediate, retry-after (honours it) or backoff"},
		{name: "base", value: duration(), doc: "backoff only: the first wait; default 100ms"},
		{name: "cap", value: duration(), doc: "backoff only: the longest wait; default 10s"},
		{name: "max", value: integer(1, MaxRetries), doc: "the most retries of one request"},
	}}

	serviceObject = object{name: "service", doc: "a client's service: mapping", fields: []field{
		{name: "mean", value: duration(), required: true, doc: "the mean time a request takes to serve"},
		{name: "dist", value: choice(serviceDists), doc: "how the times spread; default constant"},
	}}

	// traceObject's fields but pattern are those of a trace: at the top
	// (traceFields); a client's traffic: {pattern: trace} takes them all
	// but retry, which the client has of its own.
	traceObject = object{name: "trace", doc: "a log replayed as clients, one per key (trace:)", fields: []field{
		{name: "file", value: text(), required: true, doc: "the log, relative to the scenario file"},
		{name: "format", value: choice(logFormats), doc: "the log's format; default guessed from the file's name"},
		{name: "key", value: text(), doc: "what keys a request: ip, user, ua, path, query:NAME, or a JSONL/CSV field"},
		{name: "fields", value: mapping(&logFieldsObject), doc: "a JSONL or CSV log's field names"},
		{name: "time_unit", value: text(), doc: "a JSONL or CSV log's numeric times' unit: s, ms, us or ns"},
		{name: "ipv6_prefix", value: integer(1, 128), doc: "key IPv6 addresses by this prefix length"},
		{name: "reorder", value: duration(), doc: "how far out of order lines may be; 0 for none"},
		{name: "from", value: instant(), doc: "replay from this time of the log"},
		{name: "until", value: instant(), doc: "replay until this time of the log"},
		{name: "path", value: text(), doc: "only requests whose path starts so"},
		{name: "path_glob", value: text(), doc: "only requests whose path matches the glob"},
		{name: "methods", value: listOf(text()), doc: "only requests of these methods"},
		{name: "only", value: text(), doc: "only one key's requests, e.g. ip:203.0.113.9"},
		{name: "skip_bad", value: boolean(), doc: "skip lines that do not parse, instead of refusing the log"},
		{name: "speed", value: between(replay.MinSpeed, replay.MaxSpeed), doc: "how much faster than it was the log is played"},
		{name: "start", value: duration(), doc: "when in the run the log starts"},
		{name: "retry", value: anyOf(choice(retryPolicies), mapping(&retryObject)), doc: "what the log's clients do after a 429"},
	}}

	tracePatternObject = object{name: "trace_pattern", doc: "a client's traffic: {pattern: trace, file: ...}", fields: append(
		[]field{{name: "pattern", value: constant("trace"), required: true, doc: "trace: the log's requests"}},
		traceObject.fields[:len(traceObject.fields)-1]...)}

	logFieldsObject = object{name: "log_fields", doc: "a trace's fields: the log's field names", fields: []field{
		{name: "time", value: text(), doc: "the time field"},
		{name: "method", value: text(), doc: "the method field"},
		{name: "path", value: text(), doc: "the path field"},
		{name: "status", value: text(), doc: "the status field"},
	}}

	faultObject = object{name: "fault", doc: "a fault: each entry of faults:", fields: []field{
		{name: "kind", value: choice(faultKinds), required: true, doc: "what goes wrong"},
		{name: "start", value: duration(), required: true, doc: "when it starts"},
		{name: "end", value: duration(), required: true, doc: "when it ends, at most the duration"},
		{name: "groups", value: listOf(listOf(integer(0, MaxServers-1))), doc: "partition: the groups, naming every server once"},
		{name: "nodes", value: listOf(listOf(text())), doc: "partition: the store nodes on each group's side, by name"},
		{name: "rtt", value: duration(), doc: "latency: the store round trip meanwhile"},
		{name: "servers", value: listOf(integer(0, MaxServers-1)), doc: "crash, clock-skew: the servers; clock-skew default all"},
		{name: "offset", value: duration(), doc: "clock-skew: how far the clock is off, either way"},
		{name: "drift", value: between(-1, 1), doc: "clock-skew: seconds gained per second, -1 to 1"},
		{name: "region", value: text(), doc: "outage, regions only: the region that goes down, its clients served elsewhere"},
	},
		variantKey:    "kind",
		variantValues: faultKinds,
		variantFields: func(k string) []string {
			return append([]string{"kind", "start", "end"}, faultFieldNames(k)...)
		},
	}

	expectationObject = object{name: "expectation", doc: "a claim: each entry of expect:", fields: append([]field{
		{name: "client", value: text(), doc: "whose figure: a client's name, or a glob such as \"web-*\""},
		{name: "key", value: text(), doc: "or a limiter key's (or a glob)"},
		{name: "during", value: mapping(&spanObject), doc: "the part of the run the figure is taken over"},
		{name: "with", value: mapping(&withObject), doc: "flags the run is made with, as on the command line"},
		{name: "finding", value: choice(findingKinds()), doc: "a finding the run must show, instead of a figure"},
	}, figureFields()...)}

	boundsObject = object{name: "bounds", doc: "a figure's bounds: min and max, or equals", fields: []field{
		{name: "min", value: anyOf(number(), rate()), doc: "at least this"},
		{name: "max", value: anyOf(number(), rate()), doc: "at most this"},
		{name: "equals", value: anyOf(number(), rate()), doc: "exactly this"},
	}}

	spanObject = object{name: "span", doc: "an expectation's during: part of the run", fields: []field{
		{name: "from", value: duration(), doc: "from this instant (included); default 0"},
		{name: "to", value: duration(), doc: "to this one (excluded); default the end"},
	}}

	withObject = object{name: "with", doc: "an expectation's with: flags", fields: []field{
		{name: "algorithm", value: choice(algorithms.Names()), doc: "as --algorithm"},
		{name: "topology", value: choice(topologyKinds), doc: "as --topology"},
		{name: "store", value: storeName(), doc: "as --store"},
		{name: "servers", value: integer(1, MaxServers), doc: "as --servers"},
		{name: "seed", value: integer(0, 1<<64-1), doc: "as --seed"},
		{name: "duration", value: duration(), doc: "as --duration"},
		{name: "on_error", value: choice(onErrorPolicies), doc: "as --on-error"},
		{name: "sync_interval", value: anyOf(duration(), constant("never")), doc: "as --sync-interval"},
		{name: "replication_lag", value: anyOf(duration(), constant("never")), doc: "as --replication-lag"},
		{name: "wall_clock", value: instant(), doc: "as --wall-clock"},
		{name: "rate", value: rate(), doc: "as --rate: the limit's rate"},
		{name: "burst", value: integer(0, 1<<50), doc: "as --burst: the limit's burst"},
		{name: "window", value: duration(), doc: "as --window: the limit's window"},
	},
		paths: "as --set PATH=VALUE: any field by its path, e.g. limit.burst, topology.failover_after, clients[web].traffic.rate, limits[hourly].rate, or a whole field of the top, e.g. limit: {algorithm: gcra, rate: 10/s, burst: 20}",
	}
)

// objects are the table's objects, in the reference's order.
var objects = []*object{
	&scenarioObject, &questionObject, &limitObject, &shadowObject, &shedderObject, &reserveObject,
	&topologyObject, &breakerObject, &localTierObject, &regionObject, &clientObject, &patternObject, &tracePatternObject, &retryObject,
	&serviceObject, &traceObject, &logFieldsObject, &faultObject, &expectationObject,
	&boundsObject, &spanObject, &withObject,
}

// traffic is a client's traffic: one pattern, or a list of them.
func traffic() value {
	one := anyOf(mapping(&patternObject), mapping(&tracePatternObject))
	return anyOf(one, listOf(one))
}

// generated are the patterns the simulator generates: all but trace.
func generated() []string {
	return slices.DeleteFunc(slices.Clone(patterns), func(p string) bool { return p == "trace" })
}

// defaultReserve is the share of the shedder's burst each priority
// leaves to those above it, when the file does not say.
var defaultReserve = [3]float64{0, 0.2, 0.5}

// reserveFields are a shedder's reserve's: one per priority but the
// first (critical, which leaves nothing), in algorithms.Priorities' order.
func reserveFields() []field {
	var out []field
	for i, name := range algorithms.Priorities[1:] {
		doc := fmt.Sprintf("the share %s requests leave to those above; default %g", name, defaultReserve[i+1])
		out = append(out, field{name: name, value: belowOne(), doc: doc})
	}
	return out
}

// figureFields are an expectation's figures, each bounded.
func figureFields() []field {
	out := make([]field, len(figures))
	for i, name := range figures {
		out[i] = field{name: name, value: mapping(&boundsObject), doc: "a figure of the result, bounded"}
	}
	return out
}

// Choices returns the values a scenario field with a fixed set of them
// takes, named by its path from the top of a file ("balancer",
// "topology.kind", "limit.key"): the list the parser checks it against,
// for a command's flag or its shell completion to offer the same. Nil for
// a path that names no such field. Where a field also takes other forms
// (a store's Redis URL), those are left out.
func Choices(path string) []string {
	o := &scenarioObject
	names := strings.Split(path, ".")
	for i, name := range names {
		j := slices.IndexFunc(o.fields, func(f field) bool { return f.name == name })
		if j < 0 {
			return nil
		}
		v := o.fields[j].value
		if i == len(names)-1 {
			return slices.Clone(v.choiceValues())
		}
		if v.kind != objectValue {
			return nil
		}
		o = v.object
	}
	return nil
}

// choiceValues are the choices of a choice, or of the choice among an
// anyOf's forms.
func (v value) choiceValues() []string {
	switch v.kind {
	case choiceValue:
		return v.choices
	case anyOfValue:
		for _, f := range v.anyOf {
			if c := f.choiceValues(); c != nil {
				return c
			}
		}
	}
	return nil
}
