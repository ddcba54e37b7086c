package algorithms_test

import (
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/ratelim/ratelim/algorithms"
)

// The token bucket's pure step beside golang.org/x/time/rate's AllowN(t, 1),
// the peer every Go engineer knows, in the same run. Both are given the time;
// neither reads a clock. Compare with:
//
//	go test -run '^$' -bench 'Decision' -count 5 ./algorithms
//
// The requests arrive at 10× the rate, so both decide a mix of admissions
// and rejections, as a limiter under load does.

const benchRate = 1000 // per second; requests arrive every 100 µs

func BenchmarkDecisionTokenBucketStep(b *testing.B) {
	tb, _ := algorithms.NewTokenBucket(algorithms.Rate{N: benchRate, Per: time.Second}, 50)
	var st algorithms.State
	var d algorithms.Decision
	now := algorithms.Time(0)
	for b.Loop() {
		now += 100
		st, d = tb.Step(st, now, 1)
	}
	_ = d
}

func BenchmarkDecisionXTimeRateAllowN(b *testing.B) {
	lim := rate.NewLimiter(benchRate, 50)
	t0 := time.Unix(0, 0)
	now := t0
	for b.Loop() {
		now = now.Add(100 * time.Microsecond)
		lim.AllowN(now, 1)
	}
}

// In parallel each goroutine decides for its own key, so what is measured is
// the decision, not contention on one lock.
func BenchmarkDecisionTokenBucketStepParallel(b *testing.B) {
	tb, _ := algorithms.NewTokenBucket(algorithms.Rate{N: benchRate, Per: time.Second}, 50)
	b.RunParallel(func(pb *testing.PB) {
		var st algorithms.State
		now := algorithms.Time(0)
		for pb.Next() {
			now += 100
			st, _ = tb.Step(st, now, 1)
		}
	})
}

func BenchmarkDecisionXTimeRateAllowNParallel(b *testing.B) {
	b.RunParallel(func(pb *testing.PB) {
		lim := rate.NewLimiter(benchRate, 50)
		now := time.Unix(0, 0)
		for pb.Next() {
			now = now.Add(100 * time.Microsecond)
			lim.AllowN(now, 1)
		}
	})
}

// The other five, for the README's table: what each decision costs.
func BenchmarkStep(b *testing.B) {
	p := algorithms.Params{Rate: algorithms.Rate{N: benchRate, Per: time.Second}, Burst: 50, Window: 50 * time.Millisecond}
	for _, name := range algorithms.ExactNames() {
		alg, err := algorithms.New(name, p)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			var st algorithms.State
			now := algorithms.Time(0)
			for b.Loop() {
				now += 100
				st, _ = alg.Step(st, now, 1)
			}
		})
	}
}

// Charge beside ChargeInPlace, each algorithm's pair in one run, called
// through the Charger interface as a synced topology's shared copy calls
// it:
//
//	go test -run '^$' -bench Charge ./algorithms
//
// The charges arrive at half the rate, in order, so that every one is an
// admission Step would also have made: a shared copy within its limit.
// The Multi is the token bucket beside a per-minute fixed window and the
// sliding log.
func BenchmarkCharge(b *testing.B) {
	p := algorithms.Params{Rate: algorithms.Rate{N: benchRate, Per: time.Second}, Burst: 50, Window: 50 * time.Millisecond}
	var algs []algorithms.Algorithm
	byName := map[string]algorithms.Algorithm{}
	for _, name := range algorithms.ExactNames() {
		alg, err := algorithms.New(name, p)
		if err != nil {
			b.Fatal(err)
		}
		algs = append(algs, alg)
		byName[name] = alg
	}
	minute, err := algorithms.NewFixedWindow(algorithms.Rate{N: 60 * benchRate, Per: time.Minute}, time.Minute)
	if err != nil {
		b.Fatal(err)
	}
	m, err := algorithms.NewMulti([]algorithms.Policy{
		{Name: "burst", Algorithm: byName["token-bucket"]},
		{Name: "minute", Algorithm: minute},
		{Name: "log", Algorithm: byName["sliding-log"]},
	})
	if err != nil {
		b.Fatal(err)
	}
	algs = append(algs, m)
	const every = 2 * 1_000_000 / benchRate // µs: half the rate
	for _, alg := range algs {
		c, ok := algorithms.AsCharger(alg)
		if !ok {
			b.Fatalf("%s is not a Charger", alg.Name())
		}
		b.Run(alg.Name()+"/Charge", func(b *testing.B) {
			var st algorithms.State
			now := algorithms.Time(0)
			for b.Loop() {
				now += every
				st = c.Charge(st, now, 1)
			}
		})
		b.Run(alg.Name()+"/ChargeInPlace", func(b *testing.B) {
			var st algorithms.State
			now := algorithms.Time(0)
			for b.Loop() {
				now += every
				c.ChargeInPlace(&st, now, 1)
			}
		})
	}
}
