package main

import (
	"strings"
	"testing"
)

func TestSweepArgvToOptions(t *testing.T) {
	testArgv(t, newCmdSweep(streams{}, nil),
		func() sweepOptions {
			return sweepOptions{Scenario: "sync-interval", Axes: []string{"servers=2..4"}, Format: "table", Limits: parallelLimits(), over: noOverrides()}
		},
		func(p *parsed) *sweepOptions { return p.sweep },
		[]argvCase[sweepOptions]{
			{line: "sweep sync-interval servers=2..4"},
			{line: "sweep sync-interval servers=2..4 sync-interval=0,100ms --parallel 2 --format json -q", want: func(o *sweepOptions) {
				o.Axes, o.Limits.Workers, o.Format, o.Quiet = []string{"servers=2..4", "sync-interval=0,100ms"}, 2, "json", true
			}},
			{line: "sweep sync-interval servers=2..4 --figure allowed,rejected_pct:flash-bot --format csv", want: func(o *sweepOptions) {
				o.Figures, o.Format = "allowed,rejected_pct:flash-bot", "csv"
			}},
			{line: "sweep sync-interval servers=2..4 --max-requests 500000 --max-memory 1GiB", want: func(o *sweepOptions) {
				o.Limits.MaxRequests, o.Limits.MaxMemory = 500000, "1GiB"
			}},
			{line: "sweep sync-interval servers=2..4 --plot sweep.svg --plot-width 8 --plot-height 5", want: func(o *sweepOptions) {
				o.Plot = plotFlags{Path: "sweep.svg", Width: 8, Height: 5}
			}},
			{line: "sweep window-boundary servers=2..4 --window 2s", want: func(o *sweepOptions) {
				o.Scenario, o.over.window, o.over.set = "window-boundary", "2s", map[string]string{"window": "2s"}
			}},
			{line: "sweep sync-interval servers=2..4 --rate 20/s --burst 5 --set topology.rtt=1ms", want: func(o *sweepOptions) {
				o.over = overrides{rate: "20/s", burst: "5", paths: []string{"topology.rtt=1ms"},
					set: map[string]string{"rate": "20/s", "burst": "5"}}
			}},
			{line: "sweep sync-interval servers=2..4 --algorithm gcra --servers 3 --topology synced --store memory --balancer random --key ip --seed 7 --duration 10s --step 2s --on-error fail-closed --rtt 1ms --sync-interval 10ms --replication-lag 0 --wall-clock 2026-11-24T10:00:00Z --shadow false", code: exitBadInput, want: func(o *sweepOptions) {
				o.over = overrides{algorithm: "gcra", servers: "3", topology: "synced", store: "memory", balancer: "random", key: "ip", seed: "7", duration: "10s", step: "2s", onError: "fail-closed", rtt: "1ms", syncInterval: "10ms", replicationLag: "0", wallClock: "2026-11-24T10:00:00Z", shadow: "false",
					set: map[string]string{"algorithm": "gcra", "servers": "3", "topology": "synced", "store": "memory", "balancer": "random", "key": "ip", "seed": "7", "duration": "10s", "step": "2s", "on-error": "fail-closed", "rtt": "1ms", "sync-interval": "10ms", "replication-lag": "0", "wall-clock": "2026-11-24T10:00:00Z", "shadow": "false"}}
			}},
		})
}

