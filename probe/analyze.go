package probe

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"net/http"
	"slices"
	"sort"
	"time"

	"github.com/ratelim/ratelim/internal/words"
)

// Report is what a probe found, from its observations alone.
type Report struct {
	Target    string `json:"target"`
	KeyHeader string `json:"key_header,omitempty"`
	// Requests counts the requests sent, Answered those that got an
	// HTTP answer; Seconds is from the first send to the last answer.
	Requests int     `json:"requests"`
	Answered int     `json:"answered"`
	Seconds  float64 `json:"seconds"`
	// Limited reports whether any request was refused (429 or 503).
	Limited bool `json:"limited"`
	// Family names what the answers fit best, in words; Families are the
	// ratelim algorithms it may be (several when they admit alike);
	// Algorithm the one the limit block names: a peer model's when one
	// decides as found (haproxy-req-rate: a sliding window from the key's
	// first hit that counts refusals).
	Family    string   `json:"family,omitempty"`
	Families  []string `json:"families,omitempty"`
	Algorithm string   `json:"algorithm,omitempty"`
	// Anchor says where a window's boundaries fall: "clock" (multiples of
	// the window since the Unix epoch) or "first-hit" (from the key's
	// first request); "" for a bucket or a log, which have none.
	Anchor string `json:"anchor,omitempty"`
	// Rate is the sustained rate in requests per second, Burst the
	// bucket's size, Limit and Window a window's count and length; each
	// fitted value with the interval that fits the answers as well.
	Rate      float64    `json:"rate_per_s,omitempty"`
	RateRange [2]float64 `json:"rate_range,omitempty"`
	Burst     int64      `json:"burst,omitempty"`
	Limit     int64      `json:"limit,omitempty"`
	// MaxInFlight is a concurrency limit\'s: the requests it lets be in
	// flight at once.
	MaxInFlight int64    `json:"max_in_flight,omitempty"`
	Window      Duration `json:"window,omitempty"`
	WindowLow   Duration `json:"window_low,omitempty"`
	WindowHigh  Duration `json:"window_high,omitempty"`
	// Queues reports whether admitted requests were held in a queue
	// (their latency grew with the backlog): a leaky bucket.
	Queues     bool    `json:"queues"`
	QueueSlope float64 `json:"queue_slope"`
	// RefusedCounted is "yes", "no" or "unknown": whether a refused
	// request spent quota (sending into a refusal postponed recovery).
	RefusedCounted string `json:"refused_counted"`
	// Decisions are the answers the fit judged; Mismatches those its best
	// model decides otherwise; RunnerUp the best other family and its
	// mismatches.
	Decisions          int            `json:"decisions"`
	Mismatches         int            `json:"mismatches"`
	RunnerUp           string         `json:"runner_up,omitempty"`
	RunnerUpMismatches int            `json:"runner_up_mismatches,omitempty"`
	Confidence         string         `json:"confidence"`
	Key                *KeyFinding    `json:"key,omitempty"`
	Headers            HeaderFindings `json:"headers"`
	// Findings say in sentences what the figures show.
	Findings []string `json:"findings"`

	// exactRate is the fitted rate unrounded (Rate is to 4 digits), for
	// the limit block: 10/m is 0.1667/s rounded, 1667/10000s written.
	exactRate float64
}

// Duration is a time.Duration that marshals as Go writes it ("1.5s").
type Duration time.Duration

func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	*d = Duration(v)
	return err
}

// KeyFinding is what the key test saw: requests with a fresh value of the
// key header, sent while the probe's own key was refused.
type KeyFinding struct {
	Header string `json:"header"`
	// FreshAdmitted and FreshSent count the fresh key's requests;
	// OwnRefused and OwnSent the probe's key's around them.
	FreshSent     int `json:"fresh_sent"`
	FreshAdmitted int `json:"fresh_admitted"`
	OwnSent       int `json:"own_sent"`
	OwnRefused    int `json:"own_refused"`
	// Keyed is "yes" (a fresh value got a fresh allowance while the old
	// one was refused), "no" or "unknown".
	Keyed string `json:"keyed"`
}

