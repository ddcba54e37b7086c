package topology

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
)

func TestCopyNames(t *testing.T) {
	for _, tc := range []struct {
		kind    Kind
		servers int
		want    []string
	}{
		{Local, 3, []string{"server-0", "server-1", "server-2"}},
		{Local, 0, []string{"server-0"}},
		{Shared, 4, []string{"shared"}},
		{Racy, 4, []string{"shared"}},
		{"", 2, []string{"shared"}},
		{SplitBrain, 4, []string{"primary", "replica"}},
		{Cluster, 4, []string{"s0-master", "s0-replica", "s1-master", "s1-replica", "s2-master", "s2-replica"}},
	} {
		if got := New(Config{Kind: tc.kind, Servers: tc.servers, Replicas: 1}).Copies(); !slices.Equal(got, tc.want) {
			t.Errorf("CopyNames(%q, %d) = %q, want %q", tc.kind, tc.servers, got, tc.want)
		}
	}
}

func sec(s float64) algorithms.Time { return algorithms.At(time.Duration(s * float64(time.Second))) }

// TestRoute walks each kind through an outage and a partition of servers
// {0,1 | 2,3} at 10 s, and checks every server's copy at chosen instants.
func TestRoute(t *testing.T) {
	splitBrain := Config{Kind: SplitBrain, Servers: 4, FailoverAfter: 2 * time.Second, PrimaryStopsAfter: 5 * time.Second}
	for _, tc := range []struct {
		name string
		cfg  Config
		// the copy of servers 0..3 when healthy, in an outage, and at
		// 11 s, 13 s and 16 s into a partition that began at 10 s.
		healthy, outage, at11, at13, at16 []int
	}{
		{"local jars reach their own copy whatever happens", Config{Kind: Local, Servers: 4},
			[]int{0, 1, 2, 3}, []int{0, 1, 2, 3}, []int{0, 1, 2, 3}, []int{0, 1, 2, 3}, []int{0, 1, 2, 3}},
		{"shared: the cut-off side has no store", Config{Kind: Shared, Servers: 4, FailoverAfter: time.Second, PrimaryStopsAfter: PrimaryNeverStops},
			[]int{0, 0, 0, 0}, []int{-1, -1, -1, -1}, []int{0, 0, -1, -1}, []int{0, 0, -1, -1}, []int{0, 0, -1, -1}},
		{"racy routes as shared", Config{Kind: Racy, Servers: 4, PrimaryStopsAfter: PrimaryNeverStops},
			[]int{0, 0, 0, 0}, []int{-1, -1, -1, -1}, []int{0, 0, -1, -1}, []int{0, 0, -1, -1}, []int{0, 0, -1, -1}},
		{"a primary that stops at once (the zero PrimaryStopsAfter) leaves no one a store", Config{Kind: Shared, Servers: 4},
			[]int{0, 0, 0, 0}, []int{-1, -1, -1, -1}, []int{-1, -1, -1, -1}, []int{-1, -1, -1, -1}, []int{-1, -1, -1, -1}},
		{"split brain: errors, failover at 12 s, isolated primary stops at 15 s", splitBrain,
			[]int{0, 0, 0, 0}, []int{-1, -1, -1, -1}, []int{0, 0, -1, -1}, []int{0, 0, 1, 1}, []int{-1, -1, 1, 1}},
		{"split brain whose primary never stops", Config{Kind: SplitBrain, Servers: 4, PrimaryStopsAfter: PrimaryNeverStops},
			[]int{0, 0, 0, 0}, []int{-1, -1, -1, -1}, []int{0, 0, 1, 1}, []int{0, 0, 1, 1}, []int{0, 0, 1, 1}},
		{"split brain whose replica is never promoted: the cut-off side has no store all the partition", Config{Kind: SplitBrain, Servers: 4, FailoverAfter: FailoverNever, PrimaryStopsAfter: PrimaryNeverStops},
			[]int{0, 0, 0, 0}, []int{-1, -1, -1, -1}, []int{0, 0, -1, -1}, []int{0, 0, -1, -1}, []int{0, 0, -1, -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tp := New(tc.cfg)
			routes := func(at algorithms.Time) []int {
				var got []int
				for s := range 4 {
					got = append(got, tp.Route(s, at))
				}
				return got
			}
			check := func(what string, at algorithms.Time, want []int) {
				t.Helper()
				if got := routes(at); !slices.Equal(got, want) {
					t.Errorf("%s: routes %v, want %v", what, got, want)
				}
			}
			check("healthy", sec(1), tc.healthy)
			tp.OutageStarts()
			tp.OutageStarts() // two overlapping outages
			tp.OutageEnds()
			check("outage (one of two over)", sec(2), tc.outage)
			tp.OutageEnds()
			check("after the outages", sec(3), tc.healthy)
			if err := tp.PartitionStarts(context.Background(), sec(10), Partition{Groups: [][]int{{0, 1, 99}, {2, 3}}}, nil, nil); err != nil {
				t.Fatal(err)
			}
			cutOff := func(what string, want []bool) {
				t.Helper()
				var got []bool
				for s := range 4 {
					got = append(got, tp.CutOff(s))
				}
				if !slices.Equal(got, want) || tp.CutOff(-1) || tp.CutOff(4) {
					t.Errorf("%s: cut off %v (servers -1, 4: %v, %v), want %v", what, got, tp.CutOff(-1), tp.CutOff(4), want)
				}
			}
			cutOff("partition", []bool{false, false, true, true})
			check("partition +1 s", sec(11), tc.at11)
			check("partition +3 s", sec(13), tc.at13)
			check("partition +6 s", sec(16), tc.at16)
			if err := tp.PartitionEnds(sec(19), nil); err != nil {
				t.Fatal(err)
			}
			check("healed", sec(20), tc.healthy)
			cutOff("healed", []bool{false, false, false, false})
		})
	}
}

