package sim_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/sim"
)

// everyBuiltin calls fn with each built-in a differential test can move
// to another kind, cut to 20 s: not one whose clients and faults are in
// regions, which no other kind has, nor (with plain) one with a breaker
// or a concurrency limit, which the newer kinds refuse.
func everyBuiltin(t *testing.T, plain bool, fn func(name string, sc sim.Scenario)) {
	t.Helper()
	for _, name := range scenarios.Builtin() {
		f, err := scenarios.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := f.Scenario
		if sc.Topology.Kind == sim.Regions || (plain && (sc.Topology.Breaker != nil || sc.Limit.Algorithm == "concurrency")) {
			continue
		}
		sc.Duration = min(sc.Duration, 20*time.Second)
		fn(name, sc)
	}
}

// runFor is sc's Result, the test failing on an error.
func runFor(t *testing.T, sc sim.Scenario) *sim.Result {
	t.Helper()
	r, err := sim.Run(context.Background(), sc, sim.Options{})
	if err != nil {
		t.Fatalf("%s on %s: %v", sc.Name, sc.Topology.Kind, err)
	}
	return r
}

// decisionsJSON is r as JSON with what only names or measures its
// topology left out: the topology's name, each kind's own figures, the
// keys' design bounds, the design-bound finding and the findings' words
// (their kinds may not differ); a node's cache named as a server's jar.
// Two runs that decided alike give the same.
func decisionsJSON(t *testing.T, r *sim.Result) string {
	t.Helper()
	r.Topology, r.Synced, r.TwoTier, r.Owner, r.Regions = "", nil, nil, nil, nil
	for i := range r.Keys {
		r.Keys[i].DesignBound1s, r.Keys[i].DesignServers = 0, 0
	}
	var findings []sim.Finding
	for _, f := range r.Findings {
		if f.Kind != sim.FindingDesignBound {
			f.Text = ""
			findings = append(findings, f)
		}
	}
	r.Findings = findings
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(string(b), `"node-`, `"server-`)
}

// withinBound runs sc and fails t if a key a request reached has no
// design bound, or was admitted more within one second than it: the
// property tests of each kind's bound. shape names sc's draw for the
// failure.
func withinBound(t *rapid.T, sc sim.Scenario, shape string) {
	r, err := sim.Run(context.Background(), sc, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range r.Keys {
		if k.Sent == 0 {
			continue // no request: nothing counted it
		}
		if k.DesignBound1s == 0 || k.MaxAllowed1s > k.DesignBound1s {
			t.Fatalf("key %s admitted %d within 1 s, bound %d (%d servers, nodes or regions reached, failed open %d; %s)", k.Key, k.MaxAllowed1s, k.DesignBound1s, k.DesignServers, k.FailedOpen, shape)
		}
	}
}
