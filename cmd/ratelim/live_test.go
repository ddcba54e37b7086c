package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

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
		{[]string{"load", path, "--target", "http://10.9.8.7:8080"}, "not a loopback address"},
		{[]string{"load", path}, "no target"},
		{[]string{"load", path, "--target", "nonsense"}, "not an http URL"},
		{[]string{"serve", path, "--listen", "nowhere"}, "--listen"},
		{[]string{"serve", path, "--listen", "0.0.0.0:0"}, "--allow-remote"},
		{[]string{"serve", path, "--listen", "127.0.0.1:0", "--control", "0.0.0.0:0"}, "--control"},
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
