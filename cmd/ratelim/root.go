package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/ratelim/ratelim/live"
	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/sim"
)

// Exit codes. Scripts and CI read them, so they never change meaning.
const (
	exitOK          = 0
	exitFailed      = 1   // the command ran and found something wrong (ratelim check: an expectation failed)
	exitBadInput    = 2   // the input could not be used: a bad flag, file, name or parameter
	exitTooBig      = 3   // the input is fine but the run is bigger than its bounds (--max-requests, --max-memory)
	exitInternal    = 4   // the environment or ratelim failed: a store lost mid-run, a load target that answered nothing, an output not written, a bug
	exitInterrupted = 130 // stopped by SIGINT or SIGTERM (128 + SIGINT, as shells report it), after cleaning up
)

// exitCodesHelp is the table of exit codes, for --help.
const exitCodesHelp = `Exit status:
  0    success
  1    ratelim check: an expectation failed
  2    bad input: a flag, file, name or parameter (the message says which),
       or an output path that cannot be created
  3    refused as too big: over --max-requests or --max-memory (the message
       gives the estimate and how to shrink the run)
  4    internal or environment error: a store lost mid-run, a load run
       whose targets answered no request, an output that failed part way,
       a bug in ratelim
  130  interrupted (Ctrl-C or SIGTERM); stores were cleaned up first
ratelim check exits with the worst code its files saw: 4 > 2 > 3 > 1.`

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

// runners are what the commands run their options with; a nil one is the
// command's own. Tests replace them to see what a command line would run,
// through the real flags and exit codes, without running it.
type runners struct {
	algorithms func(*algorithmsOptions) error
	scenarios  func(*scenariosOptions) error
	sim        func(*simOptions) error
	compare    func(*compareOptions) error
	check      func(*checkOptions) error
	report     func(*reportOptions) error
	serve      func(*serveOptions) error
	load       func(*loadOptions) error
	probe      func(*probeOptions) error
	replay     func(*replayOptions) error
	sweep      func(*sweepOptions) error
	web        func(*webOptions) error
}

func newRootCmd(s streams, r runners) *cobra.Command {
	root := &cobra.Command{
		Use:   "ratelim",
		Short: "Study rate limiters: every algorithm, every place the counter can live",
		Long: `ratelim replays traffic scenarios against rate-limiting algorithms (token
bucket, GCRA, leaky bucket, fixed window, sliding log, sliding window) and
store topologies (per-server jars, shared Redis, racy read-modify-write,
split-brain, a partitioned Redis Cluster, outage), and shows what each
client experienced.

` + exitCodesHelp,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetOut(s.Out)
	root.SetErr(s.ErrOut)
	root.SetIn(s.In)
	// A bad flag is bad input, like any other.
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newCmdAlgorithms(s, r.algorithms))
	root.AddCommand(newCmdScenarios(s, r.scenarios))
	root.AddCommand(newCmdSim(s, r.sim))
	root.AddCommand(newCmdSweep(s, r.sweep))
	root.AddCommand(newCmdReplay(s, r.replay))
	root.AddCommand(newCmdCompare(s, r.compare))
	root.AddCommand(newCmdCheck(s, r.check))
	root.AddCommand(newCmdReport(s, r.report))
	root.AddCommand(newCmdServe(s, r.serve))
	root.AddCommand(newCmdLoad(s, r.load))
	root.AddCommand(newCmdProbe(s, r.probe))
	root.AddCommand(newCmdWeb(s, r.web))
	root.AddCommand(newCmdVersion(s))
	root.Version = version(debug.ReadBuildInfo())
	root.SetVersionTemplate("ratelim {{.Version}}\n")
	completeValues(root)
	// Every command's flags wrapped at 80 columns, as the text above them
	// is: a flag's usage is otherwise one line (replay's --headroom 200
	// columns, sim's --vs 179).
	root.SetUsageTemplate(strings.ReplaceAll(root.UsageTemplate(), ".LocalFlags.FlagUsages", ".LocalFlags.FlagUsagesWrapped 80"))
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
// printed here, once, in one plain sentence. ctx is cancelled by SIGINT and
// SIGTERM: the commands then stop, delete what they wrote to a store, and
// return its error.
func run(ctx context.Context, args []string, s streams) int {
	return runWith(ctx, args, s, runners{})
}

// runWith is run with the commands' runners replaced by r's.
func runWith(ctx context.Context, args []string, s streams, r runners) int {
	root := newRootCmd(s, r)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	code := exitCode(ctx, err)
	switch code {
	case exitOK:
		return code
	case exitInterrupted:
		fmt.Fprintln(s.ErrOut, "ratelim: interrupted")
		return code
	}
	msg := errorText(err)
	fmt.Fprintf(s.ErrOut, "ratelim: %s\n", msg)
	// The usage hint helps with a command line, not with a file's
	// content or a store that cannot be reached.
	var fileErr *scenarios.Error
	inFile := errors.As(err, &fileErr) && fileErr.File != ""
	if code == exitBadInput && !inFile && !errors.As(err, new(*sim.SetupError)) {
		fmt.Fprintln(s.ErrOut, "Run 'ratelim --help' for usage.")
	}
	var ie *sim.InternalError
	if errors.As(err, &ie) {
		fmt.Fprintf(s.ErrOut, "%s\n", ie.Stack)
	}
	return code
}

// errorText is err as the user reads it: a bound or an option of the
// libraries named as the flag that sets it.
func errorText(err error) string {
	msg := err.Error()
	// A bound of the library's options is a flag here.
	var tb *sim.TooBigError
	if errors.As(err, &tb) {
		if flag, ok := map[string]string{"MaxRequests": "--max-requests", "MaxMemory": "--max-memory"}[tb.Option]; ok {
			msg = strings.Replace(msg, "raise Options."+tb.Option, "raise "+flag, 1)
		}
	}
	// So is a field of live's options.
	var oe *live.OptionError
	if errors.As(err, &oe) {
		if flag, ok := map[string]string{"Targets": "--target", "Path": "--path", "Listen": "--listen", "Control": "--control", "Store": "--store"}[oe.Option]; ok {
			msg = strings.Replace(msg, oe.Option+": ", flag+": ", 1)
		}
		msg = strings.ReplaceAll(msg, "set AllowRemote", "pass --allow-remote")
	}
	return msg
}

// exitCode sorts err into the documented exit codes. Too big is checked
// before bad input: a refused run is also a setup error, but the user's
// input was fine.
func exitCode(ctx context.Context, err error) int {
	var ue usageError
	switch {
	case err == nil:
		return exitOK
	case ctx.Err() != nil && errors.Is(err, context.Canceled):
		return exitInterrupted
	case errors.Is(err, errChecksFailed):
		return exitFailed
	case sim.IsTooBig(err):
		return exitTooBig
	case errors.As(err, &ue) || isCobraUsageError(err):
		return exitBadInput
	}
	return exitInternal
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
