package main

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/live"
	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/scenarios/scenariotest"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/store"
)

func TestSimArgvToOptions(t *testing.T) {
	scenario := func(name string) func(*simOptions) { return func(o *simOptions) { o.Scenario = name } }
	testArgv(t, newCmdSim(streams{}, nil),
		func() simOptions {
			return simOptions{Scenario: "nat", Format: "table", Limits: defaultLimits(), Speed: 1, Plot: plotFlags{By: "client"}, over: noOverrides()}
		},
		func(p *parsed) *simOptions { return p.sim },
		[]argvCase[simOptions]{
			{line: "sim nat"},
			{line: "sim my-scenario.yaml", want: scenario("my-scenario.yaml"), code: exitBadInput},
			{line: "sim window-boundary --algorithm gcra --servers 3 --format json --vs servers=1", want: func(o *simOptions) {
				o.Scenario, o.Format, o.Vs = "window-boundary", "json", []string{"servers=1"}
				o.over.algorithm, o.over.servers = "gcra", "3"
				o.over.set = map[string]string{"algorithm": "gcra", "servers": "3"}
			}},
			{line: "sim nat --format csv -q --wide", want: func(o *simOptions) { o.Format, o.Quiet, o.Wide = "csv", true, true }},
			{line: "sim nat --format json --dense", want: func(o *simOptions) { o.Format, o.Dense = "json", true }},
			{line: "sim nat --quiet", want: func(o *simOptions) { o.Quiet = true }},
			{line: "sim nat --max-requests 500 --max-memory 64MiB", want: func(o *simOptions) { o.Limits.MaxRequests, o.Limits.MaxMemory = 500, "64MiB" }},
			{line: "sim nat --tui --speed max", code: exitBadInput, want: func(o *simOptions) { o.TUI, o.Speed = true, float64(speedMax()) }},
			{line: "sim nat --speed 2.5", want: func(o *simOptions) { o.Speed = 2.5 }},
			{line: "sim nat --live", want: func(o *simOptions) { o.Live = true }},
			{line: "sim store-outage --vs on_error=fail-closed --vs seed=3", want: func(o *simOptions) {
				o.Scenario, o.Vs = "store-outage", []string{"on_error=fail-closed", "seed=3"}
			}},
			{line: "sim nat --topology racy --store miniredis --balancer random --key ip --seed 7 --duration 10s --step 2s --on-error fail-closed --rtt 1ms", want: func(o *simOptions) {
				o.over = overrides{topology: "racy", store: "miniredis", balancer: "random", key: "ip", seed: "7", duration: "10s", step: "2s", onError: "fail-closed", rtt: "1ms",
					set: map[string]string{"topology": "racy", "store": "miniredis", "balancer": "random", "key": "ip", "seed": "7", "duration": "10s", "step": "2s", "on-error": "fail-closed", "rtt": "1ms"}}
			}},
			{line: "sim sync-interval --sweep sync-interval=0,100ms,never --parallel 2 --plot sweep.svg", want: func(o *simOptions) {
				o.Scenario, o.Sweep, o.Limits.Workers = "sync-interval", []string{"sync-interval=0,100ms,never"}, 2
				o.Plot = plotFlags{Path: "sweep.svg", By: "client"}
			}},
			{line: "sim two-regions --replication-lag 200ms", want: func(o *simOptions) {
				o.Scenario, o.over.replicationLag, o.over.set = "two-regions", "200ms", map[string]string{"replication-lag": "200ms"}
			}},
			{line: "sim sync-interval --sync-interval 10ms", want: func(o *simOptions) {
				o.Scenario, o.over.syncInterval, o.over.set = "sync-interval", "10ms", map[string]string{"sync-interval": "10ms"}
			}},
			{line: "sim nat --algorithm redis_rate --wall-clock 2026-11-24T10:00:00Z", want: func(o *simOptions) {
				o.over.algorithm, o.over.wallClock = "redis_rate", "2026-11-24T10:00:00Z"
				o.over.set = map[string]string{"algorithm": "redis_rate", "wall-clock": "2026-11-24T10:00:00Z"}
			}},
			{line: "sim api-quotas --shadow 15s", want: func(o *simOptions) {
				o.Scenario, o.over.shadow, o.over.set = "api-quotas", "15s", map[string]string{"shadow": "15s"}
			}},
			// A flag given its default value is still given: it overrides.
			{line: "sim nat --seed 0", want: func(o *simOptions) { o.over.seed, o.over.set = "0", map[string]string{"seed": "0"} }},
			{line: "sim nat --rate 20/s --burst 5 --set clients[0].count=3 --set topology.rtt=1ms", want: func(o *simOptions) {
				o.over.rate, o.over.burst = "20/s", "5"
				o.over.paths = []string{"clients[0].count=3", "topology.rtt=1ms"}
				o.over.set = map[string]string{"rate": "20/s", "burst": "5"}
			}},
			{line: "sim window-boundary --window 2s", want: func(o *simOptions) {
				o.Scenario, o.over.window, o.over.set = "window-boundary", "2s", map[string]string{"window": "2s"}
			}},
			// A field the run does not read: a fixed window has no burst.
			{line: "sim window-boundary --burst 5", code: exitBadInput, want: func(o *simOptions) {
				o.Scenario, o.over.burst, o.over.set = "window-boundary", "5", map[string]string{"burst": "5"}
			}},
			{line: "sim partition --vs topology.failover_after=5s --vs burst=40", want: func(o *simOptions) {
				o.Scenario, o.Vs = "partition", []string{"topology.failover_after=5s", "burst=40"}
			}},
			{line: "sim nat --plot out.png --plot-width 8 --plot-height 5.5 --by key", want: func(o *simOptions) {
				o.Plot = plotFlags{Path: "out.png", Width: 8, Height: 5.5, By: "key"}
			}},
		})
}

