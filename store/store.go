// Package store is where a limiter's per-key state lives, and how a decision
// reaches it: in process ([Memory]), in Redis through the algorithm's Lua twin
// (atomic, one round trip: the driver store/redisstore, opened by URL with
// [Open] in a program that links it), or by a read followed by a separate
// write ([Racy], the lost-update race kept on purpose). [WithPolicy] decides
// what a failing store means: admit everything or reject everything.
//
// The store runs an [algorithms.Algorithm]; it never reads a clock either:
// now is an argument, so the simulator's virtual time reaches a real Redis as
// it reaches the in-process map, and both decide the same.
package store

import (
	"context"
	"fmt"
	"time"

	"github.com/ratelim/ratelim/algorithms"
)

// Limiter takes a decision for a key at an instant. Every store is one; so
// is a store wrapped in a fail policy.
type Limiter interface {
	// Take decides a request of the given cost for key at now. An error
	// means the store could not decide (it is down, or timed out); the
	// Decision is then meaningless unless a fail policy filled it in.
	Take(ctx context.Context, key string, now algorithms.Time, cost int64) (Decision, error)
}

// KV loads and saves a key's state as two separate operations: what a
// non-atomic read-modify-write is built on ([Racy]), and what a simulator
// uses to copy state between a primary and its replica.
type KV interface {
	Load(ctx context.Context, key string) (algorithms.State, error)
	// Save stores st for key; after ttl an untouched key may be forgotten
	// (its state is then the zero State again, which the algorithms treat
	// as a fresh key).
	Save(ctx context.Context, key string, st algorithms.State, ttl time.Duration) error
}

// Decision is an algorithm's decision as a store delivered it.
type Decision struct {
	algorithms.Decision
	// Policy is empty when the limiter decided; when the store failed and
	// a fail policy decided instead, it names the policy.
	Policy Policy
	// Err is the store error the policy answered, when Policy is set.
	Err error
}

// Policy is what a limiter does when its store cannot be reached. It must be
// chosen before the store fails, and the choice is a trade: fail open keeps
// the API up and unprotected, fail closed keeps the backend protected and
// the API down.
type Policy string

const (
	// FailOpen admits every request while the store is failing.
	FailOpen Policy = "fail-open"
	// FailClosed rejects every request while the store is failing.
	FailClosed Policy = "fail-closed"
)

// ParsePolicy reads "fail-open" or "fail-closed".
func ParsePolicy(s string) (Policy, error) {
	switch p := Policy(s); p {
	case FailOpen, FailClosed:
		return p, nil
	}
	return "", fmt.Errorf("on_error: unknown policy %q (want fail-open or fail-closed)", s)
}

// DefaultFailClosedRetryAfter is the Retry-After a fail-closed rejection
// carries: the store gives no better answer, and a client told nothing
// retries at once.
const DefaultFailClosedRetryAfter = time.Second

type withPolicy struct {
	next   Limiter
	policy Policy
}

// WithPolicy wraps next so that a store error becomes a decision taken by
// policy: Allowed for fail-open, rejected with Retry-After
// DefaultFailClosedRetryAfter for fail-closed, and in both cases Decision's
// Policy and Err say so. A cancelled or expired ctx is the caller giving up,
// not the store failing: that error is returned as it is.
func WithPolicy(next Limiter, policy Policy) Limiter {
	return &withPolicy{next: next, policy: policy}
}

func (w *withPolicy) Take(ctx context.Context, key string, now algorithms.Time, cost int64) (Decision, error) {
	d, err := w.next.Take(ctx, key, now, cost)
	if err == nil || ctx.Err() != nil {
		return d, err
	}
	return w.policy.Decide(err), nil
}

// Decide is the decision p takes for a request the store could not decide
// because of err: admitted for fail-open; for fail-closed, rejected with
// Retry-After DefaultFailClosedRetryAfter. Policy and Err say so.
func (p Policy) Decide(err error) Decision {
	d := Decision{Policy: p, Err: err}
	if p == FailOpen {
		d.Allowed = true
	} else {
		d.RetryAfter = DefaultFailClosedRetryAfter
	}
	return d
}

// CheckCost refuses a negative cost, with the one message every store,
// this package's and the drivers', gives for it.
func CheckCost(cost int64) error {
	if cost < 0 {
		return fmt.Errorf("store: cost %d is negative (want 0 or more)", cost)
	}
	return nil
}

// ttl is how long a key's state matters after a decision: until the limiter
// is back to full, plus a second so that a key is never forgotten a moment
// before a request that still depends on it (wall-clock expiry and virtual
// time do not run at the same speed).
func ttl(d algorithms.Decision) time.Duration {
	return d.ResetAfter.Truncate(time.Millisecond) + time.Millisecond + time.Second
}
