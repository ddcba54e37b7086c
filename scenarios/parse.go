package scenarios

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/big"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/replay"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/store"
)

// File is one scenario file, read and checked.
type File struct {
	// Scenario is ready to simulate: defaults filled in, clients expanded.
	Scenario sim.Scenario
	// Expect are the file's expect: lines, in order, not yet evaluated.
	Expect []Expectation
	// Source is the file's text as it was read: what `ratelim scenarios
	// show` prints.
	Source []byte
	// Path is the file the scenario was read from (the filename given to
	// Parse); empty for a built-in.
	Path string
}

// Limits on what one file may ask for. Servers is the format's own bound;
// the others keep the loader's work and the recorder's memory (steps ×
// clients) finite on any input, and are far above what a scenario needs to
// teach anything.
const (
	MaxServers  = 1024
	MaxClients  = 100_000 // after count expands them
	MaxPatterns = 100_000 // traffic patterns over all expanded clients
	MaxCost     = 1_000_000
	MaxRetries  = 1_000
	MaxFaults   = 1_000
	MaxExpect   = 1_000 // expectations
	maxOffset   = 24 * time.Hour
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
	return read(path, f, filepath.Dir(path))
}

// Read reads a scenario from r, at most MaxFileSize bytes of it; name is
// what errors call it (a path, or "stdin").
func Read(name string, r io.Reader) (*File, error) {
	return read(name, r, ".")
}

// read is Read, a trace's relative log path taken from logDir.
func read(name string, r io.Reader, logDir string) (*File, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxFileSize+1))
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	if len(data) > MaxFileSize {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("larger than %d MB (want a scenario file, a few KB)", MaxFileSize>>20)}
	}
	return parse(name, data, &decoder{file: name, logs: true, logDir: logDir})
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

func parse(filename string, data []byte, d *decoder) (*File, error) {
	f := d.parse(data)
	if d.err != nil {
		return nil, d.err
	}
	f.Source = append([]byte(nil), data...)
	f.Path = filename
	return f, nil
}

const scenarioWant = "a mapping with name, duration, limit and clients"

func (d *decoder) parse(data []byte) *File {
	root := d.readDocument(data)
	if d.failed() {
		return nil
	}
	top := d.record(root, "", &scenarioObject, scenarioWant)
	if d.failed() {
		return nil
	}
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
	var log *replay.Log
	var logRetry sim.Retry
	if n, ok := top.values["trace"]; ok {
		var tf *fields
		log, tf = d.traceLog(n, "trace", &traceObject, MaxClients)
		if d.failed() {
			return nil
		}
		logRetry = sim.Retry{Policy: sim.RetryNone}
		if v, ok := tf.values["retry"]; ok {
			logRetry = d.retry(v, tf.field("retry"))
		}
	}
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
	if d.failed() {
		return nil
	}
	switch n, ok := top.values["limit"]; {
	case ok && top.keys["limits"] != nil:
		d.failf(top.keys["limits"], "limits", "given with limit: (want limit: for one limit, or limits: for several, not both)")
	case ok:
		sc.Limit = d.limit(n, "limit")
	case top.keys["limits"] != nil:
		d.limits(top.values["limits"], &sc)
	default:
		d.failf(top.node, "limit", "missing (want e.g. limit: {algorithm: token-bucket, rate: 10/s, burst: 50})")
	}
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
	if err := sim.Placement(&sc); err != nil {
		at := top.values["topology"]
		if at == nil {
			at = top.node
		}
		field := "topology.store"
		if strings.HasPrefix(err.Error(), "concurrency") {
			field = "topology.kind"
		}
		d.failf(at, field, "%v", err)
		return nil
	}
	if n, ok := top.values["clients"]; ok {
		sc.Clients = d.clients(n, &sc)
	} else if log == nil {
		d.failf(top.node, "clients", "missing (want at least one client, e.g. - {name: web, api_key: web, traffic: {pattern: constant, rate: 5/s}})")
	}
	if d.failed() {
		return nil
	}
	if log != nil {
		d.traceClients(log, logRetry, top.values["trace"], &sc)
		if d.failed() {
			return nil
		}
	}
	// An optional list may be left empty (faults: with every entry
	// commented out).
	if n, ok := top.values["faults"]; ok && !isNull(n) {
		sc.Faults = d.faults(n, &sc)
	}
	if d.failed() {
		return nil
	}
	var expect []Expectation
	if n, ok := top.values["lesson"]; ok {
		expect = append(expect, d.lesson(n))
	}
	if n, ok := top.values["expect"]; ok && !isNull(n) && !d.failed() {
		expect = append(expect, d.expectations(n, &sc)...)
	}
	if d.failed() {
		return nil
	}
	return &File{Scenario: sc, Expect: expect}
}

