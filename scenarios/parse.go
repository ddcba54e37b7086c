package scenarios

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ratelim/ratelim/replay"
	"github.com/ratelim/ratelim/sim"
)

// File is one scenario file, read and checked.
type File struct {
	// Scenario is ready to simulate: defaults filled in, clients expanded.
	Scenario sim.Scenario
	// Expect are the file's expect: lines, in order, not yet evaluated.
	Expect []Expectation
	// Question is what the file asks before the run (question:); nil
	// when it asks nothing.
	Question *Question
	// Source is the file's text as it was read: what `ratelim scenarios
	// show` prints.
	Source []byte
	// Path is the file the scenario was read from (the filename given to
	// Parse); empty for a built-in.
	Path string

	// origin is how Source was read, for Apply to read it again alike.
	origin origin
	// base is the file as read, and applied the settings that made this
	// one of it, when Apply did (nil and none otherwise). A base that was
	// read again with paths set is kept as its text alone (unread): its
	// scenario, a million clients perhaps, is not kept beside this one's.
	base    *File
	applied []Setting
	// unread says the file is its text alone, Scenario and Expect not
	// read: a base, or what OpenWith reads with its settings.
	unread bool
}

// unreadCopy is f as its text alone, to read again.
func (f *File) unreadCopy() *File {
	return &File{Source: f.Source, Path: f.Path, origin: f.origin, unread: true}
}

// origin is what a file was read with: the name its errors give, whether
// a trace may read its log and from where, and the logs read so far, so
// that reading the file again (Apply, once per value of a sweep) does not
// scan a log again.
type origin struct {
	file   string
	logs   bool
	logDir string
	cache  *logCache
}

// Limits on what one file may ask for. Servers is the format's own bound;
// the others keep the loader's work and the recorder's memory (steps ×
// clients) finite on any input, and are far above what a scenario needs to
// teach anything.
const (
	MaxServers  = 1024
	MaxClients  = 1_000_000 // after count expands them
	MaxPatterns = 1_000_000 // traffic patterns over all expanded clients
	MaxCost     = 1_000_000
	MaxRetries  = 1_000
	MaxFaults   = 1_000
	MaxExpect   = 1_000 // expectations
	// MaxDuration is the longest run: a year of virtual time. Longer
	// runs are no lesson, and the recorder's steps must stay countable.
	MaxDuration = 365 * 24 * time.Hour
	// MaxIdentity is the longest name, api_key, user or ip a client may
	// have once {i} is expanded: a limiter key is a short string.
	MaxIdentity = 256
)

// Defaults of the fields a file may leave out.
const (
	DefaultSeed      = 1
	DefaultStep      = time.Second
	DefaultServers   = 1
	DefaultAlgorithm = "token-bucket"
	DefaultStore     = "memory"
	DefaultRTT       = 500 * time.Microsecond // for every topology but local, which has none
)

// MaxFileSize is the largest scenario file read: far above any scenario
// (the built-ins are 1–3 KB), and small enough that a mistaken argument
// (/dev/zero, a log file) costs nothing.
const MaxFileSize = 4 << 20

// Load reads the scenario file at path. A file that cannot be read is an
// *fs.PathError ("open foo.yaml: no such file or directory"); so is one
// that is not a regular file (a FIFO would block, a device never end) or
// is larger than MaxFileSize. One that cannot be used is an *Error.
func Load(path string) (*File, error) {
	data, err := loadData(path)
	if err != nil {
		return nil, err
	}
	return parse(path, data, &decoder{file: path, logs: true, logDir: filepath.Dir(path)})
}

// loadUnread is Load, the file unread (to read with settings).
func loadUnread(path string) (*File, error) {
	data, err := loadData(path)
	if err != nil {
		return nil, err
	}
	return unreadFile(path, data, &decoder{file: path, logs: true, logDir: filepath.Dir(path)}), nil
}

