package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/trace"
	"github.com/ratelim/ratelim/trace/tracetest"
)

var logStart = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// randomLog writes a JSONL log of n requests at random instants over
// about span, in time order, half of them from key-0 and the rest from
// key-0 … key-(k−1), and returns its path and the requests.
func randomLog(t *testing.T, seed uint64, n, keys int, span time.Duration) (string, []trace.Record) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	recs := make([]trace.Record, n)
	at := logStart
	mean := span / time.Duration(n)
	for i := range recs {
		// Bursts of a key and quiet spells, so that limits bite.
		if rng.IntN(4) == 0 {
			at = at.Add(time.Duration(rng.Int64N(int64(4 * mean))))
		}
		recs[i] = trace.Record{At: at.Truncate(time.Microsecond), Key: fmt.Sprintf("key-%d", rng.IntN(keys)*rng.IntN(2)), Method: "GET", Path: "/api", Status: 200}
	}
	return writeLog(t, "log.jsonl", recs), recs
}

// writeLog writes recs as a JSONL log named name in a new directory and
// returns its path.
func writeLog(t *testing.T, name string, recs []trace.Record) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	writeLogAt(t, path, recs)
	return path
}

// fataler is what the log helpers need of a test: a *testing.T or, in a
// property, a *rapid.T.
type fataler interface {
	Helper()
	Fatal(args ...any)
}