func TestSpreader(t *testing.T) {
	rr := Spreader{Servers: 3}
	var got []int
	for range 7 {
		got = append(got, rr.Pick(0, nil))
	}
	if want := []int{0, 1, 2, 0, 1, 2, 0}; !slices.Equal(got, want) {
		t.Errorf("round robin picks %v, want %v", got, want)
	}
	kh := Spreader{Balancer: KeyHash, Servers: 5}
	if a, b := kh.Pick(HashKey("alice"), nil), kh.Pick(HashKey("alice"), nil); a != b || a != int(HashKey("alice")%5) {
		t.Errorf("key hash picks %d then %d for one key", a, b)
	}
	random := Spreader{Balancer: Random, Servers: 4}
	if got := random.Pick(0, func(n int) int { return n - 1 }); got != 3 {
		t.Errorf("random picks %d, want what intn drew (3)", got)
	}
	one := Spreader{Balancer: Random, Servers: 1}
	if got := one.Pick(0, nil); got != 0 {
		t.Errorf("one server: picked %d", got)
	}
	// HashKey is FNV-1a 64: a live fleet and the simulator must agree.
	if got := HashKey("a"); got != 0xaf63dc4c8601ec8c {
		t.Errorf("HashKey(a) = %#x, want FNV-1a's 0xaf63dc4c8601ec8c", got)
	}
}

type saved struct {
	key string
	n   int64 // the state's N, which tells the writes apart
}

// TestReplication: writes reach the replica lag later and in order; a
// partition delivers what is due and loses the rest; heal resyncs and
// resumes.
func TestReplication(t *testing.T) {
	ctx := context.Background()
	tp := New(Config{Kind: SplitBrain, Servers: 2, ReplicationLag: 100 * time.Millisecond})
	var got []saved
	save := func(_ context.Context, to int, key string, st algorithms.State) error {
		if to != 1 {
			t.Errorf("saved %s to copy %d, want the replica (1)", key, to)
		}
		got = append(got, saved{key, st.N})
		return nil
	}
	st := func(n int64) algorithms.State { return algorithms.State{N: n} }
	ms := func(m int64) algorithms.Time { return algorithms.Time(m * 1000) }
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(tp.Replicate(ctx, 0, "a", st(1), ms(0), save))
	must(tp.Replicate(ctx, 0, "b", st(2), ms(50), save))
	if len(got) != 0 {
		t.Fatalf("delivered before the lag: %v", got)
	}
	must(tp.Replicate(ctx, 0, "a", st(3), ms(120), save)) // a@0 is due at 100
	if want := []saved{{"a", 1}}; !slices.Equal(got, want) {
		t.Fatalf("at 120 ms delivered %v, want %v", got, want)
	}
	if tp.InFlight() != 2 {
		t.Errorf("in flight %d, want 2", tp.InFlight())
	}
	// The link is cut at 160 ms: b@50 (due 150) arrives, a@120 is lost.
	must(tp.PartitionStarts(ctx, ms(160), Partition{Groups: [][]int{{0}, {1}}}, nil, save))
	if want := []saved{{"a", 1}, {"b", 2}}; !slices.Equal(got, want) {
		t.Fatalf("at the cut delivered %v, want %v", got, want)
	}
	if tp.ReplicatesFrom(0) || tp.InFlight() != 0 {
		t.Errorf("after the cut: replicates %v, in flight %d", tp.ReplicatesFrom(0), tp.InFlight())
	}
	must(tp.Replicate(ctx, 0, "c", st(9), ms(500), save)) // nothing is sent during the partition
	resynced := false
	must(tp.PartitionEnds(ms(600), func() error { resynced = true; return nil }))
	if !resynced || !tp.ReplicatesFrom(0) {
		t.Errorf("heal: resynced %v, replicates %v", resynced, tp.ReplicatesFrom(0))
	}
	must(tp.Replicate(ctx, 0, "d", st(4), ms(1000), save))
	must(tp.Replicate(ctx, 0, "d", st(5), ms(1100), save))
	if want := []saved{{"a", 1}, {"b", 2}, {"d", 4}}; !slices.Equal(got, want) {
		t.Fatalf("after heal delivered %v, want %v", got, want)
	}
	boom := errors.New("replica down")
	if err := tp.Replicate(ctx, 0, "e", st(6), ms(5000), func(context.Context, int, string, algorithms.State) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("a failed save returned %v, want it passed on", err)
	}
}

