package simrun_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/simrun"
)

func TestSettingName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"on_error", "on-error"}, {"on-error", "on-error"}, {" sync_interval ", "sync-interval"},
		{"limit.burst", "limit.burst"}, {"topology.on_error", "topology.on_error"}, {"clients[web_1].traffic.rate", "clients[web_1].traffic.rate"},
	} {
		if got := simrun.SettingName(tc.in); got != tc.want {
			t.Errorf("SettingName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// The two runs are labelled by what each has at the fields the --vs
// names: an override's as the run has it, a path's as set or written,
// "default" where the file leaves it out.
func TestVersusLabels(t *testing.T) {
	a, err := scenarios.Open("runaway-healthcheck")
	if err != nil {
		t.Fatal(err)
	}
	vs := simrun.Versus{Settings: []scenarios.Setting{
		{Name: "on-error", Value: "fail-closed", Flag: "--vs on-error"},
		{Name: "limit.burst", Value: "100", Flag: "--vs limit.burst"},
		{Name: "topology.timeout", Value: "5ms", Flag: "--vs topology.timeout"},
	}}
	b, err := vs.Apply(a)
	if err != nil {
		t.Fatal(err)
	}
	la, lb := vs.Labels(a, b)
	if la != "on-error=fail-open limit.burst=50 topology.timeout=default" || lb != "on-error=fail-closed limit.burst=100 topology.timeout=5ms" {
		t.Errorf("labels %q, %q", la, lb)
	}
	if got := vs.Changed(); len(got) != 3 || got["limit.burst"] != "100" {
		t.Errorf("Changed() = %v", got)
	}
}

// The comparison is the rows, then a note when the traffic differs.
func TestWriteVersusComparison(t *testing.T) {
	f, err := scenarios.Open("nat")
	if err != nil {
		t.Fatal(err)
	}
	run := func(sets ...scenarios.Setting) *sim.Result {
		g, err := simrun.Apply(f, sets)
		if err != nil {
			t.Fatal(err)
		}
		r, err := sim.Run(context.Background(), g.Scenario, sim.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	a, same, random := run(), run(scenarios.Setting{Name: "servers", Value: "3"}), run(scenarios.Setting{Name: "balancer", Value: "random"})
	var rows, note bytes.Buffer
	if err := simrun.WriteVersusComparison(&rows, a, same); err != nil {
		t.Fatal(err)
	}
	if err := simrun.WriteVersusComparison(&note, a, random); err != nil {
		t.Fatal(err)
	}
	header := "client  allowed A  allowed B"
	if !strings.Contains(strings.Join(strings.Fields(rows.String()), " "), strings.Join(strings.Fields(header), " ")) ||
		strings.Contains(rows.String(), "note:") || !strings.Contains(note.String(), "note: the two runs' traffic differs") {
		t.Errorf("rows:\n%s\nwith another balancer:\n%s", rows.String(), note.String())
	}
}
