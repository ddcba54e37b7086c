package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ratelim/ratelim/internal/escape"
	"github.com/ratelim/ratelim/internal/words"
	"github.com/ratelim/ratelim/live"
	"github.com/ratelim/ratelim/report"
	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/store"
)

type serveOptions struct {
	streams
	Scenario       string
	Listen         string
	AllowRemote    bool
	Control        string
	TrustedProxies []string
	over           overrides
	// ready, if set, receives the fleet once it listens (tests).
	ready func(*live.Fleet)
}

func newCmdServe(s streams, runF func(*serveOptions) error) *cobra.Command {
	opts := &serveOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "serve SCENARIO|FILE",
		Short: "Start demo API servers on loopback behind a scenario's limiter",
		Long: `Start the scenario's API servers on loopback ports, each behind the httplimit
middleware with the scenario's limit and topology: local (a memory jar per
server), shared (one store), racy (one store, read and written in two calls),
split-brain (two stores; --store redis://a,redis://b), cluster (a simulated
Redis Cluster, a memory store per node; for a real one, shared with --store
redis+cluster://h:p,h:p). Requests are keyed
exactly as the scenario's limit.key says: api-key reads X-API-Key alone and
user X-User alone (a request without it gets 400, never a bucket of its
own), ip the client's address alone, auto X-API-Key, else X-User, else the
address. Each answers GET /api, 429 with Retry-After and the RateLimit
fields when limited, and serves /metrics in Prometheus text format. Stop it
with ctrl-c (SIGINT) or SIGTERM: in-flight requests finish first. Store
failures and recoveries are logged on stderr.

Faults are applied through a control listener of its own, on loopback only
and apart from the API ports (which answer 404 there), that takes only
requests with the token printed at start: pass both to 'ratelim load' with
--control and --token. The servers listen on loopback unless --allow-remote;
X-Forwarded-For is believed only from --trusted-proxies (none by default;
'ratelim load' sends each client's IP in it, so trust 127.0.0.1/32 for an
ip-keyed scenario loaded from this machine).

--store redis-server starts a redis-server of its own on a free port (and
removes it at exit); miniredis runs one in process; redis://host:port uses
yours, under a key prefix of its own that is deleted at exit.`,
		Example: `  ratelim serve runaway-healthcheck --servers 4 --listen 127.0.0.1:8080
  ratelim serve runaway-healthcheck --topology local
  ratelim serve store-outage --store redis-server`,
		Args: exactArgs(1, "a scenario name or file (see 'ratelim scenarios')"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Scenario = args[0]
			opts.over.visit(cmd)
			if runF != nil {
				return runF(opts)
			}
			return serveRun(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Listen, "listen", "127.0.0.1:8080", "the first server's address; server i listens on port + i (port 0: any free ports)")
	f.BoolVar(&opts.AllowRemote, "allow-remote", false, "allow a --listen address other machines can reach")
	f.StringVar(&opts.Control, "control", "127.0.0.1:0", "the control listener's address, on loopback (port 0: a free one)")
	f.StringSliceVar(&opts.TrustedProxies, "trusted-proxies", nil, "CIDRs or addresses whose X-Forwarded-For is believed, comma-separated (e.g. 127.0.0.1/32,10.0.0.0/8); none by default")
	addOverrideFlags(cmd, &opts.over)
	return cmd
}

// servePlan is what `ratelim serve` starts: the fleet's options, but for
// the logger, and the file they came from.
type servePlan struct {
	file  *scenarios.File
	fleet live.ServeOptions
}

// planServe checks opts and opens the scenario, starting nothing. The
// addresses are checked by live.Serve, which knows what it can listen on.
func planServe(opts *serveOptions) (*servePlan, error) {
	over, fleetStore := opts.over, ""
	if over.set["store"] == fleetRedis {
		// A redis-server the fleet starts and owns, so that an outage can
		// stop it, is the fleet's and not a store a scenario can name:
		// it goes to live.Serve, not through the file's field.
		fleetStore = fleetRedis
		over.set = maps.Clone(over.set)
		delete(over.set, "store")
	}
	file, sc, err := opts.loadScenario(opts.Scenario, over)
	if err != nil {
		return nil, err
	}
	proxies, err := parseTrustedProxies(opts.TrustedProxies)
	if err != nil {
		return nil, err
	}
	return &servePlan{file: file, fleet: live.ServeOptions{Scenario: sc, Store: fleetStore, Listen: opts.Listen, AllowRemote: opts.AllowRemote,
		Control: opts.Control, TrustedProxies: proxies}}, nil
}

// fleetRedis is serve's --store for a redis-server of the fleet's own.
const fleetRedis = "redis-server"

func serveRun(ctx context.Context, opts *serveOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	p, err := planServe(opts)
	if err != nil {
		return err
	}
	file, sc := p.file, p.fleet.Scenario
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	so := p.fleet
	so.Logger = slog.New(slog.NewTextHandler(opts.ErrOut, nil))
	fleet, err := live.Serve(ctx, so)
	if err != nil {
		return setupOrErr(scenarioLabel(file), err)
	}
	fmt.Fprintf(opts.Out, "%s: %d %s, %s on %s, %s %s, on error %s\n", escape.Text(sc.Name), len(fleet.URLs), words.Plural(len(fleet.URLs), "server", "servers"),
		sc.Topology.Kind, store.Redacted(cmp.Or(so.Store, sc.Topology.Store)), sc.Limit.Algorithm, sc.Limit.Params.Rate, sc.Topology.OnError)
	for i, u := range fleet.URLs {
		fmt.Fprintf(opts.Out, "  server %d  %s/api   %s/metrics\n", i, u, u)
	}
	fmt.Fprintf(opts.Out, "  control   %s (faults: ratelim load ... --control %s --token %s)\n", fleet.ControlURL, fleet.ControlURL, fleet.Token)
	fmt.Fprintf(opts.Out, "  %s\n", live.KeyRule(sc.Limit.Key))
	if sc.Limit.Key == sim.KeyIP && len(so.TrustedProxies) == 0 {
		fmt.Fprintln(opts.Out, "  keyed by ip, and no --trusted-proxies: X-Forwarded-For is ignored, so every local client is 127.0.0.1")
	}
	fmt.Fprintln(opts.Out, "ctrl-c stops them")
	if opts.ready != nil {
		opts.ready(fleet)
	}
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-fleet.Err():
	}
	if err := closeFleet(opts.ErrOut, fleet); err != nil && serveErr == nil {
		serveErr = err
	}
	return serveErr
}