// speedMax is --speed max.
func speedMax() speedFlag {
	var s speedFlag
	s.Set("max")
	return s
}

func TestSimArgvToPlan(t *testing.T) {
	testPlans(t, []planCase{
		{line: "sim nat", check: func(t *testing.T, p *parsed) {
			// No flag: the scenario as its file has it.
			if !reflect.DeepEqual(p.simPlan.sc, scenariotest.Builtin(t, "nat")) || p.simPlan.vs != nil || boundsOf(p.simPlan.simOpts) != defaultBounds {
				t.Errorf("plan %+v, want nat as built in, no --vs, default bounds", p.simPlan)
			}
		}},
		{line: "sim window-boundary --algorithm gcra --servers 3 --format json --vs servers=1", check: func(t *testing.T, p *parsed) {
			a, b := p.simPlan.sc, p.simPlan.scB
			if a.Limit.Algorithm != "gcra" || a.Servers != 3 || b.Limit.Algorithm != "gcra" || b.Servers != 1 {
				t.Errorf("runs %s on %d servers vs %s on %d; want gcra on 3 vs gcra on 1", a.Limit.Algorithm, a.Servers, b.Limit.Algorithm, b.Servers)
			}
			if want := map[string]string{"servers": "1"}; !reflect.DeepEqual(p.simPlan.vs.set, want) {
				t.Errorf("--vs %v, want %v", p.simPlan.vs.set, want)
			}
		}},
		{line: "sim nat --topology racy --store miniredis --balancer random --key ip --seed 7 --duration 10s --step 2s --on-error fail-closed --rtt 1ms", check: func(t *testing.T, p *parsed) {
			sc := p.simPlan.sc
			got := []any{sc.Topology.Kind, sc.Topology.Store, sc.Balancer, sc.Limit.Key, sc.Seed, sc.Duration, sc.Step, sc.Topology.OnError, sc.Topology.RTT}
			want := []any{sim.Racy, "miniredis", sim.Random, sim.KeyIP, uint64(7), 10 * time.Second, 2 * time.Second, store.FailClosed, time.Millisecond}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("scenario fields %v, want %v", got, want)
			}
		}},
		{line: "sim api-quotas --shadow 15s", check: func(t *testing.T, p *parsed) {
			sc := p.simPlan.sc
			for _, l := range sc.Limits() {
				if !l.Shadow || l.ShadowUntil != 15*time.Second {
					t.Errorf("limit %s: shadow %v until %s, want shadowed until 15s", l.Name, l.Shadow, l.ShadowUntil)
				}
			}
			if orig := scenariotest.Builtin(t, "api-quotas"); orig.Also[0].Shadow {
				t.Error("the override changed the built-in's own limits")
			}
		}},
		{line: "sim sync-interval --sweep sync_interval=0,100ms,never --parallel 5 --max-memory 64MiB", check: func(t *testing.T, p *parsed) {
			// A run per value, in the order given, each with its value,
			// planned as ratelim sweep plans one: no more workers than
			// runs, each run its share of --max-memory.
			sp := p.simPlan.sweep
			var got []string
			for i := range sp.runs {
				sc, err := sp.scenarioOf(i)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, scenarioSetting(sc, "sync-interval"))
			}
			if want := []string{"0s", "100ms", "never"}; !reflect.DeepEqual(got, want) || sp.axes[0].field != "sync-interval" {
				t.Errorf("sweep of %q over %v, want sync-interval over %v", sp.axes[0].field, got, want)
			}
			if sp.workers != 3 || sp.maxMemory != 64<<20 || sp.simOpts.MaxMemory != 64<<20/3 || sp.current != 1 {
				t.Errorf("%d workers, %d bytes in all, %d a run, current %d; want 3 (one per run), 64MiB, a third each, the file's 100ms", sp.workers, sp.maxMemory, sp.simOpts.MaxMemory, sp.current)
			}
		}},
		{line: "sim nat --max-requests 500 --max-memory 64MiB", check: func(t *testing.T, p *parsed) {
			if want := (simBounds{500, 64 << 20}); boundsOf(p.simPlan.simOpts) != want {
				t.Errorf("simulator options %+v, want %+v", p.simPlan.simOpts, want)
			}
		}},
		{line: "sim nat --max-memory 8GB", check: func(t *testing.T, p *parsed) {
			if p.simPlan.simOpts.MaxMemory != 8e9 {
				t.Errorf("--max-memory 8GB is %d bytes, want 8e9", p.simPlan.simOpts.MaxMemory)
			}
		}},
		{line: "sim -", stdin: smallScenario, check: func(t *testing.T, p *parsed) {
			if p.simPlan.sc.Name != "small" || p.simPlan.file.Path != "stdin" {
				t.Errorf("read %q from %q, want small from stdin", p.simPlan.sc.Name, p.simPlan.file.Path)
			}
		}},
	})
}