// Analyze infers the limiter from a probe's observations. It is a pure
// function of rec: the same observations give the same Report.
func Analyze(rec Recording) Report {
	r, _ := AnalyzeContext(context.Background(), rec)
	return r
}

// AnalyzeContext is Analyze, given up when ctx ends (Ctrl-C): the fit is
// the slow part, seconds for a full budget's observations, and it checks
// ctx between the values it tries. It then returns ctx's error.
func AnalyzeContext(ctx context.Context, rec Recording) (Report, error) {
	r := analyze(ctx, rec)
	return r, ctx.Err()
}

func analyze(ctx context.Context, rec Recording) Report {
	obs := slices.Clone(rec.Obs)
	sortBySent(obs)
	r := Report{Target: rec.Target, KeyHeader: rec.KeyHeader, Requests: len(obs), RefusedCounted: "unknown", Confidence: "none",
		Headers: HeaderFindings{}}
	if len(obs) == 0 {
		r.Findings = append(r.Findings, "No request was sent.")
		return r
	}
	var last int64
	for _, o := range obs {
		if o.Status != 0 {
			r.Answered++
		}
		last = max(last, o.Answered, o.Sent)
	}
	r.Seconds = float64(last-obs[0].Sent) / 1e6
	if n, first := otherStatuses(obs); n > 0 {
		f := fmt.Sprintf("%d of the %d answers were neither 2xx nor a refusal (429, 503); the first was %d %s. The analysis leaves them out.",
			n, r.Answered, first, http.StatusText(first))
		if first == http.StatusBadRequest && rec.KeyHeader == "" {
			f += " An endpoint that wants a key answers 400 without it: name its header with --key-header."
		}
		r.Findings = append(r.Findings, f)
	}
	own := obs[0].Key
	ds, mine := ownDecisions(obs)
	r.Decisions = len(ds)
	r.Key = keyFinding(rec.KeyHeader, obs, own)
	firstRefused := slices.IndexFunc(ds, func(d decision) bool { return !d.admitted })
	if len(ds) == 0 {
		r.Findings = append(r.Findings, "No answer was an admission (2xx) or a refusal (429, 503): nothing to analyse.")
		return r
	}
	if firstRefused < 0 {
		// What was shown, and no more: a bucket of rate r and burst b
		// admits these if r ≥ the rate sent or b + r·T ≥ N.
		// The rate sent is the average, not --max-rate: a sender on a
		// loaded machine falls behind its schedule (93/s of 100/s), and
		// a limit of 100/s was then never reached.
		secs := fmt.Sprintf("%.1f s", r.Seconds)
		sent := rec.MaxRate
		if span := ds[len(ds)-1].t - ds[0].t; len(ds) > 1 && span > 0 {
			sent = math.Min(sent, float64(len(ds)-1)/(float64(span)/1e6))
		}
		r.Findings = append(r.Findings, fmt.Sprintf("No refusal in %s (%s answered 2xx) over %s, sent at %s/s on average (--max-rate %s/s): a limit above %s/s, or one that lets more than %s through in %s (a burst above %s less what it refills meanwhile), or none.",
			words.Count(r.Requests, "request", "requests"), words.Thousands(int64(len(ds))), secs, formatFloat(sent), formatFloat(rec.MaxRate),
			formatFloat(sent), words.Thousands(int64(len(ds))), secs, words.Thousands(int64(len(ds)))))
		return r
	}
	r.Limited = true
	est, ok := estimate(ds, mine, rec.MaxRate)
	if !ok {
		what := fmt.Sprintf("After the first %s admitted, every request was refused", words.Count(firstRefused, "request", "requests"))
		if firstRefused == 0 {
			what = "Every request was refused"
		}
		r.Findings = append(r.Findings, fmt.Sprintf("%s and no recovery was seen in %.1f s: a window longer than the probe, or refused requests counted at the rate sent.",
			what, r.Seconds))
		// The fields are held to what was seen all the same: a
		// Retry-After that named an instant a later request passed,
		// still refused, was early.
		r.Headers = checkHeaders(mine, nil, r)
		r.Findings = append(r.Findings, headerFindings(r.Headers)...)
		return r
	}
	fits := fitAll(ctx, ds, est)
	if ctx.Err() != nil {
		return r
	}
	best := fits[0]
	tol := max(1, len(ds)/200)
	slope := 0.0
	var queueAsInFlight *fit
	if best.candidate.family == familyBucket {
		slope = queueSlope(mine, best)
		if slope >= queueSlopeMin {
			// A queue of burst places is a limit of burst requests in
			// flight, and admits nearly alike; the latencies, growing by
			// one place's time, say which: set the limit in flight aside.
			i := slices.IndexFunc(fits, func(f fit) bool { return f.candidate.family == familyConcurrency })
			if i >= 0 {
				queueAsInFlight = &fits[i]
				fits = slices.Delete(slices.Clone(fits), i, i+1)
			}
		}
	}
	r.Decisions = len(ds)
	tied := map[family]bool{}
	for _, f := range fits {
		if f.fewest <= best.fewest+tol {
			tied[f.candidate.family] = true
		}
	}
	for _, f := range fits {
		if !tied[f.candidate.family] {
			r.RunnerUp, r.RunnerUpMismatches = familyName(f.candidate.family), f.mismatches
			break
		}
	}
	var heldFor time.Duration
	if tied[familyConcurrency] && best.candidate.family != familyConcurrency {
		// A server that holds each request about the same time admits
		// like a window of that length: when the window the rate limits
		// need is that time, a limit on requests in flight explains both.
		if c, held, ok := heldAsLong(fits, best, mine); ok {
			best, heldFor = c, held
		}
	}
	r.Mismatches = best.mismatches
	r.RefusedCounted = refusedCounted(fits, best, tol)
	r.Confidence = confidence(len(ds), best.mismatches, r.RunnerUp != "", r.RunnerUpMismatches)
	p := best.params
	switch best.candidate.family {
	case familyConcurrency:
		r.MaxInFlight = p.limit
		r.Algorithm, r.Families = "concurrency", []string{"concurrency"}
		r.Family = familyName(familyConcurrency)
		r.RefusedCounted = "no"
	case familyBucket:
		r.Rate, r.Burst, r.exactRate = round4(p.rate), p.burst, p.rate
		r.RateRange = [2]float64{round4(best.lo), round4(best.hi)}
		r.QueueSlope = slope
		r.Queues = slope >= queueSlopeMin
		r.Algorithm = "token-bucket"
		r.Families = []string{"token-bucket", "gcra"}
		r.Family = "token bucket or GCRA (the same admissions)"
		if r.Queues {
			r.Algorithm, r.Families = "leaky-bucket", []string{"leaky-bucket"}
			r.Family = "leaky bucket (queues: admitted answers are held)"
		}
	default:
		r.Limit, r.Window = p.limit, Duration(time.Duration(p.window)*time.Microsecond)
		r.WindowLow, r.WindowHigh = Duration(time.Duration(best.lo)*time.Microsecond), Duration(time.Duration(best.hi)*time.Microsecond)
		r.Rate = round4(float64(p.limit) / (float64(p.window) / 1e6))
		r.RateRange = [2]float64{round4(float64(p.limit) / (best.hi / 1e6)), round4(float64(p.limit) / (best.lo / 1e6))}
		r.Algorithm = algorithmOf(best.candidate.family)
		r.Families = []string{r.Algorithm}
		r.Family = familyName(best.candidate.family)
		switch best.candidate.family {
		case familyFixedClock, familySlidingClock:
			r.Anchor = "clock"
		case familyFixedFirst, familySlidingFirst:
			r.Anchor = "first-hit"
		}
		if best.candidate == (candidate{family: familySlidingFirst, countsRefused: true}) {
			// HAProxy's http_req_rate, which ratelim models as a peer
			// (algorithms/peers: haproxy-req-rate): the limit block names it.
			r.Algorithm = "haproxy-req-rate"
			r.Families = append(r.Families, r.Algorithm)
		}
	}
	var others []string
	for f := range familyCount {
		if tied[f] && f != best.candidate.family {
			others = append(others, familyName(f))
		}
	}
	if len(others) > 0 {
		sort.Strings(others)
		r.Confidence = "low"
		for _, o := range others {
			r.Families = append(r.Families, algorithmOf(familyOf(o)))
		}
		r.Findings = append(r.Findings, fmt.Sprintf("The answers fit %s as well (within %d %s): the probe could not tell them apart.", joinWords(others), tol, plural(tol, "decision", "decisions")))
	}
	// A value the answers pin only to a wide range is not known well,
	// however few decisions the best of it gets wrong: 10 per 10 s on
	// the clock fitted as well as 10 per 5 s, and was graded high.
	if spread := rangeSpread(r); spread > 0.25 {
		r.Confidence = "low"
	} else if spread > 0.05 && r.Confidence == "high" {
		r.Confidence = "medium"
	}
	r.Headers = checkHeaders(mine, &best, r)
	if heldFor > 0 {
		r.Findings = append(r.Findings, fmt.Sprintf("A rate limit would need a window of about %s, the time each admitted request was held (median %s): a limit on requests in flight explains both, and is named.",
			(time.Duration(fits[0].params.window)*time.Microsecond).Round(time.Millisecond), heldFor.Round(time.Millisecond)))
	}
	r.Findings = append(r.Findings, findings(r, best, est)...)
	if q := queueAsInFlight; q != nil && q.mismatches != math.MaxInt {
		r.Findings = append(r.Findings, fmt.Sprintf("A limit of %d requests in flight decides %d of the answers as they were decided, too: a queue is such a limit, each place held until served. That the admitted answers came back a place's time apart says it is a queue drained at the rate.",
			q.params.limit, r.Decisions-q.mismatches))
	}
	return r
}

