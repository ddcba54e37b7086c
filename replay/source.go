package replay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/ratelim/ratelim/internal/words"
	"github.com/ratelim/ratelim/routecost"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/trace"
)

// Source is an access log to replay and how to read it.
type Source struct {
	// Path names the log; "-" is standard input (Trace.Stdin when set).
	Path  string
	Trace trace.Options
	// Speed compresses the log's time: at 10, an hour of the log is six
	// minutes of the run, and a limit of 100/m sees ten times the log's
	// rate. 0 means 1.
	Speed float64
	// Start is where in the run the log's origin falls.
	Start time.Duration
	// Only, when set, keeps the requests of this key alone (the key as
	// Trace.Key reads it).
	Only string
	// Open, when set, reads the log instead of Path, which then only
	// names it: a log a program makes or fetches, read again from the
	// start at each call.
	Open func() (io.Reader, error)
	// Costs price the requests by route, the first rule that matches
	// each; a request none matches costs 1.
	Costs []routecost.Rule
	// SpreadAuto spreads the requests over the log's own tick, its
	// resolution as Scan finds it (Trace.Spread is then set to it): Scan
	// reads the log once for it, then again with the spread. With
	// Trace.Spread set instead, Scan refuses a tick finer than the
	// log's resolution, which would crowd a tick's requests into part of
	// it.
	SpreadAuto bool
	// SpreadFinerThan, with SpreadAuto, leaves a log as logged when its
	// resolution is already no coarser than this (the limit's refill
	// interval): spreading it would only move its requests off their
	// logged instants. 0 spreads whatever the resolution.
	SpreadFinerThan time.Duration
}

// SpreadTickError is a Trace.Spread other than the log's resolution: a
// finer tick crowds a tick's requests into part of it, a coarser one
// moves them across ticks they were not logged in.
type SpreadTickError struct {
	Tick, Resolution time.Duration
}

func (e *SpreadTickError) Error() string {
	return fmt.Sprintf("spread: %s is not the log's resolution %s (want spread alone, or a tick of %s)", words.Duration(e.Tick), words.Duration(e.Resolution), words.Duration(e.Resolution))
}

// Log is a log read once through: its keys and its span, what a run needs
// to know before it starts. Reading it again (each run does) gives the
// same requests, from Path, or from the copy of standard input kept in a
// temporary file; Close removes that copy.
type Log struct {
	Source
	// Keys are the log's keys in the order of their first request, with
	// how many requests each made; requests without a key are not among
	// them (see Keyless).
	Keys []KeyCount
	// Origin is the log's instant that is the run's Start: Trace.From
	// when set, else the first request's time.
	Origin time.Time
	// First and Last are the first and the last request's times.
	First, Last time.Time
	// Requests are the requests kept, keyless ones included.
	Requests int64
	// Stats are the reader's counts over the whole log.
	Stats trace.Stats
	// SpreadSkipped says SpreadAuto left the log as logged, its
	// resolution no coarser than SpreadFinerThan.
	SpreadSkipped bool
	// Skipped are the first bad lines skipped (Trace.SkipBad).
	Skipped []*trace.LineError
	// Peaks are each key's peaks, when ScanOptions.Peaks asked for them.
	Peaks []trace.KeyPeak
	// Profile is ScanOptions.Profile, filled: what Frontier reads.
	Profile *trace.Profile

	index  map[string]int32 // key → its index in Keys
	spool  *os.File         // the copy of standard input, already unlinked; closed by Close
	spoolW *spoolWriter
}

// DefaultMaxStdin bounds the copy of standard input a replay keeps (4
// GiB): a file has no such bound.
const DefaultMaxStdin int64 = 4 << 30

// StdinTooLongError is standard input longer than ScanOptions.MaxStdin.
type StdinTooLongError struct {
	Name string // stdin, or the pipe's or device's path
	Max  int64
}

func (e *StdinTooLongError) Error() string {
	return fmt.Sprintf("%s: longer than %s (want a file: standard input, a pipe or a device is kept in a temporary file to be read once per run, at most that much; save it and replay the file)", e.Name, words.Bytes(e.Max))
}

