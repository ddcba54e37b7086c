package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratelim/ratelim/internal/syncbuf"

	"github.com/ratelim/ratelim/live"
)

const shortLive = `name: short-live
duration: 2s
servers: 2
limit: {algorithm: token-bucket, rate: 20/s, burst: 5}
topology: {kind: shared}
clients:
  - name: hammer
    api_key: h
    traffic: {pattern: constant, rate: 200/s}
  - name: polite
    api_key: p
    traffic: {pattern: constant, rate: 5/s}
`

func TestServeThenLoad(t *testing.T) {
	path := writeScenario(t, "short.yaml", shortLive)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fleetc := make(chan *live.Fleet, 1)
	var serveOut bytes.Buffer
	serveDone := make(chan error, 1)
	go func() {
		opts := &serveOptions{streams: streams{Out: &serveOut, ErrOut: &serveOut}, Scenario: path, Listen: "127.0.0.1:0",
			over: overrides{set: map[string]string{}}, ready: func(f *live.Fleet) { fleetc <- f }}
		serveDone <- serveRun(ctx, opts)
	}()
	var fleet *live.Fleet
	select {
	case fleet = <-fleetc:
	case err := <-serveDone:
		t.Fatalf("serve stopped: %v\n%s", err, serveOut.String())
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not start")
	}
	code, out, errOut := runArgs("load", path, "--target", strings.Join(fleet.URLs, ","))
	if code != exitOK {
		t.Fatalf("load: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"LIVE over HTTP", "hammer", "polite", "headers: 0 breaches"} {
		if !strings.Contains(out, want) {
			t.Errorf("load output lacks %q:\n%s", want, out)
		}
	}
	cancel() // as ctrl-c would
	if err := <-serveDone; err != nil {
		t.Fatalf("serve after shutdown: %v", err)
	}
	if !strings.Contains(serveOut.String(), "/metrics") {
		t.Errorf("serve did not list its servers:\n%s", serveOut.String())
	}
}

func TestSimLivePrintsBothAndTheDifference(t *testing.T) {
	code, out, errOut := runArgs("sim", writeScenario(t, "short.yaml", shortLive), "--live")
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"LIVE", "SIMULATED", "DIFFERENCE", "hammer"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestLoadBadInput(t *testing.T) {
	path := writeScenario(t, "short.yaml", shortLive)
	tests := []struct {
		args []string
		want string
	}{
		// live names its options' fields (Targets, AllowRemote); the
		// command names its flags.
		{[]string{"load", path, "--target", "http://10.9.8.7:8080"}, ": --target: 10.9.8.7:8080 is not a loopback address; load runs target this machine only (pass --allow-remote for a server you own)"},
		{[]string{"load", path}, ": --target: no target"},
		{[]string{"load", path, "--target", "nonsense"}, ": --target: \"nonsense\" is not an http URL"},
		{[]string{"serve", path, "--listen", "nowhere"}, ": --listen: "},
		{[]string{"serve", path, "--listen", "0.0.0.0:0"}, "or pass --allow-remote to mean it"},
		{[]string{"serve", path, "--listen", "127.0.0.1:0", "--control", "0.0.0.0:0"}, ": --control: "},
		{[]string{"serve", path, "--trusted-proxies", "everyone"}, "--trusted-proxies"},
		{[]string{"load", "store-outage", "--target", "http://127.0.0.1:1"}, "--control URL --token TOKEN"},
		{[]string{"load", "store-outage", "--target", "http://127.0.0.1:1", "--control", "http://10.0.0.1:1", "--token", "t"}, "not on this machine"},
	}
	for _, tt := range tests {
		code, _, errOut := runArgs(tt.args...)
		if code != exitBadInput || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tt.args, code, errOut, tt.want)
		}
	}
}

const outageLive = `name: outage-live
duration: 2s
servers: 2
limit: {algorithm: token-bucket, rate: 100/s, burst: 50}
topology: {kind: shared, on_error: fail-closed}
clients:
  - name: steady
    api_key: s
    traffic: {pattern: constant, rate: 40/s}
faults:
  - {kind: outage, start: 500ms, end: 1500ms}
`