func TestSimRefusesBadFlags(t *testing.T) {
	testRefusals(t, []refusal{
		{"sim", exitBadInput, []string{"scenario name or file"}},
		{"sim nat extra", exitBadInput, []string{"got 2 arguments"}},
		{"sim nat --no-such-flag", exitBadInput, []string{"unknown flag: --no-such-flag"}},
		{"sim nat -x", exitBadInput, []string{"unknown shorthand flag: 'x'"}},
		{"sim nat --format xml", exitBadInput, []string{"--format", `"xml"`, "table, json or csv"}},
		{"sim nat --quiet=maybe", exitBadInput, []string{"--quiet", `"maybe"`}},
		{"sim nat --wide=2", exitBadInput, []string{"--wide", `"2"`}},
		{"sim nat --servers abc", exitBadInput, []string{"--servers", `"abc"`}},
		{"sim nat --servers 0", exitBadInput, []string{"--servers"}},
		{"sim nat --servers -1", exitBadInput, []string{"--servers"}},
		{"sim nat --servers 1025", exitBadInput, []string{"--servers", "1024"}},
		{"sim nat --servers 99999999999999999999", exitBadInput, []string{"--servers: 99999999999999999999 is too large (want at most 1024)"}},
		{"sim partition --servers 2", exitBadInput, []string{"--servers 2: faults[0].groups[1][0] " + partitionFault + ": server 2 does not exist"}},
		{"sim nat --seed -1", exitBadInput, []string{"--seed: -1 is not a whole number from 0 to 2^64-1"}},
		{"sim nat --seed 18446744073709551616", exitBadInput, []string{"--seed: 18446744073709551616 is not a whole number from 0 to 2^64-1"}},
		{"sim nat --seed x", exitBadInput, []string{`--seed: "x" is not a whole number`}},
		{"sim nat --rate 0/s", exitBadInput, []string{`--rate: "0/s" is not a positive rate (want e.g. 100/s)`}},
		{"sim nat --burst x", exitBadInput, []string{`--burst: "x" is not a whole number (want e.g. 50)`}},
		{"sim window-boundary --window 1ns", exitBadInput, []string{"--window: 1ns is finer than the simulator's microsecond"}},
		{"sim api-quotas --rate 5/s", exitBadInput, []string{"--rate: this file has limits:, not limit: (want limits[NAME].rate, NAME one of per-second or hourly)"}},
		{"sim nat --set limit.burst", exitBadInput, []string{`--set "limit.burst": want PATH=VALUE`}},
		{"sim nat --set limit.brust=5", exitBadInput, []string{`--set limit.brust: unknown field, did you mean "burst"?`}},
		{"sim nat --set clients[9].count=2", exitBadInput, []string{"--set clients[9].count: clients[9] is out of range"}},
		{"sim nat --burst 5 --set limit.burst=6", exitBadInput, []string{"--burst: --set limit.burst already sets it (want it once)"}},
		{"sim partition --set faults[0].start=25s", exitBadInput, []string{"--set faults[0].start=25s: faults[0].end (line "}},
		{"sim nat --vs limit.rate=abc", exitBadInput, []string{`--vs limit.rate: "abc" is not a rate (want e.g. 100/s)`}},
		{"sim nat --vs burst=", exitBadInput, []string{"--vs burst: missing value (want a whole number, e.g. 50)"}},
		{"sim nat --vs brust=5", exitBadInput, []string{`--vs brust: unknown setting "brust", did you mean "burst"?`}},
		{"sim nat --vs burst=5 --vs limit.burst=6", exitBadInput, []string{"--vs limit.burst: --vs burst already sets it (want it once)"}},
		{"sim store-outage --vs on_error=fail-closed --vs topology.on_error=fail-open", exitBadInput, []string{"--vs topology.on_error: --vs on-error already sets it (want it once)"}},
		{"sim nat --vs clients[0].traffic.rate=1/s --vs clients[office-{i}].traffic.rate=2/s", exitBadInput, []string{"--vs clients[office-{i}].traffic.rate: --vs clients[0].traffic.rate already sets it (want it once)"}},
		{"sim store-outage --on-error fail-open --set topology.on_error=fail-closed", exitBadInput, []string{"--on-error: --set topology.on_error already sets it (want it once)"}},
		{`sim nat --set limit={"rate":"1/s","burst":3} --burst 9`, exitBadInput, []string{"--burst: --set limit already sets limit, which holds it (want one of them)"}},
		{"sim nat --duration soon", exitBadInput, []string{"--duration", `"soon"`}},
		{"sim nat --duration 1ns", exitBadInput, []string{"--duration", "microsecond"}},
		{"sim nat --duration 0s", exitBadInput, []string{"--duration"}},
		{"sim nat --duration -5s", exitBadInput, []string{"--duration"}},
		{"sim nat --duration 8761h", exitBadInput, []string{"--duration", "a year"}},
		{"sim nat --step 0s", exitBadInput, []string{"--step", "not positive"}},
		{"sim nat --step 1m", exitBadInput, []string{"--step", "longer than the duration 30s"}},
		{"sim nat --duration 5s --step 10s", exitBadInput, []string{"--step", "longer than the duration 5s"}},
		{"sim nat --rtt 1ns", exitBadInput, []string{"--rtt"}},
		{"sim nat --rtt slow", exitBadInput, []string{"--rtt", `"slow"`}},
		{"sim nat --algorithm nope", exitBadInput, []string{"--algorithm", `"nope"`}},
		{"sim nat --topology mesh", exitBadInput, []string{"--topology", `"mesh"`}},
		{"sim nat --store redis://", exitBadInput, []string{"--store", "no host"}},
		{"sim nat --store bogus", exitBadInput, []string{"--store", `"bogus"`}},
		{"sim nat --balancer sideways", exitBadInput, []string{"--balancer", `"sideways"`}},
		{"sim nat --key face", exitBadInput, []string{"--key", `"face"`}},
		{"sim nat --on-error maybe", exitBadInput, []string{"--on-error", `"maybe"`}},
		{"sim nat --max-requests 0", exitBadInput, []string{"--max-requests", "at least 1"}},
		{"sim nat --max-requests -5", exitBadInput, []string{"--max-requests", "at least 1"}},
		{"sim nat --max-requests lots", exitBadInput, []string{"--max-requests", `"lots"`}},
		{"sim nat --max-memory lots", exitBadInput, []string{"--max-memory", `"lots"`}},
		{"sim nat --max-memory 1KB", exitBadInput, []string{"--max-memory", "too little"}},
		{"sim nat --speed 0", exitBadInput, []string{"--speed", "positive"}},
		{"sim nat --speed fast", exitBadInput, []string{"--speed", "or max"}},
		{"sim nat --tui", exitBadInput, []string{"--tui needs a terminal"}},
		{"sim nat --tui --live", exitBadInput, []string{"--live and --tui"}},
		{"sim nat --vs servers", exitBadInput, []string{"--vs", "FIELD=VALUE"}},
		{"sim nat --vs colour=red", exitBadInput, []string{"--vs", `"colour"`}},
		{"sim nat --vs seed=1 --vs seed=2", exitBadInput, []string{"--vs seed: given twice (want it once)"}},
		{"sim nat --vs servers=5000", exitBadInput, []string{"--vs servers", "1024"}},
		{"sim nat --vs seed=2 --live", exitBadInput, []string{"--vs and --live"}},
		{"sim nat --vs seed=2 --plot x.gif", exitBadInput, []string{"--plot", ".png or .svg"}},
		{"sim nat --plot out.jpg", exitBadInput, []string{"--plot", `".jpg"`}},
		{"sim nat --plot out.png --plot-width -1", exitBadInput, []string{"--plot-width", "0 (the plot's own size) or 1 to 120 inches", "(got -1)"}},
		{"sim nat --plot out.png --plot-width NaN", exitBadInput, []string{"--plot-width", "(got NaN)"}},
		{"sim nat --plot out.png --plot-width +Inf", exitBadInput, []string{"--plot-width", "(got +Inf)"}},
		{"sim nat --plot out.png --plot-width 121", exitBadInput, []string{"--plot-width", "120 inches"}},
		{"sim nat --plot out.svg --plot-height 1e-300", exitBadInput, []string{"--plot-height", "(got 1e-300)"}},
		{"sim nat --plot out.gif --plot-height 0.5", exitBadInput, []string{"--plot-height", "(got 0.5)"}},
		{"sim nat --plot out.png --plot-height wide", exitBadInput, []string{"--plot-height", `"wide"`}},
		{"sim nat --by server", exitBadInput, []string{"--by", `"server"`}},
		{"sim sync-interval --sweep sync-interval", exitBadInput, []string{"--sweep", "FIELD=V1,V2"}},
		{"sim sync-interval --sweep =0,1s", exitBadInput, []string{"--sweep", "FIELD=V1,V2"}},
		{"sim sync-interval --sweep colour=red,blue", exitBadInput, []string{"--sweep: colour: ", `unknown setting "colour"`}},
		{"sim sync-interval --sweep sync-interval=", exitBadInput, []string{"--sweep sync-interval", "no values"}},
		{"sim sync-interval --sweep sync-interval=0,,1s", exitBadInput, []string{"--sweep sync-interval", "value 2 of 3 is empty"}},
		{"sim sync-interval --sweep sync-interval=0,1s,", exitBadInput, []string{"--sweep sync-interval", "value 3 of 3 is empty"}},
		{"sim sync-interval --sweep sync-interval=0,1s,0", exitBadInput, []string{"--sweep sync-interval", "0 given twice"}},
		{"sim sync-interval --sweep sync-interval=100ms,0.1s", exitBadInput, []string{"--sweep sync-interval: sync-interval 0.1s runs the scenario sync-interval 100ms does"}},
		{"sim sync-interval --sweep sync-interval=" + strings.Repeat("1s,", 32) + "1s", exitBadInput, []string{"--sweep sync-interval", "33 values", "at most 32"}},
		{"sim sync-interval --sweep sync-interval=0,soon", exitBadInput, []string{"--sweep sync-interval", `"soon"`}},
		{"sim nat --sweep sync-interval=0,1s", exitBadInput, []string{"--sweep sync-interval", "only a synced topology"}},
		{"sim nat --sweep servers=1,5000", exitBadInput, []string{"--sweep servers", "1024"}},
		{"sim sync-interval --sweep seed=1,2 --sweep servers=1,2", exitBadInput, []string{"--sweep", "given 2 times"}},
		{"sim sync-interval --sweep seed=1,2 --vs servers=1", exitBadInput, []string{"--sweep and --vs"}},
		{"sim sync-interval --sweep seed=1,2 --tui", exitBadInput, []string{"--sweep and --tui"}},
		{"sim sync-interval --sweep seed=1,2 --live", exitBadInput, []string{"--sweep and --live"}},
		{"sim sync-interval --sweep seed=1,2 --plot x.gif", exitBadInput, []string{"--plot", "still chart"}},
		{"sim sync-interval --sweep seed=1,2 --seed 3", exitBadInput, []string{"--sweep seed: also set as --seed (want the field in one place)"}},
		{"sim sync-interval --sweep seed=1,2 --parallel -1", exitBadInput, []string{"--parallel: -1 is less than 0 (want 0 for one run per core, or more)"}},
		{"sim sync-interval --parallel 2", exitBadInput, []string{"--parallel", "with --sweep"}},
	})
}

