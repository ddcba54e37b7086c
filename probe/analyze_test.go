package probe_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ratelim/ratelim/probe"
	"github.com/ratelim/ratelim/scenarios"
)

var update = flag.Bool("update", false, "rewrite the golden reports under testdata/")

// recorded are the real probes kept under testdata/ (written by the live
// tests with -record) and what the analysis must find in each: the
// limiter each ran against, rate and burst or window to within 5%.
var recorded = []struct {
	name      string
	algorithm string
	anchor    string
	counted   string
	rate      float64
	burst     int64
	limit     int64
	window    time.Duration
}{
	{"serve-token-bucket", "token-bucket", "", "no", 20, 10, 0, 0},
	{"serve-gcra", "token-bucket", "", "no", 20, 10, 0, 0},
	{"serve-leaky-bucket", "leaky-bucket", "", "no", 20, 10, 0, 0},
	{"serve-fixed-window", "fixed-window", "clock", "", 20, 0, 20, time.Second},
	{"serve-sliding-window", "sliding-window", "clock", "no", 20, 0, 20, time.Second},
	{"serve-sliding-log", "sliding-log", "", "no", 20, 0, 20, time.Second},
	// nginx's burst=10 admits 11 at once (ngx_http_limit_req_lookup:
	// the request that finds excess 0 leaves it at 1000, and up to
	// burst × 1000 is admitted).
	{"nginx-nodelay", "token-bucket", "", "no", 20, 11, 0, 0},
	{"nginx-queue", "leaky-bucket", "", "no", 20, 11, 0, 0},
	// HAProxy's http_req_rate(1s) with `gt 20`: a sliding window on
	// periods from the key's first hit, counting the requests it denies.
	// ratelim models it as the peer haproxy-req-rate, which the block names.
	{"haproxy", "haproxy-req-rate", "first-hit", "yes", 20, 0, 20, time.Second},
}

func readRecording(t *testing.T, name string) probe.Recording {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rec, err := probe.ReadRecording(f)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// analyses are the recorded probes' reports, each analysed once for all
// the tests that read it: the analysis is the slow part, most of all
// under -race.
var analyses sync.Map // name → probe.Report

func analyzed(t *testing.T, name string) probe.Report {
	t.Helper()
	if r, ok := analyses.Load(name); ok {
		return r.(probe.Report)
	}
	r := probe.Analyze(readRecording(t, name))
	analyses.Store(name, r)
	return r
}

// TestAnalyzeRecorded analyses each recorded probe: the family and
// numbers must be the limiter's, the report its golden byte for byte
// (written by an earlier analysis, in another process: the analysis is
// deterministic; -update rewrites them), and its text within 80 columns.
func TestAnalyzeRecorded(t *testing.T) {
	for _, c := range recorded {
		t.Run(c.name, func(t *testing.T) {
			r := analyzed(t, c.name)
			if r.Algorithm != c.algorithm || r.Anchor != c.anchor {
				t.Errorf("found %s (anchor %q), want %s (anchor %q)", r.Algorithm, r.Anchor, c.algorithm, c.anchor)
			}
			if r.Key == nil || r.Key.Keyed != "yes" {
				t.Errorf("key finding %+v, want X-Api-Key found to key the limit", r.Key)
			}
			if c.counted != "" && r.RefusedCounted != c.counted {
				t.Errorf("refused counted %q, want %q", r.RefusedCounted, c.counted)
			}
			if !near(r.Rate, c.rate) || r.Burst != c.burst && !near(float64(r.Burst), float64(c.burst)) ||
				r.Limit != c.limit && !near(float64(r.Limit), float64(c.limit)) || !near(float64(r.Window), float64(c.window)) {
				t.Errorf("found %g/s burst %d limit %d window %s, want %g/s burst %d limit %d window %s, each within 5%%",
					r.Rate, r.Burst, r.Limit, time.Duration(r.Window), c.rate, c.burst, c.limit, c.window)
			}
			var got bytes.Buffer
			if err := probe.WriteText(&got, r); err != nil {
				t.Fatal(err)
			}
			for i, line := range strings.Split(got.String(), "\n") {
				if n := utf8.RuneCountInString(line); n > 80 {
					t.Errorf("text line %d is %d columns: %q", i+1, n, line)
				}
			}
			got.WriteString("\n")
			if err := probe.WriteJSON(&got, r); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", c.name+".golden")
			if *update {
				if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test ./probe -run TestAnalyzeRecorded -update writes it)", err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("report differs from %s (-update rewrites it):\n%s", golden, got.String())
			}
		})
	}
}

