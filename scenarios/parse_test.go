package scenarios

import (
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/ratelim/ratelim/algorithms"
)

// base is a valid scenario; the error cases append to it or replace it, so
// that the line each error names is easy to count.
const base = `name: t
duration: 30s
limit: {rate: 10/s, burst: 20}
clients:
  - {name: a, api_key: a, traffic: {pattern: constant, rate: 5/s}}
`

// noClients is base without its clients, for cases that bring their own.
const noClients = `name: t
duration: 30s
limit: {rate: 10/s, burst: 20}
clients:
`

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want string // the error's exact file:line: field: prefix
		msg  string // and a part of what it says
	}{
		// The file as a whole.
		{"empty file", ``, "t.yaml:1: ", "the file is empty"},
		{"invalid YAML", "name: t\nlimit: [1, 2\n", "t.yaml:2: ", "not valid YAML"},
		{"not a mapping", "- 1\n", "t.yaml:1: ", "a list is not a mapping"},
		{"two documents", "duration: 30s\n---\nx: 1\n", "t.yaml:2: ", "a second YAML document"},
		{"unknown anchor", "name: t\nduration: *nope\n", "t.yaml:2: ", "unknown anchor"},
		// Unknown and repeated fields.
		{"unknown field, suggested", "name: t\ndurration: 30s\n", "t.yaml:2: durration: ", `did you mean "duration"?`},
		{"unknown field, nothing close", "name: t\ncolour: red\n", "t.yaml:2: colour: ", "unknown field (want name, summary"},
		{"unknown nested field", base + "topology: {kind: shared, on-error: fail-open}\n", "t.yaml:6: topology.on-error: ", `did you mean "on_error"?`},
		{"unknown client field", noClients + "  - {name: a, apikey: a, traffic: {pattern: constant, rate: 5/s}}\n", "t.yaml:5: clients[0].apikey: ", `did you mean "api_key"?`},
		{"field twice", "name: t\nduration: 30s\nduration: 20s\n", "t.yaml:3: duration: ", "set twice in one mapping (want it once; the first is at line 2)"},
		// Durations.
		{"duration without unit", "name: t\nduration: 30\n", "t.yaml:2: duration: ", "30 has no unit (want e.g. 30s)"},
		{"duration not a duration", "name: t\nduration: soon\n", "t.yaml:2: duration: ", `"soon" is not a duration`},
		{"days are hours", "name: t\nduration: 7d\n", "t.yaml:2: duration: ", `"7d" is not a duration: units stop at hours (want 168h)`},
		{"a duration past the longest", "name: t\nduration: 100000000h\n", "t.yaml:2: duration: ", `100000000h is longer than any duration (want at most 2562047h)`},
		{"weeks are hours", "name: t\nduration: 2w\n", "t.yaml:2: duration: ", `(want 336h)`},
		{"duration zero", "name: t\nduration: 0s\n", "t.yaml:2: duration: ", "not positive"},
		{"duration negative", "name: t\nduration: -5s\n", "t.yaml:2: duration: ", "not positive"},
		{"duration missing", "name: t\nlimit: {rate: 1/s, burst: 1}\n", "t.yaml:1: duration: ", "missing (want e.g. duration: 30s)"},
		{"duration finer than a microsecond", "name: t\nduration: 1500ns\n", "t.yaml:2: duration: ", "finer than the simulator's microsecond"},
		{"never is not a duration", base + "topology: {rtt: never}\n", "t.yaml:6: topology.rtt: ", `"never" is not a duration`},
		{"step zero", "name: t\nduration: 30s\nstep: 0s\n", "t.yaml:3: step: ", "not positive"},
		{"step longer than the run", "name: t\nduration: 30s\nstep: 1m\n", "t.yaml:3: step: ", "longer than the duration"},
		// Rates.
		{"traffic rate past int64", noClients + "  - name: a\n    api_key: a\n    traffic: {pattern: constant, rate: 99999999999999999999/s}\n", "t.yaml:7: clients[0].traffic.rate: ", `"99999999999999999999/s" has too large a count (want at most 9223372036854775807 a period, e.g. 100/s)`},
		{"traffic rate not a rate", noClients + "  - name: a\n    api_key: a\n    traffic: {pattern: constant, rate: fast}\n", "t.yaml:7: clients[0].traffic.rate: ", `"fast" is not a rate (want e.g. 100/s)`},
		{"limit rate unknown unit", "name: t\nduration: 30s\nlimit: {rate: 10/fortnight, burst: 1}\n", "t.yaml:3: limit.rate: ", `unknown unit "fortnight"`},
		{"limit rate zero", "name: t\nduration: 30s\nlimit: {rate: 0/s, burst: 1}\n", "t.yaml:3: limit.rate: ", "not a positive rate"},
		{"limit rate missing", "name: t\nduration: 30s\nlimit: {burst: 1}\n", "t.yaml:3: limit.rate: ", "missing (want e.g. rate: 10/s)"},
		// Enumerations.
		{"balancer", base + "balancer: round-robbin\n", "t.yaml:6: balancer: ", `unknown balancer "round-robbin", did you mean "round-robin"?`},
		{"algorithm", "name: t\nduration: 30s\nlimit: {algorithm: token-bukket, rate: 1/s, burst: 1}\n", "t.yaml:3: limit.algorithm: ", `did you mean "token-bucket"?`},
		{"key", "name: t\nduration: 30s\nlimit: {rate: 1/s, burst: 1, key: apikey}\n", "t.yaml:3: limit.key: ", `unknown key "apikey", did you mean "api-key"?`},
		{"topology kind", base + "topology: {kind: sharded}\n", "t.yaml:6: topology.kind: ", `unknown topology "sharded"`},
		{"store", base + "topology: {store: mem}\n", "t.yaml:6: topology.store: ", `unknown store "mem"`},
		{"store URL scheme", base + "topology: {store: 'http://localhost:6379'}\n", "t.yaml:6: topology.store: ", `unknown store URL scheme "http"`},
		{"store URL without host", base + "topology: {store: 'redis://'}\n", "t.yaml:6: topology.store: ", "names no host"},
		{"on_error", base + "topology: {on_error: fail-safe}\n", "t.yaml:6: topology.on_error: ", `unknown policy "fail-safe"`},
		{"clock", base + "topology: {clock: wall}\n", "t.yaml:6: topology.clock: ", `unknown clock "wall"`},
		{"pattern", noClients + "  - {name: a, api_key: a, traffic: {pattern: constnt, rate: 5/s}}\n", "t.yaml:5: clients[0].traffic.pattern: ", `did you mean "constant"?`},
		{"retry", noClients + "  - {name: a, api_key: a, traffic: {pattern: constant, rate: 5/s}, retry: sometimes}\n", "t.yaml:5: clients[0].retry: ", `unknown retry policy "sometimes"`},
		{"fault kind", base + "faults:\n  - {kind: earthquake, start: 1s, end: 2s}\n", "t.yaml:7: faults[0].kind: ", `unknown fault kind "earthquake"`},
		// Servers.
		{"servers zero", base + "servers: 0\n", "t.yaml:6: servers: ", "0 is too small (want at least 1)"},
		{"servers too many", base + "servers: 1025\n", "t.yaml:6: servers: ", "1025 is too large (want at most 1024)"},
		// Past uint64, YAML reads digits as a float: a whole number still.
		{"servers past uint64", base + "servers: 99999999999999999999\n", "t.yaml:6: servers: ", "99999999999999999999 is too large (want at most 1024)"},
		{"servers past -int64", base + "servers: -99999999999999999999\n", "t.yaml:6: servers: ", "-99999999999999999999 is too small (want at least 1)"},
		{"servers a fraction", base + "servers: 2.5\n", "t.yaml:6: servers: ", "is not a whole number"},
		{"servers not a number", base + "servers: four\n", "t.yaml:6: servers: ", `"four" is not a whole number`},
		// Partition groups.
		{"group names a server out of range", base + "servers: 4\nfaults:\n  - {kind: partition, start: 1s, end: 2s, groups: [[0, 1], [2, 4]]}\n", "t.yaml:8: faults[0].groups[1][1]: ", "server 4 does not exist (want 0 to 3"},
		{"group names a server twice", base + "servers: 4\nfaults:\n  - {kind: partition, start: 1s, end: 2s, groups: [[0, 1], [1, 2, 3]]}\n", "t.yaml:8: faults[0].groups[1][0]: ", "server 1 is already in faults[0].groups[0]"},
		{"group repeats a server", base + "servers: 4\nfaults:\n  - {kind: partition, start: 1s, end: 2s, groups: [[0, 0], [1, 2, 3]]}\n", "t.yaml:8: faults[0].groups[0][1]: ", "server 0 is listed twice"},
		{"servers in no group", base + "servers: 4\nfaults:\n  - {kind: partition, start: 1s, end: 2s, groups: [[0], [1]]}\n", "t.yaml:8: faults[0].groups: ", "servers 2 and 3 are in no group"},
		{"one group", base + "servers: 4\nfaults:\n  - {kind: partition, start: 1s, end: 2s, groups: [[0, 1, 2, 3]]}\n", "t.yaml:8: faults[0].groups: ", "want at least two groups"},
		{"empty group", base + "servers: 2\nfaults:\n  - {kind: partition, start: 1s, end: 2s, groups: [[0, 1], []]}\n", "t.yaml:8: faults[0].groups[1]: ", "empty group"},
		{"partition without groups", base + "faults:\n  - {kind: partition, start: 1s, end: 2s}\n", "t.yaml:7: faults[0].groups: ", "missing"},
		// Fault windows.
		{"fault starts before 0", base + "faults:\n  - {kind: outage, start: -1s, end: 2s}\n", "t.yaml:7: faults[0].start: ", "-1s is negative"},
		{"fault ends before it starts", base + "faults:\n  - {kind: outage, start: 3s, end: 2s}\n", "t.yaml:7: faults[0].end: ", "2s is not after start 3s"},
		{"fault ends when it starts", base + "faults:\n  - {kind: outage, start: 3s, end: 3s}\n", "t.yaml:7: faults[0].end: ", "3s is not after start 3s"},
		{"fault ends after the run", base + "faults:\n  - {kind: outage, start: 3s, end: 31s}\n", "t.yaml:7: faults[0].end: ", "after the end of the run"},
		{"fault without end", base + "faults:\n  - {kind: outage, start: 3s}\n", "t.yaml:7: faults[0].end: ", "missing"},
		{"faults of one kind overlap", base + "faults:\n  - {kind: outage, start: 3s, end: 10s}\n  - {kind: latency, start: 5s, end: 15s, rtt: 5ms}\n  - {kind: outage, start: 9s, end: 15s}\n", "t.yaml:9: faults[2]: ", "overlaps faults[0], outage from 3s to 10s"},
		{"field of another fault kind", base + "faults:\n  - {kind: outage, start: 3s, end: 10s, rtt: 5ms}\n", "t.yaml:7: faults[0].rtt: ", "not a field of fault kind outage"},
		{"latency without rtt", base + "faults:\n  - {kind: latency, start: 3s, end: 10s}\n", "t.yaml:7: faults[0].rtt: ", "missing"},
		{"clock skew without skew", base + "faults:\n  - {kind: clock-skew, start: 3s, end: 10s}\n", "t.yaml:7: faults[0]: ", "needs an offset, a drift or both"},
		{"clock skew drift too large", base + "faults:\n  - {kind: clock-skew, start: 3s, end: 10s, drift: 2}\n", "t.yaml:7: faults[0].drift: ", "want -1 to 1"},
		{"clock skew server out of range", base + "faults:\n  - {kind: clock-skew, start: 3s, end: 10s, offset: 1s, servers: [1]}\n", "t.yaml:7: faults[0].servers[0]: ", "server 1 does not exist (want 0 to 0"},
		// Limit parameters, as algorithms.New judges them.
		{"burst zero", "name: t\nduration: 30s\nlimit:\n  rate: 10/s\n  burst: 0\n", "t.yaml:5: limit.burst: ", "0 is too small (want at least 1)"},
		{"burst missing", "name: t\nduration: 30s\nlimit:\n  rate: 10/s\n", "t.yaml:4: limit.burst: ", "missing: token-bucket needs a burst"},
		// The peers' own parameters, and where they may not run.
		{"nginx rate per hour", "name: t\nduration: 30s\nlimit:\n  algorithm: nginx-limit-req\n  rate: 5000/h\n  burst: 5\n", "t.yaml:5: limit.rate: ", "(r/s, r/m)"},
		{"nginx delay and nodelay", "name: t\nduration: 30s\nlimit:\n  algorithm: nginx-limit-req\n  rate: 1/s\n  burst: 5\n  delay: 3\n  nodelay: true\n", "t.yaml:7: limit.delay: ", "nodelay"},
		{"nodelay not a boolean", "name: t\nduration: 30s\nlimit:\n  algorithm: nginx-limit-req\n  rate: 1/s\n  burst: 5\n  nodelay: yes please\n", "t.yaml:7: limit.nodelay: ", "true or false"},
		{"envoy window not a unit", "name: t\nduration: 30s\nlimit:\n  algorithm: envoy-ratelimit\n  rate: 10/s\n  window: 2s\n", "t.yaml:6: limit.window: ", "2s is not a unit envoy counts in"},
		{"peer on miniredis", "name: t\nduration: 30s\nlimit: {algorithm: redis_rate, rate: 10/s, burst: 5}\ntopology: {store: miniredis}\n", "t.yaml:4: topology.store: ", "memory store only"},
		{"shadow not a boolean", "name: t\nduration: 30s\nlimit:\n  rate: 10/s\n  burst: 5\n  shadow: maybe\n", "t.yaml:6: limit.shadow: ", "true or false"},
		{"shadow without until", "name: t\nduration: 30s\nlimit:\n  rate: 10/s\n  burst: 5\n  shadow: {}\n", "t.yaml:6: limit.shadow.until: ", "missing"},
		{"shadow until negative", "name: t\nduration: 30s\nlimit:\n  rate: 10/s\n  burst: 5\n  shadow: {until: -1s}\n", "t.yaml:6: limit.shadow.until: ", ""},
		{"limit and limits", "name: t\nduration: 30s\nlimit: {rate: 10/s, burst: 5}\nlimits:\n  - {name: a, rate: 10/s, burst: 5}\n", "t.yaml:4: limits: ", "not both"},
		{"limits not a list", "name: t\nduration: 30s\nlimits: {rate: 10/s, burst: 5}\n", "t.yaml:3: limits: ", "a list of limits"},
		{"limits empty", "name: t\nduration: 30s\nlimits: []\n", "t.yaml:3: limits: ", "0 limits"},
		{"limits unnamed", "name: t\nduration: 30s\nlimits:\n  - {name: a, rate: 10/s, burst: 5}\n  - {rate: 1000/h, algorithm: fixed-window, window: 1h}\n", "t.yaml:5: limits[1].name: ", "missing"},
		{"limits named twice", "name: t\nduration: 30s\nlimits:\n  - {name: a, rate: 10/s, burst: 5}\n  - {name: a, rate: 1000/h, algorithm: fixed-window, window: 1h}\n", "t.yaml:5: limits[1].name: ", "distinct"},
		{"limits name not ASCII", "name: t\nduration: 30s\nlimits:\n  - {name: \"heure\u00e9\", rate: 10/s, burst: 5}\n  - {name: a, rate: 1000/h, algorithm: fixed-window, window: 1h}\n", "t.yaml:4: limits[0].name: ", "printable ASCII"},
		{"limits second key", "name: t\nduration: 30s\nlimits:\n  - {name: a, rate: 10/s, burst: 5, key: ip}\n  - {name: b, rate: 1000/h, algorithm: fixed-window, window: 1h, key: user}\n", "t.yaml:5: limits[1].key: ", "limits[0] only"},
		{"limits bad rate", "name: t\nduration: 30s\nlimits:\n  - {name: a, rate: 10/s, burst: 5}\n  - {name: b, rate: 0/h, algorithm: fixed-window, window: 1h}\n", "t.yaml:5: limits[1].rate: ", ""},
		{"limits too many", "name: t\nduration: 30s\nlimits:\n" + strings.Repeat("  - {rate: 10/s, burst: 5}\n", 9), "t.yaml:4: limits: ", "9 limits"},
		{"client cost zero", "name: t\nduration: 30s\nlimit: {rate: 10/s, burst: 5}\nclients:\n  - {name: a, ip: 10.0.0.1, cost: 0, traffic: {pattern: constant, rate: 1/s}}\n", "t.yaml:5: clients[0].cost: ", ""},
		{"concurrency with a rate", "name: t\nduration: 30s\nlimit: {algorithm: concurrency, rate: 10/s, max_in_flight: 5, lease_ttl: 10s}\n", "t.yaml:3: limit.rate: ", "in flight"},
		{"concurrency missing max", "name: t\nduration: 30s\nlimit: {algorithm: concurrency, lease_ttl: 10s}\n", "t.yaml:3: limit.max_in_flight: ", "missing"},
		{"max_in_flight on a bucket", "name: t\nduration: 30s\nlimit: {rate: 10/s, burst: 5, max_in_flight: 5}\n", "t.yaml:3: limit.max_in_flight: ", "algorithm: concurrency"},
		{"concurrency on racy", "name: t\nduration: 30s\nlimit: {algorithm: concurrency, max_in_flight: 5, lease_ttl: 10s}\ntopology: {kind: racy}\n", "t.yaml:4: topology.kind: ", "local or shared"},
		{"crash of every server", "name: t\nduration: 30s\nservers: 2\nlimit: {rate: 10/s, burst: 5}\nclients:\n  - {name: a, ip: 10.0.0.1, traffic: {pattern: constant, rate: 1/s}}\nfaults:\n  - {kind: crash, servers: [0, 1], start: 5s, end: 6s}\n", "t.yaml:8: faults[0].servers: ", "no one is left"},
		{"crash without servers", "name: t\nduration: 30s\nservers: 2\nlimit: {rate: 10/s, burst: 5}\nclients:\n  - {name: a, ip: 10.0.0.1, traffic: {pattern: constant, rate: 1/s}}\nfaults:\n  - {kind: crash, start: 5s, end: 6s}\n", "t.yaml:8: faults[0].servers: ", "missing"},
		{"service too long", "name: t\nduration: 30s\nlimit: {rate: 10/s, burst: 5}\nclients:\n  - {name: a, ip: 10.0.0.1, service: 25h, traffic: {pattern: constant, rate: 1/s}}\n", "t.yaml:5: clients[0].service: ", "longer than"},
		{"service unknown dist", "name: t\nduration: 30s\nlimit: {rate: 10/s, burst: 5}\nclients:\n  - {name: a, ip: 10.0.0.1, service: {mean: 1s, dist: pareto}, traffic: {pattern: constant, rate: 1/s}}\n", "t.yaml:5: clients[0].service.dist: ", "pareto"},
		{"shedder without capacity", "name: t\nduration: 30s\nlimit: {rate: 10/s, burst: 5}\nshedder: {burst: 100}\n", "t.yaml:4: shedder.capacity: ", "missing"},
		{"shedder reserve over 1", "name: t\nduration: 30s\nlimit: {rate: 10/s, burst: 5}\nshedder: {capacity: 100/s, reserve: {normal: 1.5}}\n", "t.yaml:4: shedder.reserve.normal: ", "share"},
		// A share is reserved exactly on the decimal written
		// (algorithms.ReserveOf), which a float64 keeps to 15 significant
		// digits: this one is read as 0.29, 29 of 100, where it means 28.
		{"shedder share past a float's digits", "name: t\nduration: 30s\nlimit: {rate: 10/s, burst: 5}\nshedder: {capacity: 100/s, reserve: {normal: 0.28999999999999999999}}\n", "t.yaml:4: shedder.reserve.normal: ", "0.28999999999999999999 has more significant digits than a share keeps: it would be read as 0.29 (want at most 15 significant digits, e.g. 0.29)"},
		{"shedder share past a float's digits, above", "name: t\nduration: 30s\nlimit: {rate: 10/s, burst: 5}\nshedder: {capacity: 100/s, reserve: {sheddable: 0.2900000000000000001}}\n", "t.yaml:4: shedder.reserve.sheddable: ", "it would be read as 0.29"},
		{"shedder reserves inverted", "name: t\nduration: 30s\nlimit: {rate: 10/s, burst: 5}\nshedder: {capacity: 100/s, reserve: {normal: 0.6, sheddable: 0.5}}\n", "t.yaml:4: shedder: ", "reserve"},
		{"priority unknown", "name: t\nduration: 30s\nlimit: {rate: 10/s, burst: 5}\nclients:\n  - {name: a, ip: 10.0.0.1, priority: urgent, traffic: {pattern: constant, rate: 1/s}}\n", "t.yaml:5: clients[0].priority: ", "urgent"},
		{"wall clock not a time", "name: t\nduration: 30s\nwall_clock: noon\nlimit: {rate: 10/s, burst: 5}\n", "t.yaml:3: wall_clock: ", "is not a time"},
		{"wall clock before 1970", "name: t\nduration: 30s\nwall_clock: 1969-07-20T20:17:00Z\nlimit: {rate: 10/s, burst: 5}\n", "t.yaml:3: wall_clock: ", "out of range"},
		{"burst too large for the rate", "name: t\nduration: 30s\nlimit:\n  rate: 1/h\n  burst: 1000000000000\n", "t.yaml:5: limit.burst: ", "too large for this rate's period"},
		{"window missing", "name: t\nduration: 30s\nlimit:\n  algorithm: fixed-window\n  rate: 10/s\n", "t.yaml:4: limit.window: ", "missing: fixed-window needs a window"},
		{"window too short for the rate", "name: t\nduration: 30s\nlimit:\n  algorithm: sliding-log\n  rate: 1/m\n  window: 1s\n", "t.yaml:6: limit.window: ", "admits less than one request per window"},
		{"limit missing", "name: t\nduration: 30s\n", "t.yaml:1: limit: ", "missing"},
		// Topology.
		{"split-brain field on shared", base + "topology:\n  kind: shared\n  failover_after: 2s\n", "t.yaml:8: topology.failover_after: ", "only a split-brain topology has it"},
		{"split-brain field on the default kind", base + "topology:\n  replication_lag: 1s\n", "t.yaml:7: topology.replication_lag: ", "this one is shared"},
		{"split-brain field on local", base + "topology:\n  kind: local\n  primary_stops_after: 15s\n", "t.yaml:8: topology.primary_stops_after: ", "this one is local"},
		{"failover never on shared", base + "topology:\n  kind: shared\n  failover_after: never\n", "t.yaml:8: topology.failover_after: ", "only a split-brain topology has it"},
		{"failover a word", base + "topology:\n  kind: split-brain\n  failover_after: later\n", "t.yaml:8: topology.failover_after: ", "2s or never"},
		{"negative rtt", base + "topology: {rtt: -1ms}\n", "t.yaml:6: topology.rtt: ", "negative"},
		{"replication lag on shared", base + "topology:\n  kind: shared\n  replication_lag: 1s\n", "t.yaml:8: topology.replication_lag: ", "only a split-brain, cluster or regions topology has it"},
		{"cluster field on shared", base + "topology:\n  kind: shared\n  masters: 3\n", "t.yaml:8: topology.masters: ", "only a cluster topology has it"},
		{"masters out of range", base + "topology:\n  kind: cluster\n  masters: 65\n", "t.yaml:8: topology.masters: ", "65 is too large (want at most 64)"},
		{"replicas out of range", base + "topology:\n  kind: cluster\n  replicas: 6\n", "t.yaml:8: topology.replicas: ", "6 is too large (want at most 5)"},
		{"node timeout zero", base + "topology:\n  kind: cluster\n  node_timeout: 0s\n", "t.yaml:8: topology.node_timeout: ", "not positive"},
		{"node timeout past an hour", base + "topology:\n  kind: cluster\n  node_timeout: 2h\n", "t.yaml:8: topology.node_timeout: ", "at most 1h0m0s"},
		{"sync interval on a shared topology", base + "topology:\n  kind: shared\n  sync_interval: 100ms\n", "t.yaml:8: topology.sync_interval: ", "only a synced topology has it"},
		{"sync interval negative", base + "topology:\n  kind: synced\n  sync_interval: -5ms\n", "t.yaml:8: topology.sync_interval: ", "100ms, 0 (every request) or never"},
		{"sync interval past an hour", base + "topology:\n  kind: synced\n  sync_interval: 2h\n", "t.yaml:8: topology.sync_interval: ", "at most 1h0m0s"},
		{"a breaker on a synced topology", base + "topology:\n  kind: synced\n  breaker: {failures: 3, cooldown: 1s}\n", "t.yaml:8: topology.breaker: ", "its own memory"},
		{"a synced concurrency limit", "name: t\nduration: 30s\nlimit: {algorithm: concurrency, max_in_flight: 5, lease_ttl: 10s}\nclients:\n  - {name: a, api_key: a, traffic: {pattern: constant, rate: 1/s}}\ntopology: {kind: synced}\n", "t.yaml:6: topology.kind: ", "concurrency cannot count an admission decided elsewhere, which a synced topology's push must"},
		{"a two-tier topology without its local tier", base + "topology:\n  kind: two-tier\n", "t.yaml:7: topology.local: ", "missing"},
		{"a local tier on a shared topology", base + "topology:\n  kind: shared\n  local: {rate: 5/s, burst: 2}\n", "t.yaml:8: topology.local: ", "only a two-tier topology has it"},
		{"a local tier without its burst", base + "topology:\n  kind: two-tier\n  local: {rate: 5/s}\n", "t.yaml:8: topology.local.burst: ", "missing"},
		{"a local tier's burst of 0", base + "topology:\n  kind: two-tier\n  local: {rate: 5/s, burst: 0}\n", "t.yaml:8: topology.local.burst: ", "at least 1"},
		{"a breaker on a two-tier topology", base + "topology:\n  kind: two-tier\n  local: {rate: 5/s, burst: 2}\n  breaker: {failures: 3, cooldown: 1s}\n", "t.yaml:9: topology.breaker: ", "local tier decides before"},
		{"sync wait on a shared topology", base + "topology:\n  kind: shared\n  sync_wait: 50ms\n", "t.yaml:8: topology.sync_wait: ", "only an owner topology has it"},
		{"sync wait zero", base + "topology:\n  kind: owner\n  sync_wait: 0s\n", "t.yaml:8: topology.sync_wait: ", "not positive"},
		{"batch limit zero", base + "topology:\n  kind: owner\n  batch_limit: 0\n", "t.yaml:8: topology.batch_limit: ", "at least 1"},
		{"a concurrency limit on an owner topology", "name: t\nduration: 30s\nlimit: {algorithm: concurrency, max_in_flight: 5, lease_ttl: 10s}\nclients:\n  - {name: a, api_key: a, traffic: {pattern: constant, rate: 1/s}}\ntopology: {kind: owner}\n", "t.yaml:6: topology.kind: ", "concurrency cannot count an admission decided elsewhere, which an owner topology's batch of hits must"},
		{"regions missing", base + "topology:\n  kind: regions\n", "t.yaml:7: topology.regions: ", "missing"},
		{"regions on a shared topology", base + "topology:\n  kind: shared\n  regions: [{name: us, servers: 1}]\n", "t.yaml:8: topology.regions: ", "only a regions topology has them"},
		{"a region named twice", base + "topology:\n  kind: regions\n  regions: [{name: us, servers: 1}, {name: us, servers: 2}]\n", "t.yaml:8: topology.regions[1].name: ", "names an earlier region too"},
		{"a region without servers", base + "topology:\n  kind: regions\n  regions: [{name: us}]\n", "t.yaml:8: topology.regions[0].servers: ", "missing"},
		{"servers that the regions do not hold", "name: t\nduration: 30s\nservers: 3\nlimit: {rate: 10/s, burst: 20}\nclients:\n  - {name: a, api_key: a, region: us, traffic: {pattern: constant, rate: 5/s}}\ntopology:\n  kind: regions\n  regions: [{name: us, servers: 2}]\n", "t.yaml:3: servers: ", "the regions hold 2"},
		{"a client without its region", base + "topology:\n  kind: regions\n  regions: [{name: us, servers: 2}]\n", "t.yaml:5: clients[0].region: ", "missing"},
		{"a client in no region", "name: t\nduration: 30s\nlimit: {rate: 10/s, burst: 20}\nclients:\n  - {name: a, api_key: a, region: asia, traffic: {pattern: constant, rate: 5/s}}\ntopology:\n  kind: regions\n  regions: [{name: us, servers: 2}]\n", "t.yaml:5: clients[0].region: ", "asia"},
		{"a client's region on a shared topology", "name: t\nduration: 30s\nlimit: {rate: 10/s, burst: 20}\nclients:\n  - {name: a, api_key: a, region: us, traffic: {pattern: constant, rate: 5/s}}\n", "t.yaml:5: clients[0].region: ", "only a regions topology"},
		{"an outage of a region the topology lacks", "name: t\nduration: 30s\nlimit: {rate: 10/s, burst: 20}\nclients:\n  - {name: a, api_key: a, region: us, traffic: {pattern: constant, rate: 5/s}}\ntopology:\n  kind: regions\n  regions: [{name: us, servers: 2}]\nfaults:\n  - {kind: outage, start: 1s, end: 2s, region: eu}\n", "t.yaml:10: faults[0].region: ", "not a region of this topology (want us)"},
		{"regions that replicate on a peer that cannot be charged", "name: t\nduration: 30s\nlimit: {algorithm: redis_rate, rate: 10/s, burst: 20}\nclients:\n  - {name: a, api_key: a, region: us, traffic: {pattern: constant, rate: 5/s}}\ntopology:\n  kind: regions\n  regions: [{name: us, servers: 2}]\n  replication_lag: 100ms\n", "t.yaml:7: topology.kind: ", "redis_rate cannot count an admission decided elsewhere, which a region's replication must"},
		{"full coverage not a boolean", base + "topology:\n  kind: cluster\n  full_coverage: sometimes\n", "t.yaml:8: topology.full_coverage: ", "true or false"},
		{"timeout past a minute", base + "topology:\n  timeout: 2m\n", "t.yaml:7: topology.timeout: ", "want at most 1m0s"},
		{"breaker on local", base + "topology:\n  kind: local\n  breaker: {failures: 5, cooldown: 1s}\n", "t.yaml:8: topology.breaker: ", "no store call to break"},
		{"breaker without cooldown", base + "topology:\n  breaker: {failures: 5}\n", "t.yaml:7: topology.breaker.cooldown: ", "missing (want e.g. breaker: {failures: 5, cooldown: 1s})"},
		{"breaker of no failures", base + "topology:\n  breaker: {failures: 0, cooldown: 1s}\n", "t.yaml:7: topology.breaker.failures: ", "0 is too small"},
		{"a cluster partition before the last settles", base + "topology: {kind: cluster, node_timeout: 5s}\nfaults:\n  - {kind: partition, start: 1s, end: 10s, groups: [[0], []], nodes: [[], [s0-master]]}\n  - {kind: partition, start: 12s, end: 20s, groups: [[0], []], nodes: [[], [s1-master]]}\n", "t.yaml:9: faults[1]: ", "before the one from 1s to 10s has settled: its failure detection, election, FAIL's undoing and rejoin delay run until 17s (want it to start at 17s or later)"},
		{"partition nodes on local", base + "topology: {kind: local}\nfaults:\n  - {kind: partition, start: 1s, end: 2s, groups: [[0], []], nodes: [[], [server-0]]}\n", "t.yaml:8: faults[0].nodes: ", "no store node to place"},
		{"partition node unknown", base + "topology: {kind: cluster}\nfaults:\n  - {kind: partition, start: 1s, end: 2s, groups: [[0], []], nodes: [[], [s7-master]]}\n", "t.yaml:8: faults[0].nodes[1][0]: ", `no store node is called "s7-master" (want s0-master, s0-replica, s1-master, s1-replica, s2-master or s2-replica)`},
		// Clients and traffic.
		{"no clients", "name: t\nduration: 30s\nlimit: {rate: 10/s, burst: 20}\nclients: []\n", "t.yaml:4: clients: ", "empty (want at least one client)"},
		{"clients missing", "name: t\nduration: 30s\nlimit: {rate: 10/s, burst: 20}\n", "t.yaml:1: clients: ", "missing"},
		{"client without traffic", noClients + "  - name: a\n    api_key: a\n", "t.yaml:5: clients[0].traffic: ", "missing: the client sends nothing"},
		{"client with empty traffic", noClients + "  - name: a\n    api_key: a\n    traffic: []\n", "t.yaml:7: clients[0].traffic: ", "empty: the client sends nothing"},
		{"client without name", noClients + "  - {api_key: a, traffic: {pattern: constant, rate: 5/s}}\n", "t.yaml:5: clients[0].name: ", "missing"},
		{"client without identity", noClients + "  - {name: a, traffic: {pattern: constant, rate: 5/s}}\n", "t.yaml:5: clients[0]: ", "no api_key, user or ip"},
		{"client without the key's identity", "name: t\nduration: 30s\nlimit: {rate: 10/s, burst: 20, key: ip}\nclients:\n  - {name: a, api_key: a, traffic: {pattern: constant, rate: 5/s}}\n", "t.yaml:5: clients[0].ip: ", "missing, and limit.key is ip"},
		{"field of another pattern", noClients + "  - {name: a, api_key: a, traffic: {pattern: constant, rate: 5/s, count: 3}}\n", "t.yaml:5: clients[0].traffic.count: ", "not a field of pattern constant (want rate, start, stop or cost)"},
		{"field of another pattern in a list", noClients + "  - name: a\n    api_key: a\n    traffic:\n      - {pattern: constant, rate: 5/s}\n      - {pattern: burst, count: 3, at: 1s, rate: 5/s}\n", "t.yaml:9: clients[0].traffic[1].rate: ", "not a field of pattern burst"},
		{"pattern missing its field", noClients + "  - {name: a, api_key: a, traffic: {pattern: burst, count: 3}}\n", "t.yaml:5: clients[0].traffic.at: ", "missing: pattern burst needs it"},
		{"burst at the end of the run", noClients + "  - {name: a, api_key: a, traffic: {pattern: burst, count: 3, at: 30s}}\n", "t.yaml:5: clients[0].traffic.at: ", "30s is not within the run"},
		{"burst spread past the end", noClients + "  - {name: a, api_key: a, traffic: {pattern: burst, count: 3, at: 29s, spread: 2s}}\n", "t.yaml:5: clients[0].traffic.spread: ", "ends after the run"},
		{"burst count zero", noClients + "  - {name: a, api_key: a, traffic: {pattern: burst, count: 0, at: 3s}}\n", "t.yaml:5: clients[0].traffic.count: ", "0 is too small"},
		{"start after the end", noClients + "  - {name: a, api_key: a, traffic: {pattern: constant, rate: 5/s, start: 40s}}\n", "t.yaml:5: clients[0].traffic.start: ", "not within the run"},
		{"stop before start", noClients + "  - {name: a, api_key: a, traffic: {pattern: constant, rate: 5/s, start: 10s, stop: 5s}}\n", "t.yaml:5: clients[0].traffic.stop: ", "5s is not after start 10s"},
		{"stop after the end", noClients + "  - {name: a, api_key: a, traffic: {pattern: constant, rate: 5/s, stop: 31s}}\n", "t.yaml:5: clients[0].traffic.stop: ", "after the end of the run"},
		{"cost zero", noClients + "  - {name: a, api_key: a, traffic: {pattern: constant, rate: 5/s, cost: 0}}\n", "t.yaml:5: clients[0].traffic.cost: ", "0 is too small"},
		{"ramp from nothing to nothing", noClients + "  - {name: a, api_key: a, traffic: {pattern: ramp, from: 0, to: 0/s}}\n", "t.yaml:5: clients[0].traffic.to: ", "a ramp from 0 to 0 sends nothing"},
		{"on-off without off", noClients + "  - {name: a, api_key: a, traffic: {pattern: on-off, rate: 5/s, on: 1s}}\n", "t.yaml:5: clients[0].traffic.off: ", "missing"},
		{"count zero", noClients + "  - name: a-{i}\n    count: 0\n    api_key: a\n    traffic: {pattern: constant, rate: 5/s}\n", "t.yaml:6: clients[0].count: ", "0 is too small (want at least 1)"},
		{"count too large", noClients + "  - name: a-{i}\n    count: 1000001\n    api_key: a\n    traffic: {pattern: constant, rate: 5/s}\n", "t.yaml:6: clients[0].count: ", "1000001 is too large"},
		{"count without {i}", noClients + "  - name: a\n    count: 3\n    api_key: a\n    traffic: {pattern: constant, rate: 5/s}\n", "t.yaml:5: clients[0].name: ", `with count 3 every client is named "a" (want {i} in the name`},
		{"duplicate after expansion", noClients + "  - name: a-{i}\n    count: 3\n    api_key: a\n    traffic: {pattern: constant, rate: 5/s}\n  - name: a-2\n    api_key: b\n    traffic: {pattern: constant, rate: 5/s}\n", "t.yaml:9: clients[1].name: ", `"a-2" is also the name of clients[0]`},
		{"retry base without backoff", noClients + "  - {name: a, api_key: a, traffic: {pattern: constant, rate: 5/s}, retry: {policy: immediate, base: 1s}}\n", "t.yaml:5: clients[0].retry.base: ", "only policy backoff"},
		{"retry max with none", noClients + "  - {name: a, api_key: a, traffic: {pattern: constant, rate: 5/s}, retry: {policy: none, max: 3}}\n", "t.yaml:5: clients[0].retry.max: ", "policy none never retries"},
		{"retry cap below base", noClients + "  - {name: a, api_key: a, traffic: {pattern: constant, rate: 5/s}, retry: {policy: backoff, base: 2s, cap: 1s}}\n", "t.yaml:5: clients[0].retry.cap: ", "below the base"},
		{"retry without policy", noClients + "  - {name: a, api_key: a, traffic: {pattern: constant, rate: 5/s}, retry: {max: 3}}\n", "t.yaml:5: clients[0].retry.policy: ", "missing"},
		// Expectations.
		{"two figures", base + "expect:\n  - {client: a, rejected: {max: 0}, allowed: {min: 1}}\n", "t.yaml:7: expect[0].allowed: ", "a second figure after rejected"},
		{"no figure", base + "expect:\n  - {client: a}\n", "t.yaml:7: expect[0]: ", "no figure to check"},
		{"round trip too long", strings.Replace(base, "limit:", "topology: {kind: shared, rtt: 100000h}\nlimit:", 1), "t.yaml:3: topology.rtt: ", "want at most 1m0s"},
		// Findings and the lesson.
		{"unknown finding", base + "expect:\n  - {finding: over-admited}\n", "t.yaml:7: expect[0].finding: ", `did you mean "over-admitted"?`},
		{"finding with a figure", base + "expect:\n  - {finding: exact, rejected: {max: 0}}\n", "t.yaml:7: expect[0].rejected: ", "has no figure to bound"},
		{"finding about no such client", base + "expect:\n  - {finding: retries-wasted, client: b}\n", "t.yaml:7: expect[0].client: ", `"b" matches no client`},
		{"finding about a client, of a key's kind", base + "expect:\n  - {finding: lost-under-share, client: a}\n", "t.yaml:7: expect[0].client: ", "a lost-under-share finding is not about a client (want about a key: key: NAME)"},
		{"finding about a key, of the run's kind", base + "expect:\n  - {finding: isolated, key: a}\n", "t.yaml:7: expect[0].key: ", "it is about the whole run"},
		{"finding over a span", base + "expect:\n  - {finding: exact, during: {from: 1s}}\n", "t.yaml:7: expect[0].during: ", "has no figure to bound"},
		{"unknown lesson", "lesson: boundary\n" + base, "t.yaml:1: lesson: ", `unknown finding "boundary" (want no-answer, failed-closed, failed-open`},
		{"lesson not a name", "lesson: [exact]\n" + base, "t.yaml:1: lesson: ", "a finding"},
		{"unknown figure", base + "expect:\n  - {client: a, rejectd: {max: 0}}\n", "t.yaml:7: expect[0].rejectd: ", `did you mean "rejected"?`},
		{"bounds not a mapping", base + "expect:\n  - {client: a, rejected: 0}\n", "t.yaml:7: expect[0].rejected: ", "0 is not a mapping (want a mapping of min, max or equals"},
		{"no bound", base + "expect:\n  - {client: a, rejected: {}}\n", "t.yaml:7: expect[0].rejected: ", "no bound"},
		{"unknown bound", base + "expect:\n  - {client: a, rejected: {mx: 0}}\n", "t.yaml:7: expect[0].rejected.mx: ", `did you mean "max"?`},
		{"min above max", base + "expect:\n  - {client: a, rejected: {min: 5, max: 1}}\n", "t.yaml:7: expect[0].rejected.max: ", "1 is below min 5 (want min ≤ max)"},
		{"equals with a bound", base + "expect:\n  - {client: a, rejected: {min: 1, equals: 2}}\n", "t.yaml:7: expect[0].rejected.equals: ", "equals with min or max"},
		{"negative bound", base + "expect:\n  - {client: a, rejected: {max: -1}}\n", "t.yaml:7: expect[0].rejected.max: ", "negative"},
		{"rate bound not a rate", base + "expect:\n  - {client: a, allowed_rate: {max: fast}}\n", "t.yaml:7: expect[0].allowed_rate.max: ", `"fast" is not a rate`},
		{"no subject", base + "expect:\n  - {rejected: {max: 0}}\n", "t.yaml:7: expect[0].client: ", "missing: whose figure is it?"},
		{"client and key", base + "expect:\n  - {client: a, key: a, rejected: {max: 0}}\n", "t.yaml:7: expect[0].key: ", "not both"},
		{"client matches nothing", base + "expect:\n  - {client: \"b-*\", rejected: {max: 0}}\n", "t.yaml:7: expect[0].client: ", `"b-*" matches no client`},
		{"bad glob", base + "expect:\n  - {client: \"a[\", rejected: {max: 0}}\n", "t.yaml:7: expect[0].client: ", "not a valid glob"},
		{"key matches nothing", base + "expect:\n  - {key: web, rejected: {max: 0}}\n", "t.yaml:7: expect[0].key: ", `"web" matches no key`},
		{"figure a key does not have", base + "expect:\n  - {key: a, p99_ms: {max: 1}}\n", "t.yaml:7: expect[0].p99_ms: ", "a key has no p99_ms"},
		{"during on a whole-run figure", base + "expect:\n  - {client: a, max_allowed_1s: {max: 1}, during: {from: 1s}}\n", "t.yaml:7: expect[0].during: ", "a figure of the whole run only"},
		{"during past the end", base + "expect:\n  - {client: a, allowed: {max: 1}, during: {from: 1s, to: 31s}}\n", "t.yaml:7: expect[0].during.to: ", "after the end of the run"},
		{"during empty", base + "expect:\n  - {client: a, allowed: {max: 1}, during: {from: 5s, to: 5s}}\n", "t.yaml:7: expect[0].during.to: ", "is empty"},
		{"with an unknown flag", base + "expect:\n  - {client: a, allowed: {max: 1}, with: {colour: red}}\n", "t.yaml:7: expect[0].with.colour: ", "unknown field (want algorithm, topology"},
		{"with an algorithm the limit does not suit", strings.Replace(base, "rate: 10/s", "rate: 30/m", 1) + "expect:\n  - {client: a, allowed: {max: 1}, with: {algorithm: fixed-window}}\n", "t.yaml:7: expect[0].with.algorithm: ", "fixed-window cannot use this file's limit: window: 1s at 30/m admits less than one"},
		{"with a bad policy", base + "expect:\n  - {client: a, allowed: {max: 1}, with: {on_error: fail-safe}}\n", "t.yaml:7: expect[0].with.on_error: ", `unknown policy "fail-safe"`},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		if seen[tt.name] {
			t.Fatalf("two cases named %q", tt.name)
		}
		seen[tt.name] = true
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse("t.yaml", []byte(tt.yaml))
			if err == nil {
				t.Fatalf("no error; parsed %+v", f.Scenario)
			}
			got := err.Error()
			if !strings.HasPrefix(got, tt.want) || !strings.Contains(got, tt.msg) {
				t.Errorf("error\n\t%s\nwant it to start %q and say %q", got, tt.want, tt.msg)
			}
			if !strings.Contains(got, "(want ") {
				t.Errorf("error %q does not say what to write instead (want ...)", got)
			}
			var e *Error
			if !errors.As(err, &e) || e.File != "t.yaml" || e.Line < 1 {
				t.Errorf("error %#v is not an *Error with the file and a line", err)
			}
		})
	}
}

