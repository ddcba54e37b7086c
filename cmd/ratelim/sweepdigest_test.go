package main

import (
	"reflect"
	"testing"
	"time"

	"github.com/ratelim/ratelim/scenarios/scenariotest"
	"github.com/ratelim/ratelim/sim"
)

// scenarioDigest tells scenarios apart as reflect.DeepEqual does: a
// copy has the digest, a change anywhere (a client's rate deep in the
// tree, a duration, nil against empty) another; a map's order is none.
func TestScenarioDigestIsDeepEqual(t *testing.T) {
	base := scenariotest.Builtin(t, "sync-interval")
	copyOf := func() sim.Scenario {
		sc := base
		sc.Clients = append([]sim.Client(nil), base.Clients...)
		return sc
	}
	changes := map[string]func(*sim.Scenario){
		"nothing":         func(*sim.Scenario) {},
		"servers":         func(sc *sim.Scenario) { sc.Servers++ },
		"a sync":          func(sc *sim.Scenario) { sc.Topology.SyncInterval += time.Nanosecond },
		"a client's name": func(sc *sim.Scenario) { sc.Clients[1].Name += "x" },
		"no clients":      func(sc *sim.Scenario) { sc.Clients = nil },
		"empty clients":   func(sc *sim.Scenario) { sc.Clients = []sim.Client{} },
	}
	seen := map[digest]string{}
	for what, change := range changes {
		sc := copyOf()
		change(&sc)
		d := scenarioDigest(sc)
		if equal := reflect.DeepEqual(sc, base); equal != (d == scenarioDigest(base)) {
			t.Errorf("%s: DeepEqual %v, digests equal %v", what, equal, !equal)
		}
		if other, dup := seen[d]; dup {
			t.Errorf("%s and %s: one digest", what, other)
		}
		seen[d] = what
	}
	m1, m2 := map[string]int{}, map[string]int{}
	for i, k := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		m1[k] = i
	}
	for i, k := range []string{"h", "g", "f", "e", "d", "c", "b", "a"} {
		m2[k] = 7 - i
	}
	if scenarioDigest(m1) != scenarioDigest(m2) {
		t.Errorf("one map built in two orders: two digests")
	}
	m2["a"] = 9
	if scenarioDigest(m1) == scenarioDigest(m2) {
		t.Errorf("two maps: one digest")
	}
}