// TestLimitBlockParses pastes each recorded probe's limit block into a
// scenario and loads it with the scenarios loader: the limit it reads is
// the one found.
func TestLimitBlockParses(t *testing.T) {
	for _, c := range recorded {
		t.Run(c.name, func(t *testing.T) {
			r := analyzed(t, c.name)
			block := probe.LimitBlock(r)
			yaml := "name: pasted\nduration: 1s\n" + block + "clients:\n  - {name: c, api_key: c, traffic: [{pattern: constant, rate: 1/s}]}\n"
			f, err := scenarios.Parse("pasted.yaml", []byte(yaml))
			if err != nil {
				t.Fatalf("%v\n%s", err, yaml)
			}
			l := f.Scenario.Limit
			if l.Algorithm != r.Algorithm {
				t.Errorf("algorithm %q, want %q", l.Algorithm, r.Algorithm)
			}
			if got := l.Params.Rate.PerSecond(); !near(got, r.Rate) {
				t.Errorf("rate %g/s, want %g/s\n%s", got, r.Rate, block)
			}
			if r.Limit > 0 {
				if l.Params.Window != time.Duration(r.Window) || int64(l.Params.Rate.PerSecond()*l.Params.Window.Seconds()+0.5) != r.Limit {
					t.Errorf("window %s at %s, want %d per %s\n%s", l.Params.Window, l.Params.Rate, r.Limit, time.Duration(r.Window), block)
				}
			} else if l.Params.Burst != r.Burst {
				t.Errorf("burst %d, want %d\n%s", l.Params.Burst, r.Burst, block)
			}
			if keyed := r.Key != nil && r.Key.Keyed == "yes"; keyed != (l.Key == "api-key") {
				t.Errorf("key %q, and the probe found X-Api-Key keys it: %v\n%s", l.Key, keyed, block)
			}
		})
	}
}

// TestAnalyzeWithoutRefusals says no limit was seen, and gives no block.
func TestAnalyzeWithoutRefusals(t *testing.T) {
	var obs []probe.Observation
	for i := range 50 {
		obs = append(obs, probe.Observation{Seq: i + 1, Phase: "burst", Sent: int64(i) * 10_000, Answered: int64(i)*10_000 + 300, Status: 200})
	}
	r := probe.Analyze(probe.Recording{Target: "http://127.0.0.1:1/", MaxRate: 100, Obs: obs})
	if r.Limited || r.Algorithm != "" || probe.LimitBlock(r) != "" {
		t.Errorf("found a limit in 50 admissions: %+v", r)
	}
	if len(r.Findings) != 1 || !strings.Contains(r.Findings[0], "No refusal in 50 requests (50 answered 2xx) over 0.5 s, sent at 100/s on average (--max-rate 100/s): a limit above 100/s") ||
		!strings.Contains(r.Findings[0], "lets more than 50 through in 0.5 s") {
		t.Errorf("findings %q", r.Findings)
	}
}

