package sim

// What the recorder measures with: latency histograms, and the peak
// windows of admissions (the most in any one second).

import (
	"math/bits"
	"slices"
)

// histogram counts latencies in µs in log-linear buckets: exact below 256 µs,
// then 128 buckets per doubling (under 1% error), whatever the number of
// requests. Round trips such as 500 µs fall on a bucket edge and are
// reported exactly.
//
// Most clients' requests fall in a bucket or two (decided locally, or one
// round trip), so the first histFew buckets counted are kept inline, in
// order: a client's two histograms are 128 bytes of its run, whatever it
// sent, and a million clients are not 2 GB of bucket blocks. A histogram
// that counts more buckets moves them to blocks of 128, each allocated
// when a latency first falls in it (blocked): a client whose latencies
// vary holds the blocks they reached, not all 7,680 buckets, and clearing
// the histogram at every step costs the blocks it used.
type histogram struct {
	// few are the buckets counted and their counts, in bucket order,
	// while there are at most histFew of them (nFew) and blocked is nil.
	few  [histFew]int64
	at   [histFew]uint16
	nFew uint8
	// last is the place in few of the bucket counted last: a client's
	// next request most often falls in it again, and is counted there
	// inline, with no search (addAt).
	last uint8
	// blocked holds every count once more than histFew buckets were
	// counted; it stays, cleared, through a reset.
	blocked *histBlocked
}

// histBlocked are a histogram's counts in blocks of histBlock buckets.
type histBlocked struct {
	blocks [histBlocks]*[histBlock]int64
	// sums are each block's total count, so that a quantile skips whole
	// blocks rather than reading 7,680 counts.
	sums [histBlocks]int64
	// used are the indexes of the allocated blocks, for reset.
	used []uint8
	// total is every count.
	total int64
}

const (
	histExact   = 256 // values below are their own bucket
	histSub     = 128 // buckets per doubling above
	histShift   = 7   // log2(histSub)
	histBuckets = histExact + 58*histSub
	histBlock   = 128
	histBlocks  = histBuckets / histBlock
	histFew     = 4 // buckets kept inline
)

func histIndex(v int64) int {
	if v < histExact {
		return int(max(v, 0))
	}
	e := bits.Len64(uint64(v)) - histShift - 1 // v >> e is in [histSub, 2·histSub)
	return min(histExact+(e-1)*histSub+int(v>>e)-histSub, histBuckets-1)
}

func histValue(i int) int64 {
	if i < histExact {
		return int64(i)
	}
	e := (i-histExact)/histSub + 1
	sub := int64((i-histExact)%histSub + histSub)
	return sub << e
}

// addAt counts one value in bucket i, histIndex(value): a value counted in
// two histograms is indexed once.
func (h *histogram) addAt(i int) {
	if !h.bump(i) {
		h.add(i)
	}
}

// bump counts one value in bucket i if it is the bucket counted last, as
// a client's next request most often is, and reports whether it did. It
// inlines where addAt, with its call, does not: the recorder calls it,
// and add only when it reports false (22 instructions a request, where
// the search cost 64).
func (h *histogram) bump(i int) bool {
	// Once blocked, nFew is 0; the mask spares a bounds check.
	if l := h.last & (histFew - 1); l < h.nFew && int(h.at[l]) == i {
		h.few[l]++
		return true
	}
	return false
}

// add counts one value in bucket i: among the inline buckets, in order,
// or past them in blocks.
func (h *histogram) add(i int) {
	if h.blocked != nil {
		h.blocked.add(i)
		return
	}
	j := 0
	for j < int(h.nFew) && int(h.at[j]) < i {
		j++
	}
	if j < int(h.nFew) && int(h.at[j]) == i {
		h.few[j]++
		h.last = uint8(j)
		return
	}
	if h.nFew == histFew {
		h.block()
		h.blocked.add(i)
		return
	}
	copy(h.at[j+1:h.nFew+1], h.at[j:h.nFew])
	copy(h.few[j+1:h.nFew+1], h.few[j:h.nFew])
	h.at[j], h.few[j] = uint16(i), 1
	h.nFew++
	h.last = uint8(j)
}

// block moves the inline buckets to blocks.
func (h *histogram) block() {
	h.blocked = &histBlocked{}
	for j := range h.nFew {
		h.blocked.addN(int(h.at[j]), h.few[j])
	}
	h.nFew = 0
}

