package algorithms

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// chargeable are the kinds a charge property runs over: the six exact
// algorithms and a Multi of them.
func chargeable() []string { return append(ExactNames(), "multi") }

func genCharger(t *rapid.T, name string) Algorithm {
	if name == "multi" {
		return genMulti(t)
	}
	return genAny(t, name)
}

// asCharger is AsCharger for a test that knows alg is one.
func asCharger(t interface{ Fatalf(string, ...any) }, alg Algorithm) Charger {
	c, ok := AsCharger(alg)
	if !ok {
		t.Fatalf("%s is not a Charger", alg.Name())
	}
	return c
}

// buildState moves a key through a drawn sequence of requests, each
// stepped or charged (a synced key's shared copy sees both), and returns
// the state with the latest instant any of them was at, or 0 if later:
// every state's own instant is at or before it, except a bucket's TAT,
// which is ahead. (0 because the zero State of a window counter, with
// Origin 0, is the window from 0: a clock stepped back before it counts
// in it, a charge there is dropped as in an earlier window.)
func buildState(t *rapid.T, alg Algorithm) (State, Time) {
	c := asCharger(t, alg)
	var st State
	latest := Time(0)
	for _, r := range genRequests(t, rapid.Bool().Draw(t, "backwards")) {
		if rapid.IntRange(0, 3).Draw(t, "charge?") == 0 {
			st = c.Charge(st, r.at, r.cost*rapid.Int64Range(1, 5).Draw(t, "charge times"))
		} else {
			st, _ = alg.Step(st, r.at, r.cost)
		}
		latest = max(latest, r.at)
	}
	return st, latest
}

// TestPropertyChargeIsStepWhenStepAdmits: whenever Step admits a request,
// Charge of the same request returns exactly Step's new state, log and
// sub-states included, from states that steps and charges built. now is
// at or after every instant the state saw (a clock gone backwards is
// where Step and Charge differ for the windows and the log), and for the
// bucket algorithms, whose rule for an earlier now is Step's, also
// before.
func TestPropertyChargeIsStepWhenStepAdmits(t *testing.T) {
	for _, name := range chargeable() {
		t.Run(name, rapid.MakeCheck(func(t *rapid.T) {
			alg := genCharger(t, name)
			c := asCharger(t, alg)
			prev, latest := buildState(t, alg)
			lo := int64(0)
			switch name {
			case "token-bucket", "gcra", "leaky-bucket":
				lo = -3_000_000
			}
			for i := range 8 {
				now := latest + Time(rapid.Int64Range(lo, 3_000_000).Draw(t, "after latest"))
				cost := rapid.Int64Range(-1, 4).Draw(t, "cost")
				want, d := alg.Step(prev, now, cost)
				if !d.Allowed {
					continue
				}
				if got := c.Charge(prev, now, cost); !reflect.DeepEqual(got, want) {
					t.Fatalf("try %d: from %+v, Step admits cost %d at %d to %+v, Charge counts it to %+v", i, prev, cost, now, want, got)
				}
			}
		}))
	}
}

// chargeCapacity is how much a drawn exact algorithm admits at once from
// the zero state: its burst, or its limit per window.
func chargeCapacity(alg Algorithm) int64 {
	if l, ok := alg.(limited); ok {
		return l.Limit()
	}
	return alg.Params().Burst
}

