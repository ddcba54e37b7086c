package live

import (
	"fmt"

	"github.com/ratelim/ratelim/sim"
)

// OptionError is a field of ServeOptions or LoadOptions set to something
// the fleet or the load run cannot use. Option names the field as Go spells
// it ("Listen", "Targets"), so that a command can name its own flag
// instead; the message names other fields the same way ("AllowRemote").
// It is bad input: errors.As finds a *sim.SetupError around it.
type OptionError struct {
	Option string
	Err    error
}

func (e *OptionError) Error() string { return e.Option + ": " + e.Err.Error() }
func (e *OptionError) Unwrap() error { return e.Err }

// optionError is a SetupError about option.
func optionError(option, format string, args ...any) error {
	return &sim.SetupError{Err: &OptionError{Option: option, Err: fmt.Errorf(format, args...)}}
}
