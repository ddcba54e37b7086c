// Package probe infers what rate limiter sits behind an HTTP endpoint from
// the answers to a bounded, designed sequence of requests: its family
// (token bucket or GCRA, a leaky bucket that queues, a fixed window aligned
// to the clock or anchored at a key's first hit, the sliding-window
// counter, the sliding log, a limit on requests in flight), its rate and
// burst or window, whether refused
// requests are counted, which header keys it, and whether the answers'
// headers tell the truth.
//
// Sending and deciding are apart. Run sends (send.go and run.go, the only
// files that read the clock or touch the network) and records each answer
// as an Observation; Analyze is a pure function of those observations, so
// a recorded run (testdata/*.json) gives the same Report byte for byte.
package probe

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Observation is one request as it was sent and answered. Instants are
// wall-clock microseconds since the Unix epoch: the wall clock, because a
// fixed window may be aligned to it.
type Observation struct {
	// Seq numbers the requests in the order they were sent, from 1; the
	// request carried it in X-Ratelim-Request.
	Seq int `json:"seq"`
	// Phase names the part of the probe that sent it (burst, overload,
	// recover, refill, split, key).
	Phase string `json:"phase"`
	// Key is the value sent in the key header; "" when none was named.
	Key string `json:"key,omitempty"`
	// Sent is when the probe sent the request (the instant its schedule,
	// never faster than the top rate, was held to; it leaves on its own
	// goroutine microseconds later); Answered when its answer came back,
	// or the request failed.
	Sent     int64 `json:"sent_us"`
	Answered int64 `json:"answered_us"`
	// Status is the HTTP status; 0 for a request that got no answer, whose
	// Error then says why.
	Status int    `json:"status"`
	Error  string `json:"error,omitempty"`
	// Headers are the answer's rate-limit fields (RecordedHeaders), by
	// canonical name, their values joined by ", ".
	Headers map[string]string `json:"headers,omitempty"`
}

// RecordedHeaders are the answer fields an Observation keeps: the ones
// that say something about the limit.
var RecordedHeaders = []string{
	"Retry-After",
	"Ratelimit", "Ratelimit-Policy",
	"Ratelimit-Limit", "Ratelimit-Remaining", "Ratelimit-Reset",
	"X-Ratelimit-Limit", "X-Ratelimit-Remaining", "X-Ratelimit-Reset",
	"X-Ratelimit-Delay",
}

// recordHeaders keeps h's RecordedHeaders.
func recordHeaders(h http.Header) map[string]string {
	var out map[string]string
	for _, name := range RecordedHeaders {
		if v := h.Values(name); len(v) > 0 {
			if out == nil {
				out = map[string]string{}
			}
			out[name] = strings.Join(v, ", ")
		}
	}
	return out
}

// Admitted reports whether the answer let the request through (2xx).
func (o Observation) Admitted() bool { return o.Status >= 200 && o.Status < 300 }

// Refused reports whether the answer is a limiter's refusal: 429, or 503
// (nginx's limit_req_status and haproxy's deny answer 503 unless told
// otherwise).
func (o Observation) Refused() bool {
	return o.Status == http.StatusTooManyRequests || o.Status == http.StatusServiceUnavailable
}

// Recording is a probe's observations with what they were sent under: the
// file format of testdata/*.json and of --observations.
type Recording struct {
	Format string `json:"format"` // RecordingFormat
	// Target is the URL probed; KeyHeader the header the key went in.
	Target    string        `json:"target"`
	KeyHeader string        `json:"key_header,omitempty"`
	MaxRate   float64       `json:"max_rate"`
	Obs       []Observation `json:"observations"`
}

// RecordingFormat names the recording's layout, for a reader to refuse one
// it does not know.
const RecordingFormat = "ratelim.probe-observations/v1"

// WriteRecording writes rec as indented JSON.
func WriteRecording(w io.Writer, rec Recording) error {
	rec.Format = RecordingFormat
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(rec)
}

// MaxRecordingBytes bounds a recording ReadRecording reads: a probe's
// most requests, each with its rate-limit fields, are far less; a file
// past it was not written by a probe.
const MaxRecordingBytes = 32 << 20

// maxInstant bounds an instant (µs since the epoch, the year 2255): the
// analysis adds and multiplies them, and must not overflow.
const maxInstant = 1 << 53

// ReadRecording reads a recording WriteRecording wrote, and refuses one no
// probe could have: larger than MaxRecordingBytes, more observations than
// MaxMaxRequests, a max_rate out of Options' bounds, an instant negative
// or past 2255, an answer before its request, a status that is not one,
// a sequence number repeated. An error names the observation.
func ReadRecording(r io.Reader) (Recording, error) {
	var rec Recording
	lr := &io.LimitedReader{R: r, N: MaxRecordingBytes + 1}
	if err := json.NewDecoder(lr).Decode(&rec); err != nil {
		if lr.N <= 0 {
			return Recording{}, fmt.Errorf("probe: observations: larger than %d MiB (want a file ratelim probe --observations wrote)", MaxRecordingBytes>>20)
		}
		return Recording{}, fmt.Errorf("probe: reading observations: %w", err)
	}
	if rec.Format != RecordingFormat {
		return Recording{}, fmt.Errorf("probe: observations are %q (want %q)", rec.Format, RecordingFormat)
	}
	if err := rec.check(); err != nil {
		return Recording{}, fmt.Errorf("probe: observations: %w", err)
	}
	return rec, nil
}

func (rec Recording) check() error {
	switch {
	case len(rec.Obs) > MaxMaxRequests:
		return fmt.Errorf("%d of them (want at most %d, the most a probe sends)", len(rec.Obs), MaxMaxRequests)
	case !(rec.MaxRate >= MinMaxRate && rec.MaxRate <= MaxMaxRate):
		return fmt.Errorf("max_rate: %g (want %g to %g)", rec.MaxRate, MinMaxRate, MaxMaxRate)
	}
	seen := make(map[int]bool, len(rec.Obs))
	for i, o := range rec.Obs {
		var err error
		switch {
		case o.Seq < 1 || seen[o.Seq]:
			err = fmt.Errorf("seq %d is not a new sequence number (want each from 1 once)", o.Seq)
		case o.Sent < 0 || o.Sent > maxInstant || o.Answered < 0 || o.Answered > maxInstant:
			err = fmt.Errorf("sent_us %d, answered_us %d (want 0 to %d)", o.Sent, o.Answered, int64(maxInstant))
		case o.Answered < o.Sent && !(o.Answered == 0 && o.Status == 0):
			err = fmt.Errorf("answered_us %d is before sent_us %d (want an answer after its request)", o.Answered, o.Sent)
		case o.Status < 0 || o.Status > 999:
			err = fmt.Errorf("status %d (want an HTTP status, or 0 for no answer)", o.Status)
		}
		if err != nil {
			return fmt.Errorf("observations[%d]: %w", i, err)
		}
		seen[o.Seq] = true
	}
	return nil
}
