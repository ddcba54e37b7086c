package sim

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/internal/sat"
)

// stream generates one Traffic pattern's arrivals, in order. next returns the
// next arrival at or after the previous one, and false when the pattern has
// no more before its stop.
type stream struct {
	tr          *Traffic     // the client's, not a copy: a million clients each kept 176 bytes more
	kind        *patternKind // tr's pattern (patterns.go); nil sends nothing
	start, stop int64        // µs; stop is exclusive
	k           int64        // arrivals generated so far
	last        int64
	// rate is tr.Rate, kept beside the rest: the constant and Poisson
	// patterns read it at every arrival, and through tr that was a cache
	// miss a request at 10,000 clients (3.8% of a TUI frame).
	rate algorithms.Rate
}

func newStream(tr *Traffic, duration int64) *stream {
	stop := duration
	if tr.Stop > 0 {
		stop = min(int64(algorithms.At(tr.Stop)), duration)
	}
	return &stream{tr: tr, kind: patternOf(tr.Pattern), start: int64(algorithms.At(tr.Start)), stop: stop, rate: tr.Rate}
}

func perMicros(r algorithms.Rate) int64 { return int64(algorithms.At(r.Per)) }

// evenly returns the k-th of arrivals spaced at rate r from start, exactly:
// start + k × per / N, with no drift however long the run.
func evenly(start, k int64, r algorithms.Rate) int64 {
	if r.N <= 0 {
		return math.MaxInt64
	}
	return sat.Add(start, int64(mulDivFloor(uint64(k), uint64(perMicros(r)), uint64(r.N))))
}

// next is the stream's next arrival, at or after its previous one, in µs,
// and false when its pattern has no more before its stop.
func (s *stream) next(rng *rand.Rand) (int64, bool) {
	if s.kind == nil {
		return 0, false
	}
	at, ok := s.kind.at(s, rng)
	if !ok || at >= s.stop || at < s.last {
		return 0, false
	}
	s.k++
	s.last = at
	return at, true
}

// service is the service time Traffic.Services gives the arrival next
// returned last, in µs, or -1 when it gives none (the client's Service is
// drawn).
func (s *stream) service() int64 {
	if i := s.k - 1; i >= 0 && i < int64(len(s.tr.Services)) {
		return int64(algorithms.At(s.tr.Services[i]))
	}
	return -1
}

// evenlyCount is how many arrivals at rate r fall in [0, span).
func evenlyCount(span int64, r algorithms.Rate) int64 {
	if r.N <= 0 {
		return 0
	}
	// k × per / N < span  ⇔  k < span × N / per
	return int64(mulDivCeil(uint64(span), uint64(r.N), uint64(perMicros(r))))
}

// estimate is the number of arrivals the stream will produce: what the
// request budget is checked against before a run.
func (s *stream) estimate() float64 {
	if s.kind == nil {
		return 0
	}
	return s.kind.estimate(*s.tr, float64(max(s.stop-s.start, 0))/1e6)
}

// mulDivFloor is a × b / c rounded down, saturating instead of panicking
// when the quotient does not fit.
func mulDivFloor(a, b, c uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	if hi >= c {
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, c)
	return min(q, math.MaxInt64)
}

// mulDivCeil is a × b / c rounded up, saturating.
func mulDivCeil(a, b, c uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	if hi >= c {
		return math.MaxInt64
	}
	q, r := bits.Div64(hi, lo, c)
	if r > 0 {
		q++
	}
	return min(q, math.MaxInt64)
}

// newRand is the run's one random source, from its seed: a run and the
// arrivals a live run replays draw the same numbers.
func newRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// Arrival is one request a scenario's traffic sends, before any retry.
type Arrival struct {
	Client int // index into Scenario.Clients
	At     time.Duration
	Cost   int64
}

// Arrivals calls yield with every request sc's traffic sends, its feeds'
// included, in time order (ties in the order the simulator breaks them),
// drawing random gaps from a source seeded as a run's is; it stops early
// when yield returns false. A live load run replays these on the wall
// clock. The error is a feed's that could not be read.
func Arrivals(sc Scenario, yield func(Arrival) bool) error {
	rng := newRand(sc.Seed)
	duration := int64(algorithms.At(sc.Duration))
	var q eventQueue
	var seq uint64
	type source struct {
		s    *stream
		cost int64
	}
	var sources [][]source
	push := func(client, index int) {
		src := sources[client][index]
		if at, ok := src.s.next(rng); ok {
			seq++
			q.push(event{at: at, seq: seq, client: int32(client), arg: int32(index), cost: src.cost})
		}
	}
	for _, c := range sc.Clients {
		var srcs []source
		for i := range c.Traffic {
			srcs = append(srcs, source{newStream(&c.Traffic[i], duration), max(c.Traffic[i].Cost, 1)})
		}
		sources = append(sources, srcs)
	}
	for ci := range sources {
		for si := range sources[ci] {
			push(ci, si)
		}
	}
	var feeds []*feedRun
	defer func() {
		for _, f := range feeds {
			f.r.Close()
		}
	}()
	pushFeed := func(i int) error {
		e, ok, err := feeds[i].next(i, duration)
		if ok {
			seq++
			e.seq = seq
			q.push(e)
		}
		return err
	}
	for i, f := range sc.Feeds {
		r, err := f.Open()
		if err != nil {
			return fmt.Errorf("%s: %w", f.Name, err)
		}
		feeds = append(feeds, &feedRun{Feed: f, r: r})
		if err := pushFeed(i); err != nil {
			return err
		}
	}
	for q.len() > 0 {
		e := q.pop()
		if !yield(Arrival{Client: int(e.client), At: algorithms.Time(e.at).Duration(), Cost: e.cost}) {
			return nil
		}
		if e.arg < 0 {
			if err := pushFeed(int(-1 - e.arg)); err != nil {
				return err
			}
			continue
		}
		push(int(e.client), int(e.arg))
	}
	return nil
}