func TestCompareArgvToOptions(t *testing.T) {
	testArgv(t, newCmdCompare(streams{}, nil),
		func() compareOptions {
			// Every algorithm and every topology.
			return compareOptions{Scenario: "nat", Algorithms: []string{"exact"}, Topologies: []string{string(sim.Local), string(sim.Shared), string(sim.Racy), string(sim.SplitBrain), string(sim.Cluster)},
				Format: "table", Limits: parallelLimits(), over: noOverrides()}
		},
		func(p *parsed) *compareOptions { return p.compare },
		[]argvCase[compareOptions]{
			{line: "compare nat"},
			{line: "compare nat --algorithms gcra,sliding-log --topologies local --format csv", want: func(o *compareOptions) {
				o.Algorithms, o.Topologies, o.Format = []string{"gcra", "sliding-log"}, []string{"local"}, "csv"
			}},
			{line: "compare nat --algorithms gcra --algorithms fixed-window", want: func(o *compareOptions) { o.Algorithms = []string{"gcra", "fixed-window"} }},
			{line: "compare nat --max-requests 9 --max-memory 1GiB --parallel 3", want: func(o *compareOptions) {
				o.Limits = runLimits{MaxRequests: 9, MaxMemory: "1GiB", Workers: 3, parallel: true}
			}},
			{line: "compare window-boundary --window 2s", want: func(o *compareOptions) {
				o.Scenario, o.over.window, o.over.set = "window-boundary", "2s", map[string]string{"window": "2s"}
			}},
			{line: "compare nat --rate 20/s --burst 5 --set topology.store=memory --balancer random --key ip --step 500ms --rtt 1ms --shadow true --wall-clock 2026-11-24T10:00:00Z", want: func(o *compareOptions) {
				o.over = overrides{rate: "20/s", burst: "5", paths: []string{"topology.store=memory"}, balancer: "random", key: "ip", step: "500ms", rtt: "1ms", shadow: "true", wallClock: "2026-11-24T10:00:00Z",
					set: map[string]string{"rate": "20/s", "burst": "5", "balancer": "random", "key": "ip", "step": "500ms", "rtt": "1ms", "shadow": "true", "wall-clock": "2026-11-24T10:00:00Z"}}
			}},
			{line: "compare nat --vs burst=40 --vs topology.rtt=2ms", want: func(o *compareOptions) { o.Vs = []string{"burst=40", "topology.rtt=2ms"} }},
			{line: "compare nat --vs burst=40 --plot grid.png", code: exitBadInput, want: func(o *compareOptions) {
				o.Vs, o.Plot = []string{"burst=40"}, plotFlags{Path: "grid.png"}
			}},
			{line: "compare sync-interval --sync-interval 10ms", want: func(o *compareOptions) {
				o.Scenario, o.over.syncInterval, o.over.set = "sync-interval", "10ms", map[string]string{"sync-interval": "10ms"}
			}},
			{line: "compare partition --replication-lag 5ms", want: func(o *compareOptions) {
				o.Scenario, o.over.replicationLag, o.over.set = "partition", "5ms", map[string]string{"replication-lag": "5ms"}
			}},
			{line: "compare nat --store miniredis --servers 2 --seed 5 --duration 2s --on-error fail-open", want: func(o *compareOptions) {
				o.over = overrides{store: "miniredis", servers: "2", seed: "5", duration: "2s", onError: "fail-open",
					set: map[string]string{"store": "miniredis", "servers": "2", "seed": "5", "duration": "2s", "on-error": "fail-open"}}
			}},
			{line: "compare nat --plot grid.svg --plot-width 10 --plot-height 4", want: func(o *compareOptions) {
				o.Plot = plotFlags{Path: "grid.svg", Width: 10, Height: 4}
			}},
		})
}

