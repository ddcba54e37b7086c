package peers

import (
	"fmt"
	"math"
	"math/bits"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/algorithms/internal/exact"
)

// NginxLimitReq models nginx's limit_req (ngx_http_limit_req_module), the
// limiter most sites meet first:
//
//	limit_req_zone $binary_remote_addr zone=one:10m rate=10r/s;
//	limit_req zone=one burst=5 [nodelay | delay=3];
//
// It is a leaky bucket kept in integers, as
// src/http/modules/ngx_http_limit_req_module.c of nginx release-1.31.4 does
// it (the file is unchanged since 2021 and on master at 3f6f7824). Each key
// (a node in the zone's shared memory) keeps two numbers: last, the
// millisecond of its last accounted request, and excess, how far it is
// ahead of the rate, in thousandths of a request. The zone's rate is in
// thousandths of a request per second, parsed by ngx_http_limit_req_zone as
// rate × 1000 / scale with scale 1 for r/s and 60 for r/m, in integers:
// 10r/s is 10000, 100r/m is 100000/60 = 1666 (not 1666.67) and 1r/m is 16,
// a request every 62.5 s instead of 60 s. burst and delay are × 1000 too.
//
// A request on a known key, in ngx_http_limit_req_lookup:
//
//	ms = now - last                       (ngx_current_msec, in ms)
//	if ms < -60000 { ms = 1 } else if ms < 0 { ms = 0 }
//	excess = last_excess - rate × ms / 1000 + 1000     (clamped at 0)
//	if excess > burst × 1000 { reject: nothing is written }
//	last_excess = excess; if ms != 0 { last = now }
//
// A key never seen gets excess 0, not 1000: its first request is free. So
// burst=5 admits 6 requests at one instant, with excess 0, 1000, …, 5000,
// where [algorithms.LeakyBucket] with Burst 5 admits 5; burst is the number of
// requests queued behind the one being served, and the default burst of
// 0 (burst= must be positive when written) admits one request per 1/rate.
// ngx_http_limit_req_account then turns the excess into a delay in whole
// milliseconds: 0 if excess ≤ delay × 1000, else (excess − delay × 1000) ×
// 1000 / rate. With burst=5 at 1r/s, six requests at once are served after
// 0, 1, 2, 3, 4 and 5 s; with nodelay (delay = NGX_MAX_INT_T_VALUE / 1000)
// all at once; with delay=3 the first four at once and the last two after
// 1 and 2 s. Nothing is subtracted for a delay served: the stored excess
// already counts the delayed request from its arrival, and after its wait
// it re-enters the phases with limit_req_status set, which the handler
// passes without counting it again. The leak's division truncates and the
// ms that were not leaked are lost when last moves on, but a r/s rate
// leaks N × ms exactly; only a r/m rate loses thousandths.
//
// nginx's clock is ngx_current_msec, since nginx 1.13.10 CLOCK_MONOTONIC in
// whole milliseconds (gettimeofday where there is no monotonic clock),
// cached per event-loop iteration and per worker. It is not aligned to the
// wall clock, and only differences of it matter; the model floors
// Origin + now to the millisecond, so requests in the same millisecond of
// that clock see ms = 0 and leak nothing between them. The clamps are for
// workers whose cached clocks differ by a little (ms < 0: no leak) and for
// a clock that jumped far back (ms < −60 s: leak 1 ms and move last back),
// which a monotonic clock never does but a caller's clock may: stepping
// back more than 60 s leaks rate/1000 thousandths.
//
// Held to nginx itself: live/nginx_test.go runs Debian's nginx 1.22.1 on
// loopback with five limit_req configurations (10r/s with no burst, burst=5,
// burst=5 nodelay, burst=5 delay=3; 100r/m burst=3 nodelay), sends them
// bursts, trains and Poisson arrivals with `ratelim load`, and compares each
// request's verdict and delay with this model fed the millisecond nginx
// logged. The module's file is the same git blob (2b062a30) in
// release-1.22.1 and release-1.31.4, and nothing it calls on the way
// (ngx_times.c on Linux) changed in a way that decides differently, so the
// model of 1.31.4 is the model of 1.22.1 too.
//
// What the model leaves out: one limit_req per location (with several, the
// earlier ones only look, NGX_AGAIN, and are written later by account at its
// own ngx_current_msec; the longest delay wins); dry run; the zone's
// eviction (ngx_http_limit_req_expire, when another key needs a node) of
// nodes idle 60 s whose excess has leaked away, after which the key starts
// again at excess 0 (the model keeps every node, which decides the same
// unless the leak has passed the excess by less than 1000); the status,
// which is 503 unless limit_req_status says otherwise.
//
// Cost: nginx counts one request at a time. A cost c is c requests at the
// same instant, all admitted or none: excess max(0, last_excess − leak +
// 1000) + 1000 × (c − 1), and its Delay is the last one's. Cost 0 peeks: it
// is admitted and writes nothing.
//
// Decision: nginx sends no RateLimit headers; the model derives them from
// the state. Limit is burst + 1, what a fresh key admits at once. Remaining
// is how many more unit requests the same millisecond admits. RetryAfter is
// exactly when the same request would pass (at the start of a millisecond
// of nginx's clock), ResetAfter when a request would find excess 0 again,
// that is when leak ≥ excess + 1000, and Delay the delay nginx would wait.
//
// State: T is last as a Time, the instant its millisecond begins (last ×
// 1000 − Origin µs), N is excess in thousandths, and Prev is 1 once the key
// has a node (the zero State is a key never seen, whose first request is
// free whatever the clock says).
//
// The zero NginxLimitReq has no rate: it refuses every request of positive
// cost, with RetryAfter [algorithms.Never], and lets a peek through. Build a working
// one with [NewNginxLimitReq].
type NginxLimitReq struct {
	p     algorithms.Params
	rate  int64 // ctx->rate: thousandths of a request a second
	burst int64 // limit->burst: burst × 1000
	delay int64 // limit->delay: delay × 1000, or NGX_MAX_INT_T_VALUE/1000 × 1000 for nodelay
}

