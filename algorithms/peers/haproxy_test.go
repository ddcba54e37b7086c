package peers_test

import (
	"bufio"
	"errors"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/algorithms/peers"
)

// The line numbers below are haproxy v2.6.0's (haproxy.go says why they
// stand for 2.6.12):
//
//	include/haproxy/freq_ctr.h  38-75   update_freq_ctr_period: same period → curr += inc;
//	                                    else prev = curr, curr = inc, tick += P; 2P or more
//	                                    → prev = 0, tick = now; store tick & ~1
//	include/haproxy/freq_ctr.h  99-104  read_freq_ctr_period: freq_ctr_total(-1) / P
//	src/freq_ctr.c              78-96   remain = tick + P − now; < 0 → past = curr or 0;
//	                                    curr == 0 && past ≤ 1 → past; else past × remain + curr × P
//	src/http_act.c        2001-2081     http_action_track_sc: update(+1) before any deny rule
//	src/stick_table.c     3846-3879     smp_fetch_sc_http_req_rate: read_freq_ctr_period
//	src/clock.c                 249     global_now_ms = Unix ms, truncated to a uint32

// hapOrigin is 2026-12-01 00:00:00 UTC, a scenario's default wall clock: an
// even Unix ms, 786,870,272 ms after the last uint32 wrap of haproxy's clock.
var hapOrigin = algorithms.FromTime(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))

const hms = algorithms.Time(1000) // a ms in µs