func (d *decoder) limit(n *yaml.Node, path string) sim.Limit {
	f := d.record(n, path, &limitObject, "a mapping with algorithm, rate and burst or window")
	lim := sim.Limit{Algorithm: DefaultAlgorithm, Key: sim.KeyAuto}
	if v, ok := f.values["name"]; ok {
		lim.Name = d.policyName(v, path+".name")
	}
	if v, ok := f.values["algorithm"]; ok {
		lim.Algorithm = d.choice(v, path+".algorithm", "algorithm", algorithms.Names())
	}
	if v, ok := f.values["rate"]; ok {
		lim.Params.Rate = d.rate(v, path+".rate", false)
	} else if lim.Algorithm != "concurrency" {
		d.failf(f.node, path+".rate", "missing (want e.g. rate: 10/s)")
	}
	if v, ok := f.values["max_in_flight"]; ok {
		lim.Params.Burst = d.integer(v, path+".max_in_flight", 1, 1<<20, "20")
	}
	if v, ok := f.values["lease_ttl"]; ok {
		lim.Params.Window = d.positive(v, path+".lease_ttl", "30s")
	}
	if !d.failed() && lim.Algorithm != "concurrency" {
		for _, field := range []string{"max_in_flight", "lease_ttl"} {
			if v, ok := f.values[field]; ok {
				d.failf(v, path+"."+field, "is the concurrency limiter's (want algorithm: concurrency, or no %s)", field)
			}
		}
	}
	if !d.failed() && lim.Algorithm == "concurrency" {
		for _, field := range []string{"rate", "burst", "window"} {
			if v, ok := f.values[field]; ok {
				d.failf(v, path+"."+field, "the concurrency limiter counts requests in flight, not a rate (want max_in_flight and lease_ttl)")
			}
		}
	}
	if v, ok := f.values["burst"]; ok {
		lim.Params.Burst = d.integer(v, path+".burst", 0, 1<<50, "50")
		if !d.failed() && lim.Params.Burst == 0 && lim.Algorithm != "nginx-limit-req" {
			d.failf(v, path+".burst", "0 is too small (want at least 1); burst: 0, nginx's default, is for nginx-limit-req alone")
		}
	}
	if v, ok := f.values["window"]; ok {
		lim.Params.Window = d.positive(v, path+".window", "1s")
	}
	if v, ok := f.values["delay"]; ok {
		lim.Params.Delay = d.integer(v, path+".delay", 0, 1<<50, "8")
	}
	if v, ok := f.values["nodelay"]; ok {
		lim.Params.NoDelay = d.boolean(v, path+".nodelay")
	}
	if v, ok := f.values["shadow"]; ok {
		lim.Shadow, lim.ShadowUntil = d.shadow(v, path+".shadow")
	}
	if v, ok := f.values["key"]; ok {
		lim.Key = sim.KeyBy(d.choice(v, path+".key", "key", keyKinds))
	}
	if d.failed() {
		return lim
	}
	// The parameters the algorithm reads must be there; the others may be,
	// so that --algorithm can switch a file between families.
	for _, info := range algorithms.Catalog() {
		if info.Name != lim.Algorithm {
			continue
		}
		for _, p := range info.Params {
			if !f.has(p) {
				example := map[string]string{"rate": "rate: 10/s", "burst": "burst: 50", "window": "window: 1s"}[p]
				d.failf(f.node, path+"."+p, "missing: %s needs a %s (want e.g. %s)", lim.Algorithm, p, example)
				return lim
			}
		}
	}
	if _, err := algorithms.New(lim.Algorithm, lim.Params); err != nil {
		var pe *algorithms.ParamError
		if errors.As(err, &pe) {
			at := f.values[pe.Param]
			if at == nil {
				at = f.node
			}
			d.failf(at, path+"."+pe.Param, "%s", pe.Msg)
		} else {
			d.failf(f.node, path, "%v", err)
		}
	}
	return lim
}

