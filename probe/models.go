package probe

import "math"

// A family is a way of limiting that the analysis can tell from the others
// by the requests it admits. The token bucket and GCRA admit the same
// requests with the same numbers (algorithms/gcra.go: GCRA keeps the token
// bucket's state as one instant), and so does the leaky bucket as a queue
// (algorithms/leakybucket.go: it differs in when it serves, not in what):
// they are one family here, the bucket, which latency then splits.
type family int

const (
	familyBucket       family = iota // token bucket, GCRA, leaky bucket
	familyFixedClock                 // fixed window on multiples of the window since the Unix epoch
	familyFixedFirst                 // fixed window from the key's first hit, the next from the first hit after it ends
	familySlidingClock               // the sliding-window counter on clock-aligned windows
	familySlidingFirst               // the sliding-window counter on periods from the key's first hit (HAProxy's freq_ctr)
	familyLog                        // the sliding log
	familyConcurrency                // a limit on requests in flight
	familyCount
)

// windowed reports whether f's parameters are a limit per window.
func (f family) windowed() bool { return f != familyBucket && f != familyConcurrency }

// clockAligned reports whether f's windows are the clock's.
func (f family) clockAligned() bool { return f == familyFixedClock || f == familySlidingClock }

// candidate is a family with a way of counting refusals: not at all (the
// six ratelim algorithms, nginx's limit_req) or as if admitted (HAProxy's
// http_req_rate, which counts every tracked request before its deny rule
// reads it).
type candidate struct {
	family        family
	countsRefused bool
}

// params are a candidate's numbers: rate (per second) and burst for the
// bucket; limit per window and the window (µs) for the windows; limit
// requests in flight for a concurrency limit.
type params struct {
	rate   float64
	burst  int64
	limit  int64
	window int64
	// margin (µs) is how much sooner than the client saw its answer a
	// request's slot was free at the server: a round trip, the fastest
	// seen (a refused request comes back at once).
	margin int64
}

// model decides requests in the order of their instants (wall-clock µs),
// as a limiter of its candidate would with its params, one key's state.
// remaining is what the limiter has left after the last decision, in
// requests, as an honest RateLimit-Remaining would say it.
type model interface {
	decide(d decision) (admitted bool)
	remaining() int64
}

func newModel(c candidate, p params) model {
	switch c.family {
	case familyBucket:
		return &bucketModel{rate: p.rate, burst: float64(p.burst), tokens: float64(p.burst), counts: c.countsRefused, fresh: true}
	case familyFixedClock, familyFixedFirst:
		return &fixedModel{limit: p.limit, window: p.window, anchored: c.family == familyFixedFirst, counts: c.countsRefused, fresh: true}
	case familySlidingClock, familySlidingFirst:
		return &slidingModel{limit: p.limit, window: p.window, anchored: c.family == familySlidingFirst, counts: c.countsRefused, fresh: true}
	case familyConcurrency:
		return &concurrencyModel{limit: p.limit, margin: p.margin}
	}
	return &logModel{limit: p.limit, window: p.window, counts: c.countsRefused}
}

// bucketModel is the token bucket (algorithms/tokenbucket.go): full at
// first, refilled at rate up to burst, a request admitted if a whole
// token is left. Counting refusals, a refused request empties what is
// left, so that a client sending into a refusal postpones its recovery
// by a whole token's time from its last try.
type bucketModel struct {
	rate, burst, tokens float64
	last                int64
	counts, fresh       bool
}

// tokenEpsilon absorbs float rounding in the refill: a token due at an
// instant is there at that instant.
const tokenEpsilon = 1e-9

func (m *bucketModel) decide(d decision) bool {
	t := d.t
	if !m.fresh && t > m.last {
		m.tokens = math.Min(m.burst, m.tokens+m.rate*float64(t-m.last)/1e6)
	}
	if m.fresh || t > m.last {
		m.last = t
	}
	m.fresh = false
	if m.tokens >= 1-tokenEpsilon {
		m.tokens--
		return true
	}
	if m.counts {
		m.tokens = 0
	}
	return false
}

func (m *bucketModel) remaining() int64 { return int64(math.Max(0, math.Floor(m.tokens+tokenEpsilon))) }

// fixedModel counts requests per window and admits up to limit in each
// (algorithms/fixedwindow.go). Aligned, the windows are the multiples of
// the window since the Unix epoch, as a live ratelim server's are;
// anchored, a window starts at the first request after the last one
// ended (a Redis INCR whose key expires a window after its first hit).
type fixedModel struct {
	limit, window, start, n int64
	anchored, counts, fresh bool
}