// TestHeadersHeldToBehaviour: serve's answers tell the truth, and the
// same answers with their fields altered are caught: a Retry-After of 0
// is early (later requests were refused), one of 5 s late (the window
// came back within a second), a RateLimit-Policy of 50 wrong.
func TestHeadersHeldToBehaviour(t *testing.T) {
	rec := readRecording(t, "serve-fixed-window")
	h := probe.Analyze(rec).Headers
	if h.RetryAfter.WithField == 0 || h.RetryAfter.Early+h.RetryAfter.Late != 0 || len(h.Claims) == 0 {
		t.Errorf("serve's own fields: %+v, want every Retry-After on time and claims made", h)
	}
	for _, c := range h.Claims {
		if !c.Agrees {
			t.Errorf("serve's %s says %g, the behaviour %g", c.Field, c.Says, c.Observed)
		}
	}
	altered := func(field, value string) probe.HeaderFindings {
		r := probe.Recording{Target: rec.Target, KeyHeader: rec.KeyHeader, MaxRate: rec.MaxRate}
		for _, o := range rec.Obs {
			if _, ok := o.Headers[field]; ok {
				h := map[string]string{}
				for k, v := range o.Headers {
					h[k] = v
				}
				h[field] = value
				o.Headers = h
			}
			r.Obs = append(r.Obs, o)
		}
		return probe.Analyze(r).Headers
	}
	if ra := altered("Retry-After", "0").RetryAfter; ra.Early == 0 {
		t.Errorf("Retry-After: 0 on every refusal: %+v, want some early", ra)
	}
	if ra := altered("Retry-After", "5").RetryAfter; ra.Late == 0 {
		t.Errorf("Retry-After: 5 on every refusal: %+v, want some late", ra)
	}
	wrong := false
	for _, c := range altered("Ratelimit-Policy", `"default";q=50;w=1`).Claims {
		wrong = wrong || c.Field == "RateLimit-Policy q" && !c.Agrees
	}
	if !wrong {
		t.Error("RateLimit-Policy q=50 for a limit of 20 passed as true")
	}
}

// TestLimitBlockOfWindows: a window's block states a rate whose product
// with the window is the limit, whole per second or not.
func TestLimitBlockOfWindows(t *testing.T) {
	for _, c := range []struct {
		limit  int64
		window time.Duration
		rate   string
	}{{40, 2 * time.Second, "20/s"}, {7, 1500 * time.Millisecond, "7/1.5s"}, {100, time.Minute, "100/m"}, {90, 90 * time.Minute, "90/1h30m"}} {
		r := probe.Report{Target: "http://127.0.0.1:1/", Limited: true, Algorithm: "sliding-log", Family: "sliding log",
			Limit: c.limit, Window: probe.Duration(c.window), Rate: float64(c.limit) / c.window.Seconds()}
		block := probe.LimitBlock(r)
		if !strings.Contains(block, "rate: "+c.rate+"\n") {
			t.Errorf("%d per %s: block\n%s\nwant rate: %s", c.limit, c.window, block, c.rate)
		}
		f, err := scenarios.Parse("pasted.yaml", []byte("name: pasted\nduration: 1s\n"+block+"clients:\n  - {name: c, api_key: c, traffic: [{pattern: constant, rate: 1/s}]}\n"))
		if err != nil {
			t.Fatalf("%v\n%s", err, block)
		}
		if l := f.Scenario.Limit.Params; l.Window != c.window || int64(l.Rate.PerSecond()*l.Window.Seconds()+0.5) != c.limit {
			t.Errorf("%d per %s read back as %s per %s", c.limit, c.window, l.Rate, l.Window)
		}
	}
}

// TestAnalyzeOtherAnswers: answers that are neither admissions nor
// refusals (a server that wants a key answers 400) are named, and no
// limit is inferred from them.
func TestAnalyzeOtherAnswers(t *testing.T) {
	obs := []probe.Observation{
		{Seq: 1, Phase: "burst", Sent: 0, Answered: 300, Status: 400},
		{Seq: 2, Phase: "burst", Sent: 10_000, Answered: 10_300, Status: 400},
	}
	r := probe.Analyze(probe.Recording{Target: "http://127.0.0.1:1/", MaxRate: 100, Obs: obs})
	if r.Limited || len(r.Findings) != 2 || !strings.Contains(r.Findings[0], "2 of the 2 answers") || !strings.Contains(r.Findings[0], "400 Bad Request") ||
		!strings.Contains(r.Findings[1], "nothing to analyse") {
		t.Errorf("findings %q", r.Findings)
	}
}