// rangeSpread is how much wider than its low end the fitted range of the
// continuous parameter is (0.1: 10% wider): the rate's for a bucket, the
// window's for the windows.
func rangeSpread(r Report) float64 {
	lo, hi := r.RateRange[0], r.RateRange[1]
	if r.Limit > 0 {
		lo, hi = float64(r.WindowLow), float64(r.WindowHigh)
	}
	if !(lo > 0 && hi >= lo) {
		return 0
	}
	return hi/lo - 1
}

// otherStatuses counts the answers that are neither admissions nor
// refusals, and gives the first one's status.
func otherStatuses(obs []Observation) (n, first int) {
	for _, o := range obs {
		if o.Status != 0 && !o.Admitted() && !o.Refused() {
			if n == 0 {
				first = o.Status
			}
			n++
		}
	}
	return n, first
}

// sortBySent orders observations by the instant they were sent, then by
// their sequence numbers.
func sortBySent(obs []Observation) {
	slices.SortStableFunc(obs, func(a, b Observation) int { return cmp.Or(cmp.Compare(a.Sent, b.Sent), cmp.Compare(a.Seq, b.Seq)) })
}

// ownDecisions are the answered requests of the probe's own key (the
// first request's) that the limiter decided, admitted or refused, in the
// order sent (obs is sorted by sortBySent), as decisions and as they were
// observed.
func ownDecisions(obs []Observation) ([]decision, []Observation) {
	var ds []decision
	var mine []Observation
	for _, o := range obs {
		if o.Key != obs[0].Key || !o.Admitted() && !o.Refused() {
			continue
		}
		ds = append(ds, decision{t: o.Sent, answered: o.Answered, admitted: o.Admitted()})
		mine = append(mine, o)
	}
	return ds, mine
}

