package peers

import (
	"fmt"
	"math"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/algorithms/internal/exact"
)

// HAProxyReqRate models HAProxy's usual per-key request rate limit,
//
//	frontend fe
//	    stick-table type string len 64 size 100k expire 30s store http_req_rate(10s)
//	    http-request track-sc0 req.hdr(X-Api-Key)
//	    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 20 }
//
// with the limit N of `gt N` as Rate × Window and the period P of
// http_req_rate(P) as Window (2/s over 10s is the config above). It
// reproduces haproxy 2.6.12 as Debian ships it (2.6.12-1+deb12u4). The
// line numbers below are of tag v2.6.0, the only 2.6 tag the source mirror
// has: the 2.6.1 to 2.6.12 changelog touches no freq_ctr, http_req_rate,
// track-sc or clock code, only stick-table purging and races, and Debian's
// patches are CVE fixes elsewhere. A replay of 305 answers of the real
// 2.6.12 agrees with the model on every one (TestHAProxyReplaysRealAnswers),
// and so does a live haproxy on loopback fed by `ratelim load`, gt 20 over
// 10s and gt 5 over 2s (live/haproxy_test.go).
//
// Each key's counter is a struct freq_ctr (include/haproxy/freq_ctr-t.h):
// curr_tick, the start of the current period in ms, and curr_ctr and
// prev_ctr, the hits of this period and of the last one, all uint32. A new
// table entry is zeroed (__stksess_init, src/stick_table.c). The track-sc0
// rule (http_action_track_sc, src/http_act.c:2001-2081) finds or creates the
// key's entry and counts the request at once, update_freq_ctr_period(+1)
// (include/haproxy/freq_ctr.h:38-75):
//
//	if now - curr_tick < P               (uint32)
//	    curr += 1                        the same period
//	else
//	    prev = curr; curr = 1; tick = curr_tick + P
//	    if now - tick >= P               "we missed at least two periods"
//	        prev = 0; tick = now
//	    curr_tick = tick & ~1            bit 0 is the rotation's lock
//
// So a key's periods start at its first hit, not on the clock, and move on
// by whole periods while it is busy: a hit in the period after the current
// one rotates (prev takes the count that ended), and a hit 2P or more after
// the current period's start starts a new grid at itself. The start is
// rounded down to an even ms. The next rule reads the rate with
// smp_fetch_sc_http_req_rate (src/stick_table.c:3846-3879), that is
// read_freq_ctr_period (freq_ctr.h:99-104) over freq_ctr_total
// (src/freq_ctr.c:27-97) with pend = -1:
//
//	remain = curr_tick + P - now         (int, ms)
//	if remain < 0                        the period is over, not yet rotated
//	    remain += P; past = remain >= 0 ? curr : 0; curr = 0
//	if curr == 0 && past <= 1            the "flapping correction"
//	    rate = past
//	else
//	    rate = (past × remain + curr × P) / P      rounded down
//
// the classic sliding-window estimate, the previous period weighted by the
// share of this one still to run, and the request is denied if rate > N.
// The read comes after the count: the rate includes the request itself, so
// the (N+1)th of a burst is the first refused. Refused requests stay
// counted: they fill prev_ctr as well, so a client that keeps sending more
// than N per P is refused for as long as it does, not only until the
// period ends. After 21 at once and then one a second (N = 20, P = 10s),
// the key passes again at 16 s, where the exact sliding window lets it
// through at 11 s.
//
// Parameters. http_req_rate's period is parsed by parse_time_err
// (src/tools.c:2410-2494) in whole ms, rounded up, and refused at 2^31 ms
// or more (PARSE_TIME_OVER): the model wants Window a whole number of ms
// below 2^31. It also wants it even and at least 2 ms, which haproxy does
// not check: the start's even rounding makes an odd period move its grid
// 1 ms back at each turn (tick + P is odd) and lets two turns happen in one
// ms, and a 1 ms period turns at every hit of an odd ms and never counts
// past 1. (A period of 0 parses, and divides by zero at the first read:
// haproxy 2.6.12 dies of SIGFPE at the first request it tracks.)
// N is compared with a uint32 rate, which never exceeds 2^32 − 1, so the
// model wants N below it.
//
// Clock. haproxy's clock is global_now_ms (src/clock.c:31), the Unix time in
// ms truncated to a uint32 at start (clock_init_process_date, clock.c:249)
// and kept monotonic after (a wall clock stepped while it runs moves it by
// an offset); it is read once per event-loop pass. The model floors
// Origin + now to the ms, as nginx-limit-req does, and so takes haproxy's
// clock to be the Unix ms at Origin + now: the even start depends on the
// absolute ms's parity (a uint32 wraps at an even count, so the parity is
// the Unix ms's), which is why Origin matters here, and 2026-12-01's is what
// a scenario gets by default. In the simulator one ms holds every request
// of one instant; a real haproxy may put two requests 1 µs apart in
// different ms, or two 1 ms apart of its clients' clocks in the same pass.
//
// The uint32 wrap (every 49.7 days, 2^32 ms) is reproduced where it shows:
// a new entry has curr_tick 0, so a key first hit less than P after a wrap
// counts in the period that started at the wrap, and one first hit
// between P and 2P after it in the period that started P after it, not at
// its own hit. Elsewhere the model keeps the start as a full int64 ms, and
// takes a key idle 2P or more (or a clock stepped back before its start,
// which haproxy's monotonic clock never is) as a new entry: haproxy's
// re-anchoring gives the same state, except within 2P after a wrap for an
// entry its expire has not freed yet. The expire is left out: with expire
// ≥ 2P (30s for P ≤ 15s) an entry it frees has been idle over 2P and would
// have started afresh anyway; a shorter expire frees keys the model keeps.
// size 100k (the oldest entries evicted when full) is left out too, and
// the 64-byte key truncation is the caller's.
//
// Cost. haproxy counts one HTTP request at a time. A cost c is c requests
// at the same ms, each counted, so the first ones may pass and the later
// ones be refused: the model's request is Allowed only if all c would pass
// (the rate after the last is at most N), and all c are counted either way.
// A cost above N can never pass: RetryAfter [algorithms.Never]. Cost 0 peeks:
// it reads the rate as `show table` would and counts nothing, as a request
// without the header, which is not tracked and never denied. The counters
// are uint32 in haproxy and wrap after 2^32 hits in one period; the model
// saturates there instead (4.3 billion requests in one period).
//
// Decision. haproxy sends a bare 429: no Retry-After, no RateLimit
// headers. The model derives them. Limit is N. Remaining is how many more
// unit requests the same ms would pass. RetryAfter is the earliest instant
// (the start of an ms of haproxy's clock) at which the same request would
// pass if nothing else arrived, its own hits counted. ResetAfter is when a
// hit would start afresh, 2P after the current period's start: the first
// instant the key decides as one never seen.
//
// State: T is curr_tick as an instant (its ms × 1000 − Origin, µs), N is
// curr_ctr and Prev is prev_ctr. curr_ctr is at least 1 once a key has been
// hit, so N = 0 is the new entry (the zero State). Like the other peers it
// is no [algorithms.Charger]: haproxy has no way to count a request another
// server decided: its peers section sends a key's whole freq_ctr
// (src/peers.c, peer_prepare_updatemsg), not hits to add.
//
// The zero HAProxyReqRate has no period: it refuses every request of positive
// cost, as unbuilt limiters do. Build one with [NewHAProxyReqRate].
type HAProxyReqRate struct {
	p      algorithms.Params
	period int64 // P: http_req_rate(<period>), ms; even, 2 ≤ P < 2^31
	limit  int64 // N of `gt N`: Rate × Window, below 2^32 − 1
	origin int64 // Params.Origin in µs
}

