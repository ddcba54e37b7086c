package plots

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"

	"github.com/ratelim/ratelim/sim"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// goldenResult is a small split-brain run written out by hand, so the
// golden figure changes only when the drawing does, not when the
// simulator does: two clients on one key, six 1 s steps, a partition
// from 2 s to 4 s during which both copies of the store admit.
func goldenResult() *sim.Result {
	r := &sim.Result{
		Schema: sim.Schema, Scenario: "golden", Algorithm: "token-bucket", Topology: "split-brain",
		Store: "memory", Servers: 2, Seed: 7, DurationS: 6, StepS: 1,
		Limit:    sim.LimitResult{RatePerS: 10, Burst: 10, Key: "auto"},
		Balancer: "round-robin", OnError: "fail-open", Clock: "server", RTTMs: 0.5,
		Clients: []sim.ClientResult{
			{Name: "web", Key: "shop", Counts: sim.Counts{Sent: 120, Allowed: 52, Rejected: 68}, MaxAllowed1s: 14, IdealAllowed: 40, LatencyMs: sim.LatencySummary{P50: 0.5, P99: 0.5}},
			{Name: "mobile", Key: "shop", Counts: sim.Counts{Sent: 30, Allowed: 18, Rejected: 12, FailedOpen: 4}, Retries: 6, MaxAllowed1s: 6, IdealAllowed: 20, LatencyMs: sim.LatencySummary{P50: 0.5, P99: 3}},
		},
		Keys: []sim.KeyResult{{Key: "shop", Clients: 2, Counts: sim.Counts{Sent: 150, Allowed: 70, Rejected: 80, FailedOpen: 4}, MaxAllowed1s: 20, IdealAllowed: 60}},
		Faults: []sim.FaultSpan{
			{Kind: "partition", StartS: 2, EndS: 4, Detail: "groups 0 | 1"},
			{Kind: "outage", StartS: 4.5, EndS: 5},
		},
	}
	web := []int64{20, 20, 20, 20, 20, 20}
	webOK := []int64{10, 6, 12, 12, 6, 6}
	mob := []int64{5, 5, 5, 5, 5, 5}
	mobOK := []int64{3, 2, 4, 4, 4, 1}
	for i := range 6 {
		ts := float64(i)
		r.Timeline = append(r.Timeline,
			sim.TimelineRow{TS: ts, Client: "web", Counts: sim.Counts{Sent: web[i], Allowed: webOK[i], Rejected: web[i] - webOK[i]}, P50Ms: 0.5, P99Ms: 0.5},
			sim.TimelineRow{TS: ts, Client: "mobile", Counts: sim.Counts{Sent: mob[i], Allowed: mobOK[i], Rejected: mob[i] - mobOK[i]}, P50Ms: 0.5, P99Ms: 0.5})
	}
	r.Timeline[9].FailedOpen, r.Timeline[9].Retries, r.Timeline[9].P99Ms = 4, 6, 3 // mobile at 4 s
	r.State = []sim.StateSeries{
		{Key: "shop", Copy: "primary", TS: []float64{1, 2, 3, 4, 5, 6}, Remaining: []int64{0, 2, 1, 3, 0, 0}},
		{Key: "shop", Copy: "replica", TS: []float64{1, 2, 3, 4, 5, 6}, Remaining: []int64{0, 2, 5, 7, -1, 0}},
	}
	return r
}

func TestTimelineGolden(t *testing.T) {
	var b bytes.Buffer
	if err := Timeline(&b, goldenResult(), Options{Format: "svg", Width: 8 * vg.Inch}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "timeline.golden.svg")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./plots -run Golden -update to create it)", err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		got, wantLines := strings.Split(b.String(), "\n"), strings.Split(string(want), "\n")
		for i := range min(len(got), len(wantLines)) {
			if got[i] != wantLines[i] {
				t.Fatalf("%s differs at line %d:\n got %s\nwant %s\n(go test ./plots -run Golden -update rewrites it)", path, i+1, got[i], wantLines[i])
			}
		}
		t.Fatalf("%s: %d lines, want %d (go test ./plots -run Golden -update rewrites it)", path, len(got), len(wantLines))
	}

	// The same input draws the same bytes, and a PNG of it too.
	var again bytes.Buffer
	if err := Timeline(&again, goldenResult(), Options{Format: "svg", Width: 8 * vg.Inch}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Bytes(), b.Bytes()) {
		t.Fatal("two draws of one result differ")
	}
	var p bytes.Buffer
	if err := Timeline(&p, goldenResult(), Options{}); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, "golden", p.Bytes(), 0, 0)
	if dir := reviewDir(t); dir != "" {
		os.WriteFile(filepath.Join(dir, "golden.png"), p.Bytes(), 0o644)
	}
}
