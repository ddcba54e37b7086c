package scenarios

// Traces: real traffic from an access log, as a scenario's clients.
//
//	trace: {file: access.log, format: combined, key: ip}
//
// at the top makes one client per key of the log (named by the key), and
//
//	traffic: {pattern: trace, file: access.log, only: "ip:203.0.113.9"}
//
// makes one client send the log's requests (those of one key with only:).
// A log is read through once when the scenario is read, so that its bad
// lines are reported then, with the scenario's line, and its keys and span
// known; each run then reads it again.

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ratelim/ratelim/internal/filekind"
	"github.com/ratelim/ratelim/replay"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/trace"
)

// MaxFeeds bounds the logs a scenario's clients replay at once: each is
// a file open during a run.
const MaxFeeds = 64

const traceWant = "a mapping with file, and format, key, from, until, path, speed as needed"

// errNoLogs is a trace in a scenario read from memory, not from a file.
var errNoLogs = errors.New("a scenario read from memory reads no logs (want it in a file: ratelim sim FILE)")

// traceLog reads a trace's fields and scans its log. path is the field
// that holds it ("trace", "clients[2].traffic"); maxKeys bounds its keys.
func (d *decoder) traceLog(n *yaml.Node, path string, o *object, maxKeys int) (*replay.Log, *fields) {
	f := d.record(n, path, o, traceWant)
	if d.failed() {
		return nil, f
	}
	if d.feeds++; d.feeds > MaxFeeds {
		d.failf(f.node, path, "more than %d logs replayed in all (want fewer clients with pattern trace)", MaxFeeds)
		return nil, f
	}
	file, fv := d.traceFile(f)
	if d.failed() {
		return nil, f
	}
	src := replay.Source{Path: file, Speed: 1}
	t := &src.Trace
	d.traceFormatAndKey(f, fv, file, t)
	if d.failed() {
		return nil, f
	}
	d.traceSettings(f, &src)
	if d.failed() {
		return nil, f
	}
	if !t.From.IsZero() && !t.Until.IsZero() && !t.Until.After(t.From) {
		d.failf(f.values["until"], f.field("until"), "%s is not after from %s", t.Until.Format(time.RFC3339), t.From.Format(time.RFC3339))
		return nil, f
	}
	l, err := d.cache.scan(src, maxKeys)
	if err != nil {
		d.failf(fv, f.field("file"), "%s", strings.TrimPrefix(err.Error(), "trace: "))
		return nil, f
	}
	if path == "trace" && len(l.Keys) == 0 && l.Stats.Keyless > 0 && l.Only == "" {
		// Every request without the key (key: user on a log whose users
		// are all -): no client to replay, and nothing limited.
		at, field := fv, f.field("file")
		if kv, ok := f.values["key"]; ok {
			at, field = kv, f.field("key")
		}
		d.failf(at, field, "none of the log's %d requests has this key, so none would be limited (want a key the log's requests carry, e.g. ip)", l.Stats.Keyless)
		return nil, f
	}
	if l.Span() > MaxDuration {
		d.failf(fv, f.field("file"), "the log spans %s, longer than a run may be (want --from and --until, or a speed, to bring it under %s)", l.Span().Round(time.Second), MaxDuration)
		return nil, f
	}
	d.logsRead = append(d.logsRead, l)
	return l, f
}

// traceFile reads a trace's file: and returns the log's path (relative
// to the scenario's folder) and the node that named it. The log must be
// one a scenario may read, again on each run: a regular file, read from
// disk by a scenario that was.
func (d *decoder) traceFile(f *fields) (string, *yaml.Node) {
	fv, ok := f.values["file"]
	if !ok {
		d.failf(f.node, f.field("file"), "missing (want e.g. file: access.log, beside the scenario)")
		return "", nil
	}
	file := d.text(fv, f.field("file"), "access.log")
	if d.failed() {
		return "", fv
	}
	if !d.logs {
		d.failf(fv, f.field("file"), "%v", errNoLogs)
		return "", fv
	}
	if file == "-" {
		d.failf(fv, f.field("file"), "standard input is not a log a scenario can read again (want a file)")
		return "", fv
	}
	if !filepath.IsAbs(file) {
		file = filepath.Join(d.logDir, file)
	}
	// As for scenario files themselves: a pipe or a device (/dev/zero)
	// would hang the read, and a pipe cannot be read again by each run.
	if st, err := os.Stat(file); err == nil && !st.Mode().IsRegular() {
		d.failf(fv, f.field("file"), "%s is %s, not a regular file (want a log file; save a stream to one first)", file, filekind.Describe(st.Mode()))
		return "", fv
	}
	return file, fv
}

// traceFormatAndKey reads the log's format (guessed from file, its path,
// when not given) and what keys its requests (the format's usual key when
// not given) into t. A key the format cannot read is put on key:, or on
// file: when the key is the format's own.
func (d *decoder) traceFormatAndKey(f *fields, fv *yaml.Node, file string, t *trace.Options) {
	t.Format = trace.GuessFormat(file)
	if v, ok := f.values["format"]; ok {
		t.Format = trace.Format(0)
		name := d.choice(v, f.field("format"), "log format", logFormats)
		if d.failed() {
			return
		}
		t.Format, _ = trace.ParseFormat(name)
	}
	keySpec := map[trace.Format]string{trace.Combined: "ip", trace.ALB: "ip", trace.JSONL: "key", trace.CSV: "key"}[t.Format]
	keyNode := fv
	if v, ok := f.values["key"]; ok {
		keySpec, keyNode = d.text(v, f.field("key"), "ip"), v
	}
	if d.failed() {
		return
	}
	var err error
	if t.Key, err = trace.ParseKey(t.Format, keySpec); err != nil {
		d.failf(keyNode, f.field("key"), "%v", err)
		return
	}
}

