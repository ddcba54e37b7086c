package algorithms_test

import (
	"fmt"
	"time"

	"github.com/ratelim/ratelim/algorithms"
)

// Every exact limiter is built by name from the same Params, reading only the
// fields its Catalog entry lists, and stepped from the zero State, a key
// never seen. Five requests arrive at once: the buckets let their burst of
// 2 through (the leaky bucket admits 2 into its queue, to be served 500ms
// apart), the windows their limit of 2 per second.
func ExampleNew() {
	p := algorithms.Params{Rate: algorithms.Rate{N: 2, Per: time.Second}, Burst: 2, Window: time.Second}
	for _, info := range algorithms.Exact() {
		alg, err := algorithms.New(info.Name, p)
		if err != nil {
			panic(err)
		}
		var st algorithms.State
		admitted := 0
		for range 5 {
			var d algorithms.Decision
			st, d = alg.Step(st, 0, 1)
			if d.Allowed {
				admitted++
			}
		}
		fmt.Printf("%-14s reads %v: %d of 5 admitted\n", info.Name, info.Params, admitted)
	}
	// Output:
	// token-bucket   reads [rate burst]: 2 of 5 admitted
	// gcra           reads [rate burst]: 2 of 5 admitted
	// leaky-bucket   reads [rate burst]: 2 of 5 admitted
	// fixed-window   reads [rate window]: 2 of 5 admitted
	// sliding-log    reads [rate window]: 2 of 5 admitted
	// sliding-window reads [rate window]: 2 of 5 admitted
}

// A bucket of 3 tokens refilling one a second. The full bucket lets a burst
// of 3 through at once; after that requests pass at the rate, one a second,
// and a rejection says when the next token comes. After a lull the bucket
// is full again and the next burst goes through whole: the flaw the
// backend must be sized for.
func ExampleTokenBucket() {
	tb, err := algorithms.NewTokenBucket(algorithms.Rate{N: 1, Per: time.Second}, 3)
	if err != nil {
		panic(err)
	}
	var st algorithms.State
	for _, at := range []time.Duration{0, 0, 0, 0, 500 * time.Millisecond, time.Second, time.Minute, time.Minute, time.Minute} {
		var d algorithms.Decision
		st, d = tb.Step(st, algorithms.At(at), 1)
		fmt.Printf("%-5v allowed=%-5v remaining=%d retry-after=%v\n", at, d.Allowed, d.Remaining, d.RetryAfter)
	}
	// Output:
	// 0s    allowed=true  remaining=2 retry-after=0s
	// 0s    allowed=true  remaining=1 retry-after=0s
	// 0s    allowed=true  remaining=0 retry-after=0s
	// 0s    allowed=false remaining=0 retry-after=1s
	// 500ms allowed=false remaining=0 retry-after=500ms
	// 1s    allowed=true  remaining=0 retry-after=0s
	// 1m0s  allowed=true  remaining=2 retry-after=0s
	// 1m0s  allowed=true  remaining=1 retry-after=0s
	// 1m0s  allowed=true  remaining=0 retry-after=0s
}

// The zero TokenBucket, declared without NewTokenBucket, is a bucket of no
// tokens: it refuses every request, and says waiting will not help.
func ExampleTokenBucket_zeroValue() {
	var tb algorithms.TokenBucket
	_, d := tb.Step(algorithms.State{}, 0, 1)
	fmt.Println(d.Allowed, d.Limit, d.RetryAfter == algorithms.Never)
	// Output:
	// false 0 true
}

// GCRA keeps a key as one instant, the theoretical arrival time (TAT): each
// admitted request pushes it one emission interval (here 500ms) later, and a
// request passes if the pushed TAT is at most Burst intervals ahead of now.
// A rejection's RetryAfter is how long until it would be; it admits exactly
// what a token bucket with the same numbers admits.
func ExampleGCRA() {
	g, err := algorithms.NewGCRA(algorithms.Rate{N: 2, Per: time.Second}, 2)
	if err != nil {
		panic(err)
	}
	var st algorithms.State
	for _, at := range []time.Duration{0, 0, 0, 300 * time.Millisecond, 500 * time.Millisecond, 2 * time.Second} {
		var d algorithms.Decision
		st, d = g.Step(st, algorithms.At(at), 1)
		fmt.Printf("%-5v allowed=%-5v retry-after=%-5v TAT=%v\n", at, d.Allowed, d.RetryAfter, algorithms.Time(st.T).Duration())
	}
	// Output:
	// 0s    allowed=true  retry-after=0s    TAT=500ms
	// 0s    allowed=true  retry-after=0s    TAT=1s
	// 0s    allowed=false retry-after=500ms TAT=1s
	// 300ms allowed=false retry-after=200ms TAT=1s
	// 500ms allowed=true  retry-after=0s    TAT=1.5s
	// 2s    allowed=true  retry-after=0s    TAT=2.5s
}

