package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ratelim/ratelim/algorithms"
)

// Each peer's known behaviour, reproduced in a scenario under docs/peers
// beside the exact limiter's figure on the same traffic (an expectation
// with: {algorithm: ...}): redis_rate's refusal at a tie, envoy's double at
// a clock-aligned boundary, ulule's window from the first hit, go-limiter's
// whole refill at a tick, nginx's burst, nodelay and delay=, x/time/rate's
// second refill after a clock stepped back, and throttled on its store's
// clock. Every peer has one.
func TestPeerQuirkScenariosHold(t *testing.T) {
	dir := filepath.Join("..", "..", "docs", "peers")
	code, out, errOut := runArgs("check", dir)
	if code != exitOK {
		t.Fatalf("ratelim check docs/peers: exit %d\n%s%s", code, out, errOut)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range algorithms.Catalog() {
		if info.Peer == nil {
			continue
		}
		found := false
		for _, e := range entries {
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(data), "algorithm: "+info.Name+",") {
				found = true
			}
		}
		if !found {
			t.Errorf("no scenario under docs/peers runs %s: its quirk is shown nowhere", info.Name)
		}
	}
}

func TestComparePeers(t *testing.T) {
	code, out, errOut := runArgs("compare", "window-boundary", "--algorithms", "peers,fixed-window", "--topologies", "shared")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, info := range algorithms.Catalog() {
		if info.Peer != nil && !strings.Contains(out, info.Name) {
			t.Errorf("compare --algorithms peers lacks %s:\n%s", info.Name, out)
		}
	}
	if strings.Contains(out, "sliding-log") {
		t.Errorf("compare ran an algorithm it was not asked for:\n%s", out)
	}
}

// A peer has no Lua twin: on a Redis store it is refused up front, with
// the reason and what to write instead, wherever the store is chosen.
func TestPeerOnRedisIsRefused(t *testing.T) {
	for _, args := range [][]string{
		{"sim", "window-boundary", "--algorithm", "envoy-ratelimit", "--store", "miniredis"},
		{"compare", "window-boundary", "--algorithms", "redis_rate", "--store", "miniredis"},
	} {
		code, _, errOut := runArgs(args...)
		if code != exitBadInput || !strings.Contains(errOut, "memory store only") || strings.Contains(errOut, "goroutine") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and the reason", args, code, errOut)
		}
	}
	file := writeScenario(t, "peer.yaml", "duration: 2s\nlimit: {algorithm: redis_rate, rate: 10/s, burst: 5}\ntopology: {store: miniredis}\nclients:\n  - {name: a, api_key: a, traffic: {pattern: constant, rate: 5/s}}\n")
	code, _, errOut := runArgs("sim", file)
	if code != exitBadInput || !strings.Contains(errOut, "peer.yaml:3: topology.store: redis_rate is a model of") {
		t.Errorf("a file with a peer on miniredis: exit %d, stderr %q", code, errOut)
	}
}

func TestWallClockIsBounded(t *testing.T) {
	for _, v := range []string{"yesterday", "1969-12-31T00:00:00Z", "3000-01-01T00:00:00Z"} {
		code, _, errOut := runArgs("sim", "window-boundary", "--algorithm", "redis_rate", "--wall-clock", v)
		if code != exitBadInput || !strings.Contains(errOut, "--wall-clock") {
			t.Errorf("--wall-clock %s: exit %d, stderr %q", v, code, errOut)
		}
	}
}
