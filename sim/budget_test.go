package sim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/internal/sat"
	"github.com/ratelim/ratelim/internal/words"
)

func TestSaturatingArithmetic(t *testing.T) {
	tests := []struct {
		name string
		got  int64
		want int64
	}{
		{"mul", sat.Mul(3, 4), 12},
		{"mul by zero", sat.Mul(0, math.MaxInt64), 0},
		{"mul overflow", sat.Mul(math.MaxInt64/2+1, 2), math.MaxInt64},
		{"mul huge", sat.Mul(1<<40, 1<<40), math.MaxInt64},
		{"add", sat.Add(3, 4), 7},
		{"add overflow", sat.Add(math.MaxInt64, 1), math.MaxInt64},
		{"saturate NaN", saturate(math.NaN()), math.MaxInt64},
		{"saturate Inf", saturate(math.Inf(1)), math.MaxInt64},
		{"saturate 1e25", saturate(1e25), math.MaxInt64},
		{"saturate negative", saturate(-5), 0},
		{"saturate", saturate(41.9), 41},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %d, want %d", tt.name, tt.got, tt.want)
		}
	}
}

// Each of these wrapped an int64 before (a huge rate times a long run) and
// passed the budget as a negative estimate, then ran for ever.
func TestEstimateSaturatesInsteadOfWrapping(t *testing.T) {
	year := 365 * 24 * time.Hour
	tests := []struct {
		name string
		tr   Traffic
	}{
		{"1e18/s", Traffic{Pattern: Constant, Rate: algorithms.Rate{N: 1e18, Per: time.Second}}},
		{"max rate", Traffic{Pattern: Poisson, Rate: algorithms.Rate{N: math.MaxInt64, Per: time.Microsecond}}},
		{"ramp to max", Traffic{Pattern: Ramp, From: perSecond(0), To: algorithms.Rate{N: math.MaxInt64, Per: time.Second}}},
		{"on-off", Traffic{Pattern: OnOff, Rate: algorithms.Rate{N: math.MaxInt64, Per: time.Second}, On: time.Second, Off: time.Microsecond}},
	}
	for _, tt := range tests {
		sc := hammer(Shared, 1, RoundRobin)
		sc.Duration, sc.Step = year, 24*time.Hour
		sc.Clients[0].Traffic = []Traffic{tt.tr}
		if est := Estimate(sc); est < DefaultMaxRequests {
			t.Errorf("%s: estimate %d, want more than the budget", tt.name, est)
		}
		_, err := Run(context.Background(), sc, Options{})
		if !errors.Is(err, ErrBudget) || !IsTooBig(err) {
			t.Errorf("%s: Run = %v, want ErrBudget", tt.name, err)
		}
	}
}

// A burst's count times its spread, and an on-off cycle times its length,
// overflowed int64 on long runs; arrivals must stay in order and in the run.
func TestLongPatternsDoNotOverflow(t *testing.T) {
	sc := hammer(Shared, 1, RoundRobin)
	sc.Duration, sc.Step = 365*24*time.Hour, 24*time.Hour
	sc.Clients[0].Traffic = []Traffic{
		{Pattern: Burst, Count: 1_000_000_000, At: time.Second, Spread: 300 * 24 * time.Hour},
		{Pattern: OnOff, Rate: perSecond(1), On: time.Second, Off: 100 * 24 * time.Hour},
	}
	n, last := 0, time.Duration(-1)
	Arrivals(sc, func(a Arrival) bool {
		if a.At < last || a.At >= sc.Duration {
			t.Fatalf("arrival %d at %s after %s, in a run of %s", n, a.At, last, sc.Duration)
		}
		last = a.At
		n++
		return n < 2_000
	})
	if n < 2_000 {
		t.Fatalf("%d arrivals, want 2000", n)
	}
}

