package trace

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path"
	"strings"
	"time"
)

// Record is one request of a log.
type Record struct {
	// At is when the request arrived, in UTC.
	At time.Time
	// Key is the limiter key the request counts against (see [Key]), or
	// "" when the line has no value for it (a "-" user, a missing field):
	// as for the middleware's key functions, such a request is exempt.
	Key string
	// Method is the HTTP method, "" when the request line is malformed or
	// the log has none.
	Method string
	// Path is the request's path as logged (not unescaped), without its
	// query string; "" as Method is.
	Path string
	// Status is the HTTP status code of the response, 0 when the log has
	// none.
	Status int
	// Line is the line of the log the request is on, from 1.
	Line int
}

// Defaults of [Options].
const (
	DefaultReorder    = 2 * time.Second
	DefaultMaxLine    = 1 << 20
	DefaultMaxKey     = 1024
	DefaultMaxPending = 1 << 20
	// DefaultMaxExpansion is Options.MaxExpansion's default.
	DefaultMaxExpansion = 200
	// MaxBadExamples is how many skipped lines a Reader keeps to show.
	MaxBadExamples = 5
)

// Options configure a [Reader]. The zero value of every field is its
// default; only Format must be set.
type Options struct {
	// Format is the log's layout.
	Format Format
	// Key names what a request is keyed by; the zero Key is the format's
	// default (see [Key]).
	Key Key
	// Fields name the fields of a JSONL or CSV log.
	Fields Fields
	// IPv6PrefixLen is how many leading bits of an IPv6 address name a
	// client, for an address key: 64 when 0, the whole address when 128,
	// as for httplimit.KeyOptions.
	IPv6PrefixLen int

	// Reorder is how far out of time order lines may be: a line up to
	// Reorder earlier than the latest line before it is put in its place;
	// one earlier still is an error. Requests are held back Reorder (in
	// log time) before they are returned, so memory grows with the number
	// of requests in Reorder, never with the log's length. 0 means
	// DefaultReorder (2s, ample for an nginx log, whose lines are written
	// as responses finish, and for most ALB logs); a negative Reorder
	// means none: lines must be in time order.
	Reorder time.Duration

	// From and Until select the requests that arrived in [From, Until);
	// a zero time is no bound. Reading stops at the first line past Until
	// by more than Reorder.
	From, Until time.Time
	// PathPrefix, when set, keeps only requests whose path starts with it.
	PathPrefix string
	// PathGlob, when set, keeps only requests whose path matches it as
	// path.Match reads a pattern: "*" matches within one path segment,
	// "/api/*/items" matches "/api/v1/items" but not "/api/v1/x/items".
	PathGlob string
	// Methods, when set, keeps only requests with one of these methods
	// (case does not matter).
	Methods []string

	// SkipBad counts lines that cannot be read and goes on, rather than
	// stopping at the first; see [Reader.Skipped]. A log with no line
	// that can be read is an error all the same.
	SkipBad bool

	// MaxLine is the longest line read, in bytes (DefaultMaxLine, 1 MiB,
	// when 0); a longer one is a bad line.
	MaxLine int
	// MaxKey is the longest key, in bytes (DefaultMaxKey when 0); a line
	// with a longer one is a bad line.
	MaxKey int
	// MaxPending is how many requests may wait within the Reorder window
	// (DefaultMaxPending when 0): a log busier than that, about 100 MB of
	// requests, is an error asking for a smaller Reorder.
	MaxPending int

	// Spread, when positive, is the tick of a log whose times are coarser
	// than its requests (nginx's $time_local is whole seconds): the
	// requests one key made within one tick, logged at the same instant,
	// are spaced evenly across the tick instead, the i-th of n at
	// tick start + (i + u)/n × Spread, where u in [0, 1) is a hash of
	// SpreadSeed, the key and the tick; then the tick's requests are put
	// back in time order (by line for a tie). Every reading of the log
	// with the same options gives the same times. A tick's requests are
	// held back until the next tick's first, counted with MaxPending.
	// 0 (the default) returns the times exactly as logged.
	Spread time.Duration
	// SpreadSeed seeds Spread's offsets.
	SpreadSeed uint64

	// Stdin is what the name "-" reads: os.Stdin when nil.
	Stdin io.Reader

	// MaxExpansion bounds how many times a gzipped log may expand, past
	// its first 64 MiB (DefaultMaxExpansion when 0; negative for no
	// bound): access logs expand 5 to 20 times, a gzip of newlines a
	// thousand, to gigabytes of nothing.
	MaxExpansion int

	// Context, when set, stops the reading once it is done: every read of
	// the log (at most 64 KiB of it, before and after decompression)
	// checks it first, so that a log of blank or bad lines, or one line
	// without end (/dev/zero), which never makes a request, stops as
	// promptly as one that does. Next then returns its error.
	Context context.Context
}

