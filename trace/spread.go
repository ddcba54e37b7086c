package trace

// Resolution and spread: how fine a log's times are, and, for a log
// coarser than its requests, a deterministic spacing of the requests each
// key made within one tick.

import (
	"math"
	"math/bits"
	"slices"
	"strings"
	"time"
)

// gcd is the greatest common divisor of a and b, both ≥ 0; gcd(0, b) = b.
func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// subSecond is at's part below the second, counted up from the second
// before it (so a time before 1970 has one too); a whole second counts as
// a whole second's worth, so that the gcd of whole seconds is 1s.
func subSecond(at int64) int64 {
	ns := at % int64(time.Second)
	if ns < 0 {
		ns += int64(time.Second)
	}
	if ns == 0 {
		return int64(time.Second)
	}
	return ns
}

// ResolutionText says how fine times of resolution d are, by the power of
// ten below it: "whole-second times", "millisecond times" (for d of 1ms
// up to 999ms: a log of ".250" and ".500" is written in milliseconds,
// whatever the gcd of its times), "microsecond times" or "nanosecond
// times"; "" for 0, no time read.
func ResolutionText(d time.Duration) string {
	switch {
	case d <= 0:
		return ""
	case d >= time.Second:
		return "whole-second times"
	case d >= time.Millisecond:
		return "millisecond times"
	case d >= time.Microsecond:
		return "microsecond times"
	}
	return "nanosecond times"
}

// spreader holds the requests of one tick, as the reorder queue returns
// them in time order, and returns them spread across it.
type spreader struct {
	tick int64 // ns; 0: off
	seed uint64

	cur  int64     // the tick being gathered: its start, in ns
	held []pending // its requests, in the order they came
	out  []pending // the last tick's, spread and sorted, from next on
	next int
}

func (s *spreader) len() int { return len(s.held) + len(s.out) - s.next }

// popDue returns the next request: straight from the reorder queue when
// Spread is off; else through the spreader, a tick at a time, once the
// queue holds nothing more of the tick (the next request due is in a
// later tick, or none is left to come: limit is MaxInt64 at the end).
func (r *Reader) popDue(limit int64, rec *Record) bool {
	s := &r.spread
	if s.tick == 0 {
		return r.queue.popDue(limit, rec)
	}
	for {
		if s.next < len(s.out) {
			p := &s.out[s.next]
			*rec = p.rec
			rec.At = time.Unix(0, p.at).UTC()
			*p = pending{}
			s.next++
			return true
		}
		var got Record
		if !r.queue.popDue(limit, &got) {
			if limit == math.MaxInt64 && len(s.held) > 0 {
				s.flush()
				continue
			}
			return false
		}
		at := got.At.UnixNano()
		start := at - floorMod(at, s.tick)
		if len(s.held) > 0 && start != s.cur {
			s.flush()
		}
		s.cur = start
		s.held = append(s.held, pending{at: at, rec: got})
	}
}

func floorMod(a, b int64) int64 {
	m := a % b
	if m < 0 {
		m += b
	}
	return m
}

// flush spreads the held tick into out: each key's n requests, in their
// order, at cur + (i + u)/n × tick, u the key's and tick's hashed offset
// in [0, 1); then sorted by time, then line.
func (s *spreader) flush() {
	h := s.held
	// Group by key, keeping each key's order: a stable sort by key.
	slices.SortStableFunc(h, func(a, b pending) int { return strings.Compare(a.rec.Key, b.rec.Key) })
	for i := 0; i < len(h); {
		j := i + 1
		for j < len(h) && h[j].rec.Key == h[i].rec.Key {
			j++
		}
		n := uint64(j - i)
		u := s.offset(h[i].rec.Key) // a fraction of 2⁶⁴
		for k := i; k < j; k++ {
			// (k−i + u/2⁶⁴)/n × tick, in 128-bit arithmetic: exact and
			// below tick, so every time stays within its tick.
			hi, lo := bits.Mul64(uint64(k-i), uint64(s.tick))
			hu, _ := bits.Mul64(u, uint64(s.tick)) // ⌊u/2⁶⁴ × tick⌋
			lo2, carry := bits.Add64(lo, hu, 0)
			hi += carry
			q, _ := bits.Div64(hi, lo2, n)
			h[k].at = s.cur + int64(q)
		}
		i = j
	}
	slices.SortFunc(h, func(a, b pending) int {
		if a.at != b.at {
			if a.at < b.at {
				return -1
			}
			return 1
		}
		return a.rec.Line - b.rec.Line
	})
	clear(s.out)
	s.out, s.held, s.next = h, s.out[:0], 0
}

// offset is u for key in the current tick: a hash of the seed, the key
// and the tick, mixed so that neighbouring ticks and keys differ in every
// bit (SplitMix64's finaliser).
func (s *spreader) offset(key string) uint64 {
	x := uint64(14695981039346656037) // FNV-1a of the key
	for i := 0; i < len(key); i++ {
		x ^= uint64(key[i])
		x *= 1099511628211
	}
	x ^= s.seed*0x9e3779b97f4a7c15 ^ uint64(s.cur)*0xbf58476d1ce4e5b9
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