// closeFleet stops a fleet (in-flight requests get 5 s) and says on errOut
// what did not go as it should. Keys a Redis store would not delete are a
// warning, as for sim: the run was whole, and they expire on their own.
// Anything else is returned.
func closeFleet(errOut io.Writer, fleet *live.Fleet) error {
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := fleet.Close(shutdown)
	if err == nil {
		return nil
	}
	var rest []error
	for _, e := range unjoin(err) {
		if errors.As(e, new(*sim.CleanupError)) {
			fmt.Fprintf(errOut, "ratelim: warning: %v\n", e)
		} else {
			rest = append(rest, e)
		}
	}
	if len(rest) == 0 {
		return nil
	}
	return fmt.Errorf("stopping the fleet: %w", errors.Join(rest...))
}

// unjoin is the errors errors.Join put together, or err alone.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// maxInFlight is the most --max-in-flight takes. Each request in flight
// holds a connection, a file descriptor and a loopback port: past ten
// thousand a run measures the machine, not the limiter.
const maxInFlight = 10_000

type loadOptions struct {
	streams
	// ErrIsTerminal says whether ErrOut is a terminal, where progress goes.
	ErrIsTerminal bool
	Scenario      string
	Targets       []string
	// Path is requested on every target (--path).
	Path        string
	AllowRemote bool
	Faults      bool
	Control     string
	Token       string
	MaxInFlight int
	MaxRequests int64
	Format      string
	Quiet       bool
	Wide        bool
	Dense       bool
	Plot        plotFlags
	over        overrides
}

