package main

// The limits `ratelim replay` replays a log through: --limit, --burst and
// --window, and the second run --vs asks for beside the first.

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/internal/words"
	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/sim"
)

// replayLimitFields are what --vs may change beside the overrides.
var replayLimitFields = []string{"limit", "burst", "window"}

// replayLimit builds the limit from --limit, --burst and --window (or
// their --vs forms, prefix naming them), the burst defaulting to the
// rate's count and the window to its period.
func replayLimit(algorithm, rateText string, burst int64, windowText, prefix string) (sim.Limit, error) {
	rate, err := algorithms.ParseRate(rateText)
	if err != nil {
		return sim.Limit{}, badInput("%slimit: %v", prefix, err)
	}
	if rate.N < 1 {
		return sim.Limit{}, badInput("%slimit: %s admits nothing (want at least 1 request a period)", prefix, rate)
	}
	p := algorithms.Params{Rate: rate, Burst: burst}
	if burst < 0 {
		return sim.Limit{}, badInput("%sburst: must be positive (got %d)", prefix, burst)
	}
	if burst == 0 {
		p.Burst = rate.N
	}
	uses := map[string]bool{}
	for _, info := range algorithms.Catalog() {
		if info.Name == algorithm {
			for _, name := range info.Params {
				uses[name] = true
			}
		}
	}
	if len(uses) > 0 && !uses["rate"] {
		// A concurrency limit counts requests in flight, and a log says
		// when each came, not how long it took.
		return sim.Limit{}, badInput("%salgorithm: %s limits requests in flight, and a log has no request durations to replay (want a rate limit, e.g. token-bucket or sliding-window: ratelim algorithms lists them)", prefix, algorithm)
	}
	if uses["window"] {
		p.Window = rate.Per
		if windowText != "" {
			w, err := time.ParseDuration(windowText)
			if err != nil || w < time.Millisecond || w > 366*24*time.Hour || w%time.Microsecond != 0 {
				return sim.Limit{}, badInput("%swindow: %q is not a window from 1ms to 366 days in whole microseconds (want e.g. 1m)", prefix, windowText)
			}
			p.Window = w
		}
	} else if windowText != "" {
		return sim.Limit{}, badInput("%swindow: %s has no window (want it with fixed-window, sliding-window or sliding-log)", prefix, algorithm)
	}
	if !uses["burst"] {
		p.Burst = 0
	}
	if _, err := algorithms.New(algorithm, p); err != nil {
		return sim.Limit{}, badInput("%s%v", prefix, err)
	}
	return sim.Limit{Algorithm: algorithm, Params: p, Key: sim.KeyAuto}, nil
}

// parseReplayVs reads replay's --vs FIELD=VALUE flags.
func parseReplayVs(flags []string) (map[string]string, []string, error) {
	if len(flags) == 0 {
		return nil, nil, nil
	}
	known := append(slices.Clone(replayLimitFields), replayOverrides...)
	set := map[string]string{}
	var order []string
	for _, f := range flags {
		name, value, ok := strings.Cut(f, "=")
		name = strings.ReplaceAll(strings.TrimSpace(name), "_", "-")
		value = strings.TrimSpace(value)
		switch {
		case !ok || name == "" || value == "":
			return nil, nil, badInput("--vs %q: want FIELD=VALUE, e.g. --vs limit=200/m (FIELD one of %s)", f, strings.Join(known, ", "))
		case !slices.Contains(known, name):
			return nil, nil, badInput("--vs %q: unknown field %q (want one of %s)", f, name, strings.Join(known, ", "))
		}
		if _, dup := set[name]; dup {
			return nil, nil, badInput("--vs: %s given twice (want each field once)", name)
		}
		set[name] = value
		order = append(order, name)
	}
	return set, order, nil
}

// versus is the --vs run's scenario: sc with the limit's fields and the
// overrides the flags give.
func (p *replayPlan) versus(sc sim.Scenario) (sim.Scenario, error) {
	over := map[string]string{}
	for name, v := range p.vs {
		if !slices.Contains(replayLimitFields, name) {
			over[name] = v
		}
	}
	next, err := scenarios.Override(sc, over, func(name string) string { return "--vs " + name })
	if err != nil {
		return sc, usageError{err}
	}
	params := sc.Limit.Params
	rate := params.Rate.String()
	if v, ok := p.vs["limit"]; ok {
		rate = v
	}
	burst := params.Burst
	if v, ok := p.vs["burst"]; ok {
		if burst, err = strconv.ParseInt(v, 10, 64); err != nil || burst < 1 {
			return sc, badInput("--vs burst: %q is not a positive whole number", v)
		}
	} else if _, ok := p.vs["limit"]; ok && burst == params.Rate.N {
		burst = 0 // it was the default: the new limit's count
	}
	window := ""
	if v, ok := p.vs["window"]; ok {
		window = v
	} else if params.Window > 0 && params.Window != params.Rate.Per {
		window = params.Window.String()
	}
	lim, err := replayLimit(next.Limit.Algorithm, rate, burst, window, "--vs ")
	if err != nil {
		return sc, err
	}
	next.Limit.Algorithm, next.Limit.Params = lim.Algorithm, lim.Params
	return next, nil
}

// replaySetting is sc's value of a --vs field, for labels.
func replaySetting(sc sim.Scenario, name string) string {
	switch name {
	case "limit":
		return sc.Limit.Params.Rate.String()
	case "burst":
		return strconv.FormatInt(sc.Limit.Params.Burst, 10)
	case "window":
		return words.Duration(sc.Limit.Params.Window)
	}
	return scenarioSetting(sc, name)
}
