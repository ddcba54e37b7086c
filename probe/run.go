package probe

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"time"

	"github.com/ratelim/ratelim/internal/sat"
)

// The probe's phases, in the order it runs them; each Observation names
// the one that sent it.
const (
	phaseBurst    = "burst"    // at the top rate until refused (or the budget is spent): the burst or the window's limit
	phaseOverload = "overload" // on at the top rate: what is admitted while refused (the rate), and whether it ever is
	phaseRecover  = "recover"  // single requests at growing gaps when overload admitted nothing: the recovery
	phaseRefill   = "refill"   // after half a cycle idle, at the top rate until refused: what came back
	phaseSplit    = "split"    // half a burst, half a cycle idle, the rest, then on past a cycle: the windows' edges
	phaseDrain    = "drain"    // at the top rate until refused, before the key test
	phaseKey      = "key"      // a fresh key value and the probe's own, in turn, once the own is refused
)

// Defaults and bounds of Options.
const (
	DefaultMaxRequests = 1500
	MinMaxRequests     = 20 // a burst refused three times, and requests left to see it come back
	MaxMaxRequests     = 2000
	DefaultMaxRate     = 100.0 // requests per second
	MinMaxRate         = 0.1   // a request every 10 s: slower, no probe fits in minutes
	MaxMaxRate         = 1000.0
	DefaultMaxDuration = 60 * time.Second
	MaxMaxDuration     = 10 * time.Minute
)

// Options say what to probe and how hard.
type Options struct {
	// URL is the endpoint, already checked (the caller refuses one that
	// is not on this machine unless the user allowed it).
	URL string
	// KeyHeader, if set, carries Key on every request, and the key test
	// sends fresh values in it.
	KeyHeader string
	// Key is the value sent in KeyHeader; "" generates one.
	Key string
	// MaxRequests, MaxRate (requests per second) and MaxDuration bound
	// the probe; zero means the default. Run never sends more, faster or
	// longer.
	MaxRequests int
	MaxRate     float64
	MaxDuration time.Duration
	// Client sends the requests; nil means one of its own. Redirects are
	// never followed: a 3xx is an answer.
	Client *http.Client
	// Progress, if set, is called after each request sent.
	Progress func(sent, max int, phase string)
}

// Check refuses options out of their bounds, naming the field.
func (o Options) Check() error {
	switch {
	case o.MaxRequests != 0 && (o.MaxRequests < MinMaxRequests || o.MaxRequests > MaxMaxRequests):
		return fmt.Errorf("max-requests: %d is out of range (want %d to %d)", o.MaxRequests, MinMaxRequests, MaxMaxRequests)
	case o.MaxRate != 0 && !(o.MaxRate >= MinMaxRate && o.MaxRate <= MaxMaxRate):
		return fmt.Errorf("max-rate: %g is out of range (want %g to %g per second)", o.MaxRate, MinMaxRate, MaxMaxRate)
	case o.MaxDuration < 0 || o.MaxDuration > MaxMaxDuration:
		return fmt.Errorf("max-duration: %s is out of range (want above 0, at most %s)", o.MaxDuration, MaxMaxDuration)
	}
	return nil
}

func (o Options) withDefaults() Options {
	if o.MaxRequests == 0 {
		o.MaxRequests = DefaultMaxRequests
	}
	if o.MaxRate == 0 {
		o.MaxRate = DefaultMaxRate
	}
	if o.MaxDuration == 0 {
		o.MaxDuration = DefaultMaxDuration
	}
	if o.KeyHeader != "" && o.Key == "" {
		o.Key = NewKey()
	}
	return o
}

// NewKey is a key value no other client holds: "ratelim-probe-" and 8
// random bytes in hex.
func NewKey() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "ratelim-probe-" + hex.EncodeToString(b[:])
}

