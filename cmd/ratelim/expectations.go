package main

// A scenario file's expect: lines in a run's result, as sim, vs, report
// and live print them: simrun's, the steps `ratelim sim` shares with the
// browser playground, with a malformed expectation sorted as bad input.

import (
	"io"

	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/simrun"
)

// fillExpectations is simrun.FillExpectations, its error the user's to
// fix.
func fillExpectations(file *scenarios.File, r *sim.Result) (failed, skipped int, err error) {
	failed, skipped, err = simrun.FillExpectations(file, r)
	if err != nil {
		return 0, 0, usageError{err}
	}
	return failed, skipped, nil
}

// writeExpectations is simrun.WriteExpectations: the table's summary of
// the file's expect: lines.
func writeExpectations(w io.Writer, file *scenarios.File, r *sim.Result, skipped int) {
	simrun.WriteExpectations(w, file, r, skipped)
}

// scenarioLabel names a scenario file in messages (simrun.Label).
func scenarioLabel(f *scenarios.File) string { return simrun.Label(f) }
