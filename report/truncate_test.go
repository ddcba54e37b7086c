package report

import (
	"context"
	"reflect"
	"testing"

	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/sim"
)

// tiny is a hand-made result: two clients on one key, three 1 s steps, a
// fault from 1.5 s to 2.5 s, state sampled at each step's end.
func tiny() *sim.Result {
	return &sim.Result{
		Scenario: "tiny", DurationS: 3, StepS: 1, Requests: 60,
		Clients: []sim.ClientResult{
			{Name: "a", Key: "k", Counts: sim.Counts{Sent: 30, Allowed: 12, Rejected: 18, FailedOpen: 2}, Retries: 3, RetriesAllowed: 1,
				MaxAllowed1s: 5, IdealAllowed: 11, LatencyMs: sim.LatencySummary{P50: 1, P99: 2}},
			{Name: "b", Key: "k", Counts: sim.Counts{Sent: 30, Allowed: 30}},
		},
		Keys: []sim.KeyResult{{Key: "k", Clients: 2, Counts: sim.Counts{Sent: 60, Allowed: 42, Rejected: 18, FailedOpen: 2}, MaxAllowed1s: 14}},
		Timeline: []sim.TimelineRow{
			{TS: 0, Client: "a", Counts: sim.Counts{Sent: 10, Allowed: 5, Rejected: 5}},
			{TS: 0, Client: "b", Counts: sim.Counts{Sent: 10, Allowed: 10}},
			{TS: 1, Client: "a", Counts: sim.Counts{Sent: 10, Allowed: 4, Rejected: 6, FailedOpen: 2}, Retries: 1, RetriesAllowed: 1},
			{TS: 1, Client: "b", Counts: sim.Counts{Sent: 10, Allowed: 10}},
			{TS: 2, Client: "a", Counts: sim.Counts{Sent: 10, Allowed: 3, Rejected: 7}, Retries: 2},
			{TS: 2, Client: "b", Counts: sim.Counts{Sent: 10, Allowed: 10}},
		},
		State:        []sim.StateSeries{{Key: "k", Copy: "shared", TS: []float64{1, 2, 3}, Remaining: []int64{4, -1, 0}}},
		Faults:       []sim.FaultSpan{{Kind: "outage", StartS: 1.5, EndS: 2.5}},
		Events:       []sim.LogEntry{{TS: 0.4, Text: "a: first rejection"}, {TS: 1.5, Text: "outage begins"}, {TS: 2.5, Text: "outage ends"}},
		Expectations: []sim.ExpectationResult{{Text: "b rejected <= 0", OK: true}},
		Findings:     []sim.Finding{{Kind: "isolated", Text: "a lost 60%"}},
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		name                  string
		at                    float64
		duration              float64
		rows, samples, events int
		faults                []sim.FaultSpan
		a, b                  sim.ClientResult
		key                   sim.KeyResult
	}{
		{name: "before the first step ends", at: 0.9, duration: 0,
			faults: nil, a: sim.ClientResult{Name: "a", Key: "k"}, b: sim.ClientResult{Name: "b", Key: "k"},
			key: sim.KeyResult{Key: "k", Clients: 2}},
		{name: "after one step", at: 1, duration: 1, rows: 2, samples: 1, events: 1,
			a:   sim.ClientResult{Name: "a", Key: "k", Counts: sim.Counts{Sent: 10, Allowed: 5, Rejected: 5}},
			b:   sim.ClientResult{Name: "b", Key: "k", Counts: sim.Counts{Sent: 10, Allowed: 10}},
			key: sim.KeyResult{Key: "k", Clients: 2, Counts: sim.Counts{Sent: 20, Allowed: 15, Rejected: 5}}},
		{name: "mid-step rounds down, a running fault ends at the cut", at: 2.7, duration: 2, rows: 4, samples: 2, events: 2,
			faults: []sim.FaultSpan{{Kind: "outage", StartS: 1.5, EndS: 2}},
			a:      sim.ClientResult{Name: "a", Key: "k", Counts: sim.Counts{Sent: 20, Allowed: 9, Rejected: 11, FailedOpen: 2}, Retries: 1, RetriesAllowed: 1},
			b:      sim.ClientResult{Name: "b", Key: "k", Counts: sim.Counts{Sent: 20, Allowed: 20}},
			key:    sim.KeyResult{Key: "k", Clients: 2, Counts: sim.Counts{Sent: 40, Allowed: 29, Rejected: 11, FailedOpen: 2}}},
		{name: "negative is the start", at: -5, duration: 0,
			a: sim.ClientResult{Name: "a", Key: "k"}, b: sim.ClientResult{Name: "b", Key: "k"},
			key: sim.KeyResult{Key: "k", Clients: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tiny()
			got := Truncate(r, tt.at)
			if !reflect.DeepEqual(r, tiny()) {
				t.Fatal("Truncate modified its argument")
			}
			if got.DurationS != tt.duration {
				t.Errorf("DurationS = %g, want %g", got.DurationS, tt.duration)
			}
			if len(got.Timeline) != tt.rows {
				t.Errorf("%d timeline rows, want %d", len(got.Timeline), tt.rows)
			}
			if n := len(got.State[0].TS); n != tt.samples || len(got.State[0].Remaining) != tt.samples {
				t.Errorf("%d state samples, want %d", n, tt.samples)
			}
			if len(got.Events) != tt.events {
				t.Errorf("%d events, want %d", len(got.Events), tt.events)
			}
			if !reflect.DeepEqual(got.Faults, tt.faults) {
				t.Errorf("faults = %+v, want %+v", got.Faults, tt.faults)
			}
			if !reflect.DeepEqual(got.Clients, []sim.ClientResult{tt.a, tt.b}) {
				t.Errorf("clients =\n%+v\nwant\n%+v", got.Clients, []sim.ClientResult{tt.a, tt.b})
			}
			if !reflect.DeepEqual(got.Keys, []sim.KeyResult{tt.key}) {
				t.Errorf("keys = %+v, want %+v", got.Keys, tt.key)
			}
			if want := tt.a.Sent + tt.b.Sent; got.Requests != want {
				t.Errorf("Requests = %d, want %d", got.Requests, want)
			}
			if got.Expectations != nil {
				t.Errorf("expectations kept: %+v", got.Expectations)
			}
			if !reflect.DeepEqual(got.Findings, r.Findings) {
				t.Errorf("findings = %+v, want the run's", got.Findings)
			}
		})
	}
}