// estimates are the first rough figures the fit searches around: the
// requests admitted before the first refusal, the rate the limiter let
// through while the probe kept sending, and a window's length guessed two
// ways.
type estimates struct {
	firstRun int64
	// firstSpan is the time (µs) over which the first run was sent.
	firstSpan int64
	rate      float64 // per second
	window    float64 // µs
}

// estimate reads the rough figures from the decisions. ok is false when
// nothing was admitted after the first refusal: there is no rate to see.
func estimate(ds []decision, mine []Observation, maxRate float64) (estimates, bool) {
	first := slices.IndexFunc(ds, func(d decision) bool { return !d.admitted })
	e := estimates{firstRun: int64(first)}
	if first > 0 {
		e.firstSpan = ds[first-1].t - ds[0].t
	}
	// The rate while overloaded: admissions after the first refusal, in
	// the probe's first continuous train, over its span.
	var after int
	end := ds[first].t
	longestGap, gapStart := int64(0), ds[first].t
	for i := first; i < len(ds); i++ {
		if mine[i].Phase != phaseBurst && mine[i].Phase != phaseOverload {
			break
		}
		end = ds[i].t
		if ds[i].admitted {
			after++
			longestGap = max(longestGap, ds[i].t-gapStart)
			gapStart = math.MaxInt64
		} else if gapStart == math.MaxInt64 {
			gapStart = ds[i].t
		}
	}
	if after > 0 && end > ds[first].t {
		e.rate = float64(after) / (float64(end-ds[first].t) / 1e6)
	} else {
		// Nothing came back while the probe kept sending: the first
		// admission after the first refusal, however late, bounds it.
		// Measured from the last request of the train: a limit that
		// counts refusals recovers from there.
		next := slices.IndexFunc(ds[first:], func(d decision) bool { return d.admitted })
		if next < 0 {
			return e, false
		}
		gap := ds[first+next].t - end
		e.rate = float64(max(first, 1)) / (float64(max(gap, 1)) / 1e6)
		longestGap = gap
	}
	byRate := float64(max(first, 1)) / e.rate * 1e6
	byGap := float64(longestGap) + float64(first)/math.Max(maxRate, 1)*1e6
	e.window = math.Sqrt(byRate * math.Max(byGap, byRate/4))
	return e, true
}