// Run probes opts.URL and returns what it observed, as a Recording for
// Analyze. Interrupted (ctx done), it returns what it observed so far
// with ctx's error.
func Run(ctx context.Context, opts Options) (Recording, error) {
	if err := opts.Check(); err != nil {
		return Recording{}, err
	}
	opts = opts.withDefaults()
	rec := Recording{Format: RecordingFormat, Target: opts.URL, KeyHeader: opts.KeyHeader, MaxRate: opts.MaxRate}
	client := opts.Client
	if client == nil {
		transport := http.DefaultTransport.(*http.Transport).Clone()
		transport.MaxIdleConnsPerHost = maxInFlight
		defer transport.CloseIdleConnections()
		client = &http.Client{Transport: transport}
	} else {
		c := *client
		client = &c
	}
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	start := time.Now()
	s := &sender{client: client, url: opts.URL, keyHeader: opts.KeyHeader,
		minGap: gapAt(opts.MaxRate), maxRequests: opts.MaxRequests,
		deadline: start.Add(opts.MaxDuration - answerGrace(opts.MaxDuration)), end: start.Add(opts.MaxDuration),
		sem: make(chan struct{}, maxInFlight)}
	if opts.Progress != nil {
		s.progress = func(sent int, phase string) { opts.Progress(sent, opts.MaxRequests, phase) }
	}
	p := &prober{s: s, opts: opts, start: start}
	err := p.run(ctx)
	s.wait()
	rec.Obs = s.observed()
	if ctx.Err() != nil {
		return rec, ctx.Err()
	}
	if err == nil && len(rec.Obs) == 0 {
		err = fmt.Errorf("probe: no request was sent (the first was due after the %s --max-duration allows)", opts.MaxDuration)
	}
	if err == nil && len(rec.Obs) > 0 && answered(rec.Obs) == 0 {
		err = fmt.Errorf("probe: no request was answered (first error: %s)", rec.Obs[0].Error)
	}
	if err == nil && answered(rec.Obs) > 0 && !slices.ContainsFunc(rec.Obs, func(o Observation) bool { return o.Admitted() || o.Refused() }) {
		// Only 500s (or 404s): no limiter answered, so nothing was
		// probed; an error, not a report that found no limit.
		_, first := otherStatuses(rec.Obs)
		err = fmt.Errorf("probe: no answer was an admission (2xx) or a refusal (429, 503): %d answered, the first %d %s",
			answered(rec.Obs), first, http.StatusText(first))
	}
	return rec, err
}

func answered(obs []Observation) int {
	n := 0
	for _, o := range obs {
		if o.Status != 0 {
			n++
		}
	}
	return n
}

// prober runs the phases, each one's parameters taken from what the
// earlier ones saw.
type prober struct {
	s     *sender
	opts  Options
	start time.Time
}

// answerGrace is how long before MaxDuration the probe stops sending, so
// that the last answers (a queue holds them) come within it: a second, at
// most a tenth of it.
func answerGrace(d time.Duration) time.Duration { return min(time.Second, d/10) }

// errStop ends the phases early: the budget, the deadline or nothing more
// to learn.
var errStop = errors.New("probe: stop")

func (p *prober) run(ctx context.Context) error {
	err := p.phases(ctx)
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}