func TestCheckArgvToOptions(t *testing.T) {
	limits := parallelLimits()
	testArgv(t, newCmdCheck(streams{}, nil),
		func() checkOptions { return checkOptions{Paths: []string{}, Format: "text", Limits: limits} },
		func(p *parsed) *checkOptions { return p.check },
		[]argvCase[checkOptions]{
			{line: "check", code: exitBadInput},
			{line: "check --builtins", want: func(o *checkOptions) { o.Builtins = true }},
			{line: "check nat --builtins", want: func(o *checkOptions) { o.Paths, o.Builtins = []string{"nat"}, true }},
			{line: "check nat window-boundary --format json", want: func(o *checkOptions) { o.Paths, o.Format = []string{"nat", "window-boundary"}, "json" }},
			{line: "check nat --junit report.xml --store miniredis", want: func(o *checkOptions) { o.Paths, o.JUnit, o.Store = []string{"nat"}, "report.xml", "miniredis" }},
			{line: "check nat --max-requests 100000 --max-memory 2GB --parallel 1", want: func(o *checkOptions) {
				o.Paths, o.Limits = []string{"nat"}, runLimits{MaxRequests: 100000, MaxMemory: "2GB", Workers: 1, parallel: true}
			}},
			// A live check's runs are bounded as load's are, unless
			// --max-requests says otherwise.
			{line: "check nat --target http://127.0.0.1:8080,http://127.0.0.1:8081 --target http://[::1]:8082", want: func(o *checkOptions) {
				o.Paths, o.Limits.MaxRequests = []string{"nat"}, live.DefaultMaxRequests
				o.Live.Given, o.Live.Targets = true, []string{"http://127.0.0.1:8080", "http://127.0.0.1:8081", "http://[::1]:8082"}
			}},
			{line: "check nat --target http://10.0.0.2:80 --path /v1/items --allow-remote --max-requests 500 --httplimit-headers", want: func(o *checkOptions) {
				o.Paths, o.Limits.MaxRequests = []string{"nat"}, 500
				o.Live = liveTargets{Given: true, Targets: []string{"http://10.0.0.2:80"}, Path: "/v1/items", AllowRemote: true, Told: true}
			}},
			{line: "check store-outage --target http://127.0.0.1:8080 --control http://127.0.0.1:4000 --token s3cret --junit -", want: func(o *checkOptions) {
				o.Paths, o.Limits.MaxRequests, o.JUnit = []string{"store-outage"}, live.DefaultMaxRequests, "-"
				o.Live = liveTargets{Given: true, Targets: []string{"http://127.0.0.1:8080"}, Control: "http://127.0.0.1:4000", Token: "s3cret"}
			}},
		})
}