// maxUint32 is where haproxy's uint32 counters and rate stop: the model
// saturates at it where haproxy would wrap.
const maxUint32 = math.MaxUint32

// NewHAProxyReqRate returns the model of `store http_req_rate(<p.Window>)`
// with `deny if { sc_http_req_rate(0) gt N }`, N = p.Rate × p.Window rounded
// down. It reads p.Rate, p.Window and p.Origin.
func NewHAProxyReqRate(p algorithms.Params) (*HAProxyReqRate, error) {
	_, limit, err := algorithms.WindowLimit(p.Rate, p.Window)
	if err != nil {
		return nil, err
	}
	ms := p.Window / time.Millisecond
	switch {
	case p.Window%time.Millisecond != 0:
		return nil, &algorithms.ParamError{Param: "window", Msg: fmt.Sprintf("%s is not a whole number of ms; haproxy's http_req_rate(<period>) is in ms (want e.g. %s)", p.Window, (ms+1)*time.Millisecond)}
	case ms < 2:
		return nil, &algorithms.ParamError{Param: "window", Msg: fmt.Sprintf("%s is too short: haproxy keeps a period's start on an even ms, so a 1ms period starts again at every hit of an odd ms and never counts past 1 (want at least 2ms)", p.Window)}
	case ms >= 1<<31:
		return nil, &algorithms.ParamError{Param: "window", Msg: fmt.Sprintf("%s is too long: haproxy refuses a timer of 2^31 ms or more (want at most 2147483646ms, about 24.8 days)", p.Window)}
	case ms%2 != 0:
		return nil, &algorithms.ParamError{Param: "window", Msg: fmt.Sprintf("%s is an odd number of ms: haproxy rounds a period's start down to an even ms, so an odd period moves its grid 1 ms back at each turn, which the model does not reproduce (want an even number of ms, e.g. %s)", p.Window, p.Window+time.Millisecond)}
	}
	if limit >= maxUint32 {
		return nil, &algorithms.ParamError{Param: "rate", Msg: fmt.Sprintf("%s over %s is %d, which haproxy's rate, a uint32, can never exceed (want at most 4294967294 a window)", p.Rate, p.Window, limit)}
	}
	return &HAProxyReqRate{
		p:      algorithms.Params{Rate: p.Rate, Window: p.Window, Origin: p.Origin},
		period: int64(ms),
		limit:  limit,
		origin: int64(p.Origin),
	}, nil
}