func TestTruncateAtTheEndIsACopy(t *testing.T) {
	for _, at := range []float64{3, 4} {
		r := tiny()
		got := Truncate(r, at)
		if !reflect.DeepEqual(got, tiny()) {
			t.Fatalf("Truncate(r, %g) = %+v, want r unchanged", at, got)
		}
		// Nothing shared: changing the copy leaves r as it was.
		got.Clients[0].Sent = -1
		got.State[0].Remaining[0] = -7
		got.Timeline[0].Sent = -1
		got.Findings[0].Text = "changed"
		if !reflect.DeepEqual(r, tiny()) {
			t.Fatalf("Truncate(r, %g) shares memory with r", at)
		}
	}
}

// The totals Truncate recomputes are the simulator's own when every step
// is kept: the timeline adds up to them.
func TestTruncateRecomputesTheSimulatorsTotals(t *testing.T) {
	for _, name := range []string{"store-outage", "retry-storm", "nat"} {
		r := run(t, name)
		// Just short of the end: the recomputing path, keeping every step.
		got := Truncate(r, r.DurationS-1e-12)
		if got.DurationS != r.DurationS {
			t.Fatalf("%s: cut at %g, want every step kept", name, got.DurationS)
		}
		if got.Requests != r.Requests {
			t.Errorf("%s: Requests %d, the run's %d", name, got.Requests, r.Requests)
		}
		for i, c := range got.Clients {
			w := r.Clients[i]
			if c.Sent != w.Sent || c.Allowed != w.Allowed || c.Rejected != w.Rejected || c.FailedOpen != w.FailedOpen ||
				c.FailedClosed != w.FailedClosed || c.Retries != w.Retries || c.RetriesAllowed != w.RetriesAllowed {
				t.Errorf("%s: client %s recomputed as %+v, the run's %+v", name, c.Name, c, w)
			}
		}
		for i, k := range got.Keys {
			w := r.Keys[i]
			if k.Clients != w.Clients || k.Sent != w.Sent || k.Allowed != w.Allowed || k.Rejected != w.Rejected ||
				k.FailedOpen != w.FailedOpen || k.FailedClosed != w.FailedClosed {
				t.Errorf("%s: key %s recomputed as %+v, the run's %+v", name, k.Key, k, w)
			}
		}
	}
}

// run simulates a built-in scenario.
func run(t testing.TB, name string) *sim.Result {
	t.Helper()
	f, err := scenarios.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	r, err := sim.Run(context.Background(), f.Scenario, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A key with several limits has a series per limit, each naming its own:
// a truncated result, cut or whole, keeps the name.
func TestTruncateKeepsEachSeriesLimit(t *testing.T) {
	for _, at := range []float64{1, 4} {
		r := tiny()
		r.State[0].Limit = "hourly"
		if got := Truncate(r, at).State[0].Limit; got != "hourly" {
			t.Errorf("Truncate(r, %g): the series follows limit %q, want \"hourly\"", at, got)
		}
	}
}

// A run's state series are sparse (a point where the room changed): cut
// anywhere, a sparse result's series put back step by step are those of
// the same result made dense and then cut. A series whose last point
// before the cut is steps earlier holds its value through the cut.
func TestTruncateASparseResultAsTheDenseOne(t *testing.T) {
	for _, name := range []string{"partition", "runaway-healthcheck", "store-outage"} {
		r := run(t, name)
		if !r.TimelineSparse {
			t.Fatalf("%s: a run's result is not sparse", name)
		}
		dense := *r
		dense.Densify()
		for _, at := range []float64{0.5, 1, 3.7, r.DurationS / 2, r.DurationS - 1} {
			cut, want := Truncate(r, at), Truncate(&dense, at)
			if len(cut.State) != len(want.State) {
				t.Fatalf("%s at %g: %d series, want %d", name, at, len(cut.State), len(want.State))
			}
			for i := range cut.State {
				got, w := cut.StateAs(i, true), want.State[i]
				if !reflect.DeepEqual(got.TS, w.TS) || !reflect.DeepEqual(got.Remaining, w.Remaining) {
					t.Fatalf("%s at %g: series %s %s: %v at %v, want %v at %v", name, at, w.Key, w.Copy, got.Remaining, got.TS, w.Remaining, w.TS)
				}
			}
		}
	}
}
