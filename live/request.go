// One request of a load run: send makes it and the retries its client's
// policy calls for; do picks its server (target), draws its service time,
// sends it and reads the decision from the answer, with what the answer
// said beyond it (seen, parseRetryAfter).

package live

import (
	"context"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/httplimit"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/store"
)

// send makes one request and, if it is rejected, the retries the client's
// policy calls for. It holds a slot of sem while a request is in flight and
// releases it while waiting to retry.
func (l *loader) send(ctx context.Context, a sim.Arrival, attempt int) {
	c := l.sc.Clients[a.Client]
	for {
		seq := l.seq.Add(1)
		at := time.Since(l.start)
		if at >= l.sc.Duration {
			// Its turn came after the scenario's end: a run never outlasts
			// its scenario (and the simulator, fed these arrivals, would
			// not send it either).
			<-l.sem
			if attempt == 0 {
				l.mu.Lock()
				l.audit.NotSent++
				l.mu.Unlock()
			}
			return
		}
		d, retryAfter, seen, ok := l.do(ctx, a.Client, c, a.Cost, seq)
		latency := time.Since(l.start) - at
		<-l.sem
		if !ok && ctx.Err() != nil {
			return
		}
		l.mu.Lock()
		if attempt == 0 {
			l.lateness = append(l.lateness, max(at-a.At, 0))
		}
		decided := seen.decidedAt(at, latency, l.sc.Duration)
		if seen.stamped {
			l.deciding = append(l.deciding, decided-at)
		}
		// The limiter held it at most as long as the answer took after
		// the decision.
		d.Delay = min(seen.held, max(at+latency-decided, 0))
		// No answer is no decision: counted as such, never as rejected.
		l.obs = append(l.obs, sim.Observation{Client: a.Client, At: decided, Cost: a.Cost, Attempt: attempt, Decision: d, Latency: latency, Shadowed: seen.shadowed, Shed: seen.shed, Seq: seq, NoAnswer: !ok, Service: seen.heldFor()})
		l.mu.Unlock()
		if d.Allowed || d.Policy != "" || !ok {
			return
		}
		wait, again := c.Retry.Wait(attempt, retryAfter, l.int64n)
		if !again || wait >= l.sc.Duration-time.Since(l.start) {
			// No retry, or one due after the scenario's end, which is
			// never sent: not waited for either (a Retry-After of hours
			// would hold the run that long).
			return
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return
		}
		if time.Since(l.start) >= l.sc.Duration {
			return
		}
		select {
		case l.sem <- struct{}{}:
		case <-ctx.Done():
			return
		}
		attempt++
	}
}

// int64n draws from the run's random source, which goroutines share.
func (l *loader) int64n(n int64) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rng.Int64N(n)
}

// target is the server a client's request goes to: the simulator's balancer
// over the targets.
func (l *loader) target(client int) *url.URL {
	l.mu.Lock()
	defer l.mu.Unlock()
	server := l.spread.Pick(l.keyHashes[client], l.rng.IntN)
	// Around a crashed server to the next one up, as the simulator's
	// health check routes.
	for i := 0; i < len(l.down) && l.down[server]; i++ {
		server = (server + 1) % len(l.down)
	}
	return l.targets[server]
}

// serviceTime draws how long client c's request is to take at the server:
// its Service's mean, or an exponential draw of that mean from the run's
// source, capped at 50 means as the simulator caps it, and at MaxService.
func (l *loader) serviceTime(c sim.Client) time.Duration {
	mean := c.Service.Mean
	if mean <= 0 {
		return 0
	}
	d := mean
	if c.Service.Exponential {
		l.mu.Lock()
		u := l.rng.Float64()
		l.mu.Unlock()
		d = time.Duration(math.Min(-math.Log(1-u), 50) * float64(mean))
	}
	return min(d, MaxService)
}