// limits reads a key's several limits, each a limit: mapping with a name,
// into sc.Limit (the first) and sc.Also. They share the first's key.
func (d *decoder) limits(n *yaml.Node, sc *sim.Scenario) {
	const want = "a list of limits, each with a name, e.g. - {name: hourly, algorithm: fixed-window, rate: 1000/h, window: 1h}"
	items := d.list(n, "limits", want)
	if d.failed() {
		return
	}
	if len(items) == 0 || len(items) > algorithms.MaxLimits {
		d.failf(n, "limits", "%d limits (want 1 to %d)", len(items), algorithms.MaxLimits)
		return
	}
	seen := map[string]int{}
	for i, item := range items {
		path := index("limits", i)
		lim := d.limit(item, path)
		if d.failed() {
			return
		}
		f := d.record(item, path, &limitObject, want)
		if len(items) > 1 && lim.Name == "" {
			d.failf(item, path+".name", "missing: a key's several limits are named for the RateLimit-Policy header (want e.g. name: hourly)")
			return
		}
		if j, dup := seen[lim.Name]; dup && lim.Name != "" {
			d.failf(f.values["name"], path+".name", "%q names limits[%d] too (want distinct names)", lim.Name, j)
			return
		}
		seen[lim.Name] = i
		if i == 0 {
			sc.Limit = lim
			continue
		}
		if v, ok := f.values["key"]; ok {
			d.failf(v, path+".key", "a key's limits share the first one's key (want key: on limits[0] only)")
			return
		}
		lim.Key = sc.Limit.Key
		sc.Also = append(sc.Also, lim)
	}
}

// shedder reads the fleet's load shedder:
//
//	shedder: {capacity: 1000/s, burst: 1000, reserve: {normal: 0.2, sheddable: 0.5}}
func (d *decoder) shedder(n *yaml.Node) *sim.Shedder {
	const want = "a mapping such as {capacity: 1000/s, burst: 1000, reserve: {normal: 0.2, sheddable: 0.5}}"
	f := d.record(n, "shedder", &shedderObject, want)
	if d.failed() {
		return nil
	}
	sh := &sim.Shedder{Reserve: defaultReserve}
	v, ok := f.values["capacity"]
	if !ok {
		d.failf(f.node, "shedder.capacity", "missing: what the fleet serves (want e.g. capacity: 1000/s)")
		return nil
	}
	sh.Capacity = d.rate(v, "shedder.capacity", false)
	sh.Burst = max(1, int64(sh.Capacity.PerSecond())) // a second of capacity
	if v, ok := f.values["burst"]; ok {
		sh.Burst = d.integer(v, "shedder.burst", 1, 1<<50, "1000")
	}
	if v, ok := f.values["reserve"]; ok {
		r := d.record(v, "shedder.reserve", &reserveObject, "a mapping such as {normal: 0.2, sheddable: 0.5}")
		if d.failed() {
			return nil
		}
		for i, name := range algorithms.Priorities[1:] { // reserveObject's fields
			if v, ok := r.values[name]; ok {
				share := d.number(v, "shedder.reserve."+name, "0.2")
				switch {
				case d.failed():
				case share < 0 || share >= 1:
					d.failf(v, "shedder.reserve."+name, "%s is not a share of the capacity (want 0 to below 1, e.g. 0.2)", v.Value)
				case !sameDecimal(v.Value, share):
					// The simulator keeps a share as a float64 and
					// reserves on the shortest decimal that reads back
					// as it (algorithms.ReserveOf): the one written, to 15
					// significant digits. Past them, the decimal written
					// may be another, and its reserve a token off.
					d.failf(v, "shedder.reserve."+name, "%s has more significant digits than a share keeps: it would be read as %s (want at most 15 significant digits, e.g. 0.29)", short(v.Value), strconv.FormatFloat(share, 'g', -1, 64))
				}
				sh.Reserve[i+1] = share
			}
		}
	}
	if d.failed() {
		return nil
	}
	if _, err := sh.New(); err != nil {
		d.failf(f.node, "shedder", "%v", err)
		return nil
	}
	return sh
}

// sameDecimal reports whether text, a number as YAML wrote it, is exactly
// the shortest decimal that reads back as x, the float64 it was read as.
func sameDecimal(text string, x float64) bool {
	written, ok := new(big.Rat).SetString(strings.ReplaceAll(strings.TrimSpace(text), "_", ""))
	if !ok {
		return false
	}
	shortest, ok := new(big.Rat).SetString(strconv.FormatFloat(x, 'g', -1, 64))
	return ok && written.Cmp(shortest) == 0
}

// policyName reads a limit's name: what RateLimit-Policy calls it, so
// printable ASCII, at most 64 bytes.
func (d *decoder) policyName(n *yaml.Node, field string) string {
	name := d.text(n, field, "hourly")
	if d.failed() {
		return ""
	}
	if name == "" || len(name) > 64 {
		d.failf(n, field, "%d bytes (want 1 to 64)", len(name))
		return ""
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x20 || c > 0x7e {
			d.failf(n, field, "%q has a character a header cannot carry (want printable ASCII)", name)
			return ""
		}
	}
	return name
}