// The plan of a sweep: its runs in order, the first field's values
// outer, and the run that is the scenario as written.
func TestSweepPlans(t *testing.T) {
	testPlans(t, []planCase{
		{line: "sweep sync-interval sync-interval=1ms..1s*10 servers=2..8+3", check: func(t *testing.T, p *parsed) {
			var got []string
			for _, r := range p.sweepPlan.runs {
				got = append(got, strings.Join(r.values, "/"))
			}
			want := "1ms/2 1ms/5 1ms/8 10ms/2 10ms/5 10ms/8 100ms/2 100ms/5 100ms/8 1s/2 1s/5 1s/8"
			if strings.Join(got, " ") != want {
				t.Errorf("runs %v, want %s", got, want)
			}
			if r, err := p.sweepPlan.scenarioOf(4); err != nil || r.Servers != 5 || r.Topology.SyncInterval.String() != "10ms" {
				t.Errorf("run 4 has %d servers, sync %s; want 5 and 10ms", r.Servers, r.Topology.SyncInterval)
			}
			if p.sweepPlan.current != -1 || p.sweepPlan.workers < 1 {
				t.Errorf("current run %d, %d workers; want -1 (the file's 100ms with 4 servers is no run)", p.sweepPlan.current, p.sweepPlan.workers)
			}
		}},
		{line: "sweep sync-interval servers=1,4,8 --parallel 9", check: func(t *testing.T, p *parsed) {
			if p.sweepPlan.current != 1 || p.sweepPlan.workers != 3 {
				t.Errorf("current %d, workers %d; want 1 (the file's 4 servers) and 3 (no more than runs)", p.sweepPlan.current, p.sweepPlan.workers)
			}
		}},
	})
}