// A retry storm whose worst case is over the budget is refused before it
// sends a request: it used to be refused only when it had sent the
// budget's worth (50,000,000 requests, 19 s, for 10,000 clients retrying
// at once up to 1,000 times).
func TestRetriesWorstCaseIsRefusedUpFront(t *testing.T) {
	// 100 arrivals, each retried at once up to 1,000 times: 100,100 at
	// worst, and on one copy with no round trip the worst is what
	// happens.
	sc := hammer(Local, 1, RoundRobin)
	sc.Limit.Params = algorithms.Params{Rate: perSecond(1), Burst: 1}
	sc.Clients[0].Traffic = []Traffic{{Pattern: Constant, Rate: perSecond(10)}}
	sc.Clients[0].Retry = Retry{Policy: RetryImmediate, Max: 1000}
	if got, who := WorstCase(sc); got != 100_100 || who == nil || who.Name != "c" {
		t.Errorf("WorstCase = %d, %v; want 100,100 from c", got, who)
	}
	sent := 0
	_, err := Run(context.Background(), sc, Options{MaxRequests: 5_000, Observe: func(Observation) { sent++ }})
	var tooBig *TooBigError
	if !errors.Is(err, ErrBudget) || !errors.As(err, &tooBig) {
		t.Fatalf("Run = %v, want a *TooBigError for ErrBudget", err)
	}
	if sent != 0 {
		t.Errorf("%d requests sent before the refusal, want none", sent)
	}
	for _, want := range []string{"about 100,100 requests", "c retries immediate, up to 1,000 times", "more than 5,000", "retry.max"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
	// Under the budget it runs, and every refused arrival costs what the
	// worst case says: 1 + 1,000 requests for each of the 90 refused
	// (the bucket admits one a second), 1 for each of the 10 admitted.
	r, err := Run(context.Background(), sc, Options{MaxRequests: 200_000})
	if err != nil || r.Requests != 90*1_001+10 {
		t.Fatalf("Run = %d requests, %v; want the retry storm's 90 × 1,001 + 10", r.Requests, err)
	}
}

// WorstCase counts each arrival once and once more per retry its
// client's policy allows, by policy; a client that never retries, once.
func TestWorstCaseByPolicy(t *testing.T) {
	tests := []struct {
		retry Retry
		want  int64
	}{
		{Retry{Policy: RetryNone}, 100},
		{Retry{}, 100},
		{Retry{Policy: RetryImmediate}, 100 * (1 + DefaultMaxRetry)},
		{Retry{Policy: RetryAfter, Max: 3}, 400},
		{Retry{Policy: RetryBackoff, Max: 1000, Base: time.Second, Cap: time.Hour}, 100_100},
	}
	for _, tt := range tests {
		sc := hammer(Shared, 1, RoundRobin)
		sc.Clients[0].Traffic = []Traffic{{Pattern: Constant, Rate: perSecond(10)}}
		sc.Clients[0].Retry = tt.retry
		if got, _ := WorstCase(sc); got != tt.want {
			t.Errorf("%+v: WorstCase = %d, want %d", tt.retry, got, tt.want)
		}
		if got := Estimate(sc); got != 100 {
			t.Errorf("%+v: Estimate = %d, want 100 (retries not counted)", tt.retry, got)
		}
	}
	// Saturated, not wrapped.
	sc := hammer(Shared, 1, RoundRobin)
	sc.Clients[0].Traffic = []Traffic{{Pattern: Constant, Rate: algorithms.Rate{N: math.MaxInt64, Per: time.Microsecond}}}
	sc.Clients[0].Retry = Retry{Policy: RetryImmediate, Max: math.MaxInt32}
	if got, _ := WorstCase(sc); got != math.MaxInt64 {
		t.Errorf("WorstCase of an overflowing storm = %d, want math.MaxInt64", got)
	}
}

// The budget is still charged request by request as the run goes: an
// estimate of random arrivals is their expected count, which a run may
// pass. Here the run's budget is lowered once it has started, past the
// check before it.
func TestRetriesCountAgainstTheBudgetMidRun(t *testing.T) {
	sc := hammer(Local, 1, RoundRobin)
	sc.Limit.Params = algorithms.Params{Rate: perSecond(1), Burst: 1}
	sc.Clients[0].Traffic = []Traffic{{Pattern: Constant, Rate: perSecond(10)}}
	sc.Clients[0].Retry = Retry{Policy: RetryImmediate, Max: 1000}
	p, err := NewPlayer(context.Background(), sc, Options{MaxRequests: 200_000})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	p.s.sent.budget = 5_000
	err = p.Advance(context.Background(), sc.Duration)
	if !errors.Is(err, ErrBudget) {
		t.Fatalf("Advance = %v, want ErrBudget", err)
	}
	for _, want := range []string{"sent 5,000 requests", "of them retries", "retry.max"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
}

func TestMemoryIsRefusedUpFront(t *testing.T) {
	many := func(n int) []Client { return ownKeys(n, Traffic{Pattern: Burst, Count: 1, At: 0}) }
	tests := []struct {
		name           string
		duration, step time.Duration
		clients        int
		burst          int64
	}{
		// Each key's state kept (the JSON's run): 10⁶ clients' series.
		{"1,000,000 clients", 30 * time.Second, time.Second, 1_000_000, 20},
		// A bucket of a million that refills a token a step could change
		// at each of 3.6 million steps, for each of 1,000 keys.
		{"1000h at 1s × 1,000 keys, each a bucket of a million", 1000 * time.Hour, time.Second, 1000, 1_000_000},
	}
	for _, tt := range tests {
		sc := hammer(Shared, 1, RoundRobin)
		sc.Duration, sc.Step, sc.Clients = tt.duration, tt.step, many(tt.clients)
		sc.Limit.Params.Burst = tt.burst
		_, err := Run(context.Background(), sc, Options{})
		if !errors.Is(err, ErrMemory) || !IsTooBig(err) {
			t.Errorf("%s: Run = %v, want ErrMemory", tt.name, err)
			continue
		}
		var se *SetupError
		var tb *TooBigError
		if !errors.As(err, &se) || !errors.As(err, &tb) || tb.Option != "MaxMemory" || !strings.Contains(err.Error(), "raise Options.MaxMemory") || !strings.Contains(err.Error(), "iB of memory") {
			t.Errorf("%s: %q is not a setup error that gives the figure and the flag", tt.name, err)
		}
	}
}

// Runs as long as these were refused up front for their steps (a step's
// end was an event, every series a point a step): they cost what happened
// in them, a request each, and run (issue 29). Each key's state is kept,
// as for the JSON, and holds a few points; the step ends read a few
// states, not one a step.
func TestLongQuietRunsCostTheirEvents(t *testing.T) {
	tests := []struct {
		name           string
		duration, step time.Duration
		clients        int
	}{
		{"100h at 1s × 10,000 clients", 100 * time.Hour, time.Second, 10_000},
		{"1000h at 1ms", 1000 * time.Hour, time.Millisecond, 1},
		{"1000000h at 1µs", 1_000_000 * time.Hour, time.Microsecond, 1},
	}
	for _, tt := range tests {
		sc := hammer(Shared, 1, RoundRobin)
		sc.Duration, sc.Step, sc.Clients = tt.duration, tt.step, ownKeys(tt.clients, Traffic{Pattern: Burst, Count: 1, At: time.Minute})
		p, err := NewPlayer(context.Background(), sc, Options{})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if err := p.Advance(context.Background(), sc.Duration); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		steps, loads := p.s.rec.sample.steps, p.s.rec.sample.loads
		r := p.Result()
		p.Close()
		if want := int(sc.Duration / sc.Step); steps != want {
			t.Errorf("%s: %d steps sampled, want %d", tt.name, steps, want)
		}
		// A few changes after its request, each found in about
		// 2·log2(steps) looks: 124 at a microsecond for a million hours.
		if most := int64(200 * tt.clients); loads > most {
			t.Errorf("%s: the step ends read %d states, want at most %d (the changes after a request each)", tt.name, loads, most)
		}
		for _, ser := range r.State {
			if len(ser.TS) > 8 {
				t.Fatalf("%s: key %s holds %d points, want a few: %v at %v", tt.name, ser.Key, len(ser.TS), ser.Remaining, ser.TS)
			}
		}
		if r.Clients[0].Allowed != 1 {
			t.Errorf("%s: %+v, want its one request admitted", tt.name, r.Clients[0])
		}
	}
}

// A run refused for its memory says which longer step would fit, when one
// does: the finest of the usual steps whose estimate is within the bound.
func TestMemoryRefusalNamesAStepThatFits(t *testing.T) {
	sc := hammer(Shared, 1, RoundRobin)
	sc.Duration, sc.Step = 168*time.Hour, time.Second
	sc.Clients = nil
	for i := range 1000 {
		sc.Clients = append(sc.Clients, Client{Name: fmt.Sprint("c", i), APIKey: fmt.Sprint("k", i), Traffic: []Traffic{{Pattern: Poisson, Rate: perSecond(1)}}, Retry: Retry{Policy: RetryNone}})
	}
	const bound = 1 << 30
	_, err := checkSize(sc, Options{MaxRequests: 1 << 40, MaxMemory: bound})
	if !errors.Is(err, ErrMemory) {
		t.Fatalf("a week at 1s × 1,000 clients under 1 GiB: %v, want ErrMemory", err)
	}
	step, ok := newMemoryModel(sc, nil).stepThatFits(bound)
	if !ok || !strings.Contains(err.Error(), "use a longer step: "+words.Duration(step)+" fits") {
		t.Fatalf("%q does not name the step that fits (%s, %v)", err, step, ok)
	}
	at := func(d time.Duration) int64 { c := sc; c.Step = d; return MemoryEstimate(c) }
	if at(step) > bound || at(step) > MemoryEstimate(sc) {
		t.Errorf("the step said to fit, %s, is estimated at %s, over %s", step, words.Bytes(at(step)), words.Bytes(bound))
	}
	if finer := time.Second * 10; step > finer && at(finer) <= bound {
		t.Errorf("%s was named, but 10s fits too (%s)", step, words.Bytes(at(finer)))
	}
	// Nothing fits a million clients at any step: the advice stays general.
	sc.Clients = make([]Client, 1_000_000)
	if _, ok := newMemoryModel(sc, nil).stepThatFits(bound); ok {
		t.Error("a step was said to fit a million clients in 1 GiB")
	}
}

// The estimate must bound what a run really holds at its peak (its
// structures, its Result and the Result's JSON), and not by so much that
// it refuses runs this machine could do.
func TestMemoryEstimateIsAnUpperBound(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("allocates hundreds of MB; the race detector inflates the heap")
	}
	clients := func(n, keys int) []Client {
		cs := make([]Client, n)
		for i := range cs {
			cs[i] = Client{Name: fmt.Sprint("client-", i), APIKey: fmt.Sprint("key-", i%keys),
				Traffic: []Traffic{{Pattern: Constant, Rate: perSecond(20)}}, Retry: Retry{Policy: RetryNone}}
		}
		return cs
	}
	tests := []struct {
		name string
		edit func(*Scenario)
	}{
		{"1,000 clients × 20 steps", func(sc *Scenario) { sc.Duration, sc.Clients = 20*time.Second, clients(1000, 1000) }},
		{"10 clients × 20,000 steps", func(sc *Scenario) {
			sc.Duration, sc.Step, sc.Clients = 20*time.Second, time.Millisecond, clients(10, 10)
		}},
		{"100 keys × 64 jars × 300 steps", func(sc *Scenario) {
			sc.Topology.Kind, sc.Servers, sc.Duration, sc.Step, sc.Clients = Local, 64, 30*time.Second, 100*time.Millisecond, clients(100, 100)
		}},
		{"2,000 keys × 500 jars × 30 steps, a request each", func(sc *Scenario) {
			// 10⁶ (key, jar) pairs, 2,000 reached: the estimate counts
			// those a request can reach, not every pair (issue 29).
			sc.Topology.Kind, sc.Servers, sc.Balancer, sc.Duration, sc.Clients = Local, 500, KeyHash, 30*time.Second, clients(2000, 2000)
			for i := range sc.Clients {
				sc.Clients[i].Traffic = []Traffic{{Pattern: Burst, Count: 1, At: time.Duration(i%30) * time.Second}}
			}
		}},
		{"100,000 clients on their own keys, 3 requests each", func(sc *Scenario) {
			// What a client costs beside its requests: a million of them
			// must fit in a few GB (issue 29).
			sc.Duration, sc.Clients = 30*time.Second, ownKeys(100_000, Traffic{Pattern: Constant, Rate: algorithms.Rate{N: 3, Per: 30 * time.Second}})
		}},
		{"a leaky bucket's queue: latencies of every size", func(sc *Scenario) {
			// Each client's latency histograms outgrow their inline
			// buckets and allocate blocks (histogramBytes).
			sc.Limit = Limit{Algorithm: "leaky-bucket", Params: algorithms.Params{Rate: perSecond(10), Burst: 200}, Key: KeyAuto}
			sc.Duration, sc.Clients = 20*time.Second, clients(2000, 100)
		}},
		{"a key whose room changes at every one of 20,000 steps", func(sc *Scenario) {
			// The state series' worst case: sparse as they are kept, a
			// series that changes every step has a point every step,
			// what the estimate charges.
			sc.Limit = Limit{Algorithm: "token-bucket", Params: algorithms.Params{Rate: perSecond(10), Burst: 1_000_000}, Key: KeyAuto}
			sc.Duration, sc.Clients = 20_000*time.Second, clients(1, 1)
		}},
		{"100 keys × 64 servers synced every 10ms", func(sc *Scenario) {
			sc.Topology.Kind, sc.Topology.SyncInterval, sc.Servers, sc.Duration, sc.Step, sc.Clients = Synced, 10*time.Millisecond, 64, 30*time.Second, 100*time.Millisecond, clients(100, 100)
		}},
		{"1,000 keys × 64 owner nodes", func(sc *Scenario) {
			sc.Topology.Kind, sc.Servers, sc.Duration, sc.Clients = Owner, 64, 20*time.Second, clients(1000, 1000)
		}},
		{"1,000 keys × 64 two-tier servers", func(sc *Scenario) {
			sc.Topology.Kind, sc.Topology.Local, sc.Servers, sc.Duration, sc.Clients = TwoTier, &LocalTier{Rate: perSecond(5), Burst: 5}, 64, 20*time.Second, clients(1000, 1000)
		}},
		{"1,000 keys in 8 regions replicating after 200ms", func(sc *Scenario) {
			sc.Topology.Kind, sc.Topology.ReplicationLag, sc.Duration, sc.Clients = Regions, 200*time.Millisecond, 20*time.Second, clients(1000, 1000)
			sc.Servers = 16
			for r := range 8 {
				sc.Topology.Regions = append(sc.Topology.Regions, Region{Name: fmt.Sprint("r", r), Servers: 2})
			}
			for i := range sc.Clients {
				sc.Clients[i].Region = fmt.Sprint("r", i%8)
			}
		}},
		{"a sliding log of 5,000 a window", func(sc *Scenario) {
			sc.Limit = Limit{Algorithm: "sliding-log", Params: algorithms.Params{Rate: perSecond(5_000), Window: time.Second}, Key: KeyAuto}
			sc.Duration, sc.Clients = 2*time.Second, clients(1, 1)
			sc.Clients[0].Traffic[0].Rate = perSecond(10_000)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkMemoryEstimate(t, tt.edit) })
	}
}

func checkMemoryEstimate(t *testing.T, edit func(*Scenario)) {
	// Each run twice: keeping every key's state (the JSON's run) and none
	// (a table's), against the estimate for each.
	for _, keep := range []func(string) bool{nil, func(string) bool { return false }} {
		sc := hammer(Shared, 1, RoundRobin)
		edit(&sc)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		p, err := NewPlayer(context.Background(), sc, Options{StateOf: keep})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Advance(context.Background(), sc.Duration); err != nil {
			t.Fatal(err)
		}
		r := p.Result()
		// The JSON is written as a stream (report.WriteJSON): what it
		// holds is an element at a time, not the whole.
		runtime.GC()
		runtime.ReadMemStats(&after)
		live := int64(after.HeapAlloc) - int64(before.HeapAlloc)
		runtime.KeepAlive(p)
		runtime.KeepAlive(r)
		// Under a soft memory limit at the bound (what the command sets)
		// the collector keeps the heap within a quarter of what is live:
		// that is the peak to bound (collectorHeadroom).
		peak := live * collectorHeadroom / 4
		est := memoryNeed(sc, keep)
		t.Logf("state kept %v: estimated %s, live %s, peak about %s (%.1f×)", keep == nil, words.Bytes(est), words.Bytes(live), words.Bytes(peak), float64(est)/float64(peak))
		if est < peak {
			t.Errorf("state kept %v: estimated %s, but the run's heap peaks near %s (the %s live and the collector's quarter)", keep == nil, words.Bytes(est), words.Bytes(peak), words.Bytes(live))
		}
		// The state series are charged a point a step, their most (the
		// case above whose room changes every step); a series whose room
		// holds is two points. The rest of the estimate must be close.
		if rest := memoryNeed(sc, func(string) bool { return false }); rest > 3*peak+8<<20 {
			t.Errorf("state kept %v: estimated %s (%s without the state series) for a run whose heap peaks near %s: it would refuse runs that fit", keep == nil, words.Bytes(est), words.Bytes(rest), words.Bytes(peak))
		}
		p.Close()
	}
}

// explodingContext panics the first time a run asks whether it was
// cancelled: a stand-in for a bug deep inside a run.
type explodingContext struct{ context.Context }

func (explodingContext) Err() error { panic("boom") }

func TestAPanicEndsOnlyItsRun(t *testing.T) {
	ctx := explodingContext{context.Background()}
	r, err := Run(ctx, hammer(Shared, 1, RoundRobin), Options{})
	var ie *InternalError
	if r != nil || !errors.As(err, &ie) || ie.Value != "boom" || len(ie.Stack) == 0 || !strings.Contains(err.Error(), "hammer") {
		t.Fatalf("Run = %v, %v; want an *InternalError naming the scenario, with the panic and a stack", r, err)
	}
	scs := []Scenario{hammer(Shared, 1, RoundRobin), hammer(Local, 2, RoundRobin), hammer(Racy, 2, RoundRobin)}
	results, errs := RunAll(ctx, scs, Options{}, 2)
	for i := range scs {
		if results[i] != nil || !errors.As(errs[i], &ie) {
			t.Errorf("RunAll run %d = %v, %v; want an *InternalError", i, results[i], errs[i])
		}
	}
	// The same scenarios, run with a context that works, all succeed: the
	// panics left nothing behind.
	results, errs = RunAll(context.Background(), scs, Options{}, 2)
	for i := range scs {
		if results[i] == nil || errs[i] != nil {
			t.Errorf("RunAll run %d after the panics = %v, %v", i, results[i], errs[i])
		}
	}
}

func TestCleanupErrorsAreReported(t *testing.T) {
	p, err := NewPlayer(context.Background(), hammer(Shared, 1, RoundRobin), Options{})
	if err != nil {
		t.Fatal(err)
	}
	p.s.stores.closers = append(p.s.stores.closers, func() error { return errors.New("connection refused") })
	var ce *CleanupError
	if err := p.Close(); !errors.As(err, &ce) || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("Close = %v; want a *CleanupError carrying the store's error", err)
	}
	if err := p.Close(); err != nil {
		t.Fatalf("second Close = %v; want nil", err)
	}
}

// A saturated estimate is not printed as if it were a count.
func TestAboutRequests(t *testing.T) {
	if got := aboutRequests(160_102); got != "about 160,102 requests" {
		t.Errorf("aboutRequests(160102) = %q", got)
	}
	if got := aboutRequests(math.MaxInt64); strings.Contains(got, "9,223") || !strings.Contains(got, "saturated") {
		t.Errorf("aboutRequests(MaxInt64) = %q, want it said to have saturated, not the ceiling as a count", got)
	}
}
