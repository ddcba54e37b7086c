package replay

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/internal/words"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/store"
	"github.com/ratelim/ratelim/trace"
)

// Steps a replay's timeline is drawn at, the finest that keeps it to
// at most maxSteps steps: a day of log at 1m, a week at 10m.
var stepLadder = []time.Duration{time.Second, 10 * time.Second, time.Minute, 10 * time.Minute, time.Hour, 24 * time.Hour}

const maxSteps = 1500

// StepFor is the timeline step of a replay lasting span: the finest of
// 1s, 10s, 1m, 10m, 1h and 1d that gives at most 1,500 steps.
func StepFor(span time.Duration) time.Duration {
	for _, s := range stepLadder {
		if span/s < maxSteps {
			return s
		}
	}
	return stepLadder[len(stepLadder)-1]
}

// Scenario returns the scenario that replays the log: a client per key,
// named by it (or by redact(key), when redact is set, in every output),
// each sending the key's requests and never retrying (the log already
// holds what its clients sent again), limited by limit on one server
// that decides on shared memory, until just past the log's last request.
// The caller may change everything but the clients and the feed.
func (l *Log) Scenario(limit sim.Limit, redact func(string) string) sim.Scenario {
	span := l.Span()
	step := StepFor(span)
	duration := ((span + step - 1) / step) * step
	if limit.Key == "" {
		limit.Key = sim.KeyAuto
	}
	sc := sim.Scenario{
		Name:     "replay of " + filepath.Base(name(l.Path)),
		Summary:  fmt.Sprintf("%s replayed: %s requests from %d keys", name(l.Path), words.Thousands(l.Requests), len(l.Keys)),
		Duration: duration,
		Seed:     1,
		Step:     step,
		Servers:  1,
		Balancer: sim.RoundRobin,
		Limit:    limit,
		Topology: sim.Topology{Kind: sim.Shared, OnError: store.FailOpen, Clock: sim.ServerClock, PrimaryStopsAfter: sim.PrimaryNeverStops},
		Clients:  make([]sim.Client, len(l.Keys)),
		// The log's own time: a peer that aligns windows to the clock
		// aligns them as it would have on the day.
		WallClock: l.Wall(0),
	}
	for i, k := range l.Keys {
		id := k.Key
		if redact != nil {
			id = redact(id)
		}
		sc.Clients[i] = Client(id, limit.Key)
	}
	sc.Feeds = []sim.Feed{l.KeysFeed(0)}
	return sc
}

// Client is a client of a trace: named by its key, which is the identity
// the limit keys by, so that the key it counts against is its own. An
// address's key is named as httplimit names it ("ip:203.0.113.9"), and
// the client's address is the address alone, as a scenario's client
// writes it (ip: 203.0.113.9): the two count against one key.
func Client(key string, by sim.KeyBy) sim.Client {
	c := sim.Client{Name: key, Retry: sim.Retry{Policy: sim.RetryNone}}
	switch by {
	case sim.KeyIP:
		c.IP = strings.TrimPrefix(key, "ip:")
	case sim.KeyUser:
		c.User = key
	default:
		c.APIKey = key
	}
	return c
}

// KeyReport is what a limit did to one key of a log.
type KeyReport struct {
	Key      string
	Requests int64
	// Rejected are its requests the limit refused (a fail-closed store
	// error included).
	Rejected int64
	// FirstRejected is the log's time of its first refused request; zero
	// when none was.
	FirstRejected time.Time
	// WorstMinute is the minute of the log (UTC, from :00) in which most
	// of its requests were refused, the earliest of a tie, and
	// WorstMinuteRejected how many were.
	WorstMinute         time.Time
	WorstMinuteRejected int64
	// Peak is the most requests it sent in any window of PeakWindow, and
	// Burst the smallest token-bucket burst that admits them all at the
	// limit's rate; both 0 when not measured.
	Peak  int
	Burst int64
}

// Totals sum a run's keys.
type Totals struct {
	Keys      int
	Throttled int // keys with a request refused
	Requests  int64
	Rejected  int64
}

