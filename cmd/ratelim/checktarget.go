package main

// `ratelim check --target`: the scenarios' clients sent to the user's own
// servers with live.Load, as `ratelim load` sends them, and the expect:
// lines checked on what was observed. What a live run cannot observe of a
// service is skipped with the reason (scenarios.LiveCheck decides, figure
// by figure), never passed on a figure that reads 0 because nothing could
// show it.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/ratelim/ratelim/internal/escape"
	"github.com/ratelim/ratelim/live"
	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/sim"
)

// liveTargets are check's flags for a live check.
type liveTargets struct {
	Targets     []string
	AllowRemote bool
	Control     string
	Token       string
	// Told says the targets send httplimit's headers (--httplimit-headers).
	Told bool
}

func addLiveCheckFlags(f *pflag.FlagSet, t *liveTargets) {
	f.StringSliceVar(&t.Targets, "target", nil, "send each scenario's clients to these servers (base URLs, comma-separated) and check what they answered, instead of simulating")
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
would_reject, shed and served, read from headers only ratelim's httplimit
middleware sends, unless --httplimit-headers says the targets send them
(--control implies it); a with: that changes the limiter (algorithm,
topology, store, servers, key, on_error...: the targets' limiter is
theirs; seed, duration, step and balancer run); and a scenario with
faults, unless --control URL --token TOKEN name the control listener of a
'ratelim serve' fleet to apply them to. ideal_allowed,
ideal_max_allowed_1s, false_allows and false_denies are one exact limiter
of the scenario's limit fed the requests as observed. A request no target
answered is counted in no_answer, neither allowed nor rejected (bound it:
{client: "*", no_answer: {max: 0}}).

Targets must be on this machine unless --allow-remote. --max-requests
bounds each run (2,000,000 by default with --target, as load's), and a
scenario estimated over it is refused (exit 3) before anything is sent.
The runs share the servers: a key's counters carry from one run into the
next.`

// checkLiveFlags refuses the live flags without --target, --store with it
// (the targets' store is theirs), and --control without --token.
func checkLiveFlags(opts *checkOptions) error {
	t := opts.Live
	if len(t.Targets) == 0 {
		for _, f := range []struct {
			flag string
			set  bool
		}{{"--allow-remote", t.AllowRemote}, {"--control", t.Control != ""}, {"--token", t.Token != ""}, {"--httplimit-headers", t.Told}} {
			if f.set {
				return badInput("%s: only for a live check (want --target URL with it)", f.flag)
			}
		}
		return nil
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
		load:    live.LoadOptions{Targets: t.Targets, AllowRemote: t.AllowRemote, MaxRequests: opts.Limits.MaxRequests},
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
		if len(sc.Faults) > 0 && t.Control == "" {
			lp.skips[i] = fmt.Sprintf("its faults (%s) cannot be applied to the targets (want --control URL --token TOKEN of a 'ratelim serve' fleet to apply them)", faultList(sc.Faults))
			continue
		}
		// The targets are the servers: as many, and the scenario's
		// own checks of them (a fault naming server 5 of 2).
		sc, err := scenarios.Override(sc, map[string]string{"servers": servers}, func(string) string { return "--target (its servers)" })
		if err != nil {
			lp.refused[i] = usageError{fmt.Errorf("%s: %w", job.label, err)}
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
func runLive(ctx context.Context, opts *checkOptions, p *checkPlan) ([]*sim.Result, []error, error) {
	lp := p.live
	results := make([]*sim.Result, len(p.jobs))
	runErrs := make([]error, len(p.jobs))
	var unanswered error
	for i, job := range p.jobs {
		switch {
		case lp.skips[i] != "":
			continue
		case lp.refused[i] != nil:
			runErrs[i] = lp.refused[i]
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
			unanswered = res.CheckAnswered()
			err = unanswered
		}
		if err != nil {
			runErrs[i] = err
			continue
		}
		r := *res.Result
		r.Findings = lp.check.Findings(r.Findings)
		results[i] = &r
	}
	return results, runErrs, nil
}

// skipLine is e of job, not checked by a live check, and why.
// Its text, and its JUnit case's name, is the expectation as written,
// its with: included.
func skipLine(job checkJob, e *scenarios.Expectation, why string) checkLine {
	return checkLine{File: job.label, Line: e.Line, Text: e.Text, Skipped: why, name: e.Text}
}
