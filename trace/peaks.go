package trace

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"
	"time"
)

// Peaks measures, for each key of a stream of requests, the peaks a limit
// must allow to leave the key untouched:
//
//   - InWindow, the most requests in any window [t, t+W) of the given
//     length W, over every placement of t (not only windows aligned to
//     multiples of W). A sliding-log limit of L requests per W rejects none
//     of the key's requests exactly when InWindow ≤ L; a fixed window of L
//     rejects none if InWindow ≤ L, and may reject some above.
//   - Burst, the smallest token-bucket burst that, at the given rate,
//     admits every request of the key: the bucket's deficit ("level")
//     starts at 0, drains at the rate and rises by one a request,
//     level = max(0, level − rate·dt) + 1, and Burst = ⌈max level⌉. It is
//     kept as an exact fraction (tokens and 1/Per of a token, with 128-bit
//     products), so it has no rounding: a trace made to need a burst of 10
//     gives 10, not 10.000000001 rounded up to 11.
//
// Requests must be added in time order per key, as a [Reader] returns
// them; a time before the key's last one counts as the last one (as a
// limiter clamps a clock that goes back). A request with the key "" is
// exempt, as for the middleware, and not counted.
//
// Memory is one small record per distinct key plus, for each key, the
// times of its requests in the last W: at most its InWindow. A log of
// 10⁵ keys that each peak at 100 requests a window holds 10⁷ times, 80 MB.
type Peaks struct {
	window int64  // ns
	rateN  uint64 // tokens a ratePer
	per    uint64 // ns
	keys   map[string]*keyPeaks
}

// keyPeaks is one key's part of Peaks.
type keyPeaks struct {
	requests int
	recent   []int64 // times of the requests in the last window, from head on
	head     int
	inWindow int
	last     int64
	level    level
}

// level is a token bucket's deficit, k + f/per tokens with 0 ≤ f < per,
// and its highest so far: exact, with no rounding.
type level struct {
	k, f       uint64
	maxK, maxF uint64
}

// add drains the level at rateN tokens a per over dt ns (nothing before
// the first request), then adds the request's token.
func (l *level) add(rateN, per, dt uint64, first bool) {
	// Drain rate·dt = (rateN·dt)/per tokens, exactly.
	if !first && (l.k > 0 || l.f > 0) {
		hi, lo := bits.Mul64(rateN, dt)
		if hi >= per { // the quotient needs more than 64 bits: drained
			l.k, l.f = 0, 0
		} else {
			q, rem := bits.Div64(hi, lo, per)
			switch {
			case q > l.k || (q == l.k && rem >= l.f):
				l.k, l.f = 0, 0
			case l.f >= rem:
				l.k -= q
				l.f -= rem
			default: // borrow a token: q < k here
				l.k -= q + 1
				l.f += per - rem
			}
		}
	}
	l.k++
	if l.k > l.maxK || (l.k == l.maxK && l.f > l.maxF) {
		l.maxK, l.maxF = l.k, l.f
	}
}

// burst is the smallest whole burst that held the highest level.
func (l *level) burst() int64 {
	b := l.maxK
	if l.maxF > 0 {
		b++
	}
	return int64(min(b, math.MaxInt64))
}

// KeyPeak is what Peaks found for one key.
type KeyPeak struct {
	Key      string
	Requests int   // requests of the key
	InWindow int   // the most of them in any window of Peaks' length
	Burst    int64 // the smallest token-bucket burst that admits them all at Peaks' rate
}

// NewPeaks measures peaks in windows of length window, and bursts at a
// rate of rateN tokens a ratePer (algorithms.Rate's N and Per). A rate of
// 0 refills nothing: the burst is then the key's request count.
func NewPeaks(window time.Duration, rateN int64, ratePer time.Duration) (*Peaks, error) {
	switch {
	case window <= 0:
		return nil, fmt.Errorf("trace: peak window %v is not positive (want e.g. 1s)", window)
	case rateN < 0:
		return nil, fmt.Errorf("trace: rate %d/%v is negative", rateN, ratePer)
	case rateN > 0 && ratePer <= 0:
		return nil, fmt.Errorf("trace: rate %d/%v: the period is not positive", rateN, ratePer)
	}
	per := uint64(max(ratePer, 1))
	return &Peaks{window: int64(window), rateN: uint64(rateN), per: per, keys: make(map[string]*keyPeaks)}, nil
}

