package redisstore

import (
	"context"
	"errors"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/internal/redistest"
	"github.com/ratelim/ratelim/store"
)

// steadyTaker takes one decision on key every interval, from one
// goroutine, until stop, and keeps when each one ended and its error.
type steadyTaker struct {
	mu       sync.Mutex
	outcomes []takeOutcome
	stop     chan struct{}
	done     chan struct{}
}

type takeOutcome struct {
	start, end time.Time
	err        error
}

func startSteadyTaker(l store.Limiter, key string, interval time.Duration) *steadyTaker {
	s := &steadyTaker{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-tick.C:
			}
			start := time.Now()
			_, err := l.Take(context.Background(), key, algorithms.FromTime(start), 1)
			s.mu.Lock()
			s.outcomes = append(s.outcomes, takeOutcome{start: start, end: time.Now(), err: err})
			s.mu.Unlock()
		}
	}()
	return s
}

// since returns the outcomes of the decisions that started at or after t.
func (s *steadyTaker) since(t time.Time) []takeOutcome {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []takeOutcome
	for _, o := range s.outcomes {
		if !o.start.Before(t) {
			out = append(out, o)
		}
	}
	return out
}

func (s *steadyTaker) close() { close(s.stop); <-s.done }

// waitFor polls cond until it holds, failing the test after limit.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestRedisRedialsAtOnceAfterAnOutage: a FailFast store whose server died
// and, after hundreds of failed requests, came back on the same port,
// decides again on the first request after the server answers, not up to
// a second later.
//
// Before the redialer, go-redis's pool (internal/pool/pool.go,
// ConnPool.dialConn) stopped dialing after PoolSize failed dials and
// probed once a second (ConnPool.tryDial), starting at the PoolSize-th
// failure. Three outages, each held a different time after that point,
// land the restart at three phases of that one-second probe: whatever the
// machine's timing, one of them waited most of a second (measured before
// the fix: 0.95 s, 0.65 s and 0.35 s; after: a few ms each).
func TestRedisRedialsAtOnceAfterAnOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts and kills a redis-server")
	}
	redistest.NeedBinaries(t)
	server := redistest.StartNode(t)
	r, err := Open(context.Background(), tokenBucket(t, 1, 1_000_000),
		Options{URL: "redis://" + server.Addr(), Prefix: "redial:", FailFast: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	taker := startSteadyTaker(r, "k", time.Millisecond)
	defer taker.close()
	begin := time.Now()
	waitFor(t, 5*time.Second, "50 decisions before the outages", func() bool { return len(taker.since(begin)) >= 50 })
	// go-redis's default PoolSize, which its dial breaker counts to.
	poolSize := 10 * runtime.GOMAXPROCS(0)
	for _, hold := range []time.Duration{0, 300 * time.Millisecond, 600 * time.Millisecond} {
		server.Kill()
		killed := time.Now()
		failed := func() int {
			n := 0
			for _, o := range taker.since(killed) {
				if o.err != nil {
					n++
				}
			}
			return n
		}
		waitFor(t, 10*time.Second, "failed requests", func() bool { return failed() >= 2*poolSize })
		time.Sleep(hold)
		var slowest time.Duration
		for _, o := range taker.since(killed) {
			if o.err != nil {
				slowest = max(slowest, o.end.Sub(o.start))
			}
		}
		failedInOutage := failed()
		up := server.Start()
		var first time.Time
		waitFor(t, 5*time.Second, "a decision after the restart", func() bool {
			for _, o := range taker.since(killed) {
				if o.err == nil {
					first = o.end
					return true
				}
			}
			return false
		})
		lag := first.Sub(up)
		t.Logf("outage of %v: %d requests failed (PoolSize %d), the slowest in %v; first decision %v after the server answered PING again",
			up.Sub(killed).Round(time.Millisecond), failedInOutage, poolSize, slowest, lag.Round(100*time.Microsecond))
		// Generous for a loaded 2-core machine: measured in ms.
		if lag > 500*time.Millisecond {
			t.Errorf("outage of %v: the first decision came %v after the server was back; want it within the round trip (bound 500ms)",
				up.Sub(killed).Round(time.Millisecond), lag)
		}
	}
}

// The redialer hides a failed dial from go-redis's pool behind a deadConn
// that fails with the dial's error, lets one dial at a time try an
// address that is failing (the others fail at once, without dialing), and
// dials for real again from the first success.
func TestRedialerOneProbeAtATimeWhileFailing(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	var calls atomic.Int32
	results := make(chan error) // what the next dial returns, when it is released
	d := newRedialer(func(ctx context.Context, network, addr string) (net.Conn, error) {
		calls.Add(1)
		if err := <-results; err != nil {
			return nil, err
		}
		c1, c2 := net.Pipe()
		t.Cleanup(func() { c1.Close(); c2.Close() })
		return c1, nil
	})
	ctx := context.Background()
	dial := func() (net.Conn, error) { return d.DialContext(ctx, "tcp", "10.0.0.1:6379") }
	mustFailWith := func(c net.Conn, err error, what string) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: the pool was told of a failed dial: %v", what, err)
		}
		var opErr *net.OpError
		if _, werr := c.Write([]byte("PING\r\n")); !errors.As(werr, &opErr) || opErr.Op != "dial" {
			t.Fatalf("%s: writing to the conn: %v, want the dial's error", what, werr)
		}
	}

	go func() { results <- refused }()
	c, err := dial()
	mustFailWith(c, err, "a refused dial")

	// Failing: a probe in flight, held; another request fails at once
	// with the last error, without dialing.
	probe := make(chan net.Conn)
	go func() {
		c, _ := dial()
		probe <- c
	}()
	waitFor(t, 5*time.Second, "the probe dialing", func() bool { return calls.Load() == 2 })
	c, err = dial()
	mustFailWith(c, err, "a dial while the probe is out")
	if n := calls.Load(); n != 2 {
		t.Fatalf("%d dials, want 2: a request dialed while the probe was out", n)
	}
	results <- nil // the server is back: the probe connects
	if c := <-probe; c == nil {
		t.Fatal("the probe did not connect")
	} else if _, ok := c.(*deadConn); ok {
		t.Fatal("the probe that connected returned a dead conn")
	}
	// Healthy: every dial is real again.
	go func() { results <- nil }()
	if c, err := dial(); err != nil || calls.Load() != 3 {
		t.Fatalf("after the probe connected: %v, %d dials (want 3)", err, calls.Load())
	} else if _, ok := c.(*deadConn); ok {
		t.Fatal("a dial after the recovery returned a dead conn")
	}
}

// A FailFast store dials through the redialer, on one server or a
// cluster's nodes; a patient one keeps go-redis's own dialer (its dial
// retries are the patience).
func TestFailFastDialsThroughRedialer(t *testing.T) {
	for _, failFast := range []bool{false, true} {
		o := &redis.Options{}
		Options{FailFast: failFast}.tune(o)
		co := &redis.ClusterOptions{}
		Options{FailFast: failFast}.tuneCluster(co)
		if (o.Dialer != nil) != failFast || (co.Dialer != nil) != failFast {
			t.Errorf("FailFast %v: single-node dialer set %v, cluster dialer set %v", failFast, o.Dialer != nil, co.Dialer != nil)
		}
	}
}