// spoolWriter writes the copy of standard input, at most max bytes.
type spoolWriter struct {
	name   string
	f      *os.File
	n, max int64
}

func (w *spoolWriter) Write(p []byte) (int, error) {
	if w.n+int64(len(p)) > w.max {
		return 0, &StdinTooLongError{Name: w.name, Max: w.max}
	}
	n, err := w.f.Write(p)
	w.n += int64(n)
	return n, err
}

// KeyCount is a key of a log and its request count.
type KeyCount struct {
	Key      string
	Requests int64
}

// ScanOptions tune Scan.
type ScanOptions struct {
	// Peaks, when set, measures every key's peaks as the log is read.
	Peaks *trace.Peaks
	// Profile, when set, profiles every key as the log is read, for
	// Frontier.
	Profile *trace.Profile
	// MaxKeys refuses a log with more distinct keys (0: no bound but
	// MaxMemory's).
	MaxKeys int
	// MaxMemory, when set, refuses a log with more distinct keys than a
	// run within it can have (sim.MaxClientsIn), as soon as the key past
	// them is read, with a *sim.TooBigError: the run would be refused
	// for its memory anyway, after the whole log was read.
	MaxMemory int64
	// MaxStdin bounds the copy of standard input kept to read it again
	// (DefaultMaxStdin when 0); a longer one is refused.
	MaxStdin int64
	// Progress, if set, is called every so many lines with the lines and
	// the bytes read so far.
	Progress func(lines int)
}

// Bounds of Source.Speed and of the run a log is replayed in.
const (
	// MinSpeed is the slowest a log plays: a second of it in 1,000.
	MinSpeed = 1e-3
	// MaxSpeed is the fastest: 10⁹ seconds of it (32 years) in one.
	MaxSpeed = 1e9
	// MaxRun is the longest run a replay makes, the log's span over its
	// speed: a year, as for a scenario.
	MaxRun = 365 * 24 * time.Hour
)

// runText is a run of ns nanoseconds, which may be past a Duration.
func runText(ns float64) string {
	if ns >= float64(math.MaxInt64) {
		return fmt.Sprintf("%.3g years", ns/float64(MaxRun))
	}
	return words.Duration(time.Duration(ns))
}

// ErrNoRequests is a log with no request left to replay.
var ErrNoRequests = errors.New("no request to replay")

