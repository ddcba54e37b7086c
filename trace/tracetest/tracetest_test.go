package tracetest

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/ratelim/ratelim/trace"
)

// TestNewReaderIsWrite checks that the generated log is the written one,
// whatever the size of the reads.
func TestNewReaderIsWrite(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	rec := func(i int) trace.Record {
		return trace.Record{At: t0.Add(time.Duration(i) * 1500 * time.Microsecond), Key: []string{"a", "", "b"}[i%3], Method: "GET", Path: "/x", Status: 200}
	}
	recs := make([]trace.Record, 5000)
	for i := range recs {
		recs[i] = rec(i)
	}
	for _, f := range []trace.Format{trace.Combined, trace.JSONL, trace.CSV, trace.ALB} {
		var want bytes.Buffer
		if err := Write(&want, f, recs); err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(io.LimitReader(NewReader(f, len(recs), rec), 1<<30))
		if err != nil || !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%v: NewReader gave %d bytes (%v), Write %d", f, len(got), err, want.Len())
		}
	}
	if err := Write(io.Discard, trace.CSV, []trace.Record{{Key: "a,b"}}); err == nil {
		t.Error("Write took a key with a comma")
	}
}
