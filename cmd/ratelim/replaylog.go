package main

// The log's flags of `ratelim replay`: which file, how it is read
// (format, key, fields, order) and which of its requests are replayed
// (from, until, path, method, only), checked into a replay.Source.

import (
	"errors"
	"os"
	"strings"
	"time"

	"github.com/ratelim/ratelim/replay"
	"github.com/ratelim/ratelim/routecost"
	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/trace"
)

// source reads the log's flags into what replay reads.
func (opts *replayOptions) source() (replay.Source, error) {
	src := replay.Source{Path: opts.Log, Speed: opts.Speed, Only: opts.Only}
	for _, c := range opts.Costs {
		rule, err := routecost.Parse(c)
		if err != nil {
			return src, badInput("--cost: %v", err)
		}
		src.Costs = append(src.Costs, rule)
	}
	if !(opts.Speed >= replay.MinSpeed && opts.Speed <= replay.MaxSpeed) {
		return src, badInput("--speed: %g is out of range (want %g to %g log seconds per run second: 1 plays the log as it was, 60 an hour in a minute)", opts.Speed, replay.MinSpeed, replay.MaxSpeed)
	}
	if opts.Log != "-" {
		if st, err := os.Stat(opts.Log); err != nil {
			return src, badInput("%s: %v", opts.Log, errors.Unwrap(err))
		} else if st.IsDir() {
			return src, badInput("%s: a directory, not a log", opts.Log)
		}
	}
	t := &src.Trace
	t.Stdin = opts.In
	if err := opts.readAs(t); err != nil {
		return src, err
	}
	if err := opts.filter(t); err != nil {
		return src, err
	}
	if err := opts.spread(&src); err != nil {
		return src, err
	}
	return src, nil
}

// spreadAuto is --spread given alone: the log's own tick.
const spreadAuto = "auto"

// spread reads --spread into src: off when not given; the log's own tick,
// found as it is read, when given alone; else the tick given, from 1ns to
// 1h (Scan refuses one finer than the log's times). The offsets are
// seeded by --seed, so that the same seed spreads the same way.
func (opts *replayOptions) spread(src *replay.Source) error {
	src.Trace.SpreadSeed = 1 // the scenario's default seed
	if opts.over.seed != "" {
		seed, err := scenarios.Seed(opts.over.seed, "--seed")
		if err != nil {
			return badInput("%v", err)
		}
		src.Trace.SpreadSeed = seed
	}
	switch v := strings.TrimSpace(opts.Spread); v {
	case "":
	case spreadAuto:
		src.SpreadAuto = true
	default:
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Nanosecond || d > time.Hour {
			return badInput("--spread: %q is not a tick from 1ns to 1h (want e.g. 1s, or --spread alone for the log's own tick)", opts.Spread)
		}
		src.Trace.Spread = d
	}
	return nil
}

// readAs reads the flags that say how the log is read into t: its format
// (--log-format, else guessed from its name), its key (--key, else the
// format's usual one), where a JSONL or CSV log keeps each part, the IPv6
// prefix that names a client, and how far out of order its lines may be.
func (opts *replayOptions) readAs(t *trace.Options) error {
	formatName := opts.LogFormat
	if formatName == "" {
		formatName = trace.GuessFormat(opts.Log).String()
	}
	var err error
	if t.Format, err = trace.ParseFormat(formatName); err != nil {
		return badInput("--log-format: %v", err)
	}
	keySpec := opts.Key
	if keySpec == "" {
		// Named, so that every output says what the keys are.
		keySpec = map[trace.Format]string{trace.Combined: "ip", trace.ALB: "ip", trace.JSONL: "key", trace.CSV: "key"}[t.Format]
	}
	if t.Key, err = trace.ParseKey(t.Format, keySpec); err != nil {
		return badInput("--key: %v", err)
	}
	for _, fv := range opts.Fields {
		part, name, ok := strings.Cut(fv, "=")
		if !ok || strings.TrimSpace(name) == "" {
			return badInput("--field %q: want PART=NAME, e.g. --field time=ts (PART one of time, method, path, status)", fv)
		}
		name = strings.TrimSpace(name)
		switch strings.TrimSpace(part) {
		case "time", "timestamp":
			t.Fields.Time = name
		case "method":
			t.Fields.Method = name
		case "path":
			t.Fields.Path = name
		case "status":
			t.Fields.Status = name
		default:
			return badInput("--field %q: unknown part %q (want time, method, path or status; the key is --key)", fv, part)
		}
	}
	if opts.TimeUnit != "" {
		if t.Fields.TimeUnit, err = trace.ParseTimeUnit(opts.TimeUnit); err != nil {
			return badInput("--time-unit: %v", err)
		}
	}
	if opts.IPv6Prefix < 1 || opts.IPv6Prefix > 128 {
		return badInput("--ipv6-prefix: must be 1 to 128 (got %d)", opts.IPv6Prefix)
	}
	t.IPv6PrefixLen = opts.IPv6Prefix
	switch {
	case opts.Reorder < 0 || opts.Reorder > time.Hour:
		return badInput("--reorder: must be 0 to 1h (got %s)", opts.Reorder)
	case opts.Reorder == 0:
		t.Reorder = -1 // strict order
	default:
		t.Reorder = opts.Reorder
	}
	return nil
}

// filter reads the flags that say which of the log's requests are
// replayed into t: --from and --until, --path or --path-glob, --method;
// and --skip-bad, whether a bad line is counted rather than refused.
func (opts *replayOptions) filter(t *trace.Options) error {
	var err error
	if t.From, err = parseWhen("--from", opts.From); err != nil {
		return err
	}
	if t.Until, err = parseWhen("--until", opts.Until); err != nil {
		return err
	}
	if !t.From.IsZero() && !t.Until.IsZero() && !t.Until.After(t.From) {
		return badInput("--until: %s is not after --from %s", opts.Until, opts.From)
	}
	switch len(opts.Paths) {
	case 0:
	case 1:
		t.PathPrefix = opts.Paths[0]
	default:
		return badInput("--path: given %d times (want one prefix; --path-glob matches several)", len(opts.Paths))
	}
	t.PathGlob = opts.PathGlob
	t.Methods = opts.Methods
	t.SkipBad = opts.SkipBad
	return nil
}

// parseWhen reads --from or --until: RFC 3339, or a date and time in UTC.
func parseWhen(flag, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, time.DateTime, "2006-01-02T15:04:05", "2006-01-02 15:04", "2006-01-02T15:04", time.DateOnly} {
		if t, err := time.ParseInLocation(layout, strings.TrimSpace(s), time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, badInput("%s: %q is not a time (want RFC 3339, e.g. 2026-11-24T10:00:00Z, or 2026-11-24 10:00:00 in UTC)", flag, s)
}