// Name returns "haproxy-req-rate".
func (h *HAProxyReqRate) Name() string { return "haproxy-req-rate" }

// Params returns the rate, window and origin.
func (h *HAProxyReqRate) Params() algorithms.Params { return onlyRead(h.p, "window") }

// Limit returns N, the `gt N` threshold.
func (h *HAProxyReqRate) Limit() int64 { return h.limit }

// Rate returns what sc_http_req_rate(0) reads for a key in state st at now
// with no request counted: the figure `show table` prints.
func (h *HAProxyReqRate) Rate(st algorithms.State, now algorithms.Time) int64 {
	if h.period == 0 {
		return 0
	}
	nowMs := h.ms(now)
	return h.read(h.counter(st), nowMs)
}

// freqCtr is a key's struct freq_ctr with its curr_tick as a full int64 ms
// on haproxy's clock (Unix ms); the uint32 haproxy keeps is its low 32
// bits. curr = 0 is a new entry, whose curr_tick is 0.
type freqCtr struct {
	tick       int64 // curr_tick: the current period's start, an even ms
	curr, prev int64 // curr_ctr, prev_ctr: at most maxUint32
}

func (h *HAProxyReqRate) counter(st algorithms.State) freqCtr {
	if st.N == 0 {
		return freqCtr{}
	}
	return freqCtr{tick: exact.FloorDiv(h.origin+st.T, 1000), curr: st.N, prev: st.Prev}
}

func (h *HAProxyReqRate) state(c freqCtr) algorithms.State {
	return algorithms.State{T: c.tick*1000 - h.origin, N: c.curr, Prev: c.prev}
}

// ms is haproxy's global_now_ms at now, as a full int64: Origin + now
// floored to the ms.
func (h *HAProxyReqRate) ms(now algorithms.Time) int64 {
	return exact.FloorDiv(h.origin+int64(now), 1000)
}

// live returns c as a hit at nowMs finds it: a new entry if its period
// started 2P or more before nowMs, or after it (see the type's doc).
func (h *HAProxyReqRate) live(c freqCtr, nowMs int64) freqCtr {
	if c.curr == 0 {
		return freqCtr{}
	}
	if d := nowMs - c.tick; d < 0 || d >= 2*h.period {
		return freqCtr{}
	}
	return c
}

// hit is update_freq_ctr_period(c, P, 1) at nowMs, for a c from live.
func (h *HAProxyReqRate) hit(c freqCtr, nowMs int64) freqCtr {
	p := h.period
	if c.curr == 0 {
		// A new entry: curr_tick is 0 and now − 0 is the uint32 ms
		// since the clock last wrapped.
		now32 := int64(uint32(nowMs))
		switch {
		case now32 < p: // the same period as tick 0
			return freqCtr{tick: nowMs - now32, curr: 1}
		case now32 < 2*p: // one rotation: tick 0 + P, not two periods missed
			return freqCtr{tick: nowMs - now32 + p, curr: 1}
		}
		return freqCtr{tick: nowMs &^ 1, curr: 1} // two or more missed: tick = now & ~1
	}
	if nowMs-c.tick < p {
		c.curr = min(c.curr+1, maxUint32)
		return c
	}
	// The next period (live has ruled out two or more): P is even, so
	// tick + P is already even.
	return freqCtr{tick: c.tick + p, curr: 1, prev: c.curr}
}

