package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ratelim/ratelim/internal/words"
	"github.com/ratelim/ratelim/replay"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/trace"
)

// sampleLog is the sample access log package replay's tests make.
var sampleLog = filepath.Join("..", "..", "replay", "testdata", "access.log")

func TestReplaySample(t *testing.T) {
	for _, tc := range []struct {
		golden string
		args   []string
	}{
		{"replay-sample.table", []string{"--limit", "100/m", "--burst", "20"}},
		{"replay-sample-suggest.table", []string{"--limit", "100/m", "--algorithm", "sliding-window", "--suggest", "--top", "5"}},
		{"replay-sample-frontier.table", []string{"--suggest", "--top", "5"}},
		{"replay-sample-frontier-window.table", []string{"--suggest", "--algorithm", "sliding-window", "--top", "3"}},
		{"replay-sample-frontier.json", []string{"--suggest", "--headroom", "50%", "--top", "3", "--format", "json"}},
		{"replay-sample-vs.table", []string{"--limit", "100/m", "--burst", "20", "--vs", "topology=local", "--vs", "servers=4", "--top", "5"}},
		{"replay-sample.json", []string{"--limit", "100/m", "--burst", "20", "--suggest", "--format", "json"}},
		{"replay-sample.csv", []string{"--limit", "100/m", "--burst", "20", "--format", "csv"}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			code, out, errOut := runArgs(append([]string{"replay", sampleLog}, tc.args...)...)
			if code != exitOK || errOut != "" {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			golden(t, tc.golden, []byte(out))
			if strings.HasSuffix(tc.golden, ".table") {
				width := 80
				if strings.Contains(tc.golden, "-vs") {
					width = 100 // two runs side by side
				}
				for _, line := range strings.Split(out, "\n") {
					if n := len([]rune(line)); n > width {
						t.Errorf("line of %d columns: %q", n, line)
					}
				}
			}
			if strings.HasSuffix(tc.golden, ".json") {
				var doc struct {
					Schema string `json:"schema"`
				}
				if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Schema != "ratelim.replay/v2" {
					t.Fatalf("schema %q, %v", doc.Schema, err)
				}
			}
		})
	}
}