func newCmdLoad(s streams, runF func(*loadOptions) error) *cobra.Command {
	opts := &loadOptions{streams: s, ErrIsTerminal: isTerminal(s.ErrOut)}
	cmd := &cobra.Command{
		Use:   "load SCENARIO|FILE --target URL[,URL...]",
		Short: "Send a scenario's clients over real HTTP; what each experienced",
		Long: `Replay the scenario's clients on the wall clock against real servers (such as
'ratelim serve'), over HTTP with keep-alive connections and a bounded number
of requests in flight, balanced over the targets as the scenario says, and
print the same result as 'ratelim sim': table, ratelim.result/v1 JSON (with
an "audit" of the answers' headers), CSV, --plot. A run takes the scenario's
duration in real time. Targets must be on this machine unless
--allow-remote.

A request that gets no HTTP answer (connection refused or reset, a timeout
of 10 s past its service time) is counted under "no answer", never as
rejected, and the audit says how many and the first error. A run in which
requests were due and none got an answer exits 4 with the reason, after
printing its figures; one in which some were answered exits 0.`,
		Example: `  ratelim serve runaway-healthcheck &
  ratelim load runaway-healthcheck \
    --target http://127.0.0.1:8080,http://127.0.0.1:8081,http://127.0.0.1:8082`,
		Args: exactArgs(1, "a scenario name or file (see 'ratelim scenarios')"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Scenario = args[0]
			opts.over.visit(cmd)
			if runF != nil {
				return runF(opts)
			}
			return loadRun(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&opts.Targets, "target", nil, "the servers' base URLs, comma-separated")
	f.StringVar(&opts.Path, "path", "/api", "the path requested on every target, after the target's own (GET TARGET+PATH?client=NAME)")
	f.BoolVar(&opts.AllowRemote, "allow-remote", false, "allow targets that are not on this machine (only servers you own)")
	f.BoolVar(&opts.Faults, "faults", true, "apply the scenario's outage and partition faults to a 'ratelim serve' fleet, through --control")
	f.StringVar(&opts.Control, "control", "", "the control URL 'ratelim serve' printed, where faults are applied")
	f.StringVar(&opts.Token, "token", "", "the token 'ratelim serve' printed, for --control")
	f.IntVar(&opts.MaxInFlight, "max-in-flight", live.DefaultMaxInFlight, "requests in flight at once, at most")
	f.Int64Var(&opts.MaxRequests, "max-requests", live.DefaultMaxRequests, "refuse a run estimated to send more requests than this")
	f.StringVar(&opts.Format, "format", "table", "output: table, json or csv")
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "for the table, only the rows")
	f.BoolVar(&opts.Wide, "wide", false, "the table with every column (by default those that are all zero are left out)")
	addDenseFlag(f, &opts.Dense)
	addOverrideFlags(cmd, &opts.over)
	addPlotFlags(cmd, &opts.Plot)
	return cmd
}

// loadPlan is what `ratelim load` runs: the scenario as the flags change
// it, and the load run's options.
type loadPlan struct {
	file *scenarios.File
	sc   sim.Scenario
	load live.LoadOptions
}

// planLoad checks opts and opens the scenario, sending nothing. The
// targets are checked by live.Load, before it sends a request.
func planLoad(opts *loadOptions) (*loadPlan, error) {
	if err := checkOutputFlags(opts.Format, &opts.Plot); err != nil {
		return nil, err
	}
	// live.Load reads 0 as its default; a flag says what it means.
	if opts.MaxInFlight < 1 || opts.MaxInFlight > maxInFlight {
		return nil, badInput("--max-in-flight: want 1 to %d requests in flight (got %d)", maxInFlight, opts.MaxInFlight)
	}
	if opts.MaxRequests < 1 {
		return nil, badInput("--max-requests: must be at least 1 (got %d)", opts.MaxRequests)
	}
	file, sc, err := opts.loadScenario(opts.Scenario, opts.over)
	if err != nil {
		return nil, err
	}
	lo := live.LoadOptions{Targets: opts.Targets, Path: opts.Path, AllowRemote: opts.AllowRemote, MaxInFlight: opts.MaxInFlight, MaxRequests: opts.MaxRequests}
	if opts.Faults && len(sc.Faults) > 0 {
		// A fleet started by 'ratelim serve' takes the faults on its
		// control listener, for all its servers: they share the store.
		if opts.Control == "" || opts.Token == "" {
			return nil, badInput("%s has faults: give --control URL --token TOKEN as 'ratelim serve' printed them, or --faults=false to run without", scenarioLabel(file))
		}
		if lo.OnFault, err = fleetFaults(opts.Control, opts.Token); err != nil {
			return nil, err
		}
	}
	return &loadPlan{file: file, sc: sc, load: lo}, nil
}

// fleetFaults is the OnFault of a load run that applies the scenario's
// faults to a 'ratelim serve' fleet, through its control URL (on this
// machine, checked) with its token.
func fleetFaults(control, token string) (func(sim.Fault, bool) error, error) {
	if err := checkLoopbackURL("--control", control); err != nil {
		return nil, err
	}
	return live.RemoteFaults(&http.Client{Timeout: 5 * time.Second}, control, token), nil
}

func loadRun(ctx context.Context, opts *loadOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	p, err := planLoad(opts)
	if err != nil {
		return err
	}
	file, sc := p.file, p.sc
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	progress := newProgress(opts.ErrOut, opts.ErrIsTerminal && !opts.Quiet, "sending")
	p.load.Progress = progress.update
	res, err := live.Load(ctx, sc, p.load)
	progress.done()
	if err != nil {
		return setupOrErr(scenarioLabel(file), err)
	}
	skipped := 0
	if !opts.over.given() {
		if _, skipped, err = fillExpectations(file, res.Result); err != nil {
			return err
		}
	}
	if err := opts.Plot.render(func(w io.Writer) error { return renderTimeline(w, res.Result, opts.Plot) }); err != nil {
		return err
	}
	if err := writeLoadResult(ctx, opts.Out, sc, res, opts.Format, resultLayout{quiet: opts.Quiet, wide: opts.Wide, dense: opts.Dense}); err != nil {
		return err
	}
	if opts.Format == "table" && !opts.Quiet {
		writeExpectations(opts.Out, file, res.Result, skipped)
	}
	// Written first, so the figures show what went unanswered; then a
	// target that answered nothing is the run's failure (exit 4), never
	// a pass.
	return res.CheckAnswered()
}

// writeLoadResult prints a live run of sc: the result as format says, and
// for the table (unless quiet) the audit of the answers and how well the
// run kept its schedule.
func writeLoadResult(ctx context.Context, w io.Writer, sc sim.Scenario, res *live.LoadResult, format string, l resultLayout) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		shown := *res
		shown.Result = sparseUnless(l.dense, res.Result)
		return enc.Encode(&shown)
	case "csv":
		return report.WriteCSVWith(ctx, w, res.Result, report.WriteOptions{Dense: l.dense})
	}
	if err := writeResult(ctx, w, res.Result, "table", l); err != nil {
		return err
	}
	if !l.quiet {
		writeAudit(w, sc, res)
	}
	return nil
}

