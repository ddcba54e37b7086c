package sim

import (
	"testing"

	"pgregory.net/rapid"
)

// TestStepOfIsTheDivision: the step stepOf finds, remembered or not, is
// the instant divided by the step's length, past the end the last step,
// whatever order the instants come in.
func TestStepOfIsTheDivision(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := runClock{stepLen: rapid.Int64Range(1, 1000).Draw(t, "stepLen"), nSteps: rapid.IntRange(1, 50).Draw(t, "steps")}
		for range rapid.IntRange(1, 100).Draw(t, "asks") {
			at := rapid.Int64Range(0, c.stepLen*int64(c.nSteps+3)).Draw(t, "at")
			if got, want := c.stepOf(at), min(int(at/c.stepLen), c.nSteps-1); got != want {
				t.Fatalf("stepOf(%d) = %d, want %d (step %d long, %d steps)", at, got, want, c.stepLen, c.nSteps)
			}
		}
	})
}