// Scan reads src through once and returns what a replay of it needs to
// know up front; cancelling ctx stops it. Standard input (and a pipe or a
// device, which cannot be read again either) is copied, at
// most ScanOptions.MaxStdin of it, to a temporary file as it is read, for
// the runs to read again: unlinked at once, so that nothing is left
// behind whatever ends the run; Close the Log to free it.
func Scan(ctx context.Context, src Source, opts ScanOptions) (*Log, error) {
	if src.Speed == 0 {
		src.Speed = 1
	}
	if !(src.Speed >= MinSpeed && src.Speed <= MaxSpeed) {
		return nil, fmt.Errorf("speed: %g is out of range (want %g to %g: 1 plays the log as it was, 60 plays an hour in a minute)", src.Speed, MinSpeed, MaxSpeed)
	}
	l := &Log{Source: src, index: map[string]int32{}}
	topts := src.Trace
	// Checked by bytes read, not by requests: a log of blank or bad lines
	// makes none.
	topts.Context = ctx
	r, closeStream, err := l.openForScan(topts, opts.MaxStdin)
	if err != nil {
		return nil, err
	}
	defer closeStream()
	defer r.Close()
	memKeys := int64(math.MaxInt64)
	if opts.MaxMemory > 0 {
		memKeys = keysWithin(opts.MaxMemory, opts.Profile)
	}
	measure := opts
	if src.SpreadAuto {
		// Measured on the second reading, spread.
		measure.Peaks, measure.Profile = nil, nil
	}
	if err := l.read(ctx, r, measure, memKeys); err != nil {
		l.Close()
		return nil, err
	}
	l.Stats = r.Stats()
	_, l.Skipped = r.Skipped()
	if err := l.spread(ctx, opts, memKeys); err != nil {
		l.Close()
		return nil, err
	}
	if err := l.settle(opts); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// read reads the log's requests from r: its keys, in the order of their
// first request, their counts, its first and last times, and each key's
// peaks and profile when opts asks for them.
func (l *Log) read(ctx context.Context, r *trace.Reader, opts ScanOptions, memKeys int64) error {
	src := l.Source
	for n := 1; ; n++ {
		rec, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			if tl := new(StdinTooLongError); errors.As(err, &tl) {
				return tl
			}
			return err
		}
		if n%(1<<12) == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			if opts.Progress != nil && n%(1<<20) == 0 {
				opts.Progress(r.Stats().Lines)
			}
		}
		if src.Only != "" && rec.Key != src.Only {
			continue
		}
		if l.Requests == 0 {
			l.First = rec.At
		}
		l.Last = rec.At
		l.Requests++
		if rec.Key == "" {
			continue
		}
		i, ok := l.index[rec.Key]
		if !ok {
			if err := l.roomForKey(opts, memKeys, r.Stats().Lines); err != nil {
				return err
			}
			i = int32(len(l.Keys))
			l.index[rec.Key] = i
			l.Keys = append(l.Keys, KeyCount{Key: rec.Key})
		}
		l.Keys[i].Requests++
		if opts.Peaks != nil {
			opts.Peaks.Add(rec.Key, rec.At)
		}
		if opts.Profile != nil {
			opts.Profile.Add(rec.Key, rec.At)
		}
	}
}

// spread settles the tick requests are spread over: with SpreadAuto, the
// log's resolution, and the log read again with it (its keys' order, its
// first and last times and its peaks are those of the spread times),
// unless the resolution is no coarser than SpreadFinerThan; with
// Trace.Spread, a check that it is the log's resolution
// (*SpreadTickError).
func (l *Log) spread(ctx context.Context, opts ScanOptions, memKeys int64) error {
	res := l.Stats.Resolution
	if !l.SpreadAuto {
		if tick := l.Trace.Spread; tick > 0 && res > 0 && tick != res {
			return &SpreadTickError{Tick: tick, Resolution: res}
		}
		return nil
	}
	if res <= 0 {
		return nil // no request: settle says so
	}
	topts := l.Trace
	if res <= l.SpreadFinerThan {
		// Left as logged, and measured so, as the runs will read it.
		l.SpreadSkipped, l.SpreadAuto = true, false
		if opts.Peaks == nil && opts.Profile == nil {
			return nil
		}
	} else {
		l.Trace.Spread = res
		topts.Spread = res
	}
	topts.Context = ctx // a second reading of filtered lines stops on Ctrl-C too
	r, err := l.openReading(topts)
	if err != nil {
		return err
	}
	defer r.Close()
	clear(l.index)
	l.Keys, l.Requests, l.First, l.Last = l.Keys[:0], 0, time.Time{}, time.Time{}
	return l.read(ctx, r, opts, memKeys)
}