// writeAudit prints, under a live run's table, what its audit found in the
// answers and how well the run kept its schedule: a paragraph each,
// wrapped at 80 columns as the findings are.
func writeAudit(w io.Writer, sc sim.Scenario, res *live.LoadResult) {
	a := res.Audit
	var b strings.Builder
	fmt.Fprintf(&b, "headers: %d %s (429 with quota left %d, no Retry-After %d, reset went back %d", a.Breaches(), words.Plural(a.Breaches(), "breach", "breaches"),
		a.RejectedWithQuota, a.MissingRetryAfter, a.ResetWentBack)
	if len(sc.Also) > 0 || a.UnlistedPolicy+a.RetryBeforeReset > 0 {
		fmt.Fprintf(&b, ", 429 naming no listed policy %d, Retry-After before its reset %d", a.UnlistedPolicy, a.RetryBeforeReset)
	}
	fmt.Fprintf(&b, "); %d transport errors, %d redirects (not followed)", a.TransportErrors, a.Redirects)
	if a.OtherStatus > 0 {
		fmt.Fprintf(&b, ", %d answers neither 2xx, 3xx, 429 nor 503 (among the rejected)", a.OtherStatus)
	}
	if a.FirstOtherStatus != 0 {
		fmt.Fprintf(&b, "; the first answer no rate limit gives: %d (is the path right? --path)", a.FirstOtherStatus)
	}
	if a.Cut > 0 {
		fmt.Fprintf(&b, ", %d answers cut off by a crash (counted as their status)", a.Cut)
	}
	paragraphs := []string{b.String()}
	if len(sc.Also) > 0 && len(a.RejectedBy) > 0 {
		// Which of a key's several limits turned clients away, as the
		// 429s named them.
		names := slices.Sorted(maps.Keys(a.RejectedBy))
		parts := make([]string, len(names))
		for i, n := range names {
			parts[i] = fmt.Sprintf("%s %d", escape.Text(n), a.RejectedBy[n]) // as a server named it
		}
		paragraphs = append(paragraphs, "429s by policy: "+strings.Join(parts, ", "))
	}
	paragraphs = append(paragraphs, "schedule: "+a.Lateness())
	decided := "limiter: " + a.Deciding()
	if len(sc.Faults) > 0 {
		decided += fmt.Sprintf("; faults took effect up to %s late", res.FaultLateness(sc).Round(time.Millisecond))
	}
	paragraphs = append(paragraphs, decided)
	for _, p := range paragraphs {
		for i, line := range report.Wrap(p, 78) {
			if i > 0 {
				line = "  " + line
			}
			fmt.Fprintln(w, line)
		}
	}
}

