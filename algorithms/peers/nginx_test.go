package peers_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/algorithms/peers"
)

// The line numbers below are those of
// src/http/modules/ngx_http_limit_req_module.c at nginx release-1.31.4
// (unchanged on master 3f6f7824):
//
//	 447-452  ms < -60000 → ms = 1; ms < 0 → ms = 0           (lookup)
//	 454-458  excess = lr->excess - ctx->rate * ms / 1000 + 1000, ≥ 0
//	 462-464  excess > limit->burst → NGX_BUSY, nothing written
//	 466-473  account: lr->excess = excess; if (ms) lr->last = now
//	 486-524  a new node: *ep = 0, lr->excess = 0, lr->last = now
//	 547-553  excess ≤ delay → 0, else (excess - delay) * 1000 / rate ms
//	 939      ctx->rate = rate * 1000 / scale (scale 60 for r/m)
//	 977-978  burst = 0, delay = 0 unless written
//	1021      nodelay: delay = NGX_MAX_INT_T_VALUE / 1000
//	1060-1061 limit->burst = burst * 1000, limit->delay = delay * 1000

const (
	nms = algorithms.Time(1000)      // a millisecond in µs
	ns1 = algorithms.Time(1_000_000) // a second in µs
)

var (
	perSecond = func(n int64) algorithms.Rate { return algorithms.Rate{N: n, Per: time.Second} }
	perMinute = func(n int64) algorithms.Rate { return algorithms.Rate{N: n, Per: time.Minute} }
)

