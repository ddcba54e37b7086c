package httplimit

import (
	"errors"
	"math"
	"math/bits"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ratelim/ratelim/algorithms"
)

// The header fields, in the canonical form net/http keeps them in, so that
// they can be set without canonicalising them on every request.
const (
	fieldPolicy     = "Ratelimit-Policy"    // draft -08 and later
	fieldRateLimit  = "Ratelimit"           // draft -08 and later
	fieldLimit      = "Ratelimit-Limit"     // draft -06
	fieldRemaining  = "Ratelimit-Remaining" // draft -06
	fieldReset      = "Ratelimit-Reset"     // draft -06
	fieldRetryAfter = "Retry-After"
)

// DefaultPolicyName names the quota policy in RateLimit-Policy and
// RateLimit when [Config.PolicyName] is empty.
const DefaultPolicyName = "default"

// maxSFInteger is the largest Integer a Structured Field may carry
// (RFC 9651, section 3.3.1: at most 15 digits).
const maxSFInteger = 999_999_999_999_999

// ceilSeconds returns d in whole seconds rounded up, 0 for d ≤ 0, capped at
// what a Structured Field Integer can hold ([algorithms.Never] included).
// Rounding up is what keeps a client that waits what a header says from
// coming back before the limiter would let it through.
func ceilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	s := int64(d / time.Second)
	if d%time.Second != 0 {
		s++
	}
	return min(s, maxSFInteger)
}

// fields are the numbers one answer's RateLimit fields carry, already in
// the units the fields use.
type fields struct {
	limit     int64 // q and RateLimit-Limit: requests
	remaining int64 // r and RateLimit-Remaining: requests, 0 ≤ remaining ≤ limit
	reset     int64 // t and RateLimit-Reset: whole seconds, ≥ 0
}

// quota is the fixed part of the fields: the policy's name, already quoted
// as a Structured Field String, and its window in whole seconds (0: none).
type quota struct {
	quotedName string
	limit      int64 // 0: each decision's Limit
	window     int64

	// With a fixed limit, the values that do not change, made once.
	policyValue, limitValue string
}

func newQuota(quotedName string, limit, window int64) quota {
	q := quota{quotedName: quotedName, limit: limit, window: window}
	if limit > 0 {
		q.policyValue = q.policy(limit)
		q.limitValue = strconv.FormatInt(limit, 10)
	}
	return q
}

// policy is the RateLimit-Policy value for a limit.
func (q quota) policy(limit int64) string {
	var b strings.Builder
	b.Grow(len(q.quotedName) + 24)
	b.WriteString(q.quotedName)
	b.WriteString(";q=")
	b.WriteString(strconv.FormatInt(limit, 10))
	if q.window > 0 {
		b.WriteString(";w=")
		b.WriteString(strconv.FormatInt(q.window, 10))
	}
	return b.String()
}

// fieldsFor turns a decision the limiter took into the numbers to send, with
// the invariants clients rely on: a rejection says no quota remains and its
// reset is its Retry-After; an admission's reset is when the limiter is full
// again; nothing is negative and remaining never exceeds the limit.
func (q quota) fieldsFor(d algorithms.Decision) (f fields, retryAfter int64) {
	f.limit = q.limit
	if f.limit == 0 {
		f.limit = max(d.Limit, 0)
	}
	f.limit = min(f.limit, maxSFInteger)
	if d.Allowed {
		f.remaining = min(max(d.Remaining, 0), f.limit)
		f.reset = ceilSeconds(d.ResetAfter)
		return f, 0
	}
	retryAfter = max(ceilSeconds(d.RetryAfter), 1)
	f.reset = retryAfter
	return f, retryAfter
}

// write sets the fields on h: the draft's RateLimit-Policy and RateLimit
// pair and the -06 trio, from the same numbers.
func (q quota) write(h http.Header, f fields) {
	policy, limit := q.policyValue, q.limitValue
	if policy == "" || f.limit != q.limit {
		policy, limit = q.policy(f.limit), strconv.FormatInt(f.limit, 10)
	}
	setFields(h, policy, q.quotedName, limit, f.remaining, f.reset)
}

// quoteSFString quotes name as a Structured Field String (RFC 9651,
// section 3.3.3): printable ASCII only, with " and \ escaped.
func quoteSFString(name string) (string, error) {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c < 0x20 || c > 0x7e {
			return "", errors.New("httplimit: PolicyName " + strconv.Quote(name) + " has a character a Structured Field string cannot carry (want printable ASCII)")
		}
		if c == '"' || c == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	b.WriteByte('"')
	return b.String(), nil
}

// QuotaOf returns the quota policy an algorithm enforces, as the draft's
// RateLimit-Policy states it, "q requests per w seconds", for
// [Config.Limit] and [Config.Window]:
//
//   - a window algorithm (fixed-window, sliding-log, sliding-window)
//     allows its limit, rate × window, per window;
//   - a bucket (token-bucket, gcra, leaky-bucket) allows burst at once and
//     then rate: its window is the time to refill an empty bucket, burst ÷
//     rate, so that q/w is the sustained rate and q the burst;
//   - a limit on requests in flight (concurrency) allows max_in_flight
//     at once, however long they last: q is that number and there is no
//     window (0, so RateLimit-Policy has no w). Its lease TTL is not a
//     window: a request gives its slot back when it is done, not when a
//     period ends. RateLimit's r is then the slots left; its t on an
//     admission is when the last lease held would expire if none came
//     back, and on a 429 the Retry-After, which the limiter caps at
//     [algorithms.MaxConcurrencyRetry] (1 s): a slot frees whenever a
//     request completes, which it cannot foresee.
//
// An algorithm it does not know gives 0, 0: each decision's Limit, no
// window.
func QuotaOf(alg algorithms.Algorithm) (limit int64, window time.Duration) {
	if alg == nil {
		return 0, 0
	}
	p := alg.Params()
	if _, ok := alg.(*algorithms.Concurrency); ok {
		return p.Burst, 0
	}
	if wl, ok := alg.(interface{ Limit() int64 }); ok && p.Window > 0 {
		return wl.Limit(), p.Window
	}
	if p.Burst <= 0 || p.Rate.N <= 0 || p.Rate.Per <= 0 {
		return 0, 0
	}
	// burst × per ÷ n without overflowing the product.
	hi, lo := bits.Mul64(uint64(p.Burst), uint64(p.Rate.Per))
	if hi >= uint64(p.Rate.N) {
		return p.Burst, time.Duration(math.MaxInt64)
	}
	w, _ := bits.Div64(hi, lo, uint64(p.Rate.N))
	return p.Burst, time.Duration(min(w, math.MaxInt64))
}
