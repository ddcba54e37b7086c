package redisstore

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/internal/redistest"
)

// failoverBound is how long after the observed promotion every key must
// be decided by the store again: generous for a loaded 2-core machine
// (measured: a few hundred ms; before the store followed the topology,
// the dead master's keys failed until go-redis's 60 s slot-map refresh).
const failoverBound = 3 * time.Second

// TestRedisClusterFailoverFollowed: a FailFast store on a real cluster of
// three masters and three replicas, one master stopped (hung by SIGSTOP,
// or shut down), decides every key again within failoverBound of the
// moment its replica was seen promoted, and never counts a request twice.
//
// Nothing double counted: the bucket refills one token an hour from a
// burst of 100,000, so in the minute the test runs every script that runs
// on a key takes exactly one token and none comes back; a decision's
// Remaining is the burst less the takes the serving master has seen.
// Replication is asynchronous: takes the old master acknowledged but had
// not yet sent to its replica are lost at the promotion, and the bucket
// then holds more than it should (Remaining goes up: admitting more, the
// known cost of a failover). What must never happen is a request taking
// twice (a retried script that had already run): between two answered
// requests on a key, Remaining may fall by at most the number of requests
// sent in between, counting the answered one (a request that failed may
// still have run once).
func TestRedisClusterFailoverFollowed(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a six-node Redis Cluster, twice")
	}
	for _, how := range []string{"sigstop", "shutdown"} {
		t.Run(how, func(t *testing.T) {
			// Each on a cluster of its own: the two wait out their
			// failovers at once.
			t.Parallel()
			testFailoverFollowed(t, how)
		})
	}
}

// keyOutcome is one Take on a key of the failover test.
type keyOutcome struct {
	seq        int // the request's place among its key's, from 1
	start, end time.Time
	err        error
	remaining  int64
}