// fitAll fits every candidate, best first: fewest mismatches, then the
// simpler family (the order of the constants), then refusals not
// counted.
func fitAll(ctx context.Context, ds []decision, e estimates) []fit {
	a := e.firstRun
	// The first run is the burst and what refilled while it was sent: at
	// the rate estimated, the burst may be well under half of it (50/s
	// burst 500 probed at ~94/s: 1,070).
	refilled := int64(math.Min(e.rate*float64(e.firstSpan)/1e6*1.1, float64(a)))
	buckets := discreteRange(min(a/2, a-refilled)-2, a+2, 60)
	// A burst that crossed a window's edge was admitted by two windows:
	// the limit may be as low as half of it.
	windows := discreteRange(a/2-2, a+3, 60)
	rateSeeds := impliedRates(ds)
	var fits []fit
	for f := range familyCount {
		for _, counts := range []bool{false, true} {
			c := candidate{family: f, countsRefused: counts}
			if f == familyConcurrency {
				if !counts { // a refusal holds nothing in flight: one way only
					fits = append(fits, fitConcurrency(ds, a))
				}
				continue
			}
			if f.windowed() {
				fits = append(fits, fitCandidate(ctx, c, ds, windows, e.window, nil))
			} else {
				fits = append(fits, fitCandidate(ctx, c, ds, buckets, e.rate, rateSeeds))
			}
		}
	}
	slices.SortStableFunc(fits, func(x, y fit) int { return cmp.Compare(x.fewest, y.fewest) })
	return fits
}

// impliedRates are the rates the gaps between admissions imply: each run
// of admissions after a refusal is what refilled since the admission
// before it, so its length over that time is near the rate (a bucket's,
// until it is full again). The median and quartiles of those are where
// the fit looks closely: a slow limit's estimate from the first recovery
// alone may be far off (30/m burst 5: 7.4/s).
func impliedRates(ds []decision) []float64 {
	var rates []float64
	emptied := int64(-1) // the last admission before a refusal: the bucket empty
	for i := 0; i < len(ds); {
		if !ds[i].admitted {
			i++
			continue
		}
		start := i
		for i < len(ds) && ds[i].admitted {
			i++
		}
		if emptied >= 0 && ds[start].t > emptied {
			rates = append(rates, float64(i-start)/(float64(ds[start].t-emptied)/1e6))
		}
		emptied = ds[i-1].t
	}
	if len(rates) == 0 {
		return nil
	}
	slices.Sort(rates)
	return []float64{rates[len(rates)/4], rates[len(rates)/2], rates[len(rates)*3/4]}
}

