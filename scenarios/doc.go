// Package scenarios reads ratelim's scenario files: YAML that describes
// clients, a limit, where its counter lives and what goes wrong, checked
// strictly and turned into a [sim.Scenario] ready to simulate, with the
// file's expectations beside it.
//
// A scenario is read with [Load] (a path), [Parse] (bytes) or [Open] (a
// built-in name, else a path). The built-ins are embedded YAML files,
// written to be copied and edited: [Builtin] lists them, and `ratelim
// scenarios show NAME` prints one.
//
// # Errors
//
// Nothing is guessed. An unknown field, a misspelt name, a rate without a
// unit that means something else, a fault after the end of the run: each is
// an [*Error] that says where and what to write instead, in one line:
//
//	runaway.yaml:14: clients[1].traffic.rate: "fast" is not a rate (want e.g. 100/s)
//	runaway.yaml:9: topology.on-error: unknown field, did you mean "on_error"? (want kind, store, ...)
//
// List indexes count from 0, as servers do, and refer to the entries as
// written (clients[1] is the second entry, whatever count expands).
// Parse reports the first error it meets; sections are read in the order
// below, so that each is checked against what it depends on.
//
// # Format
//
// An annotated file follows. Every field, with what it holds and what it
// means, is in the reference (`ratelim scenarios reference`, [Reference]),
// and editors check a file against the JSON Schema (`ratelim scenarios
// schema`, [Schema]); both are written from the field table the parser
// reads each mapping through (fields.go), so that neither can name a field
// the parser does not take.
//
//	name: runaway-healthcheck     # default: the file's name without .yaml
//	summary: what it teaches      # one line, for `ratelim scenarios`
//	lesson: isolated              # the finding that must lead (see sim.FindingKinds())
//	question:                     # what to ask a class before the run (Question)
//	  ask: "How many of bastion-1's requests get through from {clients[bastion-{i}].traffic.start}?"
//	  figure: allowed             # a figure, as expect: names it
//	  client: bastion-1           # or key: KEY; or pick: most | least, for which client
//	duration: 30s                 # required; Go durations: 950ms, 1.5s, 2m
//	seed: 1                       # the run's one random source
//	step: 1s                      # the timeline's resolution
//	servers: 4                    # API servers, numbered from 0; 1 to 1024
//	balancer: round-robin         # round-robin | random | key-hash
//	wall_clock: 2026-12-01T00:00:00Z  # the instant virtual 0 stands for (the default;
//	                              # a trace's is its log's); fixed and sliding windows
//	                              # align to it, and the peer models that keep
//	                              # wall-clock time (redis_rate, envoy) read it
//	limit:
//	  algorithm: token-bucket     # any name from `ratelim algorithms`
//	  rate: 10/s                  # N/s, N/m, N/h, N/500ms; a bare N is per second
//	  burst: 50                   # bucket size: token-bucket, gcra, leaky-bucket
//	  window: 1s                  # fixed-window, sliding-log, sliding-window
//	  delay: 8                    # nginx-limit-req only: delay=8, or nodelay: true
//	  shadow: {until: 15s}        # shadow mode (decide, count would_reject, refuse
//	                              # nothing) until 15s, then enforce; true: the whole run
//	  key: auto                   # auto (api_key, else user, else ip) | api-key | user | ip
//	topology:
//	  kind: shared                # local | shared | racy | split-brain | cluster
//	  store: memory               # memory | miniredis | redis://host:port | redis+cluster://h:p,h:p
//	  rtt: 500us                  # one store round trip
//	  on_error: fail-open         # fail-open | fail-closed
//	  clock: server               # server | store
//	  replication_lag: 0s         # split-brain only, as are the next two (elsewhere
//	                              # an error unless left at the default)
//	  failover_after: 0s          # a duration, or never
//	  primary_stops_after: never  # a duration, or never
//	  timeout: 0s                 # a server's wait for a store that does not
//	                              # answer; 0 at once (a cluster's default: 100ms)
//	  breaker: {failures: 5, cooldown: 1s}  # a circuit breaker per server
//	  # cluster only (Redis Cluster): masters: 3, replicas: 1,
//	  # node_timeout: 15s, full_coverage: true
//	clients:
//	  - name: bastion-{i}         # {i} is 1..count, in name, api_key, user and ip
//	    count: 8
//	    api_key: bastion-{i}
//	    user: ops
//	    ip: 10.0.0.{i}
//	    traffic: {pattern: constant, rate: 1000/s, start: 5s, stop: 25s}
//	    retry: none               # or {policy: backoff, base: 100ms, cap: 5s, max: 8}
//	faults:
//	  - {kind: outage, start: 22s, end: 25s}
//	expect:
//	  - {client: "bastion-*", allowed: {max: 260}}
//	  - {finding: over-admitted, with: {topology: local}}
//
// A finding expectation claims that the run shows a lesson, one of its
// computed findings (optionally about a client or key); lesson: claims the
// one the run leads with. Both are checked by `ratelim check` like any
// expect: line, so a built-in's teaching point is pinned by name.
//
// In a flow mapping ({...} on one line), quote a value with braces in it:
// {name: "bastion-{i}"}, as YAML would otherwise read {i} as a mapping.
//
// traffic is one pattern or a list of them, superposed. Each pattern takes
// only its own fields:
//
//	constant, poisson  rate; start, stop
//	burst              count, at; spread (count arrivals evenly over it)
//	ramp               from, to (either may be 0); start, stop
//	on-off             rate, on, off; start, stop
//
// and any of them cost (tokens per request). retry is none, immediate
// (again at once), retry-after (after the 429's Retry-After) or backoff
// (exponential, with full jitter), as a word or as a mapping with policy
// and, for backoff, base and cap; max is the most retries of one request.
//
// Faults take kind, start and end (start < end ≤ duration; two of one kind
// may not overlap) and their kind's fields: partition groups (at least two,
// together naming every server exactly once; groups[0] keeps the primary)
// and nodes (a list per group of the store's nodes on its side, by the
// names the topology gives them: primary and replica, or a cluster's
// s0-master, s0-replica, …; a node no group names is with groups[0], a
// split brain's replica with groups[1]; a group may hold no server if it
// holds nodes), latency rtt, clock-skew offset and/or drift (seconds gained per second,
// -1 to 1) and servers (all if left out). outage takes nothing more.
//
// A cluster topology is Redis Cluster: masters (default 3) each own a
// range of the 16,384 hash slots (a key's slot is CRC16 of the key, or of
// its {hash tag}, mod 16,384), each with replicas (default 1). In a
// partition a side without a majority of masters fences after
// node_timeout (default 15s: every key answers CLUSTERDOWN); the majority
// side marks a cut-off master FAIL about then and elects one of its
// replicas on that side (500 ms + up to 700 ms later); with full_coverage
// (the default) it answers CLUSTERDOWN for every key meanwhile, and for
// the whole partition when no replica of a failed master is there. At the
// heal the promoted replica stays master and the old one rejoins as its
// replica, its partition-time writes lost. A server whose key's master is
// across the partition waits timeout (default 100ms on a cluster) before
// its fail policy decides.
//
// Expectations are described at [Expectation]; this package reads and
// checks their shape, and `ratelim check` evaluates them.
//
// # Defaults
//
// A field left out means:
//
//	name                 the file's name without .yaml or .yml
//	seed                 1
//	step                 1s, or the duration if that is shorter
//	servers              1
//	balancer             round-robin
//	limit.algorithm      token-bucket
//	limit.key            auto
//	topology.kind        shared
//	topology.store       memory
//	topology.rtt         0 for local (a jar in the server), else 500us
//	topology.on_error    fail-open
//	topology.clock       server
//	replication_lag      0
//	failover_after       0
//	primary_stops_after  never (sim.PrimaryNeverStops)
//	count                1
//	traffic start        0
//	traffic stop         0, which means the end of the run
//	traffic cost         1
//	retry                none; max, base and cap are the simulator's
//	                     (sim.DefaultMaxRetry, 100ms and 10s)
//
// limit.rate is required, and so are the parameters the algorithm reads:
// burst for token-bucket, gcra and leaky-bucket, window for the window
// algorithms. Those it does not read may stay, so that one file serves
// every algorithm (`ratelim compare`, --algorithm).
package scenarios
