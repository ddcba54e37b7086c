package main

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	// The zones --tz names, whatever this machine has installed: the
	// same flags give the same output anywhere.
	_ "time/tzdata"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/internal/escape"
	"github.com/ratelim/ratelim/internal/sat"
	"github.com/ratelim/ratelim/internal/words"
	"github.com/ratelim/ratelim/plots"
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
	Spread     string
	TZ         string

	Rate     string
	Burst    int64
	Window   string
	Speed    float64
	Suggest  bool
	Quantile string
	Headroom string
	Vs       []string
	Redact   bool
	Salt     string
	// maxRequestsSet says --max-requests was given; else a replay's
	// budget is its log's requests and sim.DefaultMaxRequests more.
	maxRequestsSet bool
	// quantileSet and headroomSet say --quantile and --headroom were
	// given, whatever their values: they go only with --suggest.
	quantileSet, headroomSet bool
	// burstSet says --burst was given.
	burstSet bool

	over overrides
}

// replayOverrides are the scenario overrides replay takes, as sim does;
// its --key is the log's key, and its duration is the log's.
var replayOverrides = []string{"algorithm", "topology", "store", "servers", "balancer", "seed", "step", "on-error", "rtt"}

func newCmdReplay(s streams, runF func(*replayOptions) error) *cobra.Command {
	opts := &replayOptions{streams: s, ErrIsTerminal: isTerminal(s.ErrOut)}
	cmd := &cobra.Command{
		Use:   "replay LOG",
		Short: "Replay an access log through a limit: whom it throttles, when",
		Long: `Replay a real access log through a rate limit before it goes live: one client
per key of the log (client address, user, API key, ...), each sending the
key's requests at the log's own times, through any algorithm and topology.
It prints, per key, the requests, how many the limit would have refused,
the first refusal and the worst minute (log time, UTC or --tz), and the
key's peak: the most requests in any window of the limit's period; the
most-throttled keys first, then the totals.

LOG is a file, plain or gzipped (refused if it expands more than 200
times, as no log does), or - for standard input (kept in an unnamed
temporary file in $TMPDIR while it runs, to be read once per run: at most
4 GiB; a longer one is refused, save it to a file instead). Its format is
--log-format, else guessed from its name and first line (a pipe's from
its name alone): combined (nginx/Apache), jsonl, csv (with a header) or alb
(AWS ALB). Lines a few seconds out of order are put in order (--reorder);
a bad line stops the replay with file:line and what is wrong, unless
--skip-bad counts it.

--suggest proposes a rate and a burst (--limit optional; given, it pins the
rate): for each rate on a 1-2-5 grid spanning the bulk of the keys, the
smallest burst that spares every key but the outliers, plus --headroom
(20%). Outliers are keys whose busiest 1s, 10s, 1m or 10m is more than 3.5
robust deviations above the bulk's (the rule and its figures are printed,
and the keys close to it). Each row names the key setting its burst, is
replayed, and every figure shown is its replay's; the keys each throttles
are named, and one row is recommended, never one below the bulk's busiest
mean rate plus headroom (marked ~: it spares that key only because the log
ends). --suggest reads the log as logged (--speed 1). Window algorithms
get a row per window. --vs FIELD=VALUE runs a second limit beside the
first (limit, burst, window, algorithm, topology, servers, ...). --redact
names keys by a salted hash in every output, so the report can be shared;
give --salt to make it the same from run to run.

Times are as logged, and the header says how fine they are (whole-second
times for nginx's $time_local) and warns when they are coarser than the
limit refills: a second's requests then arrive at once. --spread spaces each
key's requests of one tick evenly across it, from an offset hashed from
--seed, the key and the tick: --spread alone for the log's own tick, or
--spread=1s (with =; any other tick than the log's is refused). A log
whose times are already finer than --limit refills is left as logged, and
the header says so. --tz puts the table's times in a zone (the JSON and
CSV stay in UTC).

Keys are escaped in every output: a byte that is not UTF-8 as \xNN and a
backslash as \\ (in the table and the plot, control and bidi characters
too).

Memory grows with the log's distinct keys, not its lines; --max-memory
bounds each run, and --parallel runs go at once. --suggest adds about 800
bytes a key for its profile (counted in the bound on keys), and 8 bytes
for each request of the busiest ten minutes of each key, which grows with
the log's requests; it keeps only each row's totals and throttled keys.
The same log and flags give the same output, byte for byte.`,
		Example: `  ratelim replay access.log --limit 100/m --burst 20
  ratelim replay access.log.gz --limit 10/s --key query:api_key --path /api/
  ratelim replay requests.jsonl --key api_key --suggest
  ratelim replay access.log --limit 2/s --burst 1 --spread --tz Europe/Paris
  ratelim replay access.log --limit 100/m --vs limit=200/m --vs burst=50
  ratelim replay access.log --limit 100/m --topology local --servers 8
  zcat access.log.gz | ratelim replay - --limit 5/s --format json`,
		Args: func(cmd *cobra.Command, args []string) error {
			// --spread takes its tick after "=": "--spread 1s" reads 1s
			// as a second log.
			if len(args) == 2 && opts.Spread == spreadAuto {
				if _, err := time.ParseDuration(args[1]); err == nil {
					return badInput("--spread: give the tick after =, as --spread=%s (--spread alone spreads over the log's own tick)", args[1])
				}
			}
			return exactArgs(1, "an access log (a file, or - for standard input)")(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Log = args[0]
			opts.maxRequestsSet = cmd.Flags().Changed("max-requests")
			opts.quantileSet, opts.headroomSet = cmd.Flags().Changed("quantile"), cmd.Flags().Changed("headroom")
			opts.burstSet = cmd.Flags().Changed("burst")
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
	f.StringVar(&opts.Format, "format", "table", "output: table, json (ratelim.replay/v2) or csv (a row per key; not with --suggest)")
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "no progress")
	f.IntVar(&opts.Top, "top", replay.DefaultTop, "keys the table lists, most throttled first (0: all)")
	f.StringVar(&opts.TZ, "tz", "UTC", "the time zone the table's times and the plot's clock are in, e.g. Europe/Paris (the JSON and CSV stay in UTC)")
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
	f.StringVar(&opts.Spread, "spread", "", "space each key's requests of one tick evenly across it, seeded by --seed: --spread alone for the log's own tick (1s for whole-second times; a log finer than --limit refills is left alone), or that tick named, --spread=1s (default: times exactly as logged)")
	f.Lookup("spread").NoOptDefVal = spreadAuto
}

// addReplayLimitFlags adds the limit the log is replayed through, what to
// replay beside it (--suggest, --vs), --redact, and the scenario overrides
// replay takes, as sim does.
func addReplayLimitFlags(f *pflag.FlagSet, opts *replayOptions) {
	f.StringVar(&opts.Rate, "limit", "", "the limit per key, e.g. 100/m (required, but with --suggest, where it pins the rate)")
	f.Int64Var(&opts.Burst, "burst", 0, "token bucket, GCRA, leaky bucket: the burst (default: the limit's count, 100 for 100/m)")
	f.StringVar(&opts.Window, "window", "", "window algorithms: the window (default: the limit's period, 1m for 100/m)")
	f.Float64Var(&opts.Speed, "speed", 1, "play the log this many times faster, 0.001 to 1e9: 60 plays an hour in a minute (the limit sees 60× the rate); the run may last at most a year")
	f.BoolVar(&opts.Suggest, "suggest", false, "suggest a rate and burst: for each rate on a 1-2-5 grid (or --limit's), the smallest burst sparing every key but the outliers, plus --headroom, each replayed")
	f.StringVar(&opts.Quantile, "quantile", "", "with --suggest: spare this share of the keys, e.g. 0.99, instead of every key but the outliers")
	f.StringVar(&opts.Headroom, "headroom", "20%", "with --suggest: the margin added to the burst each rate needs, and to the bulk's busiest mean rate below which no row is recommended: 0% to 1000%, e.g. 20% or 0.2")
	f.StringArrayVar(&opts.Vs, "vs", nil, "FIELD=VALUE: replay a second limit beside the first, e.g. --vs limit=200/m (FIELD: limit, burst, window, "+strings.Join(replayOverrides, ", ")+")")
	f.BoolVar(&opts.Redact, "redact", false, "name keys by a salted hash in every output")
	f.StringVar(&opts.Salt, "salt", "", "with --redact: the salt (default: a random one, so hashes differ from run to run)")

	o := &opts.over
	f.StringVar(&o.algorithm, "algorithm", replay.DefaultAlgorithm, "limiter: "+strings.Join(algorithms.Names(), ", "))
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
	src     replay.Source
	limit   sim.Limit
	vs      map[string]string // --vs: the second run's fields
	vsOrder []string
	simOpts sim.Options
	peaks   *trace.Peaks
	redact  func(string) string
	// suggest is --suggest's frontier options, nil without it; rateGiven
	// says --limit was given (else the replay shown is the recommended
	// row's).
	suggest   *replay.FrontierOptions
	profile   *trace.Profile
	rateGiven bool
	// replayGiven says the limit given is replayed and shown: always
	// without --suggest; with it, when --limit gives a whole limit (a
	// bucket's with --burst, a window algorithm's), else the table of
	// keys is the recommended row's, not a burst of the rate's count.
	replayGiven bool
	// loc is --tz's zone.
	loc *time.Location
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
	if p.loc, err = parseZone(opts.TZ); err != nil {
		return nil, err
	}
	if p.src, err = opts.source(); err != nil {
		return nil, err
	}
	if p.limit, p.rateGiven, err = opts.replayLimit(); err != nil {
		return nil, err
	}
	if p.rateGiven {
		// --spread alone leaves a log alone whose times are already finer
		// than the limit refills.
		p.src.SpreadFinerThan = replay.RefillInterval(p.limit)
	}
	p.replayGiven = p.rateGiven && (!opts.Suggest || opts.burstSet || p.limit.Params.Window > 0)
	if p.vs, p.vsOrder, err = parseReplayVs(opts.Vs); err != nil {
		return nil, err
	}
	if opts.Suggest {
		if err := p.planSuggest(opts); err != nil {
			return nil, err
		}
	} else if opts.quantileSet {
		return nil, badInput("--quantile: only with --suggest")
	} else if opts.headroomSet {
		return nil, badInput("--headroom: only with --suggest")
	}
	if p.rateGiven {
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

// replayLimit reads --limit, --burst and --window; with --suggest,
// --limit may be left out (rateGiven false), and the limit is then a
// stand-in each suggested row replaces.
func (opts *replayOptions) replayLimit() (limit sim.Limit, rateGiven bool, err error) {
	rate := opts.Rate
	if rate == "" {
		if !opts.Suggest {
			return limit, false, badInput("--limit: required: the limit per key to replay the log through (want e.g. --limit 100/m, or --suggest to have one suggested)")
		}
		if opts.Burst != 0 {
			return limit, false, badInput("--burst: with --suggest, the burst is what it suggests (want --limit too, to replay that burst beside the suggestions)")
		}
		rate = "1/s"
	}
	limit, err = replayLimit(opts.over.algorithm, rate, opts.Burst, opts.Window, "--")
	return limit, opts.Rate != "", err
}

// planSuggest checks --suggest's flags: --quantile, --headroom, not with
// --vs; and sets up the profile the log is measured with, at the grid's
// rates and --limit's, and in --window's window.
func (p *replayPlan) planSuggest(opts *replayOptions) error {
	if opts.Format == "csv" {
		return badInput("--format: csv writes a row per key; --suggest's frontier is in --format json (want json or table)")
	}
	if opts.Speed != 1 {
		// The profiles are of the log's own times; rows replayed faster
		// would be measured against another log.
		return badInput("--speed: --suggest profiles the log as logged (want 1)")
	}
	if len(p.vs) > 0 {
		return badInput("--suggest and --vs do not go together (suggest first, then compare two of its limits with --vs)")
	}
	q, err := parseQuantile(opts.Quantile)
	if err != nil {
		return err
	}
	h, err := parseHeadroom(opts.Headroom)
	if err != nil {
		return err
	}
	fo := &replay.FrontierOptions{Headroom: h, Quantile: q, Workers: opts.Limits.Workers}
	params := p.limit.Params
	var windows []time.Duration
	if p.rateGiven {
		fo.Rate = &params.Rate
	}
	if params.Window > 0 && (p.rateGiven || opts.Window != "") {
		fo.Window = params.Window
		windows = append(windows, params.Window)
	}
	if p.profile, err = trace.NewProfile(replay.ProfileRates(fo.Rate), windows...); err != nil {
		return badInput("--limit: %v", err)
	}
	p.suggest = fo
	return nil
}

// parseQuantile reads --quantile: one share of keys in (0, 1], "" for
// none.
func parseQuantile(text string) (float64, error) {
	t := strings.TrimSpace(text)
	if t == "" {
		return 0, nil
	}
	q, err := strconv.ParseFloat(t, 64)
	if err != nil || !(q > 0 && q <= 1) {
		return 0, badInput("--quantile: %q is not a share of keys in (0, 1] (want one, e.g. 0.99)", text)
	}
	return q, nil
}

// parseZone reads --tz: a zone of the tz database, as time.LoadLocation
// finds it, or UTC. "Local", which is whatever this machine is set to,
// is refused: the same log and flags give the same output anywhere.
func parseZone(name string) (*time.Location, error) {
	name = strings.TrimSpace(name)
	if name == "Local" {
		return nil, badInput("--tz: Local is this machine's zone; name it (want e.g. Europe/Paris)")
	}
	loc, err := time.LoadLocation(name)
	if err != nil || name == "" {
		return nil, badInput("--tz: unknown time zone %s (want e.g. UTC, Europe/Paris)", escape.Text(name))
	}
	return loc, nil
}

// parseHeadroom reads --headroom: a percentage ("20%") or a fraction
// below 1 ("0.2"), from 0% to 1000%; a bare number of 1 or more is
// refused as ambiguous.
func parseHeadroom(text string) (float64, error) {
	t := strings.TrimSpace(text)
	pct := strings.HasSuffix(t, "%")
	v, err := strconv.ParseFloat(strings.TrimSuffix(t, "%"), 64)
	if pct {
		v /= 100
	} else if err == nil && v >= 1 {
		// 5 could be 5% or 500%: say which.
		return 0, badInput("--headroom: %s is ambiguous (want %s%% or %s)", t, t, strconv.FormatFloat(v/100, 'g', -1, 64))
	}
	if err != nil || !(v >= 0 && v <= replay.MaxHeadroom) {
		return 0, badInput("--headroom: %q is not a margin from 0%% to 1000%% (want e.g. 20%%, or 0.2)", text)
	}
	return v, nil
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
	if p.replayGiven {
		runA, err := log.Replay(ctx, labelA, sc, simOpts)
		progress.done()
		if err := runError(opts.ErrOut, label, err); err != nil {
			return err
		}
		rep.Runs = append(rep.Runs, runA)
	}
	if p.vs != nil {
		runB, err := log.Replay(ctx, labelB, scB, p.simOpts)
		if err := runError(opts.ErrOut, label, err); err != nil {
			return err
		}
		rep.Runs = append(rep.Runs, runB)
	}
	if p.suggest != nil {
		rep.Frontier, err = log.Frontier(ctx, sc, *p.suggest, p.simOpts)
		if !p.replayGiven {
			progress.done()
		}
		if err := runError(opts.ErrOut, label, err); err != nil {
			return err
		}
		if !p.replayGiven && rep.Frontier.Run != nil {
			// The replay shown is the recommended limit's; with none
			// recommended, none is shown as if chosen.
			rep.Runs = append(rep.Runs, rep.Frontier.Run)
		}
	}
	return writeReplay(opts, rep, p.loc)
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
	log, err := replay.Scan(ctx, p.src, replay.ScanOptions{Peaks: p.peaks, Profile: p.profile, MaxKeys: opts.MaxKeys, MaxMemory: p.simOpts.MaxMemory, Progress: scanProgress})
	if showProgress {
		fmt.Fprint(opts.ErrOut, "\r\033[K")
	}
	if sim.IsTooBig(err) {
		return nil, err
	}
	if te := new(replay.SpreadTickError); errors.As(err, &te) {
		return nil, replayInputError(fmt.Errorf("--spread: %s is not the log's resolution %s (want --spread alone, or --spread=%s)",
			words.Duration(te.Tick), words.Duration(te.Resolution), words.Duration(te.Resolution)))
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
func writeReplay(opts *replayOptions, rep *replay.Report, loc *time.Location) error {
	opts.Plot.Focus = plotFocus(rep.Runs)
	// In the log's clock, titled by what was replayed: not the seed,
	// balancer and on-error a simulated scenario has.
	var c replay.Caption
	if len(rep.Runs) > 0 {
		c = replay.CaptionOf(rep.Log, rep.Runs[0].Scenario, loc)
	} else {
		c = replay.CaptionOf(rep.Log, rep.Frontier.Scenario, loc)
	}
	opts.Plot.Clock, opts.Plot.Caption = loc, &plots.Caption{Limit: c.Limit, Key: c.Key, Log: c.Log, Window: c.Window}
	var err error
	switch {
	case rep.Frontier != nil:
		err = opts.Plot.render(func(w io.Writer) error {
			if opts.Plot.format == "gif" {
				return badInput("--plot: --suggest draws a still frontier; write it as .png or .svg")
			}
			return plots.Frontier(w, frontierPlot(rep), opts.Plot.options())
		})
	case len(rep.Runs) == 2:
		err = opts.Plot.render(func(w io.Writer) error {
			return renderVersus(w, rep.Runs[0].Result, rep.Runs[1].Result, rep.Runs[0].Label, rep.Runs[1].Label, opts.Plot)
		})
	default:
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
	return replay.WriteTable(opts.Out, rep, replay.TableOptions{Top: opts.Top, Wide: opts.Wide, Location: loc})
}

// frontierPlot is --suggest's frontier as plots.Frontier draws it: a
// point per row at its rate and the burst the table gives it (NEEDS plus
// headroom), the recommended one chosen, its dashed line the burst
// recommended; each key at its mean rate and what it needs at the
// recommended row (a window algorithm's point: the limit's count over the
// window, and the count).
func frontierPlot(rep *replay.Report) plots.FrontierData {
	f := rep.Frontier
	names := f.Scenario.Clients
	var wins []string
	for _, ws := range f.Outliers.Windows {
		wins = append(wins, words.Duration(ws.Window))
	}
	sub := fmt.Sprintf("outliers: keys whose busiest %s is more than %g robust deviations above the bulk's: %s of %s; each point: a row's burst with %g%% headroom",
		words.OneOf(wins), trace.OutlierZ, words.Thousands(int64(f.Outliers.Count())), words.Count(len(f.Keys), "key", "keys"), 100*f.Headroom)
	if f.Outliers.TooFew {
		sub = fmt.Sprintf("too few keys for the outlier rule (%d, want %d or more); each point: a row's burst with %g%% headroom", len(f.Keys), trace.MinOutlierKeys, 100*f.Headroom)
	}
	if f.Recommended >= 0 {
		row := f.Rows[f.Recommended]
		sub += fmt.Sprintf("; recommended %s, needs %s", replay.RowName(f, row), words.Thousands(row.Need))
	}
	d := plots.FrontierData{Title: f.Scenario.Name + " · " + f.Scenario.Limit.Algorithm, Subtitle: sub}
	for i, row := range f.Rows {
		rate, burst := row.Params.Rate.PerSecond(), row.Params.Burst
		if f.Window {
			burst = row.Params.Rate.N
			rate = float64(burst) / row.Params.Window.Seconds()
		}
		d.Points = append(d.Points, plots.FrontierPoint{Rate: rate, Burst: int(min(burst, math.MaxInt32)), Chosen: i == f.Recommended})
	}
	at := f.Rows[max(f.Recommended, 0)]
	for i, k := range f.Keys {
		d.Keys = append(d.Keys, plots.FrontierKey{Name: names[i].Name, MeanRate: k.MeanRate(f.Span),
			Burst: int(min(f.KeyNeeds(at, i), math.MaxInt32)), Outlier: f.Outliers.Is[i]})
	}
	return d
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
	if len(focus) == 0 && len(runs) > 0 {
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