func (d *decoder) topology(n *yaml.Node, present bool, top *yaml.Node) sim.Topology {
	t := sim.Topology{
		Kind:              sim.Shared,
		Store:             DefaultStore,
		OnError:           store.FailOpen,
		Clock:             sim.ServerClock,
		PrimaryStopsAfter: sim.PrimaryNeverStops,
	}
	if !present {
		t.RTT = DefaultRTT
		return t
	}
	f := d.record(n, "topology", &topologyObject, "a mapping with kind, store, rtt and on_error")
	if v, ok := f.values["kind"]; ok {
		t.Kind = sim.TopologyKind(d.choice(v, "topology.kind", "topology", topologyKinds))
	}
	if v, ok := f.values["store"]; ok {
		t.Store = d.storeName(v, "topology.store")
	}
	t.RTT = DefaultRTT
	if t.Kind == sim.Local {
		t.RTT = 0
	}
	if v, ok := f.values["rtt"]; ok {
		t.RTT = d.roundTrip(v, "topology.rtt", "500us")
	}
	if v, ok := f.values["on_error"]; ok {
		t.OnError = store.Policy(d.choice(v, "topology.on_error", "policy", onErrorPolicies))
	}
	if v, ok := f.values["clock"]; ok {
		t.Clock = sim.ClockSource(d.choice(v, "topology.clock", "clock", clockSources))
	}
	if d.failed() {
		return t
	}
	if v, ok := f.values["replication_lag"]; ok {
		t.ReplicationLag = d.nonNegative(v, "topology.replication_lag", "100ms")
	}
	if v, ok := f.values["failover_after"]; ok {
		t.FailoverAfter = d.nonNegative(v, "topology.failover_after", "2s")
	}
	if v, ok := f.values["primary_stops_after"]; ok {
		if v.Kind == yaml.ScalarNode && v.Value == "never" {
			t.PrimaryStopsAfter = sim.PrimaryNeverStops
		} else {
			t.PrimaryStopsAfter = d.nonNegative(v, "topology.primary_stops_after", "15s or never")
		}
	}
	// A split-brain setting on another kind would do nothing, silently.
	// Its default value does nothing anywhere, and may stay (DESIGN.md's
	// example lists them all on a shared topology, to document them).
	if !d.failed() && t.Kind != sim.SplitBrain {
		set := map[string]bool{
			"replication_lag":     t.ReplicationLag != 0,
			"failover_after":      t.FailoverAfter != 0,
			"primary_stops_after": t.PrimaryStopsAfter != sim.PrimaryNeverStops,
		}
		for _, name := range f.order {
			if set[name] {
				d.failf(f.values[name], f.field(name), "only a split-brain topology has it, and this one is %s (want it removed, or kind: split-brain)", t.Kind)
				return t
			}
		}
	}
	return t
}

// storeName reads memory, miniredis or a Redis URL: redis://host:port[/db]
// (rediss:// for TLS) for one server, redis+cluster://host:port[,host:port]
// for a cluster, as package store opens them.
func (d *decoder) storeName(n *yaml.Node, field string) string {
	s := d.text(n, field, "memory")
	if d.failed() {
		return ""
	}
	switch {
	case slices.Contains(storeNames, s):
		return s
	case strings.Contains(s, "://"):
		scheme, _, _ := strings.Cut(s, "://")
		if !slices.Contains(storeSchemes, scheme) {
			d.failf(n, field, "unknown store URL scheme %q (want redis://host:port or redis+cluster://host:port,host:port)", scheme)
			return ""
		}
		u, err := url.Parse(s)
		if err != nil || u.Host == "" {
			// The URL may hold a password: it is not repeated.
			d.failf(n, field, "the %s URL names no host:port (want e.g. %s://localhost:6379)", scheme, scheme)
			return ""
		}
		return s
	}
	d.failf(n, field, "%s", unknown("store", s, []string{"memory", "miniredis", "redis://host:port", "redis+cluster://host:port,host:port"}))
	return ""
}

// shadow reads a limit's shadow mode: true (or false) for the whole run,
// or {until: 10s}, shadow until then and enforced from then on.
func (d *decoder) shadow(n *yaml.Node, field string) (bool, time.Duration) {
	if n.Kind == yaml.ScalarNode {
		return d.boolean(n, field), 0
	}
	f := d.record(n, field, &shadowObject, "true, or a mapping {until: 10s}")
	if d.failed() {
		return false, 0
	}
	v, ok := f.values["until"]
	if !ok {
		d.failf(f.node, field+".until", "missing (want e.g. shadow: {until: 10s}, or shadow: true for the whole run)")
		return false, 0
	}
	return true, d.positive(v, field+".until", "10s")
}
