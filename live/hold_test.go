package live

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ratelim/ratelim/internal/syncbuf"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/httplimit"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/store"
)

// A caller's own http.Client follows redirects by default: Load must not,
// whatever client it is given.
func TestLoadDoesNotFollowRedirectsWithCallersClient(t *testing.T) {
	wallClock(t)
	var elsewhere atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { elsewhere.Add(1) }))
	defer other.Close()
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/api", http.StatusFound)
	}))
	defer redirector.Close()
	sc := bucketScenario(sim.Shared, 1)
	sc.Duration = time.Second
	sc.Clients = []sim.Client{{Name: "c", APIKey: "k", Traffic: []sim.Traffic{{Pattern: sim.Burst, Count: 3, At: 100 * time.Millisecond}}, Retry: sim.Retry{Policy: sim.RetryNone}}}
	mine := &http.Client{Timeout: 5 * time.Second}
	res, err := Load(context.Background(), sc, LoadOptions{Targets: []string{redirector.URL}, Client: mine})
	if err != nil {
		t.Fatal(err)
	}
	if n := elsewhere.Load(); n != 0 || res.Audit.Redirects != 3 {
		t.Errorf("redirected host got %d requests, audit counted %d redirects; want 0 and 3", n, res.Audit.Redirects)
	}
	if mine.CheckRedirect != nil {
		t.Error("Load changed the caller's client")
	}
}

