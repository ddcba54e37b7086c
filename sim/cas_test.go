package sim

import (
	"context"
	"github.com/ratelim/ratelim/route"
	"strings"
	"testing"
	"time"

	"github.com/ratelim/ratelim/store"
)

// On the racy topology, where GCRA read at t and written a round trip
// later lets servers overwrite each other's admissions, throttled's
// compare-and-swap does not: a swap that finds the key changed reads
// again, so no admission is lost and none is doubled. With fail-closed,
// what it admits stays within the single figure; the swaps that fail ten
// times in a row are the fail policy's.
func TestThrottledCompareAndSwapDoesNotRace(t *testing.T) {
	sc := hammer(Racy, 4, RoundRobin)
	sc.Topology.OnError = store.FailClosed
	sc.Clients[0].Traffic = []Traffic{{Pattern: Constant, Rate: perSecond(4000)}}

	sc.Limit.Algorithm = "gcra"
	racy := mustRun(t, sc).Clients[0]
	if racy.Allowed <= single {
		t.Fatalf("gcra on the racy topology admitted %d, want more than %d (the race this test needs)", racy.Allowed, single)
	}

	sc.Limit.Algorithm = "throttled"
	// A request that lost a swap read again: refused then, after more
	// than one round trip; or refused by the fail policy after ten.
	var reread, exhausted time.Duration
	r, err := Run(context.Background(), sc, Options{Observe: func(o Observation) {
		switch {
		case o.Decision.Policy != "":
			exhausted = max(exhausted, o.Latency)
		case !o.Decision.Allowed:
			reread = max(reread, o.Latency)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	c := r.Clients[0]
	if c.Allowed > single {
		t.Errorf("throttled on the racy topology admitted %d, want at most %d: its swaps must not race", c.Allowed, single)
	}
	if c.Allowed < single-5 {
		t.Errorf("throttled admitted %d, want about %d: a failed swap reads again rather than giving up", c.Allowed, single)
	}
	if c.FailedClosed == 0 {
		t.Errorf("no request failed closed: at 4,000/s over 4 servers some swaps must fail %d times in a row", route.MaxCASAttempts)
	}
	if rtt := sc.Topology.RTT; reread < 2*rtt || exhausted != route.MaxCASAttempts*rtt {
		t.Errorf("the slowest refusal took %v and the slowest failed swap %v, want at least two round trips and exactly %d (%v each): a lost swap costs another round trip", reread, exhausted, route.MaxCASAttempts, rtt)
	}
	found := false
	for _, e := range r.Events {
		if e.TS == 0 && strings.Contains(e.Text, "compare-and-swap") {
			found = true
		}
	}
	if !found {
		t.Errorf("the run does not say that throttled swaps: %+v", r.Events)
	}
}

// A library whose store decides in one atomic operation (a Lua script, an
// INCRBY) cannot race: on the racy topology it decides exactly as on the
// shared one.
func TestAtomicPeersDoNotRace(t *testing.T) {
	for _, name := range []string{"redis_rate", "envoy-ratelimit", "ulule-limiter"} {
		sc := hammer(Racy, 4, RoundRobin)
		sc.Limit.Algorithm = name
		sc.Limit.Params.Window = time.Second
		sc.Clients[0].Traffic = []Traffic{{Pattern: Constant, Rate: perSecond(4000)}}
		racy := mustRun(t, sc).Clients[0]
		sc.Topology.Kind = Shared
		shared := mustRun(t, sc).Clients[0]
		if racy.Counts != shared.Counts || racy.MaxAllowed1s != shared.MaxAllowed1s {
			t.Errorf("%s: racy %+v, shared %+v; want the same", name, racy.Counts, shared.Counts)
		}
	}
}
