package replay

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/trace"
	"github.com/ratelim/ratelim/trace/tracetest"
)

// pacedLogs writes a key paced at 5/s for a minute, 300 requests: as
// nginx's $time_local logs it (whole seconds, five a second at once) and
// as it was (200 ms apart, a JSONL log in milliseconds).
func pacedLogs(t *testing.T) (whole, exact string) {
	t.Helper()
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	var w, e []trace.Record
	for i := range 300 {
		at := start.Add(time.Duration(i) * 200 * time.Millisecond)
		rec := trace.Record{At: at, Key: "192.0.2.5", Method: "GET", Path: "/p", Status: 200}
		e = append(e, rec)
		rec.At = at.Truncate(time.Second)
		w = append(w, rec)
	}
	dir := t.TempDir()
	whole, exact = dir+"/paced.log", dir+"/paced.jsonl"
	var b bytes.Buffer
	if err := tracetest.Write(&b, trace.Combined, w); err != nil {
		t.Fatal(err)
	}
	writeFile(t, whole, b.Bytes())
	writeLogAt(t, exact, e)
	return whole, exact
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// rejectedOf replays the log src through 2/s with burst and returns what
// it refused, and the log's report header.
func rejectedOf(t *testing.T, src Source, burst int64) (int64, string) {
	t.Helper()
	limit := sim.Limit{Algorithm: "token-bucket", Params: algorithms.Params{Rate: algorithms.Rate{N: 2, Per: time.Second}, Burst: burst}}
	l, err := Scan(context.Background(), src, ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	run := replayRun(t, l, l.Scenario(limit, nil))
	var out bytes.Buffer
	if err := WriteTable(&out, &Report{Log: l, Runs: []*Run{run}}, TableOptions{}); err != nil {
		t.Fatal(err)
	}
	head, _, _ := strings.Cut(out.String(), "\n\n")
	return run.Totals.Rejected, head
}

// --spread on a whole-second log gives what the log at its true times
// gives, to a request: a key paced at 5/s (200 ms apart) against 2/s is
// refused 200 of 300 at burst 1 (one admitted per 600 ms: the token is
// back at +500 ms, the next request comes at +600 ms) and 179 at burst 2,
// where the whole-second log, replayed as logged, is refused 240 and 180.
// The header says the times are whole seconds, and warns of it unless
// they are spread; the same seed spreads the same way.
func TestSpreadMatchesThePacedLog(t *testing.T) {
	whole, exact := pacedLogs(t)
	combined, jsonl := tracetest.Options(trace.Combined), tracetest.Options(trace.JSONL)
	spread := combined
	spread.SpreadSeed = 1
	for _, burst := range []int64{1, 2} {
		want, head := rejectedOf(t, Source{Path: exact, Trace: jsonl}, burst)
		if strings.Contains(head, "warning") || !strings.Contains(head, "millisecond times") {
			t.Errorf("the millisecond log's header:\n%s", head)
		}
		asLogged, head := rejectedOf(t, Source{Path: whole, Trace: combined}, burst)
		if !strings.Contains(head, "whole-second times") || !strings.Contains(head, "coarser than 2/s refills (500ms)") || !strings.Contains(head, "--spread") {
			t.Errorf("the whole-second log's header does not warn:\n%s", head)
		}
		got, head := rejectedOf(t, Source{Path: whole, Trace: spread, SpreadAuto: true}, burst)
		if strings.Contains(head, "warning") || !strings.Contains(head, "whole-second times spread over each 1s") {
			t.Errorf("the spread log's header:\n%s", head)
		}
		again, _ := rejectedOf(t, Source{Path: whole, Trace: spread, SpreadAuto: true}, burst)
		t.Logf("burst %d: paced log %d of 300 rejected; whole seconds as logged %d; spread %d", burst, want, asLogged, got)
		if d := got - want; d < -1 || d > 1 {
			t.Errorf("burst %d: spread refused %d, the paced log %d (want within 1)", burst, got, want)
		}
		if again != got {
			t.Errorf("burst %d: the same seed refused %d, then %d", burst, got, again)
		}
		explicit := spread
		explicit.Spread = time.Second
		if n, _ := rejectedOf(t, Source{Path: whole, Trace: explicit}, burst); n != got {
			t.Errorf("burst %d: --spread=1s refused %d, --spread alone %d", burst, n, got)
		}
	}
	// The figures the differential stands on, worked out by hand above.
	for burst, want := range map[int64]int64{1: 200, 2: 179} {
		if n, _ := rejectedOf(t, Source{Path: exact, Trace: jsonl}, burst); n != want {
			t.Errorf("burst %d: the paced log refused %d, want %d", burst, n, want)
		}
	}
	// A tick other than the log's is refused, finer or coarser.
	for _, tick := range []time.Duration{100 * time.Millisecond, 2 * time.Second, time.Hour} {
		other := combined
		other.Spread = tick
		_, err := Scan(context.Background(), Source{Path: whole, Trace: other}, ScanOptions{})
		var te *SpreadTickError
		if !errors.As(err, &te) || te.Tick != tick || te.Resolution != time.Second {
			t.Errorf("a %v spread of a whole-second log: %v", tick, err)
		}
	}
}

// --spread alone leaves a log whose times are already finer than the
// limit refills as logged, and says so: the paced log in milliseconds,
// against 2/s (every 500ms), is refused what it is refused unspread.
func TestSpreadLeavesAFineLogAlone(t *testing.T) {
	_, exact := pacedLogs(t)
	jsonl := tracetest.Options(trace.JSONL)
	want, _ := rejectedOf(t, Source{Path: exact, Trace: jsonl}, 1)
	spread := jsonl
	spread.SpreadSeed = 1
	got, head := rejectedOf(t, Source{Path: exact, Trace: spread, SpreadAuto: true, SpreadFinerThan: 500 * time.Millisecond}, 1)
	if got != want || !strings.Contains(head, "not spread: its millisecond times are finer than the limit refills") {
		t.Errorf("spread alone on a millisecond log: %d refused, as logged %d; header:\n%s", got, want, head)
	}
}
