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
	// p is the request as it was sent: who sent it, when, at what cost,
	// which attempt, and where it went (what the stages that schedule a
	// release or a retry read); on a replay of observations, who, when,
	// cost and attempt alone.
	p pending
	// d is its decision, as the limit took it and then the stages made
	// it; at the true time it was taken (later than p.t when it waited for
	// a compare-and-swap to land).
	d  store.Decision
	at int64
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

// tally is what one outcome adds to the figures it counts in, its step's
// row and its client's totals: a bit per counter it adds one to, and the
// cost it asked for. Computed once (outcome.tally), added to both at once
// (tally.add).
type tally struct {
	bits tallyBits
	cost int64 // CostSent, and CostAllowed when admitted; 0 unanswered
}

// tallyBits name the counters a request adds one to; Sent it always does.
type tallyBits uint16

const (
	tAllowed tallyBits = 1 << iota
	tRejected
	tFailedOpen
	tFailedClosed
	tWouldReject
	tShed
	tNoAnswer
	tRetry
	tRetryAllowed
	tIdealAllowed
	tFalseAllow
	tFalseDeny
	// tRare are the counters most requests leave alone: one test skips
	// them all.
	tRare = tFailedOpen | tFailedClosed | tWouldReject | tShed | tNoAnswer | tRetry | tRetryAllowed | tFalseAllow | tFalseDeny
)

// one is 1 if b has the bit of counter, 0 if not.
func (b tallyBits) one(counter tallyBits) int64 {
	if b&counter != 0 {
		return 1
	}
	return 0
}

// tally is what o adds to its step's row and to its client's totals.
// Served is not in it: it counts in the step the request leaves the
// queue, which may be a later one (sim.serve).
func (o *outcome) tally() tally {
	var b tallyBits
	if o.p.attempt > 0 {
		b |= tRetry
	}
	if o.noAnswer {
		return tally{bits: b | tNoAnswer} // no cost asked of a limit, no verdict
	}
	if o.shadowed {
		b |= tWouldReject
	}
	if o.shed {
		b |= tShed
	}
	switch o.d.Policy {
	case store.FailOpen:
		b |= tFailedOpen
	case store.FailClosed:
		b |= tFailedClosed
	}
	if o.idealAllowed {
		b |= tIdealAllowed
	}
	if o.allowed() {
		b |= tAllowed
		if o.p.attempt > 0 {
			b |= tRetryAllowed
		}
		if !o.idealAllowed {
			b |= tFalseAllow
		}
	} else {
		b |= tRejected
		if o.idealAllowed {
			b |= tFalseDeny
		}
	}
	return tally{bits: b, cost: o.p.cost}
}

// add adds t to its step's row and to its client's totals, in one pass:
// the commonest counters here (a verdict, and the exact limiter's when it
// admits), the rest, which most requests leave alone, by addRare. The
// exact limiter's verdicts are the totals' alone.
func (t tally) add(row *TimelineRow, total *counts) {
	row.Sent++
	total.Sent++
	row.CostSent += t.cost
	total.CostSent += t.cost
	total.IdealAllowed += t.bits.one(tIdealAllowed)
	switch {
	case t.bits&tAllowed != 0:
		row.Allowed++
		total.Allowed++
		row.CostAllowed += t.cost
		total.CostAllowed += t.cost
	case t.bits&tRejected != 0:
		row.Rejected++
		total.Rejected++
	}
	if t.bits&tRare != 0 {
		t.bits.addRare(row, total)
	}
}

// addRare adds the rarer counters of b to the row and the totals.
func (b tallyBits) addRare(row *TimelineRow, total *counts) {
	for _, c := range [...]*Counts{&row.Counts, &total.Counts} {
		c.FailedOpen += b.one(tFailedOpen)
		c.FailedClosed += b.one(tFailedClosed)
		c.WouldReject += b.one(tWouldReject)
		c.Shed += b.one(tShed)
		c.NoAnswer += b.one(tNoAnswer)
	}
	row.Retries += b.one(tRetry)
	total.Retries += b.one(tRetry)
	row.RetriesAllowed += b.one(tRetryAllowed)
	total.RetriesAllowed += b.one(tRetryAllowed)
	total.FalseAllows += b.one(tFalseAllow)
	total.FalseDenies += b.one(tFalseDeny)
}

// plain reports whether o is a first try that the limit decided and no
// stage after it changed: nearly every request of a run, whose tally is
// its verdict and the exact limiter's alone (addVerdict).
func (o *outcome) plain() bool {
	return o.p.attempt == 0 && !o.shadowed && !o.shed && !o.noAnswer && o.d.Policy == ""
}

// addVerdict adds a plain outcome (outcome.plain) of cost, admitted or
// not, to its step's row and its client's totals, as its tally would
// (outcome.tally, tally.add) without building the tally's bits and testing
// them again one by one: 67 of a simulated request's 1,091 instructions
// went to the two. Small enough to inline in the recorder.
func addVerdict(row *TimelineRow, total *counts, allowed, idealAllowed bool, cost int64) {
	row.Sent++
	total.Sent++
	row.CostSent += cost
	total.CostSent += cost
	if idealAllowed {
		total.IdealAllowed++
	}
	if allowed {
		row.Allowed++
		total.Allowed++
		row.CostAllowed += cost
		total.CostAllowed += cost
		if !idealAllowed {
			total.FalseAllows++
		}
		return
	}
	row.Rejected++
	total.Rejected++
	if idealAllowed {
		total.FalseDenies++
	}
}