// The brief's own example, to the letter.
func TestParseErrorExample(t *testing.T) {
	src := "name: runaway\nduration: 30s\nlimit: {rate: 10/s, burst: 50}\nclients:\n  - {name: a, api_key: a, traffic: {pattern: constant, rate: 1/s}}\n" +
		"  - name: b\n    api_key: b\n    traffic: {pattern: constant, rate: fast}\n"
	_, err := Parse("runaway.yaml", []byte(src))
	want := `runaway.yaml:8: clients[1].traffic.rate: "fast" is not a rate (want e.g. 100/s)`
	if err == nil || err.Error() != want {
		t.Fatalf("error %v, want %s", err, want)
	}
}

func TestErrorFormatsWhatItHas(t *testing.T) {
	for _, tt := range []struct {
		e    Error
		want string
	}{
		{Error{File: "a.yaml", Line: 3, Field: "servers", Msg: "m"}, "a.yaml:3: servers: m"},
		{Error{File: "a.yaml", Line: 3, Msg: "m"}, "a.yaml:3: m"},
		{Error{File: "a.yaml", Msg: "m"}, "a.yaml: m"},
		{Error{Msg: "m"}, "m"},
	} {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("%#v.Error() = %q, want %q", tt.e, got, tt.want)
		}
	}
}