func mustNginx(t interface{ Fatal(...any) }, p algorithms.Params) *peers.NginxLimitReq {
	l, err := peers.NewNginxLimitReq(p)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// nstep is one request of a table and everything nginx's arithmetic says of
// it. A zero want.Limit is filled in by the runner.
type nstep struct {
	at   algorithms.Time
	cost int64
	want algorithms.Decision
	// excess and lastMs, when set (excess ≥ 0), are the node's fields
	// after the request: lr->excess and lr->last (ms since Origin).
	excess, lastMs int64
}

func runNginx(t *testing.T, l *peers.NginxLimitReq, steps []nstep) {
	t.Helper()
	limit := l.Params().Burst + 1
	var st algorithms.State
	for i, s := range steps {
		prev := st
		var d algorithms.Decision
		st, d = l.Step(st, s.at, s.cost)
		want := s.want
		if want.Limit == 0 {
			want.Limit = limit
		}
		if d != want {
			t.Fatalf("step %d (t=%dµs cost=%d):\n got %+v\nwant %+v", i, s.at, s.cost, d, want)
		}
		if !d.Allowed && !sameState(st, prev) {
			t.Fatalf("step %d: a refused request moved the node from %+v to %+v", i, prev, st)
		}
		if s.excess >= 0 && s.want.Allowed && s.cost > 0 {
			origin := int64(l.Params().Origin)
			if st.N != s.excess || st.T+origin != s.lastMs*1000 || st.Prev != 1 {
				t.Fatalf("step %d: state %+v, want excess %d, last %dms (T %d), Prev 1", i, st, s.excess, s.lastMs, s.lastMs*1000-origin)
			}
		}
	}
}

// sameState reports whether a and b are the same node: nginx-limit-req
// never uses Log.
func sameState(a, b algorithms.State) bool {
	return a.T == b.T && a.N == b.N && a.Prev == b.Prev && a.Log == nil && b.Log == nil
}

func admit(resetAfter, delay time.Duration, remaining int64) algorithms.Decision {
	return algorithms.Decision{Allowed: true, Remaining: remaining, ResetAfter: resetAfter, Delay: delay}
}

func refuse(retryAfter, resetAfter time.Duration, remaining int64) algorithms.Decision {
	return algorithms.Decision{Remaining: remaining, RetryAfter: retryAfter, ResetAfter: resetAfter}
}

// TestNginxSourceArithmetic replays sequences whose every figure is worked
// out by hand from the C source's lines cited above.
func TestNginxSourceArithmetic(t *testing.T) {
	sec, msd := time.Second, time.Millisecond
	t.Run("burst=5 at 1r/s: six at once, delayed 0..5s", func(t *testing.T) {
		// rate = 1 × 1000 / 1 = 1000 (939); burst = 5000 (1060). The
		// first request makes a node with excess 0 (512); each next one
		// at ms = 0 adds 1000 (454); delay = excess × 1000 / 1000 ms (552).
		// ResetAfter: the leak must reach excess + 1000, at 1 a ms.
		l := mustNginx(t, algorithms.Params{Rate: perSecond(1), Burst: 5})
		runNginx(t, l, []nstep{
			{at: 0, cost: 1, want: admit(1*sec, 0, 5), excess: 0, lastMs: 0},
			{at: 0, cost: 1, want: admit(2*sec, 1*sec, 4), excess: 1000, lastMs: 0},
			{at: 100, cost: 1, want: admit(3*sec-100*time.Microsecond, 2*sec, 3), excess: 2000, lastMs: 0}, // same ms
			{at: 999, cost: 1, want: admit(4*sec-999*time.Microsecond, 3*sec, 2), excess: 3000, lastMs: 0},
			{at: 999, cost: 1, want: admit(5*sec-999*time.Microsecond, 4*sec, 1), excess: 4000, lastMs: 0},
			{at: 999, cost: 1, want: admit(6*sec-999*time.Microsecond, 5*sec, 0), excess: 5000, lastMs: 0},
			// 6000 > 5000 (462): NGX_BUSY, the node is untouched. It
			// passes once the leak reaches 5000 + 1000 − 5000 = 1000,
			// at ms 1000.
			{at: 999, cost: 1, want: refuse(sec-999*time.Microsecond, 6*sec-999*time.Microsecond, 0), excess: -1},
			// At ms 999: 5000 − 999 + 1000 = 5001 > 5000.
			{at: 999*nms + 999, cost: 1, want: refuse(1*time.Microsecond, 5*sec+1*time.Microsecond, 0), excess: -1},
			// At ms 1000: 5000 − 1000 + 1000 = 5000, last = 1000 (470).
			{at: ns1, cost: 1, want: admit(6*sec, 5*sec, 0), excess: 5000, lastMs: 1000},
			// Two at 1.5s: 5000 − 500 + 1000 = 5500 > 5000, refused;
			// a peek there sees 0 room, the reset 6 s after ms 1000.
			{at: ns1 + 500*nms, cost: 1, want: refuse(500*msd, 5500*msd, 0), excess: -1},
			{at: ns1 + 500*nms, cost: 0, want: admit(5500*msd, 0, 0), excess: -1},
			// A quiet minute: 5000 − 60000 + 1000 < 0 → 0 (456): as
			// fresh as a new node, with all six places.
			{at: 61 * ns1, cost: 0, want: admit(0, 0, 6), excess: -1},
			{at: 61 * ns1, cost: 1, want: admit(1*sec, 0, 5), excess: 0, lastMs: 61000},
		})
	})
	t.Run("nodelay: the same six, none delayed", func(t *testing.T) {
		// delay = NGX_MAX_INT_T_VALUE / 1000 × 1000 (1021, 1061): every
		// excess ≤ burst is ≤ it (547).
		l := mustNginx(t, algorithms.Params{Rate: perSecond(1), Burst: 5, NoDelay: true})
		var steps []nstep
		for k := range int64(6) {
			steps = append(steps, nstep{at: 0, cost: 1, want: admit(time.Duration(k+1)*sec, 0, 5-k), excess: 1000 * k})
		}
		steps = append(steps, nstep{at: 0, cost: 1, want: refuse(sec, 6*sec, 0), excess: -1})
		runNginx(t, l, steps)
	})
	t.Run("delay=3: four at once, then 1s and 2s", func(t *testing.T) {
		// delay = 3000: excess 0..3000 pass at once; 4000 and 5000 wait
		// (4000 − 3000) × 1000 / 1000 = 1000 ms and 2000 ms (552).
		l := mustNginx(t, algorithms.Params{Rate: perSecond(1), Burst: 5, Delay: 3})
		delays := []time.Duration{0, 0, 0, 0, 1 * sec, 2 * sec}
		var steps []nstep
		for k, dl := range delays {
			steps = append(steps, nstep{at: 0, cost: 1, want: admit(time.Duration(k+1)*sec, dl, 5-int64(k)), excess: 1000 * int64(k)})
		}
		runNginx(t, l, steps)
	})
	t.Run("burst=0 at 10r/s: one per 100ms", func(t *testing.T) {
		// rate = 10000 (939), burst = 0 (977). At 50 ms the leak is
		// 10000 × 50 / 1000 = 500: 0 − 500 + 1000 = 500 > 0. The leak
		// reaches 1000 at 100 ms.
		l := mustNginx(t, algorithms.Params{Rate: perSecond(10), Burst: 0})
		runNginx(t, l, []nstep{
			{at: 0, cost: 1, want: admit(100*msd, 0, 0), excess: 0, lastMs: 0},
			{at: 0, cost: 1, want: refuse(100*msd, 100*msd, 0), excess: -1},
			{at: 50 * nms, cost: 1, want: refuse(50*msd, 50*msd, 0), excess: -1},
			{at: 100 * nms, cost: 1, want: admit(100*msd, 0, 0), excess: 0, lastMs: 100},
			// A fresh key admits cost 1 only: 1000 × (2 − 1) > 0.
			{at: 100 * nms, cost: 2, want: refuse(algorithms.Never, 100*msd, 0), excess: -1},
		})
	})
	t.Run("100r/m truncates to 1666 thousandths a second", func(t *testing.T) {
		// rate = 100 × 1000 / 60 = 1666, not 1666.67 (939). The second
		// request waits 1000 × 1000 / 1666 = 600 ms (600.24). At 600 ms
		// the leak is 1666 × 600 / 1000 = 999 (999.6): 1000 − 999 + 1000
		// = 1001 > 1000, refused where an exact 100/m leaks 1000 and
		// admits. At 601 ms it is 1001: excess 999, delay 599 ms.
		l := mustNginx(t, algorithms.Params{Rate: perMinute(100), Burst: 1})
		runNginx(t, l, []nstep{
			{at: 0, cost: 1, want: admit(601*msd, 0, 1), excess: 0, lastMs: 0},           // ⌈10^6/1666⌉ = 601
			{at: 0, cost: 1, want: admit(1201*msd, 600*msd, 0), excess: 1000, lastMs: 0}, // ⌈2·10^6/1666⌉
			{at: 600 * nms, cost: 1, want: refuse(1*msd, 1201*msd-600*msd, 0), excess: -1},
			{at: 601 * nms, cost: 1, want: admit(1200*msd, 599*msd, 0), excess: 999, lastMs: 601},
		})
	})
	t.Run("1r/m is a request every 62.5s", func(t *testing.T) {
		// rate = 1000 / 60 = 16 (939): 16 × 60000 / 1000 = 960 at 60 s,
		// so 0 − 960 + 1000 = 40 > 0; the leak reaches 1000 at 62500 ms.
		l := mustNginx(t, algorithms.Params{Rate: perMinute(1)})
		runNginx(t, l, []nstep{
			{at: 0, cost: 1, want: admit(62500*msd, 0, 0), excess: 0, lastMs: 0},
			{at: 60 * ns1, cost: 1, want: refuse(2500*msd, 2500*msd, 0), excess: -1},
			{at: 62500 * nms, cost: 1, want: admit(62500*msd, 0, 0), excess: 0, lastMs: 62500},
		})
	})
	t.Run("the ms clamps", func(t *testing.T) {
		// Back 1 s: ms = −1000 → 0 (450): no leak, and last stays at
		// 10000 since ms is 0 (469). Back more than 60 s: ms → 1 (447):
		// a leak of 1000 × 1 / 1000 = 1, and last moves back (470).
		l := mustNginx(t, algorithms.Params{Rate: perSecond(1), Burst: 5})
		runNginx(t, l, []nstep{
			{at: 10 * ns1, cost: 1, want: admit(sec, 0, 5), excess: 0, lastMs: 10000},
			{at: 10 * ns1, cost: 1, want: admit(2*sec, sec, 4), excess: 1000, lastMs: 10000},
			// Leak counts from ms 10000, 1 s ahead of now.
			{at: 9 * ns1, cost: 1, want: admit(4*sec, 2*sec, 3), excess: 2000, lastMs: 10000},
			{at: 10*ns1 - 61*ns1, cost: 1, want: admit(2999*msd+1000*msd, 2999*msd, 2), excess: 2999, lastMs: -51000},
			// Back exactly 60 s from there: ms = −60000 is not < −60000.
			{at: -111 * ns1, cost: 1, want: admit(60*sec+4999*msd, 3999*msd, 1), excess: 3999, lastMs: -51000},
		})
	})
	t.Run("cost", func(t *testing.T) {
		// Cost 3 on a fresh key is three at once: excess 0, 1000, 2000;
		// its Delay is the last one's. Cost 4 finds 2000 + 4000 > 5000.
		l := mustNginx(t, algorithms.Params{Rate: perSecond(1), Burst: 5})
		runNginx(t, l, []nstep{
			{at: 0, cost: 0, want: admit(0, 0, 6), excess: -1},
			{at: 0, cost: 3, want: admit(3*sec, 2*sec, 3), excess: 2000, lastMs: 0},
			{at: 0, cost: 4, want: refuse(1*sec, 3*sec, 3), excess: -1},
			{at: 0, cost: 7, want: refuse(algorithms.Never, 3*sec, 3), excess: -1},
			{at: 0, cost: 3, want: admit(6*sec, 5*sec, 0), excess: 5000, lastMs: 0},
		})
	})
	t.Run("Origin sets where nginx's milliseconds begin", func(t *testing.T) {
		// 1000r/s leaks 1000 a ms. With Origin 500µs, now 0..499 is
		// one ms of nginx's clock and now 500 the next.
		l := mustNginx(t, algorithms.Params{Rate: perSecond(1000), Origin: 500})
		runNginx(t, l, []nstep{
			{at: 0, cost: 1, want: admit(500*time.Microsecond, 0, 0), excess: 0, lastMs: 0},
			{at: 499, cost: 1, want: refuse(1*time.Microsecond, 1*time.Microsecond, 0), excess: -1},
			{at: 500, cost: 1, want: admit(msd, 0, 0), excess: 0, lastMs: 1},
		})
	})
}

// TestNginxRateConversion: nginx's rate= is a whole number of requests a
// second or a minute; a Rate that is one of those, however written, is the
// same limiter, and one that is neither is refused on "rate".
func TestNginxRateConversion(t *testing.T) {
	same := []struct{ a, b algorithms.Rate }{
		{algorithms.Rate{N: 7, Per: 500 * time.Millisecond}, perSecond(14)},
		{algorithms.Rate{N: 1, Per: 2 * time.Second}, perMinute(30)},
		{perMinute(60), perSecond(1)},
		{algorithms.Rate{N: 3, Per: time.Hour / 20}, perMinute(1)},
		{algorithms.Rate{N: 5, Per: 3 * time.Second}, perMinute(100)},
	}
	rng := rand.New(rand.NewPCG(14, 1))
	for _, c := range same {
		a := mustNginx(t, algorithms.Params{Rate: c.a, Burst: 3})
		b := mustNginx(t, algorithms.Params{Rate: c.b, Burst: 3})
		var sa, sb algorithms.State
		now := algorithms.Time(0)
		for i := range 20_000 {
			now += algorithms.Time(rng.IntN(400_000))
			cost := int64(rng.IntN(3))
			var da, db algorithms.Decision
			sa, da = a.Step(sa, now, cost)
			sb, db = b.Step(sb, now, cost)
			if da != db || !sameState(sa, sb) {
				t.Fatalf("%v and %v differ at request %d: %+v / %+v", c.a, c.b, i, da, db)
			}
		}
	}
}

func TestNginxParamErrors(t *testing.T) {
	ok := algorithms.Params{Rate: perSecond(10), Burst: 5}
	tests := []struct {
		name  string
		p     algorithms.Params
		param string
		msg   string
	}{
		{"5000/h is 83.3r/m", algorithms.Params{Rate: algorithms.Rate{N: 5000, Per: time.Hour}}, "rate", "83.3333 r/m"},
		{"3/7ms", algorithms.Params{Rate: algorithms.Rate{N: 3, Per: 7 * time.Millisecond}}, "rate", "whole number"},
		{"1/h", algorithms.Params{Rate: algorithms.Rate{N: 1, Per: time.Hour}}, "rate", "r/s, r/m"},
		{"zero rate", algorithms.Params{}, "rate", "must be positive"},
		{"negative rate", algorithms.Params{Rate: perSecond(-1)}, "rate", "must be positive"},
		{"sub-µs period", algorithms.Params{Rate: algorithms.Rate{N: 1, Per: time.Nanosecond}}, "rate", "at least 1µs"},
		{"too fast", algorithms.Params{Rate: perSecond(math.MaxInt64)}, "rate", "too fast"},
		{"negative burst", algorithms.Params{Rate: perSecond(1), Burst: -1}, "burst", "is negative (want 0"},
		{"huge burst", algorithms.Params{Rate: perSecond(1), Burst: 1 << 50}, "burst", "too large"},
		{"negative delay", algorithms.Params{Rate: perSecond(1), Burst: 5, Delay: -2}, "delay", "is negative (want 0"},
		{"huge delay", algorithms.Params{Rate: perSecond(1), Burst: 5, Delay: 1 << 50}, "delay", "too large"},
		{"delay and nodelay", algorithms.Params{Rate: perSecond(1), Burst: 5, Delay: 2, NoDelay: true}, "delay", "nodelay"},
	}
	for _, tt := range tests {
		_, err := peers.NewNginxLimitReq(tt.p)
		var pe *algorithms.ParamError
		if !errors.As(err, &pe) || pe.Param != tt.param || !strings.Contains(pe.Msg, tt.msg) {
			t.Errorf("%s: NewNginxLimitReq(%+v) = %v, want a ParamError on %q containing %q", tt.name, tt.p, err, tt.param, tt.msg)
		}
	}
	// What nginx accepts: the defaults (no burst=, no delay=), delay above
	// burst (the same as nodelay), and Params kept as given.
	for _, p := range []algorithms.Params{ok, {Rate: perSecond(1)}, {Rate: perSecond(1), Burst: 2, Delay: 9}, {Rate: perMinute(7), Burst: 1, NoDelay: true, Origin: 123}} {
		l, err := algorithms.New("nginx-limit-req", p)
		if err != nil {
			t.Errorf("New(%+v): %v", p, err)
			continue
		}
		if l.Params() != p {
			t.Errorf("Params() = %+v, want %+v", l.Params(), p)
		}
	}
}

// TestNginxEdges: the zero value, the zero State and inputs at the ends of
// int64 neither panic nor break the contract.
func TestNginxEdges(t *testing.T) {
	var zero peers.NginxLimitReq
	if _, d := zero.Step(algorithms.State{}, 0, 1); d.Allowed || d.RetryAfter != algorithms.Never {
		t.Errorf("zero value admitted %+v", d)
	}
	if st, d := zero.Step(algorithms.State{T: 5, N: 7, Prev: 1}, 0, 0); !d.Allowed || !sameState(st, algorithms.State{T: 5, N: 7, Prev: 1}) {
		t.Errorf("zero value peek: %+v, %+v", st, d)
	}
	if zero.Name() != "nginx-limit-req" || zero.Params() != (algorithms.Params{}) {
		t.Errorf("zero value: %q, %+v", zero.Name(), zero.Params())
	}
	l := mustNginx(t, algorithms.Params{Rate: perSecond(10), Burst: 3, Delay: 1})
	// A zero State is a key never seen: its first request passes with
	// excess 0 at any instant.
	for _, now := range []algorithms.Time{0, -5, math.MaxInt64, math.MinInt64} {
		st, d := l.Step(algorithms.State{}, now, 1)
		if !d.Allowed || d.Delay != 0 || d.Remaining != 3 || st.N != 0 || st.Prev != 1 {
			t.Errorf("first request at %d: %+v, %+v", now, st, d)
		}
	}
	// A negative cost is a peek.
	if st, d := l.Step(algorithms.State{}, 0, -4); !d.Allowed || !sameState(st, algorithms.State{}) || d.Remaining != 4 {
		t.Errorf("cost −4: %+v, %+v", st, d)
	}
	states := []algorithms.State{{}, {T: 1000, N: 3000, Prev: 1}, {T: math.MaxInt64, N: math.MaxInt64, Prev: 1}, {T: math.MinInt64, N: -1, Prev: 1}}
	for _, st := range states {
		for _, now := range []algorithms.Time{0, 1, math.MaxInt64, math.MinInt64, -61 * ns1} {
			for _, cost := range []int64{0, 1, 4, 5, math.MaxInt64} {
				next, d := l.Step(st, now, cost)
				if d.RetryAfter < 0 || d.ResetAfter < 0 || d.Delay < 0 || d.Remaining < 0 {
					t.Errorf("Step(%+v, %d, %d) = %+v", st, now, cost, d)
				}
				if !d.Allowed && !sameState(next, st) {
					t.Errorf("Step(%+v, %d, %d) refused but wrote %+v", st, now, cost, next)
				}
			}
		}
	}
}

// genNginx draws a configuration nginx can be written with, and the rate in
// its thousandths as line 939 computes it, independently of the model.
func genNginx(t *rapid.T) (algorithms.Params, int64) {
	n := rapid.Int64Range(1, 120).Draw(t, "rate")
	perMin := rapid.Bool().Draw(t, "r/m")
	p := algorithms.Params{Rate: perSecond(n), Burst: rapid.Int64Range(0, 12).Draw(t, "burst")}
	rate := n * 1000
	if perMin {
		p.Rate, rate = perMinute(n), n*1000/60
	}
	switch rapid.IntRange(0, 2).Draw(t, "delay mode") {
	case 1:
		p.NoDelay = true
	case 2:
		p.Delay = rapid.Int64Range(1, 14).Draw(t, "delay")
	}
	p.Origin = algorithms.Time(rapid.Int64Range(0, 1_000_000).Draw(t, "origin"))
	return p, rate
}

// floorMs is ngx_current_msec at the instant t µs of the wall clock.
func floorMs(t algorithms.Time) int64 {
	ms := int64(t) / 1000
	if int64(t)%1000 < 0 {
		ms--
	}
	return ms
}

type nreq struct {
	at   algorithms.Time
	cost int64
}

func genNginxRequests(t *rapid.T, backwards bool, maxCost int64) []nreq {
	n := rapid.IntRange(1, 120).Draw(t, "n")
	reqs := make([]nreq, n)
	now := algorithms.Time(rapid.Int64Range(-5_000_000, 5_000_000).Draw(t, "start"))
	for i := range reqs {
		now += algorithms.Time(rapid.OneOf(
			rapid.Just(int64(0)),
			rapid.Int64Range(1, 2000),
			rapid.Int64Range(2000, 300_000),
			rapid.Int64Range(300_000, 5_000_000),
		).Draw(t, "gap"))
		if backwards && rapid.IntRange(0, 7).Draw(t, "back?") == 0 {
			now -= algorithms.Time(rapid.OneOf(rapid.Int64Range(1, 3_000_000), rapid.Int64Range(59_000_000, 70_000_000)).Draw(t, "back"))
		}
		reqs[i] = nreq{now, rapid.Int64Range(0, maxCost).Draw(t, "cost")}
	}
	return reqs
}

// TestNginxPropertyBound: on a clock that does not go backwards, the cost
// admitted between two admitted requests i..j, minus the first request's
// free unit, is at most burst plus what rate leaked over their ms of
// nginx's clock: (Σcost − 1) × 10^6 ≤ burst × 10^6 + rate × Δms, rate in
// thousandths. In the caller's terms: at most burst + 1 + Rate × (t + 1 ms).
func TestNginxPropertyBound(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p, rate := genNginx(t)
		l := mustNginx(t, p)
		reqs := genNginxRequests(t, false, 3)
		var st algorithms.State
		type adm struct {
			ms, cost int64
			at       algorithms.Time
		}
		var admitted []adm
		for _, r := range reqs {
			var d algorithms.Decision
			st, d = l.Step(st, r.at, r.cost)
			if d.Allowed && r.cost > 0 {
				ms := floorMs(p.Origin + r.at)
				admitted = append(admitted, adm{ms, r.cost, r.at})
			}
		}
		for i := range admitted {
			var sum int64
			for j := i; j < len(admitted); j++ {
				sum += admitted[j].cost
				dms := admitted[j].ms - admitted[i].ms
				if (sum-1)*1_000_000 > p.Burst*1_000_000+rate*dms {
					t.Fatalf("admitted %d over %d ms (%d..%d), more than 1 + burst %d + %d/1000 r/s", sum, dms, i, j, p.Burst, rate)
				}
				span := float64(admitted[j].at-admitted[i].at) / 1e6
				if float64(sum) > float64(p.Burst+1)+p.Rate.PerSecond()*(span+0.001)+1e-9 {
					t.Fatalf("admitted %d over %.6fs, more than burst + 1 + %v × (t + 1ms)", sum, span, p.Rate)
				}
			}
		}
	})
}