func (p *prober) phases(ctx context.Context) error {
	key, top := p.opts.Key, p.opts.MaxRate
	// A key's first request half a second off the clock's whole seconds:
	// windows anchored at it then fall as far as they can from windows
	// aligned to the clock, which the answers can then tell apart.
	if !p.pauseUntil(ctx, offTheSecond(time.Now())) {
		return cmp.Or(ctx.Err(), errStop)
	}
	// Burst: at the top rate until refused, with the whole budget if
	// need be: a large burst is seen only by spending it, and a probe
	// that stopped short could not say there was none.
	burst := p.train(ctx, phaseBurst, key, top, p.s.budget(), func(t trainView) bool { return t.refused >= 3 })
	if burst.refused == 0 {
		return errStop
	}
	a := burst.firstRun
	// Overload: on at the top rate until as many as the burst were
	// admitted again and refused after, or 40% of the budget.
	// Past 1 s and three bursts' time with nothing admitted, the limit
	// counts what it refuses or its window is long: the recover phase
	// finds out with far fewer requests.
	overloadFor := min(p.opts.MaxDuration*3/10, time.Second+3*time.Since(burst.started))
	over := p.train(ctx, phaseOverload, key, top, p.opts.MaxRequests*2/5, func(t trainView) bool {
		return int64(t.admitted) >= max(a, 10) && t.refusedSinceAdmit >= 3 ||
			t.admitted == 0 && time.Since(t.started) > overloadFor
	})
	if over.admitted == 0 {
		if err := p.recover(ctx, key, top); err != nil {
			return err
		}
	}
	// A cycle: the time the limit takes to come back whole, as far as the
	// figures so far say.
	cycle := p.cycle()
	// Refill: half a cycle idle, then at the top rate until refused. A
	// refill that finds nothing come back says the cycle is longer than
	// the figures so far (a long window the overload happened to see
	// the edge of): it is doubled, and the refill tried again, while the
	// probe's time allows. So is a slow limit's (a cycle of seconds)
	// that found less than the burst back: how much comes back after
	// how long is what shows a slow rate (30/m, burst 5), and each wait
	// costs only time.
	for {
		if !p.idle(ctx, cycle/2) {
			return errStop
		}
		refill := p.train(ctx, phaseRefill, key, top, 2*int(a)+10, func(t trainView) bool { return t.refused >= 3 })
		slow := cycle >= 2*time.Second && int64(refill.admitted) < a
		if refill.sent == 0 || cycle >= p.maxCycle() || refill.admitted > 0 && !slow {
			break
		}
		cycle = min(2*cycle, p.maxCycle())
	}
	// Split: idle long enough for any window to forget (two cycles), then
	// half the burst, idle half a cycle, the rest until refused, and on at
	// twice the rate seen until 1.7 cycles from the first: a log gives
	// back the first half a window after it, a fixed window all of it at
	// its edge, a sliding counter a little at a time.
	if !p.idle(ctx, cycle*22/10) || !p.pauseUntil(ctx, offTheSecond(time.Now())) {
		return errStop
	}
	first := time.Now()
	p.train(ctx, phaseSplit, key, top, int(max((a+1)/2, 1)), func(trainView) bool { return false })
	if !p.pauseUntil(ctx, first.Add(cycle/2)) {
		return cmp.Or(ctx.Err(), errStop)
	}
	p.train(ctx, phaseSplit, key, top, 2*int(a)+10, func(t trainView) bool { return t.refused >= 3 })
	// On past the refusal at twice the rate seen, to see what comes back
	// and when; at half of it when the overload admitted nothing (the
	// limit counts refusals, most likely): sending faster than it lets
	// through would hold it shut and show nothing.
	pace := math.Min(top, math.Max(2*p.rate(), 2))
	if over.admitted == 0 {
		pace = math.Min(top, math.Max(p.rate()/2, 1))
	}
	until := first.Add(cycle * 17 / 10)
	p.train(ctx, phaseSplit, key, pace, p.s.budget(), func(trainView) bool { return time.Now().After(until) })
	if p.opts.KeyHeader != "" {
		p.keyTest(ctx, key, top, a)
	}
	return ctx.Err()
}

// recover sends single requests, further and further apart, until one is
// admitted: nothing came back while the probe kept sending. It returns
// errStop when the deadline comes first: every wait ends by it.
func (p *prober) recover(ctx context.Context, key string, top float64) error {
	gap := 50 * time.Millisecond
	for {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		t := p.train(ctx, phaseRecover, key, top, 1, func(trainView) bool { return true })
		if t.sent == 0 {
			return errStop
		}
		if t.admitted > 0 {
			return nil
		}
		if !p.pauseUntil(ctx, time.Now().Add(gap)) {
			return cmp.Or(ctx.Err(), errStop)
		}
		gap = gap * 3 / 2
	}
}

// pauseUntil sleeps until t, or reports false when ctx ends first or t
// is past the deadline, at once then (nothing can be sent after it): no
// wait of the probe's outlasts its time.
func (p *prober) pauseUntil(ctx context.Context, t time.Time) bool {
	if t.After(p.s.deadline) {
		return false
	}
	return sleepUntil(ctx, t)
}

// keyPairs is how many requests of a fresh key, each followed by one of
// the own, the key test sends.
const keyPairs = 6

// keyTest sends the probe's own key at the top rate until two are refused
// in a row, then, without waiting for the answers still to come (a queue
// would drain meanwhile), a fresh key and the own in turn, keyPairs each:
// if the header keys the limit, the fresh key is admitted (a fresh
// allowance) while the own gets only what refills meanwhile.
func (p *prober) keyTest(ctx context.Context, key string, top float64, a int64) {
	before := len(p.s.observed())
	start, gap := time.Now(), gapAt(top)
	drained := false
	for i := 0; i < 3*int(a)+10 && !drained; i++ {
		if !p.s.send(ctx, phaseDrain, key, start.Add(time.Duration(sat.Mul(int64(i), int64(gap))))) {
			break
		}
		// The answers come while it sends: a refusal answers at once.
		v := view(trainView{}, p.s.observed()[before:], phaseDrain, key)
		drained = v.refusedSinceAdmit >= 2
		for j := 0; j < 20 && !drained && p.s.pending() > 0; j++ {
			time.Sleep(gap / 20)
			v = view(trainView{}, p.s.observed()[before:], phaseDrain, key)
			drained = v.refusedSinceAdmit >= 2
		}
	}
	if drained {
		// Each pair back to back, the fresh value first in one and the
		// own first in the next: what refills between pairs goes to
		// whichever comes first, so a shared limit gives both alike, and
		// only a fresh allowance sets the fresh value apart.
		fresh := NewKey()
		for i := range keyPairs {
			first, second := fresh, key
			if i%2 == 1 {
				first, second = key, fresh
			}
			if !p.s.send(ctx, phaseKey, first, time.Now()) || !p.s.send(ctx, phaseKey, second, time.Now()) {
				break
			}
		}
	}
	p.s.wait()
}

