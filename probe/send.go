package probe

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// RequestHeader numbers each request the probe sends, so that a server's
// log joins with its observations.
const RequestHeader = "X-Ratelim-Request"

// maxInFlight bounds the requests waiting for an answer at once: a queue
// holds its requests, and the probe must not open a connection per send.
const maxInFlight = 64

// requestTimeout is how long the probe waits for one answer.
const requestTimeout = 10 * time.Second

// sender sends the probe's requests, one at a time on a schedule it never
// runs faster than maxRate, each answered on a goroutine of its own, and
// keeps what it observed. It is the one place the probe touches the
// network; it refuses to send past maxRequests or the deadline.
type sender struct {
	client      *http.Client
	url         string
	keyHeader   string
	minGap      time.Duration
	maxRequests int
	// deadline is when sending stops; end is when the probe's time is up,
	// and a request still unanswered then is abandoned.
	deadline, end time.Time
	progress      func(sent int, phase string)
	sem           chan struct{}
	inFlight      sync.WaitGroup

	mu       sync.Mutex
	obs      []Observation
	sent     int
	lastSend time.Time
}

// send waits until at (and at least minGap after the last send), then
// sends one request with key, recorded under phase. It reports false,
// sending nothing, when the budget, the deadline or ctx ends the probe.
func (s *sender) send(ctx context.Context, phase, key string, at time.Time) bool {
	s.mu.Lock()
	at = maxTime(at, s.lastSend.Add(s.minGap))
	spent := s.sent >= s.maxRequests
	s.mu.Unlock()
	// Before waiting, not after: at a low rate the wait alone may run
	// far past the deadline.
	if spent || at.After(s.deadline) {
		return false
	}
	if !sleepUntil(ctx, at) {
		return false
	}
	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		return false
	}
	s.mu.Lock()
	now := time.Now()
	if s.sent >= s.maxRequests || now.After(s.deadline) {
		s.mu.Unlock()
		<-s.sem
		return false
	}
	s.sent++
	seq := s.sent
	s.lastSend = now
	s.mu.Unlock()
	// The instant recorded is the one the schedule was held to: the
	// request leaves on its goroutine microseconds later.
	sent := now.UnixMicro()
	if s.progress != nil {
		s.progress(seq, phase)
	}
	s.inFlight.Add(1)
	go func() {
		defer s.inFlight.Done()
		defer func() { <-s.sem }()
		o := s.do(ctx, seq, phase, key, sent)
		s.mu.Lock()
		s.obs = append(s.obs, o)
		s.mu.Unlock()
	}()
	return true
}

// do sends request seq and records its answer.
func (s *sender) do(ctx context.Context, seq int, phase, key string, sent int64) Observation {
	o := Observation{Seq: seq, Phase: phase, Key: key, Sent: sent}
	ctx, cancel := context.WithDeadline(ctx, minTime(time.Now().Add(requestTimeout), s.end))
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		o.Error = err.Error()
		return o
	}
	req.Header.Set(RequestHeader, strconv.Itoa(seq))
	if s.keyHeader != "" && key != "" {
		req.Header.Set(s.keyHeader, key)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		o.Answered = time.Now().UnixMicro()
		o.Error = err.Error()
		return o
	}
	// Read to the end so the connection is reused, but no more than a
	// small answer: the body says nothing the probe reads.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	o.Answered = time.Now().UnixMicro()
	o.Status = resp.StatusCode
	o.Headers = recordHeaders(resp.Header)
	return o
}

// wait waits for every request in flight to be answered.
func (s *sender) wait() { s.inFlight.Wait() }

// pending counts the requests sent and not yet answered.
func (s *sender) pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sent - len(s.obs)
}

// observed returns a copy of what has been answered so far.
func (s *sender) observed() []Observation {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Observation, len(s.obs))
	copy(out, s.obs)
	return out
}

// budget returns the requests still allowed.
func (s *sender) budget() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxRequests - s.sent
}

// sleepUntil sleeps until t, or reports false if ctx ends first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
