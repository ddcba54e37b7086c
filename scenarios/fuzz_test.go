package scenarios

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ratelim/ratelim/sim"
)

// clusterSeed is a cluster of two masters with two replicas each, a
// breaker, and a partition of three sides placing its nodes.
const clusterSeed = "servers: 3\ntopology: {kind: cluster, masters: 2, replicas: 2, node_timeout: 1s, timeout: 20ms, replication_lag: 5ms, full_coverage: false, breaker: {failures: 2, cooldown: 300ms}}\n" +
	"faults:\n  - {kind: partition, start: 1s, end: 5s, groups: [[0], [1], [2]], nodes: [[s0-master], [s1-master, s0-replica1], [s0-replica2, s1-replica1]]}\n"

// FuzzParse feeds Parse arbitrary bytes, seeded with the built-ins and the
// error cases' kind of input. The property: Parse never panics, and either
// returns a scenario the simulator's own checks would accept the basics of,
// or an *Error with a line that says what to write instead.
func FuzzParse(f *testing.F) {
	for _, name := range Builtin() {
		data, _ := builtin(name)
		f.Add(data)
	}
	f.Add([]byte(base))
	f.Add([]byte(base + "servers: 4\nfaults:\n  - {kind: partition, start: 1s, end: 2s, groups: [[0, 1], [2, 3]]}\n"))
	f.Add([]byte(base + "expect:\n  - {client: a, allowed_rate: {max: 11/s}, during: {from: 1s, to: 2s}, with: {algorithm: gcra}}\n"))
	f.Add([]byte(base + clusterSeed))
	f.Add([]byte("a: &a {<<: [*a, *a]}\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse("f.yaml", data)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is not an *Error", err)
			}
			if e.File != "f.yaml" || e.Line < 1 {
				t.Fatalf("error %q has no file or line", err)
			}
			if !strings.Contains(e.Msg, "(want ") {
				t.Fatalf("error %q does not say what to write instead", err)
			}
			return
		}
		sc := file.Scenario
		if sc.Duration <= 0 || sc.Step <= 0 || sc.Step > sc.Duration || sc.Servers < 1 || sc.Servers > MaxServers || len(sc.Clients) == 0 {
			t.Fatalf("accepted an unrunnable scenario: %+v", sc)
		}
		for _, c := range sc.Clients {
			if len(c.Traffic) == 0 {
				t.Fatalf("accepted client %q with no traffic", c.Name)
			}
		}
		for _, ft := range sc.Faults {
			if ft.Start < 0 || ft.End <= ft.Start || ft.End > sc.Duration {
				t.Fatalf("accepted fault %+v outside the run", ft)
			}
		}
	})
}

// FuzzRun follows arbitrary bytes down the whole path a user's file takes:
// parse, estimate, run. The property: nothing panics (a recovered panic,
// *sim.InternalError, fails too), a run that is accepted fits the request
// budget and memory bound it was given and ends well inside a time bound,
// and a run that is refused says why with ErrBudget or ErrMemory. Stores
// are forced to memory: the property is the engine's, not a network's.
//
//	go test ./scenarios -run '^$' -fuzz FuzzRun -fuzztime 2m
func FuzzRun(f *testing.F) {
	for _, name := range Builtin() {
		data, _ := builtin(name)
		f.Add(data)
	}
	f.Add([]byte(base))
	f.Add([]byte(strings.Replace(base, "duration: 30s", "duration: 8760h\nstep: 1us", 1)))
	f.Add([]byte(base + clusterSeed))
	f.Add([]byte(strings.Replace(base, "rate: 5/s", "rate: 1000000000000000000/s", 1)))
	f.Add([]byte(noClients + "  - {name: a, count: 10000, api_key: a, traffic: {pattern: constant, rate: 5/s}, retry: {policy: immediate, max: 1000}}\n"))
	f.Add([]byte(noClients + "  - {name: \"{i}{i}{i}{i}{i}{i}{i}{i}\", count: 10000, api_key: \"{i}\", traffic: {pattern: burst, count: 1000000, at: 1s}}\n"))
	const (
		maxRequests = 20_000
		maxMemory   = 64 << 20
		timeBound   = 20 * time.Second
	)
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse("f.yaml", data)
		if err != nil {
			return // FuzzParse holds the errors to account
		}
		sc := file.Scenario
		sc.Topology.Store = "memory"
		sim.Estimate(sc)
		sim.MemoryEstimate(sc)
		ctx, cancel := context.WithTimeout(context.Background(), timeBound)
		defer cancel()
		r, err := sim.Run(ctx, sc, sim.Options{MaxRequests: maxRequests, MaxMemory: maxMemory})
		var ie *sim.InternalError
		switch {
		case errors.As(err, &ie):
			t.Fatalf("a panic in the run: %v\n%s", ie.Value, ie.Stack)
		case ctx.Err() != nil:
			t.Fatalf("the run did not end within %s", timeBound)
		case err != nil && !sim.IsTooBig(err) && !errors.As(err, new(*sim.SetupError)):
			t.Fatalf("the run failed with %v, neither refused nor too big", err)
		case err == nil:
			sent := int64(0)
			for _, c := range r.Clients {
				sent += c.Sent
			}
			if sent > maxRequests {
				t.Fatalf("sent %d requests, over the budget of %d", sent, maxRequests)
			}
			if need := sim.MemoryEstimate(sc); need > maxMemory {
				t.Fatalf("ran although estimated at %d bytes, over %d", need, maxMemory)
			}
		}
	})
}