// TestNginxPropertyDecisions: on any clock, backwards jumps past the 60 s
// clamp included: a refusal writes nothing; a peek writes nothing and is
// admitted; Remaining is exactly how many unit requests the same instant
// admits; RetryAfter is exactly when the same request passes (not a
// microsecond earlier); ResetAfter is exactly when a peek sees all of
// Limit again, and from then on the key decides as a key never seen; the
// Delay is what line 552 computes from the stored excess.
func TestNginxPropertyDecisions(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p, rate := genNginx(t)
		l := mustNginx(t, p)
		delay := p.Delay * 1000
		if p.NoDelay {
			delay = math.MaxInt64
		}
		var st algorithms.State
		for i, r := range genNginxRequests(t, true, 4) {
			prev := st
			var d algorithms.Decision
			st, d = l.Step(prev, r.at, r.cost)
			if d.Limit != p.Burst+1 || d.Remaining < 0 || d.Remaining > d.Limit {
				t.Fatalf("request %d: %+v", i, d)
			}
			if !d.Allowed || r.cost == 0 {
				if !sameState(st, prev) {
					t.Fatalf("request %d (cost %d) refused or peeked, but the node moved from %+v to %+v", i, r.cost, prev, st)
				}
			}
			if r.cost == 0 && !d.Allowed {
				t.Fatalf("request %d: a peek refused: %+v", i, d)
			}
			if d.Allowed && r.cost > 0 {
				want := time.Duration(0)
				if st.N > delay {
					want = time.Duration((st.N-delay)*1000/rate) * time.Millisecond
				}
				if d.Delay != want || d.RetryAfter != 0 {
					t.Fatalf("request %d: delay %v for excess %d, want %v", i, d.Delay, st.N, want)
				}
			}
			// Remaining, by probing.
			probe := st
			for k := range d.Remaining {
				var pd algorithms.Decision
				if probe, pd = l.Step(probe, r.at, 1); !pd.Allowed {
					t.Fatalf("request %d: remaining %d, but unit %d at the same instant was refused", i, d.Remaining, k+1)
				}
			}
			if _, pd := l.Step(probe, r.at, 1); pd.Allowed {
				t.Fatalf("request %d: remaining %d, but one more was admitted", i, d.Remaining)
			}
			// RetryAfter.
			if !d.Allowed {
				if d.RetryAfter == algorithms.Never {
					if r.cost <= p.Burst+1 {
						t.Fatalf("request %d: cost %d ≤ burst + 1 refused for good", i, r.cost)
					}
				} else {
					wait := algorithms.At(d.RetryAfter)
					if wait <= 0 {
						t.Fatalf("request %d: refused with RetryAfter %v", i, d.RetryAfter)
					}
					if _, again := l.Step(prev, r.at+wait, r.cost); !again.Allowed {
						t.Fatalf("request %d: RetryAfter %v, refused then: %+v", i, d.RetryAfter, again)
					}
					if _, early := l.Step(prev, r.at+wait-1, r.cost); early.Allowed {
						t.Fatalf("request %d: RetryAfter %v, admitted 1µs earlier", i, d.RetryAfter)
					}
				}
			}
			// ResetAfter.
			reset := r.at + algorithms.At(d.ResetAfter)
			if _, full := l.Step(st, reset, 0); full.Remaining != d.Limit {
				t.Fatalf("request %d: ResetAfter %v, but a peek then sees %d of %d", i, d.ResetAfter, full.Remaining, d.Limit)
			}
			if d.ResetAfter > 0 {
				if _, early := l.Step(st, reset-1, 0); early.Remaining == d.Limit {
					t.Fatalf("request %d: ResetAfter %v, but full 1µs earlier", i, d.ResetAfter)
				}
			}
			later := reset + algorithms.Time(rapid.Int64Range(0, 3_000_000).Draw(t, "later"))
			cost := rapid.Int64Range(0, p.Burst+2).Draw(t, "cost after reset")
			n1, d1 := l.Step(st, later, cost)
			n0, d0 := l.Step(algorithms.State{}, later, cost)
			if d1 != d0 || (cost > 0 && d1.Allowed && !sameState(n1, n0)) {
				t.Fatalf("request %d: after the reset the key decides %+v/%+v, a new key %+v/%+v", i, d1, n1, d0, n0)
			}
		}
	})
}