func TestSuggest(t *testing.T) {
	fields := []string{"name", "count", "api_key", "user", "ip", "traffic", "retry"}
	for _, tt := range []struct{ got, want string }{
		{"trafic", "traffic"},
		{"apikey", "api_key"},
		{"API-KEY", "api_key"},
		{"nmae", "name"},
		{"colour", ""},
		{"x", ""},
		{"", ""},
	} {
		if s := suggest(tt.got, fields); s != tt.want {
			t.Errorf("suggest(%q) = %q, want %q", tt.got, s, tt.want)
		}
	}
}

// A share is taken in any form YAML writes a number in, however many
// digits, when it is the decimal the simulator reserves on; its tokens are
// then the written decimal times the burst, rounded down, exactly.
func TestShedderShareExact(t *testing.T) {
	for _, tt := range []struct {
		share  string
		tokens int64 // of a burst of 100
	}{
		{"0.29", 29},
		{"0.290000000000000000000", 29}, // trailing zeros: the same decimal
		{"2.9e-1", 29},
		{".29", 29},
		{"0", 0},
		{"0.123456789012345", 12}, // 15 significant digits
		{"0.999", 99},
	} {
		data := "name: t\nduration: 30s\nlimit: {rate: 10/s, burst: 5}\nshedder: {capacity: 100/s, burst: 100, reserve: {normal: " + tt.share + ", sheddable: 0.9999}}\nclients: [{name: a, ip: 1.2.3.4, traffic: {pattern: constant, rate: 1/s}}]\n"
		f, err := Parse("t.yaml", []byte(data))
		if err != nil {
			t.Errorf("share %s: %v", tt.share, err)
			continue
		}
		exact, ok := new(big.Rat).SetString(tt.share)
		if !ok {
			t.Fatalf("share %s is no decimal", tt.share)
		}
		want := new(big.Int).Quo(new(big.Int).Mul(exact.Num(), big.NewInt(100)), exact.Denom()).Int64()
		if got := algorithms.ReserveOf(100, f.Scenario.Shedder.Reserve[1]); got != tt.tokens || got != want {
			t.Errorf("share %s of 100: %d tokens, want %d (exactly %d)", tt.share, got, tt.tokens, want)
		}
	}
}
