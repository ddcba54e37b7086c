package scenarios

import (
	"strings"
	"testing"

	"github.com/ratelim/ratelim/sim"
)

// Figure reads what an expectation would, of every client, one client or
// one key; and refuses, saying what would do, a figure or subject the
// run has not.
func TestFigure(t *testing.T) {
	r := &sim.Result{
		Scenario:  "t",
		DurationS: 10,
		Clients: []sim.ClientResult{
			{Name: "bastion-1", Key: "b", Counts: sim.Counts{Sent: 100, Allowed: 30}, MaxAllowed1s: 12, Retries: 4, LatencyMs: sim.LatencySummary{P99: 7}},
			{Name: "bastion-2", Key: "b", Counts: sim.Counts{Sent: 100, Allowed: 50}, MaxAllowed1s: 20, Retries: 1},
			{Name: "office", Key: "nat", Counts: sim.Counts{Sent: 10, Allowed: 10}, MaxAllowed1s: 3},
		},
		Keys: []sim.KeyResult{
			{Key: "b", Clients: 2, Counts: sim.Counts{Sent: 200, Allowed: 80}, MaxAllowed1s: 25, IdealMaxAllowed1s: 10},
			{Key: "nat", Clients: 1, Counts: sim.Counts{Sent: 10, Allowed: 10}, MaxAllowed1s: 3, IdealMaxAllowed1s: 2},
		},
		Timeline: []sim.TimelineRow{
			{TS: 0, Client: "office", Served: 3}, {TS: 1, Client: "office", Served: 7}, {TS: 1, Client: "bastion-1", Served: 5},
		},
	}
	for _, tc := range []struct {
		name, subject string
		want          float64
	}{
		{"sent", "", 210},
		{"allowed_rate", "", 9},
		{"max_allowed_1s", "", 25}, // the worst key's, as Totals
		{"retries", "", 5},         // a client's count no key has: added up
		{"served", "", 15},         // the timeline's, every row
		{"allowed", "bastion-2", 50},
		{"p99_ms", "bastion-1", 7},
		{"served", "office", 10},
		{"max_allowed_1s", "key=b", 25},
		{"allowed_rate", "key=nat", 1},
	} {
		got, err := Figure(r, tc.name, tc.subject)
		if err != nil || got != tc.want {
			t.Errorf("Figure(%s, %q) = %v, %v; want %v", tc.name, tc.subject, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ name, subject, want string }{
		{"allowd", "", `figure: unknown figure "allowd", did you mean "allowed"?`},
		{"p50_ms", "", "p50_ms does not add up over clients (want p50_ms:CLIENT)"},
		{"retries", "key=b", "retries is a client's figure, not a key's"},
		{"sent", "key=web", `sent: t has no limiter key "web" (want one of b or nat)`},
		{"sent", "web", `sent: t has no client "web" (want one of bastion-1, bastion-2 or office)`},
	} {
		if _, err := Figure(r, tc.name, tc.subject); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Figure(%s, %q): %v, want %q", tc.name, tc.subject, err, tc.want)
		}
	}
	if names := FigureNames(); len(names) != len(figures) || names[0] != "sent" {
		t.Errorf("FigureNames() = %v, want figures", names)
	}
}