// TestNginxPropertyOutputIsSmooth: without delay= or nodelay, the instants
// nginx serves the admitted requests at (arrival ms + Delay) are at least
// ⌊cost × 10^6 / rate⌋ ms apart, on a clock that does not go backwards:
// the leaky bucket's promise to the backend, in nginx's integers.
func TestNginxPropertyOutputIsSmooth(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p, rate := genNginx(t)
		p.Delay, p.NoDelay = 0, false
		l := mustNginx(t, p)
		var st algorithms.State
		served := int64(math.MinInt64)
		for i, r := range genNginxRequests(t, false, 3) {
			var d algorithms.Decision
			st, d = l.Step(st, r.at, r.cost)
			if !d.Allowed || r.cost == 0 {
				continue
			}
			at := floorMs(p.Origin+r.at) + d.Delay.Milliseconds()
			if served != math.MinInt64 && at-served < r.cost*1_000_000/rate {
				t.Fatalf("request %d (cost %d) served at %d ms, %d ms after the previous one (rate %d/1000 r/s)", i, r.cost, at, at-served, rate)
			}
			served = at
		}
	})
}

// TestNginxQuirkBurstIsAfterTheFirst reproduces nginx's documented burst
// behaviour (burst=5 at 1r/s: six requests at once all pass, five of them
// delayed by 1..5 s; nodelay passes them at once; delay=3 holds back only
// the last two) next to ratelim's leaky bucket with the same numbers, which
// admits five and delays them 0..4 s.
func TestNginxQuirkBurstIsAfterTheFirst(t *testing.T) {
	burst := func(a algorithms.Algorithm) (admitted int, delays []time.Duration) {
		var st algorithms.State
		for range 6 {
			var d algorithms.Decision
			st, d = a.Step(st, 0, 1)
			if d.Allowed {
				admitted++
				delays = append(delays, d.Delay)
			}
		}
		return admitted, delays
	}
	s := time.Second
	lb, err := algorithms.NewLeakyBucket(perSecond(1), 5)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		alg    algorithms.Algorithm
		n      int
		delays []time.Duration
	}{
		{"nginx burst=5", mustNginx(t, algorithms.Params{Rate: perSecond(1), Burst: 5}), 6, []time.Duration{0, s, 2 * s, 3 * s, 4 * s, 5 * s}},
		{"nginx burst=5 nodelay", mustNginx(t, algorithms.Params{Rate: perSecond(1), Burst: 5, NoDelay: true}), 6, []time.Duration{0, 0, 0, 0, 0, 0}},
		{"nginx burst=5 delay=3", mustNginx(t, algorithms.Params{Rate: perSecond(1), Burst: 5, Delay: 3}), 6, []time.Duration{0, 0, 0, 0, s, 2 * s}},
		{"leaky-bucket burst=5", lb, 5, []time.Duration{0, s, 2 * s, 3 * s, 4 * s}},
	}
	for _, c := range cases {
		n, delays := burst(c.alg)
		if n != c.n || !equalDurations(delays, c.delays) {
			t.Errorf("%s: %d of 6 admitted, delays %v; want %d, %v", c.name, n, delays, c.n, c.delays)
		}
		t.Logf("%-22s admits %d of 6 at one instant, delays %v", c.name, n, delays)
	}
}