func TestReportArgvToOptions(t *testing.T) {
	testArgv(t, newCmdReport(streams{}, nil),
		func() reportOptions {
			return reportOptions{Scenario: "nat", Output: "nat.html", Image: "png", Limits: defaultLimits(), Plot: plotFlags{By: "client"}, over: noOverrides()}
		},
		func(p *parsed) *reportOptions { return p.report },
		[]argvCase[reportOptions]{
			{line: "report nat -o nat.html"},
			{line: "report two-regions -o nat.html --replication-lag never", want: func(o *reportOptions) {
				o.Scenario, o.over.replicationLag, o.over.set = "two-regions", "never", map[string]string{"replication-lag": "never"}
			}},
			{line: "report sync-interval -o nat.html --sync-interval never", want: func(o *reportOptions) {
				o.Scenario, o.over.syncInterval, o.over.set = "sync-interval", "never", map[string]string{"sync-interval": "never"}
			}},
			{line: "report nat", code: exitBadInput, want: func(o *reportOptions) { o.Output = "" }},
			{line: "report nat --output - --image svg --by key", want: func(o *reportOptions) { o.Output, o.Image, o.Plot.By = "-", "svg", "key" }},
			{line: "report nat -o nat.html --plot-width 9 --plot-height 12", want: func(o *reportOptions) { o.Plot.Width, o.Plot.Height = 9, 12 }},
			{line: "report nat -o nat.html --max-requests 50000 --max-memory 128MiB", want: func(o *reportOptions) {
				o.Limits.MaxRequests, o.Limits.MaxMemory = 50000, "128MiB"
			}},
			{line: "report nat -o nat.html --algorithm gcra --topology racy --store memory --servers 2 --balancer key-hash --key user --seed 9 --duration 3s --step 100ms --on-error fail-closed --rtt 2ms", want: func(o *reportOptions) {
				o.over = overrides{algorithm: "gcra", topology: "racy", store: "memory", servers: "2", balancer: "key-hash", key: "user", seed: "9", duration: "3s", step: "100ms", onError: "fail-closed", rtt: "2ms",
					set: map[string]string{"algorithm": "gcra", "topology": "racy", "store": "memory", "servers": "2", "balancer": "key-hash", "key": "user", "seed": "9", "duration": "3s", "step": "100ms", "on-error": "fail-closed", "rtt": "2ms"}}
			}},
			{line: "report window-boundary -o nat.html --window 2s", want: func(o *reportOptions) {
				o.Scenario, o.over.window, o.over.set = "window-boundary", "2s", map[string]string{"window": "2s"}
			}},
			{line: "report nat -o nat.html --rate 20/s --burst 5 --set clients[0].count=3 --set topology.rtt=1ms", want: func(o *reportOptions) {
				o.over.rate, o.over.burst = "20/s", "5"
				o.over.paths = []string{"clients[0].count=3", "topology.rtt=1ms"}
				o.over.set = map[string]string{"rate": "20/s", "burst": "5"}
			}},
			{line: "report partition -o nat.html --vs topology.failover_after=5s --vs on_error=fail-closed", want: func(o *reportOptions) {
				o.Scenario, o.Vs = "partition", []string{"topology.failover_after=5s", "on_error=fail-closed"}
			}},
			{line: "report nat -o nat.html --vs brust=5", code: exitBadInput, want: func(o *reportOptions) { o.Vs = []string{"brust=5"} }},
			{line: "report nat -o nat.html --shadow true", want: func(o *reportOptions) {
				o.over.shadow, o.over.set = "true", map[string]string{"shadow": "true"}
			}},
			{line: "report nat -o nat.html --wall-clock 2026-11-24T10:00:00Z", want: func(o *reportOptions) {
				o.over.wallClock, o.over.set = "2026-11-24T10:00:00Z", map[string]string{"wall-clock": "2026-11-24T10:00:00Z"}
			}},
		})
}

// The plot's sizes are taken from 1 to 120 inches, and 0 for its own.
func TestPlotSizesAtTheirBounds(t *testing.T) {
	for _, line := range []string{
		"sim nat --plot out.png --plot-width 1 --plot-height 120",
		"sim nat --plot out.png --plot-width 120 --plot-height 1",
		"sim nat --plot out.svg --plot-width 0 --plot-height 0",
		"compare nat --plot grid.png --plot-width 120",
		"report nat -o nat.html --plot-width 1 --plot-height 120",
		"load nat --plot live.png --plot-width 120 --plot-height 1",
	} {
		if p := parseArgs("", argv(line)...); p.code != exitOK {
			t.Errorf("%s: exit %d, stderr %q; want it taken", line, p.code, p.stderr)
		}
	}
}

func TestCompareArgvToPlan(t *testing.T) {
	testPlans(t, []planCase{
		{line: "compare nat --algorithms gcra,sliding-log --topologies local,shared --servers 2 --seed 5", check: func(t *testing.T, p *parsed) {
			var got []string
			for i, c := range p.comparePl.cells {
				sc := p.comparePl.scs[i]
				got = append(got, fmt.Sprintf("%s/%s=%s/%s/%d/%d", c.Algorithm, c.Topology, sc.Limit.Algorithm, sc.Topology.Kind, sc.Servers, sc.Seed))
			}
			want := []string{"gcra/local=gcra/local/2/5", "gcra/shared=gcra/shared/2/5", "sliding-log/local=sliding-log/local/2/5", "sliding-log/shared=sliding-log/shared/2/5"}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("cells %v, want %v", got, want)
			}
		}},
		{line: "compare nat", check: func(t *testing.T, p *parsed) {
			if n, want := len(p.comparePl.cells), len(algorithms.ExactNames())*5; n != want || boundsOf(p.comparePl.simOpts) != defaultBounds {
				t.Errorf("%d cells with %+v, want %d with the default bounds", n, p.comparePl.simOpts, want)
			}
		}},
	})
}