// TestPropertyChargesAccumulateBeyondCapacity: k ≥ 2 capacities charged
// at one instant, in one charge or in k, are all counted. At that
// instant a unit request is refused, and so is a peek (the state is over
// its limit), with Remaining 0. Afterwards a unit request is admitted
// again exactly when the excess has drained, and refused a microsecond
// before:
//
//   - the buckets (token bucket, GCRA, leaky bucket), Rate = n per p µs,
//     burst b: after ceil(((k−1)·b + 1)·p / n) µs, the k·b − b tokens of
//     excess and the one the request takes refilled;
//   - the fixed window: at the start of the next window (its count then
//     starts again from zero: the excess refuses the rest of the window);
//   - the sliding window, limit L, window w from T: at T + w + e, e = w −
//     floor((L−1)·w / (k·L)), when the previous window's k·L weighted by
//     (w − e)/w leaves room for one: the excess fades through the next
//     window, where a count of L would allow a request at once;
//   - the sliding log: one window after the instant, when all of it
//     leaves the window together.
func TestPropertyChargesAccumulateBeyondCapacity(t *testing.T) {
	for _, name := range ExactNames() {
		t.Run(name, rapid.MakeCheck(func(t *rapid.T) {
			alg := genAny(t, name)
			c := asCharger(t, alg)
			capacity := chargeCapacity(alg)
			k := rapid.Int64Range(2, 5).Draw(t, "k")
			at := Time(rapid.Int64Range(0, 1_000_000_000).Draw(t, "at"))
			var st State
			if rapid.Bool().Draw(t, "one charge") {
				st = c.Charge(st, at, k*capacity)
			} else {
				for range k {
					st = c.Charge(st, at, capacity)
				}
			}
			for _, cost := range []int64{1, 0} {
				if _, d := alg.Step(st, at, cost); d.Allowed || d.Remaining != 0 || d.RetryAfter <= 0 {
					t.Fatalf("%d × %d charged at %d (state %+v): a request of cost %d decided %+v, want refused with Remaining 0 and a wait", k, capacity, at, st, cost, d)
				}
			}
			p := alg.Params()
			var admitAt Time
			switch name {
			case "token-bucket", "gcra", "leaky-bucket":
				per := int64(p.Rate.Per / time.Microsecond)
				admitAt = at + Time(ceilDiv(((k-1)*p.Burst+1)*per, p.Rate.N))
			case "fixed-window":
				admitAt = Time(windowStart(0, at, windowMicros(alg)) + windowMicros(alg))
			case "sliding-window":
				w, limit := windowMicros(alg), capacity
				admitAt = Time(windowStart(0, at, w) + w + w - (limit-1)*w/(k*limit))
			case "sliding-log":
				admitAt = at + Time(windowMicros(alg))
			}
			if _, d := alg.Step(st, admitAt-1, 1); d.Allowed {
				t.Fatalf("%d × %d charged at %d: a unit request admitted at %d, before the excess drained (%d)", k, capacity, at, admitAt-1, admitAt)
			}
			if _, d := alg.Step(st, admitAt, 1); !d.Allowed {
				t.Fatalf("%d × %d charged at %d: a unit request refused at %d, when the excess has drained: %+v", k, capacity, at, admitAt, d)
			}
		}))
	}
}

// TestPropertyStepReadsAChargedState: on states that charges of any cost,
// up to math.MaxInt64, carried beyond capacity, Step's decisions stay
// within their bounds: Remaining in [0, Limit], no negative wait, a wait
// on every refusal of a positive cost; the sliding log keeps at most
// Limit + 1 instants, and the counts stay under their ceilings.
func TestPropertyStepReadsAChargedState(t *testing.T) {
	for _, name := range ExactNames() {
		t.Run(name, rapid.MakeCheck(func(t *rapid.T) {
			alg := genAny(t, name)
			c := asCharger(t, alg)
			var st State
			for i, r := range genRequests(t, rapid.Bool().Draw(t, "backwards")) {
				if rapid.IntRange(0, 2).Draw(t, "charge?") == 0 {
					cost := rapid.OneOf(rapid.Int64Range(0, 1000), rapid.Just(int64(math.MaxInt64))).Draw(t, "charge")
					st = c.Charge(st, r.at, cost)
					checkCeiling(t, alg, st)
				}
				var d Decision
				st, d = alg.Step(st, r.at, r.cost)
				if d.Remaining < 0 || d.Remaining > d.Limit || d.RetryAfter < 0 || d.ResetAfter < 0 || d.Delay < 0 {
					t.Fatalf("request %d (%+v) on a charged state: %+v", i, r, d)
				}
				if !d.Allowed && r.cost > 0 && d.RetryAfter == 0 {
					t.Fatalf("request %d (%+v) refused with no Retry-After: %+v", i, r, d)
				}
			}
		}))
	}
}

