package main

// `ratelim check --target`: the scenarios' clients sent to the user's own
// servers with live.Load, as `ratelim load` sends them, and the expect:
// lines checked on what was observed. What a live run cannot observe of a
// service is skipped with the reason (scenarios.LiveCheck decides, figure
// by figure), never passed on a figure that reads 0 because nothing could
// show it.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/ratelim/ratelim/internal/escape"
	"github.com/ratelim/ratelim/internal/words"
	"github.com/ratelim/ratelim/live"
	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/sim"
)

// liveTargets are check's flags for a live check.
type liveTargets struct {
	// Given says --target was given, even with no URL in it: an unset
	// variable in a CI script (--target "$URL") must not fall back to
	// simulating.
	Given   bool
	Targets []string
	// Path is requested on every target (--path); "" is /api.
	Path        string
	AllowRemote bool
	Control     string
	Token       string
	// Told says the targets send httplimit's headers (--httplimit-headers).
	Told bool
}

func addLiveCheckFlags(f *pflag.FlagSet, t *liveTargets) {
	f.StringSliceVar(&t.Targets, "target", nil, "send each scenario's clients to these servers (base URLs, comma-separated) and check what they answered, instead of simulating")
	f.StringVar(&t.Path, "path", "", "with --target, the path requested on every target, after the target's own: GET TARGET+PATH?client=NAME (default /api)")
	f.BoolVar(&t.AllowRemote, "allow-remote", false, "with --target, allow targets that are not on this machine (only servers you own)")
	f.StringVar(&t.Control, "control", "", "with --target, the control URL of the 'ratelim serve' fleet the targets are, where the scenarios' faults are applied")
	f.StringVar(&t.Token, "token", "", "the token 'ratelim serve' printed, for --control")
	f.BoolVar(&t.Told, "httplimit-headers", false, "with --target, the targets send ratelim's httplimit headers: check failed_open, failed_closed, would_reject, shed and served on them (implied by --control)")
}

// liveCheckHelp is check's help on what a live check skips.
const liveCheckHelp = `An expectation a live run cannot observe is skipped, printed as skip with
the reason (a skipped case in --junit), never passed and never failed:
design_bound_1s and the findings of the simulator's model (design-bound,
copies-diverged, a cluster's shards, leaked); failed_open, failed_closed,
would_reject, shed and served, and the findings queued and costly, read
from headers only ratelim's httplimit middleware sends or reads, unless
--httplimit-headers says the targets do (--control implies it): queued
is then the delays X-RateLimit-Delay said, never latency; a with: that
changes the limiter (algorithm, topology, store, servers, key,
on_error...: the targets' limiter is
theirs; seed, duration, step and balancer run); and a scenario with
faults, unless --control URL --token TOKEN name the control listener of a
'ratelim serve' fleet to apply them to. ideal_allowed,
ideal_max_allowed_1s, false_allows and false_denies are one exact limiter
of the scenario's limit fed the requests as observed. A request no target
answered is counted in no_answer, neither allowed nor rejected (bound it:
{client: "*", no_answer: {max: 0}}). p50_ms and p99_ms are each
request's time from sending to its answer: the service's handler time is
in them, not the limiter's wait alone.

Each request is GET TARGET+PATH?client=NAME (--path, /api by default)
with the client's X-API-Key, X-User or X-Forwarded-For and
X-Ratelim-Request numbering it. A 2xx is admitted, a 429 or a 503 refused;
any other answer (a 404, a 500, a redirect) makes the run an error (exit
4): no rate limit said it. Each run prints load's audit of the answers.

Targets must be on this machine unless --allow-remote. --max-requests
bounds each run (2,000,000 by default with --target, as load's), and a
scenario estimated over it is refused (exit 3) before anything is sent.
The runs share the servers: a key's counters carry from one run into the
next.`

// on says a live check was asked for: --target given, URLs in it or not.
func (t liveTargets) on() bool { return t.Given || len(t.Targets) > 0 }

