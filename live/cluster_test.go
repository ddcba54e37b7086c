package live

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratelim/ratelim/internal/redistest"
	"github.com/ratelim/ratelim/internal/syncbuf"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/store"
)

// fleetFailoverBound is how long after the observed promotion every key
// must be decided by the store again, over HTTP: generous for a loaded
// 2-core machine; measured a few hundred ms (before the store followed the
// topology: the stopped master's keys stayed fail-open until go-redis's
// 60 s slot-map refresh).
const fleetFailoverBound = 3 * time.Second

// serveOnCluster serves sc on the real cluster c, its servers' log kept
// for the test to read, closed when the test ends (its error not
// checked: a test may have left a node of c frozen or killed).
func serveOnCluster(t *testing.T, sc sim.Scenario, c *redistest.Cluster) (*Fleet, *syncbuf.Buffer) {
	t.Helper()
	logs := new(syncbuf.Buffer)
	f, err := Serve(context.Background(), ServeOptions{Scenario: sc, Store: c.URL, Listen: "127.0.0.1:0",
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		f.Close(ctx)
	})
	return f, logs
}

// TestFleetFollowsClusterFailover: a fleet of two servers sharing a real
// Redis Cluster of three masters and three replicas, one master hung by
// SIGSTOP: once its replica is seen promoted, every key is decided by the
// store again (no X-Ratelim-Decided-By: fail-open) within
// fleetFailoverBound, and the servers log the failure and the recovery a
// few times, not once per flip.
func TestFleetFollowsClusterFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a six-node Redis Cluster")
	}
	wallClock(t)
	c := redistest.StartCluster(t, 3, 1, time.Second)
	sc := bucketScenario(sim.Shared, 2)
	sc.Topology.OnError = store.FailOpen
	f, logs := serveOnCluster(t, sc, c)
	victim, replica, replicaID := c.MasterWithReplica(t)

	// One client per key, one request every 10 ms, alternating servers.
	type answer struct {
		start, end time.Time
		failOpen   bool
	}
	keys := make([]string, 30)
	answers := make([][]answer, len(keys))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range keys {
		keys[i] = fmt.Sprintf("client-%d", i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := &http.Client{Timeout: 5 * time.Second}
			defer client.CloseIdleConnections()
			tick := time.NewTicker(10 * time.Millisecond)
			defer tick.Stop()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				req, _ := http.NewRequest(http.MethodGet, f.URLs[n%len(f.URLs)]+"/api", nil)
				req.Header.Set(APIKeyHeader, keys[i])
				start := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					t.Errorf("%s: %v", keys[i], err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				answers[i] = append(answers[i], answer{start: start, end: time.Now(),
					failOpen: resp.Header.Get(DecidedByHeader) == string(store.FailOpen)})
			}
		}()
	}
	stopClients := func() {
		if stop != nil {
			close(stop)
			wg.Wait()
			stop = nil
		}
	}
	defer stopClients()
	time.Sleep(500 * time.Millisecond)

	stopped := time.Now()
	victim.Stop()
	// The promotion, as observed: the replica's own view, polled every
	// 5 ms.
	promotedAt := redistest.WaitPromoted(t, replica, replicaID, 30*time.Second)
	time.Sleep(time.Until(promotedAt.Add(fleetFailoverBound + time.Second)))
	stopClients()

	var worst time.Duration
	var worstKey string
	failedOpen := 0 // keys the fail policy decided after the stop
	for i, key := range keys {
		var back time.Time // the first answer by the store ending after the promotion
		hit := false
		for _, a := range answers[i] {
			if a.failOpen && a.start.After(stopped) {
				hit = true
			}
			if !a.failOpen && !a.end.Before(promotedAt) {
				back = a.end
				break
			}
		}
		if hit {
			failedOpen++
		}
		if back.IsZero() {
			t.Errorf("%s: no answer by the store after the promotion", key)
			continue
		}
		if lag := back.Sub(promotedAt); lag > worst || worstKey == "" {
			worst, worstKey = lag, key
		}
		if back.After(promotedAt.Add(fleetFailoverBound)) {
			t.Errorf("%s: decided by the store again %v after the promotion; want within %v",
				key, back.Sub(promotedAt).Round(time.Millisecond), fleetFailoverBound)
		}
	}
	if failedOpen == 0 {
		t.Errorf("no key was decided fail-open after %s stopped: the failure did not reach the fleet", victim.Addr())
	}
	out := logs.String()
	changes := strings.Count(out, "store failing") + strings.Count(out, "store recovered")
	t.Logf("SIGSTOP of master %s: replica %s seen promoted %v later; %d of %d keys fail-open meanwhile; the last (%s) decided by the store %v after the promotion; %d failing/recovered log lines from %d servers",
		victim.Addr(), replica.Addr(), promotedAt.Sub(stopped).Round(time.Millisecond), failedOpen, len(keys), worstKey,
		worst.Round(time.Millisecond), changes, len(f.URLs))
	// A failure and a recovery per server, and a few more for a stray
	// timeout on a loaded machine: not one per flip (2,030 in 30 s).
	if testing.Verbose() {
		t.Logf("the fleet logged:\n%s", out)
	}
	if changes > 8*len(f.URLs) {
		t.Errorf("%d failing/recovered lines; want a few per server:\n%.3000s", changes, out)
	}
}