// do sends one request, numbered seq (its Observation's Seq), and reads
// the decision from the answer: 2xx admitted (or failed open, when the
// answer says a policy decided), 429
// rejected, 503 shed when ShedHeader says so (a refusal the client may
// retry after its Retry-After, as the simulator's), else failed closed.
func (l *loader) do(ctx context.Context, client int, c sim.Client, cost int64, seq uint64) (d store.Decision, retryAfter time.Duration, saw seen, ok bool) {
	u := *l.target(client)
	u.Path = strings.TrimSuffix(u.Path, "/") + l.opts.Path
	u.RawQuery = "client=" + url.QueryEscape(c.Name)
	service := l.serviceTime(c)
	reqCtx := ctx // ctx ending is the run ending; reqCtx's, the request timing out
	if l.timeouts {
		var cancel context.CancelFunc
		reqCtx, cancel = context.WithTimeout(ctx, service+requestTimeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(reqCtx, http.MethodGet, u.String(), nil)
	if err != nil {
		return d, 0, saw, false
	}
	setRequestHeaders(req.Header, c, cost, service)
	req.Header.Set(RequestHeader, strconv.FormatUint(seq, 10))
	if service > 0 {
		saw.service = service
	}
	resp, err := l.client.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			l.countTransportError(err)
		}
		return d, 0, saw, false
	}
	l.drain(ctx, resp)
	d, retryAfter = l.decisionOf(client, resp, &saw)
	return d, retryAfter, saw, true
}

// setRequestHeaders writes on h what the demo servers read from a request
// of client c: the service time it asks for, its cost when more than 1,
// its priority, and the identities its limit may be keyed by, each only
// when it has one.
func setRequestHeaders(h http.Header, c sim.Client, cost int64, service time.Duration) {
	if service > 0 {
		h.Set(ServiceHeader, service.String())
	}
	if cost > 1 {
		h.Set(CostHeader, strconv.FormatInt(cost, 10))
	}
	if c.Priority != "" {
		h.Set(PriorityHeader, c.Priority)
	}
	if c.APIKey != "" {
		h.Set(APIKeyHeader, c.APIKey)
	}
	if c.User != "" {
		h.Set(UserHeader, c.User)
	}
	if c.IP != "" {
		h.Set(ForwardedHeader, c.IP)
	}
}

// countTransportError counts a request that got no answer in the audit,
// keeping the first such error's text for the operator. do counts only
// while the run goes on: a request cut off by the run's end is not the
// transport failing.
func (l *loader) countTransportError(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.audit.TransportErrors++
	if l.audit.FirstTransportError == "" {
		l.audit.FirstTransportError = err.Error()
	}
}

// drain reads resp's body to its end and closes it: the connection can
// then be reused, and the trailers (ReleasedAtHeader) are in.
func (l *loader) drain(ctx context.Context, resp *http.Response) {
	if _, err := io.Copy(io.Discard, resp.Body); err != nil && ctx.Err() == nil {
		// Its status came, its body did not end: the server abandoned
		// it (a crash mid-request). It counts as the status says.
		l.mu.Lock()
		l.audit.Cut++
		l.mu.Unlock()
	}
	resp.Body.Close()
}

// decisionOf reads the decision from a drained answer to client's request
// (do's doc says which status means what), and into saw what the answer
// said beyond it: when it was decided and its lease given back, whether
// it was shadowed, shed or held. A 429 and a shed 503 are audited; an
// admission forgets the key's last reset, so that Audit.ResetWentBack
// compares the resets of one run of refusals only.
func (l *loader) decisionOf(client int, resp *http.Response, saw *seen) (d store.Decision, retryAfter time.Duration) {
	if v, err := strconv.ParseInt(resp.Header.Get(DecidedAtHeader), 10, 64); err == nil {
		saw.decided, saw.stamped = time.UnixMicro(v).Sub(l.start), true
	}
	if v, err := strconv.ParseInt(resp.Trailer.Get(ReleasedAtHeader), 10, 64); err == nil {
		saw.released, saw.releasedKnown = time.UnixMicro(v).Sub(l.start), true
	}
	retryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), resp.Header.Get("Date"), time.Now())
	d.RetryAfter = retryAfter
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		l.mu.Lock()
		l.audit.Redirects++
		l.firstOtherStatus(resp.StatusCode)
		l.mu.Unlock()
	case resp.StatusCode == http.StatusTooManyRequests:
		d.Binding = l.auditRejection(client, resp.Header, retryAfter)
	case resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get(ShedHeader) != "":
		saw.shed = true
		l.auditShed(retryAfter)
	case resp.StatusCode == http.StatusServiceUnavailable:
		d.Policy = store.FailClosed
	case resp.StatusCode < 300:
		d.Allowed = true
		if resp.Header.Get(DecidedByHeader) == string(store.FailOpen) {
			d.Policy = store.FailOpen
		}
		saw.shadowed = resp.Header.Get(ShadowHeader) == "would-reject"
		saw.held = parseHeld(resp.Header.Get(httplimit.DelayHeader))
		l.mu.Lock()
		delete(l.lastReset, l.keys[client])
		l.mu.Unlock()
	default:
		// A 404, a 400, a 500: refused, but by no rate limit.
		l.mu.Lock()
		l.audit.OtherStatus++
		l.firstOtherStatus(resp.StatusCode)
		l.mu.Unlock()
	}
	return d, retryAfter
}