// heldAsLong returns the concurrency fit and the median time admitted
// requests were held, when the best fit's window (a bucket's: burst ÷
// rate) is within 15% of that time.
func heldAsLong(fits []fit, best fit, mine []Observation) (fit, time.Duration, bool) {
	var held []int64
	for _, o := range mine {
		if o.Admitted() {
			held = append(held, o.Answered-o.Sent)
		}
	}
	if len(held) == 0 {
		return fit{}, 0, false
	}
	slices.Sort(held)
	median := float64(held[len(held)/2])
	window := float64(best.params.window)
	if best.candidate.family == familyBucket {
		window = float64(best.params.burst) / best.params.rate * 1e6
	}
	if math.Abs(window-median) > 0.15*median {
		return fit{}, 0, false
	}
	for _, f := range fits {
		if f.candidate.family == familyConcurrency {
			return f, time.Duration(median) * time.Microsecond, true
		}
	}
	return fit{}, 0, false
}

// fitConcurrency fits a limit on requests in flight: each limit from 1 to
// a few past the first run of admissions.
func fitConcurrency(ds []decision, firstRun int64) fit {
	c := candidate{family: familyConcurrency}
	best := fit{candidate: c, mismatches: math.MaxInt, fewest: math.MaxInt}
	margin := concurrencyMargin(ds)
	for k := int64(1); k <= firstRun+3; k++ {
		p := params{limit: k, margin: margin}
		if w := mismatches(c, p, ds, min(best.mismatches, len(ds))); w < best.mismatches {
			best = fit{candidate: c, params: p, mismatches: w, fewest: w, lo: float64(k), hi: float64(k)}
		}
	}
	return best
}

// concurrencyMargin is how far a fit of requests in flight lets a
// request's instants move. The slot a request held is free a little
// before its answer is seen, and a request arrives a little after its
// recorded dispatch (it leaves on a goroutine of its own, late on a
// loaded machine): a millisecond and two refusals' round trips, at most
// a quarter of the time an admitted request was held.
func concurrencyMargin(ds []decision) int64 {
	var refused, admitted []int64
	for _, d := range ds {
		if d.admitted {
			admitted = append(admitted, d.answered-d.t)
		} else {
			refused = append(refused, d.answered-d.t)
		}
	}
	margin := int64(1000)
	if len(refused) > 0 {
		slices.Sort(refused)
		margin += 2 * max(refused[len(refused)/2], 0)
	}
	if len(admitted) > 0 {
		slices.Sort(admitted)
		margin = min(margin, admitted[len(admitted)/2]/4)
	}
	return margin
}

// refusedCounted says whether the best family fits better counting
// refusals or not; "unknown" when both fit within tol.
func refusedCounted(fits []fit, best fit, tol int) string {
	for _, f := range fits {
		if f.candidate.family == best.candidate.family && f.candidate.countsRefused != best.candidate.countsRefused {
			if f.fewest <= best.fewest+tol {
				return "unknown"
			}
		}
	}
	if best.candidate.countsRefused {
		return "yes"
	}
	return "no"
}

// confidence grades the family found: high when its model gets at most 2%
// of the decisions wrong and every other family at least 5% more (and at
// least 5 decisions) wrong; medium with a margin of 3; low otherwise.
func confidence(n, wrong int, hasRunnerUp bool, runnerUp int) string {
	margin := math.MaxInt
	if hasRunnerUp {
		margin = runnerUp - wrong
	}
	switch {
	case wrong*50 <= n && margin >= max(5, n/20):
		return "high"
	case margin >= 3 && wrong*20 <= n:
		return "medium"
	}
	return "low"
}

// queueSlopeMin is the slope of latency on backlog at which admitted
// answers are taken to be held in a queue: half what a queue gives.
const queueSlopeMin = 0.5