// The operator hears of a store failure once, and of its recovery, on
// the fleet's Logger (stderr for ratelim serve).
func TestServeLogsStoreFailureAndRecovery(t *testing.T) {
	var logs syncbuf.Buffer
	sc := bucketScenario(sim.Shared, 1)
	sc.Topology.OnError = store.FailOpen
	f, err := Serve(context.Background(), ServeOptions{Scenario: sc, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close(context.Background())
	client := &http.Client{Timeout: 5 * time.Second}
	get := func() {
		req, _ := http.NewRequest(http.MethodGet, f.URLs[0]+"/api", nil)
		req.Header.Set(APIKeyHeader, "k")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	get()
	if err := f.Fault(sim.Fault{Kind: sim.Outage}, true); err != nil {
		t.Fatal(err)
	}
	get()
	get()
	if err := f.Fault(sim.Fault{Kind: sim.Outage}, false); err != nil {
		t.Fatal(err)
	}
	// Answered at once, but recovered only once the store has answered
	// for httplimit.RecoveryQuiet: a store that fails one request in two
	// is not recovering at every other one.
	get()
	if out := logs.String(); strings.Contains(out, "store recovered") {
		t.Errorf("recovery logged the instant the store answered again:\n%s", out)
	}
	time.Sleep(httplimit.RecoveryQuiet)
	get()
	get()
	out := logs.String()
	if strings.Count(out, "store failing") != 1 || strings.Count(out, "store recovered") != 1 || !strings.Contains(out, "server=0") ||
		!strings.Contains(out, "decided_by_policy=2 ") || !strings.Contains(out, "answered_by_store=2 ") {
		t.Errorf("want one failure and one recovery, from server 0, after 2 requests decided by the policy and 2 answered; logged:\n%s", out)
	}
}

// A fleet's memory stores say on /metrics how many keys they hold.
func TestServeExportsMemoryStoreStats(t *testing.T) {
	for _, kind := range []sim.TopologyKind{sim.Local, sim.Shared} {
		f, err := Serve(context.Background(), ServeOptions{Scenario: bucketScenario(kind, 2)})
		if err != nil {
			t.Fatal(err)
		}
		client := &http.Client{Timeout: 5 * time.Second}
		for i := range 3 {
			req, _ := http.NewRequest(http.MethodGet, f.URLs[0]+"/api", nil)
			req.Header.Set(APIKeyHeader, "key-"+strconv.Itoa(i))
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		resp, err := client.Get(f.URLs[0] + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, want := range []string{"ratelim_store_keys 3", "ratelim_store_forgotten_total", "ratelim_store_evictions_total"} {
			if !strings.Contains(string(body), want) {
				t.Errorf("%s: /metrics lacks %q", kind, want)
			}
		}
		if err := f.Close(context.Background()); err != nil {
			t.Errorf("%s: Close: %v", kind, err)
		}
	}
}

// A redis-server start given up on (ctx cancelled, or its deadline) kills
// the process it started: none is left behind. The stand-in never
// answers, as a server that hangs in its start would.
func TestRedisStartGivenUpLeavesNoProcess(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh for the stand-in redis-server")
	}
	bin := t.TempDir()
	pidFile := filepath.Join(t.TempDir(), "pid")
	script := "#!/bin/sh\necho $$ > " + pidFile + "\nexec sleep 60\n"
	if err := os.WriteFile(filepath.Join(bin, "redis-server"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	r, err := StartRedisServer(ctx)
	if err == nil {
		r.Close()
		t.Fatal("a redis-server that never answers started")
	}
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "redis-server") {
		t.Errorf("err = %v, want one that names redis-server and wraps the deadline", err)
	}
	text, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the stand-in did not run: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(text)))
	if err != nil {
		t.Fatal(err)
	}
	// Killed and waited for: not even a zombie holds the pid.
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the stand-in redis-server (pid %d) is still there: kill(0) = %v", pid, err)
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// Keys a store would not delete at the end are reported, typed, never
// dropped: here the embedded Redis is gone before the fleet closes.
func TestFleetCloseReportsKeysLeft(t *testing.T) {
	f, err := Serve(context.Background(), ServeOptions{Scenario: bucketScenario(sim.Shared, 1), Store: "miniredis"})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(f.URLs[0] + "/api")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, r := range f.embedded {
		r.Embedded().Close()
	}
	err = f.Close(context.Background())
	var ce *sim.CleanupError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "miniredis") {
		t.Errorf("Close = %v, want a *sim.CleanupError naming the store", err)
	}
}

// A leaky bucket holds an admitted request up to burst ÷ rate before the
// handler answers: the servers' write timeout allows for that wait, or
// the answer would be cut off; other algorithms keep the plain bound.
func TestWriteTimeoutAllowsTheQueue(t *testing.T) {
	leaky, err := algorithms.NewLeakyBucket(algorithms.Rate{N: 5, Per: time.Second}, 50)
	if err != nil {
		t.Fatal(err)
	}
	bucket, err := algorithms.NewTokenBucket(algorithms.Rate{N: 5, Per: time.Second}, 50)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		alg  algorithms.Algorithm
		want time.Duration
	}{
		{leaky, writeTimeout + 10*time.Second},
		{bucket, writeTimeout},
	} {
		if got := newHTTPServer(http.NotFoundHandler(), maxDelayOf(tt.alg)).WriteTimeout; got != tt.want {
			t.Errorf("%s %v: write timeout %v, want %v", tt.alg.Name(), tt.alg.Params(), got, tt.want)
		}
	}
	if got := writeTimeoutFor(math.MaxInt64 - time.Second); got != math.MaxInt64 {
		t.Errorf("a delay near the largest Duration: %v, want it saturated", got)
	}
}

// A fault applied late (here OnFault takes 300 ms to stop the store, as a
// kill on a loaded machine may) is replayed in the simulator at the
// instants it was in effect, not at its schedule.
func TestObservedScenarioTakesFaultsAsApplied(t *testing.T) {
	wallClock(t)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer api.Close()
	sc := bucketScenario(sim.Shared, 1)
	sc.Duration = 2 * time.Second
	sc.Clients = []sim.Client{{Name: "c", APIKey: "k", Traffic: []sim.Traffic{{Pattern: sim.Burst, Count: 2, At: 100 * time.Millisecond}}, Retry: sim.Retry{Policy: sim.RetryNone}}}
	sc.Faults = []sim.Fault{{Kind: sim.Outage, Start: 500 * time.Millisecond, End: 1000 * time.Millisecond}}
	const slow = 300 * time.Millisecond
	res, err := Load(context.Background(), sc, LoadOptions{Targets: []string{api.URL}, OnFault: func(f sim.Fault, start bool) error {
		if start {
			time.Sleep(slow)
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Faults) != 1 {
		t.Fatalf("faults as applied: %+v, want the scenario's one", res.Faults)
	}
	f := res.Faults[0]
	if f.Start < sc.Faults[0].Start+slow || f.End < sc.Faults[0].End || f.End <= f.Start {
		t.Errorf("applied %s–%s, want a start at least %s after %s, and an end after it and not before %s", f.Start, f.End, slow, sc.Faults[0].Start, sc.Faults[0].End)
	}
	obs := ObservedScenario(sc, res)
	if len(obs.Faults) != 1 || obs.Faults[0].Start != f.Start || obs.Faults[0].End != f.End || sc.Faults[0].Start != 500*time.Millisecond {
		t.Errorf("ObservedScenario faults %+v, want %+v (and the scenario's own left alone)", obs.Faults, res.Faults)
	}
	if _, err := sim.Run(context.Background(), obs, sim.Options{}); err != nil {
		t.Errorf("the observed scenario does not run: %v", err)
	}
}
