package sim_test

import (
	"context"
	"fmt"
	mrand "math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/sim"
)

// snapshotCases are the built-in scenarios (faults of every kind, a split
// brain, retries, a NAT's shared key), and variants that reach what they
// do not: more steps than a Snapshot carries, a last step cut short by
// the duration, a jar per server, the racy store, a leaky bucket whose
// admissions are served in later steps.
func snapshotCases(t *testing.T) map[string]sim.Scenario {
	t.Helper()
	cases := map[string]sim.Scenario{}
	for _, name := range scenarios.Builtin() {
		f, err := scenarios.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		cases[name] = f.Scenario
	}
	fine := cases["partition"]
	fine.Step = 100 * time.Millisecond // 300 steps: the last 60 move on
	cases["partition, 100ms steps"] = fine
	local := cases["store-outage"]
	local.Topology.Kind = sim.Local
	cases["store-outage, local"] = local
	racy := cases["runaway-healthcheck"]
	racy.Topology.Kind, racy.Step = sim.Racy, 250*time.Millisecond
	cases["runaway-healthcheck, racy, 250ms steps"] = racy
	odd := cases["nat"]
	odd.Step = 700 * time.Millisecond // the last step ends early, at the duration
	cases["nat, 700ms steps"] = odd
	leaky, err := sim.WithAlgorithm(cases["retry-storm"], "leaky-bucket")
	if err != nil {
		t.Fatal(err)
	}
	cases["retry-storm, leaky-bucket"] = leaky
	return cases
}

// frames are the virtual times a test takes snapshots at: a frame's worth
// now and then, nothing at all, a step, a few steps, and a jump past what
// a Snapshot carries, in a seeded order; and just before the end, the end
// and past it.
func frames(sc sim.Scenario, seed uint64) []time.Duration {
	rng := mrand.New(mrand.NewPCG(seed, 7))
	gaps := []time.Duration{0, 17 * time.Millisecond, 50 * time.Millisecond, sc.Step, 3*sc.Step + 13*time.Millisecond, 65 * sc.Step}
	weights := []int{2, 4, 6, 4, 2, 1}
	// A millisecond before the end, then the end: the last step's figures
	// are settled when it ends, with no request between.
	out := []time.Duration{sc.Duration - time.Millisecond, sc.Duration, sc.Duration + sc.Step}
	for at := time.Duration(0); at < sc.Duration; {
		out = append(out, at)
		n := rng.IntN(19)
		for i, w := range weights {
			if n < w {
				at += gaps[i]
				break
			}
			n -= w
		}
	}
	slices.Sort(out)
	return out
}