func mustHAProxy(t interface{ Fatal(...any) }, n int64, window time.Duration, origin algorithms.Time) *peers.HAProxyReqRate {
	h, err := peers.NewHAProxyReqRate(algorithms.Params{Rate: algorithms.Rate{N: n, Per: window}, Window: window, Origin: origin})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// hstep is one request of a table: at ms after Time 0, its cost, and what
// haproxy's arithmetic says of it. rate is sc_http_req_rate read just after
// it (what its last hit read, for a cost of 1 or more); remaining and
// retry are checked when not negative.
type hstep struct {
	atMs      int64
	cost      int64
	ok        bool
	rate      int64
	remaining int64
	retry     time.Duration
}

func runHAProxy(t *testing.T, h *peers.HAProxyReqRate, st algorithms.State, steps []hstep) algorithms.State {
	t.Helper()
	for i, s := range steps {
		at := algorithms.Time(s.atMs) * hms
		var d algorithms.Decision
		st, d = h.Step(st, at, s.cost)
		rate := h.Rate(st, at)
		if d.Allowed != s.ok || rate != s.rate || d.Limit != h.Limit() {
			t.Fatalf("step %d (t=%dms cost=%d): allowed %v rate %d (%+v), want %v rate %d", i, s.atMs, s.cost, d.Allowed, rate, d, s.ok, s.rate)
		}
		if s.remaining >= 0 && d.Remaining != s.remaining {
			t.Fatalf("step %d (t=%dms): remaining %d, want %d", i, s.atMs, d.Remaining, s.remaining)
		}
		if s.retry >= 0 && d.RetryAfter != s.retry {
			t.Fatalf("step %d (t=%dms): retry after %v, want %v", i, s.atMs, d.RetryAfter, s.retry)
		}
	}
	return st
}

// burst is n unit requests at atMs on a new key with N = 20: they read
// 1 … n, each counted, and the first 20 pass; the k-th refused waits
// retry(k).
func burst(atMs, n int64, retry func(k int64) time.Duration) []hstep {
	var steps []hstep
	for k := int64(1); k <= n; k++ {
		s := hstep{atMs: atMs, cost: 1, ok: k <= 20, rate: k, remaining: max(20-k, 0), retry: 0}
		if !s.ok {
			s.retry = retry(k)
		}
		steps = append(steps, s)
	}
	return steps
}

// TestHAProxySourceArithmetic replays sequences whose every figure is worked
// out by hand from the lines cited above, with N = 20 and P = 10 s (2/s over
// 10s) unless said otherwise.
func TestHAProxySourceArithmetic(t *testing.T) {
	ms := time.Millisecond
	// After k hits at ms 0 the period [0, 10s) has curr = k. A unit
	// request passes in the next one, at t = 10s + s, when its
	// 1 + ⌊k × (10000 − s) / 10000⌋ ≤ 20, i.e. k × (10000 − s) < 200000.
	retryAfterBurst := func(k int64) time.Duration {
		rMax := (200000+k-1)/k - 1 // the largest remain with k × remain < 200000
		return time.Duration(20000-rMax) * ms
	}
	t.Run("a burst of 30 passes 20", func(t *testing.T) {
		h := mustHAProxy(t, 20, 10*time.Second, hapOrigin)
		st := runHAProxy(t, h, algorithms.State{}, burst(0, 30, retryAfterBurst))
		// The 21st waits 10477 ms (remain 9523: 21 × 9523 = 199983),
		// the 30th 13334 ms (remain 6666).
		if got := retryAfterBurst(21); got != 10477*ms {
			t.Fatalf("retryAfterBurst(21) = %v", got)
		}
		if st.T != 0 || st.N != 30 || st.Prev != 0 {
			t.Fatalf("state %+v, want the period at 0 with 30 hits", st)
		}
	})
	t.Run("after 21 at once, 1/s is refused until 16s", func(t *testing.T) {
		h := mustHAProxy(t, 20, 10*time.Second, hapOrigin)
		steps := burst(0, 21, retryAfterBurst)
		// 1..9 s: the same period, curr 22..30, prev 0.
		for s := int64(1); s <= 9; s++ {
			steps = append(steps, hstep{atMs: s * 1000, cost: 1, rate: 21 + s, remaining: 0, retry: -1})
		}
		// 10 s rotates: prev = 30 (the refused hits too), curr = 1,
		// tick = 10000; then curr + ⌊30 × (20000 − t) / 10000⌋.
		for i, rate := range []int64{31, 29, 27, 25, 23} {
			steps = append(steps, hstep{atMs: int64(10+i) * 1000, cost: 1, rate: rate, remaining: 0, retry: -1})
		}
		// 15 s: 6 + 15 = 21. With curr 6 a unit request passes once
		// 7 + ⌊3 × (20000 − t) / 1000⌋ ≤ 20: t ≥ 15334, 334 ms later.
		steps = append(steps, hstep{atMs: 15000, cost: 1, rate: 21, remaining: 0, retry: 334 * ms},
			hstep{atMs: 16000, cost: 1, ok: true, rate: 19, remaining: 1},
			hstep{atMs: 17000, cost: 1, ok: true, rate: 17, remaining: 3},
			hstep{atMs: 18000, cost: 1, ok: true, rate: 15, remaining: 5},
			hstep{atMs: 19000, cost: 1, ok: true, rate: 13, remaining: 7},
			// 20 s rotates again: prev = 10 (10 s to 19 s), curr = 1.
			hstep{atMs: 20000, cost: 1, ok: true, rate: 11, remaining: 9},
			hstep{atMs: 21000, cost: 1, ok: true, rate: 11, remaining: 9})
		runHAProxy(t, h, algorithms.State{}, steps)
	})
	t.Run("a steady 25 per 10s is refused for as long as it lasts", func(t *testing.T) {
		// One every 400 ms: #0..#19 pass (t = 0 … 7.6 s, rate 1..20),
		// and every later one is refused, 60 s on: each period holds 25
		// hits, refused ones included, and reads 25 or 26.
		h := mustHAProxy(t, 20, 10*time.Second, hapOrigin)
		var st algorithms.State
		for i := int64(0); i <= 150; i++ {
			var d algorithms.Decision
			st, d = h.Step(st, algorithms.Time(i*400)*hms, 1)
			if d.Allowed != (i < 20) {
				t.Fatalf("request %d at %d ms: allowed %v (rate %d)", i, i*400, d.Allowed, h.Rate(st, algorithms.Time(i*400)*hms))
			}
			if rate := h.Rate(st, algorithms.Time(i*400)*hms); i >= 25 && (rate < 24 || rate > 26) {
				t.Fatalf("request %d: rate %d, want about 25", i, rate)
			}
		}
	})
	t.Run("a gap of 2 periods starts afresh, a shorter one does not", func(t *testing.T) {
		// 20 at 0 (tick 0, curr 20); then a burst of 20 at 12 s reads
		// k + ⌊20 × 8000 / 10000⌋ = k + 16: 4 pass; at 19.5 s k + 1: 19;
		// at 20 s the period started 2P ago: a new entry, 20 pass.
		h := mustHAProxy(t, 20, 10*time.Second, hapOrigin)
		for _, c := range []struct{ atMs, pass int64 }{{12000, 4}, {19500, 19}, {19999, 20}, {20000, 20}, {45000, 20}} {
			st := runHAProxy(t, h, algorithms.State{}, burst(0, 20, nil))
			passed := int64(0)
			for range 20 {
				var d algorithms.Decision
				if st, d = h.Step(st, algorithms.Time(c.atMs)*hms, 1); d.Allowed {
					passed++
				}
			}
			if passed != c.pass {
				t.Errorf("a burst of 20 at %d ms after 20 at 0: %d passed, want %d", c.atMs, passed, c.pass)
			}
		}
	})
	t.Run("the period starts on an even ms", func(t *testing.T) {
		// 21 at ms X. At an even X the period is [X, X+10s); at an odd
		// X it is [X−1, X+9999): everything happens 1 ms earlier. A unit
		// request in the next period passes once 1 + ⌊21 × remain / P⌋
		// ≤ 20, remain ≤ 9523: at X + 10477 ms, or X + 10476 for an odd X.
		for _, c := range []struct {
			name   string
			origin algorithms.Time
			wait   int64
		}{{"even", hapOrigin, 10477}, {"odd", hapOrigin + hms, 10476}, {"odd, 999 µs in", hapOrigin + hms + 999, 10476}} {
			h := mustHAProxy(t, 20, 10*time.Second, c.origin)
			st := runHAProxy(t, h, algorithms.State{}, burst(0, 20, nil))
			st, d := h.Step(st, 0, 1)
			// The wait is to the start of the ms, from Time 0 (which is
			// 999 µs into its ms in the third case).
			want := time.Duration(c.wait)*ms - time.Duration(int64(c.origin)%1000)*time.Microsecond
			if d.Allowed || d.RetryAfter != want {
				t.Errorf("%s: the 21st got %+v, want refused with RetryAfter %v", c.name, d, want)
			}
			if odd := c.origin != hapOrigin; (st.T == 0) == odd {
				t.Errorf("%s: the period starts at T = %d µs", c.name, st.T)
			}
			if _, early := h.Step(st, algorithms.At(want)-1, 1); early.Allowed {
				t.Errorf("%s: a request 1 µs before RetryAfter passed", c.name)
			}
			if _, then := h.Step(st, algorithms.At(want), 1); !then.Allowed {
				t.Errorf("%s: a request at RetryAfter was refused: %+v", c.name, then)
			}
		}
	})
	t.Run("a new entry just after the uint32 clock wraps", func(t *testing.T) {
		// A new entry's curr_tick is 0. First hit 5 s after global_now_ms
		// wrapped: now − 0 < P, so it counts in [wrap, wrap + 10s). 15 s
		// after the wrap: now − 0 in [P, 2P), one rotation to tick P. A
		// key hit 20 at 0 and 20 at 15 s then passes all 40 (the second
		// burst finds a period that started 2P before), where one first
		// hit far from a wrap passes 20 + 10 (k + ⌊20 × 5000 / 10000⌋).
		wrap := algorithms.Time((418 << 32) * 1000) // Unix ms 418 × 2^32: 2026-11-21 21:25:29.728 UTC
		for _, c := range []struct {
			name   string
			origin algorithms.Time
			tickUs int64
			pass   int64
		}{{"5s after a wrap", wrap + 5000*hms, -5_000_000, 40}, {"15s after a wrap", wrap + 15000*hms, -5_000_000, 40}, {"far from one", hapOrigin, 0, 30}} {
			h := mustHAProxy(t, 20, 10*time.Second, c.origin)
			var st algorithms.State
			passed := int64(0)
			for i := range 40 {
				at := algorithms.Time(0)
				if i >= 20 {
					at = 15000 * hms
				}
				var d algorithms.Decision
				if st, d = h.Step(st, at, 1); d.Allowed {
					passed++
				}
				if i == 0 && st.T != c.tickUs {
					t.Errorf("%s: the first hit's period starts at T = %d µs, want %d", c.name, st.T, c.tickUs)
				}
			}
			if passed != c.pass {
				t.Errorf("%s: %d of 20 + 20 passed, want %d", c.name, passed, c.pass)
			}
		}
	})
	t.Run("cost is that many requests at one ms, all counted", func(t *testing.T) {
		h := mustHAProxy(t, 20, 10*time.Second, hapOrigin)
		runHAProxy(t, h, algorithms.State{}, []hstep{
			{atMs: 0, cost: 0, ok: true, rate: 0, remaining: 20, retry: 0},
			{atMs: 0, cost: 15, ok: true, rate: 15, remaining: 5, retry: 0},
			// Six more: the first five would pass, the sixth reads 21;
			// all six are counted. Cost 6 then passes once
			// 6 + ⌊21 × remain / P⌋ ≤ 20, remain ≤ 7142: at 12858 ms.
			{atMs: 0, cost: 6, ok: false, rate: 21, remaining: 0, retry: 12858 * ms},
			{atMs: 0, cost: 0, ok: true, rate: 21, remaining: 0, retry: 0},
			{atMs: 12857, cost: 0, ok: true, rate: 15, remaining: 5, retry: 0},
			// A cost above N reads at least cost: never.
			{atMs: 12857, cost: 21, ok: false, rate: 36, remaining: 0, retry: algorithms.Never},
		})
		runHAProxy(t, h, algorithms.State{}, []hstep{{atMs: 7, cost: 20, ok: true, rate: 20, remaining: 0}})
	})
	t.Run("a read does not rotate, and corrects flapping", func(t *testing.T) {
		// One hit at 0. At 15 s remain = −5000 + P ≥ 0: past = curr = 1,
		// curr = 0, and past ≤ 1 reads 1, not ⌊1 × 5000 / P⌋ = 0; at
		// exactly 20 s remain = 0 still reads 1; after, 0. Two hits:
		// ⌊2 × 5000 / P⌋ = 1 at 15 s, ⌊2 × 3000 / P⌋ = 0 at 17 s.
		h := mustHAProxy(t, 20, 10*time.Second, hapOrigin)
		one, _ := h.Step(algorithms.State{}, 0, 1)
		two, _ := h.Step(one, 0, 1)
		for _, c := range []struct {
			st     algorithms.State
			atMs   int64
			rate   int64
			reset  time.Duration
			remain int64
		}{{one, 15000, 1, 5000 * ms, 20}, {one, 20000, 1, 0, 20}, {one, 20001, 0, 0, 20}, {two, 15000, 1, 5000 * ms, 19}, {two, 17000, 0, 3000 * ms, 20}} {
			if got := h.Rate(c.st, algorithms.Time(c.atMs)*hms); got != c.rate {
				t.Errorf("%d hits at 0, read at %d ms: %d, want %d", c.st.N, c.atMs, got, c.rate)
			}
			next, d := h.Step(c.st, algorithms.Time(c.atMs)*hms, 0)
			if !d.Allowed || d.ResetAfter != c.reset || d.Remaining != c.remain || !sameState(next, c.st) {
				t.Errorf("%d hits at 0, peek at %d ms: %+v, want reset %v remaining %d and no write", c.st.N, c.atMs, d, c.reset, c.remain)
			}
		}
	})
}

// TestHAProxyReplaysRealAnswers feeds the model the instants of the 305
// requests a real haproxy 2.6.12 answered (testdata/README.md) and wants
// every 200 and 429 back. The instants are the client's Unix ms mod 2^32,
// which is haproxy's global_now_ms up to the ms the request took to reach
// it (none of these was that close to a boundary): Time is those ms, with
// Origin 0, which keeps the parity of the Unix ms.
func TestHAProxyReplaysRealAnswers(t *testing.T) {
	f, err := os.Open("testdata/haproxy-2.6.12-exp2.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := mustHAProxy(t, 20, 10*time.Second, 0)
	var counts tally
	keys := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		key := fields[0]
		ms, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		keys++
		var st algorithms.State
		for i, tok := range fields[2:] {
			gap, err := strconv.ParseInt(tok[:len(tok)-1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			ms += gap
			real200 := tok[len(tok)-1] == '+'
			var d algorithms.Decision
			st, d = h.Step(st, algorithms.Time(ms)*hms, 1)
			if d.Allowed != real200 {
				t.Errorf("%s #%d at ms %d: model allowed %v (rate %d), haproxy answered 200: %v", key, i, ms, d.Allowed, h.Rate(st, algorithms.Time(ms)*hms), real200)
			}
			counts.add(1, d.Allowed)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if got := counts.admitted + counts.refused; keys != 4 || got != 305 {
		t.Fatalf("replayed %d keys, %d requests; want 4 and 305", keys, got)
	}
	counts.check(t, "haproxy 2.6.12's answers")
}

// cFreqCtr is struct freq_ctr with update_freq_ctr_period(+1) and
// read_freq_ctr_period transcribed line for line, in uint32 as haproxy
// computes: the oracle of TestHAProxyMatchesTheC. It keeps an entry
// forever (no expire) and re-anchors after two periods, as the C does.
type cFreqCtr struct{ tick, curr, prev uint32 }

func (f *cFreqCtr) update(now, period uint32) {
	if now-f.tick < period {
		f.curr++
		return
	}
	f.prev, f.curr = f.curr, 1
	tick := f.tick + period
	if now-tick >= period {
		f.prev = 0
		tick = now
	}
	f.tick = tick &^ 1
}

func (f *cFreqCtr) read(now, period uint32) uint32 {
	remain := int64(int32(f.tick + period - now))
	curr, past := uint64(f.curr), uint64(f.prev)
	if remain < 0 {
		remain += int64(period)
		past = 0
		if remain >= 0 {
			past = curr
		}
		curr = 0
	}
	if curr == 0 && past <= 1 {
		return uint32(past)
	}
	return uint32((past*uint64(remain) + curr*uint64(period)) / uint64(period))
}

// genHAProxy draws N, an even period P (short ones often, so that periods
// turn), and an Origin at any µs, its ms at least 2P and at most 2^31 after
// a uint32 wrap, where the C's re-anchoring and the model's new entry are
// the same state.
func genHAProxy(t *rapid.T) (h *peers.HAProxyReqRate, n, period int64, origin algorithms.Time) {
	n = rapid.Int64Range(1, 40).Draw(t, "N")
	period = 2 * rapid.OneOf(rapid.Int64Range(1, 50), rapid.Int64Range(1, 5000)).Draw(t, "P/2")
	wrap := rapid.Int64Range(300, 500).Draw(t, "wraps") << 32
	origin = algorithms.Time((wrap+2*period)*1000 + rapid.Int64Range(0, 1<<30).Draw(t, "origin µs"))
	return mustHAProxy(t, n, time.Duration(period)*time.Millisecond, origin), n, period, origin
}

// genHAProxyArrivals draws nondecreasing instants (haproxy's clock never
// goes back) with ties, gaps within a period, and gaps of one or two.
func genHAProxyArrivals(t *rapid.T, period int64, count int) []algorithms.Time {
	now := algorithms.Time(0)
	at := make([]algorithms.Time, count)
	p := period * 1000
	for i := range at {
		now += algorithms.Time(rapid.OneOf(
			rapid.Just(int64(0)),
			rapid.Int64Range(1, max(p/20, 1)),
			rapid.Int64Range(1, p),
			rapid.Int64Range(p-1000, 2*p+1000),
		).Draw(t, "gap"))
		at[i] = now
	}
	return at
}

// TestHAProxyMatchesTheC drives the model and the C transcription with the
// same instants: each request of cost c is c updates and reads in the C,
// and the model admits it exactly when the C passes all c. The counters
// (curr_tick's 32 bits, curr_ctr, prev_ctr) and the rate read just after
// must be the same.
func TestHAProxyMatchesTheC(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h, n, period, origin := genHAProxy(t)
		var st algorithms.State
		var c cFreqCtr
		for i, at := range genHAProxyArrivals(t, period, rapid.IntRange(1, 200).Draw(t, "count")) {
			cost := rapid.SampledFrom([]int64{0, 1, 1, 1, 2, 3, n + 1}).Draw(t, "cost")
			now := uint32((int64(origin) + int64(at)) / 1000)
			all := true
			for range cost {
				c.update(now, uint32(period))
				all = all && int64(c.read(now, uint32(period))) <= n
			}
			var d algorithms.Decision
			st, d = h.Step(st, at, cost)
			if d.Allowed != all {
				t.Fatalf("request %d (cost %d, t=%dµs): model allowed %v, the C passed all: %v (C %+v, model %+v)", i, cost, at, d.Allowed, all, c, st)
			}
			tick := uint32((int64(origin) + st.T) / 1000)
			if st.N != 0 && (tick != c.tick || st.N != int64(c.curr) || st.Prev != int64(c.prev)) {
				t.Fatalf("request %d: model state %+v (tick %d), C %+v", i, st, tick, c)
			}
			if got, want := h.Rate(st, at), int64(c.read(now, uint32(period))); got != want {
				t.Fatalf("request %d: model reads %d, C %d", i, got, want)
			}
		}
	})
}

// TestHAProxyPropertyDerivedFigures checks Remaining, RetryAfter and
// ResetAfter against brute force at every ms: Remaining unit requests
// pass at the same ms and one more does not; a refused request passes
// at RetryAfter and at no earlier ms; from ResetAfter on the key decides
// as a new one.
func TestHAProxyPropertyDerivedFigures(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h, n, period, origin := genHAProxy(t)
		period = min(period, 400) // the brute force tries every ms of 2P
		h = mustHAProxy(t, n, time.Duration(period)*time.Millisecond, origin)
		var st algorithms.State
		for i, at := range genHAProxyArrivals(t, period, rapid.IntRange(1, 60).Draw(t, "count")) {
			cost := rapid.SampledFrom([]int64{0, 1, 1, 2, n, n + 1}).Draw(t, "cost")
			next, d := h.Step(st, at, cost)
			if d.Limit != n || d.Remaining < 0 || d.Remaining > n {
				t.Fatalf("request %d: %+v", i, d)
			}
			probe := next
			for k := range d.Remaining {
				var pd algorithms.Decision
				if probe, pd = h.Step(probe, at, 1); !pd.Allowed {
					t.Fatalf("request %d: remaining %d, but unit %d at the same instant was refused", i, d.Remaining, k+1)
				}
			}
			if _, pd := h.Step(probe, at, 1); pd.Allowed {
				t.Fatalf("request %d: remaining %d, but one more passed", i, d.Remaining)
			}
			// The start of each ms from now on, on Time's scale.
			msStart := func(k int64) algorithms.Time {
				return algorithms.Time(((int64(origin)+int64(at))/1000+k)*1000 - int64(origin))
			}
			if !d.Allowed {
				if cost > n {
					if d.RetryAfter != algorithms.Never {
						t.Fatalf("request %d: cost %d > N refused with RetryAfter %v", i, cost, d.RetryAfter)
					}
				} else {
					first := int64(-1)
					for k := int64(1); k <= 2*period+1 && first < 0; k++ {
						if _, pd := h.Step(next, msStart(k), cost); pd.Allowed {
							first = k
						}
					}
					if want := (msStart(first) - at).Duration(); first < 0 || d.RetryAfter != want {
						t.Fatalf("request %d (cost %d): RetryAfter %v, the first ms that passes is %d ms on (%v)", i, cost, d.RetryAfter, first, want)
					}
				}
			}
			reset := at + algorithms.At(d.ResetAfter)
			later := reset + algorithms.Time(rapid.Int64Range(0, 3*period*1000).Draw(t, "later"))
			c := rapid.Int64Range(0, n+1).Draw(t, "cost after reset")
			n1, d1 := h.Step(next, later, c)
			n0, d0 := h.Step(algorithms.State{}, later, c)
			if d1 != d0 || (c > 0 && !sameState(n1, n0)) {
				t.Fatalf("request %d: after ResetAfter %v the key decides %+v %+v, a new key %+v %+v", i, d.ResetAfter, d1, n1, d0, n0)
			}
			if next.N != 0 && d.ResetAfter > 0 {
				// The ms before: a hit there still rotates the old period.
				before, _ := h.Step(next, reset-1, 1)
				fresh, _ := h.Step(algorithms.State{}, reset-1, 1)
				if sameState(before, fresh) {
					t.Fatalf("request %d: ResetAfter %v, but 1µs before a hit already starts afresh", i, d.ResetAfter)
				}
			}
			st = next
		}
	})
}

// What the estimate bounds, derived from the arithmetic: curr counts every
// hit of a period and the rate is at least curr, so a period (one value of
// State.T) admits at most N; a window of P overlaps two periods of a grid
// (and a new grid starts 2P after the last period's start), so at most 2N
// in any window of P. And a key hit every g ≤ P/(N+1) ms, refused hits
// counted, reads at least ⌊P/g⌋ > N once a whole period of its hits lies
// behind the current one: from 2P after its first hit, nothing passes.
func TestHAProxyPropertyBounds(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h, n, period, _ := genHAProxy(t)
		type adm struct {
			at   algorithms.Time
			cost int64
		}
		var admitted []adm
		perPeriod := map[int64]int64{}
		var st algorithms.State
		for _, at := range genHAProxyArrivals(t, period, rapid.IntRange(1, 300).Draw(t, "count")) {
			cost := rapid.SampledFrom([]int64{1, 1, 1, 2, 3}).Draw(t, "cost")
			var d algorithms.Decision
			st, d = h.Step(st, at, cost)
			if !d.Allowed {
				continue
			}
			perPeriod[st.T] += cost
			if perPeriod[st.T] > n {
				t.Fatalf("the period at %d µs admitted %d > N = %d", st.T, perPeriod[st.T], n)
			}
			admitted = append(admitted, adm{at, cost})
		}
		// Any window of P ms of haproxy's clock: [m, m + P) for the ms m
		// of each admission.
		msOf := func(at algorithms.Time) int64 { return (int64(h.Params().Origin) + int64(at)) / 1000 }
		for i := range admitted {
			sum := int64(0)
			for j := i; j < len(admitted) && msOf(admitted[j].at) < msOf(admitted[i].at)+period; j++ {
				sum += admitted[j].cost
			}
			if sum > 2*n {
				t.Fatalf("%d admitted within %d ms from %d µs, over 2N = %d", sum, period, admitted[i].at, 2*n)
			}
		}

		// A steady stream over N per period: every g ms, g ≤ P/(N+1).
		g := rapid.Int64Range(1, max(period/(n+1), 1)).Draw(t, "g")
		if period/g <= n {
			return // no g ≥ 1 ms puts more than N in a period
		}
		start := algorithms.Time(rapid.Int64Range(0, 1000).Draw(t, "stream start")) * hms
		st = algorithms.State{}
		for k := int64(0); k*g <= 4*period; k++ {
			var d algorithms.Decision
			st, d = h.Step(st, start+algorithms.Time(k*g)*hms, 1)
			if d.Allowed && k*g >= 2*period {
				t.Fatalf("a key hit every %d ms (P = %d, N = %d) passed at %d ms", g, period, n, k*g)
			}
		}
	})
}

