package sim

import (
	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/store"
)

// outcome is what happened to one request once it was decided: who sent
// it, when, what it cost, what the limit said, and what each policy after
// the limit (shadow mode, the load shedder) made of that. The stages after
// a decision fill it in, in order (stages.go), and the recorder writes it
// down once (sim.record): one tally of it feeds the step's row and the
// client's totals, and the clients' totals their keys'.
type outcome struct {
	client  int
	at      int64 // the true time it was decided
	cost    int64
	attempt int // 0 for a first try, n for the n-th retry
	d       *store.Decision
	// latency is what the request waited: for its decision, and then,
	// once the stages that may change the decision have spoken, in the
	// queue the decision put it in (a leaky bucket's delay).
	latency int64
	// shadowed says a limit in shadow mode would have refused it and it
	// passed; shed, that the load shedder turned it away after the limit
	// admitted it (d is then the shedder's 503).
	shadowed, shed bool
	// noAnswer says a live request got no HTTP answer: nothing decided
	// it, and d is not read.
	noAnswer bool
	// lease is the lease the limit handed out if it admitted the request,
	// kept when the shedder turns it away after (it is given back at
	// once); idealLease and idealAllowed are the exact limiter's lease and
	// verdict of the same request, which the recorder fills in.
	lease, idealLease algorithms.Time
	idealAllowed      bool
	// p is the request as it was sent, for the stages that schedule what
	// follows (a release, a retry); nil on a replay of observations.
	p *pending
}

// allowed reports whether the request got through: the limit's verdict,
// or the fail policy's when the store could not decide.
func (o *outcome) allowed() bool {
	switch o.d.Policy {
	case store.FailOpen:
		return true
	case store.FailClosed:
		return false
	}
	return o.d.Allowed
}

// tally sets t, zero, to what o adds to its step's row and to its
// client's totals, counted once. Served is not in it: it counts in the
// step the request leaves the queue, which may be a later one
// (sim.serve).
func (o *outcome) tally(t *counts) {
	t.Sent = 1
	if o.attempt > 0 {
		t.Retries = 1
	}
	if o.noAnswer {
		t.NoAnswer = 1
		return // no cost asked of a limit, no verdict
	}
	t.CostSent = o.cost
	if o.shadowed {
		t.WouldReject = 1
	}
	if o.shed {
		t.Shed = 1
	}
	switch o.d.Policy {
	case store.FailOpen:
		t.FailedOpen = 1
	case store.FailClosed:
		t.FailedClosed = 1
	}
	if o.idealAllowed {
		t.IdealAllowed = 1
	}
	if o.allowed() {
		t.Allowed, t.CostAllowed = 1, o.cost
		if o.attempt > 0 {
			t.RetriesAllowed = 1
		}
		if !o.idealAllowed {
			t.FalseAllows = 1
		}
	} else {
		t.Rejected = 1
		if o.idealAllowed {
			t.FalseDenies = 1
		}
	}
}

// add adds a tally to the row: the figures a step's row keeps (the
// comparison with the exact limiter is the totals' alone).
func (r *TimelineRow) add(t *counts) {
	r.Counts.Add(t.Counts)
	r.Retries += t.Retries
	r.RetriesAllowed += t.RetriesAllowed
}