// NewNginxLimitReq returns the model of `limit_req_zone … rate=R;
// limit_req … burst=B [nodelay|delay=D];` for p.Rate, p.Burst, p.Delay and
// p.NoDelay. p.Rate must be a whole number of requests a second or a minute
// (10/s, 100/m, 7/500ms = 14r/s, 1/2s = 30r/m): nginx reads nothing else. A
// Burst or Delay of 0 is nginx's default, the parameter left out.
func NewNginxLimitReq(p algorithms.Params) (*NginxLimitReq, error) {
	rate, err := nginxRate(p.Rate)
	if err != nil {
		return nil, err
	}
	if p.Burst < 0 {
		return nil, &algorithms.ParamError{Param: "burst", Msg: fmt.Sprintf("%d is negative (want 0, nginx's default with no burst=, or more)", p.Burst)}
	}
	if p.Burst > exact.Max/1000 {
		return nil, &algorithms.ParamError{Param: "burst", Msg: fmt.Sprintf("%d is too large (want burst × 1000 ≤ 2^50)", p.Burst)}
	}
	if p.Delay < 0 {
		return nil, &algorithms.ParamError{Param: "delay", Msg: fmt.Sprintf("%d is negative (want 0, nginx's default with no delay=, or more)", p.Delay)}
	}
	if p.Delay > exact.Max/1000 {
		return nil, &algorithms.ParamError{Param: "delay", Msg: fmt.Sprintf("%d is too large (want delay × 1000 ≤ 2^50)", p.Delay)}
	}
	if p.Delay > 0 && p.NoDelay {
		return nil, &algorithms.ParamError{Param: "delay", Msg: fmt.Sprintf("delay=%d and nodelay both set; nginx keeps whichever is written last (want one of them)", p.Delay)}
	}
	delay := p.Delay * 1000
	if p.NoDelay {
		delay = math.MaxInt64 / 1000 * 1000
	}
	return &NginxLimitReq{p: p, rate: rate, burst: p.Burst * 1000, delay: delay}, nil
}

// nginxRate returns r in nginx's thousandths of a request a second, as
// ngx_http_limit_req_zone computes it from the rate= it would be written as.
func nginxRate(r algorithms.Rate) (int64, error) {
	if _, err := algorithms.RateMicros(r); err != nil {
		return 0, err
	}
	for _, u := range [...]struct {
		per   time.Duration
		scale uint64
	}{{time.Second, 1}, {time.Minute, 60}} {
		// r.N per r.Per is q per u.per if r.N × u.per / r.Per is whole.
		hi, lo := bits.Mul64(uint64(r.N), uint64(u.per))
		if hi >= uint64(r.Per) {
			break // a quotient of 2^64 or more
		}
		q, rem := bits.Div64(hi, lo, uint64(r.Per))
		if rem != 0 {
			continue
		}
		if q > exact.Max/1000 {
			break
		}
		return int64(q * 1000 / u.scale), nil
	}
	if r.PerSecond() > exact.Max/1000 {
		return 0, &algorithms.ParamError{Param: "rate", Msg: fmt.Sprintf("%s is too fast (want at most 2^50 thousandths of a request a second)", r)}
	}
	return 0, &algorithms.ParamError{Param: "rate", Msg: fmt.Sprintf("nginx's rate= is a whole number of requests a second or a minute (r/s, r/m); %s is %.6g r/m (want e.g. 10/s, 100/m or 7/500ms)", r, r.PerSecond()*60)}
}