func (m *fixedModel) decide(d decision) bool {
	t := d.t
	if m.anchored {
		if m.fresh || t >= m.start+m.window {
			m.start, m.n = t, 0
		}
	} else if s := floorDiv(t, m.window) * m.window; m.fresh || s > m.start {
		m.start, m.n = s, 0
	}
	m.fresh = false
	if m.n < m.limit {
		m.n++
		return true
	}
	if m.counts {
		m.n++
	}
	return false
}

func (m *fixedModel) remaining() int64 { return max(m.limit-m.n, 0) }

// slidingModel is the sliding-window counter (algorithms/slidingwindow.go):
// a request passes if the previous window's count, weighted by how much of
// it the last window still covers, plus the current count and the request
// is at most limit. Aligned, its windows are the clock's; anchored, they
// follow HAProxy's freq_ctr (include/haproxy/freq_ctr.h,
// update_freq_ctr_period and freq_ctr_total): a period starts at the key's
// first hit, the next follows it, and a gap of two periods or more starts
// a new grid at the next hit; the weighted previous count is floored.
type slidingModel struct {
	limit, window, start, n, prev int64
	last                          int64 // the last decision's instant
	anchored, counts, fresh       bool
}

func (m *slidingModel) decide(d decision) bool {
	t := d.t
	switch {
	case m.fresh:
		m.start = t
		if !m.anchored {
			m.start = floorDiv(t, m.window) * m.window
		}
	case t >= m.start+2*m.window:
		m.prev, m.n = 0, 0
		m.start = t
		if !m.anchored {
			m.start = floorDiv(t, m.window) * m.window
		}
	case t >= m.start+m.window:
		m.prev, m.n = m.n, 0
		m.start += m.window
	}
	m.fresh, m.last = false, t
	left := m.start + m.window - t
	weighted := float64(m.prev) * float64(left) / float64(m.window)
	if m.anchored {
		weighted = math.Floor(weighted)
	}
	if weighted+float64(m.n)+1 <= float64(m.limit)+tokenEpsilon {
		m.n++
		return true
	}
	if m.counts {
		m.n++
	}
	return false
}

func (m *slidingModel) remaining() int64 {
	weighted := float64(m.prev) * float64(m.start+m.window-m.last) / float64(m.window)
	return max(m.limit-m.n-int64(math.Ceil(weighted-tokenEpsilon)), 0)
}

// logModel is the sliding log (algorithms/slidinglog.go): a request
// passes if fewer than limit requests were admitted in the window before
// it; counting refusals, every request is logged.
type logModel struct {
	limit, window int64
	times         []int64 // the logged instants, oldest first, from head
	head          int
	counts        bool
}

func (m *logModel) decide(d decision) bool {
	t := d.t
	for m.head < len(m.times) && m.times[m.head] <= t-m.window {
		m.head++
	}
	if m.head > 1024 && m.head*2 > len(m.times) {
		m.times = append(m.times[:0], m.times[m.head:]...)
		m.head = 0
	}
	if int64(len(m.times)-m.head) < m.limit {
		m.times = append(m.times, t)
		return true
	}
	if m.counts {
		m.times = append(m.times, t)
	}
	return false
}

func (m *logModel) remaining() int64 { return max(m.limit-int64(len(m.times)-m.head), 0) }

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// concurrencyModel limits the requests in flight (algorithms/concurrency.go):
// a request is admitted while fewer than limit admitted ones are still
// unanswered, whatever the rate. In flight is as the client saw it, from
// sending to the answer less a round trip (margin): a request that
// arrives as another's answer leaves finds its slot free. Refusals hold
// nothing, counted or not.
type concurrencyModel struct {
	limit, margin int64
	ends          []int64 // when the admitted free their slots, unordered
}

func (m *concurrencyModel) decide(d decision) bool {
	kept := m.ends[:0]
	for _, e := range m.ends {
		if e > d.t {
			kept = append(kept, e)
		}
	}
	m.ends = kept
	if int64(len(m.ends)) < m.limit {
		m.ends = append(m.ends, d.answered-m.margin)
		return true
	}
	return false
}

func (m *concurrencyModel) remaining() int64 { return max(m.limit-int64(len(m.ends)), 0) }