// firstOtherStatus keeps the first status that no rate limit answers, for
// the operator (Audit.FirstOtherStatus). l.mu is held.
func (l *loader) firstOtherStatus(status int) {
	if l.audit.FirstOtherStatus == 0 {
		l.audit.FirstOtherStatus = status
	}
}

// seen is what an answer said beyond its decision.
type seen struct {
	shadowed bool // let through, a limit in shadow mode would have refused it
	shed     bool // the load shedder's 503
	// decided is when the server's limiter decided, from the run's
	// start (DecidedAtHeader); stamped says the answer said so.
	decided time.Duration
	stamped bool
	// held is how long the limiter held it before serving
	// (httplimit.DelayHeader).
	held time.Duration
	// service is how long the request asked the server to take
	// (ServiceHeader).
	service time.Duration
	// released is when the server gave its lease back, from the run's
	// start (ReleasedAtHeader, a trailer); releasedKnown says the answer
	// said so.
	released      time.Duration
	releasedKnown bool
}

// heldFor is how long the fleet held the request's lease, for the
// simulator fed the run's observations: from its decision to its release
// when the answer said both, else the service time it asked for.
func (s seen) heldFor() time.Duration {
	if s.stamped && s.releasedKnown && s.released >= s.decided && s.service > 0 {
		return s.released - s.decided
	}
	return s.service
}

// decidedAt is the request's instant for the record: when the limiter
// decided it, as the answer said, within the span it can have happened in
// (from sent, to sent + latency, when the answer came back), and before
// end, the scenario's, which a request sent in time is counted within
// (a simulator fed the instants runs nothing after it); sent for an answer
// that did not say (a server other than ratelim's), as a clock of another
// machine's must not move a request out of that span.
func (s seen) decidedAt(sent, latency, end time.Duration) time.Duration {
	if !s.stamped {
		return sent
	}
	return max(min(s.decided, sent+latency, end-time.Microsecond), sent)
}

// parseHeld reads httplimit.DelayHeader, decimal seconds, as a duration:
// 0 for a value that is missing, malformed, negative or not finite, at
// most a day (send caps it again at the request's observed latency).
func parseHeld(v string) time.Duration {
	secs, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || !(secs > 0) || math.IsInf(secs, 0) {
		return 0
	}
	return time.Duration(min(secs, (24*time.Hour).Seconds()) * float64(time.Second))
}

// parseRetryAfter reads a Retry-After field as a client waits on it (RFC
// 9110 section 10.2.3: delay-seconds or an HTTP-date), 0 when it is absent
// or malformed: the audit counts that as missing.
//
// delay-seconds are digits only ("-1", "+5" and "1e30" are malformed),
// surrounding spaces allowed; a count too long for a Duration is the
// longest one, algorithms.Never: never within this run, not a wrapped
// negative. 9223372037 s (algorithms.Never rounded up to seconds) is one
// past what fits; the middleware says 999999999999999 s, the most a
// Structured Field Integer holds, for a request that can never pass.
//
// An HTTP-date (any of the three forms http.ParseTime reads) is a wait
// from the answer's Date, the server's own clock, when that parses, which
// leaves clock skew between client and server out of it; else from now,
// rounded up to whole seconds as delay-seconds are. A date already past is
// a wait of 0.
func parseRetryAfter(v, date string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if strings.Trim(v, "0123456789") == "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n > math.MaxInt64/int64(time.Second) {
			return algorithms.Never // ParseInt fails on digits only when they overflow
		}
		return time.Duration(n) * time.Second
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0
	}
	var wait time.Duration
	if served, err := http.ParseTime(date); err == nil {
		wait = at.Sub(served)
	} else {
		wait = at.Sub(now)
		if frac := wait % time.Second; frac > 0 {
			wait += time.Second - frac
		}
	}
	return max(wait, 0)
}