// loadData is the text of the scenario file at path, as Load says.
func loadData(path string) ([]byte, error) {
	// Stat before opening: opening a FIFO blocks until someone writes.
	info, err := os.Stat(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			pe.Op = "open" // what the user asked for, as os.ReadFile says it
		}
		return nil, err
	}
	if !info.Mode().IsRegular() {
		what := "not a regular file"
		if info.IsDir() {
			what = "a directory, not a scenario file"
		}
		return nil, &fs.PathError{Op: "read", Path: path, Err: errors.New(what + " (want a YAML file, or - for standard input)")}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readData(path, f)
}

// Read reads a scenario from r, at most MaxFileSize bytes of it; name is
// what errors call it (a path, or "stdin").
func Read(name string, r io.Reader) (*File, error) { return ReadWith(name, r, nil) }

// ReadWith is Apply(Read(name, r), sets), reading the text once, as
// OpenWith does.
func ReadWith(name string, r io.Reader, sets []Setting) (*File, error) {
	data, err := readData(name, r)
	if err != nil {
		return nil, err
	}
	d := &decoder{file: name, logs: true, logDir: "."}
	if len(sets) == 0 {
		return parse(name, data, d)
	}
	return Apply(unreadFile(name, data, d), sets)
}

// readData reads at most MaxFileSize bytes of r; name is what errors
// call it.
func readData(name string, r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxFileSize+1))
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	if len(data) > MaxFileSize {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("larger than %d MB (want a scenario file, a few KB)", MaxFileSize>>20)}
	}
	return data, nil
}

// Parse reads a scenario from data; filename is what errors and a missing
// name: are taken from. Every error is an *Error that names the line and
// the field. Parse never panics, whatever data holds.
//
// A trace: in data is refused: Parse reads nothing but data (Load and
// Read read a trace's log).
func Parse(filename string, data []byte) (*File, error) {
	return parse(filename, data, &decoder{file: filename})
}

// unreadFile is data as a File to read with settings (Apply), unread.
func unreadFile(filename string, data []byte, d *decoder) *File {
	return &File{
		Source: append([]byte(nil), data...),
		Path:   filename,
		origin: origin{file: d.file, logs: d.logs, logDir: d.logDir, cache: &logCache{}},
		unread: true,
	}
}

func parse(filename string, data []byte, d *decoder) (*File, error) {
	d.cache = &logCache{}
	f := d.parse(data)
	if d.err != nil {
		return nil, d.err
	}
	f.Source = append([]byte(nil), data...)
	f.Path = filename
	f.origin = origin{file: d.file, logs: d.logs, logDir: d.logDir, cache: d.cache}
	return f, nil
}

const scenarioWant = "a mapping with name, duration, limit and clients"

// parse reads the file's sections in the order each depends on the last:
// the name and timeline (a trace's log gives the duration), the fleet, the
// limits, the topology (placed against the limits), the clients (keyed by
// the limit), the faults (on the servers) and the expectations (on all of
// it). It stops after the first section that fails, so that no section
// reads on from a value that did not.
func (d *decoder) parse(data []byte) *File {
	root := d.readDocument(data)
	if d.failed() {
		return nil
	}
	return d.parseRoot(root)
}

// parseRoot reads the scenario from the document's top node: the file as
// written, or as Apply has changed it.
func (d *decoder) parseRoot(root *yaml.Node) *File {
	d.root = root
	top := d.record(root, "", &scenarioObject, scenarioWant)
	if d.failed() {
		return nil
	}
	sc := d.nameAndSummary(top)
	log, logRetry := d.topTrace(top)
	if d.failed() {
		return nil
	}
	d.timeline(top, log, &sc)
	d.fleet(top, log, &sc)
	if d.failed() {
		return nil
	}
	d.limitOrLimits(top, &sc)
	if d.failed() {
		return nil
	}
	if n, ok := top.values["shedder"]; ok {
		sc.Shedder = d.shedder(n)
		if d.failed() {
			return nil
		}
	}
	sc.Topology = d.topology(top.values["topology"], top.keys["topology"] != nil, top.node)
	if d.failed() {
		return nil
	}
	d.regionServers(top, &sc)
	if d.failed() {
		return nil
	}
	d.place(top, &sc)
	if d.failed() {
		return nil
	}
	d.scenarioClients(top, log, logRetry, &sc)
	if d.failed() {
		return nil
	}
	// An optional list may be left empty (faults: with every entry
	// commented out).
	if n, ok := top.values["faults"]; ok && !isNull(n) {
		sc.Faults = d.faults(n, &sc)
	}
	if d.failed() {
		return nil
	}
	expect := d.scenarioExpect(top, &sc)
	if d.failed() {
		return nil
	}
	var q *Question
	if n, ok := top.values["question"]; ok {
		q = d.question(n, &sc)
		if d.failed() {
			return nil
		}
	}
	return &File{Scenario: sc, Expect: expect, Question: q}
}