// openForScan opens the log for Scan with topts. Standard input, a pipe
// or a device cannot be read again: it is copied to a spool as it is read
// (at most maxStdin of it, DefaultMaxStdin when 0), and each run reads the
// copy. closeStream closes what openForScan opened besides the reader, when
// the scan is done; the log is closed when it fails.
func (l *Log) openForScan(topts trace.Options, maxStdin int64) (r *trace.Reader, closeStream func(), err error) {
	src := l.Source
	closeStream = func() {}
	var stream io.Reader
	if src.Open == nil {
		if src.Path == "-" {
			if stream = topts.Stdin; stream == nil {
				stream = os.Stdin
			}
		} else if st, err := os.Stat(src.Path); err == nil && !st.Mode().IsRegular() {
			f, err := os.Open(src.Path)
			if err != nil {
				return nil, closeStream, fmt.Errorf("trace: %w", err)
			}
			closeStream = func() { f.Close() }
			stream = f
		}
	}
	if stream != nil {
		spool, serr := os.CreateTemp("", "ratelim-stdin-*.log")
		if serr != nil {
			closeStream()
			return nil, func() {}, fmt.Errorf("%s is kept in a temporary file to be read again, and none could be made: %w", name(src.Path), serr)
		}
		// Unlinked at once, read again through the open file: nothing is
		// left behind however the run ends, SIGKILL included.
		os.Remove(spool.Name())
		l.spool = spool
		max := maxStdin
		if max == 0 {
			max = DefaultMaxStdin
		}
		l.spoolW = &spoolWriter{name: name(src.Path), f: spool, max: max}
		r, err = trace.NewReader(io.TeeReader(stream, l.spoolW), name(src.Path), topts)
	} else {
		r, err = l.openWith(topts)
	}
	if err != nil {
		l.Close()
		closeStream()
		return nil, func() {}, err
	}
	return r, closeStream, nil
}

// keysWithin is the most keys a replay within bound holds: a run's
// clients (sim.MaxClientsIn), and, when profiled, each key's profile
// beside its client (Profile.BytesPerKey).
func keysWithin(bound int64, p *trace.Profile) int64 {
	keys := sim.MaxClientsIn(bound)
	if p == nil {
		return keys
	}
	// What a client costs a run, from the bound a large one allows.
	const big = 1 << 40
	perClient := big / sim.MaxClientsIn(big)
	return max(keys*perClient/(perClient+p.BytesPerKey()), 1)
}

// roomForKey reports why the log may not have another distinct key, read
// at line: past opts.MaxKeys, or past memKeys, the keys a run within
// opts.MaxMemory can hold; nil when it may.
func (l *Log) roomForKey(opts ScanOptions, memKeys int64, line int) error {
	if opts.MaxKeys > 0 && len(l.Keys) >= opts.MaxKeys {
		return fmt.Errorf("%s: more than %d distinct keys (want fewer: filter the log by --path or --method, or raise --max-keys)", name(l.Path), opts.MaxKeys)
	}
	if int64(len(l.Keys)) >= memKeys {
		return &sim.TooBigError{Err: sim.ErrMemory, Scenario: "replay of " + name(l.Path), Option: "MaxMemory",
			Detail: fmt.Sprintf("has more than %s distinct keys (at line %s), more than a run within %s can hold", words.Thousands(memKeys), words.Thousands(int64(line)), words.Bytes(opts.MaxMemory)),
			Advice: "filter the log by path, method, from or until"}
	}
	return nil
}

// settle finishes a scanned log: it refuses one with no request to replay
// (saying what took them all) or one whose span, at its speed, is longer
// than a run; it sets the origin runs count from (the log's from, else
// its first request) and the peaks measured.
func (l *Log) settle(opts ScanOptions) error {
	src := l.Source
	if l.Requests == 0 {
		what := "no line of it is a request"
		switch {
		case l.Stats.Filtered > 0:
			what = fmt.Sprintf("every request was filtered out (%s of them, by time, path or method)", words.Thousands(int64(l.Stats.Filtered)))
		case l.Stats.Requests > 0 && src.Only != "":
			what = fmt.Sprintf("no request has the key %q", src.Only)
		}
		return fmt.Errorf("%s: %w: %s", name(src.Path), ErrNoRequests, what)
	}
	l.Origin = l.First
	if !src.Trace.From.IsZero() {
		l.Origin = src.Trace.From
	}
	// Times past what a run holds would saturate and pile up at its end.
	if run := float64(l.Last.Sub(l.Origin)) / src.Speed; run > float64(MaxRun) {
		return fmt.Errorf("speed: at %g, the log's %s last %s, longer than a run may be (want at most %s: a higher speed, or from and until to replay part of it)", src.Speed, l.Last.Sub(l.Origin).Round(time.Second), runText(run), words.Duration(MaxRun))
	}
	if opts.Peaks != nil {
		l.Peaks = opts.Peaks.Keys()
	}
	l.Profile = opts.Profile
	return nil
}