func TestCheckArgvToPlan(t *testing.T) {
	// A file with a with: that only changes the traffic, one that
	// changes the limiter, and a scenario with faults.
	withs := writeScenario(t, "withs.yaml", smallScenario+`  - {client: polite, rejected: {max: 0}, with: {seed: 3, duration: 2s}}
  - {client: polite, rejected: {max: 0}, with: {algorithm: gcra}}
`)
	const targets = " --target http://127.0.0.1:1,http://127.0.0.1:2,http://127.0.0.1:3"
	testPlans(t, []planCase{
		// The targets are the servers; each with: runs unless it changes
		// the limiter, which is the targets'.
		{line: "check " + withs + targets, check: func(t *testing.T, p *parsed) {
			lp := p.checkPlan.live
			if lp == nil || len(p.checkPlan.jobs) != 3 {
				t.Fatalf("plan %+v, want a live plan of 3 jobs", p.checkPlan)
			}
			var got []string
			for i, sc := range p.checkPlan.scs {
				got = append(got, fmt.Sprintf("%d/%s/%v/%v", sc.Servers, sc.Duration, lp.skips[i] != "", lp.refused[i] != nil))
			}
			if want := "3/5s/false/false 3/2s/false/false 2/5s/true/false"; strings.Join(got, " ") != want {
				t.Errorf("jobs (servers/duration/skipped/refused) %s, want %s", strings.Join(got, " "), want)
			}
			if !strings.Contains(lp.skips[2], "with: algorithm") || lp.load.MaxRequests != live.DefaultMaxRequests || lp.check.Told {
				t.Errorf("skip %q, load %+v, check %+v: want the algorithm named, load's bound, no headers trusted", lp.skips[2], lp.load, lp.check)
			}
		}},
		// Faults cannot be applied to a service without a fleet's
		// control listener: the scenario is skipped, saying which.
		{line: "check store-outage" + targets, check: func(t *testing.T, p *parsed) {
			// Its with: on_error changes the limiter, and is skipped for it
			// first.
			skips := p.checkPlan.live.skips
			if len(skips) != 2 || !strings.Contains(skips[0], "its faults (outage 10s–20s) cannot be applied") || !strings.Contains(skips[1], "with: on_error") {
				t.Errorf("skipped for %q, want the outage named, then the with:", skips)
			}
		}},
		{line: "check store-outage" + targets + " --control http://127.0.0.1:4 --token t", check: func(t *testing.T, p *parsed) {
			lp := p.checkPlan.live
			if lp.skips[0] != "" || lp.load.OnFault == nil || !lp.check.Told {
				t.Errorf("skip %q, OnFault set %v, told %v: want the faults applied through --control, and its headers read", lp.skips[0], lp.load.OnFault != nil, lp.check.Told)
			}
		}},
		// Over --max-requests is refused before anything is sent; the
		// other files still run.
		{line: "check " + withs + " nat" + targets + " --max-requests 300", check: func(t *testing.T, p *parsed) {
			lp := p.checkPlan.live
			var got []string
			for i, err := range lp.refused {
				got = append(got, fmt.Sprintf("%v", sim.IsTooBig(err)))
				if i == 0 && (err == nil || !strings.Contains(err.Error(), "would send about 525 requests for real, more than 300")) {
					t.Errorf("refused %v, want the estimate against the bound", err)
				}
			}
			if want := "true false false true"; strings.Join(got, " ") != want {
				t.Errorf("refused as too big: %s, want %s (the 5 s run, the 2 s one, the one skipped, nat)", strings.Join(got, " "), want)
			}
		}},
		{line: "check --builtins", check: func(t *testing.T, p *parsed) {
			if len(p.checkPlan.files) != len(scenarios.Builtin()) || boundsOf(p.checkPlan.simOpts) != defaultBounds {
				t.Errorf("%d files with %+v, want every built-in with the default bounds", len(p.checkPlan.files), p.checkPlan.simOpts)
			}
		}},
		{line: "check nat --store miniredis --max-requests 777", check: func(t *testing.T, p *parsed) {
			for _, sc := range p.checkPlan.scs {
				if sc.Topology.Store != "miniredis" {
					t.Errorf("%s runs on %q, want miniredis", sc.Name, sc.Topology.Store)
				}
			}
			if p.checkPlan.simOpts.MaxRequests != 777 || len(p.checkPlan.scs) == 0 {
				t.Errorf("%d runs with %+v, want some with MaxRequests 777", len(p.checkPlan.scs), p.checkPlan.simOpts)
			}
		}},
		{line: "check -", stdin: smallScenario, check: func(t *testing.T, p *parsed) {
			if len(p.checkPlan.files) != 1 || scenarioLabel(p.checkPlan.files[0]) != "stdin" {
				t.Errorf("files %v, want stdin alone", p.checkPlan.files)
			}
		}},
		{line: "check nat --builtins", check: func(t *testing.T, p *parsed) {
			if n := len(p.checkPlan.files); n != len(scenarios.Builtin())+1 {
				t.Errorf("%d files, want every built-in and nat again", n)
			}
		}},
		// A file that cannot be opened is its entry's error, planned
		// beside the others, which still run.
		{line: "check nat no-such-file.yaml window-boundary", check: func(t *testing.T, p *parsed) {
			var labels []string
			for _, e := range p.checkPlan.entries {
				labels = append(labels, fmt.Sprintf("%s/%v", e.label, e.err != nil))
			}
			if got := strings.Join(labels, " "); got != "nat/false no-such-file.yaml/true window-boundary/false" || len(p.checkPlan.files) != 2 {
				t.Errorf("entries %s with %d files, want nat and window-boundary planned and the missing file an error", got, len(p.checkPlan.files))
			}
		}},
	})
}