// nameAndSummary starts the scenario from the defaults, named by its name:
// or else by its file's name (runaway.yaml is runaway), with its summary:.
func (d *decoder) nameAndSummary(top *fields) sim.Scenario {
	name := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(d.file), ".yaml"), ".yml")
	if name == "" || name == "." || name == string(filepath.Separator) {
		name = "scenario"
	}
	sc := sim.Scenario{
		Name:     name,
		Seed:     DefaultSeed,
		Step:     DefaultStep,
		Servers:  DefaultServers,
		Balancer: sim.RoundRobin,
	}
	if n, ok := top.values["name"]; ok {
		sc.Name = d.text(n, "name", "runaway-healthcheck")
		if !d.failed() && strings.TrimSpace(sc.Name) == "" {
			d.failf(n, "name", "empty (want a name, e.g. runaway-healthcheck)")
		}
	}
	if n, ok := top.values["summary"]; ok {
		sc.Summary = strings.TrimSpace(d.text(n, "summary", "what the scenario shows"))
	}
	return sc
}

// topTrace reads the top-level trace: (nil without one), whose log's keys
// become clients, and the retry policy they share (none unless given).
// It comes before the timeline: a run with no duration: lasts the log.
func (d *decoder) topTrace(top *fields) (*replay.Log, sim.Retry) {
	n, ok := top.values["trace"]
	if !ok {
		return nil, sim.Retry{}
	}
	log, tf := d.traceLog(n, "trace", &traceObject, MaxClients)
	if d.failed() {
		return nil, sim.Retry{}
	}
	logRetry := sim.Retry{Policy: sim.RetryNone}
	if v, ok := tf.values["retry"]; ok {
		logRetry = d.retry(v, tf.field("retry"))
	}
	return log, logRetry
}

// timeline reads the run's duration (the log's span when a trace gives
// none), seed and step; the step is at most the duration.
func (d *decoder) timeline(top *fields, log *replay.Log, sc *sim.Scenario) {
	_, stepGiven := top.values["step"]
	if n, ok := top.values["duration"]; ok {
		sc.Duration = d.runDuration(n, "duration")
	} else if log != nil {
		// As long as the log, at the step the file gives or one that
		// keeps the timeline to a few thousand steps.
		step := replay.StepFor(log.Span())
		if stepGiven {
			step = d.positive(top.values["step"], "step", "1s")
		}
		sc.Duration = durationOfTrace(log, step)
		if !stepGiven {
			sc.Step = step
		}
	} else {
		d.failf(top.node, "duration", "missing (want e.g. duration: 30s)")
	}
	if n, ok := top.values["seed"]; ok {
		sc.Seed = d.seed(n, "seed", "1")
	}
	if n, ok := top.values["step"]; ok {
		sc.Step = d.positive(n, "step", "1s")
		if !d.failed() && sc.Step > sc.Duration {
			d.failf(n, "step", "%s is longer than the duration %s (want at most the duration, e.g. 1s)", sc.Step, sc.Duration)
		}
	} else {
		sc.Step = min(sc.Step, sc.Duration)
	}
}