// checkCeiling requires st to be within the bounds a charge saturates at.
func checkCeiling(t *rapid.T, alg Algorithm, st State) {
	p := alg.Params()
	switch name := alg.Name(); name {
	case "token-bucket":
		if per := int64(p.Rate.Per / time.Microsecond); st.N > p.Burst*per+excessMax {
			t.Fatalf("deficit %d past the ceiling %d", st.N, p.Burst*per+excessMax)
		}
	case "gcra", "leaky-bucket":
		if st.T > maxInstant || st.N < 0 || st.N >= p.Rate.N {
			t.Fatalf("TAT %d remainder %d: past 2^62 or the remainder out of [0, %d)", st.T, st.N, p.Rate.N)
		}
	case "sliding-log":
		if limit := alg.(limited).Limit(); int64(len(st.Log)) > limit+1 || !slices.IsSorted(st.Log) {
			t.Fatalf("log of %d instants (limit %d), sorted %v", len(st.Log), limit, slices.IsSorted(st.Log))
		}
	default:
		if ceiling := alg.(limited).Limit() + excessMax/windowMicros(alg); st.N > ceiling || st.Prev > ceiling {
			t.Fatalf("counts %d and %d past the ceiling %d", st.N, st.Prev, ceiling)
		}
	}
}

// TestChargeOutOfOrder: pushes from several servers arrive out of order,
// each admission replayed at its own instant. One table per algorithm,
// each row charging the state before it (or a fresh one).
func TestChargeOutOfOrder(t *testing.T) {
	type charge struct {
		from State // the state charged
		now  Time
		cost int64
		want State
	}
	tenPer := must(NewTokenBucket(tenPerSecond, 5)) // 1 token = 10^6 units, 10 units/µs
	gcra := must(NewGCRA(tenPerSecond, 5))          // emission interval 100 ms
	thirds := must(NewGCRA(Rate{N: 3, Per: time.Second}, 2))
	leaky := must(NewLeakyBucket(tenPerSecond, 5))
	fixed := must(NewFixedWindow(Rate{N: 5, Per: time.Second}, time.Second))
	sliding := must(NewSlidingWindow(Rate{N: 5, Per: time.Second}, time.Second))
	slog := must(NewSlidingLog(Rate{N: 3, Per: time.Second}, time.Second))
	const token = 1_000_000
	tables := []struct {
		name string
		alg  Algorithm
		rows []charge
	}{
		{"token-bucket", tenPer, []charge{
			// Before T: counted at T, no negative refill.
			{State{T: 2_000_000, N: 3 * token}, 1_000_000, 2, State{T: 2_000_000, N: 5 * token}},
			// Beyond capacity (5 tokens): the deficit is 13 tokens.
			{State{T: 2_000_000, N: 5 * token}, 1_500_000, 8, State{T: 2_000_000, N: 13 * token}},
			// After T: a second refills 10 tokens, then 1 is taken.
			{State{T: 2_000_000, N: 13 * token}, 3_000_000, 1, State{T: 3_000_000, N: 4 * token}},
			// A negative cost counts as 0: the refill alone.
			{State{T: 2_000_000, N: 13 * token}, 2_500_000, -7, State{T: 2_500_000, N: 8 * token}},
		}},
		{"gcra", gcra, []charge{
			// Before the TAT: the TAT moves on from itself.
			{State{T: 2_300_000}, 2_000_000, 1, State{T: 2_400_000}},
			{State{T: 2_400_000}, 1_000_000, 3, State{T: 2_700_000}},
			// Beyond now + burst (500 ms): counted all the same.
			{State{T: 2_700_000}, 2_000_000, 9, State{T: 3_600_000}},
			// After the TAT: from now, as a full bucket.
			{State{T: 3_600_000}, 5_000_000, 1, State{T: 5_100_000}},
		}},
		{"gcra remainder", thirds, []charge{
			// 1/3 s is 333,333 µs and a third: the remainder carries
			// over exactly, as Step's does.
			{State{T: 10, N: 2}, 0, 1, State{T: 333_344, N: 0}},
			{State{T: 10, N: 0}, 0, 2, State{T: 666_676, N: 2}},
			// A TAT in the past starts from now, remainder and all.
			{State{T: 10, N: 2}, 11, 1, State{T: 333_344, N: 1}},
		}},
		{"leaky-bucket", leaky, []charge{
			{State{T: 2_300_000}, 2_000_000, 1, State{T: 2_400_000}},
			{State{T: 2_400_000}, 1_000_000, 9, State{T: 3_300_000}},
			{State{T: 3_300_000}, 5_000_000, 2, State{T: 5_200_000}},
		}},
		{"fixed-window", fixed, []charge{
			// The state's window: added to its count, beyond the limit.
			{State{T: 2_000_000, N: 4}, 2_500_000, 3, State{T: 2_000_000, N: 7}},
			// An earlier window: dropped.
			{State{T: 2_000_000, N: 7}, 1_900_000, 2, State{T: 2_000_000, N: 7}},
			// A later window: started with the cost.
			{State{T: 2_000_000, N: 7}, 3_200_000, 9, State{T: 3_000_000, N: 9}},
			// The zero state, a key never seen.
			{State{}, 4_100_000, 6, State{T: 4_000_000, N: 6}},
		}},
		{"sliding-window", sliding, []charge{
			// The current window adds to N, beyond the limit.
			{State{T: 2_000_000, N: 4, Prev: 1}, 2_500_000, 3, State{T: 2_000_000, N: 7, Prev: 1}},
			// The previous window adds to Prev.
			{State{T: 2_000_000, N: 7, Prev: 1}, 1_200_000, 2, State{T: 2_000_000, N: 7, Prev: 3}},
			// Older: dropped.
			{State{T: 2_000_000, N: 7, Prev: 3}, 900_000, 2, State{T: 2_000_000, N: 7, Prev: 3}},
			// The next window rolls N into Prev, then adds.
			{State{T: 2_000_000, N: 7, Prev: 3}, 3_100_000, 6, State{T: 3_000_000, N: 6, Prev: 7}},
			// Two windows on, nothing rolls into Prev.
			{State{T: 2_000_000, N: 7, Prev: 3}, 4_100_000, 1, State{T: 4_000_000, N: 1}},
		}},
		{"sliding-log", slog, []charge{
			// Inserted in order, after the instants equal to it.
			{State{Log: []int64{1_000_000, 1_500_000}}, 1_200_000, 1, State{Log: []int64{1_000_000, 1_200_000, 1_500_000}}},
			{State{Log: []int64{1_000_000, 1_200_000, 1_500_000}}, 1_200_000, 1, State{Log: []int64{1_000_000, 1_200_000, 1_200_000, 1_500_000}}},
			// A later instant is the newest: the log is trimmed a
			// window before it.
			{State{Log: []int64{1_000_000, 1_500_000}}, 2_200_000, 1, State{Log: []int64{1_500_000, 2_200_000}}},
			// An instant a window before the newest would leave at once:
			// dropped; the log is trimmed all the same.
			{State{Log: []int64{1_000_000, 1_500_000}}, 400_000, 2, State{Log: []int64{1_000_000, 1_500_000}}},
			{State{Log: []int64{400_000, 1_500_000}}, 300_000, 2, State{Log: []int64{1_500_000}}},
			{State{Log: []int64{1_000_000, 1_500_000}}, 600_000, 1, State{Log: []int64{600_000, 1_000_000, 1_500_000}}},
			// Beyond the limit (3): the newest 4 instants are kept.
			{State{Log: []int64{1_000_000, 1_500_000}}, 1_200_000, 5, State{Log: []int64{1_200_000, 1_200_000, 1_200_000, 1_500_000}}},
			{State{Log: []int64{1_000_000, 1_500_000}}, 900_000, 5, State{Log: []int64{900_000, 900_000, 1_000_000, 1_500_000}}},
		}},
	}
	for _, tab := range tables {
		t.Run(tab.name, func(t *testing.T) {
			c := asCharger(t, tab.alg)
			for i, row := range tab.rows {
				if got := c.Charge(row.from, row.now, row.cost); !reflect.DeepEqual(got, row.want) {
					t.Errorf("row %d: Charge(%+v, %d, %d) = %+v, want %+v", i, row.from, row.now, row.cost, got, row.want)
				}
			}
		})
	}
}