func testFailoverFollowed(t *testing.T, how string) {
	ctx := context.Background()
	c := redistest.StartCluster(t, 3, 1, time.Second)
	const burst = 100_000
	alg, err := algorithms.NewTokenBucket(algorithms.Rate{N: 1, Per: time.Hour}, burst)
	if err != nil {
		t.Fatal(err)
	}
	const prefix = "failover:"
	r, err := Open(ctx, alg, Options{URL: c.URL, Prefix: prefix, FailFast: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cc := r.client.(*redis.ClusterClient)

	// Thirty keys over the slots of all three masters; the one stopped
	// serves the first key.
	keys := make([]string, 30)
	owner := make([]string, len(keys))
	perMaster := map[string]int{}
	for i := range keys {
		keys[i] = fmt.Sprintf("key-%d", i)
		m, err := cc.MasterForKey(ctx, prefix+keys[i])
		if err != nil {
			t.Fatal(err)
		}
		owner[i] = m.Options().Addr
		perMaster[owner[i]]++
	}
	if len(perMaster) != 3 {
		t.Fatalf("the keys reach %d masters, want all 3: %v", len(perMaster), perMaster)
	}
	victim := c.Node(t, owner[0])
	replica, replicaID := c.ReplicaOf(t, victim)

	// One goroutine per key, one Take every 10 ms.
	outcomes := make([][]keyOutcome, len(keys))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i, key := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(10 * time.Millisecond)
			defer tick.Stop()
			for seq := 1; ; seq++ {
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				start := time.Now()
				d, err := r.Take(ctx, key, algorithms.FromTime(start), 1)
				outcomes[i] = append(outcomes[i], keyOutcome{seq: seq, start: start, end: time.Now(), err: err, remaining: d.Remaining})
			}
		}()
	}
	stopWorkers := func() {
		if stop != nil {
			close(stop)
			wg.Wait()
			stop = nil
		}
	}
	defer stopWorkers()
	time.Sleep(500 * time.Millisecond)

	stopped := time.Now()
	switch how {
	case "sigstop":
		victim.Stop()
	case "shutdown":
		victim.Client().ShutdownNoSave(ctx) // its answer is the connection closing
	}
	// Watch the replica's own view until it serves slots as a master:
	// the promotion, as observed (to within one poll, 5 ms).
	promoted := redistest.WaitPromoted(t, replica, replicaID, 30*time.Second)
	// Run on past the bound, then a second more: every key must be
	// answered throughout that last stretch.
	time.Sleep(time.Until(promoted.Add(failoverBound + time.Second)))
	stopWorkers()
	end := time.Now()

	var worstKey string
	var worst time.Duration // from the promotion to the last key back
	victimFailed, stray := 0, 0
	var slowest time.Duration // the longest a failing request waited
	errKinds := map[string]int{}
	lost := 0 // tokens given back by the promotion
	steady := promoted.Add(failoverBound)
	for i, key := range keys {
		out := outcomes[i]
		// Back on the store: the first answered request that ended at or
		// after the promotion. None of the stopped master's keys could be
		// answered in between: their slots had no master.
		var back time.Time
		answered, failed := 0, 0 // in the last second, after the bound
		for _, o := range out {
			if o.err != nil {
				slowest = max(slowest, o.end.Sub(o.start))
				errKinds[errKind(o.err)]++
				if owner[i] == victim.Addr() {
					victimFailed++
				}
			}
			if back.IsZero() && o.err == nil && !o.end.Before(promoted) {
				back = o.end
			}
			if !back.IsZero() && o.err != nil && o.start.After(back) {
				stray++ // a timeout on a loaded machine, after the key was back
			}
			if o.start.After(steady) {
				if o.err == nil {
					answered++
				} else {
					failed++
				}
			}
		}
		if back.IsZero() {
			t.Errorf("%s (master %s): never answered after the promotion", key, owner[i])
			continue
		}
		if lag := back.Sub(promoted); lag > worst || worstKey == "" {
			worst, worstKey = lag, key
		}
		if back.After(steady) {
			t.Errorf("%s (master %s): back on the store %v after the promotion; want within %v",
				key, owner[i], back.Sub(promoted).Round(time.Millisecond), failoverBound)
		}
		if failed >= answered {
			t.Errorf("%s (master %s): %d of its %d requests in the last second failed, after the bound", key, owner[i], failed, answered+failed)
		}
		// Nothing double counted (see the test's doc).
		prevSeq, prevRemaining := 0, int64(burst)
		for _, o := range out {
			if o.err != nil {
				continue
			}
			if fell := prevRemaining - o.remaining; fell > int64(o.seq-prevSeq) {
				t.Errorf("%s: Remaining fell by %d over requests %d..%d, %d requests: one counted twice",
					key, fell, prevSeq+1, o.seq, o.seq-prevSeq)
			} else if fell < 0 {
				lost += int(-fell)
			}
			prevSeq, prevRemaining = o.seq, o.remaining
		}
	}
	if victimFailed == 0 {
		t.Errorf("no request on %s's keys failed: the master was not stopped", victim.Addr())
	}
	sent := 0
	for _, out := range outcomes {
		sent += len(out)
	}
	t.Logf("%s of master %s (%d of %d keys): replica %s seen promoted %v later; last key (%s) back on the store %v after the promotion; %d requests over %v, failures by kind %v (%d after their key was back), the slowest in %v; %d takes lost with the unreplicated writes",
		how, victim.Addr(), perMaster[victim.Addr()], len(keys), replica.Addr(), promoted.Sub(stopped).Round(time.Millisecond),
		worstKey, worst.Round(time.Millisecond), sent, end.Sub(stopped.Add(-500*time.Millisecond)).Round(time.Millisecond), errKinds, stray, slowest.Round(time.Millisecond), lost)
}

// errKind names a store error by what went wrong, for the log.
func errKind(err error) string {
	s := err.Error()
	for _, k := range []string{"i/o timeout", "connection refused", "CLUSTERDOWN", "MOVED", "EOF", "connection reset", "READONLY", "TRYAGAIN"} {
		if strings.Contains(s, k) {
			return k
		}
	}
	return s
}