// haproxy's quirk beside ratelim's sliding window with the same numbers:
// after 21 at once and then one a second, with 20 per 10s, the sliding
// window (which counts admissions only, its windows on the clock) lets the
// key through again at 11 s; haproxy, whose estimate carries the refused
// hits into the next period, at 16 s.
func TestHAProxyQuirkRefusedHitsCarryOver(t *testing.T) {
	rate := algorithms.Rate{N: 2, Per: time.Second}
	h := mustHAProxy(t, 20, 10*time.Second, hapOrigin)
	sw, err := algorithms.NewSlidingWindow(rate, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	firstPassAfterBurst := func(alg algorithms.Algorithm) int64 {
		var st algorithms.State
		for range 21 {
			st, _ = alg.Step(st, 0, 1)
		}
		for s := int64(1); s <= 30; s++ {
			var d algorithms.Decision
			if st, d = alg.Step(st, algorithms.Time(s)*ns1, 1); d.Allowed {
				return s
			}
		}
		return -1
	}
	for _, c := range []struct {
		alg  algorithms.Algorithm
		want int64
	}{{h, 16}, {sw.WithOrigin(hapOrigin), 11}} {
		got := firstPassAfterBurst(c.alg)
		t.Logf("%-22s: after 21 at once, 1/s passes again at %d s", c.alg.Name(), got)
		if got != c.want {
			t.Errorf("%s: passes again at %d s, want %d s", c.alg.Name(), got, c.want)
		}
	}
}

func TestHAProxyParamErrors(t *testing.T) {
	r := func(n int64, per time.Duration) algorithms.Rate { return algorithms.Rate{N: n, Per: per} }
	tests := []struct {
		name  string
		p     algorithms.Params
		param string
		msg   string
	}{
		{"zero rate", algorithms.Params{Window: time.Second}, "rate", "must be positive"},
		{"no window", algorithms.Params{Rate: r(10, time.Second)}, "window", "at least 1µs"},
		{"a µs window", algorithms.Params{Rate: r(10, time.Millisecond), Window: 1500 * time.Microsecond}, "window", "not a whole number of ms"},
		{"1 ms", algorithms.Params{Rate: r(10, time.Millisecond), Window: time.Millisecond}, "window", "at least 2ms"},
		{"odd ms", algorithms.Params{Rate: r(10, time.Second), Window: 1001 * time.Millisecond}, "window", "odd number of ms"},
		{"2^31 ms", algorithms.Params{Rate: r(1, 24*time.Hour), Window: (1 << 31) * time.Millisecond}, "window", "2^31 ms"},
		{"a limit haproxy's uint32 rate never exceeds", algorithms.Params{Rate: r(1<<32, 2*time.Millisecond), Window: 2 * time.Millisecond}, "rate", "uint32"},
	}
	for _, tt := range tests {
		_, err := peers.NewHAProxyReqRate(tt.p)
		var pe *algorithms.ParamError
		if !errors.As(err, &pe) || pe.Param != tt.param || !strings.Contains(pe.Msg, tt.msg) {
			t.Errorf("%s: NewHAProxyReqRate(%+v) = %v, want a ParamError on %q containing %q", tt.name, tt.p, err, tt.param, tt.msg)
		}
	}
	for _, p := range []algorithms.Params{
		{Rate: r(2, time.Second), Window: 10 * time.Second},
		{Rate: r(1, time.Millisecond), Window: 2 * time.Millisecond},
		{Rate: r(1, 24*time.Hour), Window: 2147483646 * time.Millisecond, Origin: 99},
		{Rate: r(4294967294, 2*time.Millisecond), Window: 2 * time.Millisecond},
	} {
		h, err := algorithms.New("haproxy-req-rate", p)
		if err != nil {
			t.Errorf("New(%+v): %v", p, err)
			continue
		}
		if h.Params() != p {
			t.Errorf("Params() = %+v, want %+v", h.Params(), p)
		}
	}
}

// TestHAProxyEdges: the zero value, and inputs at the ends of int64, neither
// panic nor break the contract.
func TestHAProxyEdges(t *testing.T) {
	var zero peers.HAProxyReqRate
	if _, d := zero.Step(algorithms.State{}, 0, 1); d.Allowed || d.RetryAfter != algorithms.Never {
		t.Errorf("zero value admitted %+v", d)
	}
	if zero.Name() != "haproxy-req-rate" || zero.Rate(algorithms.State{N: 3}, 0) != 0 {
		t.Errorf("zero value: %q", zero.Name())
	}
	h := mustHAProxy(t, 20, 10*time.Second, hapOrigin)
	states := []algorithms.State{{}, {T: 0, N: 5, Prev: 7}, {T: math.MaxInt64 / 2, N: math.MaxUint32, Prev: math.MaxUint32}, {T: math.MinInt64 / 2, N: 1}}
	for _, st := range states {
		for _, now := range []algorithms.Time{0, 1, math.MaxInt64 / 2, math.MinInt64 / 2, -61 * ns1} {
			for _, cost := range []int64{-3, 0, 1, 20, 21, math.MaxInt64} {
				next, d := h.Step(st, now, cost)
				if d.RetryAfter < 0 || d.ResetAfter < 0 || d.Remaining < 0 || d.Remaining > 20 || (d.Allowed && d.RetryAfter != 0) {
					t.Errorf("Step(%+v, %d, %d) = %+v", st, now, cost, d)
				}
				if cost <= 0 && (!sameState(next, st) || !d.Allowed) {
					t.Errorf("Step(%+v, %d, %d): a peek wrote %+v or refused %+v", st, now, cost, next, d)
				}
				if next.N > math.MaxUint32 || next.Prev > math.MaxUint32 {
					t.Errorf("Step(%+v, %d, %d): counters over a uint32: %+v", st, now, cost, next)
				}
			}
		}
	}
	// A cost of MaxInt64 saturates the counter, and is refused for good.
	next, d := h.Step(algorithms.State{}, 0, math.MaxInt64)
	if d.Allowed || d.RetryAfter != algorithms.Never || next.N != math.MaxUint32 || h.Rate(next, 0) != math.MaxUint32 {
		t.Errorf("cost MaxInt64: %+v, %+v", next, d)
	}
}