// writeLogAt writes recs as a JSONL log at path.
func writeLogAt(t fataler, path string, recs []trace.Record) {
	t.Helper()
	var b bytes.Buffer
	if err := tracetest.Write(&b, trace.JSONL, recs); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// scan scans the JSONL log at path, with peaks measured for limit, and
// closes it when t ends.
func scan(t *testing.T, path string, limit sim.Limit) *Log {
	t.Helper()
	l := scanOpen(t, path, limit)
	t.Cleanup(func() { l.Close() })
	return l
}

// scanOpen is scan for a caller who closes the log.
func scanOpen(t fataler, path string, limit sim.Limit) *Log {
	t.Helper()
	p := limit.Params
	peaks, err := trace.NewPeaks(PeakWindow(p), p.Rate.N, p.Rate.Per)
	if err != nil {
		t.Fatal(err)
	}
	l, err := Scan(context.Background(), Source{Path: path, Trace: tracetest.Options(trace.JSONL)}, ScanOptions{Peaks: peaks})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func replayRun(t *testing.T, l *Log, sc sim.Scenario) *Run {
	t.Helper()
	run, err := l.Replay(context.Background(), "a", sc, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// direct is what one exact limiter does to each key of recs, stepped
// here by hand: the figures a replay on one atomic store must give.
func direct(t *testing.T, alg algorithms.Algorithm, recs []trace.Record) map[string]KeyReport {
	t.Helper()
	states := map[string]algorithms.State{}
	out := map[string]KeyReport{}
	minutes := map[string]map[int64]int64{}
	for _, r := range recs {
		if r.Key == "" {
			continue
		}
		st, d := alg.Step(states[r.Key], algorithms.At(r.At.Sub(logStart)), 1)
		states[r.Key] = st
		k := out[r.Key]
		k.Key = r.Key
		k.Requests++
		if !d.Allowed {
			if k.Rejected == 0 {
				k.FirstRejected = r.At
			}
			k.Rejected++
			if minutes[r.Key] == nil {
				minutes[r.Key] = map[int64]int64{}
			}
			m := r.At.Unix() / 60
			minutes[r.Key][m]++
			if c := minutes[r.Key][m]; c > k.WorstMinuteRejected || (c == k.WorstMinuteRejected && m*60 < k.WorstMinute.Unix()) {
				k.WorstMinute, k.WorstMinuteRejected = time.Unix(m*60, 0).UTC(), c
			}
		}
		out[r.Key] = k
	}
	return out
}

// A replay on one atomic store refuses, per key, exactly the requests one
// limiter stepped by hand over the log refuses, and dates the first and
// the worst minute as it does.
func TestReplayIsTheLimiterOverTheLog(t *testing.T) {
	for _, tc := range []struct {
		algorithm string
		params    algorithms.Params
	}{
		{"token-bucket", algorithms.Params{Rate: algorithms.Rate{N: 30, Per: time.Minute}, Burst: 5}},
		{"sliding-log", algorithms.Params{Rate: algorithms.Rate{N: 40, Per: time.Minute}, Window: time.Minute}},
		{"fixed-window", algorithms.Params{Rate: algorithms.Rate{N: 3, Per: time.Second}, Window: time.Second}},
		{"gcra", algorithms.Params{Rate: algorithms.Rate{N: 2, Per: time.Second}, Burst: 4}},
	} {
		t.Run(tc.algorithm, func(t *testing.T) {
			path, recs := randomLog(t, 7, 6000, 9, 20*time.Minute)
			limit := sim.Limit{Algorithm: tc.algorithm, Params: tc.params}
			l := scan(t, path, limit)
			run := replayRun(t, l, l.Scenario(limit, nil))
			alg, err := algorithms.New(tc.algorithm, tc.params)
			if err != nil {
				t.Fatal(err)
			}
			want := direct(t, alg, recs)
			if len(run.Keys) != len(want) {
				t.Fatalf("%d keys replayed, want %d", len(run.Keys), len(want))
			}
			var rejected int64
			for _, got := range run.Keys {
				w := want[got.Key]
				if got.Requests != w.Requests || got.Rejected != w.Rejected || !got.FirstRejected.Equal(w.FirstRejected) ||
					!got.WorstMinute.Equal(w.WorstMinute) || got.WorstMinuteRejected != w.WorstMinuteRejected {
					t.Errorf("%s: replay %+v\nwant %+v", got.Key, got, w)
				}
				rejected += got.Rejected
			}
			if rejected == 0 || rejected == int64(len(recs)) {
				t.Fatalf("%d of %d rejected: the limit tests nothing", rejected, len(recs))
			}
		})
	}
}

// keyedLog writes a log whose keys' peaks are known: key k sends three
// bursts of k+1 requests (each at one instant), 5 minutes apart, so its
// most in any 1s window is k+1, and at 1/s, which refills a whole bucket
// between bursts, the smallest burst that admits them all is k+1.
func keyedLog(t *testing.T, keys int) string {
	t.Helper()
	var recs []trace.Record
	for s := 0; s < 900; s += 300 {
		for k := range keys {
			at := logStart.Add(time.Duration(s)*time.Second + time.Duration(k)*time.Millisecond)
			for range k + 1 {
				recs = append(recs, trace.Record{At: at, Key: fmt.Sprintf("k%03d", k), Method: "GET", Path: "/", Status: 200})
			}
		}
	}
	return writeLog(t, "keyed.jsonl", recs)
}

func writeAll(t *testing.T, rep *Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteTable(&b, rep, TableOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&b, rep); err != nil {
		t.Fatal(err)
	}
	if err := WriteCSV(&b, rep); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func report(t *testing.T, src Source, limit sim.Limit, redact func(string) string) string {
	t.Helper()
	p := limit.Params
	peaks, _ := trace.NewPeaks(PeakWindow(p), p.Rate.N, p.Rate.Per)
	l, err := Scan(context.Background(), src, ScanOptions{Peaks: peaks})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	run := replayRun(t, l, l.Scenario(limit, redact))
	return writeAll(t, &Report{Log: l, Runs: []*Run{run}})
}

var sampleLimit = sim.Limit{Algorithm: "token-bucket", Params: algorithms.Params{Rate: algorithms.Rate{N: 100, Per: time.Minute}, Burst: 20}}

func sampleSource() Source {
	k, _ := trace.ParseKey(trace.Combined, "ip")
	return Source{Path: filepath.Join("testdata", "access.log"), Trace: trace.Options{Format: trace.Combined, Key: k}}
}

// The same log and limit give the same bytes; standard input gives what
// the file does (its copy removed at Close).
func TestReplayIsDeterministicAndReadsStdin(t *testing.T) {
	src := sampleSource()
	a, b := report(t, src, sampleLimit, nil), report(t, src, sampleLimit, nil)
	if a != b {
		t.Fatal("two replays of one log differ")
	}
	data, err := os.ReadFile(src.Path)
	if err != nil {
		t.Fatal(err)
	}
	stdin := src
	stdin.Path = "-"
	stdin.Trace.Stdin = bytes.NewReader(data)
	got := report(t, stdin, sampleLimit, nil)
	if want := strings.ReplaceAll(a, src.Path, "stdin"); got != want {
		t.Fatalf("from stdin:\n%s\nwant\n%s", got, want)
	}
	stdin.Trace.Stdin = bytes.NewReader(data)
	l, err := Scan(context.Background(), stdin, ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
}

// Standard input's copy has no name from the start (nothing is left
// behind when the run is killed) and is bounded: a longer input is
// refused, not copied on until the disk is full.
func TestStdinCopyUnlinkedAndBounded(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	src := Source{Path: "-", Trace: trace.Options{Format: trace.Combined}}
	src.Trace.Stdin = strings.NewReader(`10.0.0.1 - - [01/Mar/2026:00:00:00 +0000] "GET / HTTP/1.1" 200 1 "-" "-"` + "\n")
	l, err := Scan(context.Background(), src, ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("while the log is open, %s holds %v (want nothing: the copy unlinked)", tmp, left)
	}
	if _, err := l.Replay(context.Background(), "a", l.Scenario(sampleLimit, nil), sim.Options{}); err != nil {
		t.Fatalf("a run reading the copy again: %v", err)
	}
	l.Close()

	// Blank lines forever: refused at the bound.
	src.Trace.Stdin = &blankLines{}
	_, err = Scan(context.Background(), src, ScanOptions{MaxStdin: 1 << 20})
	var tl *StdinTooLongError
	if !errors.As(err, &tl) || tl.Max != 1<<20 {
		t.Fatalf("Scan of endless stdin = %v, want a StdinTooLongError at 1 MiB", err)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("after the refusal, %s holds %v (want nothing)", tmp, left)
	}
}

// blankLines is an endless input of newlines.
type blankLines struct{}

func (blankLines) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '\n'
	}
	return len(p), nil
}

// Redacted, no key appears in any output, and one salt names a key the
// same way every time.
func TestRedactHidesEveryKey(t *testing.T) {
	hash := func(salt string) func(string) string {
		return func(k string) string {
			return "h-" + fmt.Sprint(len(salt)) + "-" + fmt.Sprint(len(k)) + strings.Map(func(r rune) rune { return 'a' + (r*7+rune(len(salt)))%26 }, k)
		}
	}
	src := sampleSource()
	out := report(t, src, sampleLimit, hash("salt"))
	for _, key := range []string{"203.0.113.9", "198.51.100.23", "2001:db8:7", "192.0.2.1"} {
		if strings.Contains(out, key) {
			t.Errorf("a redacted report names %s", key)
		}
	}
	if out != report(t, src, sampleLimit, hash("salt")) {
		t.Error("one salt, two reports")
	}
}

// Played faster, a log's requests come closer together, and a report
// still dates them in the log's time.
func TestSpeedCompressesTimeAndReportsLogTime(t *testing.T) {
	src := sampleSource()
	l, err := Scan(context.Background(), src, ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fast := src
	fast.Speed = 6
	lf, err := Scan(context.Background(), fast, ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := lf.Span(), (l.Span()-time.Microsecond)/6+time.Microsecond; got != want {
		t.Errorf("span at 6×: %s, want %s", got, want)
	}
	run := replayRun(t, lf, lf.Scenario(sampleLimit, nil))
	slow := replayRun(t, l, l.Scenario(sampleLimit, nil))
	if run.Totals.Rejected <= slow.Totals.Rejected {
		t.Errorf("at 6× %d rejected, at 1× %d: six times the rate should be refused more", run.Totals.Rejected, slow.Totals.Rejected)
	}
	first := run.Keys[0].FirstRejected
	if first.Before(lf.First) || first.After(lf.Last) {
		t.Errorf("first refusal at %s, outside the log's %s–%s", first, lf.First, lf.Last)
	}
}

func TestScanErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := `192.0.2.1 - - [01/Mar/2026:12:00:00 +0000] "GET / HTTP/1.1" 200 1 "-" "-"` + "\n"
	bad := `192.0.2.1 - - [01/Mar/2026:12:00:01 +0000] "GET / HTTP/1.1" OK 1 "-" "-"` + "\n"
	k, _ := trace.ParseKey(trace.Combined, "ip")
	opts := trace.Options{Format: trace.Combined, Key: k}
	for _, tc := range []struct {
		name, text string
		skip       bool
		only       string
		want       string
	}{
		{"bad line", good + bad + good, false, "", "bad.log:2: status"},
		{"empty", "", false, "", "no requests in it"},
		{"only bad", bad + bad, true, "", "bad.log:1: status"},
		{"no such key", good, false, "ip:192.0.2.2", `no request has the key "ip:192.0.2.2"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := opts
			o.SkipBad = tc.skip
			_, err := Scan(context.Background(), Source{Path: write("bad.log", tc.text), Trace: o, Only: tc.only}, ScanOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one saying %q", err, tc.want)
			}
		})
	}
	o := opts
	o.SkipBad = true
	l, err := Scan(context.Background(), Source{Path: write("skip.log", good+bad+good), Trace: o}, ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l.Stats.Bad != 1 || l.Requests != 2 || len(l.Skipped) != 1 || l.Skipped[0].Line != 2 {
		t.Fatalf("skip-bad: %d bad, %d requests, skipped %v", l.Stats.Bad, l.Requests, l.Skipped)
	}
	if _, err := Scan(context.Background(), Source{Path: write("many.log", good+strings.Replace(good, "192.0.2.1", "192.0.2.2", 1)), Trace: opts}, ScanOptions{MaxKeys: 1}); err == nil || !strings.Contains(err.Error(), "more than 1 distinct keys") {
		t.Fatalf("max keys: %v", err)
	}
	if _, err := Scan(context.Background(), Source{Path: write("x.log", good), Trace: opts, Speed: -1}, ScanOptions{}); err == nil {
		t.Fatal("a negative speed was taken")
	}
	// Speeds so slow that times saturate (and pile up at the run's end,
	// to be refused together) or so fast they are no speed: refused.
	for _, speed := range []float64{1e-8, 1e-300, math.SmallestNonzeroFloat64, 2e9, math.Inf(1), math.NaN()} {
		if _, err := Scan(context.Background(), Source{Path: write("x.log", good), Trace: opts, Speed: speed}, ScanOptions{}); err == nil || !strings.Contains(err.Error(), "speed: ") || !strings.Contains(err.Error(), "out of range (want 0.001 to 1e+09") {
			t.Errorf("speed %g: %v (want it out of range)", speed, err)
		}
	}
	// A day of log at the slowest speed is 1,000 days of run: refused.
	day := good + strings.Replace(good, "01/Mar/2026:12:00:00", "02/Mar/2026:12:00:00", 1)
	if _, err := Scan(context.Background(), Source{Path: write("day.log", day), Trace: opts, Speed: MinSpeed}, ScanOptions{}); err == nil || !strings.Contains(err.Error(), "longer than a run may be") {
		t.Errorf("a day at speed %g: %v (want too long a run)", MinSpeed, err)
	}
	if _, err := Scan(context.Background(), Source{Path: write("day.log", day), Trace: opts, Speed: 0.01}, ScanOptions{}); err != nil {
		t.Errorf("a day at speed 0.01 (100 days): %v", err)
	}
}

func TestScanStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	src := Source{Path: "endless.log", Trace: tracetest.Options(trace.Combined), Open: func() (io.Reader, error) {
		return tracetest.NewReader(trace.Combined, 1<<40, func(i int) trace.Record {
			return trace.Record{At: logStart.Add(time.Duration(i) * time.Millisecond), Key: "k", Method: "GET", Path: "/", Status: 200}
		}), nil
	}}
	if _, err := Scan(ctx, src, ScanOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// A named pipe is read once, as standard input is: its copy is what each
// run reads (a second open of the pipe waited for a writer for ever).
func TestScanOfAPipe(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "access.log")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(sampleSource().Path)
	if err != nil {
		t.Fatal(err)
	}
	go func() { // one writer, once
		if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			w.Write(data)
			w.Close()
		}
	}()
	src := sampleSource()
	want := report(t, src, sampleLimit, nil)
	src.Path = fifo
	done := make(chan string, 1)
	go func() { done <- report(t, src, sampleLimit, nil) }()
	select {
	case got := <-done:
		if got != strings.ReplaceAll(want, sampleSource().Path, fifo) {
			t.Fatalf("from a pipe:\n%s\nwant\n%s", got, want)
		}
	case <-time.After(30 * time.Second):
		if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			w.Close() // let the reader's open go on, for the test to end
		}
		t.Fatal("no report from the pipe in 30s: its run read it again")
	}
}