func TestSweepRefusals(t *testing.T) {
	testRefusals(t, []refusal{
		{"sweep sync-interval", exitBadInput, []string{"one or two FIELD=VALUES", "(got 1 argument)"}},
		{"sweep sync-interval seed=1 servers=1 rtt=1ms", exitBadInput, []string{"one or two FIELD=VALUES", "(got 4 arguments)"}},
		{"sweep sync-interval servers", exitBadInput, []string{`"servers": want FIELD=VALUES`}},
		{"sweep sync-interval =1..3", exitBadInput, []string{"want FIELD=VALUES"}},
		{"sweep sync-interval colour=red,blue", exitBadInput, []string{`sweep: colour: unknown setting "colour" (want a flag's name`}},
		{"sweep sync-interval limit.colour=red", exitBadInput, []string{"sweep: limit.colour: unknown field (want name, algorithm, rate, burst"}},
		{"sweep sync-interval burst=-1,2", exitBadInput, []string{"sweep burst: -1 is too small"}},
		{"sweep sync-interval limit.rate=10/s..15/s*1.2", exitBadInput, []string{`sweep limit.rate: "14.4/s" is not a rate`}},
		{"sweep sync-interval limit.burst=10,10.0", exitBadInput, []string{"sweep limit.burst: 10.0 is not a whole number"}},
		{"sweep sync-interval burst=100,100 --figure allowed", exitBadInput, []string{"sweep burst: 100 given twice"}},
		{"sweep sync-interval servers=", exitBadInput, []string{"sweep servers: no values"}},
		{"sweep sync-interval servers=8..1", exitBadInput, []string{`sweep servers: "8..1": 8 is more than 1`}},
		{"sweep sync-interval servers=1..40", exitBadInput, []string{"sweep servers", "more than 32 values"}},
		{"sweep sync-interval servers=1,5000", exitBadInput, []string{"sweep servers: 5000 is too large", "1024"}},
		{"sweep sync-interval sync-interval=0,soon", exitBadInput, []string{"sweep sync-interval", `"soon"`}},
		{"sweep sync-interval sync-interval=100ms,0.1s", exitBadInput, []string{"sweep sync-interval: sync-interval 0.1s runs the scenario sync-interval 100ms does"}},
		{"sweep sync-interval servers=2,4 sync-interval=100ms,0.1s", exitBadInput, []string{"sweep servers, sync-interval: servers 2, sync-interval 0.1s runs the scenario servers 2, sync-interval 100ms does"}},
		{"sweep nat sync-interval=0,1s", exitBadInput, []string{"sweep sync-interval", "only a synced topology"}},
		{"sweep sync-interval seed=1..2 seed=3", exitBadInput, []string{"sweep seed: also set as sweep seed (want the field in one place)"}},
		{"sweep sync-interval seed=1..17 servers=1..16", exitBadInput, []string{"seed × servers makes 272 runs (want at most 256"}},
		// A flag that fits only some values is refused at the first run
		// it does not fit, naming the run.
		{"sweep partition servers=3,2 --set faults[0].groups=[[0],[1,2]]", exitBadInput, []string{"ratelim: partition with servers 2: --set faults[0].groups: faults[0].groups[1][1]: server 2 does not exist"}},
		{"sweep sync-interval seed=1,2 --seed 3", exitBadInput, []string{"sweep seed: also set as --seed (want the field in one place)"}},
		// Two values that are one rate however written run one scenario.
		{"sweep sync-interval rate=10/s,600/m", exitBadInput, []string{"sweep rate: rate 600/m runs the scenario rate 10/s does (want each value once)"}},

		// One field in two places: Apply sets the flags' names after the
		// paths, so one of them would be silently dropped.
		{"sweep sync-interval topology.sync_interval=1s --sync-interval 100ms", exitBadInput, []string{"sweep topology.sync_interval: also set as --sync-interval (want the field in one place)"}},
		{"sweep sync-interval limit.burst=1 burst=100", exitBadInput, []string{"sweep burst: also set as sweep limit.burst (want the field in one place)"}},
		{"sweep sync-interval clients[0].traffic.rate=100/s clients[flash-bot].traffic.rate=200/s", exitBadInput, []string{"sweep clients[flash-bot].traffic.rate: also set as sweep clients[0].traffic.rate"}},
		{"sweep sync-interval limit.burst=1,2 --set limit.burst=3", exitBadInput, []string{"sweep limit.burst: also set as --set limit.burst"}},
		// A flag for the whole scenario sets every limit's field of a
		// file of limits:, and --duration cuts every fault's start and end.
		{"sweep api-quotas limits[hourly].shadow=true,false --shadow false", exitBadInput, []string{"sweep limits[hourly].shadow: also set as --shadow (want the field in one place)"}},
		{"sweep api-quotas limits[per-second].algorithm=token-bucket,gcra --algorithm fixed-window", exitBadInput, []string{"sweep limits[per-second].algorithm: also set as --algorithm"}},
		{"sweep api-quotas shadow=true,false --set limits[hourly].shadow=true", exitBadInput, []string{"sweep shadow: also set as --set limits[hourly].shadow"}},
		{"sweep partition faults[0].end=15s,20s,25s --duration 15s", exitBadInput, []string{"sweep faults[0].end: also set as --duration"}},
		{"sweep sync-interval seed=1,2 --figure allowd", exitBadInput, []string{`--figure: unknown figure "allowd"`}},
		{"sweep sync-interval seed=1,2 --figure allowed,allowed", exitBadInput, []string{"--figure: allowed given twice"}},
		{"sweep sync-interval seed=1,2 --figure allowed,", exitBadInput, []string{"--figure: an empty figure"}},
		{"sweep sync-interval seed=1,2 --figure allowed:nobody", exitBadInput, []string{`--figure allowed:nobody: allowed: sync-interval has no client "nobody"`}},
		{"sweep sync-interval seed=1,2 --figure retries:key=flash-bot", exitBadInput, []string{"retries is a client's figure, not a key's"}},
		{"sweep sync-interval seed=1,2 --figure allowed:", exitBadInput, []string{"--figure allowed:: no subject after the colon (want allowed:CLIENT or allowed:key=KEY, or allowed alone for every client)"}},
		{"sweep sync-interval seed=1,2 --figure allowed:key=", exitBadInput, []string{"--figure allowed:key=: no subject after the colon"}},
		{`sweep sync-interval seed=1,2 --figure allowed:"flash-bot`, exitBadInput, []string{"has a quote not closed"}},
		{"sweep sync-interval seed=1,2 --figure p99_ms", exitBadInput, []string{"p99_ms does not add up over clients (want p99_ms:CLIENT)"}},
		{"sweep sync-interval seed=1,2 --plot x.gif", exitBadInput, []string{"--plot", "still chart"}},
		{"sweep sync-interval seed=1,2 --format yaml", exitBadInput, []string{"--format", `"yaml"`}},
		{"sweep sync-interval seed=1,2 --parallel -1", exitBadInput, []string{"--parallel: -1 is less than 0 (want 0 for one run per core, or more)"}},
		{"sweep sync-interval seed=1,2 --max-requests 0", exitBadInput, []string{"--max-requests", "at least 1"}},
		// sim --sweep is planned as ratelim sweep is: each value read
		// with the flags before any run, by the field's own reader, and
		// a field set once.
		{"sim sync-interval --sweep burst=5,-1", exitBadInput, []string{"--sweep burst: -1 is too small"}},
		{"sim partition --sweep faults[0].start=5s,40s", exitBadInput, []string{"--sweep faults[0].start=40s: faults[0].end " + partitionFault + ": 20s is not after start 40s"}},
		{"sim runaway-healthcheck --topology local --sweep servers=1..3 --set servers=2", exitBadInput, []string{"--sweep servers: also set as --set servers"}},
		{"sim sync-interval --sweep limit.burst=1,2 --burst 3", exitBadInput, []string{"--sweep limit.burst: also set as --burst"}},
	})
}

