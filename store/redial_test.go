package store

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
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

func startSteadyTaker(l Limiter, key string, interval time.Duration) *steadyTaker {
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
	needRedisBinaries(t)
	server := newRedisNode(t)
	r, err := OpenRedis(context.Background(), tokenBucket(t, 1, 1_000_000),
		RedisOptions{URL: "redis://" + server.addr(), Prefix: "redial:", FailFast: true})
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
		server.kill()
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
		up := server.start()
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
