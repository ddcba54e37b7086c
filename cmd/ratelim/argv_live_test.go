package main

import (
	"net/netip"
	"reflect"
	"testing"

	"github.com/ratelim/ratelim/live"
	"github.com/ratelim/ratelim/scenarios/scenariotest"
)

func TestServeArgvToOptions(t *testing.T) {
	testArgv(t, newCmdServe(streams{}, nil),
		func() serveOptions {
			return serveOptions{Scenario: "nat", Listen: "127.0.0.1:8080", Control: "127.0.0.1:0", over: noOverrides()}
		},
		func(p *parsed) *serveOptions { return p.serve },
		[]argvCase[serveOptions]{
			{line: "serve nat"},
			{line: "serve nat --listen 127.0.0.1:0 --control 127.0.0.1:9000 --allow-remote", want: func(o *serveOptions) {
				o.Listen, o.Control, o.AllowRemote = "127.0.0.1:0", "127.0.0.1:9000", true
			}},
			{line: "serve nat --trusted-proxies 127.0.0.1/32,10.0.0.0/8 --trusted-proxies ::1", want: func(o *serveOptions) {
				o.TrustedProxies = []string{"127.0.0.1/32", "10.0.0.0/8", "::1"}
			}},
			{line: "serve api-quotas --shadow true", want: func(o *serveOptions) {
				o.Scenario, o.over.shadow, o.over.set = "api-quotas", "true", map[string]string{"shadow": "true"}
			}},
			{line: "serve window-boundary --window 2s", want: func(o *serveOptions) {
				o.Scenario, o.over.window, o.over.set = "window-boundary", "2s", map[string]string{"window": "2s"}
			}},
			{line: "serve nat --rate 20/s --burst 5 --set clients[0].count=3 --set topology.rtt=1ms", want: func(o *serveOptions) {
				o.over.rate, o.over.burst = "20/s", "5"
				o.over.paths = []string{"clients[0].count=3", "topology.rtt=1ms"}
				o.over.set = map[string]string{"rate": "20/s", "burst": "5"}
			}},
			{line: "serve partition --replication-lag 1s", want: func(o *serveOptions) {
				o.Scenario, o.over.replicationLag, o.over.set = "partition", "1s", map[string]string{"replication-lag": "1s"}
			}},
			{line: "serve sync-interval --sync-interval 0", want: func(o *serveOptions) {
				o.Scenario, o.over.syncInterval, o.over.set = "sync-interval", "0", map[string]string{"sync-interval": "0"}
			}},
			{line: "serve store-outage --store redis-server", want: func(o *serveOptions) {
				o.Scenario, o.over.store, o.over.set = "store-outage", "redis-server", map[string]string{"store": "redis-server"}
			}},
			{line: "serve runaway-healthcheck --algorithm gcra --topology racy --store miniredis --servers 4 --balancer random --key api-key --seed 3 --duration 1m --step 2s --on-error fail-closed --rtt 1ms", want: func(o *serveOptions) {
				o.Scenario = "runaway-healthcheck"
				o.over = overrides{algorithm: "gcra", topology: "racy", store: "miniredis", servers: "4", balancer: "random", key: "api-key", seed: "3", duration: "1m", step: "2s", onError: "fail-closed", rtt: "1ms",
					set: map[string]string{"algorithm": "gcra", "topology": "racy", "store": "miniredis", "servers": "4", "balancer": "random", "key": "api-key", "seed": "3", "duration": "1m", "step": "2s", "on-error": "fail-closed", "rtt": "1ms"}}
			}},
		})
}