func name(path string) string {
	if path == "-" {
		return "stdin"
	}
	return path
}

// Close frees the copy of standard input, if any.
func (l *Log) Close() error {
	if l.spool == nil {
		return nil
	}
	err := l.spool.Close()
	l.spool = nil
	return err
}

// At is where in the run a request of the log at t falls.
func (l *Log) At(t time.Time) time.Duration {
	if l.Speed == 1 {
		return l.Start + max(t.Sub(l.Origin), 0)
	}
	d := float64(t.Sub(l.Origin)) / l.Speed
	return l.Start + time.Duration(min(max(d, 0), float64(math.MaxInt64/2)))
}

// Wall is the log's instant a moment d of the run stands for: At's inverse.
func (l *Log) Wall(d time.Duration) time.Time {
	if l.Speed == 1 {
		return l.Origin.Add(d - l.Start)
	}
	return l.Origin.Add(time.Duration(float64(d-l.Start) * l.Speed))
}

// Span is how long a run must last to replay every request: from 0 to
// just past the last one.
func (l *Log) Span() time.Duration { return l.At(l.Last) + time.Microsecond }

// open reads the log again, from its copy for standard input.
func (l *Log) open() (*trace.Reader, error) { return l.openReading(l.Trace) }

// openReading is open with topts in place of l.Trace.
func (l *Log) openReading(topts trace.Options) (*trace.Reader, error) {
	if l.spool != nil {
		// A reader of its own at each call: runs may read it at once.
		return trace.NewReader(io.NewSectionReader(l.spool, 0, l.spoolW.n), name(l.Path), topts)
	}
	return l.openWith(topts)
}

func (l *Log) openWith(opts trace.Options) (*trace.Reader, error) {
	if l.Source.Open != nil {
		in, err := l.Source.Open()
		if err != nil {
			return nil, err
		}
		r, err := trace.NewReader(in, name(l.Path), opts)
		if c, ok := in.(io.Closer); ok && err != nil {
			c.Close()
		}
		return r, err
	}
	return trace.Open(l.Path, opts)
}

// KeysFeed is a feed of the log's keyed requests, each key's to its own
// client: key i of Keys is client first+i.
func (l *Log) KeysFeed(first int) sim.Feed {
	var n int64
	for _, k := range l.Keys {
		n += k.Requests
	}
	return sim.Feed{Name: name(l.Path), FirstClient: first, Clients: len(l.Keys), Requests: n, Open: func() (sim.FeedReader, error) {
		r, err := l.open()
		if err != nil {
			return nil, err
		}
		return &feedReader{l: l, r: r, first: first}, nil
	}}
}

// ClientFeed is a feed of every request the log keeps (those of Only, if
// set), keyless ones included, all for one client.
func (l *Log) ClientFeed(client int) sim.Feed {
	return sim.Feed{Name: name(l.Path), FirstClient: client, Clients: 1, Requests: l.Requests, Open: func() (sim.FeedReader, error) {
		r, err := l.open()
		if err != nil {
			return nil, err
		}
		return &feedReader{l: l, r: r, first: client, one: true}, nil
	}}
}

type feedReader struct {
	l     *Log
	r     *trace.Reader
	first int
	one   bool // every request to client first
}

func (f *feedReader) Next() (sim.Arrival, error) {
	for {
		rec, err := f.r.Next()
		if err != nil {
			return sim.Arrival{}, err
		}
		if f.l.Only != "" && rec.Key != f.l.Only {
			continue
		}
		client := f.first
		if !f.one {
			i, ok := f.l.index[rec.Key]
			if !ok {
				continue // keyless; or the log changed since it was scanned
			}
			client += int(i)
		}
		return sim.Arrival{Client: client, At: f.l.At(rec.At), Cost: costOf(f.l.Costs, rec)}, nil
	}
}

func (f *feedReader) Close() error { return f.r.Close() }