func (b *histBlocked) add(i int) { b.addN(i, 1) }

func (b *histBlocked) addN(i int, n int64) {
	bl := b.blocks[i/histBlock]
	if bl == nil {
		bl = new([histBlock]int64)
		b.blocks[i/histBlock] = bl
		b.used = append(b.used, uint8(i/histBlock))
	}
	bl[i%histBlock] += n
	b.sums[i/histBlock] += n
	b.total += n
}

// count is how many values the histogram counts.
func (h *histogram) count() int64 {
	if h.blocked != nil {
		return h.blocked.total
	}
	var n int64
	for _, c := range h.few[:h.nFew] {
		n += c
	}
	return n
}

// empty reports whether the histogram counts nothing.
func (h *histogram) empty() bool {
	return h.nFew == 0 && (h.blocked == nil || h.blocked.total == 0)
}

// quantile returns the smallest bucket value with at least q of the counts
// at or below it; 0 for an empty histogram.
func (h *histogram) quantile(q float64) int64 {
	n := h.count()
	if n == 0 {
		return 0
	}
	rank := int64(q*float64(n) + 0.9999999)
	rank = min(max(rank, 1), n)
	var seen int64
	if h.blocked == nil {
		for j := range h.nFew {
			seen += h.few[j]
			if seen >= rank {
				return histValue(int(h.at[j]))
			}
		}
		return histValue(histBuckets - 1)
	}
	for bi, sum := range h.blocked.sums {
		if seen+sum < rank {
			seen += sum
			continue
		}
		for j, c := range h.blocked.blocks[bi] {
			seen += c
			if seen >= rank {
				return histValue(bi*histBlock + j)
			}
		}
	}
	return histValue(histBuckets - 1)
}

// reset empties the histogram, keeping its blocks for the next step.
func (h *histogram) reset() {
	if h.empty() {
		return
	}
	h.nFew, h.last = 0, 0
	if b := h.blocked; b != nil {
		for _, bi := range b.used {
			clear(b.blocks[bi][:])
			b.sums[bi] = 0
		}
		b.total = 0
	}
}

// peakWindow tracks the most admissions in any window of length w, exactly,
// from admission times that arrive in order: a queue of the admissions still
// inside the window ending at the latest one, kept in a ring that grows to
// the busiest window's count and is never moved about otherwise.
type peakWindow struct {
	w    int64
	ring []int64 // the admissions within w of the latest; a power of two long
	head int     // the oldest, in ring
	n    int     // how many
	peak int64
}

// add counts an admission at at. The ring, its head and count are worked
// on as locals and stored once: through p, each turn of the loop read
// them again (add cost an admitted request 65 instructions, 57 now).
func (p *peakWindow) add(at int64) {
	ring, head, n := p.ring, p.head, p.n
	mask := len(ring) - 1
	for from := at - p.w; n > 0 && ring[head] <= from; n-- {
		head = (head + 1) & mask
	}
	if n == len(ring) {
		grown := make([]int64, max(2*len(ring), 4)) // most clients admit a few a second
		copy(grown, ring[head:])
		copy(grown[len(ring)-head:], ring[:head])
		ring, head, mask = grown, 0, len(grown)-1
	}
	ring[(head+n)&mask] = at
	n++
	p.ring, p.head, p.n = ring, head, n
	p.peak = max(p.peak, int64(n))
}

// peakPair are the peak windows of what was admitted and of what the exact
// limiter would have admitted. Until the two first disagree they have seen
// the same admissions, so one ring serves both; at the first disagreement
// the ideal's is copied from it and each goes its own way.
type peakPair struct {
	actual, ideal peakWindow
	split         bool
}

func newPeakPair() peakPair { return peakPair{actual: peakWindow{w: 1_000_000}} }

func (p *peakPair) add(at int64, allowed, ideal bool) {
	if !p.split {
		if allowed == ideal {
			if allowed {
				p.actual.add(at)
			}
			return
		}
		p.split = true
		p.ideal = p.actual
		p.ideal.ring = slices.Clone(p.actual.ring)
	}
	if allowed {
		p.actual.add(at)
	}
	if ideal {
		p.ideal.add(at)
	}
}

// idealPeak is the exact limiter's peak.
func (p *peakPair) idealPeak() int64 {
	if !p.split {
		return p.actual.peak
	}
	return p.ideal.peak
}
