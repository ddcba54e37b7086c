package httplimit

import (
	"errors"
	"net/http"
	"strings"
	"sync"

	"github.com/ratelim/ratelim/algorithms"
)

// ShedHeader is set on the 503 a load shedder ([Config.Shedder]) answers,
// to the priority it turned away ("sheddable", "normal", or even
// "critical" once the fleet has nothing left at all): what tells a client,
// a load test or an operator reading a log a shed request from a store
// failing closed, which answers 503 too.
const ShedHeader = "X-RateLimit-Shed"

// Shedder is a priority load shedder ([algorithms.Shedder]) held in this
// process: one state, the fleet's capacity as a token bucket, behind a
// mutex, so that every middleware given the same Shedder (every server of
// an in-process fleet, every route of one server) draws on the same
// capacity. Several processes each holding their own Shedder each have
// the whole capacity: give each its share.
//
// It is safe for concurrent use. The zero Shedder has no algorithm: [New]
// refuses it, and Take refuses everything; build one with [NewShedder].
type Shedder struct {
	alg   *algorithms.Shedder
	mu    sync.Mutex
	state algorithms.State // the zero State is a full bucket
}

// NewShedder returns a Shedder running alg from a full bucket. It reports
// an error for a nil alg.
func NewShedder(alg *algorithms.Shedder) (*Shedder, error) {
	if alg == nil {
		return nil, errors.New("httplimit: NewShedder needs an algorithm (want algorithms.NewShedder(rate, burst, reserve))")
	}
	return &Shedder{alg: alg}, nil
}

// Algorithm returns the shedder's algorithm; nil for the zero Shedder.
func (s *Shedder) Algorithm() *algorithms.Shedder { return s.alg }

// Take decides a request of priority p costing cost at instant now
// (microseconds since the Unix epoch, as the limiter's): admitted, it
// takes cost of the fleet's capacity; refused, it takes nothing and
// RetryAfter is when the capacity would let it through at its priority.
// A priority past Sheddable counts as Sheddable. An instant earlier than
// one already seen earns nothing (the bucket's clamp). The zero Shedder
// refuses every request, with RetryAfter [algorithms.Never].
func (s *Shedder) Take(now algorithms.Time, cost int64, p algorithms.Priority) algorithms.Decision {
	if s.alg == nil {
		return algorithms.Decision{RetryAfter: algorithms.Never}
	}
	s.mu.Lock()
	next, d := s.alg.StepPriority(s.state, now, cost, p)
	s.state = next
	s.mu.Unlock()
	return d
}

// PriorityFromHeader returns a [Config.Priority] that reads a request's
// priority from the header name: "critical", "normal" or "sheddable"
// (ASCII case and surrounding spaces ignored); a missing, empty or
// unknown value is Normal.
//
// A client can write any header it likes. Whoever can reach the server
// with this header set chooses their own priority, and every client that
// knows of it will claim "critical": the reserve kept for critical
// traffic is then anyone's. Read the priority from a header only where
// something you trust sets it (a gateway that drops the client's copy
// and writes its own, an internal caller on a network clients cannot
// reach, ratelim's own load generator on loopback). Otherwise derive it
// from what the server knows itself, in a Priority of your own: the
// route (checkout is critical, a prefetch sheddable), the authenticated
// client. That is why a Config without Priority makes every request
// normal rather than reading any header: trusting one is the operator's
// choice, made by naming it here.
func PriorityFromHeader(name string) func(*http.Request) algorithms.Priority {
	key := http.CanonicalHeaderKey(name)
	return func(r *http.Request) algorithms.Priority {
		vs := r.Header[key]
		if len(vs) == 0 {
			return algorithms.Normal
		}
		v := strings.TrimSpace(vs[0])
		for i, p := range algorithms.Priorities {
			if strings.EqualFold(v, p) {
				return algorithms.Priority(i)
			}
		}
		return algorithms.Normal
	}
}

// sheds asks the shedder whether a request the limit let through at now
// may be served, answers the 503 if not, and reports whether it did.
func (l *limiter) sheds(w http.ResponseWriter, r *http.Request, now algorithms.Time, cost int64) bool {
	p := algorithms.Normal
	if l.priority != nil {
		p = min(l.priority(r), algorithms.Sheddable)
	}
	d := l.shedder.Take(now, cost, p)
	if d.Allowed {
		return false
	}
	l.metrics.count(shed)
	// No RateLimit fields: the caller asks before writing them (see
	// Config.Shedder for why a shed answer carries none).
	w.Header().Set(ShedHeader, p.String())
	writeError(w, http.StatusServiceUnavailable, max(ceilSeconds(d.RetryAfter), 1),
		"the service is short of capacity and shed this "+p.String()+" request")
	return true
}