// checkLiveFlags refuses the live flags without --target, a --target
// without a URL in it, --store with it (the targets' store is theirs),
// and --control without --token.
func checkLiveFlags(opts *checkOptions) error {
	t := opts.Live
	if !t.on() {
		for _, f := range []struct {
			flag string
			set  bool
		}{{"--path", t.Path != ""}, {"--allow-remote", t.AllowRemote}, {"--control", t.Control != ""}, {"--token", t.Token != ""}, {"--httplimit-headers", t.Told}} {
			if f.set {
				return badInput("%s: only for a live check (want --target URL with it)", f.flag)
			}
		}
		return nil
	}
	if !slices.ContainsFunc(t.Targets, func(u string) bool { return strings.TrimSpace(u) != "" }) {
		return badInput("--target: no URL given (want base URLs, comma-separated, e.g. --target http://127.0.0.1:8080)")
	}
	if len(t.Targets) > scenarios.MaxServers {
		// The targets are the scenarios' servers: as many as a
		// scenario may have, checked once here rather than per file.
		return badInput("--target: %d URLs (want at most %d, the servers a scenario may have)", len(t.Targets), scenarios.MaxServers)
	}
	if opts.Store != "" {
		return badInput("--store: a live check runs on the targets' own store (want --store or --target, not both)")
	}
	if (t.Control == "") != (t.Token == "") {
		return badInput("--control and --token: give both, as 'ratelim serve' printed them")
	}
	return nil
}

// livePlan is a live check's plan beside checkPlan's jobs: the load run's
// options, and per job why it is skipped or refused before anything is
// sent.
type livePlan struct {
	check scenarios.LiveCheck
	load  live.LoadOptions
	// skips[i] says why job i is not run: every expectation of it is
	// skipped with the reason.
	skips []string
	// refused[i] is why job i cannot run: a scenario the targets cannot
	// play (its servers), or over --max-requests.
	refused []error
}

// planLive plans a live check of p's jobs on opts' targets: each job's
// scenario with the targets for its servers, and refused or skipped up
// front when it cannot run. The targets are checked once (live.Load's own
// check), before any job: a bad one is the flag's error.
func planLive(opts *checkOptions, p *checkPlan) (*livePlan, error) {
	t := opts.Live
	lp := &livePlan{
		check:   scenarios.LiveCheck{Told: t.Told || t.Control != ""},
		load:    live.LoadOptions{Targets: t.Targets, Path: t.Path, AllowRemote: t.AllowRemote, MaxRequests: opts.Limits.MaxRequests},
		skips:   make([]string, len(p.jobs)),
		refused: make([]error, len(p.jobs)),
	}
	if err := lp.load.Check(sim.Scenario{}); err != nil {
		var oe *live.OptionError
		if errors.As(err, &oe) {
			return nil, usageError{oe} // a flag's: named as the flag (errorText)
		}
		return nil, err
	}
	if t.Control != "" {
		var err error
		if lp.load.OnFault, err = fleetFaults(t.Control, t.Token); err != nil {
			return nil, err
		}
	}
	servers := strconv.Itoa(len(t.Targets))
	for i, job := range p.jobs {
		sc := p.scs[i]
		if why := lp.check.SkipWith(job.with); why != "" {
			lp.skips[i] = why
			continue
		}
		if sc.Topology.Kind == sim.Regions {
			lp.skips[i] = "its topology is regions, whose clients each go to their region's servers: a live run spreads the requests over the targets, which it cannot place in regions (check each region's service with a file of its own)"
			continue
		}
		if len(sc.Faults) > 0 && t.Control == "" {
			lp.skips[i] = fmt.Sprintf("its faults (%s) cannot be applied to the targets (want --control URL --token TOKEN of a 'ratelim serve' fleet to apply them)", faultList(sc.Faults))
			continue
		}
		// The targets are the servers: as many, and the scenario's
		// own checks of them (a fault naming server 5 of 2).
		sc, err := scenarios.Override(sc, map[string]string{"servers": servers}, func(string) string { return "--target (its servers)" })
		if err != nil {
			lp.refused[i] = usageError{err} // named with job's label when reported (runError)
			continue
		}
		// And checked whole now, as the Result of the run will be
		// (sim.Replay), not after the run was sent.
		if err := sim.CheckReplay(sc); err != nil {
			lp.refused[i] = usageError{fmt.Errorf("--target: its %s as the scenario's servers: %w", words.Count(int64(len(t.Targets)), "URL", "URLs"), err)}
			continue
		}
		p.scs[i] = sc
		if err := lp.load.Check(sc); err != nil {
			lp.refused[i] = err
		}
	}
	return lp, nil
}