// read is read_freq_ctr_period(c, P) at nowMs: freq_ctr_total with pend = -1
// divided by P. A read does not rotate: 2P or more after the period's
// start it reads 0 (or, at exactly 2P, the flapping correction's curr ≤ 1),
// as haproxy's does. Before the period's start (a clock stepped back) it
// reads 0, as the new entry the next hit would find.
func (h *HAProxyReqRate) read(c freqCtr, nowMs int64) int64 {
	if c.curr == 0 && c.prev == 0 || nowMs < c.tick {
		return 0
	}
	p := h.period
	remain := c.tick + p - nowMs
	curr, past := c.curr, c.prev
	if remain < 0 {
		remain += p
		past = curr
		if remain < 0 {
			past = 0
		}
		curr = 0
	}
	if curr == 0 && past <= 1 {
		return past // the flapping correction
	}
	// past × remain < 2^32 × 2^31; haproxy truncates a quotient over
	// 2^32 − 1 to 32 bits, the model saturates.
	return min(curr+past*remain/p, maxUint32)
}

// take is cost hits at nowMs: the counter after them and the rate the last
// one reads.
func (h *HAProxyReqRate) take(c freqCtr, nowMs, cost int64) (freqCtr, int64) {
	c = h.hit(h.live(c, nowMs), nowMs)
	// The first hit leaves nowMs in the current period (P ≥ 2), so the
	// others only add to curr_ctr.
	c.curr += min(cost-1, maxUint32-c.curr)
	return c, h.read(c, nowMs)
}

// Step is cost requests through track-sc0 and the deny rule at now, or a
// read of sc_http_req_rate for a cost of 0.
func (h *HAProxyReqRate) Step(prev algorithms.State, now algorithms.Time, cost int64) (algorithms.State, algorithms.Decision) {
	if h.period == 0 { // the zero value: NewHAProxyReqRate never builds one
		return algorithms.Unbuilt(prev, cost)
	}
	cost = algorithms.CleanCost(cost)
	wall := h.origin + int64(now)
	nowMs := h.ms(now)
	c := h.live(h.counter(prev), nowMs)
	d := algorithms.Decision{Limit: h.limit}
	if cost == 0 {
		d.Allowed = true
		d.Remaining = h.remaining(c, nowMs)
		if c.curr != 0 {
			d.ResetAfter = exact.Micros((c.tick+2*h.period)*1000 - wall)
		}
		return prev, d
	}
	next, rate := h.take(c, nowMs, cost)
	d.Allowed = rate <= h.limit
	d.Remaining = h.remaining(next, nowMs)
	d.ResetAfter = exact.Micros((next.tick+2*h.period)*1000 - wall)
	if !d.Allowed {
		d.RetryAfter = algorithms.Never
		if cost <= h.limit {
			d.RetryAfter = exact.Micros(h.passesAt(next, nowMs, cost)*1000 - wall)
		}
	}
	return h.state(next), d
}

// remaining is how many unit requests at nowMs would pass one after the
// other on c: each adds 1 to the rate the next one reads.
func (h *HAProxyReqRate) remaining(c freqCtr, nowMs int64) int64 {
	_, rate := h.take(c, nowMs, 1)
	return max(h.limit-rate+1, 0)
}

// passesAt returns the first ms after nowMs at which cost requests on c,
// with nothing in between, would all pass, for a c just hit at nowMs and a
// cost of at most N. The rate they read falls as the ms goes on (within
// the period, past's weight; across the turn, curr becomes past at full
// weight, which is what it added before; from 2P, a new entry), so the
// first such ms is found by bisection; at the start plus 2P, a new entry,
// it reads cost ≤ N.
func (h *HAProxyReqRate) passesAt(c freqCtr, nowMs, cost int64) int64 {
	lo, hi := nowMs+1, c.tick+2*h.period
	for lo < hi {
		mid := lo + (hi-lo)/2
		if _, rate := h.take(c, mid, cost); rate <= h.limit {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}