// TestAnalyzeRecordedConcurrency: a server holding each request 100 ms
// with 5 slots, probed while two builds loaded the machine (a request
// sent as another's answer came back found its slot free: the round trip
// the model allows for), is a limit of 5 in flight.
func TestAnalyzeRecordedConcurrency(t *testing.T) {
	r := analyzed(t, "concurrency")
	if r.Algorithm != "concurrency" || r.MaxInFlight != 5 || r.Mismatches > 1 {
		t.Errorf("found %s, %d in flight, %d of %d answers decided otherwise; want concurrency, 5, at most 1", r.Algorithm, r.MaxInFlight, r.Mismatches, r.Decisions)
	}
}

// TestAnalyzeLongWindowSeenBriefly: a fixed window of 10 per 10 s on the
// clock, probed by the earlier phases for 3.9 s (the overload saw one
// edge, the refill and split none), fits 10 per 5 s as well as 10 per
// 10 s. The report says so: the range in its text, confidence low (it
// was high), and the server's RateLimit-Policy w=10, inside the range,
// not called wrong (it was).
func TestAnalyzeLongWindowSeenBriefly(t *testing.T) {
	r := analyzed(t, "fixed-window-10s-early")
	if r.Algorithm != "fixed-window" || r.Limit != 10 {
		t.Fatalf("found %s, limit %d; want fixed-window, 10", r.Algorithm, r.Limit)
	}
	if r.Confidence == "high" || time.Duration(r.WindowHigh) < 10*time.Second || time.Duration(r.WindowLow) > 5*time.Second {
		t.Errorf("confidence %s, windows %s to %s; want below high, and 5s to 10s", r.Confidence, time.Duration(r.WindowLow), time.Duration(r.WindowHigh))
	}
	for _, c := range r.Headers.Claims {
		if !c.Agrees {
			t.Errorf("%s says %g, called wrong; the range that fits is %v", c.Field, c.Says, c.ObservedRange)
		}
	}
	var b strings.Builder
	_ = probe.WriteText(&b, r)
	if !strings.Contains(b.String(), "lengths from 5s to 10s fits as well") {
		t.Errorf("the text does not give the range:\n%s", b.String())
	}
}

// recordedByAddress are real probes (ratelim probe --observations, the
// phases of this package) of ratelim serve keyed by the client's address,
// with the numbers each ran with: limits slower, longer or larger than
// the live tests can wait for.
var recordedByAddress = []struct {
	name      string
	algorithm string
	rate      float64
	burst     int64
	limit     int64
	window    time.Duration
}{
	// fixed-window 10/10s: the refill found nothing back after the
	// first cycle's estimate (0.5 s) and doubled it until it did.
	{"serve-fixed-window-10s", "fixed-window", 1, 0, 10, 10 * time.Second},
	// token-bucket 1/s burst 1: a slow rate.
	{"serve-token-bucket-1s", "token-bucket", 1, 1, 0, 0},
	// token-bucket 30/m burst 5: refills after growing waits (2, 3, 6
	// and 6 s) show the rate; the limit block says 30/m.
	{"serve-token-bucket-30m", "token-bucket", 0.5, 5, 0, 0},
	// token-bucket 50/s burst 500 probed at 100/s: 1,070 admitted
	// before the first refusal, 10.7 s into the budget.
	{"serve-token-bucket-burst500", "token-bucket", 50, 500, 0, 0},
	// token-bucket 20/s burst 10 keyed by address: X-Api-Key does not key it.
	{"serve-token-bucket-by-address", "token-bucket", 20, 10, 0, 0},
}