// LineError is a line of a log that cannot be read.
type LineError struct {
	File string
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err) }

func (e *LineError) Unwrap() error { return e.Err }

// Stats count what a Reader has read so far.
type Stats struct {
	Lines    int // lines read, blank ones and a CSV header included
	Requests int // records returned by Next
	Keyless  int // of those, with no key
	Filtered int // requests left out by From, Until, PathPrefix, PathGlob or Methods
	Bad      int // lines skipped, with Options.SkipBad
	// Resolution is the coarsest tick every request time read so far
	// falls on (of the requests kept that have a key: filtered-out and
	// keyless lines are not replayed, and do not count), from 1ns to 1s: the greatest common divisor of their
	// parts below the second (1s when every one is a whole second). It
	// is what the data holds, not what the format can: a logger that
	// pads times with ".000" writes whole seconds. 0 before a request.
	Resolution time.Duration
}

// Reader reads the requests of an access log, in arrival order. It is
// not safe for concurrent use.
type Reader struct {
	name    string
	opts    Options
	reorder int64 // ns; 0 for none
	from    int64
	until   int64
	methods map[string]bool
	prefix  []byte // PathPrefix

	closer []io.Closer
	br     *bufio.Reader
	long   []byte // a line longer than br's buffer, gathered
	parser lineParser
	keyer  keyer
	strs   *interner // methods and paths

	line     int
	p        parsed
	anyRead  bool // a line of the log was read as a request
	maxAt    int64
	maxLine  int
	queue    reorderQueue
	spread   spreader
	resGCD   int64 // ns; the gcd of every kept, keyed request time's part below the second, 0 before one
	eof      bool
	err      error // returned by every Next from now on
	stats    Stats
	badFirst []*LineError
}

