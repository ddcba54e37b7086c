package live

import (
	"fmt"

	"github.com/ratelim/ratelim/internal/words"
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

// NoAnswerError is a load run in which requests were due and none got an
// HTTP answer: the target is down, not listening, or not an HTTP server.
// The run measured nothing about a limiter, so its figures pass for none.
type NoAnswerError struct {
	// TransportErrors are the requests sent that got no answer, NotSent
	// those the run never got to send.
	TransportErrors, NotSent int64
	// First is the first transport error's text ("" if none was sent).
	First string
}

func (e *NoAnswerError) Error() string {
	if e.TransportErrors == 0 {
		return fmt.Sprintf("live: no request got an answer: none of %d was sent before the scenario's time was up", e.NotSent)
	}
	return fmt.Sprintf("live: no request got an HTTP answer: %d %s, the first: %s (want a server answering at each target)",
		e.TransportErrors, words.Plural(e.TransportErrors, "transport error", "transport errors"), e.First)
}

// CheckAnswered returns a *NoAnswerError when requests were due in the run
// and none of them got an HTTP answer, of any status: every one a
// transport error, or none sent at all. A run with some answers is not an
// error, whatever the rest got: the Result's no_answer and the audit's
// transport_errors say how many went unanswered.
func (r *LoadResult) CheckAnswered() error {
	for _, o := range r.Observations {
		if !o.NoAnswer {
			return nil
		}
	}
	if r.Audit.TransportErrors == 0 && r.Audit.NotSent == 0 {
		return nil // nothing was due: a scenario without requests
	}
	return &NoAnswerError{TransportErrors: r.Audit.TransportErrors, NotSent: r.Audit.NotSent, First: r.Audit.FirstTransportError}
}