// queueSlope measures whether admitted answers were held: the slope of
// each admitted request's extra latency (over the fastest refusal's) on
// the delay a leaky bucket of the fitted numbers would give it, backlog ÷
// rate. About 1 for a queue, about 0 for a bucket that answers at once; 0
// when the fit predicts no delay worth measuring (under 20 ms).
func queueSlope(mine []Observation, best fit) float64 {
	base := int64(math.MaxInt64)
	for _, o := range mine {
		if o.Refused() {
			base = min(base, o.Answered-o.Sent)
		}
	}
	if base == math.MaxInt64 {
		return 0
	}
	m := newModel(candidate{family: familyBucket}, best.params).(*bucketModel)
	var sxy, sxx, most float64
	for _, o := range mine {
		m.decide(decision{t: o.Sent, answered: o.Answered})
		if !o.Admitted() {
			continue
		}
		// The backlog ahead of it: the tokens missing before it took one.
		predicted := (m.burst - (m.tokens + 1)) / m.rate // seconds
		if predicted <= 0 {
			continue
		}
		extra := float64(o.Answered-o.Sent-base) / 1e6
		sxy += extra * predicted
		sxx += predicted * predicted
		most = math.Max(most, predicted)
	}
	if most < 0.020 || sxx == 0 {
		return 0
	}
	return round4(sxy / sxx)
}

// keyFinding reads the key test: requests with a fresh key value sent
// while the probe's own key was being refused.
func keyFinding(header string, obs []Observation, own string) *KeyFinding {
	if header == "" {
		return nil
	}
	k := &KeyFinding{Header: header, Keyed: "unknown"}
	for _, o := range obs {
		if o.Phase != phaseKey {
			continue
		}
		if o.Key == own {
			k.OwnSent++
			if o.Refused() {
				k.OwnRefused++
			}
		} else {
			k.FreshSent++
			if o.Admitted() {
				k.FreshAdmitted++
			}
		}
	}
	// The own key wins back what refills while the test runs; a fresh
	// allowance is at least three of the fresh key's requests admitted,
	// two more than the own's. No more of the fresh key's admitted than
	// the own's: they share one limit.
	ownAdmitted := k.OwnSent - k.OwnRefused
	switch {
	case k.FreshSent == 0 || k.OwnSent == 0:
	case k.FreshAdmitted >= 3 && k.FreshAdmitted >= ownAdmitted+2:
		k.Keyed = "yes"
	case k.FreshAdmitted <= ownAdmitted:
		k.Keyed = "no"
	}
	return k
}

func familyName(f family) string {
	switch f {
	case familyBucket:
		return "token bucket or GCRA"
	case familyFixedClock:
		return "fixed window, aligned to the clock"
	case familyFixedFirst:
		return "fixed window, anchored at the key's first hit"
	case familySlidingClock:
		return "sliding window (two weighted windows), aligned to the clock"
	case familySlidingFirst:
		return "sliding window (two weighted windows), anchored at the key's first hit"
	case familyConcurrency:
		return "concurrency limit (requests in flight)"
	}
	return "sliding log"
}

func familyOf(name string) family {
	for f := range familyCount {
		if familyName(f) == name {
			return f
		}
	}
	return familyLog
}

func algorithmOf(f family) string {
	switch f {
	case familyBucket:
		return "token-bucket"
	case familyFixedClock, familyFixedFirst:
		return "fixed-window"
	case familySlidingClock, familySlidingFirst:
		return "sliding-window"
	case familyConcurrency:
		return "concurrency"
	}
	return "sliding-log"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func round4(x float64) float64 {
	if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return 0
	}
	scale := math.Pow(10, 4-math.Ceil(math.Log10(math.Abs(x))))
	return math.Round(x*scale) / scale
}

func formatFloat(x float64) string { return fmt.Sprintf("%g", round4(x)) }

func joinWords(s []string) string {
	switch len(s) {
	case 0:
		return ""
	case 1:
		return s[0]
	}
	out := s[0]
	for _, w := range s[1 : len(s)-1] {
		out += ", " + w
	}
	return out + " and " + s[len(s)-1]
}