// gapAt is the time between requests at rate per second, saturated: a
// rate too small (or not a number) gives the longest time.Duration, never
// one that wrapped round to negative (1e-300/s sent 1,500 requests in
// 2.5 s).
func gapAt(rate float64) time.Duration {
	g := float64(time.Second) / rate
	if !(g >= 0 && g < math.MaxInt64) {
		return math.MaxInt64
	}
	return time.Duration(g)
}

// offTheSecond is the first instant from now that is half a second past
// a whole second of the wall clock.
func offTheSecond(now time.Time) time.Time {
	next := now.Truncate(time.Second).Add(time.Second / 2)
	if next.Before(now) {
		next = next.Add(time.Second)
	}
	return next
}

// idle waits d, or reports false when the deadline would pass first or
// ctx ends.
func (p *prober) idle(ctx context.Context, d time.Duration) bool {
	return p.pauseUntil(ctx, time.Now().Add(d))
}

// cycle is how long the limit takes to come back whole, from what was
// observed so far: the window estimate, at least 50 ms, at most a fifth
// of the probe's time.
func (p *prober) cycle() time.Duration {
	est, ok := p.estimates()
	d := time.Second
	if ok {
		d = time.Duration(est.window) * time.Microsecond
	}
	return min(max(d, 50*time.Millisecond), p.maxCycle())
}

// maxCycle is the longest cycle the probe waits out: a fifth of its time.
func (p *prober) maxCycle() time.Duration { return p.opts.MaxDuration / 5 }

// rate is the rate estimated so far, per second.
func (p *prober) rate() float64 {
	est, ok := p.estimates()
	if !ok {
		return 1
	}
	return est.rate
}

func (p *prober) estimates() (estimates, bool) {
	obs := p.s.observed()
	sortBySent(obs)
	ds, mine := ownDecisions(obs)
	if !slices.ContainsFunc(ds, func(d decision) bool { return !d.admitted }) {
		return estimates{}, false
	}
	return estimate(ds, mine, p.opts.MaxRate)
}

// trainView is what a train has seen so far, for its stop condition.
type trainView struct {
	started           time.Time
	sent, answered    int
	admitted, refused int
	failed            int // no answer
	other             int // answered neither 2xx nor a refusal (a 400, a 404)
	// firstRun counts the admissions before the train's first refusal;
	// refusedSinceAdmit the refusals since its last admission.
	firstRun          int64
	refusedSinceAdmit int
}

// train sends requests with key at pace (per second) until stop says so,
// n have been sent, or the budget ends; it then waits for their answers
// and returns what it saw.
func (p *prober) train(ctx context.Context, phase, key string, pace float64, n int, stop func(trainView) bool) trainView {
	v := trainView{started: time.Now()}
	before := len(p.s.observed())
	gap := gapAt(pace)
	for i := 0; i < n; i++ {
		if !p.s.send(ctx, phase, key, v.started.Add(time.Duration(sat.Mul(int64(i), int64(gap))))) {
			break
		}
		v.sent++
		v = view(v, p.s.observed()[before:], phase, key)
		// Three failures, or three answers that are neither, before any
		// decision: the probe is not reaching a limiter.
		if stop(v) || (v.failed >= 3 || v.other >= 3) && v.admitted+v.refused == 0 {
			break
		}
	}
	p.s.wait()
	return view(v, p.s.observed()[before:], phase, key)
}

// view counts a train's answers (in the order they were sent).
func view(v trainView, obs []Observation, phase, key string) trainView {
	sortBySent(obs)
	v.answered, v.admitted, v.refused, v.failed, v.firstRun, v.refusedSinceAdmit = 0, 0, 0, 0, 0, 0
	for _, o := range obs {
		if o.Phase != phase || o.Key != key {
			continue
		}
		if o.Status == 0 {
			v.failed++
			continue
		}
		v.answered++
		switch {
		case o.Admitted():
			v.admitted++
			if v.refused == 0 {
				v.firstRun++
			}
			v.refusedSinceAdmit = 0
		case o.Refused():
			v.refused++
			v.refusedSinceAdmit++
		default:
			v.other++
		}
	}
	return v
}