// faultList is a scenario's faults as a skip's reason names them:
// "outage 10s–20s, crash 5s–8s".
func faultList(faults []sim.Fault) string {
	parts := make([]string, len(faults))
	for i, f := range faults {
		parts[i] = fmt.Sprintf("%s %s–%s", f.Kind, f.Start, f.End)
	}
	return strings.Join(parts, ", ")
}

// runLive makes each job's live run, one after another (they share the
// targets, whose limiter would count two at once together), and returns
// each one's Result with the findings a live run can show, or its error.
// Once a run got no answer at all, the targets are down: the rest are not
// made, each an error that says so. An interrupted check returns the
// interruption alone: nothing is reported.
//
// Each run's audit of the answers is printed on auditOut as load prints
// it. A run answered with statuses no rate limit gives (a 404, a 500, a
// redirect) is an error of that run: they would count as refusals.
func runLive(ctx context.Context, opts *checkOptions, p *checkPlan, auditOut io.Writer) ([]*sim.Result, []error, error) {
	lp := p.live
	results := make([]*sim.Result, len(p.jobs))
	runErrs := make([]error, len(p.jobs))
	var unanswered, unreachable error
	for i := range p.jobs {
		if lp.skips[i] == "" && lp.refused[i] == nil {
			// Some run is to be made: a target nothing listens on is
			// found now, not after a whole scenario's duration.
			unreachable = dialTargets(ctx, lp.load.Targets)
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			break
		}
	}
	for i, job := range p.jobs {
		switch {
		case lp.skips[i] != "":
			continue
		case lp.refused[i] != nil:
			runErrs[i] = lp.refused[i]
			continue
		case unreachable != nil:
			runErrs[i] = unreachable
			continue
		case unanswered != nil:
			runErrs[i] = fmt.Errorf("not run, as the run before it got no answer: %w", unanswered)
			continue
		}
		progress := newProgress(opts.ErrOut, opts.ErrIsTerminal, "sending "+escape.Text(job.label)+withText(job.with))
		lo := lp.load
		lo.Progress = progress.update
		res, err := live.Load(ctx, p.scs[i], lo)
		progress.done()
		if ctx.Err() != nil {
			return nil, nil, fmt.Errorf("%s: %w", job.label, ctx.Err())
		}
		if err == nil {
			writeRunAudit(auditOut, job, p.scs[i], res)
			unanswered = res.CheckAnswered()
			err = unanswered
		}
		if err == nil {
			err = notLimiting(res.Audit, lo.Path)
		}
		if err != nil {
			runErrs[i] = err
			continue
		}
		r := *res.Result
		r.Findings = lp.check.Findings(&r)
		if lp.check.Told {
			if q, ok := observedQueue(&r, res.Observations); ok {
				r.Findings = withFinding(r.Findings, q)
			}
		}
		results[i] = &r
	}
	return results, runErrs, nil
}

// minQueueWait is the wait in a leaky bucket's queue worth a finding, as
// the simulator's (sim's minQueueWait).
const minQueueWait = 100 * time.Millisecond

