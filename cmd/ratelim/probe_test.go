package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ratelim/ratelim/probe"
)

// parseProbe runs a probe command line with its run replaced by a record
// of its options and its plan: what it would send, without sending.
func parseProbe(line string) (code int, opts *probeOptions, plan probe.Options, stderr string) {
	var errOut bytes.Buffer
	r := runners{probe: func(o *probeOptions) (err error) {
		c := *o
		c.streams, opts = streams{}, &c
		plan, err = planProbe(o)
		return err
	}}
	code = runWith(context.Background(), argv(line), streams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &errOut}, r)
	return code, opts, plan, errOut.String()
}

func TestProbeArgvToOptions(t *testing.T) {
	defaults := func() probeOptions {
		return probeOptions{URL: "http://127.0.0.1:8080/api", MaxRequests: probe.DefaultMaxRequests, MaxRate: probe.DefaultMaxRate,
			MaxDuration: probe.DefaultMaxDuration, Format: "text"}
	}
	cases := []argvCase[probeOptions]{
		{line: "probe http://127.0.0.1:8080/api"},
		{line: "probe http://127.0.0.1:8080/api --key-header X-Api-Key --key k1", want: func(o *probeOptions) { o.KeyHeader, o.Key = "X-Api-Key", "k1" }},
		{line: "probe http://127.0.0.1:8080/api --max-requests 200 --max-rate 40 --max-duration 20s", want: func(o *probeOptions) {
			o.MaxRequests, o.MaxRate, o.MaxDuration = 200, 40, 20*time.Second
		}},
		{line: "probe http://127.0.0.1:8080/api --format json --observations run.json -q", want: func(o *probeOptions) {
			o.Format, o.Observations, o.Quiet = "json", "run.json", true
		}},
		{line: "probe http://127.0.0.1:8080/api --allow-remote --quiet", want: func(o *probeOptions) { o.AllowRemote, o.Quiet = true, true }},
		{line: "probe --from run.json --format limit", want: func(o *probeOptions) { o.URL, o.From, o.Format = "", "run.json", "limit" }},
	}
	var lines []string
	for _, c := range cases {
		lines = append(lines, c.line)
		code, got, _, stderr := parseProbe(c.line)
		if code != exitOK {
			t.Errorf("%s: exit %d, stderr %q", c.line, code, stderr)
		}
		want := defaults()
		if c.want != nil {
			c.want(&want)
		}
		sameOptions(t, c.line, got, want)
	}
	everyFlagTested(t, newCmdProbe(streams{}, nil), lines)
}

// TestProbeArgvToPlan: the flags reach the probe's options as given, the
// URL checked.
func TestProbeArgvToPlan(t *testing.T) {
	_, _, plan, _ := parseProbe("probe http://localhost:9000/x --key-header X-User --key u --max-requests 300 --max-rate 50 --max-duration 30s")
	want := probe.Options{URL: "http://localhost:9000/x", KeyHeader: "X-User", Key: "u", MaxRequests: 300, MaxRate: 50, MaxDuration: 30 * time.Second}
	if plan.URL != want.URL || plan.KeyHeader != want.KeyHeader || plan.Key != want.Key || plan.MaxRequests != want.MaxRequests ||
		plan.MaxRate != want.MaxRate || plan.MaxDuration != want.MaxDuration {
		t.Errorf("plan %+v, want %+v", plan, want)
	}
}

func TestProbeRefusesBadFlags(t *testing.T) {
	testRefusals(t, []refusal{
		{"probe", exitBadInput, []string{"the endpoint's URL"}},
		{"probe http://127.0.0.1:1/ http://127.0.0.1:2/", exitBadInput, []string{"the endpoint's URL", "got 2"}},
		{"probe http://10.0.0.1/api", exitBadInput, []string{"URL", "10.0.0.1", "not a loopback address", "--allow-remote"}},
		{"probe ftp://127.0.0.1/", exitBadInput, []string{"URL", "not an http URL"}},
		{"probe http://127.0.0.1:1/ --max-requests 0", exitBadInput, []string{"--max-requests", "want 20 to 2000", "(got 0)"}},
		{"probe http://127.0.0.1:1/ --max-requests 3", exitBadInput, []string{"--max-requests", "want 20 to 2000", "20 at least", "(got 3)"}},
		{"probe http://127.0.0.1:1/ --max-requests 2001", exitBadInput, []string{"--max-requests", "(got 2001)"}},
		{"probe http://127.0.0.1:1/ --max-requests many", exitBadInput, []string{"--max-requests", `"many"`}},
		{"probe http://127.0.0.1:1/ --max-rate 0", exitBadInput, []string{"--max-rate", "(got 0)"}},
		{"probe http://127.0.0.1:1/ --max-rate 1e-300", exitBadInput, []string{"--max-rate", "want 0.1 to 1000", "(got 1e-300)"}},
		{"probe http://127.0.0.1:1/ --max-rate 0.09", exitBadInput, []string{"--max-rate", "want 0.1 to 1000", "(got 0.09)"}},
		{"probe http://127.0.0.1:1/ --max-rate 1001", exitBadInput, []string{"--max-rate", "want 0.1 to 1000", "(got 1001)"}},
		{"probe http://127.0.0.1:1/ --max-rate NaN", exitBadInput, []string{"--max-rate", "(got NaN)"}},
		{"probe http://127.0.0.1:1/ --max-duration 0s", exitBadInput, []string{"--max-duration", "(got 0s)"}},
		{"probe http://127.0.0.1:1/ --max-duration 11m", exitBadInput, []string{"--max-duration", "at most 10m0s", "(got 11m0s)"}},
		{"probe http://127.0.0.1:1/ --format xml", exitBadInput, []string{"--format", `"xml"`}},
		{"probe http://127.0.0.1:1/ --key k", exitBadInput, []string{"--key", "--key-header"}},
		{"probe http://127.0.0.1:1/ --key-header Bad:Name", exitBadInput, []string{"--key-header", `"Bad:Name"`}},
		{"probe --from /nonexistent/run.json", exitBadInput, []string{"--from", "/nonexistent/run.json"}},
		{"probe --from testdata/probe-negative-rate.json", exitBadInput, []string{"--from", "max_rate: -1 (want 0.1 to 1000)"}},
		{"probe http://127.0.0.1:1/ --from run.json", exitBadInput, []string{"no URL with --from"}},
		// The observations' path is checked before anything is sent
		// (port 1: a probe would fail on connection, exit 4).
		{"probe http://127.0.0.1:1/ --observations -", exitBadInput, []string{"--observations", "not standard output"}},
		{"probe http://127.0.0.1:1/ --observations /nonexistent/dir/run.json", exitBadInput, []string{"--observations", "cannot write /nonexistent/dir/run.json"}},
		{"probe http://127.0.0.1:1/ --observations testdata", exitBadInput, []string{"--observations", "cannot write testdata", "directory"}},
	})
}