// The sample's lesson, asserted and not only pinned: the health-check
// loop and the export are throttled, the people and the phones are not.
func TestReplaySampleThrottlesTheLoop(t *testing.T) {
	code, out, _ := runArgs("replay", sampleLog, "--limit", "100/m", "--burst", "20", "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	var doc struct {
		Runs []struct {
			Keys []struct {
				Key      string `json:"key"`
				Requests int64  `json:"requests"`
				Rejected int64  `json:"rejected"`
			} `json:"keys"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	keys := doc.Runs[0].Keys
	if keys[0].Key != "ip:203.0.113.9" || keys[1].Key != "ip:198.51.100.23" {
		t.Fatalf("most throttled: %s, %s", keys[0].Key, keys[1].Key)
	}
	// 1,200 requests over 4 minutes at 100/m with a burst of 20: about
	// 20 + 400 admitted.
	if k := keys[0]; k.Requests != 1200 || k.Rejected < 770 || k.Rejected > 790 {
		t.Errorf("the loop: %d of %d rejected, want about 780", k.Rejected, k.Requests)
	}
	for _, k := range keys[2:] {
		if k.Rejected != 0 {
			t.Errorf("%s: %d rejected, want none", k.Key, k.Rejected)
		}
	}
}

func TestReplayStdinAndRedact(t *testing.T) {
	data, err := os.ReadFile(sampleLog)
	if err != nil {
		t.Fatal(err)
	}
	stdin := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := run(context.Background(), args, streams{In: bytes.NewReader(data), Out: &out, ErrOut: &errOut})
		return code, out.String(), errOut.String()
	}
	_, fromFile, _ := runArgs("replay", sampleLog, "--limit", "100/m", "--format", "csv")
	code, fromStdin, errOut := stdin("replay", "-", "--limit", "100/m", "--format", "csv")
	if code != exitOK || fromStdin != fromFile {
		t.Fatalf("stdin: exit %d, stderr %q; same as the file: %v", code, errOut, fromStdin == fromFile)
	}
	redacted := func(salt string) string {
		code, out, errOut := runArgs("replay", sampleLog, "--limit", "100/m", "--redact", "--salt", salt, "--top", "0")
		if code != exitOK || errOut != "" {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
		return out
	}
	a := redacted("s1")
	for _, ip := range []string{"203.0.113.9", "198.51.100.23", "2001:db8:7:1", "192.0.2.1"} {
		if strings.Contains(a, ip) {
			t.Errorf("a redacted report names %s", ip)
		}
	}
	if a != redacted("s1") || a == redacted("s2") {
		t.Error("one salt must give one report, another salt another")
	}
	code, _, errOut = runArgs("replay", sampleLog, "--limit", "100/m", "--redact", "--format", "csv")
	if code != exitOK || !strings.Contains(errOut, "random salt") {
		t.Errorf("--redact without --salt: exit %d, stderr %q", code, errOut)
	}
}

func TestReplayBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.log")
	os.WriteFile(bad, []byte(`192.0.2.1 - - [01/Mar/2026:12:00:00 +0000] "GET / HTTP/1.1" 200 1 "-" "-"
192.0.2.1 - - [01/Mar/2026:12:00:01 +0000] "GET / HTTP/1.1" OK 1 "-" "-"
`), 0o644)
	for _, tc := range []struct {
		args []string
		want string
		hint bool // the usage hint follows
	}{
		{[]string{"replay", sampleLog}, "--limit: required", true},
		{[]string{"replay", sampleLog, "--quantile", "0.9"}, "--limit: required", true},
		{[]string{"replay", sampleLog, "--limit", "fast"}, "--limit:", true},
		{[]string{"replay", sampleLog, "--limit", "0/s"}, "a rate must be positive", true},
		{[]string{"replay", sampleLog, "--limit", "1/s", "--burst", "-3"}, "--burst: must be positive", true},
		{[]string{"replay", sampleLog, "--limit", "1/s", "--window", "1m"}, "token-bucket has no window", true},
		{[]string{"replay", sampleLog, "--limit", "1/s", "--algorithm", "sliding-log", "--window", "soon"}, "--window:", true},
		{[]string{"replay", sampleLog, "--limit", "1/s", "--key", "cookie"}, "--key:", true},
		{[]string{"replay", sampleLog, "--limit", "1/s", "--log-format", "xml"}, "--log-format:", true},
		{[]string{"replay", sampleLog, "--limit", "1/s", "--from", "yesterday"}, "--from:", true},
		{[]string{"replay", sampleLog, "--limit", "1/s", "--from", "2026-11-24 10:05", "--until", "2026-11-24 10:00"}, "is not after --from", true},
		{[]string{"replay", sampleLog, "--limit", "1/s", "--speed", "0"}, "--speed:", true},
		{[]string{"replay", sampleLog, "--limit", "1/s", "--speed", "1e-8"}, "--speed: 1e-08 is out of range (want 0.001 to 1e+09", true},
		{[]string{"replay", sampleLog, "--limit", "1/s", "--speed", "1e-300"}, "--speed: 1e-300 is out of range", true},
		{[]string{"replay", sampleLog, "--limit", "1/s", "--vs", "colour=red"}, `unknown field "colour"`, true},
		{[]string{"replay", sampleLog, "--limit", "1/s", "--vs", "burst=lots"}, "--vs burst:", true},
		{[]string{"replay", sampleLog, "--limit", "1/s", "--vs", "servers=100000"}, "--vs servers", true},
		{[]string{"replay", sampleLog, "--limit", "1/s", "--suggest", "--quantile", "2"}, "--quantile:", true},
		{[]string{"replay", sampleLog, "--suggest", "--format", "csv"}, "--format: csv writes a row per key; --suggest's frontier is in --format json", true},
		{[]string{"replay", sampleLog, "--limit", "1/s", "--algorithm", "concurrency"}, "--algorithm: concurrency limits requests in flight, and a log has no request durations to replay (want a rate limit, e.g. token-bucket or sliding-window", true},
		{[]string{"replay", sampleLog, "--suggest", "--speed", "60"}, "--speed: --suggest profiles the log as logged (want 1)", true},
		{[]string{"replay", sampleLog, "--limit", "1/s", "--salt", "x"}, "--salt: only with --redact", true},
		{[]string{"replay", sampleLog, "--limit", "1/s", "--top", "-1"}, "--top:", true},
		{[]string{"replay", sampleLog, "--limit", "1/s", "--tz", "Mars/Olympus"}, "--tz: unknown time zone Mars/Olympus (want e.g. UTC, Europe/Paris)", true},
		{[]string{"replay", sampleLog, "--limit", "1/s", "--tz", "Local"}, "--tz: Local is this machine's zone; name it (want e.g. Europe/Paris)", true},
		{[]string{"replay", sampleLog, "--limit", "1/s", "--tz", "Mars\x1b[31m"}, `--tz: unknown time zone Mars\x1b[31m (want`, true},
		{[]string{"replay", sampleLog, "--suggest", "--quantile", "0.99,0.999"}, `--quantile: "0.99,0.999" is not a share of keys in (0, 1] (want one, e.g. 0.99)`, true},
		{[]string{"replay", sampleLog, "--limit", "1/s", "--headroom", "-5%"}, "--headroom: only with --suggest", true},
		{[]string{"replay", sampleLog, "--suggest", "--headroom", "1001%"}, `--headroom: "1001%" is not a margin from 0% to 1000%`, true},
		{[]string{"replay", sampleLog, "--suggest", "--headroom", "lots"}, `--headroom: "lots" is not a margin`, true},
		{[]string{"replay", sampleLog, "--suggest", "--headroom", "5"}, "--headroom: 5 is ambiguous (want 5% or 0.05)", true},
		{[]string{"replay", sampleLog, "--limit", "1/s", "--headroom", "20%"}, "--headroom: only with --suggest", true},
		{[]string{"replay", sampleLog, "--limit", "1/s", "--quantile", "0"}, "--quantile: only with --suggest", true},
		{[]string{"replay", sampleLog, "--suggest", "--burst", "5"}, "--burst: with --suggest, the burst is what it suggests", true},
		{[]string{"replay", sampleLog, "--limit", "1/s", "--spread=soon"}, `--spread: "soon" is not a tick from 1ns to 1h`, true},
		{[]string{"replay", sampleLog, "--limit", "1/s", "--spread=2h"}, `--spread: "2h" is not a tick`, true},
		{[]string{"replay", sampleLog, "--limit", "1/s", "--spread", "1s"}, "--spread: give the tick after =, as --spread=1s", true},
		{[]string{"replay", sampleLog, "--limit", "1/s", "--spread=100ms"}, "--spread: 100ms is not the log's resolution 1s (want --spread alone, or --spread=1s)", false},
		{[]string{"replay", sampleLog, "--limit", "1/s", "--spread=1h"}, "--spread: 1h is not the log's resolution 1s (want --spread alone, or --spread=1s)", false},
		{[]string{"replay", sampleLog, "--limit", "1/s", "--servers", "0"}, "servers", true},
		{[]string{"replay", filepath.Join(dir, "none.log"), "--limit", "1/s"}, "none.log: no such file", true},
		{[]string{"replay", dir, "--limit", "1/s"}, "a directory", true},
		{[]string{"replay", bad, "--limit", "1/s"}, "bad.log:2: status", false},
		{[]string{"replay", sampleLog, "--limit", "1/s", "--only", "ip:10.0.0.1"}, `no request has the key "ip:10.0.0.1"`, false},
		{[]string{"replay", sampleLog, "--limit", "1/s", "--path", "/nowhere"}, "every request was filtered out", false},
	} {
		t.Run(strings.Join(tc.args[2:], " "), func(t *testing.T) {
			code, out, errOut := runArgs(tc.args...)
			if code != exitBadInput || !strings.Contains(errOut, tc.want) || out != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d saying %q", code, out, errOut, exitBadInput, tc.want)
			}
			if hint := strings.Contains(errOut, "--help"); hint != tc.hint {
				t.Errorf("usage hint %v, want %v: %q", hint, tc.hint, errOut)
			}
			if strings.Contains(errOut, "goroutine") {
				t.Errorf("a stack trace: %q", errOut)
			}
		})
	}
	code, out, errOut := runArgs("replay", bad, "--limit", "1/s", "--skip-bad")
	if code != exitOK || !strings.Contains(out, "1 bad line skipped, the first: "+bad+":2: status") {
		t.Fatalf("--skip-bad: exit %d, stderr %q, out:\n%s", code, errOut, out)
	}
}

func TestReplayGuessesTheFormat(t *testing.T) {
	for _, tc := range []struct{ name, file, want string }{
		{"jsonl by name", "x.jsonl", "jsonl"},
		{"csv by name, gzipped", "x.csv.gz", "csv"},
		{"alb by line", filepath.Join("..", "..", "trace", "testdata", "alb.log"), "alb"},
		{"jsonl by line", filepath.Join("..", "..", "trace", "testdata", "requests.jsonl"), "jsonl"},
		{"combined", sampleLog, "combined"},
		{"stdin", "-", "combined"},
	} {
		if got := trace.GuessFormat(tc.file).String(); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	code, out, errOut := runArgs("replay", filepath.Join("..", "..", "trace", "testdata", "alb.log"), "--limit", "1/s", "--format", "csv")
	if code != exitOK || !strings.HasPrefix(out, "run,key,") {
		t.Fatalf("an ALB log: exit %d, stderr %q", code, errOut)
	}
}

// A scenario file with a top-level trace runs like any other, its
// expectations checked (the sample's, beside its log).
func TestSimOfATraceScenario(t *testing.T) {
	file := filepath.Join("..", "..", "replay", "testdata", "access.yaml")
	code, out, errOut := runArgs("sim", file)
	if code != exitOK || !strings.Contains(out, "expect: 3 of 3 hold") || !strings.Contains(out, "ip:203.0.113.9") {
		t.Fatalf("exit %d, stderr %q, out:\n%s", code, errOut, out)
	}
	code, out, errOut = runArgs("check", file)
	if code != exitOK {
		t.Fatalf("check: exit %d, stderr %q, out:\n%s", code, errOut, out)
	}
}

// A log is replayed whatever its length unless --max-requests says less.
func TestReplayRequestBudget(t *testing.T) {
	code, _, errOut := runArgs("replay", sampleLog, "--limit", "100/m", "--max-requests", "1000")
	if code != exitTooBig || !strings.Contains(errOut, "--max-requests") {
		t.Fatalf("--max-requests 1000 on 2,119 requests: exit %d, stderr %q", code, errOut)
	}
	// Memory grows with keys: 6,000 of them do not fit in 16 MiB.
	var b strings.Builder
	for i := range 6000 {
		fmt.Fprintf(&b, "10.0.%d.%d - - [01/Mar/2026:12:00:00 +0000] \"GET / HTTP/1.1\" 200 1 \"-\" \"-\"\n", i/256, i%256)
	}
	many := filepath.Join(t.TempDir(), "many.log")
	if err := os.WriteFile(many, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = runArgs("replay", many, "--limit", "100/m", "--max-memory", "16MiB")
	if code != exitTooBig || !strings.Contains(errOut, "--max-memory") {
		t.Fatalf("6,000 keys in 16 MiB: exit %d, stderr %q", code, errOut)
	}
	if code, _, errOut = runArgs("replay", many, "--limit", "100/m"); code != exitOK {
		t.Fatalf("6,000 keys: exit %d, stderr %q", code, errOut)
	}
}

// A log with more keys than --max-memory can hold is refused as too big
// when the key past them is read, not after the whole log (the default
// --max-keys of a million could not fit the default --max-memory: the
// run was refused after 21s and 1 GB).
func TestReplayKeysBoundedByMemory(t *testing.T) {
	var b strings.Builder
	const keys = 6000
	for i := range keys {
		fmt.Fprintf(&b, "10.0.%d.%d - - [24/Nov/2026:10:00:00 +0000] \"GET / HTTP/1.1\" 200 1 \"-\" \"-\"\n", i/250, i%250)
	}
	path := filepath.Join(t.TempDir(), "many.log")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	bound := sim.MaxClientsIn(16 << 20)
	if bound >= keys {
		t.Fatalf("16 MiB holds %d keys: the log needs more than that", bound)
	}
	// --reorder 0: each request is read as its line is, none held back.
	code, out, errOut := runArgs("replay", path, "--limit", "1/s", "--max-memory", "16MiB", "--reorder", "0")
	want := fmt.Sprintf("more than %s distinct keys (at line %s)", words.Thousands(bound), words.Thousands(bound+1))
	if code != exitTooBig || out != "" || !strings.Contains(errOut, want) || !strings.Contains(errOut, "raise --max-memory") {
		t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d saying %q and raise --max-memory", code, out, errOut, exitTooBig, want)
	}
	// The default --max-keys is what the default --max-memory holds.
	if code, _, errOut := runArgs("replay", path, "--limit", "1/s", "-q"); code != exitOK {
		t.Fatalf("3,000 keys at the defaults: exit %d, %s", code, errOut)
	}
}

// --tz puts the table's times in the zone given, the summary naming it;
// the JSON stays in UTC.
func TestReplayTimeZone(t *testing.T) {
	code, out, errOut := runArgs("replay", sampleLog, "--limit", "100/m", "--burst", "20", "--tz", "Europe/Paris", "--top", "2")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	// The sample is 10:00 to 10:09:59 UTC on 24 November: UTC+1 in Paris.
	for _, want := range []string{"2026-11-24 11:00:00 to 11:09:59 Europe/Paris", "11:02:"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	_, utc, _ := runArgs("replay", sampleLog, "--limit", "100/m", "--burst", "20", "--top", "2")
	if !strings.Contains(utc, "10:00:00 to 10:09:59 UTC") || strings.Contains(utc, "11:02:") {
		t.Errorf("the default is not UTC:\n%s", utc)
	}
	_, jsonParis, _ := runArgs("replay", sampleLog, "--limit", "100/m", "--tz", "Europe/Paris", "--format", "json")
	_, jsonUTC, _ := runArgs("replay", sampleLog, "--limit", "100/m", "--format", "json")
	if jsonParis != jsonUTC {
		t.Error("--tz changed the JSON")
	}
}

// --plot draws a replay in its log's clock, and --suggest's frontier;
// both to a real image, each algorithm family's frontier too. A GIF of a
// frontier is refused: it is a still.
func TestReplayPlots(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"timeline.png", []string{"--limit", "60/m", "--tz", "Europe/Paris"}},
		{"vs.svg", []string{"--limit", "60/m", "--vs", "burst=120"}},
		{"frontier.png", []string{"--suggest"}},
		{"frontier-window.svg", []string{"--suggest", "--algorithm", "sliding-window"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name)
			code, _, errOut := runArgs(append([]string{"replay", sampleLog, "--plot", path}, tc.args...)...)
			if code != exitOK {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			img, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if png := strings.HasSuffix(tc.name, ".png"); png && !bytes.HasPrefix(img, []byte("\x89PNG")) || !png && !bytes.Contains(img, []byte("<svg")) {
				t.Fatalf("%s is not an image: %.40q", tc.name, img)
			}
			if tc.name == "vs.svg" && !bytes.Contains(img, []byte("time (UTC)")) {
				t.Error("the --vs plot's axis is not in the log's clock")
			}
		})
	}
	code, _, errOut := runArgs("replay", sampleLog, "--suggest", "--plot", filepath.Join(dir, "frontier.gif"))
	if code != exitBadInput || !strings.Contains(errOut, "--suggest draws a still frontier") {
		t.Fatalf("a GIF frontier: exit %d, %q", code, errOut)
	}
}

// The frontier plot draws and labels the bursts the table recommends,
// headroom included, not what the bulk needs before it.
func TestFrontierPlotDrawsTheRecommendedBurst(t *testing.T) {
	p, err := replayPlanOf(t, sampleLog, "--suggest", "--headroom", "50%")
	if err != nil {
		t.Fatal(err)
	}
	log, err := replay.Scan(context.Background(), p.src, replay.ScanOptions{Profile: p.profile})
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	f, err := log.Frontier(context.Background(), log.Scenario(p.limit, nil), *p.suggest, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := frontierPlot(&replay.Report{Log: log, Frontier: f})
	if f.Recommended < 0 {
		t.Fatal("nothing recommended")
	}
	for i, row := range f.Rows {
		if got := int64(d.Points[i].Burst); got != row.Params.Burst {
			t.Errorf("%v: point at burst %d, the row's burst is %d (needs %d)", row.Params.Rate, got, row.Params.Burst, row.Need)
		}
	}
	rec := f.Rows[f.Recommended]
	if want := fmt.Sprintf("recommended %s, needs %d", replay.RowName(f, rec), rec.Need); !strings.Contains(d.Subtitle, want) {
		t.Errorf("subtitle %q, want %q in it", d.Subtitle, want)
	}
}

// replayPlanOf is the plan `ratelim replay args...` would run.
func replayPlanOf(t *testing.T, args ...string) (*replayPlan, error) {
	t.Helper()
	var opts *replayOptions
	cmd := newCmdReplay(streams{Out: io.Discard, ErrOut: io.Discard}, func(o *replayOptions) error { opts = o; return nil })
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	return planReplay(opts)
}

// --suggest --limit RATE without --burst shows the recommended row's
// replay, not the rate's count as a burst; with --burst, that limit's.
func TestReplaySuggestShowsTheRecommendedBurst(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--suggest", "--limit", "1/s"}, "  limit token-bucket 1/s burst 5, shared memory"},
		{[]string{"--suggest", "--limit", "1/s", "--burst", "3"}, "  limit token-bucket 1/s burst 3, shared memory"},
	} {
		code, out, errOut := runArgs(append([]string{"replay", sampleLog, "--top", "1"}, tc.args...)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d, %s", tc.args, code, errOut)
		}
		if head, _, _ := strings.Cut(out, "\n\n"); !strings.Contains(head, tc.want) {
			t.Errorf("%v: header\n%s\nwant %q", tc.args, head, tc.want)
		}
	}
}
