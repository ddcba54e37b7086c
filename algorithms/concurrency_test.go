package algorithms

import (
	"testing"
	"time"

	"pgregory.net/rapid"
)

func TestConcurrencyTakesAndGivesBack(t *testing.T) {
	c, err := NewConcurrency(2, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var st State
	var a, b, d Decision
	st, a = c.Step(st, 0, 1)
	st, b = c.Step(st, At(time.Second), 1)
	if !a.Allowed || !b.Allowed || b.Remaining != 0 {
		t.Fatalf("two in flight of two: %+v, %+v", a, b)
	}
	if a.Lease != At(10*time.Second) || b.Lease != At(11*time.Second) {
		t.Errorf("leases %d and %d, want their expiries 10s and 11s", a.Lease, b.Lease)
	}
	// The third waits: the soonest lease expires at 10s, but a completion
	// is likelier sooner, so the hint is capped.
	st, d = c.Step(st, At(2*time.Second), 1)
	if d.Allowed || d.RetryAfter != MaxConcurrencyRetry || d.ResetAfter != 9*time.Second {
		t.Errorf("third in flight: %+v, want refused, Retry-After %v, reset 9s", d, MaxConcurrencyRetry)
	}
	// The first completes: its slot is free again.
	st = c.Release(st, At(3*time.Second), a.Lease, 1)
	if st, d = c.Step(st, At(3*time.Second), 1); !d.Allowed {
		t.Errorf("after a release: %+v, want admitted", d)
	}
	// Releasing again, or releasing a lease never taken, changes nothing.
	again := c.Release(st, At(3*time.Second), a.Lease, 1)
	if len(again.Log) != len(st.Log) {
		t.Errorf("a second release of one lease freed a slot: %v, was %v", again.Log, st.Log)
	}
	// A server dies holding both leases (till 11s and 13s): they leak,
	// each slot free again only when its lease expires.
	if _, d = c.Step(st, At(10*time.Second), 1); d.Allowed {
		t.Errorf("at 10s, both leases held: %+v, want refused", d)
	}
	if _, d = c.Step(st, At(12*time.Second), 1); !d.Allowed || d.Remaining != 0 {
		t.Errorf("at 12s, one lease expired: %+v, want admitted with none left", d)
	}
	if _, d = c.Step(st, At(13*time.Second), 1); !d.Allowed || d.Remaining != 1 {
		t.Errorf("at 13s, both expired: %+v, want admitted with one left", d)
	}
}

func TestConcurrencyRefuses(t *testing.T) {
	for _, tc := range []struct {
		n   int64
		ttl time.Duration
	}{{0, time.Second}, {1 << 21, time.Second}, {1, 0}, {1, 25 * time.Hour}} {
		if _, err := NewConcurrency(tc.n, tc.ttl); err == nil {
			t.Errorf("NewConcurrency(%d, %s) succeeded", tc.n, tc.ttl)
		}
	}
	c, _ := NewConcurrency(3, time.Second)
	if _, d := c.Step(State{}, 0, 4); d.Allowed || d.RetryAfter != Never {
		t.Errorf("cost 4 of 3: %+v, want never", d)
	}
}

// TestPropertyConcurrencyNeverExceedsItsLimit: whatever the order of
// requests, completions and clock steps, the leases live at any instant
// (taken, not released, not expired) never outnumber the limit; every
// lease is gone TTL after it was taken; and Step never modifies prev.
func TestPropertyConcurrencyNeverExceedsItsLimit(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		max := rapid.Int64Range(1, 6).Draw(t, "max")
		ttl := time.Duration(rapid.Int64Range(1, 5_000).Draw(t, "ttl ms")) * time.Millisecond
		c, err := NewConcurrency(max, ttl)
		if err != nil {
			t.Fatal(err)
		}
		type held struct {
			lease Time
			cost  int64
		}
		var st State
		var out []held
		now := Time(0)
		for range rapid.IntRange(1, 120).Draw(t, "ops") {
			now += Time(rapid.Int64Range(0, 2_000_000).Draw(t, "gap"))
			if len(out) > 0 && rapid.Bool().Draw(t, "release?") {
				i := rapid.IntRange(0, len(out)-1).Draw(t, "which")
				st = c.Release(st, now, out[i].lease, out[i].cost)
				out = append(out[:i], out[i+1:]...)
				continue
			}
			cost := rapid.Int64Range(0, 3).Draw(t, "cost")
			before := append([]int64(nil), st.Log...)
			next, d := c.Step(st, now, cost)
			for i := range before {
				if st.Log[i] != before[i] {
					t.Fatalf("Step modified prev")
				}
			}
			st = next
			if d.Allowed && cost > 0 {
				out = append(out, held{d.Lease, cost})
				if d.Lease != now+Time(ttl/time.Microsecond) {
					t.Fatalf("lease %d at %d, want now + TTL", d.Lease, now)
				}
			}
			// What the model holds: leases not released and not expired.
			var live int64
			for _, h := range out {
				if h.lease > now {
					live += h.cost
				}
			}
			if live > max {
				t.Fatalf("%d in flight at %d, limit %d", live, now, max)
			}
			if int64(len(c.live(st.Log, now))) != live {
				t.Fatalf("the state holds %d live leases, the model %d", len(c.live(st.Log, now)), live)
			}
			if d.Remaining != max-live {
				t.Fatalf("remaining %d with %d in flight of %d", d.Remaining, live, max)
			}
		}
	})
}