func TestLoadArgvToOptions(t *testing.T) {
	testArgv(t, newCmdLoad(streams{}, nil),
		func() loadOptions {
			return loadOptions{Scenario: "nat", Path: "/api", Faults: true, MaxInFlight: live.DefaultMaxInFlight, MaxRequests: live.DefaultMaxRequests, Format: "table", over: noOverrides()}
		},
		func(p *parsed) *loadOptions { return p.load },
		[]argvCase[loadOptions]{
			{line: "load nat"},
			{line: "load nat --target http://127.0.0.1:8080,http://127.0.0.1:8081 --target http://[::1]:8082 --allow-remote", want: func(o *loadOptions) {
				o.Targets, o.AllowRemote = []string{"http://127.0.0.1:8080", "http://127.0.0.1:8081", "http://[::1]:8082"}, true
			}},
			{line: "load store-outage --control http://127.0.0.1:4000 --token s3cret", want: func(o *loadOptions) {
				o.Scenario, o.Control, o.Token = "store-outage", "http://127.0.0.1:4000", "s3cret"
			}},
			{line: "load window-boundary --window 2s", want: func(o *loadOptions) {
				o.Scenario, o.over.window, o.over.set = "window-boundary", "2s", map[string]string{"window": "2s"}
			}},
			{line: "load nat --rate 20/s --burst 5 --set clients[0].count=3 --set topology.rtt=1ms", want: func(o *loadOptions) {
				o.over.rate, o.over.burst = "20/s", "5"
				o.over.paths = []string{"clients[0].count=3", "topology.rtt=1ms"}
				o.over.set = map[string]string{"rate": "20/s", "burst": "5"}
			}},
			{line: "load nat --path /v1/items", want: func(o *loadOptions) { o.Path = "/v1/items" }},
			{line: "load store-outage --faults=false", want: func(o *loadOptions) { o.Scenario, o.Faults = "store-outage", false }},
			{line: "load api-quotas --shadow false", want: func(o *loadOptions) {
				o.Scenario, o.over.shadow, o.over.set = "api-quotas", "false", map[string]string{"shadow": "false"}
			}},
			{line: "load nat --max-in-flight 16 --max-requests 1000", want: func(o *loadOptions) { o.MaxInFlight, o.MaxRequests = 16, 1000 }},
			{line: "load nat --format json -q --wide", want: func(o *loadOptions) { o.Format, o.Quiet, o.Wide = "json", true, true }},
			{line: "load nat --format csv --dense", want: func(o *loadOptions) { o.Format, o.Dense = "csv", true }},
			{line: "load partition --replication-lag 1s --faults=false", want: func(o *loadOptions) {
				o.Scenario, o.Faults, o.over.replicationLag, o.over.set = "partition", false, "1s", map[string]string{"replication-lag": "1s"}
			}},
			{line: "load sync-interval --sync-interval never", want: func(o *loadOptions) {
				o.Scenario, o.over.syncInterval, o.over.set = "sync-interval", "never", map[string]string{"sync-interval": "never"}
			}},
			{line: "load nat --quiet --plot live.png --plot-width 7 --plot-height 3", want: func(o *loadOptions) {
				o.Quiet, o.Plot = true, plotFlags{Path: "live.png", Width: 7, Height: 3}
			}},
			{line: "load nat --algorithm gcra --topology shared --store memory --servers 2 --balancer key-hash --key ip --seed 1 --duration 2s --step 500ms --on-error fail-open --rtt 100us", want: func(o *loadOptions) {
				o.over = overrides{algorithm: "gcra", topology: "shared", store: "memory", servers: "2", balancer: "key-hash", key: "ip", seed: "1", duration: "2s", step: "500ms", onError: "fail-open", rtt: "100us",
					set: map[string]string{"algorithm": "gcra", "topology": "shared", "store": "memory", "servers": "2", "balancer": "key-hash", "key": "ip", "seed": "1", "duration": "2s", "step": "500ms", "on-error": "fail-open", "rtt": "100us"}}
			}},
		})
}

func TestServeArgvToPlan(t *testing.T) {
	testPlans(t, []planCase{
		{line: "serve nat --listen 127.0.0.1:0 --control 127.0.0.1:9000 --allow-remote --trusted-proxies 127.0.0.1,10.1.2.3/8 --servers 3", check: func(t *testing.T, p *parsed) {
			sc := scenariotest.Builtin(t, "nat")
			sc.Servers = 3
			want := live.ServeOptions{Scenario: sc, Listen: "127.0.0.1:0", AllowRemote: true, Control: "127.0.0.1:9000",
				TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("10.0.0.0/8")}}
			if !reflect.DeepEqual(p.servePlan.fleet, want) {
				t.Errorf("fleet options\n%+v, want\n%+v", p.servePlan.fleet, want)
			}
		}},
		// A redis-server of the fleet's own is the fleet's store, not
		// the scenario's: a file cannot name one.
		{line: "serve store-outage --store redis-server --servers 2", check: func(t *testing.T, p *parsed) {
			sc := scenariotest.Builtin(t, "store-outage")
			sc.Servers = 2
			want := live.ServeOptions{Scenario: sc, Store: "redis-server", Listen: "127.0.0.1:8080", Control: "127.0.0.1:0"}
			if !reflect.DeepEqual(p.servePlan.fleet, want) {
				t.Errorf("fleet options\n%+v, want\n%+v", p.servePlan.fleet, want)
			}
		}},
		{line: "serve nat", check: func(t *testing.T, p *parsed) {
			want := live.ServeOptions{Scenario: scenariotest.Builtin(t, "nat"), Listen: "127.0.0.1:8080", Control: "127.0.0.1:0"}
			if !reflect.DeepEqual(p.servePlan.fleet, want) {
				t.Errorf("fleet options\n%+v, want\n%+v", p.servePlan.fleet, want)
			}
		}},
	})
}