func equalDurations(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestNginxQuirkAgainstLeakyBucket measures, over 100,000 random requests,
// how often nginx with burst B decides differently from ratelim's leaky
// bucket. With burst B+1 and at whole milliseconds of a r/s rate that
// divides 1000, the two are the same limiter (nginx's excess + 1000 is the
// leaky bucket's backlog): no difference in Allowed, Remaining or Delay.
// The differences come from the free first request (burst B), nginx's
// millisecond clock (instants within a ms) and the r/m truncation.
func TestNginxQuirkAgainstLeakyBucket(t *testing.T) {
	const n = 100_000
	type cfg struct {
		name     string
		rate     algorithms.Rate
		burst    int64 // nginx's; the leaky bucket gets burst + lbExtra
		lbExtra  int64
		msSteps  bool // instants on whole ms
		wantSame bool
	}
	cfgs := []cfg{
		{"10r/s burst=5 vs leaky 6, whole ms", perSecond(10), 5, 1, true, true},
		{"4r/s burst=0 vs leaky 1, whole ms", perSecond(4), 0, 1, true, true},
		{"10r/s burst=5 vs leaky 5, whole ms", perSecond(10), 5, 0, true, false},
		{"10r/s burst=5 vs leaky 6, µs instants", perSecond(10), 5, 1, false, false},
		{"100r/m burst=2 vs leaky 3, whole ms", perMinute(100), 2, 1, true, false},
		{"3r/s burst=5 vs leaky 6, whole ms", perSecond(3), 5, 1, true, false},
	}
	for _, c := range cfgs {
		ng := mustNginx(t, algorithms.Params{Rate: c.rate, Burst: c.burst})
		lb, err := algorithms.NewLeakyBucket(c.rate, c.burst+c.lbExtra)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(7, uint64(c.burst)))
		gap := int64(c.rate.Per/time.Microsecond) / c.rate.N // about the rate
		var sn, sl algorithms.State
		now := algorithms.Time(0)
		allowed, delays := 0, 0
		for range n {
			step := rng.Int64N(2 * gap)
			if rng.IntN(4) == 0 {
				step = 0
			}
			if c.msSteps {
				step -= step % 1000
			}
			now += algorithms.Time(step)
			var dn, dl algorithms.Decision
			sn, dn = ng.Step(sn, now, 1)
			sl, dl = lb.Step(sl, now, 1)
			if dn.Allowed != dl.Allowed || dn.Remaining != dl.Remaining {
				allowed++
			} else if dn.Delay != dl.Delay {
				delays++
			}
		}
		t.Logf("%-40s %6d of %d decisions differ (admission or Remaining), %6d more only in Delay", c.name, allowed, n, delays)
		if same := allowed == 0 && delays == 0; same != c.wantSame {
			t.Errorf("%s: %d and %d differences, want the same limiter: %v", c.name, allowed, delays, c.wantSame)
		}
	}
}