// TestAnalyzeRecordedByAddress: each is found with its numbers within 5%,
// and a confidence that is not high when its range is wide.
func TestAnalyzeRecordedByAddress(t *testing.T) {
	for _, c := range recordedByAddress {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // seconds of fitting each (1,500 decisions at burst 500): both cores
			r := analyzed(t, c.name)
			if r.Algorithm != c.algorithm {
				t.Errorf("found %s, want %s", r.Algorithm, c.algorithm)
			}
			if !near(r.Rate, c.rate) || c.burst > 0 && !near(float64(r.Burst), float64(c.burst)) ||
				c.limit > 0 && (r.Limit != c.limit || !near(float64(r.Window), float64(c.window))) {
				t.Errorf("found %g/s burst %d limit %d window %s, want %g/s burst %d limit %d window %s, each within 5%%",
					r.Rate, r.Burst, r.Limit, time.Duration(r.Window), c.rate, c.burst, c.limit, c.window)
			}
			for _, cl := range r.Headers.Claims {
				if !cl.Agrees {
					t.Errorf("serve's %s says %g, called wrong (the behaviour %g)", cl.Field, cl.Says, cl.Observed)
				}
			}
			if r.KeyHeader != "" && (r.Key == nil || r.Key.Keyed != "no") {
				t.Errorf("key finding %+v, want %s found not to key a limit keyed by address", r.Key, r.KeyHeader)
			}
			if c.name == "serve-token-bucket-30m" && !strings.Contains(probe.LimitBlock(r), "rate: 30/m\n") {
				t.Errorf("limit block\n%s\nwant rate: 30/m", probe.LimitBlock(r))
			}
			var b strings.Builder
			_ = probe.WriteText(&b, r)
			t.Logf("\n%s", b.String())
		})
	}
}

// TestAnalyzeNarrowRateFit: a token bucket of 1/s, burst 1, probed by the
// earlier phases, fits 0.999/s with no answer decided otherwise; the
// coarse grid missed that narrow basin and reported 0.4985/s (six
// wrong, "rate: 4985/10000s").
func TestAnalyzeNarrowRateFit(t *testing.T) {
	r := analyzed(t, "serve-token-bucket-1s-early")
	if r.Algorithm != "token-bucket" || !near(r.Rate, 1) || r.Burst != 1 {
		t.Errorf("found %s %g/s burst %d (%d of %d wrong), want token-bucket 1/s burst 1", r.Algorithm, r.Rate, r.Burst, r.Mismatches, r.Decisions)
	}
}

// TestBurstFindingSaysWhatWasSeen: serve's bucket of burst 10 admitted
// 12 before its first refusal, sent over 110 ms at 100/s, 2 of them
// refilled: the finding says so ("12 were admitted at once from a full
// bucket", and "1 were" for a burst of 1, it said).
func TestBurstFindingSaysWhatWasSeen(t *testing.T) {
	for name, want := range map[string]string{
		"serve-token-bucket":    "the first 12 requests were admitted before the first refusal, sent over 11",
		"serve-token-bucket-1s": "the first request was admitted before the first refusal, sent over 0s",
	} {
		text := strings.Join(analyzed(t, name).Findings, "\n")
		if !strings.Contains(text, want) || strings.Contains(text, "at once") || strings.Contains(text, " 1 were") {
			t.Errorf("%s: findings\n%s\nwant %q", name, text, want)
		}
	}
}

// TestRetryAfterHeldWhenNothingRecovers: a server that refuses every
// request with Retry-After: 1 (probed 124 times over ~7 s) names instants
// later refusals passed: its Retry-After is early, and said so; it was
// never checked when nothing recovered.
func TestRetryAfterHeldWhenNothingRecovers(t *testing.T) {
	r := analyzed(t, "always-refused")
	ra := r.Headers.RetryAfter
	if ra.Refusals != 124 || ra.WithField != 124 || ra.Early == 0 || ra.OnTime+ra.Late != 0 {
		t.Errorf("Retry-After check %+v, want 124 refusals with the field, some early, none on time or late", ra)
	}
	if text := strings.Join(r.Findings, "\n"); !strings.Contains(text, "Retry-After on 124 of 124 refusals") || !strings.HasPrefix(text, "Every request was refused") {
		t.Errorf("findings\n%s", text)
	}
}

// spaces is an endless reader of JSON whitespace.
type spaces struct{}

func (spaces) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

