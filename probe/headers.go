package probe

import (
	"math"
	"strconv"
	"strings"
)

// HeaderFindings say whether the answers' rate-limit fields agree with
// what the limiter was seen to do.
type HeaderFindings struct {
	// Sent are the rate-limit fields any answer carried.
	Sent       []string        `json:"sent"`
	RetryAfter RetryAfterCheck `json:"retry_after"`
	Claims     []Claim         `json:"claims,omitempty"`
	Remaining  RemainingCheck  `json:"remaining"`
}

// RetryAfterCheck holds each refusal's Retry-After against the recovery
// seen after it: the first admission on the probe's key, which the
// refusals before it bound from below. Early: a request sent after the
// instant it named was still refused. Late: the limiter admitted again
// more than a second (the field's rounding) before it.
type RetryAfterCheck struct {
	Refusals     int `json:"refusals"`
	WithField    int `json:"with_field"`
	OnTime       int `json:"on_time"`
	Early        int `json:"early"`
	Late         int `json:"late"`
	Unverifiable int `json:"unverifiable"`
}

// Claim is one number a field states about the limit beside the figure
// the probe found for it.
type Claim struct {
	Field    string  `json:"field"`
	Says     float64 `json:"says"`
	Observed float64 `json:"observed"`
	// ObservedRange is the range of the figure that fits the answers as
	// well: a value inside it agrees, whatever Observed is.
	ObservedRange *[2]float64 `json:"observed_range,omitempty"`
	Agrees        bool        `json:"agrees"`
	// WholeSeconds is set when the field agrees only once the behaviour
	// is put in its whole seconds (RateLimit-Policy's w of 1 for a
	// bucket that refills in 0.5 s): the field could say no better.
	WholeSeconds bool `json:"whole_seconds,omitempty"`
}

// RemainingCheck compares each admitted answer's remaining quota with
// what the fitted limiter had left after admitting it, within one.
type RemainingCheck struct {
	Checked int `json:"checked"`
	Agree   int `json:"agree"`
}

// retryAfterSlack is how much sooner than a refusal's Retry-After a later
// refusal may have been sent and still count as on time: the instant a
// request leaves is not the instant the limiter decides it.
const retryAfterSlack = 50_000 // µs

// checkHeaders holds the answers' fields against what was seen; with no
// fit (nothing recovered), only Retry-After.
func checkHeaders(mine []Observation, best *fit, r Report) HeaderFindings {
	var h HeaderFindings
	seen := map[string]bool{}
	for _, o := range mine {
		for name := range o.Headers {
			seen[name] = true
		}
	}
	for _, name := range RecordedHeaders {
		if seen[name] {
			h.Sent = append(h.Sent, name)
		}
	}
	h.RetryAfter = checkRetryAfter(mine)
	if best == nil {
		return h
	}
	h.Claims = claims(mine, r)
	m := newModel(best.candidate, best.params)
	for _, o := range mine {
		m.decide(decision{t: o.Sent, answered: o.Answered})
		if !o.Admitted() {
			continue
		}
		said, ok := remainingField(o.Headers)
		if !ok {
			continue
		}
		h.Remaining.Checked++
		if d := said - m.remaining(); d >= -1 && d <= 1 {
			h.Remaining.Agree++
		}
	}
	return h
}

func checkRetryAfter(mine []Observation) RetryAfterCheck {
	var c RetryAfterCheck
	nextAdmit := make([]int, len(mine)+1)
	nextAdmit[len(mine)] = -1
	for i := len(mine) - 1; i >= 0; i-- {
		nextAdmit[i] = nextAdmit[i+1]
		if mine[i].Admitted() {
			nextAdmit[i] = i
		}
	}
	for i, o := range mine {
		if !o.Refused() {
			continue
		}
		c.Refusals++
		v, ok := o.Headers["Retry-After"]
		if !ok {
			continue
		}
		c.WithField++
		secs, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || secs < 0 || secs > math.MaxInt64/2_000_000 {
			c.Unverifiable++
			continue
		}
		claimed := o.Sent + secs*1_000_000
		j := nextAdmit[i]
		if j < 0 {
			// Nothing admitted after it: early if a refusal came after
			// the instant it named, else unverifiable.
			if lastRefusal(mine[i:]) > claimed+retryAfterSlack {
				c.Early++
			} else {
				c.Unverifiable++
			}
			continue
		}
		lastRefused := mine[j-1].Sent // j > i: mine[i] itself at least
		switch {
		case claimed < lastRefused-retryAfterSlack:
			c.Early++
		case claimed > mine[j].Sent+1_000_000:
			c.Late++
		default:
			c.OnTime++
		}
	}
	return c
}