func TestReportArgvToPlan(t *testing.T) {
	testPlans(t, []planCase{
		{line: "report nat -o nat.html --image svg --servers 3 --max-requests 1000", check: func(t *testing.T, p *parsed) {
			if p.reportPlan.sc.Servers != 3 || p.reportPlan.simOpts.MaxRequests != 1000 {
				t.Errorf("plan %+v, want 3 servers and MaxRequests 1000", p.reportPlan)
			}
		}},
	})
}

func TestCompareRefusesBadFlags(t *testing.T) {
	testRefusals(t, []refusal{
		{"compare", exitBadInput, []string{"scenario name or file"}},
		{"compare nat --algorithm gcra", exitBadInput, []string{"unknown flag: --algorithm"}},
		{"compare nat --algorithms nope", exitBadInput, []string{"--algorithms", `"nope"`}},
		{"compare nat --topologies mesh", exitBadInput, []string{"--topologies", `"mesh"`}},
		{"compare nat --format yaml", exitBadInput, []string{"--format", `"yaml"`}},
		{"compare nat --plot grid.gif", exitBadInput, []string{"--plot", "still grid"}},
		{"compare nat --parallel -1", exitBadInput, []string{"--parallel"}},
		{"compare nat --parallel many", exitBadInput, []string{"--parallel", `"many"`}},
		{"compare nat --max-requests 0", exitBadInput, []string{"--max-requests"}},
		{"compare nat --max-memory 1B", exitBadInput, []string{"--max-memory"}},
		{"compare nat --servers 0", exitBadInput, []string{"--servers"}},
		{"compare nat --seed x", exitBadInput, []string{"--seed"}},
		{"compare nat --duration 1ns", exitBadInput, []string{"--duration"}},
		{"compare nat --on-error maybe", exitBadInput, []string{"--on-error"}},
		{"compare nat --store redis://", exitBadInput, []string{"--store"}},
		{"compare nat --plot grid.png --plot-width -2", exitBadInput, []string{"--plot-width"}},
		{"compare nat --plot grid.png --plot-height Inf", exitBadInput, []string{"--plot-height", "(got +Inf)"}},
	})
}

func TestCheckRefusesBadFlags(t *testing.T) {
	testRefusals(t, []refusal{
		// Nothing named fails, so that an empty $FILES in CI does not pass.
		{"check", exitBadInput, []string{"nothing to check", "--builtins"}},
		{"check --junit report.xml", exitBadInput, []string{"nothing to check", "--builtins"}},
		{"check --format json5", exitBadInput, []string{"--format", `"json5"`, "text or json"}},
		{"check --junit", exitBadInput, []string{"--junit", "needs an argument"}},
		{"check --max-requests 0", exitBadInput, []string{"--max-requests"}},
		{"check --max-memory 0", exitBadInput, []string{"--max-memory"}},
		{"check --parallel -3", exitBadInput, []string{"--parallel"}},
		{"check --servers 2", exitBadInput, []string{"unknown flag: --servers"}},
		// --store is read as the file's field, as sim's is: a URL with no
		// host would otherwise dial go-redis's default, localhost:6379.
		{"check nat --store redis://", exitBadInput, []string{"--store", "no host"}},
		{"check nat --store bogus", exitBadInput, []string{"--store", `"bogus"`, "redis+cluster://"}},
		{"check nat --store http://cache:6379", exitBadInput, []string{"--store", `"http"`}},
		// A live check's flags.
		{"check nat --target http://10.9.8.7:8080", exitBadInput, []string{"--target: 10.9.8.7:8080 is not a loopback address", "pass --allow-remote"}},
		{"check nat --target nonsense", exitBadInput, []string{"--target", `"nonsense" is not an http URL`}},
		{"check nat --target http://127.0.0.1:1 --store miniredis", exitBadInput, []string{"--store", "the targets' own store"}},
		{"check nat --target http://127.0.0.1:1 --control http://127.0.0.1:2", exitBadInput, []string{"--control and --token", "give both"}},
		{"check nat --target http://127.0.0.1:1 --control http://10.0.0.1:2 --token t", exitBadInput, []string{"--control", "not on this machine"}},
		{"check nat --allow-remote", exitBadInput, []string{"--allow-remote: only for a live check", "--target"}},
		{"check nat --control http://127.0.0.1:2 --token t", exitBadInput, []string{"--control: only for a live check"}},
		{"check nat --httplimit-headers", exitBadInput, []string{"--httplimit-headers: only for a live check"}},
		{"check nat --target http://127.0.0.1:1 --max-requests 0", exitBadInput, []string{"--max-requests"}},
	})
}

func TestReportRefusesBadFlags(t *testing.T) {
	testRefusals(t, []refusal{
		{"report nat", exitBadInput, []string{"-o", "report.html"}},
		{"report nat -o", exitBadInput, []string{"-o", "needs an argument"}},
		{"report nat -o x.html --image gif", exitBadInput, []string{"--image", `"gif"`}},
		{"report nat -o x.html --by server", exitBadInput, []string{"--by"}},
		{"report nat -o x.html --plot-width -1", exitBadInput, []string{"--plot-width"}},
		{"report nat -o x.html --plot-height NaN", exitBadInput, []string{"--plot-height", "(got NaN)"}},
		{"report nat -o x.html --plot-width 1000", exitBadInput, []string{"--plot-width", "(got 1000)"}},
		{"report nat -o x.html --max-requests 0", exitBadInput, []string{"--max-requests"}},
		{"report nat -o x.html --max-memory x", exitBadInput, []string{"--max-memory"}},
		{"report nat -o x.html --servers 0", exitBadInput, []string{"--servers"}},
		{"report nat -o x.html --rtt 1ns", exitBadInput, []string{"--rtt"}},
		{"report nat -o x.html --plot x.png", exitBadInput, []string{"unknown flag: --plot"}},
	})
}
