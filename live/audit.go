package live

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/httplimit"
)

// Audit counts answers that break the rules a client relies on.
type Audit struct {
	// RejectedWithQuota: a 429 whose headers said quota remained.
	RejectedWithQuota int64 `json:"rejected_with_quota"`
	// MissingRetryAfter: a 429, or a load shedder's 503, without a
	// Retry-After of at least 1 s.
	MissingRetryAfter int64 `json:"missing_retry_after"`
	// ResetWentBack: an answer whose reset instant was more than a second
	// earlier than the previous answer's for the same key while nothing
	// had been admitted in between.
	ResetWentBack int64 `json:"reset_went_back"`
	// UnlistedPolicy: a 429 whose RateLimit names a policy its
	// RateLimit-Policy does not list, or whose RateLimit fields do not
	// parse (strictly, RFC 9651): a client cannot tell which limit to
	// wait for. A 429 with neither field is not counted here.
	UnlistedPolicy int64 `json:"unlisted_policy"`
	// RetryBeforeReset: a 429 whose Retry-After is earlier than the t of
	// the policy its RateLimit names: a client that waits what one says
	// comes back before the other.
	RetryBeforeReset int64 `json:"retry_before_reset"`
	// RejectedBy counts the 429s by the policy their RateLimit names: on
	// a key with several limits, which of them turned clients away. At
	// most 64 names are kept (a server chooses them); the
	// 429s naming others count under OtherPolicies.
	RejectedBy map[string]int64 `json:"rejected_by,omitempty"`
	// TransportErrors: requests that got no HTTP answer at all (a
	// refused connection, a reset, a timeout). No limiter decided them:
	// the Result counts them as no_answer, never as rejected, and a run
	// in which no request was answered is an error (CheckAnswered).
	TransportErrors int64 `json:"transport_errors"`
	// FirstTransportError is the first transport error's text, the
	// reason a target answered nothing; "" without one.
	FirstTransportError string `json:"first_transport_error,omitempty"`
	// Late: requests sent more than 10 ms after their scheduled time
	// because MaxInFlight requests were already waiting.
	Late int64 `json:"late"`
	// NotSent: requests still unsent when the scenario's time was up; a
	// run never outlasts its scenario, and a machine that cannot keep up
	// says so here.
	NotSent int64 `json:"not_sent"`
	// OtherStatus: answers that were neither 2xx, 3xx, 429 nor 503 (a
	// 404 from a wrong --target, a 400, a 500). The Result counts them
	// among the rejected, though no rate limit refused them: this says
	// how many of the rejected were such.
	OtherStatus int64 `json:"other_status"`
	// FirstOtherStatus is the status of the first answer that was
	// neither 2xx, 429 nor 503 (an OtherStatus or a redirect): what a
	// wrong path or target answered; 0 without one.
	FirstOtherStatus int `json:"first_other_status,omitempty"`
	// Cut: answers whose status came and whose body was cut off: the
	// server abandoned the request while serving it (a crash fault). They
	// count as their status says, admitted for a 200: the limiter did
	// admit them, as the simulator counts them.
	Cut int64 `json:"cut"`
	// Redirects: answers in 3xx. They are not followed: a redirect to
	// another host would take the load off the targets it was given.
	Redirects int64 `json:"redirects"`
	// How late first tries left against their schedule, in ms: the
	// median, the 99th percentile and the worst. A loaded machine shows
	// here why a live run admits what it does; ObservedScenario replays
	// the arrivals as they were.
	LateP50Ms float64 `json:"late_p50_ms"`
	LateP99Ms float64 `json:"late_p99_ms"`
	LateMaxMs float64 `json:"late_max_ms"`
	// How long after it was sent each request was decided, in ms, as the
	// answer's DecidedAtHeader says (answers without it are not counted):
	// the median, the 99th percentile and the worst. The time to reach a
	// server that has a backlog; the run records each request at the
	// instant it was decided.
	// Stamped counts the answers that said when their limiter decided
	// (DecidedAtHeader: ratelim's own servers do); the three figures
	// below are theirs, 0 when none did.
	Stamped     int64   `json:"stamped"`
	DecideP50Ms float64 `json:"decide_p50_ms"`
	DecideP99Ms float64 `json:"decide_p99_ms"`
	DecideMaxMs float64 `json:"decide_max_ms"`
}

// Lateness says in one line how well the run kept its schedule.
func (a Audit) Lateness() string {
	return fmt.Sprintf("first tries late by %.1f ms median, %.1f ms p99, %.1f ms at worst; %d more than 10 ms late, %d not sent",
		a.LateP50Ms, a.LateP99Ms, a.LateMaxMs, a.Late, a.NotSent)
}

