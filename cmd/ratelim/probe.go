package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ratelim/ratelim/internal/outfile"
	"github.com/ratelim/ratelim/live"
	"github.com/ratelim/ratelim/probe"
)

type probeOptions struct {
	streams
	// ErrIsTerminal says whether ErrOut is a terminal, where progress goes.
	ErrIsTerminal bool
	URL           string
	AllowRemote   bool
	KeyHeader     string
	Key           string
	MaxRequests   int
	MaxRate       float64
	MaxDuration   time.Duration
	Format        string
	// Observations, if set, is where the observations are written, to
	// analyse again with From.
	Observations string
	// From analyses a file of observations instead of probing.
	From  string
	Quiet bool
}

func newCmdProbe(s streams, runF func(*probeOptions) error) *cobra.Command {
	opts := &probeOptions{streams: s, ErrIsTerminal: isTerminal(s.ErrOut)}
	cmd := &cobra.Command{
		Use:   "probe URL",
		Short: "Infer the limiter behind an endpoint from a bounded probe",
		Long: `Send a bounded, designed sequence of GET requests to one endpoint and infer
the limiter behind it from the answers (2xx admitted; 429 or 503 refused):
its family (token bucket or GCRA, which admit alike; a leaky bucket that
queues; a fixed window aligned to the clock or anchored at a key's first
request; the sliding-window counter; the sliding log; a limit on requests
in flight), its rate and burst, window or number in flight, whether
refused requests are counted, and, with --key-header,
whether that header keys the limit (a fresh value sent while the probe's
own is refused). It then holds the answers' Retry-After, RateLimit,
RateLimit-Policy and X-RateLimit-* fields against what it saw, and prints
a scenario limit: block that reproduces the limiter.

The phases: a burst at --max-rate until refused, on at that rate to see
what comes back while refused, single requests further apart if nothing
does, a refill after half a cycle idle, half a burst and the rest half a
cycle later (a window's edges), and the key test. Each phase's timing
comes from what the earlier ones observed. The analysis fits each family
to the observed instants and answers, and reports the one that decides
most of them as they were decided, with its confidence; families that fit
alike are named together.

The probe never sends more than --max-requests, faster than --max-rate, or
for longer than --max-duration. Every request carries X-Ratelim-Request:
N. The URL must be on this machine unless --allow-remote: probe only
servers you own. With --key-header, every request carries a fixed key
(--key, or one generated) in it; without, none.

--format limit prints the scenario limit: block alone. --observations
writes what was sent and answered, for --from to analyse again without
sending.

Exit status: 0 when the probe ran (whether or not it found a limit), 2 for
bad input (a flag, a URL that is not http or not on this machine, a file
of observations that cannot be read or no probe wrote), 4 when no request
got an answer a limiter gives (none answered, or every answer neither 2xx
nor 429/503: a server that answers only 500 has shown no limit), 130 when
interrupted (Ctrl-C: it stops sending, or analysing, at once).`,
		Example: `  ratelim serve retry-storm --listen 127.0.0.1:8080 &
  ratelim probe http://127.0.0.1:8080/api --key-header X-API-Key
  ratelim probe http://127.0.0.1:8080/api --format json --observations run.json
  ratelim probe --from run.json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("from") {
				return exactArgs(0, "no URL with --from (the observations name theirs)")(cmd, args)
			}
			return exactArgs(1, "the endpoint's URL (e.g. http://127.0.0.1:8080/api)")(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.URL = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return probeRun(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.AllowRemote, "allow-remote", false, "allow a URL not on this machine (yours only)")
	f.StringVar(&opts.KeyHeader, "key-header", "", "header that may key the limit (e.g. X-Api-Key)")
	f.StringVar(&opts.Key, "key", "", "the value in --key-header (default: generated)")
	f.IntVar(&opts.MaxRequests, "max-requests", probe.DefaultMaxRequests, fmt.Sprintf("most requests sent (%d to %d)", probe.MinMaxRequests, probe.MaxMaxRequests))
	f.Float64Var(&opts.MaxRate, "max-rate", probe.DefaultMaxRate, fmt.Sprintf("requests/s at most (%g to %g)", probe.MinMaxRate, probe.MaxMaxRate))
	f.DurationVar(&opts.MaxDuration, "max-duration", probe.DefaultMaxDuration, fmt.Sprintf("longest probe (at most %s)", probe.MaxMaxDuration))
	f.StringVar(&opts.Format, "format", "text", "output: text, json or limit")
	f.StringVar(&opts.Observations, "observations", "", "also write the observations here, for --from")
	f.StringVar(&opts.From, "from", "", "analyse --observations' file; send nothing")
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "no progress on stderr")
	return cmd
}

// planProbe checks opts, sending nothing: the bounds, the format and the
// URL, which must be on this machine unless --allow-remote (the rule
// 'ratelim load' holds its targets to, through the same check).
func planProbe(opts *probeOptions) (probe.Options, error) {
	if err := checkFormat(opts.Format, "text", "json", "limit"); err != nil {
		return probe.Options{}, err
	}
	switch {
	case opts.MaxRequests < probe.MinMaxRequests || opts.MaxRequests > probe.MaxMaxRequests:
		return probe.Options{}, badInput("--max-requests: want %d to %d requests, %d at least for a burst, its refusals and a recovery (got %d)",
			probe.MinMaxRequests, probe.MaxMaxRequests, probe.MinMaxRequests, opts.MaxRequests)
	case !(opts.MaxRate >= probe.MinMaxRate && opts.MaxRate <= probe.MaxMaxRate):
		return probe.Options{}, badInput("--max-rate: want %g to %g requests a second (got %g)", probe.MinMaxRate, probe.MaxMaxRate, opts.MaxRate)
	case opts.MaxDuration <= 0 || opts.MaxDuration > probe.MaxMaxDuration:
		return probe.Options{}, badInput("--max-duration: want above 0 and at most %s (got %s)", probe.MaxMaxDuration, opts.MaxDuration)
	case opts.Key != "" && opts.KeyHeader == "":
		return probe.Options{}, badInput("--key: give --key-header too (the header the key is sent in)")
	case opts.KeyHeader != "" && !validHeaderName(opts.KeyHeader):
		return probe.Options{}, badInput("--key-header: %q is not a header name (want e.g. X-Api-Key)", opts.KeyHeader)
	}
	if opts.From != "" {
		return probe.Options{}, nil
	}
	if err := checkObservationsPath(opts.Observations); err != nil {
		return probe.Options{}, err
	}
	u, err := live.CheckTarget(opts.URL, true)
	if err != nil {
		var oe *live.OptionError
		if errors.As(err, &oe) {
			return probe.Options{}, badInput("URL: %s", oe.Err)
		}
		return probe.Options{}, badInput("URL: %v", err)
	}
	// The rule load holds its targets to, in probe's words.
	if _, err := live.CheckTarget(opts.URL, opts.AllowRemote); err != nil {
		return probe.Options{}, badInput("URL: %s is not a loopback address; probe sends to this machine only (pass --allow-remote for a server you own)", u.Host)
	}
	return probe.Options{URL: u.String(), KeyHeader: opts.KeyHeader, Key: opts.Key, MaxRequests: opts.MaxRequests,
		MaxRate: opts.MaxRate, MaxDuration: opts.MaxDuration}, nil
}

// errPathUsable stops outfile.Write once it has found the path usable,
// before anything is written.
var errPathUsable = errors.New("the path is usable")

// checkObservationsPath refuses an --observations path before anything is
// sent, so that minutes of probing are not lost to a path that cannot be
// written: standard output (the report goes there), and whatever
// outfile.Write refuses (a directory, a device, a dangling link, a
// directory that does not exist). It writes nothing: outfile.Write is
// stopped at its first write, and leaves the path as it was.
func checkObservationsPath(path string) error {
	switch {
	case path == "":
		return nil
	case outfile.IsStdout(path):
		return badInput("--observations: not standard output, where the report goes (want a file name)")
	}
	err := writeOutput(path, nil, func(io.Writer) error { return errPathUsable })
	if errors.Is(err, errPathUsable) {
		return nil
	}
	var ue usageError
	if errors.As(err, &ue) {
		return badInput("--observations: %v", ue.err)
	}
	return err
}

// validHeaderName reports whether s is an HTTP field name (RFC 9110's
// token).
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c > 0x7e || c <= ' ' || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, c) {
			return false
		}
	}
	return true
}

func probeRun(ctx context.Context, opts *probeOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	po, err := planProbe(opts)
	if err != nil {
		return err
	}
	var rec probe.Recording
	if opts.From != "" {
		f, err := os.Open(opts.From)
		if err != nil {
			return badInput("--from: %v", err)
		}
		rec, err = probe.ReadRecording(f)
		f.Close()
		if err != nil {
			return badInput("--from: %s: %v", opts.From, err)
		}
	} else {
		ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
		progress := newProgress(opts.ErrOut, opts.ErrIsTerminal && !opts.Quiet, "probing")
		po.Progress = func(sent, most int, phase string) {
			progress.show(fmt.Sprintf("%d of at most %d requests, %s", sent, most, phase))
		}
		rec, err = probe.Run(ctx, po)
		progress.done()
		if ctx.Err() != nil {
			fmt.Fprintf(opts.ErrOut, "ratelim: probe stopped after %d requests; nothing analysed\n", len(rec.Obs))
			return ctx.Err()
		}
		if opts.Observations != "" {
			if werr := writeOutput(opts.Observations, opts.Out, func(w io.Writer) error { return probe.WriteRecording(w, rec) }); werr != nil {
				return werr
			}
		}
		if err != nil {
			return fmt.Errorf("%s: %w", po.URL, err)
		}
	}
	r, err := probe.AnalyzeContext(ctx, rec)
	if err != nil {
		fmt.Fprintln(opts.ErrOut, "ratelim: probe stopped while analysing; nothing reported")
		return err
	}
	switch opts.Format {
	case "json":
		return probe.WriteJSON(opts.Out, r)
	case "limit":
		_, err := fmt.Fprint(opts.Out, probe.LimitBlock(r))
		return err
	}
	return probe.WriteText(opts.Out, r)
}
