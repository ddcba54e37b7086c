package plots

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/sim"
)

func TestReference(t *testing.T) {
	tests := []struct {
		algorithm        string
		rate, windowS    float64
		burst            int64
		stepS            float64
		kind             string
		k                int
		limit, refill    float64
		boundaryS        float64
		limitLabelPrefix string
	}{
		// window-boundary: 100 per 1 s window in 0.1 s steps.
		{"fixed-window", 100, 1, 100, 0.1, "window", 10, 100, 0, 1, "limit per 1 s window"},
		{"sliding-log", 100, 1, 100, 0.1, "window", 10, 100, 0, 0, "limit per 1 s window"},
		{"sliding-window", 5, 10, 50, 1, "window", 10, 50, 0, 0, "limit per 10 s window"},
		// A window shorter than the step: the count over one step, and
		// the limit stretched to it.
		{"fixed-window", 10, 0.5, 0, 1, "window", 1, 10, 0, 0.5, "limit per 1 s window"},
		// Buckets: the most in any second is burst + rate; rate is refill.
		{"token-bucket", 10, 2, 50, 1, "bucket", 1, 60, 10, 0, "limit: the most in any 1 s"},
		{"gcra", 100, 1, 100, 0.1, "bucket", 10, 200, 100, 0, "limit: the most in any 1 s"},
		{"leaky-bucket", 10, 1, 20, 0.5, "leaky", 2, 10, 0, 0, "limit: what the queue drains"},
	}
	for _, tt := range tests {
		d := &timelineData{stepS: tt.stepS, r: &sim.Result{Algorithm: tt.algorithm, StepS: tt.stepS,
			Limit: sim.LimitResult{RatePerS: tt.rate, WindowS: tt.windowS, Burst: tt.burst}}}
		ref := newReference(d)
		if ref.kind != tt.kind || ref.k != tt.k || ref.limit != tt.limit || ref.refill != tt.refill || ref.boundaryS != tt.boundaryS {
			t.Errorf("%s %g/s window %gs burst %d step %gs: %+v; want kind %s k %d limit %g refill %g boundary %g",
				tt.algorithm, tt.rate, tt.windowS, tt.burst, tt.stepS, ref, tt.kind, tt.k, tt.limit, tt.refill, tt.boundaryS)
		}
		if got := ref.limitLabel(); !strings.HasPrefix(got, tt.limitLabelPrefix) {
			t.Errorf("%s: limit label %q, want it to start %q", tt.algorithm, got, tt.limitLabelPrefix)
		}
	}
}

func TestRolling(t *testing.T) {
	tests := []struct {
		v    []float64
		k    int
		want []float64
	}{
		{[]float64{1, 2, 3}, 1, []float64{1, 2, 3}},
		{[]float64{1, 2, 3, 4}, 2, []float64{1, 3, 5, 7}},
		{[]float64{0, 100, 100, 0, 0}, 3, []float64{0, 100, 200, 200, 100}},
		{[]float64{5}, 10, []float64{5}},
		{nil, 3, []float64{}},
	}
	for _, tt := range tests {
		if got := rolling(tt.v, tt.k); !slices.Equal(got, tt.want) {
			t.Errorf("rolling(%v, %d) = %v, want %v", tt.v, tt.k, got, tt.want)
		}
	}
}