// regionServers makes a regions topology's servers its regions': the
// servers: field, when the file gives one, must say as many.
func (d *decoder) regionServers(top *fields, sc *sim.Scenario) {
	if sc.Topology.Kind != sim.Regions {
		return
	}
	total := 0
	for _, r := range sc.Topology.Regions {
		total += r.Servers
	}
	if n, ok := top.values["servers"]; ok && sc.Servers != total {
		d.failf(n, "servers", "%d, but the regions hold %d (want them equal, or servers: left out)", sc.Servers, total)
		return
	}
	if total > MaxServers {
		d.failf(top.values["topology"], "topology.regions", "%d servers in all (want at most %d)", total, MaxServers)
		return
	}
	sc.Servers = total
}

// fleet reads the servers, the wall clock they read (a trace's own when
// the file gives none) and the balancer that spreads requests over them.
func (d *decoder) fleet(top *fields, log *replay.Log, sc *sim.Scenario) {
	if n, ok := top.values["servers"]; ok {
		sc.Servers = int(d.integer(n, "servers", 1, MaxServers, "4"))
	}
	if n, ok := top.values["wall_clock"]; ok {
		sc.WallClock = d.wallClock(n, "wall_clock")
	} else if log != nil {
		// A log's own time: a peer that aligns windows to the clock
		// aligns them as it would have on the day.
		sc.WallClock = log.Wall(0)
	}
	if n, ok := top.values["balancer"]; ok {
		sc.Balancer = sim.Balancer(d.choice(n, "balancer", "balancer", balancers))
	}
}

// limitOrLimits reads the limit: or the limits: (one of them, not both).
func (d *decoder) limitOrLimits(top *fields, sc *sim.Scenario) {
	switch n, ok := top.values["limit"]; {
	case ok && top.keys["limits"] != nil:
		d.failf(top.keys["limits"], "limits", "given with limit: (want limit: for one limit, or limits: for several, not both)")
	case ok:
		sc.Limit = d.limit(n, "limit")
	case top.keys["limits"] != nil:
		d.limits(top.values["limits"], sc)
	default:
		d.failf(top.node, "limit", "missing (want e.g. limit: {algorithm: token-bucket, rate: 10/s, burst: 50})")
	}
}

// place checks that the limits can live where the topology keeps them
// (sim.Placement), and puts a refusal on the field that chose the place.
func (d *decoder) place(top *fields, sc *sim.Scenario) {
	err := sim.Placement(sc)
	if err == nil {
		return
	}
	at := top.values["topology"]
	if at == nil {
		at = top.node
	}
	field := "topology.store"
	if strings.HasPrefix(err.Error(), "concurrency") || strings.Contains(err.Error(), "cannot count an admission") {
		field = "topology.kind"
	}
	d.failf(at, field, "%v", err)
}

// scenarioClients reads the clients: and adds one per key of a top-level
// trace's log; a file with a trace may have no clients: of its own.
func (d *decoder) scenarioClients(top *fields, log *replay.Log, logRetry sim.Retry, sc *sim.Scenario) {
	if n, ok := top.values["clients"]; ok {
		sc.Clients = d.clients(n, sc)
	} else if log == nil {
		d.failf(top.node, "clients", "missing (want at least one client, e.g. - {name: web, api_key: web, traffic: {pattern: constant, rate: 5/s}})")
	}
	if d.failed() {
		return
	}
	if log != nil {
		d.traceClients(log, logRetry, top.values["trace"], sc)
	}
}

// scenarioExpect reads the lesson: (the first expectation when given) and
// the expect: list, each checked against the scenario read so far.
func (d *decoder) scenarioExpect(top *fields, sc *sim.Scenario) []Expectation {
	var expect []Expectation
	if n, ok := top.values["lesson"]; ok {
		expect = append(expect, d.lesson(n))
	}
	if n, ok := top.values["expect"]; ok && !isNull(n) && !d.failed() {
		expect = append(expect, d.expectations(n, sc)...)
	}
	return expect
}
