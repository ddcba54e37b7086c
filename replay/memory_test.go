package replay

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/trace"
	"github.com/ratelim/ratelim/trace/tracetest"
)

// A profiled scan counts each key's profile in the memory bound: a log
// whose keys a run within the bound holds is refused when profiled too,
// if their profiles do not fit beside them.
func TestScanCountsTheProfileInTheKeyBound(t *testing.T) {
	const keys = 400
	var recs []trace.Record
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for i := range keys {
		recs = append(recs, trace.Record{At: t0.Add(time.Duration(i) * time.Millisecond), Key: fmt.Sprintf("k%03d", i)})
	}
	path := writeLog(t, "keys.jsonl", recs)
	// The smallest bound a run of every key fits in.
	bound := int64(4 << 20)
	for sim.MaxClientsIn(bound) < keys {
		bound += 1 << 10
	}
	prof, err := trace.NewProfile(ProfileRates(nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := keysWithin(bound, prof); got >= keys {
		t.Fatalf("keysWithin(%d, profile) = %d, want fewer than the %d a run alone holds", bound, got, keys)
	}
	src := Source{Path: path, Trace: tracetest.Options(trace.JSONL)}
	l, err := Scan(context.Background(), src, ScanOptions{MaxMemory: bound})
	if err != nil {
		t.Fatalf("unprofiled: %v", err)
	}
	l.Close()
	if _, err := Scan(context.Background(), src, ScanOptions{MaxMemory: bound, Profile: prof}); !sim.IsTooBig(err) {
		t.Fatalf("profiled: %v, want the keys refused for memory", err)
	}
}