// builtin runs a built-in scenario, changed by change.
func builtin(t *testing.T, name string, change func(*sim.Scenario)) *sim.Result {
	t.Helper()
	f, err := scenarios.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	sc := f.Scenario
	if change != nil {
		change(&sc)
	}
	r, err := sim.Run(context.Background(), sc, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func arranged(t *testing.T, r *sim.Result, by string) *timelineData {
	t.Helper()
	d, err := newTimelineData(r, by)
	if err != nil {
		t.Fatal(err)
	}
	d.arrange(d.signatures())
	return d
}

// The window-boundary lesson, in the figures the panel draws: a fixed
// window's rolling count reaches twice its limit, a sliding log's never
// passes it.
func TestRollingCountShowsTheBoundaryBurst(t *testing.T) {
	for _, tt := range []struct {
		algorithm string
		peak      float64
	}{{"fixed-window", 200}, {"sliding-log", 100}} {
		r := builtin(t, "window-boundary", func(sc *sim.Scenario) { sc.Limit.Algorithm = tt.algorithm })
		d := arranged(t, r, "client")
		if d.ref.limit != 100 || d.ref.k != 10 {
			t.Fatalf("%s: limit %g over %d steps, want 100 over 10", tt.algorithm, d.ref.limit, d.ref.k)
		}
		got := slices.Max(rolling(values(d.panels[0].steps, servedOf), d.ref.k))
		if got != tt.peak {
			t.Errorf("%s: the rolling count peaks at %g, want %g against the limit 100", tt.algorithm, got, tt.peak)
		}
	}
}

// nat: every office panel says its limit is shared, with whom, and who
// used it; the sync tool is named as the one that took most.
func TestSharedKeyIsSaidAndDrawn(t *testing.T) {
	r := builtin(t, "nat", nil)
	// A panel per key: the NAT's key draws its biggest user inside it.
	k := arranged(t, r, "key")
	if p := k.panels[0]; p.name != "203.0.113.7" || p.topUser == nil || p.topUser.name != "sync-tool" {
		t.Errorf("by key, the first panel is %q with top user %+v; want 203.0.113.7, the sync-tool", p.name, p.topUser)
	}
	if p := k.panels[1]; p.topUser != nil {
		t.Errorf("by key, %s (one client) draws a top user", p.name)
	}
	d := arranged(t, r, "client")
	for _, p := range d.panels {
		notes := strings.Join(p.notes, "\n")
		switch {
		case strings.HasPrefix(p.name, "office-"), p.name == "sync-tool":
			if p.share == nil || len(p.share.clients) != 11 || p.share.top != "sync-tool" {
				t.Errorf("%s: share %+v, want 11 clients, the sync-tool on top", p.name, p.share)
			}
			if !strings.Contains(notes, "limit shared by 11 clients on ip 203.0.113.7") || !strings.Contains(notes, "took") {
				t.Errorf("%s: notes %q do not say the limit is shared and who used it", p.name, notes)
			}
		case p.name == "home":
			if p.share != nil {
				t.Errorf("home is on a key of its own, drawn as shared")
			}
		}
	}
}

func TestCollapse(t *testing.T) {
	mk := func(names ...string) []traffic {
		var out []traffic
		for _, n := range names {
			out = append(out, traffic{name: n, keys: []string{n}, notes: []string{"key " + n, "allowed 1 of 2 sent"}})
		}
		return out
	}
	tests := []struct {
		names []string
		sigs  []string
		want  []string
	}{
		{[]string{"a", "b"}, []string{"x", "y"}, []string{"a", "b"}},
		{[]string{"bastion-1", "bastion-2", "bastion-3", "cron"}, []string{"x", "x", "x", "y"}, []string{"bastion-1…3 ×3", "cron"}},
		// Alike but not a numbered run: the first and how many.
		{[]string{"eager", "cron", "patient"}, []string{"x", "y", "x"}, []string{"eager and 1 alike ×2", "cron"}},
		{[]string{"w-1", "w-3"}, []string{"x", "x"}, []string{"w-1 and 1 alike ×2"}},
	}
	for _, tt := range tests {
		got := collapse(mk(tt.names...), tt.sigs)
		var names []string
		for _, g := range got {
			names = append(names, g.name)
			if g.count > 1 && (len(g.members) != g.count || slices.ContainsFunc(g.notes, func(n string) bool { return strings.HasPrefix(n, "key ") })) {
				t.Errorf("%v: group %q has %d members for count %d, notes %q", tt.names, g.name, len(g.members), g.count, g.notes)
			}
		}
		if !slices.Equal(names, tt.want) {
			t.Errorf("collapse(%v) = %v, want %v", tt.names, names, tt.want)
		}
	}
}

// runaway-healthcheck: the eight bastions are one panel, and the State
// panel keeps the scheduler and the dashboard, whose full buckets are
// the contrast with the runaways' empty ones.
func TestRunawayKeepsTheQuietKeys(t *testing.T) {
	r := builtin(t, "runaway-healthcheck", nil)
	d := arranged(t, r, "client")
	var names []string
	for _, p := range d.panels {
		names = append(names, p.name)
	}
	if want := []string{"bastion-1…8 ×8", "scheduler", "dashboard"}; !slices.Equal(names, want) {
		t.Errorf("panels %v, want %v", names, want)
	}
	s := newStateData(r, d.stepS)
	for _, k := range []string{"bastion-1", "scheduler", "dashboard"} {
		if !slices.Contains(s.keys, k) {
			t.Errorf("the State panel leaves out %s (keys %v)", k, s.keys)
		}
	}
}

// overBand reports whether any panel of r draws the over-the-limit band.
func overBand(t *testing.T, r *sim.Result) []string {
	t.Helper()
	d := arranged(t, r, "client")
	var over []string
	for _, p := range d.panels {
		count := values(p.steps, servedOf)
		if p.share != nil {
			count = values(p.share.steps, servedOf)
		}
		lo, hi := d.ref.over(count, float64(r.Limit.Burst), r.Limit.RatePerS, d.stepS, limitKeys(p))
		if (overFill{lo: lo, hi: hi}).over() {
			over = append(over, p.name)
		}
	}
	return over
}

// The band says "the limiter let through what the limit does not
// allow": never on a run an exact limiter decided, always where copies of
// the state each admitted.
func TestOverBandOnlyWhereTheLimitWasBroken(t *testing.T) {
	tests := []struct {
		scenario, algorithm string
		topology            sim.TopologyKind
		want                []string
	}{
		{"runaway-healthcheck", "token-bucket", sim.Shared, nil},
		{"runaway-healthcheck", "gcra", sim.Shared, nil},
		{"runaway-healthcheck", "sliding-log", sim.Shared, nil},
		{"runaway-healthcheck", "token-bucket", sim.Local, []string{"bastion-1…8 ×8"}},
		{"nat", "token-bucket", sim.Shared, nil},
		{"rack-drain", "token-bucket", sim.Shared, nil},
		{"retry-storm", "token-bucket", sim.Shared, nil},
		{"window-boundary", "sliding-log", sim.Shared, nil},
		{"window-boundary", "token-bucket", sim.Shared, nil},
		{"window-boundary", "fixed-window", sim.Shared, []string{"boundary"}},
		{"partition", "token-bucket", "", []string{"app", "batch"}},
	}
	for _, tt := range tests {
		r := builtin(t, tt.scenario, func(sc *sim.Scenario) {
			sc.Limit.Algorithm = tt.algorithm
			if tt.topology != "" {
				sc.Topology.Kind = tt.topology
			}
		})
		if got := overBand(t, r); !slices.Equal(got, tt.want) {
			t.Errorf("%s %s on %s: over the limit in %v, want %v", tt.scenario, tt.algorithm, r.Topology, got, tt.want)
		}
	}
}

// A leaky bucket's admissions are drawn when they leave its queue: cron's
// burst of 30 at 7 s is admitted 20 at once (the queue) but served 10 a
// second, the smoothing the queue is for.
func TestLeakyBucketDrawnAtDeparture(t *testing.T) {
	r := mustRun(t, leaky())
	d := arranged(t, r, "client")
	if !d.leaky {
		t.Fatal("a leaky bucket's result is not drawn at departures")
	}
	for _, p := range d.panels {
		if p.name != "cron" {
			continue
		}
		admitted := slices.Max(values(p.steps, func(c counts) int64 { return c.Allowed }))
		served := slices.Max(values(p.steps, servedOf))
		if admitted != 20 || served > 11 {
			t.Errorf("cron: at most %g admitted and %g served in a step, want 20 admitted and about 10 served", admitted, served)
		}
	}
	// Another algorithm: served is what was allowed.
	d = arranged(t, mustRun(t, localFour()), "client")
	if d.leaky || d.panels[0].total.served != d.panels[0].total.Allowed {
		t.Errorf("a token bucket's served %d, allowed %d", d.panels[0].total.served, d.panels[0].total.Allowed)
	}
}
