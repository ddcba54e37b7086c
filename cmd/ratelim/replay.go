package main

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/internal/sat"
	"github.com/ratelim/ratelim/internal/words"
	"github.com/ratelim/ratelim/replay"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/trace"
)

// replayOptions are `ratelim replay`'s flags.
type replayOptions struct {
	streams
	Log    string
	Format string
	Quiet  bool
	Top    int
	Wide   bool
	Limits runLimits
	Plot   plotFlags
	// ErrIsTerminal says whether ErrOut is a terminal, where progress goes.
	ErrIsTerminal bool

	LogFormat  string
	Costs      []string
	Key        string
	Fields     []string
	TimeUnit   string
	IPv6Prefix int
	Reorder    time.Duration
	From       string
	Until      string
	Paths      []string
	PathGlob   string
	Methods    []string
	Only       string
	SkipBad    bool
	MaxKeys    int

	Rate      string
	Burst     int64
	Window    string
	Speed     float64
	Suggest   bool
	Quantiles []float64
	Vs        []string
	Redact    bool
	Salt      string
	// maxRequestsSet says --max-requests was given; else a replay's
	// budget is its log's requests and sim.DefaultMaxRequests more.
	maxRequestsSet bool

	over overrides
}

// replayOverrides are the scenario overrides replay takes, as sim does;
// its --key is the log's key, and its duration is the log's.
var replayOverrides = []string{"algorithm", "topology", "store", "servers", "balancer", "seed", "step", "on-error", "rtt"}

