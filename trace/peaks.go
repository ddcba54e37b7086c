package trace

import (
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
