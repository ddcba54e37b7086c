package algorithms

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
)

// Priority is how much a request matters when the fleet is short of
// capacity: sheddable traffic (a crawler, a prefetch) goes first, normal
// traffic next, critical traffic (a checkout, a payment) last.
type Priority uint8

const (
	Critical Priority = iota
	Normal
	Sheddable
)

// Priorities are the priorities, most important first, as scenarios and
// headers name them.
var Priorities = []string{"critical", "normal", "sheddable"}

func (p Priority) String() string {
	if int(p) < len(Priorities) {
		return Priorities[p]
	}
	return fmt.Sprintf("priority(%d)", p)
}

// ParsePriority reads "critical", "normal" or "sheddable".
func ParsePriority(s string) (Priority, error) {
	for i, name := range Priorities {
		if s == name {
			return Priority(i), nil
		}
	}
	return 0, &ParamError{"priority", fmt.Sprintf("unknown priority %q (want critical, normal or sheddable)", s)}
}

// Shedder is a priority load shedder: Stripe's fleet usage load shedder,
// which keeps a share of the fleet's capacity for critical requests and
// turns the others away with 503 first when the fleet runs short. A rate
// limiter protects the fleet from one client; a shedder protects the
// requests that matter from everyone else, whoever is within their limit.
//
// The fleet's capacity is a token bucket: Rate is what it serves a
// second, Burst what it absorbs at once. Every admitted request takes its
// cost. A request of a priority passes only if the tokens it leaves are at
// least that priority's reserve: critical requests may take the last
// token, normal ones leave Reserve[Normal] (20% of the bucket, say) for
// critical traffic, sheddable ones leave Reserve[Sheddable] (50%) for the
// other two. So when demand passes capacity the bucket settles at a
// reserve, and the priorities below it are the ones refused.
//
// Step decides a critical request; StepPriority any. A refusal's
// RetryAfter is when the tokens would allow the request at its priority.
type Shedder struct {
	bucket  *TokenBucket
	reserve [3]int64
}

// NewShedder returns a shedder of the fleet's capacity (rate, burst),
// keeping reserve[p] tokens of the burst out of reach of priority p;
// reserve[Critical] is 0, and the reserves grow with lower priorities.
func NewShedder(rate Rate, burst int64, reserve [3]int64) (*Shedder, error) {
	b, err := NewTokenBucket(rate, burst)
	if err != nil {
		return nil, err
	}
	if reserve[Critical] != 0 {
		return nil, &ParamError{"reserve", fmt.Sprintf("critical requests keep %d in reserve (want 0: nothing is kept from them)", reserve[Critical])}
	}
	for p := Normal; p <= Sheddable; p++ {
		if reserve[p] < reserve[p-1] || reserve[p] >= burst {
			return nil, &ParamError{"reserve", fmt.Sprintf("%s keeps %d of %d (want from %d, the reserve above it, to below the burst)", p, reserve[p], burst, reserve[p-1])}
		}
	}
	return &Shedder{bucket: b, reserve: reserve}, nil
}

// Name returns "shedder".
func (s *Shedder) Name() string { return "shedder" }

// Params returns the fleet's capacity: rate and burst.
func (s *Shedder) Params() Params { return s.bucket.Params() }

// Reserve returns the tokens kept from each priority.
func (s *Shedder) Reserve() [3]int64 { return s.reserve }

// Step decides a critical request.
func (s *Shedder) Step(prev State, now Time, cost int64) (State, Decision) {
	return s.StepPriority(prev, now, cost, Critical)
}

// StepPriority decides a request of priority p: admitted, it takes cost
// tokens; refused, it takes none. Remaining is what the priority may still
// take at once.
func (s *Shedder) StepPriority(prev State, now Time, cost int64, p Priority) (State, Decision) {
	if p > Sheddable {
		p = Sheddable
	}
	cost = CleanCost(cost)
	keep := s.reserve[p]
	if keep == 0 {
		return s.bucket.Step(prev, now, cost)
	}
	// Whether cost + keep would fit is whether cost fits with keep left.
	_, probe := s.bucket.Step(prev, now, cost+keep)
	if !probe.Allowed {
		next, d := s.bucket.Step(prev, now, 0)
		d.Allowed = false
		d.RetryAfter = probe.RetryAfter
		d.Remaining = max(d.Remaining-keep, 0)
		d.Limit = s.bucket.burst - keep
		return next, d
	}
	next, d := s.bucket.Step(prev, now, cost)
	d.Remaining = max(d.Remaining-keep, 0)
	d.Limit = s.bucket.burst - keep
	return next, d
}

// ReserveOf returns the tokens a share of burst is: share × burst, rounded
// down, computed exactly on the decimal the share was written as (0.29,
// not the float64 nearest it, 0.28999999999999998). A float product
// rounds 0.29 × 100 to 28.999999999999996 and the reserve one token low.
// The decimal is the shortest that reads back as share: the one a
// scenario wrote, for any of up to 15 significant digits. A share that is
// not a number or not above 0 keeps nothing; a product past int64
// saturates (NewShedder refuses a reserve that is not below the burst).
func ReserveOf(burst int64, share float64) int64 {
	if !(share > 0) || burst <= 0 {
		return 0
	}
	if math.IsInf(share, 1) {
		return math.MaxInt64
	}
	exact, ok := new(big.Rat).SetString(strconv.FormatFloat(share, 'g', -1, 64))
	if !ok {
		return 0 // FormatFloat of a finite float always parses
	}
	exact.Mul(exact, new(big.Rat).SetInt64(burst))
	tokens := new(big.Int).Quo(exact.Num(), exact.Denom()) // both positive: rounds down
	if !tokens.IsInt64() {
		return math.MaxInt64
	}
	return tokens.Int64()
}