// observedQueue is the queued finding of a live run from what its answers
// said: each client's 99th percentile of the delay X-RateLimit-Delay gave
// its admitted requests (their Decision.Delay), the worst client's, when a
// leaky bucket is the limit and it is at least minQueueWait. The
// simulator's reads the 99th percentile latency, which live includes the
// handler's time: a slow handler is no queue.
func observedQueue(r *sim.Result, obs []sim.Observation) (sim.Finding, bool) {
	if sim.Family(r.Algorithm) != "leaky-bucket" {
		return sim.Finding{}, false
	}
	delays := make([][]time.Duration, len(r.Clients))
	for _, o := range obs {
		if o.Client >= 0 && o.Client < len(delays) && !o.NoAnswer && o.Decision.Allowed {
			delays[o.Client] = append(delays[o.Client], o.Decision.Delay)
		}
	}
	worst, wait := -1, time.Duration(0)
	for i, ds := range delays {
		if len(ds) == 0 {
			continue
		}
		slices.Sort(ds)
		if p99 := ds[len(ds)*99/100]; worst < 0 || p99 > wait {
			worst, wait = i, p99
		}
	}
	if worst < 0 || wait < minQueueWait {
		return sim.Finding{}, false
	}
	name := r.Clients[worst].Name
	text := fmt.Sprintf("%s's admitted requests waited up to %.1f s in the queue (p99, as X-RateLimit-Delay said): a leaky bucket delays a burst to its rate instead of letting it through", name, wait.Seconds())
	return sim.Finding{Kind: sim.FindingQueued, Client: name, Value: math.Round(wait.Seconds()*1000) / 1000, Text: text}, true
}

// withFinding is fs with f in its place among them (sim.FindingKinds'
// order); in place of exact, which is found only when nothing else is.
func withFinding(fs []sim.Finding, f sim.Finding) []sim.Finding {
	fs = slices.DeleteFunc(slices.Clone(fs), func(g sim.Finding) bool { return g.Kind == sim.FindingExact })
	kinds := sim.FindingKinds()
	rank := slices.Index(kinds, f.Kind)
	at := slices.IndexFunc(fs, func(g sim.Finding) bool { return slices.Index(kinds, g.Kind) > rank })
	if at < 0 {
		at = len(fs)
	}
	return slices.Insert(fs, at, f)
}

// dialTimeout is how long dialTargets waits for each target to accept a
// connection.
const dialTimeout = 3 * time.Second

// dialTargets connects to each target (TCP only, no HTTP request, which
// would spend the service's quota) and closes the connection: the error
// names the first that refused or did not accept within dialTimeout, and
// says nothing was sent.
func dialTargets(ctx context.Context, targets []string) error {
	d := net.Dialer{Timeout: dialTimeout}
	for _, raw := range targets {
		u, err := url.Parse(strings.TrimSpace(raw))
		if err != nil {
			return fmt.Errorf("--target %s: %w", escape.Text(raw), err) // checked before: not reached
		}
		port := u.Port()
		if port == "" {
			port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
		}
		conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(u.Hostname(), port))
		if err != nil {
			return fmt.Errorf("--target %s: not reachable, nothing was sent: %w (want a server listening there)", escape.Text(raw), err)
		}
		conn.Close()
	}
	return nil
}

// writeRunAudit prints what a run's audit found in the answers, as load
// prints it under its table, after a line naming the run.
func writeRunAudit(w io.Writer, job checkJob, sc sim.Scenario, res *live.LoadResult) {
	fmt.Fprintf(w, "run  %s%s: %d sent\n", escape.Text(job.label), escape.Text(withText(job.with)), res.Totals().Sent)
	writeAudit(w, sc, res)
}

// NotLimitingError is a live run whose answers were not all a limiter's:
// some were neither 2xx, 429 nor 503 (a 404 of a wrong path, a 500, a
// redirect), which a check would count as refusals.
type NotLimitingError struct {
	Count int64
	First int
	Path  string
}

func (e *NotLimitingError) Error() string {
	return fmt.Sprintf("%s neither 2xx, 429 nor 503 (the first %d), which no rate limit answers: is the path right? (--path, %s sent)",
		words.Count(e.Count, "answer was", "answers were"), e.First, cmp.Or(e.Path, "/api"))
}

// notLimiting is the error of a run whose audit counted answers no rate
// limit gives; nil when every answer was 2xx, 429 or 503.
func notLimiting(a live.Audit, path string) error {
	if n := a.NotLimiting(); n > 0 {
		return &NotLimitingError{Count: n, First: a.FirstOtherStatus, Path: path}
	}
	return nil
}

// skipLine is e of job, not checked by a live check, and why.
// Its text, and its JUnit case's name, is the expectation as written,
// its with: included.
func skipLine(job checkJob, e *scenarios.Expectation, why string) checkLine {
	return checkLine{File: job.label, Line: e.Line, Text: e.Text, Skipped: why, name: e.Text}
}