func TestLoadArgvToPlan(t *testing.T) {
	testPlans(t, []planCase{
		{line: "load nat --target http://127.0.0.1:8080,http://127.0.0.1:8081 --allow-remote --max-in-flight 16 --max-requests 1000", check: func(t *testing.T, p *parsed) {
			want := live.LoadOptions{Targets: []string{"http://127.0.0.1:8080", "http://127.0.0.1:8081"}, Path: "/api", AllowRemote: true, MaxInFlight: 16, MaxRequests: 1000}
			if !reflect.DeepEqual(p.loadPlan.load, want) {
				t.Errorf("load options\n%+v, want\n%+v", p.loadPlan.load, want)
			}
		}},
		{line: "load nat --max-in-flight 1 --max-requests 1", check: func(t *testing.T, p *parsed) {
			if lo := p.loadPlan.load; lo.MaxInFlight != 1 || lo.MaxRequests != 1 {
				t.Errorf("load options %+v, want 1 in flight and at most 1 request", lo)
			}
		}},
		{line: "load nat --max-in-flight 10000", check: func(t *testing.T, p *parsed) {
			if lo := p.loadPlan.load; lo.MaxInFlight != 10000 {
				t.Errorf("load options %+v, want 10000 in flight", lo)
			}
		}},
		{line: "load nat", check: func(t *testing.T, p *parsed) {
			want := live.LoadOptions{Path: "/api", MaxInFlight: live.DefaultMaxInFlight, MaxRequests: live.DefaultMaxRequests}
			if !reflect.DeepEqual(p.loadPlan.load, want) || !reflect.DeepEqual(p.loadPlan.sc, scenariotest.Builtin(t, "nat")) {
				t.Errorf("load options\n%+v, want\n%+v, and nat as built in", p.loadPlan.load, want)
			}
		}},
		// A scenario's faults go to the fleet's control listener, unless
		// --faults=false.
		{line: "load store-outage --control http://127.0.0.1:4000 --token s3cret", check: func(t *testing.T, p *parsed) {
			if p.loadPlan.load.OnFault == nil {
				t.Error("the faults are not applied through --control")
			}
		}},
		{line: "load store-outage --faults=false", check: func(t *testing.T, p *parsed) {
			if p.loadPlan.load.OnFault != nil {
				t.Error("--faults=false, and the faults are applied")
			}
		}},
	})
}

func TestServeRefusesBadFlags(t *testing.T) {
	testRefusals(t, []refusal{
		{"serve", exitBadInput, []string{"scenario name or file"}},
		{"serve nat --trusted-proxies everyone", exitBadInput, []string{"--trusted-proxies", `"everyone"`}},
		{"serve nat --trusted-proxies 10.0.0.0/33", exitBadInput, []string{"--trusted-proxies", `"10.0.0.0/33"`}},
		{"serve nat --allow-remote=sometimes", exitBadInput, []string{"--allow-remote", `"sometimes"`}},
		{"serve nat --servers 0", exitBadInput, []string{"--servers"}},
		{"serve nat --servers 2000", exitBadInput, []string{"--servers", "1024"}},
		{"serve nat --duration 1ns", exitBadInput, []string{"--duration"}},
		{"serve nat --algorithm nope", exitBadInput, []string{"--algorithm"}},
		{"serve nat --plot x.png", exitBadInput, []string{"unknown flag: --plot"}},
		{"serve nat --store redis-cluster", exitBadInput, []string{"--store", `"redis-cluster"`}},
		// Only serve starts a redis-server of its own.
		{"sim nat --store redis-server", exitBadInput, []string{"--store", `"redis-server"`}},
	})
}

func TestLoadRefusesBadFlags(t *testing.T) {
	testRefusals(t, []refusal{
		{"load", exitBadInput, []string{"scenario name or file"}},
		{"load nat --format xml", exitBadInput, []string{"--format", `"xml"`}},
		{"load nat --plot x.jpg", exitBadInput, []string{"--plot", `".jpg"`}},
		{"load nat --plot x.png --plot-width -1", exitBadInput, []string{"--plot-width"}},
		{"load nat --plot x.png --plot-height NaN", exitBadInput, []string{"--plot-height", "(got NaN)"}},
		{"load nat --max-in-flight many", exitBadInput, []string{"--max-in-flight", `"many"`}},
		// live.Load would read 0 or less as its default, silently.
		{"load nat --max-in-flight 0", exitBadInput, []string{"--max-in-flight", "want 1 to 10000", "(got 0)"}},
		{"load nat --max-in-flight -4", exitBadInput, []string{"--max-in-flight", "(got -4)"}},
		{"load nat --max-in-flight 10001", exitBadInput, []string{"--max-in-flight", "(got 10001)"}},
		{"load nat --max-requests lots", exitBadInput, []string{"--max-requests", `"lots"`}},
		{"load nat --max-requests 0", exitBadInput, []string{"--max-requests", "at least 1", "(got 0)"}},
		{"load nat --max-requests -5", exitBadInput, []string{"--max-requests", "at least 1", "(got -5)"}},
		{"load nat --faults=perhaps", exitBadInput, []string{"--faults", `"perhaps"`}},
		{"load nat --servers 0", exitBadInput, []string{"--servers"}},
		{"load nat --key face", exitBadInput, []string{"--key"}},
		{"load store-outage", exitBadInput, []string{"--control URL --token TOKEN", "--faults=false"}},
		{"load store-outage --control http://127.0.0.1:1", exitBadInput, []string{"--control URL --token TOKEN"}},
		{"load store-outage --control http://10.0.0.1:1 --token t", exitBadInput, []string{"--control", "not on this machine"}},
		{"load store-outage --control nonsense --token t", exitBadInput, []string{"--control", `"nonsense"`}},
		{"load nat --by key", exitBadInput, []string{"unknown flag: --by"}},
	})
}
