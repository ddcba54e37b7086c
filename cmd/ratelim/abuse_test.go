package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ratelim/ratelim/sim"
)

// scenarioWith is smallScenario with one line replaced, for an input that
// is wrong in one place only.
func scenarioWith(t *testing.T, name, old, new string) string {
	t.Helper()
	if !strings.Contains(smallScenario, old) {
		t.Fatalf("smallScenario has no %q", old)
	}
	return writeScenario(t, name, strings.Replace(smallScenario, old, new, 1))
}

// Every class of hostile input ends in a sentence and a documented exit
// code, quickly: none hangs, panics or takes the machine's memory. Each
// case runs under a deadline so that a regression that hangs fails here
// rather than stalling the suite.
func TestHostileInputEndsInAnExitCode(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "huge.yaml")
	if err := os.WriteFile(huge, []byte(smallScenario+"#"+strings.Repeat("x", 5<<20)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// 10,000 clients, each named by 40 KB of {i}: 400 MB of names.
	bomb := writeScenario(t, "bomb.yaml", strings.Replace(smallScenario, "  - name: polite\n",
		"  - name: \""+strings.Repeat("{i}", 13_000)+"\"\n    count: 10000\n", 1))
	skewed := scenarioWith(t, "skew.yaml", "expect:\n", "faults:\n  - {kind: clock-skew, start: 1s, end: 2s, servers: [1], offset: 50ms}\nexpect:\n")
	storm := scenarioWith(t, "storm.yaml", "    traffic: {pattern: constant, rate: 100/s}\n",
		"    traffic: {pattern: constant, rate: 100/s}\n    retry: {policy: immediate, max: 1000}\n")
	tests := []struct {
		class string
		args  []string
		code  int
		want  []string
	}{
		// Products of user numbers saturate instead of wrapping past the budget.
		{"overflow", []string{"sim", scenarioWith(t, "fast.yaml", "rate: 100/s", "rate: 1000000000000000000/s")}, exitTooBig, []string{"request budget", "--max-requests"}},
		{"overflow", []string{"sim", scenarioWith(t, "faster.yaml", "rate: 100/s", "rate: 9223372036854775807/s")}, exitTooBig, []string{"request budget"}},
		{"overflow", []string{"sim", "runaway-healthcheck", "--duration", "8760h"}, exitTooBig, []string{"request budget"}},
		{"overflow", []string{"sim", "runaway-healthcheck", "--max-requests", "10"}, exitTooBig, []string{"request budget", "--max-requests"}},
		// Retries count against the budget as they are sent.
		{"retries", []string{"sim", storm, "--max-requests", "5000"}, exitTooBig, []string{"retries", "retry.max"}},
		{"retries", []string{"compare", storm, "--max-requests", "5000"}, exitTooBig, []string{"retries"}},
		// Steps × clients: the memory a run needs is refused up front.
		{"memory", []string{"sim", scenarioWith(t, "long.yaml", "duration: 5s\n", "duration: 1000h\nstep: 1ms\n"), "--step", "1ms", "--max-requests", "9000000000000000000"}, exitTooBig, []string{"of memory", "steps of 1ms", "--max-memory"}},
		{"memory", []string{"sim", scenarioWith(t, "fine.yaml", "duration: 5s\n", "duration: 8760h\nstep: 1us\n"), "--step", "1us", "--max-requests", "9000000000000000000"}, exitTooBig, []string{"of memory"}},
		{"memory", []string{"sim", "runaway-healthcheck", "--duration", "24h", "--step", "1s", "--max-memory", "64MiB"}, exitTooBig, []string{"of memory", "more than 64 MiB"}},
		{"memory", []string{"check", writeScenario(t, "check-long.yaml", strings.Replace(smallScenario, "duration: 5s\n", "duration: 1h\nstep: 10ms\n", 1)), "--max-memory", "64MiB"}, exitTooBig, []string{"of memory"}},
		// Flags are read by the file's own readers, with the file's bounds.
		{"flags", []string{"sim", "runaway-healthcheck", "--duration", "1ns"}, exitBadInput, []string{"--duration", "microsecond"}},
		{"flags", []string{"sim", "runaway-healthcheck", "--duration", "1500ns"}, exitBadInput, []string{"--duration"}},
		{"flags", []string{"sim", "runaway-healthcheck", "--duration", "2562047h"}, exitBadInput, []string{"--duration"}},
		{"flags", []string{"sim", "runaway-healthcheck", "--duration", "-5s"}, exitBadInput, []string{"--duration"}},
		{"flags", []string{"sim", "runaway-healthcheck", "--rtt", "1ns"}, exitBadInput, []string{"--rtt"}},
		{"flags", []string{"sim", "runaway-healthcheck", "--servers", "2000"}, exitBadInput, []string{"--servers", "1024"}},
		{"flags", []string{"sim", "runaway-healthcheck", "--servers", "-1"}, exitBadInput, []string{"--servers"}},
		{"flags", []string{"sim", "runaway-healthcheck", "--store", "redis://"}, exitBadInput, []string{"--store"}},
		{"flags", []string{"sim", "partition", "--servers", "8"}, exitBadInput, []string{"--servers 8: faults[0].groups " + partitionFault, "in no group"}},
		{"flags", []string{"sim", skewed, "--servers", "1"}, exitBadInput, []string{"--servers", "server 1"}},
		{"flags", []string{"sim", "runaway-healthcheck", "--max-requests", "-1"}, exitBadInput, []string{"--max-requests", "at least 1"}},
		{"flags", []string{"sim", "runaway-healthcheck", "--max-requests", "0"}, exitBadInput, []string{"--max-requests"}},
		{"flags", []string{"sim", "runaway-healthcheck", "--max-memory", "lots"}, exitBadInput, []string{"--max-memory", "lots"}},
		{"flags", []string{"sim", "runaway-healthcheck", "--max-memory", "1KB"}, exitBadInput, []string{"--max-memory", "too little"}},
		{"flags", []string{"compare", "runaway-healthcheck", "--parallel", "-2"}, exitBadInput, []string{"--parallel"}},
		{"flags", []string{"check", "--max-requests", "0"}, exitBadInput, []string{"--max-requests"}},
		// {i} expansion is bounded by the text it makes, not just the count.
		{"expansion", []string{"sim", bomb}, exitBadInput, []string{"bomb.yaml:", "name"}},
		// Only regular files (or -) of at most a few MB are read.
		{"files", []string{"sim", "/dev/zero"}, exitBadInput, []string{"/dev/zero", "regular file"}},
		{"files", []string{"sim", fifo}, exitBadInput, []string{"fifo.yaml", "regular file"}},
		{"files", []string{"sim", huge}, exitBadInput, []string{"huge.yaml", "4 MB"}},
		{"files", []string{"sim", dir}, exitBadInput, []string{"a directory"}},
		{"files", []string{"check", "/dev/zero"}, exitBadInput, []string{"/dev/zero"}},
	}
	counts := map[string]int{}
	for _, tt := range tests {
		counts[tt.class]++
		t.Run(tt.class+" "+strings.Join(tt.args[1:], " "), func(t *testing.T) {
			type ran struct {
				code        int
				out, errOut string
			}
			done := make(chan ran, 1)
			go func() {
				code, out, errOut := runArgs(tt.args...)
				done <- ran{code, out, errOut}
			}()
			var r ran
			select {
			case r = <-done:
			case <-time.After(time.Minute):
				t.Fatalf("%v did not end within a minute", tt.args)
			}
			if r.code != tt.code {
				t.Errorf("exit %d, want %d; stderr %q", r.code, tt.code, r.errOut)
			}
			// check's report of the files it ran is on stdout, and names
			// each it could not check; a refused flag prints nothing.
			if tt.args[0] == "check" && tt.class != "flags" {
				if !strings.Contains(r.out, "ERROR ") {
					t.Errorf("check's report does not name the error: %.200q", r.out)
				}
			} else if r.out != "" {
				t.Errorf("printed to stdout: %.200q", r.out)
			}
			if strings.Contains(r.errOut, "goroutine ") || strings.Contains(r.errOut, "panic") {
				t.Errorf("a stack trace on stderr: %.400q", r.errOut)
			}
			if n := strings.Count(r.errOut, "\n"); n > 3 {
				t.Errorf("%d lines on stderr, want one sentence: %.400q", n, r.errOut)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.errOut, w) {
					t.Errorf("stderr %.400q does not say %q", r.errOut, w)
				}
			}
		})
	}
	t.Logf("hostile inputs by class: %v", counts)
}

