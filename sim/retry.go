package sim

import (
	"time"

	"github.com/ratelim/ratelim/algorithms"
)

// retries reports whether the client ever sends a rejected request again:
// not with policy none, or none given.
func (r Retry) retries() bool { return r.Policy != RetryNone && r.Policy != "" }

// most is the most retries of one request the client sends, as Wait
// counts them: 0 if it never retries.
func (r Retry) most() int {
	switch {
	case !r.retries() || r.Max < 0:
		return 0
	case r.Max == 0:
		return DefaultMaxRetry
	}
	return r.Max
}

// Wait is how long a client with this retry behaviour waits before sending
// a rejected request again, for its attempt-th retry (from 0), given the
// answer's Retry-After; false when it gives up instead. int64n draws a
// uniform integer in [0, n), from the caller's random source, for the
// backoff's jitter. The simulator and a live load run both ask it, so a
// client retries the same way in both.
func (r Retry) Wait(attempt int, retryAfter time.Duration, int64n func(n int64) int64) (time.Duration, bool) {
	if attempt >= r.most() {
		return 0, false
	}
	switch r.Policy {
	case RetryImmediate:
		return 0, true
	case RetryAfter:
		if retryAfter <= 0 || retryAfter == algorithms.Never {
			return 0, false // nothing to honour, or never worth it
		}
		return retryAfter, true
	case RetryBackoff:
		base, ceiling := r.Base, r.Cap
		if base <= 0 {
			base = DefaultBackoffBase
		}
		if ceiling <= 0 {
			ceiling = DefaultBackoffCap
		}
		// Doubling stops at the cap, so a long run of retries cannot
		// overflow the shift.
		wait := base
		for range attempt {
			if wait >= ceiling {
				break
			}
			wait *= 2
		}
		wait = min(wait, ceiling)
		// Full jitter: a uniform draw up to the exponential wait, so that
		// clients rejected together do not retry together.
		us := int64n(int64(algorithms.At(wait))+1) + 1
		return algorithms.Time(us).Duration(), true
	}
	return 0, false
}

// retryStage sends a refused request again as its client's retry policy
// says; a run whose clients all give up has none.
type retryStage struct{}

func (r retryStage) conclude(s *sim, o *outcome) {
	if !o.d.Allowed && o.d.Policy == "" {
		r.schedule(s, o.p.client, o.at+o.latency, o.p.cost, o.p.attempt, o.d.RetryAfter, o.p.retrySeq)
	}
}

// schedule schedules the retry of a rejected request, if its client
// makes one, with sequence number seq (0: the next one).
func (retryStage) schedule(s *sim, client int, at int64, cost int64, attempt int, retryAfter time.Duration, seq uint64) {
	c := s.clients[client]
	if !c.retries {
		return // gives up: Wait would say so, after its bookkeeping
	}
	wait, again := c.Retry.Wait(attempt, retryAfter, s.draw.int64n)
	if !again {
		return
	}
	e := event{at: at + int64(algorithms.At(wait)), kind: evRetry, client: int32(client), arg: int32(attempt + 1), cost: cost}
	if seq == 0 {
		s.schedule(e)
		return
	}
	e.seq = seq
	s.queue.push(e)
}