// A leaky bucket of 3 places draining 2 a second. A burst of 4 at once is
// not let through at once: the first 3 are queued and served 500ms apart
// (their Delay), so the backend sees exactly the rate; the 4th finds the
// queue full and is rejected until the first place drains.
func ExampleLeakyBucket() {
	lb, err := algorithms.NewLeakyBucket(algorithms.Rate{N: 2, Per: time.Second}, 3)
	if err != nil {
		panic(err)
	}
	var st algorithms.State
	for range 4 {
		var d algorithms.Decision
		st, d = lb.Step(st, 0, 1)
		fmt.Printf("allowed=%-5v delay=%-5v retry-after=%v\n", d.Allowed, d.Delay, d.RetryAfter)
	}
	// Output:
	// allowed=true  delay=0s    retry-after=0s
	// allowed=true  delay=500ms retry-after=0s
	// allowed=true  delay=1s    retry-after=0s
	// allowed=false delay=0s    retry-after=500ms
}

// A fixed window of 3 requests a second. Three requests in the last
// millisecond of one window and three in the first of the next all pass:
// six within 2ms, twice the limit, because nothing links one window to the
// next.
func ExampleFixedWindow() {
	fw, err := algorithms.NewFixedWindow(algorithms.Rate{N: 3, Per: time.Second}, time.Second)
	if err != nil {
		panic(err)
	}
	var st algorithms.State
	admitted := 0
	for _, at := range []time.Duration{999 * time.Millisecond, time.Second} {
		for range 4 {
			var d algorithms.Decision
			st, d = fw.Step(st, algorithms.At(at), 1)
			if d.Allowed {
				admitted++
			} else {
				fmt.Printf("%v: rejected, retry after %v\n", at, d.RetryAfter)
			}
		}
	}
	fmt.Printf("admitted %d within 2ms, limit %d per window\n", admitted, fw.Limit())
	// Output:
	// 999ms: rejected, retry after 1ms
	// 1s: rejected, retry after 1s
	// admitted 6 within 2ms, limit 3 per window
}

// The sliding window counter, with the same 3 a second and the same three
// requests at the end of a window. At the start of the next window the
// previous one still weighs in full (3 × (1s − 0) / 1s), so the boundary
// burst the fixed window lets through is refused; a third of the way in,
// its weight has faded to 2 and one request fits again.
func ExampleSlidingWindow() {
	sw, err := algorithms.NewSlidingWindow(algorithms.Rate{N: 3, Per: time.Second}, time.Second)
	if err != nil {
		panic(err)
	}
	var st algorithms.State
	for _, at := range []time.Duration{999 * time.Millisecond, 999 * time.Millisecond, 999 * time.Millisecond, time.Second, 1333334 * time.Microsecond, 1333334 * time.Microsecond} {
		var d algorithms.Decision
		st, d = sw.Step(st, algorithms.At(at), 1)
		fmt.Printf("%-10v allowed=%-5v retry-after=%v\n", at, d.Allowed, d.RetryAfter)
	}
	// Output:
	// 999ms      allowed=true  retry-after=0s
	// 999ms      allowed=true  retry-after=0s
	// 999ms      allowed=true  retry-after=0s
	// 1s         allowed=false retry-after=333.334ms
	// 1.333334s  allowed=true  retry-after=0s
	// 1.333334s  allowed=false retry-after=333.333ms
}

// The sliding log, with 3 a second, remembers each admitted instant. A
// request passes if fewer than 3 were admitted in the second before it, so
// a rejection waits exactly until the oldest entry leaves, and the log, its
// memory, holds one instant per admitted request.
func ExampleSlidingLog() {
	sl, err := algorithms.NewSlidingLog(algorithms.Rate{N: 3, Per: time.Second}, time.Second)
	if err != nil {
		panic(err)
	}
	var st algorithms.State
	for _, at := range []time.Duration{0, 400 * time.Millisecond, 800 * time.Millisecond, 900 * time.Millisecond, time.Second} {
		var d algorithms.Decision
		st, d = sl.Step(st, algorithms.At(at), 1)
		fmt.Printf("%-5v allowed=%-5v retry-after=%-5v log=%v\n", at, d.Allowed, d.RetryAfter, st.Log)
	}
	// Output:
	// 0s    allowed=true  retry-after=0s    log=[0]
	// 400ms allowed=true  retry-after=0s    log=[0 400000]
	// 800ms allowed=true  retry-after=0s    log=[0 400000 800000]
	// 900ms allowed=false retry-after=100ms log=[0 400000 800000]
	// 1s    allowed=true  retry-after=0s    log=[400000 800000 1000000]
}

// A rate is read as the CLI and scenario files write it, and kept as a
// fraction, so that 3 a second is exact.
func ExampleParseRate() {
	for _, s := range []string{"10/s", "100/m", "3/500ms", "7"} {
		r, err := algorithms.ParseRate(s)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%-8s %-8v %g/s\n", s, r, r.PerSecond())
	}
	// Output:
	// 10/s     10/s     10/s
	// 100/m    100/m    1.6666666666666667/s
	// 3/500ms  3/500ms  6/s
	// 7        7/s      7/s
}