// Deciding says in one line how long requests waited, once sent, for the
// limiter to decide them.
func (a Audit) Deciding() string {
	if a.Stamped == 0 {
		return "no answer said when it was decided (" + DecidedAtHeader + "): requests are recorded when sent"
	}
	return fmt.Sprintf("decided %.1f ms after sending median, %.1f ms p99, %.1f ms at worst",
		a.DecideP50Ms, a.DecideP99Ms, a.DecideMaxMs)
}

// NotLimiting is the number of answers that were neither 2xx, 429 nor
// 503: a 404, a 400, a 500, a redirect. No rate limit said them, and a
// check of what a limiter did cannot count them as its refusals.
func (a Audit) NotLimiting() int64 { return a.OtherStatus + a.Redirects }

// Breaches is the number of answers that broke a header rule.
func (a Audit) Breaches() int64 {
	return a.RejectedWithQuota + a.MissingRetryAfter + a.ResetWentBack + a.UnlistedPolicy + a.RetryBeforeReset
}

// maxRejectedBy bounds the policy names Audit.RejectedBy keeps: the names
// come from the server's answers, and a key has at most
// algorithms.MaxLimits limits.
const maxRejectedBy = 64

// OtherPolicies is the Audit.RejectedBy entry counting the 429s that named
// a policy past the first maxRejectedBy names.
const OtherPolicies = "(other)"

// auditRejection checks a 429's headers against what a client relies on,
// counts it by the policy that refused, and returns that policy's index
// among the scenario's limits (0 when it is not one of them), as the
// simulator's decision gives it in Binding.
func (l *loader) auditRejection(client int, h http.Header, retryAfter time.Duration) (binding int) {
	remaining, reset, known := httplimit.ReadRateLimit(h)
	rd, err := httplimit.ReadFields(h)
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case errors.Is(err, httplimit.ErrNoFields):
		if len(h.Values("RateLimit-Policy")) > 0 {
			l.audit.UnlistedPolicy++ // policies listed, none named
		}
	case err != nil:
		l.audit.UnlistedPolicy++
	default:
		if _, listed := rd.Quota(); !listed {
			l.audit.UnlistedPolicy++
		}
		if retryAfter < rd.Reset {
			l.audit.RetryBeforeReset++
		}
		l.countRejectedBy(rd.Policy)
		for i, lim := range l.sc.Limits() {
			if lim.Name != "" && lim.Name == rd.Policy {
				binding = i
			}
		}
	}
	if known && remaining > 0 {
		l.audit.RejectedWithQuota++
	}
	if retryAfter < time.Second {
		l.audit.MissingRetryAfter++
	}
	// A request that can never pass (Retry-After as long as a header
	// holds) says nothing of when its key's quota returns: its reset is
	// that request's, and a cheaper one's shorter reset after it did not
	// go back.
	if known && retryAfter != algorithms.Never {
		key := l.keys[client]
		instant := time.Now().Add(reset)
		if prev, ok := l.lastReset[key]; ok && instant.Before(prev.Add(-time.Second)) {
			l.audit.ResetWentBack++
		}
		l.lastReset[key] = instant
	}
	return binding
}

// auditShed checks a load shedder's 503: it must say when to come back.
// It carries no RateLimit fields (its client's quota did not refuse it),
// so nothing else about it is a rule a client relies on.
func (l *loader) auditShed(retryAfter time.Duration) {
	if retryAfter < time.Second {
		l.mu.Lock()
		l.audit.MissingRetryAfter++
		l.mu.Unlock()
	}
}

// countRejectedBy counts a 429 that policy refused. l.mu is held.
func (l *loader) countRejectedBy(policy string) {
	if l.audit.RejectedBy == nil {
		l.audit.RejectedBy = map[string]int64{}
	}
	if _, ok := l.audit.RejectedBy[policy]; !ok && len(l.audit.RejectedBy) >= maxRejectedBy {
		policy = OtherPolicies
	}
	l.audit.RejectedBy[policy]++
}

// quantilesMs returns the median, 99th percentile and maximum of ds, in ms.
func quantilesMs(ds []time.Duration) (p50, p99, worst float64) {
	if len(ds) == 0 {
		return 0, 0, 0
	}
	slices.Sort(ds)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return ms(ds[len(ds)/2]), ms(ds[(len(ds)*99)/100]), ms(ds[len(ds)-1])
}