func TestExitCodesTellFailuresApart(t *testing.T) {
	live, cancelled := context.Background(), func() context.Context {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return ctx
	}()
	tests := []struct {
		name string
		ctx  context.Context
		err  error
		want int
	}{
		{"success", live, nil, exitOK},
		{"a failed expectation", live, errChecksFailed, exitFailed},
		{"bad input", live, badInput("--format: unknown"), exitBadInput},
		{"too big, as a setup error", live, usageError{&sim.SetupError{Err: fmt.Errorf("%w: 10 > 5", sim.ErrBudget)}}, exitTooBig},
		{"too much memory", live, &sim.SetupError{Err: fmt.Errorf("%w: 9 GiB", sim.ErrMemory)}, exitTooBig},
		{"a budget spent by retries mid-run", live, fmt.Errorf("x: %w", sim.ErrBudget), exitTooBig},
		{"a panic in a run", live, &sim.InternalError{Scenario: "x", Value: "boom"}, exitInternal},
		{"a store lost mid-run", live, errors.New("redis: connection refused"), exitInternal},
		{"interrupted", cancelled, fmt.Errorf("x: %w", context.Canceled), exitInterrupted},
		{"cancelled but not by us", live, context.Canceled, exitInternal},
	}
	for _, tt := range tests {
		if got := exitCode(tt.ctx, tt.err); got != tt.want {
			t.Errorf("%s: exit %d, want %d", tt.name, got, tt.want)
		}
	}
}

// Ctrl-C during a run ends it with 130 and nothing half-written on stdout.
func TestInterruptedRunExits130(t *testing.T) {
	for _, args := range [][]string{
		{"sim", "runaway-healthcheck", "--format", "json"},
		{"compare", "window-boundary", "--format", "json"},
		{"check", "--builtins"},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		var out, errOut strings.Builder
		code := run(ctx, args, streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
		if code != exitInterrupted || out.Len() != 0 || !strings.Contains(errOut.String(), "interrupted") {
			t.Errorf("%v interrupted: exit %d, stdout %d bytes, stderr %q; want 130, nothing, \"interrupted\"", args, code, out.Len(), errOut.String())
		}
	}
}
