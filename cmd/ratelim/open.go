package main

import (
	"errors"
	"fmt"

	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/sim"
)

// loadScenario opens a built-in, a file, or standard input ("-"), and
// applies the flags that override it.
func (s streams) loadScenario(name string, over overrides) (*scenarios.File, sim.Scenario, error) {
	var file *scenarios.File
	var err error
	if name == "-" {
		if s.In == nil {
			return nil, sim.Scenario{}, badInput("-: no standard input to read the scenario from")
		}
		file, err = scenarios.Read("stdin", s.In)
	} else {
		file, err = scenarios.Open(name)
	}
	if err != nil {
		return nil, sim.Scenario{}, usageError{err}
	}
	sc := file.Scenario
	if err := over.apply(&sc); err != nil {
		return nil, sim.Scenario{}, err
	}
	return file, sc, nil
}

// setupOrErr maps a run refused before it started to bad input.
func setupOrErr(label string, err error) error {
	var se *sim.SetupError
	if errors.As(err, &se) {
		return usageError{fmt.Errorf("%s: %w", label, err)}
	}
	return err
}