// simLive runs the scenario for real (an in-process fleet, then a load run
// against it, faults applied for real) and in the simulator, and prints
// both and the difference per client.
func simLive(ctx context.Context, opts *simOptions, label string, sc sim.Scenario) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	// A shared store is run for real on a redis-server of the fleet's own
	// when one is installed, so that an outage kills a real server.
	storeKind := sc.Topology.Store
	if (storeKind == "" || storeKind == "memory") && (sc.Topology.Kind == sim.Shared || sc.Topology.Kind == sim.Racy) {
		if _, err := exec.LookPath("redis-server"); err == nil {
			storeKind = "redis-server"
		}
	}
	// The load run is in this process and sends each client's IP in
	// X-Forwarded-For: the fleet believes loopback, and nothing else.
	fleet, err := live.Serve(ctx, live.ServeOptions{Scenario: sc, Store: storeKind, Listen: "127.0.0.1:0",
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")},
		Logger:         slog.New(slog.NewTextHandler(opts.ErrOut, nil))})
	if err != nil {
		return setupOrErr(label, err)
	}
	defer func() {
		if err := closeFleet(opts.ErrOut, fleet); err != nil {
			fmt.Fprintf(opts.ErrOut, "ratelim: warning: %v\n", err)
		}
	}()
	if opts.ErrIsTerminal && !opts.Quiet {
		fmt.Fprintf(opts.ErrOut, "running %s for real for %s on %d servers, store %s...\n", escape.Text(sc.Name), sc.Duration, len(fleet.URLs), store.Redacted(storeKind))
	}
	progress := newProgress(opts.ErrOut, opts.ErrIsTerminal && !opts.Quiet, "sending")
	res, err := live.Load(ctx, sc, live.LoadOptions{Targets: fleet.URLs, OnFault: fleet.Fault, MaxRequests: opts.Limits.MaxRequests,
		Progress: progress.update})
	progress.done()
	if err != nil {
		return setupOrErr(label, err)
	}
	res.Store = store.Redacted(storeKind)
	simulated, err := sim.Run(ctx, sc, sim.Options{MaxRequests: opts.Limits.MaxRequests})
	if err := runError(opts.ErrOut, label, err); err != nil {
		return err
	}
	// What the simulator decides on the arrivals the load run achieved:
	// where this and the live figures differ, the limiter did; where only
	// the scheduled ones differ, the machine could not keep the schedule.
	// A simulated cluster's failover at the instants the fleet drew.
	asSent, err := sim.Run(ctx, live.ObservedScenario(sc, res), sim.Options{MaxRequests: opts.Limits.MaxRequests,
		ClusterJitter: live.ReplayDraws(fleet.ClusterDraws())})
	if err := runError(opts.ErrOut, label, err); err != nil {
		return err
	}
	if opts.Format == "json" {
		liveShown := *res
		liveShown.Result = sparseUnless(opts.Dense, res.Result)
		enc := json.NewEncoder(opts.Out)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(struct {
			Live            *live.LoadResult `json:"live"`
			Simulated       *sim.Result      `json:"simulated"`
			SimulatedAsSent *sim.Result      `json:"simulated_as_sent"`
		}{&liveShown, sparseUnless(opts.Dense, simulated), sparseUnless(opts.Dense, asSent)}); err != nil {
			return err
		}
		return res.CheckAnswered()
	}
	fmt.Fprintln(opts.Out, "LIVE")
	if err := writeLoadResult(ctx, opts.Out, sc, res, "table", resultLayout{wide: opts.Wide}); err != nil {
		return err
	}
	fmt.Fprintln(opts.Out, "\nSIMULATED")
	if err := report.WriteTableWith(opts.Out, simulated, report.TableOptions{Wide: opts.Wide}); err != nil {
		return err
	}
	fmt.Fprintln(opts.Out, "\nDIFFERENCE (allowed: live, simulated on the arrivals as sent, and as scheduled)")
	if err := writeDifference(opts.Out, res.Result, asSent, simulated); err != nil {
		return err
	}
	return res.CheckAnswered()
}