// lastRefusal is when the last refusal of obs was sent.
func lastRefusal(obs []Observation) int64 {
	for i := len(obs) - 1; i >= 0; i-- {
		if obs[i].Refused() {
			return obs[i].Sent
		}
	}
	return math.MinInt64
}

// claims reads the limit the fields state, from the first answer that
// carries each, against the figures found: RateLimit-Policy's q and w,
// RateLimit-Limit and X-RateLimit-Limit. A bucket's q is its burst and
// its w the time to refill it (httplimit.QuotaOf); a window's q its limit.
func claims(mine []Observation, r Report) []Claim {
	quota, window := float64(r.Burst), float64(r.Burst)/math.Max(r.Rate, 1e-9)
	// The window's range: a bucket's refill time over its rate's range.
	windowRange := [2]float64{float64(r.Burst) / math.Max(r.RateRange[1], 1e-9), float64(r.Burst) / math.Max(r.RateRange[0], 1e-9)}
	if r.Limit > 0 {
		quota, window = float64(r.Limit), float64(r.Window)/1e9
		windowRange = [2]float64{float64(r.WindowLow) / 1e9, float64(r.WindowHigh) / 1e9}
	}
	var out []Claim
	done := map[string]bool{}
	add := func(field string, says, observed float64, within [2]float64) {
		if done[field] {
			return
		}
		done[field] = true
		agrees := math.Abs(says-observed) <= math.Max(1, 0.05*observed)
		wholeSeconds := false
		if field == "RateLimit-Policy w" {
			// Whole seconds: within 5%, or the behaviour rounded to the
			// field's unit (up, or to the nearest), said as such.
			agrees = math.Abs(says-observed) <= 0.05*observed
			if !agrees && (says == math.Ceil(observed) || says == math.Round(observed)) {
				agrees, wholeSeconds = true, true
			}
		}
		c := Claim{Field: field, Says: says, Observed: round4(observed), Agrees: agrees, WholeSeconds: wholeSeconds}
		if within[1] > within[0] {
			c.ObservedRange = &[2]float64{round4(within[0]), round4(within[1])}
			// Inside the range that fits as well, the field cannot be
			// called wrong.
			if says >= within[0]*0.999 && says <= within[1]*1.001 {
				c.Agrees, c.WholeSeconds = true, false
			}
		}
		out = append(out, c)
	}
	for _, o := range mine {
		if v, ok := o.Headers["Ratelimit-Policy"]; ok {
			if q, ok := sfParam(v, "q"); ok {
				add("RateLimit-Policy q", q, quota, [2]float64{})
			}
			if w, ok := sfParam(v, "w"); ok {
				add("RateLimit-Policy w", w, window, windowRange)
			}
		}
		for _, name := range []string{"Ratelimit-Limit", "X-Ratelimit-Limit"} {
			if v, ok := o.Headers[name]; ok {
				if n, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
					add(name, n, quota, [2]float64{})
				}
			}
		}
	}
	return out
}

// remainingField is the quota an answer says is left: RateLimit's r, or
// RateLimit-Remaining, or X-RateLimit-Remaining.
func remainingField(h map[string]string) (int64, bool) {
	if v, ok := h["Ratelimit"]; ok {
		if r, ok := sfParam(v, "r"); ok {
			return int64(r), true
		}
	}
	for _, name := range []string{"Ratelimit-Remaining", "X-Ratelimit-Remaining"} {
		if v, ok := h[name]; ok {
			if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
				return n, true
			}
		}
	}
	return 0, false
}

// sfParam reads the integer parameter name of a Structured Field item's
// first member (`"default";q=10;w=1`): enough for the fields ratelim's
// server and the drafts send.
func sfParam(value, name string) (float64, bool) {
	first, _, _ := strings.Cut(value, ",")
	for _, part := range strings.Split(first, ";")[1:] {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if ok && k == name {
			n, err := strconv.ParseFloat(v, 64)
			return n, err == nil
		}
	}
	return 0, false
}
