package scenarios

import (
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
			{Name: "office", Key: "nat", Counts: sim.Counts{Sent: 10, Allowed: 10}, MaxAllowed1s: 3},
		},
		Keys: []sim.KeyResult{
			{Key: "b1", Counts: sim.Counts{Sent: 100, Allowed: 30}, MaxAllowed1s: 12},
			{Key: "b2", Counts: sim.Counts{Sent: 100, Allowed: 50}, MaxAllowed1s: 20},
			{Key: "nat", Counts: sim.Counts{Sent: 10, Allowed: 10}, MaxAllowed1s: 3},
		},
		Timeline: []sim.TimelineRow{
			{TS: 0, Client: "office", Counts: sim.Counts{Allowed: 4}}, {TS: 1, Client: "office", Counts: sim.Counts{Allowed: 6}},
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