// Add counts a request of key at at.
func (p *Peaks) Add(key string, at time.Time) {
	if key == "" {
		return
	}
	p.AddNanos(key, clampNanos(at))
}

// AddNanos is Add with the time in nanoseconds since 1970.
func (p *Peaks) AddNanos(key string, at int64) {
	if key == "" {
		return
	}
	kp := p.keys[key]
	if kp == nil {
		kp = &keyPeaks{last: at}
		p.keys[key] = kp
	}
	at = max(at, kp.last)
	dt := uint64(at - kp.last) // at ≥ last, so no overflow into the sign

	// The sliding window: drop the times at least a window before at.
	// at − t cannot overflow: every t is between the key's first time
	// and at... unless they are centuries apart, which the check on the
	// subtraction's sign covers.
	for kp.head < len(kp.recent) {
		d := at - kp.recent[kp.head]
		if d >= 0 && d < p.window {
			break
		}
		kp.head++
	}
	if kp.head == len(kp.recent) {
		kp.recent, kp.head = kp.recent[:0], 0
	} else if kp.head > 32 && kp.head*2 >= len(kp.recent) {
		n := copy(kp.recent, kp.recent[kp.head:])
		kp.recent, kp.head = kp.recent[:n], 0
	}
	kp.recent = append(kp.recent, at)
	kp.inWindow = max(kp.inWindow, len(kp.recent)-kp.head)

	kp.level.add(p.rateN, p.per, dt, kp.requests == 0)
	kp.requests++
	kp.last = at
}

// Keys returns the peaks of every key seen, sorted by key.
func (p *Peaks) Keys() []KeyPeak {
	out := make([]KeyPeak, 0, len(p.keys))
	for key, kp := range p.keys {
		out = append(out, KeyPeak{Key: key, Requests: kp.requests, InWindow: kp.inWindow, Burst: kp.level.burst()})
	}
	slices.SortFunc(out, func(a, b KeyPeak) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// DefaultQuantiles are the shares of keys Suggest is usually asked to
// leave untouched.
var DefaultQuantiles = []float64{0.99, 0.999, 1}

// Limit is a limit that leaves a share of keys untouched.
type Limit struct {
	// Quantile is the share of keys asked for, in (0, 1].
	Quantile float64
	// InWindow is the smallest limit, in requests per Peaks' window, that
	// rejects none of the requests of at least Quantile of the keys.
	InWindow int
	// Burst is the smallest token-bucket burst, at Peaks' rate, that does.
	Burst int64
	// InWindowUntouched and BurstUntouched are how many keys the InWindow
	// limit and the Burst leave untouched: each at least ⌈Quantile × keys⌉,
	// more when keys tie at the limit. They differ: a key whose requests
	// are spread over its window peaks high but needs a small burst.
	InWindowUntouched, BurstUntouched int
}

// Suggest returns, for each quantile q, the limits that leave q of the
// keys untouched: the nearest-rank q-quantile of the keys' InWindow and of
// their Burst, the value of rank ⌈q·n⌉ of n sorted ascending. So 0.99 of
// 150 keys is the 149th smallest peak: 148.5 keys are not enough. q is
// rounded to millionths first, so that 0.999 × 1000 is exactly 999.
func Suggest(peaks []KeyPeak, quantiles ...float64) ([]Limit, error) {
	n := len(peaks)
	if n == 0 {
		return nil, errors.New("trace: no keys to suggest a limit for (every request was keyless or filtered out)")
	}
	win := make([]int, n)
	burst := make([]int64, n)
	for i, kp := range peaks {
		win[i], burst[i] = kp.InWindow, kp.Burst
	}
	slices.Sort(win)
	slices.Sort(burst)
	out := make([]Limit, 0, len(quantiles))
	for _, q := range quantiles {
		if !(q > 0 && q <= 1) {
			return nil, fmt.Errorf("trace: quantile %v is not in (0, 1] (want e.g. 0.99)", q)
		}
		ppm := int64(math.Round(q * 1e6))
		rank := int((ppm*int64(n) + 1e6 - 1) / 1e6) // ⌈q·n⌉, from 1
		rank = min(max(rank, 1), n)
		l := Limit{Quantile: q, InWindow: win[rank-1], Burst: burst[rank-1]}
		l.InWindowUntouched, _ = slices.BinarySearch(win, l.InWindow+1)
		l.BurstUntouched, _ = slices.BinarySearch(burst, l.Burst+1)
		out = append(out, l)
	}
	return out, nil
}