// Open opens the log named name, "-" for standard input, for reading with
// opts. A gzip-compressed log (recognised by its first bytes, whatever its
// name) is decompressed as it is read. The caller must Close the Reader.
func Open(name string, opts Options) (*Reader, error) {
	if name == "-" {
		in := opts.Stdin
		if in == nil {
			in = os.Stdin
		}
		return NewReader(in, "stdin", opts)
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	r, err := NewReader(f, name, opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.closer = append(r.closer, f)
	return r, nil
}

// NewReader reads a log from in, naming it name in errors. A gzip stream
// is decompressed. For a CSV log, it reads the header line before it
// returns.
func NewReader(in io.Reader, name string, opts Options) (*Reader, error) {
	r := &Reader{name: name, opts: opts}
	if err := r.setup(); err != nil {
		return nil, err
	}
	bufSize := min(64<<10, r.opts.MaxLine+1)
	raw := &countReader{in: r.cancellable(in)}
	br := bufio.NewReaderSize(raw, bufSize)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("trace: %s: %w", name, err)
		}
		r.closer = append(r.closer, zr)
		// Checked after decompression too: a small gzip of newlines
		// expands to gigabytes between two reads of the file.
		ratio := r.opts.MaxExpansion
		if ratio == 0 {
			ratio = DefaultMaxExpansion
		}
		var out io.Reader = zr
		if ratio > 0 {
			out = &expansionReader{in: zr, raw: raw, ratio: int64(ratio)}
		}
		br = bufio.NewReaderSize(r.cancellable(out), bufSize)
	}
	r.br = br
	if err := r.setupParser(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *Reader) setup() error {
	o := &r.opts
	if _, ok := formatNames[o.Format]; !ok {
		return errors.New("trace: no log format given (want combined, jsonl, csv or alb)")
	}
	if o.Key.kind == 0 {
		o.Key = defaultKey(o.Format)
	} else if o.Key.format != o.Format {
		return fmt.Errorf("trace: key %s was made for a %s log, not %s (make it with ParseKey(%s, ...))", o.Key, o.Key.format, o.Format, o.Format)
	}
	switch {
	case o.Reorder == 0:
		r.reorder = int64(DefaultReorder)
	case o.Reorder > 0:
		r.reorder = int64(o.Reorder)
	}
	if o.MaxLine <= 0 {
		o.MaxLine = DefaultMaxLine
	}
	if o.MaxKey <= 0 {
		o.MaxKey = DefaultMaxKey
	}
	if o.MaxPending <= 0 {
		o.MaxPending = DefaultMaxPending
	}
	r.from, r.until = math.MinInt64, math.MaxInt64
	if !o.From.IsZero() {
		r.from = clampNanos(o.From)
	}
	if !o.Until.IsZero() {
		r.until = clampNanos(o.Until)
	}
	r.prefix = []byte(o.PathPrefix)
	if o.PathGlob != "" {
		if _, err := path.Match(o.PathGlob, ""); err != nil {
			return fmt.Errorf("trace: path glob %q: %w", o.PathGlob, err)
		}
	}
	if len(o.Methods) > 0 {
		r.methods = make(map[string]bool, len(o.Methods))
		for _, m := range o.Methods {
			r.methods[strings.ToUpper(strings.TrimSpace(m))] = true
		}
	}
	const internMax = 1 << 16
	r.keyer = keyer{
		kind:   o.Key.kind,
		name:   o.Key.name,
		v6bits: o.IPv6PrefixLen,
		maxLen: o.MaxKey,
		keys:   newInterner(internMax),
		addrs:  make(map[string]recentSlot),
	}
	r.strs = newInterner(internMax)
	r.maxAt = math.MinInt64
	if o.Spread < 0 {
		return fmt.Errorf("trace: spread %v is negative (want a tick such as 1s, or 0 for none)", o.Spread)
	}
	r.spread = spreader{tick: int64(o.Spread), seed: o.SpreadSeed}
	return nil
}

// clampNanos returns t in ns since 1970, clamped to what int64 holds.
func clampNanos(t time.Time) int64 {
	switch s := t.Unix(); {
	case s < minUnixSec:
		return math.MinInt64
	case s > maxUnixSec:
		return math.MaxInt64
	}
	return t.UnixNano()
}

func (r *Reader) setupParser() error {
	k := r.opts.Key
	switch r.opts.Format {
	case Combined:
		r.parser = &combinedParser{kind: k.kind}
	case ALB:
		r.parser = &albParser{kind: k.kind}
	case JSONL:
		p, err := newJSONLParser(r.opts.Fields, k)
		if err != nil {
			return err
		}
		r.parser = p
	case CSV:
		var header []byte
		for header == nil {
			line, err := r.readLine()
			if err == io.EOF {
				return fmt.Errorf("trace: %s: empty (want a CSV header line naming the columns)", r.name)
			}
			if err != nil {
				return err
			}
			if line = bytes.TrimSpace(line); len(line) > 0 {
				header = line
			}
		}
		p, err := newCSVParser(r.opts.Fields, k, header)
		if err != nil {
			return &LineError{File: r.name, Line: r.line, Err: err}
		}
		r.parser = p
	}
	return nil
}

// Close closes the log.
func (r *Reader) Close() error {
	var err error
	for i := len(r.closer) - 1; i >= 0; i-- {
		err = errors.Join(err, r.closer[i].Close())
	}
	r.closer = nil
	return err
}

// Stats returns what the Reader has counted so far.
func (r *Reader) Stats() Stats {
	s := r.stats
	s.Lines = r.line
	s.Resolution = time.Duration(r.resGCD)
	return s
}

// Skipped returns the number of lines skipped as bad (with
// Options.SkipBad) and the first MaxBadExamples of them.
func (r *Reader) Skipped() (int, []*LineError) { return r.stats.Bad, r.badFirst }

// Next returns the next request in arrival order, and io.EOF after the
// last. A line that cannot be read is a *LineError (unless Options.SkipBad
// skips it); once Next has returned an error, it returns it again. A log
// with no line that reads as a request (empty, or every line bad) is an
// error in place of io.EOF, with SkipBad too; one whose requests are all
// filtered out is not, only empty.
func (r *Reader) Next() (rec Record, err error) {
	for r.err == nil {
		limit := int64(math.MaxInt64) // at the end, every request is due
		if !r.eof {
			limit = satSub(r.maxAt, r.reorder)
		}
		if r.popDue(limit, &rec) {
			r.stats.Requests++
			if rec.Key == "" {
				r.stats.Keyless++
			}
			return rec, nil
		}
		if r.eof {
			r.err = io.EOF
			if !r.anyRead {
				r.err = r.nothingRead()
			}
			break
		}
		if err := r.readOne(); err != nil {
			r.err = err
		}
	}
	return Record{}, r.err
}

// satSub is a − b, or math.MinInt64 if that is less; b ≥ 0.
func satSub(a, b int64) int64 {
	if a < math.MinInt64+b {
		return math.MinInt64
	}
	return a - b
}

// nothingRead is the error of a log without a request in it.
func (r *Reader) nothingRead() error {
	what := map[Format]string{Combined: "combined log lines", JSONL: "JSON objects, one a line", CSV: "CSV lines after the header", ALB: "ALB access log lines"}[r.opts.Format]
	if r.stats.Bad > 0 {
		return fmt.Errorf("trace: %s: no line of its %d can be read (want %s); the first: %w", r.name, r.line, what, r.badFirst[0])
	}
	return fmt.Errorf("trace: %s: no requests in it (want %s)", r.name, what)
}

// readOne reads one line and queues its request, if it is kept. It
// returns an error that ends the reading; one about the line itself is
// counted instead, when SkipBad says so.
func (r *Reader) readOne() error {
	line, err := r.readLine()
	switch {
	case err == io.EOF:
		r.eof = true
		return nil
	case err != nil:
		if _, ok := err.(errLongLine); !ok {
			return err
		}
	}
	if err == nil {
		if blank(line) {
			return nil
		}
		err = r.record(line)
	}
	if err == nil {
		return nil
	}
	if _, ok := err.(busyError); ok {
		return err
	}
	le, ok := err.(*LineError)
	if !ok {
		le = &LineError{File: r.name, Line: r.line, Err: err}
	}
	if !r.opts.SkipBad {
		return le
	}
	r.stats.Bad++
	if len(r.badFirst) < MaxBadExamples {
		r.badFirst = append(r.badFirst, le)
	}
	return nil
}

// record parses line and queues its request.
func (r *Reader) record(line []byte) error {
	p := &r.p
	*p = parsed{}
	if err := r.parser.parse(line, p); err != nil {
		return err
	}
	key, err := r.keyer.key(p.keyv)
	if err != nil {
		return err
	}
	horizon := satSub(r.maxAt, r.reorder)
	if p.at < horizon {
		return r.tooEarly(p.at)
	}
	r.anyRead = true
	if p.at > r.maxAt {
		r.maxAt, r.maxLine = p.at, r.line
	}
	if r.until != math.MaxInt64 && satSub(r.maxAt, r.reorder) >= r.until {
		// No line to come can arrive before Until.
		r.eof = true
	}
	if p.at < r.from || p.at >= r.until || !r.keep(p) {
		r.stats.Filtered++
		return nil
	}
	if key != "" {
		// Of the requests replayed alone: a filtered-out or keyless
		// line's times say nothing of theirs.
		r.resGCD = gcd(r.resGCD, subSecond(p.at))
	}
	if r.queue.len()+r.spread.len() >= r.opts.MaxPending {
		return busyError{fmt.Errorf("trace: %s:%d: more than %d requests within %v of each other (want fewer; a smaller --reorder holds fewer back)", r.name, r.line, r.opts.MaxPending, time.Duration(r.reorder))}
	}
	target := p.target
	if i := bytes.IndexByte(target, '?'); i >= 0 {
		target = target[:i]
	}
	if len(target) == 0 && p.target != nil {
		target = slash // "http://host?q"
	}
	q := pending{at: p.at, rec: Record{
		Key:    key,
		Method: r.method(p.method),
		Path:   r.strs.get(target),
		Status: p.status,
		Line:   r.line,
	}}
	r.queue.push(&q)
	return nil
}

// method returns the method m as a string: one of the usual methods
// without a look-up (a switch on its bytes compares their length and a
// word or two, no call), any other through the interner.
func (r *Reader) method(m []byte) string {
	switch string(m) {
	case "GET":
		return "GET"
	case "POST":
		return "POST"
	case "HEAD":
		return "HEAD"
	case "PUT":
		return "PUT"
	case "DELETE":
		return "DELETE"
	case "PATCH":
		return "PATCH"
	case "OPTIONS":
		return "OPTIONS"
	}
	return r.strs.get(m)
}

// busyError ends the reading: the log has more requests in the reorder
// window than a Reader holds. It is no fault of a line, so SkipBad does
// not skip it.
type busyError struct{ error }

func (e busyError) Unwrap() error { return e.error }

// keep reports whether the request p passes the path and method filters.
func (r *Reader) keep(p *parsed) bool {
	if r.methods != nil && !r.methods[string(p.method)] {
		return false
	}
	if r.opts.PathPrefix == "" && r.opts.PathGlob == "" {
		return true
	}
	pth := p.target
	if i := bytes.IndexByte(pth, '?'); i >= 0 {
		pth = pth[:i]
	}
	if r.opts.PathPrefix != "" && !bytes.HasPrefix(pth, r.prefix) {
		return false
	}
	if r.opts.PathGlob != "" {
		if ok, _ := path.Match(r.opts.PathGlob, string(pth)); !ok {
			return false
		}
	}
	return true
}

// tooEarly is the error of a line that arrived more than Reorder before
// the latest line before it.
func (r *Reader) tooEarly(at int64) error {
	hint := fmt.Sprintf("lines may be out of order by at most %v, see --reorder", time.Duration(r.reorder))
	if r.reorder == 0 {
		hint = "no line may be out of order, see --reorder"
	}
	d := time.Duration(r.maxAt - at)
	if d < 0 { // overflowed: centuries apart
		d = math.MaxInt64
	}
	return fmt.Errorf("timestamp %s: %v earlier than line %d's (logs must be in time order; %s)",
		time.Unix(0, at).UTC().Format(time.RFC3339Nano), d, r.maxLine, hint)
}
