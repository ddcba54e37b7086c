package live

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/sim"
)

// twoLimits is a key with two limits, 10/s with a burst of 5 ("burst") and
// 50 a minute ("minute"), and one client sending 20/s for d: the burst
// refuses from the first second, the minute once 50 have passed.
func twoLimits(d time.Duration) sim.Scenario {
	sc := bucketScenario(sim.Shared, 2)
	sc.Duration = d
	sc.Limit = sim.Limit{Name: "burst", Algorithm: "token-bucket", Key: sim.KeyAPIKey,
		Params: algorithms.Params{Rate: perSecond(10), Burst: 5}}
	sc.Also = []sim.Limit{{Name: "minute", Algorithm: "sliding-log", Key: sim.KeyAPIKey,
		Params: algorithms.Params{Rate: algorithms.Rate{N: 50, Per: time.Minute}, Window: time.Minute}}}
	sc.Clients = []sim.Client{{Name: "eager", APIKey: "eager", Traffic: []sim.Traffic{{Pattern: sim.Constant, Rate: perSecond(20)}}, Retry: sim.Retry{Policy: sim.RetryNone}}}
	return sc
}

// A key with two limits over real HTTP on loopback: every 429 names, in
// RateLimit, a policy its RateLimit-Policy lists, with a Retry-After no
// earlier than its t (the audit has no breaches); the load run counts the
// 429s by the policy that refused; and those counts, and what was admitted,
// agree with the simulator fed the arrivals the run achieved. Only what was
// observed is asserted: on a loaded machine fewer than 50 requests may
// leave, and then the minute refuses none.
func TestTwoLimitsOverHTTP(t *testing.T) {
	wallClock(t)
	sc := twoLimits(6 * time.Second)
	fleet := startFleet(t, sc, "memory")
	live, err := Load(context.Background(), sc, LoadOptions{Targets: fleet.URLs})
	if err != nil {
		t.Fatal(err)
	}
	a := live.Audit
	if a.Breaches() != 0 || a.TransportErrors != 0 || a.Redirects != 0 {
		t.Errorf("audit: %+v", a)
	}
	c := live.Clients[0]
	var refused int64
	for name, n := range a.RejectedBy {
		if name != "burst" && name != "minute" {
			t.Errorf("rejected_by names %q, not a limit of the scenario: %v", name, a.RejectedBy)
		}
		refused += n
	}
	if refused != c.Rejected {
		t.Errorf("rejected_by %v counts %d 429s, the run %d", a.RejectedBy, refused, c.Rejected)
	}
	if c.Rejected == 0 || a.RejectedBy["burst"] == 0 {
		t.Errorf("a client at twice the burst's rate was never refused by it: %+v, rejected_by %v", c.Counts, a.RejectedBy)
	}
	// The result's own count by limit, from the decisions the 429s named.
	if !maps.Equal(nonZero(c.RejectedBy), nonZero(a.RejectedBy)) {
		t.Errorf("the result's rejected_by %v, the audit's %v", c.RejectedBy, a.RejectedBy)
	}

	observed, err := sim.Run(context.Background(), ObservedScenario(sc, live), sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	o := observed.Clients[0]
	t.Logf("%s; allowed %d live, %d simulated on the observed arrivals; rejected by %v live, %v simulated",
		a.Lateness(), c.Allowed, o.Allowed, a.RejectedBy, o.RejectedBy)
	// A decision near a refill can fall either way between the instant the
	// client stamped and the one the server decided at.
	near := func(x, y int64) bool { return abs(x-y) <= y/20+2 }
	if !near(c.Allowed, o.Allowed) {
		t.Errorf("allowed %d live, %d simulated on the same arrivals", c.Allowed, o.Allowed)
	}
	for _, name := range []string{"burst", "minute"} {
		if !near(a.RejectedBy[name], o.RejectedBy[name]) {
			t.Errorf("%s refused %d live, %d simulated on the same arrivals", name, a.RejectedBy[name], o.RejectedBy[name])
		}
	}
	// Once the minute has admitted 50, it refuses; the live run saw that
	// exactly when the simulator on its arrivals did.
	if (a.RejectedBy["minute"] > 0) != (o.RejectedBy["minute"] > 0) {
		t.Errorf("the minute refused %d live, %d simulated", a.RejectedBy["minute"], o.RejectedBy["minute"])
	}
}

func nonZero(m map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k, v := range m {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}

func abs(x int64) int64 { return max(x, -x) }

// A key with several limits on a Redis store: until the store runs them in
// one script, Serve refuses with a setup error that says so and points to
// the memory store; once it does, the fleet starts.
func TestTwoLimitsOnRedis(t *testing.T) {
	f, err := Serve(context.Background(), ServeOptions{Scenario: twoLimits(time.Second), Store: "miniredis"})
	if err == nil {
		t.Log("the Redis store runs several limits now")
		f.Close(context.Background())
		return
	}
	var setup *sim.SetupError
	if !errors.As(err, &setup) || !strings.Contains(err.Error(), "2 limits") || !strings.Contains(err.Error(), "store: memory") {
		t.Errorf("Serve on miniredis: %v; want a setup error naming the limits and the memory store", err)
	}
}

// The audit of a 429's policy fields, answer by answer.
func TestAuditRejectionPolicies(t *testing.T) {
	l := &loader{sc: twoLimits(time.Second), keys: []string{"eager"}, lastReset: map[string]time.Time{}}
	both := `"burst";q=5;w=1, "minute";q=50;w=60`
	tests := []struct {
		name       string
		h          http.Header
		retryAfter time.Duration
		binding    int
		unlisted   int64
		early      int64
	}{
		{"burst", http.Header{"Ratelimit": {`"burst";r=0;t=1`}, "Ratelimit-Policy": {both}}, time.Second, 0, 0, 0},
		{"minute", http.Header{"Ratelimit": {`"minute";r=0;t=40`}, "Ratelimit-Policy": {both}}, 40 * time.Second, 1, 0, 0},
		{"unlisted", http.Header{"Ratelimit": {`"daily";r=0;t=1`}, "Ratelimit-Policy": {both}}, time.Second, 0, 1, 0},
		{"retry before t", http.Header{"Ratelimit": {`"minute";r=0;t=40`}, "Ratelimit-Policy": {both}}, 39 * time.Second, 1, 0, 1},
		{"policies, no RateLimit", http.Header{"Ratelimit-Policy": {both}}, time.Second, 0, 1, 0},
		{"malformed", http.Header{"Ratelimit": {`minute;r=0`}, "Ratelimit-Policy": {both}}, time.Second, 0, 1, 0},
		{"no fields", http.Header{}, time.Second, 0, 0, 0},
	}
	for _, tt := range tests {
		clear(l.lastReset) // each answer on its own: no reset to go back from
		before := l.audit
		if got := l.auditRejection(0, tt.h, tt.retryAfter); got != tt.binding {
			t.Errorf("%s: binding %d, want %d", tt.name, got, tt.binding)
		}
		if d := l.audit.UnlistedPolicy - before.UnlistedPolicy; d != tt.unlisted {
			t.Errorf("%s: unlisted_policy +%d, want +%d", tt.name, d, tt.unlisted)
		}
		if d := l.audit.RetryBeforeReset - before.RetryBeforeReset; d != tt.early {
			t.Errorf("%s: retry_before_reset +%d, want +%d", tt.name, d, tt.early)
		}
	}
	want := map[string]int64{"burst": 1, "minute": 2, "daily": 1}
	if !maps.Equal(l.audit.RejectedBy, want) {
		t.Errorf("rejected_by %v, want %v", l.audit.RejectedBy, want)
	}
	if b := l.audit.Breaches(); b != 4 {
		t.Errorf("breaches %d, want the 3 unlisted and the 1 early", b)
	}
	// The names come from the server: a bounded number of them is kept.
	for i := range 2 * maxRejectedBy {
		l.countRejectedBy(strings.Repeat("x", i+1))
	}
	if n := len(l.audit.RejectedBy); n > maxRejectedBy+1 || l.audit.RejectedBy[OtherPolicies] == 0 {
		t.Errorf("rejected_by holds %d names (%v), want at most %d and the rest under %q",
			n, slices.Sorted(maps.Keys(l.audit.RejectedBy)), maxRejectedBy, OtherPolicies)
	}
}

// One of two limits in shadow mode over real HTTP: it refuses nothing (no
// 429 names it), what it would have refused passes and is counted as
// would_reject, as many as the simulator on the observed arrivals counts.
func TestShadowedLimitOverHTTP(t *testing.T) {
	wallClock(t)
	sc := twoLimits(3 * time.Second)
	sc.Also[0].Params.Rate.N = 20 // 20 a minute: less than the burst lets through in 3 s
	sc.Also[0].Shadow = true
	fleet := startFleet(t, sc, "memory")
	live, err := Load(context.Background(), sc, LoadOptions{Targets: fleet.URLs})
	if err != nil {
		t.Fatal(err)
	}
	a, c := live.Audit, live.Clients[0]
	if a.Breaches() != 0 || a.TransportErrors != 0 {
		t.Errorf("audit: %+v", a)
	}
	if a.RejectedBy["minute"] != 0 || a.RejectedBy["burst"] != c.Rejected {
		t.Errorf("rejected_by %v for %d 429s: want all by the burst, none by the shadowed minute", a.RejectedBy, c.Rejected)
	}
	for _, o := range live.Observations {
		if o.Shadowed && !o.Decision.Allowed {
			t.Errorf("a request at %s said would-reject and was refused", o.At)
		}
	}
	observed, err := sim.Run(context.Background(), ObservedScenario(sc, live), sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	o := observed.Clients[0]
	t.Logf("%s; would_reject %d live, %d simulated; allowed %d / %d", a.Lateness(), c.WouldReject, o.WouldReject, c.Allowed, o.Allowed)
	if abs(c.WouldReject-o.WouldReject) > o.WouldReject/20+2 || abs(c.Allowed-o.Allowed) > o.Allowed/20+2 {
		t.Errorf("would_reject %d, allowed %d live; %d, %d simulated on the same arrivals", c.WouldReject, c.Allowed, o.WouldReject, o.Allowed)
	}
}
