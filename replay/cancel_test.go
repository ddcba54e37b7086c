package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/trace"
	"github.com/ratelim/ratelim/trace/tracetest"
)

// --spread alone reads the log twice; cancelling during the second
// reading stops it, though the lines it reads are filtered out and make
// no request (the scan's own check counts requests).
func TestSpreadSecondReadingStopsOnCancel(t *testing.T) {
	var recs []trace.Record
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for i := range 200_000 {
		path := "/skip"
		if i == 0 {
			path = "/keep"
		}
		recs = append(recs, trace.Record{At: t0.Add(time.Duration(i) * time.Second), Key: fmt.Sprint("k", i%50), Method: "GET", Path: path, Status: 200})
	}
	var b bytes.Buffer
	if err := tracetest.Write(&b, trace.JSONL, recs); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opens := 0
	topts := tracetest.Options(trace.JSONL)
	topts.PathPrefix = "/keep"
	src := Source{Path: "filtered.jsonl", Trace: topts, SpreadAuto: true, Open: func() (io.Reader, error) {
		opens++
		if opens == 2 {
			cancel() // as Ctrl-C would, once the second reading starts
		}
		return bytes.NewReader(b.Bytes()), nil
	}}
	l, err := Scan(ctx, src, ScanOptions{})
	if err == nil {
		l.Close()
	}
	if opens != 2 || !errors.Is(err, context.Canceled) {
		t.Fatalf("%d readings, error %v; want the second cancelled", opens, err)
	}
}

// Without peaks measured (--suggest without --limit), the CSV leaves peak
// and burst_needed empty and the JSON has no peak window, rather than
// zeros that read as measured.
func TestUnmeasuredPeaksAreLeftOut(t *testing.T) {
	path := keyedLog(t, 3)
	l, err := Scan(context.Background(), Source{Path: path, Trace: tracetest.Options(trace.JSONL)}, ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	limit := sim.Limit{Algorithm: "token-bucket", Params: algorithms.Params{Rate: algorithms.Rate{N: 1, Per: time.Second}, Burst: 1}}
	rep := &Report{Log: l, Runs: []*Run{replayRun(t, l, l.Scenario(limit, nil))}}
	var csvOut, jsonOut bytes.Buffer
	if err := WriteCSV(&csvOut, rep); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(csvOut.String()), "\n")[1:] {
		if !strings.HasSuffix(line, ",,") {
			t.Errorf("a row with peak and burst_needed: %q", line)
		}
	}
	if err := WriteJSON(&jsonOut, rep); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(jsonOut.String(), "peak_window_s") || !strings.Contains(jsonOut.String(), `"schema": "ratelim.replay/v2"`) {
		t.Errorf("JSON:\n%s", jsonOut.String())
	}
}
