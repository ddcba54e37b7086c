package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// Exit codes. Scripts and CI read them, so they never change meaning.
const (
	exitOK       = 0
	exitFailed   = 1 // the command ran and found something wrong (ratelim check: an expectation failed)
	exitBadInput = 2 // the input could not be used: a bad flag, file, name or parameter
)

// streams are a command's input and outputs, injected so that commands run
// in tests without a process.
type streams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// usageError is input the user can fix: it exits with exitBadInput.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func badInput(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

func newRootCmd(s streams) *cobra.Command {
	root := &cobra.Command{
		Use:   "ratelim",
		Short: "Study rate limiters: every algorithm, every place the counter can live",
		Long: `ratelim replays traffic scenarios against rate-limiting algorithms (token
bucket, GCRA, leaky bucket, fixed window, sliding log, sliding window) and
store topologies (per-server jars, shared Redis, racy read-modify-write,
split-brain, outage), and shows what each client experienced.`,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetOut(s.Out)
	root.SetErr(s.ErrOut)
	root.SetIn(s.In)
	// A bad flag is bad input, like any other.
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newCmdAlgorithms(s, nil))
	root.AddCommand(newCmdScenarios(s, nil))
	root.AddCommand(newCmdSim(s, nil))
	root.AddCommand(newCmdCompare(s, nil))
	root.AddCommand(newCmdCheck(s, nil))
	root.AddCommand(newCmdServe(s, nil))
	root.AddCommand(newCmdLoad(s, nil))
	return root
}

// exactArgs is cobra.ExactArgs with a message that says what the argument
// is, as a usage error.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != n {
			return badInput("want %s, got %d arguments", what, len(args))
		}
		return nil
	}
}

// checkFormat refuses a --format that is not one of formats.
func checkFormat(format string, formats ...string) error {
	for _, f := range formats {
		if format == f {
			return nil
		}
	}
	return badInput("--format: unknown format %q (want %s or %s)", format, strings.Join(formats[:len(formats)-1], ", "), formats[len(formats)-1])
}

// isTerminal reports whether w is a terminal, where progress and the TUI
// may draw.
func isTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(f.Fd()))
}

// run executes the command line args and returns the exit code. Errors are
// printed here, once, in one plain sentence.
func run(args []string, s streams) int {
	root := newRootCmd(s)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(s.ErrOut, "ratelim: %v\n", err)
	var ue usageError
	if errors.As(err, &ue) || isCobraUsageError(err) {
		fmt.Fprintln(s.ErrOut, "Run 'ratelim --help' for usage.")
		return exitBadInput
	}
	return exitFailed
}

// isCobraUsageError recognises the errors cobra returns for an unknown
// command or a wrong number of arguments, which it does not type.
func isCobraUsageError(err error) bool {
	msg := err.Error()
	for _, prefix := range []string{"unknown command", "accepts ", "requires at least", "requires at most", "unknown flag", "unknown shorthand", "invalid argument"} {
		if len(msg) >= len(prefix) && msg[:len(prefix)] == prefix {
			return true
		}
	}
	return false
}