// TestMultiChargeCountsEveryLimit: a Multi charges each limit by its own
// rule, beyond capacity; a limit in shadow mode counts only what it
// would admit, as Step commits it.
func TestMultiChargeCountsEveryLimit(t *testing.T) {
	bucket := must(NewTokenBucket(tenPerSecond, 5))
	hourly := must(NewFixedWindow(Rate{N: 30, Per: time.Hour}, time.Hour))
	m := mustMulti(t, []string{"burst", "hourly"}, bucket, hourly)
	st := m.Charge(State{}, s1, 8)
	want := State{Sub: []State{{T: int64(s1), N: 8 * 1_000_000}, {T: 0, N: 8}}}
	if !reflect.DeepEqual(st, want) {
		t.Fatalf("charge of 8: %+v, want %+v", st, want)
	}
	shadowed, err := NewMulti([]Policy{{Name: "burst", Algorithm: bucket}, {Name: "hourly", Algorithm: hourly, Shadow: true}})
	if err != nil {
		t.Fatal(err)
	}
	full := State{Sub: []State{{}, {T: 0, N: 30}}}
	st = shadowed.Charge(full, s1, 2)
	want = State{Sub: []State{{T: int64(s1), N: 2 * 1_000_000}, {T: 0, N: 30}}}
	if !reflect.DeepEqual(st, want) {
		t.Fatalf("a shadowed hourly limit at its limit: %+v, want %+v (the request refused by it, uncounted)", st, want)
	}
}

