package live

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/sim"
)

func TestServeRefusesAddressesOffLoopback(t *testing.T) {
	sc := bucketScenario(sim.Shared, 1)
	for _, tt := range []struct {
		opts   ServeOptions
		option string // the field the error names
		want   string
	}{
		{ServeOptions{Listen: "0.0.0.0:0"}, "Listen", "set AllowRemote"},
		{ServeOptions{Listen: ":0"}, "Listen", "not a loopback"},
		{ServeOptions{Listen: "127.0.0.1:0", Control: "0.0.0.0:0"}, "Control", "not a loopback"},
		{ServeOptions{Listen: "127.0.0.1:0", Control: ":0", AllowRemote: true}, "Control", "not a loopback"},
	} {
		tt.opts.Scenario = sc
		f, err := Serve(context.Background(), tt.opts)
		if err == nil {
			f.Close(context.Background())
			t.Errorf("%+v: served, want refused", tt.opts)
			continue
		}
		var oe *OptionError
		if !errors.As(err, new(*sim.SetupError)) || !errors.As(err, &oe) || oe.Option != tt.option || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("listen %q control %q: %v, want a setup error about %s saying %q", tt.opts.Listen, tt.opts.Control, err, tt.option, tt.want)
		}
	}
}

// A client of the fleet can neither spoof its IP key nor hold the server
// with an endless header block.
func TestServeTrustsNoProxyUnlessTold(t *testing.T) {
	sc := bucketScenario(sim.Shared, 1)
	sc.Limit.Key = sim.KeyIP
	// A burst of 10 that refills once an hour: what is admitted does not
	// depend on how fast a loaded machine sends the 30 requests.
	sc.Limit.Params.Rate = algorithms.Rate{N: 1, Per: time.Hour}
	f, err := Serve(context.Background(), ServeOptions{Scenario: sc})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close(context.Background())
	client := &http.Client{Timeout: 5 * time.Second}
	get := func(header, value string) int {
		req, _ := http.NewRequest(http.MethodGet, f.URLs[0]+"/api", nil)
		req.Header.Set(header, value)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	// The bucket holds 10: a client rotating X-Forwarded-For over 10
	// addresses would pass all 30 if the header were believed.
	admitted := 0
	for i := range 30 {
		if get(ForwardedHeader, "203.0.113."+string(rune('0'+i%10))) == http.StatusOK {
			admitted++
		}
	}
	if admitted != 10 {
		t.Errorf("rotating X-Forwarded-For admitted %d of 30, want the burst of 10 (more: the header was trusted)", admitted)
	}
	if got := get("X-Padding", strings.Repeat("x", 64<<10)); got != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("a 64 KB header: %d, want 431", got)
	}
}

// A 302 to another host is counted, never followed: the load stays on the
// targets it was given.
func TestLoadDoesNotFollowRedirects(t *testing.T) {
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
	sc.Clients = []sim.Client{{Name: "c", APIKey: "k", Traffic: []sim.Traffic{{Pattern: sim.Burst, Count: 5, At: 100 * time.Millisecond}}, Retry: sim.Retry{Policy: sim.RetryNone}}}
	res, err := Load(context.Background(), sc, LoadOptions{Targets: []string{redirector.URL}})
	if err != nil {
		t.Fatal(err)
	}
	if n := elsewhere.Load(); n != 0 || res.Audit.Redirects != 5 {
		t.Errorf("redirected host got %d requests, audit counted %d redirects; want 0 and 5", n, res.Audit.Redirects)
	}
}

// A redis-server start that is given up on leaves no process behind.
func TestCancelledRedisStartLeavesNoServer(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not installed (.ci/run installs it)")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := &RedisServer{Port: 1, dir: t.TempDir()} // port 1: never answers
	if err := r.Start(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Start = %v, want context.Canceled", err)
	}
	if r.cmd != nil {
		t.Fatal("the cancelled start left its redis-server running")
	}
}