// A field set whole (limit={...}) and a part of it (limit.burst), or by
// a flag, is refused whichever comes first: Apply would drop one.
func TestSweepRefusesAFieldAndItsPart(t *testing.T) {
	limit := "{algorithm: token-bucket, rate: 5/s, burst: 5}"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"limit=" + limit, "limit.burst=50"}, "sweep limit.burst: also set as sweep limit (want the field in one place)"},
		{[]string{"limit.burst=50", "limit=" + limit}, "sweep limit: also set as sweep limit.burst"},
		{[]string{"rate=1/s,2/s", "--set", "limit=" + limit}, "sweep rate: also set as --set limit"},
	} {
		code, out, errOut := runArgs(append([]string{"sweep", "sync-interval"}, tc.args...)...)
		if code != exitBadInput || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("%q: exit %d, %q; want %d, %q", tc.args, code, errOut, exitBadInput, tc.want)
		}
	}
}

// Two fields overlap when one is the other or holds it, an entry [*]
// standing for any entry.
func TestSweepFieldsOverlap(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"limit.burst", "limit.burst", true},
		{"limit", "limit.burst", true},
		{"limit.burst", "limit", true},
		{"limit.burst", "limit.rate", false},
		{"limits[1].shadow", "limits[*].shadow", true},
		{"limits[*].shadow", "limits[0]", true},
		{"limits", "limits[*].shadow", true},
		{"limits[1].rate", "limits[*].shadow", false},
		{"limits[1].shadow", "limits[0].shadow", false},
		{"faults[0]", "faults[*].end", true},
		{"faults[0].groups", "faults[*].end", false},
		{"faults[*].start", "faults.start", false},
		{"clients[a.b].count", "clients[a.b]", true},
	} {
		if got := overlaps(tc.a, tc.b); got != tc.want {
			t.Errorf("overlaps(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// A sweep refused as too big says how far its first run got in words, and
// its advice names no flag of the field swept.
func TestSweepTooBigAdvice(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{"sweep sync-interval duration=10s,20s --max-requests 10", "about 4,200 in the first run (fewer values, or raise --max-requests)"},
		{"sweep sync-interval seed=1,2 --max-requests 10", "about 12,600 in the first run (fewer values, a shorter --duration, or raise --max-requests)"},
		{"sweep testdata/sweep-fit.yaml step=1s,2s --max-memory 20MiB", "(a lower --parallel or a shorter --duration, or raise --max-memory)"},
	} {
		code, out, errOut := runArgs(argv(tc.line)...)
		if code != exitTooBig || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: exit %d, %q; want %d, %q", tc.line, code, errOut, exitTooBig, tc.want)
		}
	}
}