func TestAsCharger(t *testing.T) {
	conc := must(NewConcurrency(3, time.Second))
	shed := must(NewShedder(tenPerSecond, 10, [3]int64{0, 2, 5}))
	tb := must(NewTokenBucket(tenPerSecond, 5))
	cases := []struct {
		alg  Algorithm
		want bool
	}{
		{conc, false},
		{shed, false},
		{mustMulti(t, []string{"a", "b"}, tb, must(NewSlidingLog(tenPerSecond, time.Second))), true},
		{mustMulti(t, []string{"a", "b"}, tb, conc), false},
		{mustMulti(t, []string{"a"}, mustMulti(t, []string{"a", "b"}, tb, conc)), false},
		{nil, false},
	}
	for _, name := range ExactNames() {
		cases = append(cases, struct {
			alg  Algorithm
			want bool
		}{mustNew(t, name, Params{Rate: tenPerSecond, Burst: 5, Window: time.Second}), true})
	}
	for _, c := range cases {
		name := "nil"
		if c.alg != nil {
			name = c.alg.Name()
		}
		got, ok := AsCharger(c.alg)
		if ok != c.want || (got != nil) != c.want {
			t.Errorf("AsCharger(%s) = %v, %v; want a Charger: %v", name, got, ok, c.want)
		}
	}
	// A Multi that is not a Charger counts nothing if charged anyway.
	m := mustMulti(t, []string{"a", "b"}, tb, conc)
	prev := State{Sub: []State{{T: 5, N: 1}, {Log: []int64{7}}}}
	if got := m.Charge(prev, s1, 3); !reflect.DeepEqual(got, prev) {
		t.Errorf("Charge on a Multi with a concurrency limit: %+v, want prev %+v", got, prev)
	}
}

// TestPropertyChargeIsPure: Charge never writes into prev, its log's spare
// capacity or its sub-states, and the state it returns shares no Sub
// with prev and no log a later append would write into: a store that
// steps it in place leaves prev as it was.
func TestPropertyChargeIsPure(t *testing.T) {
	for _, name := range chargeable() {
		t.Run(name, rapid.MakeCheck(func(t *rapid.T) {
			alg := genCharger(t, name)
			c := asCharger(t, alg)
			prev, latest := buildState(t, alg)
			prev = withSpareLog(prev)
			before := fmt.Sprint(prev)
			now := latest + Time(rapid.Int64Range(-3_000_000, 3_000_000).Draw(t, "now"))
			cost := rapid.OneOf(rapid.Int64Range(-1, 20), rapid.Just(int64(math.MaxInt64))).Draw(t, "cost")
			next := c.Charge(prev, now, cost)
			if again := c.Charge(prev, now, cost); !reflect.DeepEqual(again, next) {
				t.Fatalf("Charge is not deterministic: %+v, then %+v", next, again)
			}
			if fmt.Sprint(prev) != before || spareWritten(prev) {
				t.Fatalf("Charge(%s, %d, %d) modified prev: now %v", before, now, cost, prev)
			}
			scribble(&next)
			if fmt.Sprint(prev) != before || spareWritten(prev) {
				t.Fatalf("Charge(%s, %d, %d) returned a state sharing prev's arrays: prev now %v", before, now, cost, prev)
			}
		}))
	}
}

