package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/sim"
)

// loadScenario opens a built-in, a file, or standard input ("-"), and
// applies the flags that override it.
func (s streams) loadScenario(name string, over overrides) (*scenarios.File, sim.Scenario, error) {
	file, run, err := s.loadFile(name, over)
	if err != nil {
		return nil, sim.Scenario{}, err
	}
	return file, run.Scenario, nil
}

// loadFile is loadScenario, with the file as the flags change it (run),
// to change again (--vs). The file is read once, the flags' settings in
// it (scenarios.OpenWith): with flags given, file is run, the file as
// read not kept beside it (a file of a million clients is held once).
func (s streams) loadFile(name string, over overrides) (file, run *scenarios.File, err error) {
	sets, err := over.settings()
	if err != nil {
		return nil, nil, err
	}
	if name == "-" {
		if s.In == nil {
			return nil, nil, badInput("-: no standard input to read the scenario from")
		}
		file, err = scenarios.ReadWith("stdin", s.In, sets)
	} else {
		file, err = scenarios.OpenWith(name, sets)
	}
	if err != nil {
		return nil, nil, usageError{err}
	}
	return file, file, nil
}

// runError sorts the error of one simulated run: a run refused before it
// started is the user's to fix (bad input, or too big: root tells them
// apart); a run that finished but left keys in its store is whole, so it
// is kept and the keys reported on errOut; anything else ends the command.
func runError(errOut io.Writer, label string, err error) error {
	if errors.As(err, new(*sim.CleanupError)) {
		fmt.Fprintf(errOut, "ratelim: warning: %s: %v\n", label, err)
		return nil
	}
	return setupOrErr(label, err)
}

// setupOrErr maps a run refused before it started to bad input.
func setupOrErr(label string, err error) error {
	var se *sim.SetupError
	if errors.As(err, &se) {
		return usageError{fmt.Errorf("%s: %w", label, err)}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", label, err)
	}
	return nil
}