// writeDifference prints, per client, what was admitted live and in the
// simulation of the arrivals as sent and as scheduled, and the relative
// differences; on the racy topology, why the two need not agree.
func writeDifference(w io.Writer, live, asSent, scheduled *sim.Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "client\tlive\tas sent\tdifference\tscheduled\tdifference\t")
	for i, c := range live.Clients {
		a, s := asSent.Clients[i], scheduled.Clients[i]
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%d\t%s\t\n", escape.Text(c.Name), c.Allowed, a.Allowed, relDiff(c.Allowed, a.Allowed), s.Allowed, relDiff(c.Allowed, s.Allowed))
	}
	if err := tw.Flush(); err != nil || live.Topology != string(sim.Racy) {
		return err
	}
	_, err := fmt.Fprintf(w, racyDifference, live.RTTMs)
	return err
}

// racyDifference says why a racy run's live and simulated figures may
// differ either way: what decides a lost update live is not in the
// arrivals the simulator is fed.
const racyDifference = `racy: the simulator writes each read back one rtt (%gms) after it;
  live, the write follows the read when the server's goroutine runs again
  (the Go scheduler, the Redis client's pool, GC), which no arrival records:
  the requests that read before an earlier one wrote, and so the figure
  admitted, are not the simulator's to know, and change from run to run
`

func relDiff(got, want int64) string {
	if want == 0 {
		if got == 0 {
			return "0%"
		}
		return "+∞"
	}
	d := 100 * float64(got-want) / float64(want)
	if math.Abs(d) < 0.05 {
		return "0%"
	}
	return strings.TrimSuffix(fmt.Sprintf("%+.1f", d), ".0") + "%"
}

// parseTrustedProxies reads --trusted-proxies: CIDRs (10.0.0.0/8,
// ::1/128), or bare addresses, which mean that one address (/32, /128).
// Host bits are dropped (127.0.0.1/8 is 127.0.0.0/8). Anything else is bad
// input, named.
func parseTrustedProxies(values []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, v := range values {
		v = strings.TrimSpace(v)
		if addr, err := netip.ParseAddr(v); err == nil {
			out = append(out, netip.PrefixFrom(addr, addr.BitLen()))
			continue
		}
		prefix, err := netip.ParsePrefix(v)
		if err != nil {
			return nil, badInput("--trusted-proxies: %q is not a CIDR or an IP address (want e.g. 127.0.0.1/32, 10.0.0.0/8 or ::1)", v)
		}
		out = append(out, prefix.Masked())
	}
	return out, nil
}

// checkLoopbackURL refuses a URL that is not http on this machine: the
// control listener of a fleet is never anywhere else.
func checkLoopbackURL(flag, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return badInput("%s: %q is not a URL (want e.g. http://127.0.0.1:40123)", flag, raw)
	}
	if ip, err := netip.ParseAddr(u.Hostname()); u.Hostname() != "localhost" && (err != nil || !ip.IsLoopback()) {
		return badInput("%s: %q is not on this machine (want the loopback URL 'ratelim serve' printed)", flag, raw)
	}
	return nil
}