// spareMark fills the spare capacity withSpareLog gives a log, so that a
// write into it shows.
const spareMark = -424242

// withSpareLog gives st's log, and each sub-state's, spare capacity
// filled with spareMark, a fresh Sub, as a store's in-place logs have.
func withSpareLog(st State) State { return withSpare(st, 4) }

// withSpare is withSpareLog with extra places to spare in each log.
func withSpare(st State, extra int) State {
	if st.Log != nil {
		log := make([]int64, len(st.Log), len(st.Log)+extra)
		copy(log, st.Log)
		for i := len(log); i < cap(log); i++ {
			log[:cap(log)][i] = spareMark
		}
		st.Log = log
	}
	if st.Sub != nil {
		sub := make([]State, len(st.Sub))
		for i := range sub {
			sub[i] = withSpare(st.Sub[i], extra)
		}
		st.Sub = sub
	}
	return st
}

// spareWritten reports whether anything wrote past the end of a log of st.
func spareWritten(st State) bool {
	for _, x := range st.Log[len(st.Log):cap(st.Log)] {
		if x != spareMark {
			return true
		}
	}
	for _, s := range st.Sub {
		if spareWritten(s) {
			return true
		}
	}
	return false
}

// scribble appends to every log of st and overwrites every sub-state, as
// a store stepping st in place would ([Multi.StepInPlace] writes into
// Sub, a sliding log appends to its log where it lies).
func scribble(st *State) {
	st.Log = append(st.Log, -1)
	for i := range st.Sub {
		scribble(&st.Sub[i])
		st.Sub[i].T, st.Sub[i].N = -1, -1
	}
}

// TestPropertyChargeInPlaceIsCharge: ChargeInPlace leaves in a state
// exactly the State Charge returns from it, log, sub-states and the
// fields the algorithm does not read included, charge after charge (a
// log's spare capacity used, outgrown, and built past), at instants
// before and after the state's own, costs up to math.MaxInt64. And it
// keeps Step's in-place rule: handed a state that shares its logs with
// prev, it never writes inside them, so prev is still the state it was;
// handed them Capped, whose arrays go on past their ends into another
// State's entries (spareMark), it never writes there either, nor does an
// append to what it leaves.
func TestPropertyChargeInPlaceIsCharge(t *testing.T) {
	for _, name := range chargeable() {
		t.Run(name, rapid.MakeCheck(func(t *rapid.T) {
			alg := genCharger(t, name)
			c := asCharger(t, alg)
			built, latest := buildState(t, alg)
			if rapid.IntRange(0, 7).Draw(t, "from zero?") == 0 {
				built = State{} // a key the shared copy never saw
			}
			if rapid.Bool().Draw(t, "stray fields") {
				built = withStray(name, built)
			}
			prev := withSpare(built, rapid.IntRange(0, 40).Draw(t, "spare"))
			before := fmt.Sprint(prev)
			capped := rapid.Bool().Draw(t, "capped")
			st := withOwnSub(prev)
			if capped {
				st = prev.Capped()
			}
			pure := prev
			for i := range rapid.IntRange(1, 8).Draw(t, "charges") {
				now := latest + Time(rapid.Int64Range(-3_000_000, 3_000_000).Draw(t, "now"))
				latest = max(latest, now)
				cost := rapid.OneOf(rapid.Int64Range(-1, 20), rapid.Just(int64(math.MaxInt64))).Draw(t, "cost")
				from := fmt.Sprint(st)
				want := c.Charge(pure, now, cost)
				c.ChargeInPlace(&st, now, cost)
				if !reflect.DeepEqual(st, want) {
					t.Fatalf("charge %d: from %s, ChargeInPlace(%d, %d) left %+v, Charge returns %+v", i, from, now, cost, st, want)
				}
				if fmt.Sprint(prev) != before {
					t.Fatalf("charge %d (%d, %d): ChargeInPlace wrote inside a log it was given: a copy taken before is now %v, was %s", i, now, cost, prev, before)
				}
				if capped && spareWritten(prev) {
					t.Fatalf("charge %d (%d, %d): ChargeInPlace, given capped logs, wrote past their ends into %v", i, now, cost, prev)
				}
				pure = want
			}
			if capped {
				scribble(&st)
				if fmt.Sprint(prev) != before || spareWritten(prev) {
					t.Fatalf("ChargeInPlace left a state sharing arrays another State writes: prev now %v", prev)
				}
			}
		}))
	}
}