// TestReadRecordingRefuses: a recording no probe could have written is
// refused, naming what is wrong and where (10⁶ observations were read,
// 675 MB, and analysed for minutes).
func TestReadRecordingRefuses(t *testing.T) {
	obs := func(n int, edit func(i int, o *probe.Observation)) []probe.Observation {
		out := make([]probe.Observation, n)
		for i := range out {
			out[i] = probe.Observation{Seq: i + 1, Phase: "burst", Sent: int64(i) * 10_000, Answered: int64(i)*10_000 + 500, Status: 200}
			if edit != nil {
				edit(i, &out[i])
			}
		}
		return out
	}
	for _, c := range []struct {
		name string
		rec  probe.Recording
		want string
	}{
		{"too many", probe.Recording{MaxRate: 100, Obs: obs(probe.MaxMaxRequests+1, nil)}, "2001 of them (want at most 2000"},
		{"max rate 0", probe.Recording{MaxRate: 0, Obs: obs(3, nil)}, "max_rate: 0 (want 0.1 to 1000)"},
		{"negative instant", probe.Recording{MaxRate: 100, Obs: obs(3, func(i int, o *probe.Observation) {
			if i == 1 {
				o.Sent = -5
			}
		})}, "observations[1]: sent_us -5"},
		{"answer before request", probe.Recording{MaxRate: 100, Obs: obs(3, func(i int, o *probe.Observation) {
			if i == 2 {
				o.Answered = o.Sent - 1
			}
		})}, "observations[2]: answered_us 19999 is before sent_us 20000"},
		{"seq repeated", probe.Recording{MaxRate: 100, Obs: obs(3, func(i int, o *probe.Observation) { o.Seq = 1 })}, "observations[1]: seq 1 is not a new sequence number"},
		{"status", probe.Recording{MaxRate: 100, Obs: obs(3, func(i int, o *probe.Observation) { o.Status = 1000 })}, "observations[0]: status 1000"},
	} {
		var b bytes.Buffer
		if err := probe.WriteRecording(&b, c.rec); err != nil {
			t.Fatal(err)
		}
		if _, err := probe.ReadRecording(&b); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
	huge := io.MultiReader(strings.NewReader(`{"format":"`+probe.RecordingFormat+`","observations":[`), spaces{})
	if _, err := probe.ReadRecording(huge); err == nil || !strings.Contains(err.Error(), "larger than 32 MiB") {
		t.Errorf("an endless file: %v, want refused past 32 MiB", err)
	}
}

// TestAnalyzeStopsWhenCancelled: Ctrl-C during the analysis of a full
// budget's observations (seconds of fitting) ends it at once, with the
// context's error.
func TestAnalyzeStopsWhenCancelled(t *testing.T) {
	rec := readRecording(t, "serve-token-bucket-burst500")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := probe.AnalyzeContext(ctx, rec); !errors.Is(err, context.Canceled) {
		t.Errorf("AnalyzeContext returned %v, want context.Canceled", err)
	}
}

// TestRecordedTextIsEscaped: a recording's target and key header are
// text from a file: escape sequences in them never reach the terminal,
// and a newline in the target never starts a line of the limit block
// (it injected `limit:` lines into the YAML).
func TestRecordedTextIsEscaped(t *testing.T) {
	rec := readRecording(t, "serve-token-bucket")
	rec.Target = "http://127.0.0.1:1/\x1b[31mred\nlimit: {algorithm: fixed-window}\n"
	rec.KeyHeader = "X-Api-Key\x1b]0;pwned\x07"
	r := probe.Analyze(rec)
	var b strings.Builder
	if err := probe.WriteText(&b, r); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(b.String(), "\x1b\x07") {
		t.Errorf("the text carries escape sequences:\n%q", b.String())
	}
	block := probe.LimitBlock(r)
	for _, line := range strings.Split(strings.TrimSuffix(block, "\n"), "\n") {
		if !strings.HasPrefix(line, "#") && !strings.HasPrefix(line, "limit:") && !strings.HasPrefix(line, "  ") {
			t.Errorf("limit block line %q is neither a comment nor the block's", line)
		}
	}
	if strings.Count("\n"+block, "\nlimit:") != 1 || strings.Contains(block, "\x1b") {
		t.Errorf("limit block\n%s", block)
	}
}