func newCmdReplay(s streams, runF func(*replayOptions) error) *cobra.Command {
	opts := &replayOptions{streams: s, ErrIsTerminal: isTerminal(s.ErrOut)}
	cmd := &cobra.Command{
		Use:   "replay LOG",
		Short: "Replay an access log through a limit: whom it would have throttled, when, and how much",
		Long: `Replay a real access log through a rate limit before it goes live: one client
per key of the log (client address, user, API key, ...), each sending the
key's requests at the log's own times, through any algorithm and topology.
It prints, per key, the requests, how many the limit would have refused, the
first refusal and the worst minute (log time, UTC), and the key's peak: the
most requests in any window of the limit's period; the most-throttled keys
first, then the totals.

LOG is a file, plain or gzipped (refused if it expands more than 200
times, as no log does), or - for standard input (kept in an unnamed
temporary file in $TMPDIR while it runs, to be read once per run: at most
4 GiB; a longer one is refused, save it to a file instead). Its format is
--log-format, else guessed from its name and first line (a pipe's from
its name alone): combined (nginx/Apache), jsonl, csv (with a header) or alb
(AWS ALB). Lines a few seconds out of order are put in order (--reorder);
a bad line stops the replay with file:line and what is wrong, unless
--skip-bad counts it.

--suggest measures every key's peaks and prints the limits that would have
left 99%, 99.9% and 100% of keys untouched (--quantile to choose), each
replayed to show what it would have refused in total. --vs FIELD=VALUE runs
a second limit beside the first (limit, burst, window, algorithm, topology,
servers, ...). --redact names keys by a salted hash in every output, so the
report can be shared; give --salt to make it the same from run to run.

Keys are escaped in every output: a byte that is not UTF-8 as \xNN and a
backslash as \\ (in the table and the plot, control and bidi characters
too).

Memory grows with the log's distinct keys, not its lines. The same log and
flags give the same output, byte for byte.`,
		Example: `  ratelim replay access.log --limit 100/m --burst 20
  ratelim replay access.log.gz --limit 10/s --key query:api_key --path /api/
  ratelim replay requests.jsonl --key api_key --limit 600/m --suggest
  ratelim replay access.log --limit 100/m --vs limit=200/m --vs burst=50
  ratelim replay access.log --limit 100/m --topology local --servers 8
  zcat access.log.gz | ratelim replay - --limit 5/s --format json`,
		Args: exactArgs(1, "an access log (a file, or - for standard input)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Log = args[0]
			opts.maxRequestsSet = cmd.Flags().Changed("max-requests")
			opts.over.set = map[string]string{}
			cmd.Flags().Visit(func(f *pflag.Flag) {
				if slices.Contains(replayOverrides, f.Name) && f.Name != "algorithm" {
					opts.over.set[f.Name] = f.Value.String()
				}
			})
			if runF != nil {
				return runF(opts)
			}
			return replayRun(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Format, "format", "table", "output: table, json (ratelim.replay/v1) or csv (a row per key)")
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "no progress")
	f.IntVar(&opts.Top, "top", replay.DefaultTop, "keys the table lists, most throttled first (0: all)")
	f.BoolVar(&opts.Wide, "wide", false, "the table with every column (by default the first 429 and then the worst minute are left out when it is wider than 80 columns)")
	addLimitFlags(f, &opts.Limits, true)
	f.IntVar(&opts.MaxKeys, "max-keys", 0, fmt.Sprintf("refuse a log with more distinct keys than this (0: as many as --max-memory holds, %s at its default)", words.Thousands(sim.MaxClientsIn(sim.DefaultMaxMemory))))

	addReplayLogFlags(f, opts)
	addReplayLimitFlags(f, opts)
	addPlotFlags(cmd, &opts.Plot)
	return cmd
}

// addReplayLogFlags adds the flags that say how the log is read and which
// of its requests are replayed; replayOptions.source checks them.
func addReplayLogFlags(f *pflag.FlagSet, opts *replayOptions) {
	f.StringVar(&opts.LogFormat, "log-format", "", "the log's format: combined, jsonl, csv or alb (default: from its name and first line)")
	f.StringVar(&opts.Key, "key", "", "what a request is keyed by: ip, user, ua, path, query:NAME (combined, alb); FIELD, ip:FIELD, query:NAME (jsonl, csv); default ip, or the field key")
	f.StringArrayVar(&opts.Fields, "field", nil, "jsonl/csv: PART=NAME, where the log keeps time, method, path or status (e.g. --field time=ts); - for none")
	f.StringVar(&opts.TimeUnit, "time-unit", "", "jsonl/csv: what a numeric time counts: s (default), ms, us or ns")
	f.IntVar(&opts.IPv6Prefix, "ipv6-prefix", 64, "leading bits of an IPv6 address that name a client (128: the whole address)")
	f.DurationVar(&opts.Reorder, "reorder", trace.DefaultReorder, "how far out of time order lines may be (0: none allowed)")
	f.StringVar(&opts.From, "from", "", "replay only requests at or after this time (RFC 3339, or 2006-01-02 15:04:05 in UTC)")
	f.StringVar(&opts.Until, "until", "", "replay only requests before this time")
	f.StringArrayVar(&opts.Paths, "path", nil, "replay only requests whose path starts with this")
	f.StringVar(&opts.PathGlob, "path-glob", "", "replay only requests whose path matches this glob (* within a segment)")
	f.StringSliceVar(&opts.Methods, "method", nil, "replay only requests with these methods (e.g. POST,PUT)")
	f.StringVar(&opts.Only, "only", "", "replay only this key's requests")
	f.StringArrayVar(&opts.Costs, "cost", nil, "[METHOD ]GLOB=COST: what a route's requests cost of the quota, first match wins, others 1 (e.g. --cost 'GET /search*=5')")
	f.BoolVar(&opts.SkipBad, "skip-bad", false, "count lines that cannot be read and go on, instead of stopping at the first")
}

// addReplayLimitFlags adds the limit the log is replayed through, what to
// replay beside it (--suggest, --vs), --redact, and the scenario overrides
// replay takes, as sim does.
func addReplayLimitFlags(f *pflag.FlagSet, opts *replayOptions) {
	f.StringVar(&opts.Rate, "limit", "", "the limit per key, e.g. 100/m (required)")
	f.Int64Var(&opts.Burst, "burst", 0, "token bucket, GCRA, leaky bucket: the burst (default: the limit's count, 100 for 100/m)")
	f.StringVar(&opts.Window, "window", "", "window algorithms: the window (default: the limit's period, 1m for 100/m)")
	f.Float64Var(&opts.Speed, "speed", 1, "play the log this many times faster, 0.001 to 1e9: 60 plays an hour in a minute (the limit sees 60× the rate); the run may last at most a year")
	f.BoolVar(&opts.Suggest, "suggest", false, "print the limits that would have left 99%, 99.9% and 100% of keys untouched, each replayed")
	f.Float64SliceVar(&opts.Quantiles, "quantile", trace.DefaultQuantiles, "with --suggest: the shares of keys to leave untouched")
	f.StringArrayVar(&opts.Vs, "vs", nil, "FIELD=VALUE: replay a second limit beside the first, e.g. --vs limit=200/m (FIELD: limit, burst, window, "+strings.Join(replayOverrides, ", ")+")")
	f.BoolVar(&opts.Redact, "redact", false, "name keys by a salted hash in every output")
	f.StringVar(&opts.Salt, "salt", "", "with --redact: the salt (default: a random one, so hashes differ from run to run)")

	o := &opts.over
	f.StringVar(&o.algorithm, "algorithm", "token-bucket", "limiter: "+strings.Join(algorithms.Names(), ", "))
	f.StringVar(&o.topology, "topology", "", "where the counter lives: local, shared (default), racy, split-brain or cluster")
	f.StringVar(&o.store, "store", "", "memory (default), miniredis or redis://host:port")
	f.StringVar(&o.servers, "servers", "", "number of API servers (default 1)")
	f.StringVar(&o.balancer, "balancer", "", "round-robin (default), random or key-hash")
	f.StringVar(&o.seed, "seed", "", "random seed (default 1)")
	f.StringVar(&o.step, "step", "", "the timeline's resolution (default: the finest of 1s, 10s, 1m, ... giving at most 1,500 steps)")
	f.StringVar(&o.onError, "on-error", "", "when the store fails: fail-open (default) or fail-closed")
	f.StringVar(&o.rtt, "rtt", "", "one store round trip (default 0)")
}

// replayPlan is what `ratelim replay` runs, every flag checked.
type replayPlan struct {
	src       replay.Source
	limit     sim.Limit
	vs        map[string]string // --vs: the second run's fields
	vsOrder   []string
	simOpts   sim.Options
	peaks     *trace.Peaks
	redact    func(string) string
	quantiles []float64
}

func planReplay(opts *replayOptions) (*replayPlan, error) {
	if err := checkOutputFlags(opts.Format, &opts.Plot); err != nil {
		return nil, err
	}
	if opts.Top < 0 {
		return nil, badInput("--top: must be 0 (all) or more (got %d)", opts.Top)
	}
	if opts.MaxKeys < 0 {
		return nil, badInput("--max-keys: must be 0 (as many as --max-memory holds) or more (got %d)", opts.MaxKeys)
	}
	simOpts, err := opts.Limits.apply()
	if err != nil {
		return nil, err
	}
	_, stepAsked := opts.over.set["step"]
	simOpts.FitStep = !stepAsked
	if opts.Plot.Path == "" {
		simOpts.StateOf = func(string) bool { return false }
	}
	p := &replayPlan{simOpts: simOpts}
	if p.src, err = opts.source(); err != nil {
		return nil, err
	}
	if opts.Rate == "" {
		return nil, badInput("--limit: required: the limit per key to replay the log through (want e.g. --limit 100/m)")
	}
	if p.limit, err = replayLimit(opts.over.algorithm, opts.Rate, opts.Burst, opts.Window, "--"); err != nil {
		return nil, err
	}
	if p.vs, p.vsOrder, err = parseReplayVs(opts.Vs); err != nil {
		return nil, err
	}
	if opts.Suggest {
		for _, q := range opts.Quantiles {
			if !(q > 0 && q <= 1) {
				return nil, badInput("--quantile: %g is not a share of keys in (0, 1] (want e.g. 0.99)", q)
			}
		}
		p.quantiles = opts.Quantiles
		if len(p.vs) > 0 {
			return nil, badInput("--suggest and --vs do not go together (suggest first, then compare two of its limits with --vs)")
		}
		pp := p.limit.Params
		if p.peaks, err = trace.NewPeaks(replay.PeakWindow(pp), pp.Rate.N, pp.Rate.Per); err != nil {
			return nil, badInput("--limit: %v", err)
		}
	} else {
		// The peak column is measured at the limit, suggest or not.
		pp := p.limit.Params
		p.peaks, _ = trace.NewPeaks(replay.PeakWindow(pp), pp.Rate.N, pp.Rate.Per)
	}
	if opts.Salt != "" && !opts.Redact {
		return nil, badInput("--salt: only with --redact")
	}
	if opts.Redact {
		salt := []byte(opts.Salt)
		if len(salt) == 0 {
			salt = make([]byte, 16)
			rand.Read(salt)
			fmt.Fprintln(opts.ErrOut, "ratelim: --redact: keys are hashed with a random salt; give --salt to get the same names from run to run")
		}
		p.redact = redactor(salt)
	}
	return p, nil
}

// redactor names a key by the first 12 hex digits of its HMAC-SHA256
// under salt: the same key the same name throughout a report, and no
// way back to the key without the salt (an IPv4 address, with only 2³²
// of them, would be found from an unsalted hash).
func redactor(salt []byte) func(string) string {
	return func(key string) string {
		m := hmac.New(sha256.New, salt)
		m.Write([]byte(key))
		return "key-" + hex.EncodeToString(m.Sum(nil))[:12]
	}
}

// replayRun plans the replay, reads the log through once, replays it
// through the limit (and the --vs one beside it, and each suggested
// limit), and writes the plot and the report.
func replayRun(ctx context.Context, opts *replayOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	p, err := planReplay(opts)
	if err != nil {
		return err
	}
	label := opts.Log
	if label == "-" {
		label = "stdin"
	}
	showProgress := opts.ErrIsTerminal && !opts.Quiet
	log, err := scanReplayLog(ctx, opts, p, label, showProgress)
	if err != nil {
		return err
	}
	defer log.Close()
	if len(log.Keys) == 0 {
		return badInput("%s: none of its %s requests has a key (%s): there is nothing to limit (want another --key)", label, words.Thousands(log.Requests), keyName(opts))
	}
	if !opts.maxRequestsSet {
		// A log's requests are known: the budget is for what its clients'
		// retries add, not a bound on the log's length.
		p.simOpts.MaxRequests = sat.Add(log.Requests, sim.DefaultMaxRequests)
	}
	sc := log.Scenario(p.limit, p.redact)
	if err := opts.over.apply(&sc); err != nil {
		return err
	}
	rep := &replay.Report{Log: log}
	labelA, labelB := replay.LimitText(sc.Limit), ""
	var scB sim.Scenario
	if p.vs != nil {
		if scB, err = p.versus(sc); err != nil {
			return err
		}
		labelA, labelB = p.vsLabels(sc, scB)
	}
	progress := newProgress(opts.ErrOut, showProgress, "simulating")
	simOpts := p.simOpts
	simOpts.Progress = progress.update
	runA, err := log.Replay(ctx, labelA, sc, simOpts)
	progress.done()
	if err := runError(opts.ErrOut, label, err); err != nil {
		return err
	}
	rep.Runs = append(rep.Runs, runA)
	if p.vs != nil {
		runB, err := log.Replay(ctx, labelB, scB, p.simOpts)
		if err := runError(opts.ErrOut, label, err); err != nil {
			return err
		}
		rep.Runs = append(rep.Runs, runB)
	}
	if p.quantiles != nil {
		rep.Suggestions, err = log.Suggest(ctx, sc, p.quantiles, p.simOpts, opts.Limits.Workers)
		if err := runError(opts.ErrOut, label, err); err != nil {
			return err
		}
	}
	return writeReplay(opts, rep)
}

// scanReplayLog reads the log through once (replay.Scan), counting the
// lines read on the terminal when showProgress. A log too big for the
// memory bound is a *sim.TooBigError; any other that cannot be replayed is
// the user's to fix (replayInputError).
func scanReplayLog(ctx context.Context, opts *replayOptions, p *replayPlan, label string, showProgress bool) (*replay.Log, error) {
	scanProgress := func(lines int) {}
	if showProgress {
		scanProgress = func(lines int) {
			fmt.Fprintf(opts.ErrOut, "\rreading %s: %s lines ", label, words.Thousands(int64(lines)))
		}
	}
	log, err := replay.Scan(ctx, p.src, replay.ScanOptions{Peaks: p.peaks, MaxKeys: opts.MaxKeys, MaxMemory: p.simOpts.MaxMemory, Progress: scanProgress})
	if showProgress {
		fmt.Fprint(opts.ErrOut, "\r\033[K")
	}
	if sim.IsTooBig(err) {
		return nil, err
	}
	if err != nil {
		return nil, replayInputError(err)
	}
	return log, nil
}

// vsLabels name the two runs of --vs by the fields it changed, in the
// order given: "limit=100/m burst=20" beside "limit=200/m burst=50".
func (p *replayPlan) vsLabels(a, b sim.Scenario) (labelA, labelB string) {
	var la, lb []string
	for _, name := range p.vsOrder {
		la = append(la, name+"="+replaySetting(a, name))
		lb = append(lb, name+"="+replaySetting(b, name))
	}
	return strings.Join(la, " "), strings.Join(lb, " ")
}

// writeReplay writes the plot, if asked for (the two runs side by side
// under --vs, else the first's timeline), then the report as --format asks.
func writeReplay(opts *replayOptions, rep *replay.Report) error {
	opts.Plot.Focus = plotFocus(rep.Runs)
	var err error
	if len(rep.Runs) == 2 {
		err = opts.Plot.render(func(w io.Writer) error {
			return renderVersus(w, rep.Runs[0].Result, rep.Runs[1].Result, rep.Runs[0].Label, rep.Runs[1].Label, opts.Plot)
		})
	} else {
		err = opts.Plot.render(func(w io.Writer) error { return renderTimeline(w, rep.Runs[0].Result, opts.Plot) })
	}
	if err != nil {
		return err
	}
	switch opts.Format {
	case "json":
		return replay.WriteJSON(opts.Out, rep)
	case "csv":
		return replay.WriteCSV(opts.Out, rep)
	}
	return replay.WriteTable(opts.Out, rep, replay.TableOptions{Top: opts.Top, Wide: opts.Wide})
}

// plotFocus are the keys a replay's plot gives a panel each: those any
// run throttled, most refused first, else the busiest; the rest are
// added up into one panel, so that the throttled stand out.
func plotFocus(runs []*replay.Run) []string {
	var focus []string
	seen := map[string]bool{}
	for _, run := range runs {
		for _, k := range run.Keys {
			if k.Rejected > 0 && !seen[k.Key] {
				seen[k.Key] = true
				focus = append(focus, k.Key)
			}
		}
	}
	if len(focus) == 0 {
		for _, k := range runs[0].Keys {
			focus = append(focus, k.Key)
		}
	}
	return focus[:min(len(focus), 8)]
}

func keyName(opts *replayOptions) string {
	if opts.Key != "" {
		return "--key " + opts.Key
	}
	return "the format's default key"
}

// replayInputError is a log that cannot be replayed (a bad line, no
// request, a file that cannot be read): the user's to fix, and a run
// refused before it started, so no usage hint follows it.
func replayInputError(err error) error {
	return usageError{&sim.SetupError{Err: err}}
}