// withStray sets the fields of st that algorithm name does not read, as
// a state some other algorithm built might have them: ChargeInPlace
// keeps or clears them exactly as Charge does.
func withStray(name string, st State) State {
	log, sub := []int64{-5, -4}, []State{{T: -6, N: -7}}
	switch name {
	case "sliding-log":
		st.T, st.N, st.Prev, st.Sub = -1, -2, -3, sub
	case "multi":
		// And a sub-state too many, as a state of a Multi of more
		// limits has: Charge keeps the first of them.
		st.T, st.N, st.Prev, st.Log = -1, -2, -3, log
		st.Sub = append(st.Sub[:len(st.Sub):len(st.Sub)], State{T: -8, Log: []int64{-9}})
	case "sliding-window":
		st.Log, st.Sub = log, sub
	default: // the buckets and the fixed window: T and N
		st.Prev, st.Log, st.Sub = -3, log, sub
	}
	return st
}

// withOwnSub is st with a Sub of its own, each sub-state's too, its logs
// shared as they are, spare capacity and all: a state whose Sub a caller
// may charge in place without writing into st's.
func withOwnSub(st State) State {
	if st.Sub != nil {
		sub := make([]State, len(st.Sub))
		for i := range sub {
			sub[i] = withOwnSub(st.Sub[i])
		}
		st.Sub = sub
	}
	return st
}

// TestZeroChargerReturnsPrev: the zero value of each algorithm, which can
// count nothing, returns prev whatever it is charged, and leaves it as it
// was when charged in place.
func TestZeroChargerReturnsPrev(t *testing.T) {
	zeros := []Charger{&TokenBucket{}, &GCRA{}, &LeakyBucket{}, &FixedWindow{}, &SlidingWindow{}, &SlidingLog{}, &Multi{}}
	prev := State{T: 5_000_000, N: 3, Prev: 2, Log: []int64{1, 2}}
	for _, z := range zeros {
		for _, cost := range []int64{1, 0, -3, math.MaxInt64} {
			if got := z.Charge(prev, 7_000_000, cost); !reflect.DeepEqual(got, prev) {
				t.Errorf("%T.Charge(prev, 7s, %d) = %+v, want prev %+v", z, cost, got, prev)
			}
			st := State{T: prev.T, N: prev.N, Prev: prev.Prev, Log: slices.Clone(prev.Log)}
			if z.ChargeInPlace(&st, 7_000_000, cost); !reflect.DeepEqual(st, prev) {
				t.Errorf("%T.ChargeInPlace(prev, 7s, %d) left %+v, want prev %+v", z, cost, st, prev)
			}
		}
	}
}

// TestStepRefusesACostNearMaxInt64: a cost past every limit is refused
// by the window counters and the log on a state that already counts: the
// sum with the count overflowed and admitted it (the sliding log then
// asked for a log of 2^63 entries and panicked).
func TestStepRefusesACostNearMaxInt64(t *testing.T) {
	rate := Rate{N: 5, Per: time.Second}
	for _, alg := range []Algorithm{
		must(NewFixedWindow(rate, time.Second)),
		must(NewSlidingWindow(rate, time.Second)),
		must(NewSlidingLog(rate, time.Second)),
	} {
		st, _ := alg.Step(State{}, 10, 1)
		for _, cost := range []int64{math.MaxInt64, math.MaxInt64 / 1_000_000} {
			if _, d := alg.Step(st, 10, cost); d.Allowed || d.RetryAfter != Never {
				t.Errorf("%s: cost %d after one admitted: %+v, want refused for good", alg.Name(), cost, d)
			}
		}
	}
}