// TestReplicationQueueStaysSmall: a long run holds only the writes in
// flight, not every write ever sent.
func TestReplicationQueueStaysSmall(t *testing.T) {
	ctx := context.Background()
	tp := New(Config{Kind: SplitBrain, Servers: 2, ReplicationLag: time.Millisecond})
	for i := range 100_000 {
		if err := tp.Replicate(ctx, 0, "k", algorithms.State{}, algorithms.Time(i*100), func(context.Context, int, string, algorithms.State) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if n := cap(tp.replication.queue); n > 4096 {
		t.Errorf("the queue grew to %d for 10 writes in flight", n)
	}
	if tp.InFlight() != 10 {
		t.Errorf("in flight %d, want 10 (1 ms of lag at one write per 100 µs)", tp.InFlight())
	}
}

func TestZeroTopologyIsOneSharedStore(t *testing.T) {
	var tp Topology
	if tp.Kind() != Shared || tp.Route(3, 0) != 0 || !tp.Remote() {
		t.Errorf("zero Topology: kind %q, route %d", tp.Kind(), tp.Route(3, 0))
	}
}

// TestThreeSides: a partition of three sides, each reaching only what is
// on it. A split brain's primary is with the first group, its replica
// with the second; the third reaches neither. Nodes move them.
func TestThreeSides(t *testing.T) {
	groups := [][]int{{0}, {1}, {2, 3}}
	for _, tc := range []struct {
		name string
		cfg  Config
		p    Partition
		want []int // servers 0..3 at 13 s, the partition from 10 s, failover after 2 s
	}{
		{"shared: the store is with the first group", Config{Kind: Shared, Servers: 4, PrimaryStopsAfter: PrimaryNeverStops},
			Partition{Groups: groups}, []int{0, -1, -1, -1}},
		{"shared, the store placed with the third", Config{Kind: Shared, Servers: 4, PrimaryStopsAfter: PrimaryNeverStops},
			Partition{Groups: groups, Nodes: [][]string{nil, nil, {"shared"}}}, []int{-1, -1, 0, 0}},
		{"split brain: the replica with the second group, the third reaches nothing", Config{Kind: SplitBrain, Servers: 4, FailoverAfter: 2 * time.Second, PrimaryStopsAfter: PrimaryNeverStops},
			Partition{Groups: groups}, []int{0, 1, -1, -1}},
		{"split brain, the replica placed with the third", Config{Kind: SplitBrain, Servers: 4, FailoverAfter: 2 * time.Second, PrimaryStopsAfter: PrimaryNeverStops},
			Partition{Groups: groups, Nodes: [][]string{{"primary"}, nil, {"replica"}}}, []int{0, -1, 1, 1}},
		{"split brain, primary and replica on one side: no one fails over", Config{Kind: SplitBrain, Servers: 4, FailoverAfter: 2 * time.Second, PrimaryStopsAfter: PrimaryNeverStops},
			Partition{Groups: groups, Nodes: [][]string{{"primary", "replica"}}}, []int{0, -1, -1, -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tp := New(tc.cfg)
			if err := tp.PartitionStarts(context.Background(), sec(10), tc.p, nil, nil); err != nil {
				t.Fatal(err)
			}
			var got []int
			for s := range 4 {
				got = append(got, tp.Route(s, sec(13)))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("routes %v, want %v", got, tc.want)
			}
		})
	}
}
