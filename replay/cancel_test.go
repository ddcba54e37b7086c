package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

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