// TestProbeFromRecording analyses a recorded probe in each format, sending
// nothing: the text names the family, the limit format is the block
// alone, and the JSON is the report with it.
func TestProbeFromRecording(t *testing.T) {
	const file = "../../probe/testdata/serve-token-bucket.json"
	run := func(format string) string {
		var out, errOut bytes.Buffer
		code := run(context.Background(), []string{"probe", "--from", file, "--format", format}, streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
		if code != exitOK || errOut.Len() != 0 {
			t.Fatalf("--format %s: exit %d, stderr %q", format, code, errOut.String())
		}
		return out.String()
	}
	if text := run("text"); !strings.Contains(text, "token bucket or GCRA") || !strings.Contains(text, "\nlimit:\n") {
		t.Errorf("text:\n%s", text)
	}
	if block := run("limit"); !strings.HasPrefix(block, "# probed ") || !strings.Contains(block, "algorithm: token-bucket\n  rate: 20/s\n  burst: 10\n") {
		t.Errorf("limit block:\n%s", block)
	}
	var got struct {
		Algorithm  string `json:"algorithm"`
		LimitBlock string `json:"limit_block"`
	}
	if err := json.Unmarshal([]byte(run("json")), &got); err != nil || got.Algorithm != "token-bucket" || got.LimitBlock == "" {
		t.Errorf("json: %+v, %v", got, err)
	}
}

// TestProbeUnansweredExits4: a URL nothing listens on is the
// environment's failure, named, after three requests.
func TestProbeUnansweredExits4(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"probe", "http://127.0.0.1:1/", "-q"}, streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	if code != exitInternal || !strings.Contains(errOut.String(), "no request was answered") || !strings.Contains(errOut.String(), "connection refused") {
		t.Errorf("exit %d, stderr %q; want 4 and the connection refused", code, errOut.String())
	}
}

// TestProbeFromInterrupted: Ctrl-C while a recording is analysed exits
// 130 at once, reporting nothing (the analysis ran on; SIGINT did
// nothing).
func TestProbeFromInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errOut bytes.Buffer
	code := run(ctx, []string{"probe", "--from", "../../probe/testdata/serve-token-bucket-burst500.json"}, streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	if code != exitInterrupted || out.Len() != 0 {
		t.Errorf("exit %d, stdout %q, stderr %q; want 130 and nothing reported", code, out.String(), errOut.String())
	}
}

// TestProbeHelp: probe's help fits 80 columns (its example was 102, its
// flag lines up to 148), names every family, and its example is the one
// docs/commands.md measured finding a limit at the defaults.
func TestProbeHelp(t *testing.T) {
	var out bytes.Buffer
	code := run(context.Background(), []string{"probe", "--help"}, streams{In: strings.NewReader(""), Out: &out, ErrOut: &out})
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for i, line := range strings.Split(out.String(), "\n") {
		if len(line) > 80 {
			t.Errorf("help line %d is %d columns: %q", i+1, len(line), line)
		}
	}
	for _, want := range []string{"requests\nin flight", "ratelim serve retry-storm", "only 500"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("help does not say %q", want)
		}
	}
}

// TestProbeRemoteURLInItsOwnWords: a URL off this machine is refused in
// probe's words, not load's ("load runs target this machine only").
func TestProbeRemoteURLInItsOwnWords(t *testing.T) {
	code, _, _, stderr := parseProbe("probe http://10.0.0.1/api")
	if code != exitBadInput || strings.Contains(stderr, "load") || !strings.Contains(stderr, "probe sends to this machine only") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}