// TestIncrementalSnapshotsEqualFromScratch plays each case frame by frame
// and checks every Snapshot, SnapshotFor and State against the snapshot
// built from nothing at the same instant; then that no Snapshot returned
// changed while the run went on.
func TestIncrementalSnapshotsEqualFromScratch(t *testing.T) {
	for name, sc := range snapshotCases(t) {
		t.Run(name, func(t *testing.T) {
			p, err := sim.NewPlayer(context.Background(), sc, sim.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			type kept struct {
				at         time.Duration
				snap, copy sim.Snapshot
			}
			var held []kept
			rng := mrand.New(mrand.NewPCG(2, 7))
			for _, at := range frames(sc, 1) {
				if err := p.Advance(context.Background(), at); err != nil {
					t.Fatal(err)
				}
				want := sim.SnapshotFromScratch(p)
				var got sim.Snapshot
				if rng.IntN(3) > 0 {
					// Most frames as a view asks: some keys, in another
					// order, one of them not the run's; and the last few
					// steps, or any number (0 and 70 are 60).
					keys := []string{"no-such-key"}
					for j := len(want.State) - 1; j >= 0; j -= 2 {
						keys = append(keys, want.State[j].Key)
					}
					recent := []int{1, 2, 3, rng.IntN(62), 70}[rng.IntN(5)]
					got = p.SnapshotFor(context.Background(), keys, recent)
					want.State = slices.DeleteFunc(want.State, func(s sim.StateNow) bool { return !slices.Contains(keys, s.Key) })
					if recent >= 1 {
						for i, c := range want.Clients {
							want.Clients[i].Recent = c.Recent[max(0, len(c.Recent)-recent):]
						}
					}
					if state := p.State(context.Background(), keys); !reflect.DeepEqual(state, want.State) {
						t.Fatalf("at %s, State(%q):\n got %+v\nwant %+v", p.Now(), keys, state, want.State)
					}
				} else {
					got = p.Snapshot(context.Background())
				}
				checkSnapshot(t, p.Now(), got, want)
				held = append(held, kept{p.Now(), got, clone(got)})
			}
			for _, h := range held {
				if !reflect.DeepEqual(h.snap, h.copy) {
					t.Fatalf("the snapshot taken at %s changed as the run went on", h.at)
				}
			}
		})
	}
}

// checkSnapshot fails t, naming the first part that differs, unless got
// is want.
func checkSnapshot(t *testing.T, at time.Duration, got, want sim.Snapshot) {
	t.Helper()
	if reflect.DeepEqual(got, want) {
		return
	}
	what := "TS, Step, Active or Log"
	switch {
	case len(got.Clients) != len(want.Clients):
		what = fmt.Sprintf("%d clients, want %d", len(got.Clients), len(want.Clients))
	case !reflect.DeepEqual(got.State, want.State):
		what = fmt.Sprintf("State %+v, want %+v", got.State, want.State)
	default:
		for i := range got.Clients {
			if g, w := got.Clients[i], want.Clients[i]; !reflect.DeepEqual(g, w) {
				what = fmt.Sprintf("client %d:\n got %+v\nwant %+v", i, g, w)
				break
			}
		}
	}
	t.Fatalf("at %s the incremental snapshot differs from one built from scratch: %s", at, what)
}

// clone is a deep copy of s, sharing nothing with it.
func clone(s sim.Snapshot) sim.Snapshot {
	c := s
	c.Clients = make([]sim.ClientSnapshot, len(s.Clients))
	for i, cs := range s.Clients {
		cs.Recent = slices.Clone(cs.Recent)
		c.Clients[i] = cs
	}
	c.State, c.Active, c.Log = slices.Clone(s.State), slices.Clone(s.Active), slices.Clone(s.Log)
	return c
}

// TestOldSnapshotsMayBeReadWhileTheRunGoesOn reads every snapshot of a run
// on another goroutine while the run goes on and takes the next: under
// -race, a write of the Player's to memory a Snapshot it returned can
// reach is reported.
func TestOldSnapshotsMayBeReadWhileTheRunGoesOn(t *testing.T) {
	f, err := scenarios.Open("partition")
	if err != nil {
		t.Fatal(err)
	}
	p, err := sim.NewPlayer(context.Background(), f.Scenario, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	snaps := make(chan sim.Snapshot, 1)
	sums := make(chan int64)
	go func() {
		var sum int64
		for s := range snaps {
			for range 3 { // read it while the run goes on
				for _, c := range s.Clients {
					sum += c.Total.Sent
					for _, r := range c.Recent {
						sum += r.Allowed
					}
				}
				for _, e := range s.Log {
					sum += int64(len(e.Text))
				}
			}
		}
		sums <- sum
	}()
	var want int64
	for !p.Done() {
		if err := p.Advance(context.Background(), p.Now()+50*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		s := p.Snapshot(context.Background())
		for _, c := range s.Clients {
			want += 3 * c.Total.Sent
			for _, r := range c.Recent {
				want += 3 * r.Allowed
			}
		}
		for _, e := range s.Log {
			want += 3 * int64(len(e.Text))
		}
		snaps <- s
	}
	close(snaps)
	if got := <-sums; got != want {
		t.Fatalf("the reader summed %d, the snapshots held %d when taken: one changed under it", got, want)
	}
}
