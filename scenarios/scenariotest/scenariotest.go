// Package scenariotest gives tests the built-in scenarios without each
// package that plays one repeating how to open it.
package scenariotest

import (
	"testing"

	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/sim"
)

// Builtin is the named built-in scenario, as `ratelim sim NAME` plays it.
// A name that is no built-in fails the test or benchmark t.
func Builtin(t testing.TB, name string) sim.Scenario {
	t.Helper()
	f, err := scenarios.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	return f.Scenario
}
