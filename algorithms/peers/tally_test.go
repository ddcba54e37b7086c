package peers_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/ratelim/ratelim/algorithms"
)

// tally counts what a differential test's decisions were, so that the test
// can say how much it compared and fail when its random traffic exercised
// too little: a run with no admission, or no refusal, compared nothing of
// the half it lacks.
type tally struct{ peeks, admitted, refused int }

// add counts one decision of a request of the given cost.
func (c *tally) add(cost int64, allowed bool) {
	switch {
	case cost == 0:
		c.peeks++
	case allowed:
		c.admitted++
	default:
		c.refused++
	}
}

func (c tally) String() string {
	return fmt.Sprintf("%d decisions agree (%d admitted, %d refused, %d peeks)", c.peeks+c.admitted+c.refused, c.admitted, c.refused, c.peeks)
}

// check logs the tally under what, and fails the test if it lacks
// admissions or refusals.
func (c tally) check(t *testing.T, what string) {
	t.Helper()
	t.Logf("%s: %v", what, c)
	if c.admitted == 0 || c.refused == 0 {
		t.Fatalf("%s: the traffic exercised too little: %v", what, c)
	}
}

// paramCase is a parameter set a constructor must refuse, and the
// parameter its ParamError must name.
type paramCase struct {
	p    algorithms.Params
	want string
}

// wantParamErrors fails the test for each case build accepts, or refuses
// without a ParamError naming the parameter.
func wantParamErrors[A any](t *testing.T, name string, build func(algorithms.Params) (A, error), cases []paramCase) {
	t.Helper()
	for _, c := range cases {
		_, err := build(c.p)
		var pe *algorithms.ParamError
		if !errors.As(err, &pe) || pe.Param != c.want {
			t.Errorf("%s(%+v) = %v, want a ParamError for %s", name, c.p, err, c.want)
		}
	}
}