// Name returns "nginx-limit-req".
func (l *NginxLimitReq) Name() string { return "nginx-limit-req" }

// Params returns the parameters it was built with, Origin included.
func (l *NginxLimitReq) Params() algorithms.Params { return onlyRead(l.p, "burst", "delay") }

// Step is ngx_http_limit_req_lookup with account set (one limit_req), then
// ngx_http_limit_req_account's delay.
func (l *NginxLimitReq) Step(prev algorithms.State, now algorithms.Time, cost int64) (algorithms.State, algorithms.Decision) {
	if l.rate == 0 {
		return algorithms.Unbuilt(prev, cost)
	}
	cost = algorithms.CleanCost(cost)
	nowUs := int64(l.p.Origin) + int64(now)
	nowMs := exact.FloorDiv(nowUs, 1000) // ngx_current_msec
	d := algorithms.Decision{Limit: l.burst/1000 + 1}
	seen := prev.Prev != 0
	last := exact.FloorDiv(int64(l.p.Origin)+prev.T, 1000)

	// first is the excess the first unit request would leave, ms the
	// clamped elapsed time it leaks over.
	var first, ms int64
	if seen {
		ms = nowMs - last
		if ms < -60000 {
			ms = 1
		} else if ms < 0 {
			ms = 0
		}
		// The C computes in ngx_uint_t and keeps the result in an
		// ngx_int_t: unsigned wrap-around, then a signed view.
		first = int64(uint64(prev.N) - uint64(l.rate)*uint64(ms)/1000 + 1000)
		first = max(first, 0)
	}

	if cost == 0 {
		d.Allowed = first-1000 <= l.burst
		d.Remaining = l.room(first)
		if seen {
			d.ResetAfter = l.wait(prev.N+1000, last, nowMs, nowUs)
		}
		return prev, d
	}
	if cost > d.Limit {
		// Even a fresh key's excess, 1000 × (cost − 1), is over burst.
		d.RetryAfter = algorithms.Never
		d.Remaining = l.room(first)
		if seen {
			d.ResetAfter = l.wait(prev.N+1000, last, nowMs, nowUs)
		}
		return prev, d
	}
	excess := first + 1000*(cost-1)
	if excess > l.burst {
		// NGX_BUSY: the node is left as it was.
		d.Remaining = l.room(first)
		d.RetryAfter = l.wait(prev.N+1000*cost-l.burst, last, nowMs, nowUs)
		d.ResetAfter = l.wait(prev.N+1000, last, nowMs, nowUs)
		return prev, d
	}
	next := algorithms.State{T: prev.T, N: excess, Prev: 1}
	if !seen || ms != 0 {
		next.T = nowMs*1000 - int64(l.p.Origin)
		last = nowMs
	}
	d.Allowed = true
	d.Remaining = (l.burst - excess) / 1000
	d.ResetAfter = l.wait(excess+1000, last, nowMs, nowUs)
	if excess > l.delay {
		d.Delay = time.Duration((excess-l.delay)*1000/l.rate) * time.Millisecond
	}
	return next, d
}

// room is how many unit requests the same millisecond admits when the
// first of them would leave excess first.
func (l *NginxLimitReq) room(first int64) int64 {
	if first > l.burst {
		return 0
	}
	return 1 + (l.burst-first)/1000
}

// wait is how long from nowUs until a node (excess, last) has leaked need
// thousandths, rate × ms / 1000 ≥ need: 0 if it has. A request passes once
// its node has leaked its excess + 1000 × cost − burst, and finds the
// bucket empty once it has leaked excess + 1000. The leak only grows from
// the first millisecond at or after last: before it, the clamps hold it at
// 0 or at 1 ms.
func (l *NginxLimitReq) wait(need, last, nowMs, nowUs int64) time.Duration {
	if need <= 0 {
		return 0
	}
	target := uint64(need) * 1000 // rate × ms must reach it
	var at int64                  // the millisecond it does
	if elapsed := nowMs - last; elapsed >= 0 {
		v := uint64(l.rate) * uint64(elapsed) // wraps as nginx's does
		if v >= target {
			return 0
		}
		at = nowMs + int64((target-v+uint64(l.rate)-1)/uint64(l.rate))
	} else {
		if elapsed < -60000 && uint64(l.rate)/1000 >= uint64(need) {
			return 0
		}
		at = last + int64((target+uint64(l.rate)-1)/uint64(l.rate))
	}
	return exact.Micros((at-nowMs)*1000 - (nowUs - nowMs*1000))
}
