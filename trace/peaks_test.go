package trace_test

import (
	"math/big"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratelim/ratelim/trace"
)

// bruteWindow is the most of ts (sorted) in any [t, t+w): some window
// with the most starts at a request, so trying each is enough.
func bruteWindow(ts []int64, w int64) int {
	best := 0
	for i := range ts {
		n := 0
		for j := i; j < len(ts) && ts[j]-ts[i] < w; j++ {
			n++
		}
		best = max(best, n)
	}
	return best
}

// bruteBurst runs the level recurrence on exact rationals.
func bruteBurst(ts []int64, n int64, per time.Duration) int64 {
	rate := big.NewRat(n, int64(per)) // tokens a nanosecond
	level, top := new(big.Rat), new(big.Rat)
	one := big.NewRat(1, 1)
	for i, t := range ts {
		if i > 0 {
			drain := new(big.Rat).Mul(rate, new(big.Rat).SetInt64(t-ts[i-1]))
			level.Sub(level, drain)
			if level.Sign() < 0 {
				level.SetInt64(0)
			}
		}
		level.Add(level, one)
		if level.Cmp(top) > 0 {
			top.Set(level)
		}
	}
	q, r := new(big.Int).QuoRem(top.Num(), top.Denom(), new(big.Int))
	if r.Sign() > 0 {
		q.Add(q, big.NewInt(1))
	}
	return q.Int64()
}

func TestPeaksAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		window := time.Duration(1+rng.IntN(3000)) * time.Millisecond
		n := int64(rng.IntN(20))
		per := []time.Duration{time.Second, time.Minute, 3 * time.Millisecond, 7}[rng.IntN(4)]
		p, err := trace.NewPeaks(window, n, per)
		if err != nil {
			t.Fatal(err)
		}
		keys := []string{"a", "b", "c"}
		times := map[string][]int64{}
		at := int64(1_700_000_000) * int64(time.Second)
		for range rng.IntN(400) {
			switch rng.IntN(4) {
			case 0: // same instant
			case 1:
				at += rng.Int64N(int64(time.Millisecond))
			default:
				at += rng.Int64N(int64(window))
			}
			k := keys[rng.IntN(len(keys))]
			p.Add(k, time.Unix(0, at))
			times[k] = append(times[k], at)
		}
		got := p.Keys()
		if len(got) != len(times) {
			t.Fatalf("trial %d: %d keys, want %d", trial, len(got), len(times))
		}
		for _, kp := range got {
			ts := times[kp.Key]
			want := trace.KeyPeak{Key: kp.Key, Requests: len(ts), InWindow: bruteWindow(ts, int64(window)), Burst: bruteBurst(ts, n, per)}
			if kp != want {
				t.Fatalf("trial %d (window %v, rate %d/%v): got %+v, want %+v", trial, window, n, per, kp, want)
			}
		}
	}
}

// TestPeaksKnown checks a trace built with known peaks: each key k sends
// bursts of k requests 100ms apart, a burst every 10s, at a rate whose
// refill between two requests of a burst is exactly a third of a token.
func TestPeaksKnown(t *testing.T) {
	p, err := trace.NewPeaks(time.Second, 10, 3*time.Second) // 10 tokens / 3s: 1/3 token a 100ms
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for burst := range 5 {
		for k := 1; k <= 9; k++ {
			for i := range k {
				p.Add(string(rune('0'+k)), t0.Add(time.Duration(burst)*10*time.Second+time.Duration(i)*100*time.Millisecond))
			}
		}
	}
	p.Add("", t0) // exempt
	for _, kp := range p.Keys() {
		k := int(kp.Key[0] - '0')
		// Within one burst the level after request i (from 0) is
		// 1 + i·(1 − 1/3) = 1 + 2i/3; the bursts are 10s apart, drained.
		wantBurst := (3 + 2*(k-1) + 2) / 3 // ⌈(3 + 2(k−1))/3⌉
		if kp.Requests != 5*k || kp.InWindow != k || kp.Burst != int64(wantBurst) {
			t.Errorf("key %d: %+v, want requests %d, in window %d, burst %d", k, kp, 5*k, k, wantBurst)
		}
	}
}

func TestPeaksEdges(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	tests := []struct {
		name   string
		n      int64
		per    time.Duration
		offs   []time.Duration
		window int
		burst  int64
	}{
		{"window is half-open", 1, time.Second, []time.Duration{0, time.Second, 2 * time.Second}, 1, 1},
		{"just inside", 1, time.Second, []time.Duration{0, time.Second - 1}, 2, 2},
		{"no refill", 0, time.Second, []time.Duration{0, time.Hour, 2 * time.Hour}, 1, 3},
		{"time going back counts as the last", 1, time.Second, []time.Duration{time.Second, 0}, 2, 2},
		{"huge gap drains", 1 << 40, 1, []time.Duration{0, 0, 200 * 365 * 24 * time.Hour}, 2, 2},
		{"exact refill", 1, time.Second, []time.Duration{0, time.Second, 2 * time.Second, 3 * time.Second}, 1, 1},
	}
	for _, tt := range tests {
		p, err := trace.NewPeaks(time.Second, tt.n, tt.per)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range tt.offs {
			p.Add("k", t0.Add(o))
		}
		kp := p.Keys()[0]
		if kp.InWindow != tt.window || kp.Burst != tt.burst {
			t.Errorf("%s: in window %d, burst %d; want %d, %d", tt.name, kp.InWindow, kp.Burst, tt.window, tt.burst)
		}
	}
	for _, bad := range []struct {
		w   time.Duration
		n   int64
		per time.Duration
	}{{0, 1, time.Second}, {time.Second, -1, time.Second}, {time.Second, 1, 0}} {
		if _, err := trace.NewPeaks(bad.w, bad.n, bad.per); err == nil {
			t.Errorf("NewPeaks(%v, %d, %v) took it", bad.w, bad.n, bad.per)
		}
	}
}