// Run is a replay of a log under one limit.
type Run struct {
	Label    string
	Scenario sim.Scenario
	Result   *sim.Result
	// Keys are the log's keys, most refused first (then most requests,
	// then by key).
	Keys   []KeyReport
	Totals Totals
	// PeakWindow is the window Peak counts over.
	PeakWindow time.Duration
}

// tally counts each key's refusals minute by minute as a run decides.
type tally struct {
	l    *Log
	keys []keyTally
}

type keyTally struct {
	requests, rejected int64
	first              int64 // the log's ns of the first refusal
	minute             int64 // the minute being counted, in Unix minutes
	inMinute           int64
	worst, worstCount  int64
}

func (t *tally) observe(o sim.Observation) {
	if o.Client < 0 || o.Client >= len(t.keys) || o.Attempt > 0 {
		return
	}
	k := &t.keys[o.Client]
	k.requests++
	if o.Decision.Allowed {
		return
	}
	wall := t.l.Wall(o.At).UnixNano()
	minute := floorDiv(wall, int64(time.Minute))
	if k.rejected == 0 {
		k.first, k.minute = wall, minute
	}
	k.rejected++
	if minute != k.minute {
		k.minute, k.inMinute = minute, 0
	}
	k.inMinute++
	if k.inMinute > k.worstCount {
		k.worst, k.worstCount = minute, k.inMinute
	}
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && (a < 0) {
		q--
	}
	return q
}

// PeakWindow is the window a limit's peaks are measured over: its window,
// for the window algorithms, else its rate's period.
func PeakWindow(p algorithms.Params) time.Duration {
	if p.Window > 0 {
		return p.Window
	}
	return max(p.Rate.Per, time.Microsecond)
}

// Replay runs sc, a scenario from Scenario (changed as the caller likes,
// its clients and feed kept), with opts, and reports what it did to each
// of the log's keys.
func (l *Log) Replay(ctx context.Context, label string, sc sim.Scenario, opts sim.Options) (*Run, error) {
	t := &tally{l: l, keys: make([]keyTally, len(l.Keys))}
	opts.Observe = t.observe
	r, err := sim.Run(ctx, sc, opts)
	if err != nil {
		return nil, err
	}
	if r.WallClock == "" {
		// The simulator says its wall clock only where an algorithm
		// reads it (a window aligned to it); a replay's is the log's own,
		// which a plot in the log's clock reads.
		r.WallClock = sc.WallClock.UTC().Format(time.RFC3339Nano)
	}
	run := &Run{Label: label, Scenario: sc, Result: r, PeakWindow: PeakWindow(sc.Limit.Params)}
	peaks := map[string]trace.KeyPeak{}
	for _, p := range l.Peaks {
		peaks[p.Key] = p
	}
	run.Keys = make([]KeyReport, len(l.Keys))
	for i, k := range t.keys {
		kr := KeyReport{Key: sc.Clients[i].Name, Requests: k.requests, Rejected: k.rejected}
		if p, ok := peaks[l.Keys[i].Key]; ok {
			kr.Peak, kr.Burst = p.InWindow, p.Burst
		}
		if k.rejected > 0 {
			kr.FirstRejected = time.Unix(0, k.first).UTC()
			kr.WorstMinute = time.Unix(0, k.worst*int64(time.Minute)).UTC()
			kr.WorstMinuteRejected = k.worstCount
			run.Totals.Throttled++
		}
		run.Keys[i] = kr
		run.Totals.Requests += kr.Requests
		run.Totals.Rejected += kr.Rejected
	}
	run.Totals.Keys = len(run.Keys)
	slices.SortStableFunc(run.Keys, func(a, b KeyReport) int {
		switch {
		case a.Rejected != b.Rejected:
			return cmpDesc(a.Rejected, b.Rejected)
		case a.Requests != b.Requests:
			return cmpDesc(a.Requests, b.Requests)
		}
		return strings.Compare(a.Key, b.Key)
	})
	return run, nil
}

func cmpDesc(a, b int64) int {
	if a > b {
		return -1
	}
	return 1
}