// traceSettings reads the rest of a trace's fields, in the file's order,
// into src: which lines count (from, until, path, methods, only, ...),
// how they are read (fields, time_unit, reorder, skip_bad) and how they
// are played (speed, start).
func (d *decoder) traceSettings(f *fields, src *replay.Source) {
	t := &src.Trace
	var err error
	for _, name := range f.order {
		v, field := f.values[name], f.field(name)
		switch name {
		case "fields":
			d.traceFields(v, field, &t.Fields)
		case "time_unit":
			if t.Fields.TimeUnit, err = trace.ParseTimeUnit(d.text(v, field, "ms")); err != nil && !d.failed() {
				d.failf(v, field, "%v", err)
			}
		case "ipv6_prefix":
			t.IPv6PrefixLen = int(d.integer(v, field, 1, 128, "64"))
		case "reorder":
			t.Reorder = d.nonNegative(v, field, "2s")
			if !d.failed() && t.Reorder > time.Hour {
				d.failf(v, field, "%s is too long (want at most 1h)", t.Reorder)
			}
			if t.Reorder == 0 {
				t.Reorder = -1 // none: lines must be in order
			}
		case "from":
			t.From = d.instant(v, field)
		case "until":
			t.Until = d.instant(v, field)
		case "path":
			t.PathPrefix = d.text(v, field, "/api/")
		case "path_glob":
			t.PathGlob = d.text(v, field, "/api/*/items")
		case "methods":
			for i, m := range d.list(v, field, "a list of methods, e.g. [GET, POST]") {
				t.Methods = append(t.Methods, d.text(m, index(field, i), "GET"))
			}
		case "only":
			src.Only = d.text(v, field, "ip:203.0.113.9")
		case "skip_bad":
			t.SkipBad = d.boolean(v, field)
		case "speed":
			src.Speed = d.number(v, field, "60")
			if !d.failed() && !(src.Speed >= replay.MinSpeed && src.Speed <= replay.MaxSpeed) {
				d.failf(v, field, "%s is not a positive speed from %g to %g (want e.g. 60, to play an hour of the log in a minute)", short(v.Value), replay.MinSpeed, replay.MaxSpeed)
			}
		case "start":
			src.Start = d.nonNegative(v, field, "10s")
			if !d.failed() && src.Start > MaxDuration {
				d.failf(v, field, "%s is too late (want at most %s)", src.Start, MaxDuration)
			}
		}
		if d.failed() {
			return
		}
	}
}

// traceFields reads a JSONL or CSV log's field names.
func (d *decoder) traceFields(n *yaml.Node, path string, out *trace.Fields) {
	f := d.record(n, path, &logFieldsObject, "a mapping such as {time: ts, path: uri}")
	for _, name := range f.order {
		v := d.text(f.values[name], f.field(name), "ts")
		switch name {
		case "time":
			out.Time = v
		case "method":
			out.Method = v
		case "path":
			out.Path = v
		case "status":
			out.Status = v
		}
	}
}

// instant reads a time of day in a log: RFC 3339, or a date and time in
// UTC.
func (d *decoder) instant(n *yaml.Node, field string) time.Time {
	s := strings.TrimSpace(d.text(n, field, "2026-11-24T10:00:00Z"))
	if d.failed() {
		return time.Time{}
	}
	for _, layout := range []string{time.RFC3339Nano, time.DateTime, "2006-01-02T15:04:05", "2006-01-02 15:04", "2006-01-02T15:04", time.DateOnly} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t
		}
	}
	d.failf(n, field, "%s is not a time (want RFC 3339, e.g. 2026-11-24T10:00:00Z, or 2026-11-24 10:00:00 in UTC)", quote(s))
	return time.Time{}
}

// boolean reads true or false.
func (d *decoder) boolean(n *yaml.Node, field string) bool {
	var b bool
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" || n.Decode(&b) != nil {
		d.notA(n, field, "true or false", "true")
		return false
	}
	return b
}

// traceClients are the clients of a top-level trace: one per key of the
// log, after the scenario's own, each named by its key and keyed by it.
func (d *decoder) traceClients(l *replay.Log, retry sim.Retry, n *yaml.Node, sc *sim.Scenario) {
	taken := map[string]bool{}
	for _, c := range sc.Clients {
		taken[c.Name] = true
	}
	first := len(sc.Clients)
	for _, k := range l.Keys {
		if taken[k.Key] {
			d.failf(n, "trace", "the log's key %s is also the name of a client (want clients named otherwise)", quote(k.Key))
			return
		}
		c := replay.Client(k.Key, sc.Limit.Key)
		c.Retry = retry
		sc.Clients = append(sc.Clients, c)
	}
	sc.Feeds = append(sc.Feeds, l.KeysFeed(first))
}

// durationOfTrace is a run long enough for the log: its span from start,
// rounded up to a whole step.
func durationOfTrace(l *replay.Log, step time.Duration) time.Duration {
	span := l.Span()
	return min(((span+step-1)/step)*step, MaxDuration)
}

// wallClock reads the instant virtual time 0 stands for, as a trace's
// from and until are read, between the Unix epoch and the year 3000: a
// peer that keeps float seconds since an epoch loses its sub-microsecond
// rounding, which is what the setting is for, far beyond that.
func (d *decoder) wallClock(n *yaml.Node, field string) time.Time {
	t := d.instant(n, field)
	if !d.failed() && (t.Before(time.Unix(0, 0)) || t.Year() >= 3000) {
		d.failf(n, field, "%s is out of range (want an instant from 1970 to 2999, e.g. 2026-12-01T00:00:00Z)", t.Format(time.RFC3339))
	}
	return t
}
