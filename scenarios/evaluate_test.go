package scenarios

import (
	"slices"
	"testing"

	"github.com/ratelim/ratelim/sim"
)

func TestEvaluateClientsKeysGlobsAndSpans(t *testing.T) {
	r := &sim.Result{
		Scenario:  "t",
		DurationS: 10,
		Clients: []sim.ClientResult{
			{Name: "bastion-1", Key: "b1", Counts: sim.Counts{Sent: 100, Allowed: 30}, MaxAllowed1s: 12},
			{Name: "bastion-2", Key: "b2", Counts: sim.Counts{Sent: 100, Allowed: 50}, MaxAllowed1s: 20},
			{Name: "office", Key: "nat", Counts: sim.Counts{Sent: 10, Allowed: 10}, MaxAllowed1s: 3, RetriesAllowed: 2},
		},
		Keys: []sim.KeyResult{
			{Key: "b1", Counts: sim.Counts{Sent: 100, Allowed: 30}, MaxAllowed1s: 12},
			{Key: "b2", Counts: sim.Counts{Sent: 100, Allowed: 50}, MaxAllowed1s: 20},
			{Key: "nat", Clients: 1, Counts: sim.Counts{Sent: 10, Allowed: 10}, MaxAllowed1s: 3, IdealMaxAllowed1s: 2},
		},
		Timeline: []sim.TimelineRow{
			{TS: 0, Client: "office", Counts: sim.Counts{Allowed: 4}, Served: 3}, {TS: 1, Client: "office", Counts: sim.Counts{Allowed: 6}, Served: 7},
		},
	}
	max := func(v float64) *float64 { return &v }
	tests := []struct {
		e    Expectation
		want []bool
		got  []float64
	}{
		{Expectation{Client: "bastion-*", Figure: "allowed", Max: max(40)}, []bool{true, false}, []float64{30, 50}},
		{Expectation{Key: "nat", Figure: "max_allowed_1s", Max: max(3)}, []bool{true}, []float64{3}},
		{Expectation{Key: "b*", Figure: "allowed_rate", Min: max(4)}, []bool{false, true}, []float64{3, 5}},
		{Expectation{Client: "office", Figure: "allowed_rate", Equals: max(5), During: &Span{From: 0, To: 2e9}}, []bool{true}, []float64{5}},
		// Figures read from the result types: a field of the client's
		// result, a key's, and one only the timeline has, over the whole
		// run and over a span.
		{Expectation{Client: "office", Figure: "retries_allowed", Equals: max(2)}, []bool{true}, []float64{2}},
		{Expectation{Key: "nat", Figure: "ideal_max_allowed_1s", Max: max(2)}, []bool{true}, []float64{2}},
		{Expectation{Client: "office", Figure: "served", Equals: max(10)}, []bool{true}, []float64{10}},
		{Expectation{Client: "office", Figure: "served", Equals: max(3), During: &Span{From: 0, To: 1e9}}, []bool{true}, []float64{3}},
	}
	for _, tt := range tests {
		outs, err := Evaluate("t.yaml", &tt.e, r)
		if err != nil {
			t.Fatal(err)
		}
		if len(outs) != len(tt.want) {
			t.Fatalf("%+v: %d outcomes, want %d", tt.e, len(outs), len(tt.want))
		}
		for i, o := range outs {
			if o.OK != tt.want[i] || o.Got != tt.got[i] {
				t.Errorf("%s: ok=%v got=%v, want ok=%v got=%v", o.Claim(), o.OK, o.Got, tt.want[i], tt.got[i])
			}
		}
	}
	if _, err := Evaluate("t.yaml", &Expectation{Line: 7, Client: "nobody", Figure: "sent"}, r); err == nil || err.Error()[:9] != "t.yaml:7:" {
		t.Errorf("unknown client: %v, want a t.yaml:7: error", err)
	}
	if _, err := Evaluate("t.yaml", &Expectation{Line: 8, Client: "office", Figure: "p99_ms", During: &Span{To: 1e9}}, r); err == nil {
		t.Error("p99_ms over a span was accepted")
	}
}

// TestFiguresFromTheResults: the figures read from the result types keep
// every name files were written with (the v1 schema renames and removes
// no field), the embedded sim.Counts included, and are counts only: a
// key's Clients, an int, is no figure, nor is a name or a timestamp.
func TestFiguresFromTheResults(t *testing.T) {
	for _, tc := range []struct {
		what        string
		names, want []string
	}{
		{"figures", figures, []string{"sent", "allowed", "rejected", "failed_open", "failed_closed", "retries",
			"max_allowed_1s", "ideal_allowed", "allowed_rate", "p50_ms", "p99_ms", "false_allows", "false_denies"}},
		{"keyFigures", keyFigures, []string{"sent", "allowed", "rejected", "failed_open", "failed_closed",
			"max_allowed_1s", "ideal_allowed", "allowed_rate", "false_allows", "false_denies"}},
		{"spanFigures", spanFigures, []string{"sent", "allowed", "rejected", "failed_open", "failed_closed", "retries", "allowed_rate"}},
	} {
		for _, name := range tc.want {
			if !slices.Contains(tc.names, name) {
				t.Errorf("%s lacks %s: %v", tc.what, name, tc.names)
			}
		}
		for _, name := range []string{"name", "key", "client", "clients", "t_s", "latency_ms"} {
			if slices.Contains(tc.names, name) {
				t.Errorf("%s has %s, which is not a count: %v", tc.what, name, tc.names)
			}
		}
	}
}