// TestLoadAppliesFaultsThroughControl: 'ratelim load' in "another process"
// takes the control URL and token 'ratelim serve' printed and applies the
// outage there (the fleet answers 503, fail-closed, and tells its operator
// on stderr); the API port refuses the fault path.
func TestLoadAppliesFaultsThroughControl(t *testing.T) {
	path := writeScenario(t, "outage.yaml", outageLive)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fleetc := make(chan *live.Fleet, 1)
	var serveOut bytes.Buffer
	var serveErr syncbuf.Buffer
	serveDone := make(chan error, 1)
	go func() {
		opts := &serveOptions{streams: streams{Out: &serveOut, ErrOut: &serveErr}, Scenario: path, Listen: "127.0.0.1:0", Control: "127.0.0.1:0",
			over: overrides{set: map[string]string{}}, ready: func(f *live.Fleet) { fleetc <- f }}
		serveDone <- serveRun(ctx, opts)
	}()
	var fleet *live.Fleet
	select {
	case fleet = <-fleetc:
	case err := <-serveDone:
		t.Fatalf("serve stopped: %v\n%s", err, serveErr.String())
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not start")
	}
	printed := serveOut.String()
	if !strings.Contains(printed, "--control "+fleet.ControlURL+" --token "+fleet.Token) {
		t.Errorf("serve did not print the control URL and token to pass to load:\n%s", printed)
	}
	resp, err := http.Post(fleet.URLs[0]+live.FaultPath+"?kind=outage&start=1", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("the fault path on an API port: %s, want 404", resp.Status)
	}
	code, out, errOut := runArgs("load", path, "--target", strings.Join(fleet.URLs, ","),
		"--control", fleet.ControlURL, "--token", fleet.Token, "--format", "json")
	if code != exitOK {
		t.Fatalf("load: exit %d\n%s%s", code, out, errOut)
	}
	var res struct {
		Clients []struct {
			FailedClosed int64 `json:"failed_closed"`
		} `json:"clients"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("load --format json: %v\n%s", err, out)
	}
	// The outage is a second of wall time: some requests land in it
	// however late a loaded machine sends them.
	if len(res.Clients) != 1 || res.Clients[0].FailedClosed == 0 {
		t.Errorf("no request failed closed: the outage did not reach the fleet\n%s", out)
	}
	// One request after the outage, whenever the load's last one was:
	// the store answers again, and the server says so.
	req, _ := http.NewRequest(http.MethodGet, fleet.URLs[0]+"/api", nil)
	req.Header.Set(live.APIKeyHeader, "after")
	if resp, err := http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	cancel()
	if err := <-serveDone; err != nil {
		t.Fatalf("serve after shutdown: %v", err)
	}
	if logs := serveErr.String(); !strings.Contains(logs, "store failing") || !strings.Contains(logs, "store recovered") {
		t.Errorf("serve's stderr does not tell of the outage and the recovery:\n%s", logs)
	}
}

func TestParseTrustedProxies(t *testing.T) {
	for _, tt := range []struct {
		in   []string
		want []string // nil: refused
	}{
		{nil, []string{}},
		{[]string{"127.0.0.1/32", " 10.0.0.0/8"}, []string{"127.0.0.1/32", "10.0.0.0/8"}},
		{[]string{"127.0.0.1", "::1"}, []string{"127.0.0.1/32", "::1/128"}},
		{[]string{"127.0.0.1/8"}, []string{"127.0.0.0/8"}},
		{[]string{"everyone"}, nil},
		{[]string{"10.0.0.0/33"}, nil},
		{[]string{""}, nil},
	} {
		got, err := parseTrustedProxies(tt.in)
		if tt.want == nil {
			if _, ok := err.(usageError); !ok {
				t.Errorf("%q: %v, want a usage error", tt.in, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tt.in, err)
			continue
		}
		var want []netip.Prefix
		for _, w := range tt.want {
			want = append(want, netip.MustParsePrefix(w))
		}
		if !slices.Equal(got, want) {
			t.Errorf("%q: %v, want %v", tt.in, got, want)
		}
	}
}
