package route_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	_ "github.com/ratelim/ratelim/algorithms/peers" // the peer models, by name
	"github.com/ratelim/ratelim/route"
	"github.com/ratelim/ratelim/store"
	"github.com/ratelim/ratelim/topology"
)

// counted is a copy that counts the calls it gets: an atomic take is one
// Take; a read-then-write is a Load and, for an admission, a Save.
type counted struct {
	*store.Memory
	takes, loads, saves int
	// until, when set, is the last Load before which another server
	// writes the key (from the second Load on): a write between a read
	// and its swap.
	until int
}

func (c *counted) Take(ctx context.Context, key string, now algorithms.Time, cost int64) (store.Decision, error) {
	c.takes++
	return c.Memory.Take(ctx, key, now, cost)
}

func (c *counted) Load(ctx context.Context, key string) (algorithms.State, error) {
	c.loads++
	if c.loads > 1 && c.loads <= c.until {
		st, _ := c.Memory.Load(ctx, key)
		st.T++
		_ = c.Memory.Save(ctx, key, st, time.Hour)
	}
	return c.Memory.Load(ctx, key)
}

func (c *counted) Save(ctx context.Context, key string, st algorithms.State, ttl time.Duration) error {
	c.saves++
	return c.Memory.Save(ctx, key, st, ttl)
}

func build(t *testing.T, name string) algorithms.Algorithm {
	t.Helper()
	info, ok := algorithms.Lookup(name)
	if !ok {
		t.Fatalf("no algorithm %s", name)
	}
	alg, err := info.Build(algorithms.Params{Rate: algorithms.Rate{N: 10, Per: time.Second}, Burst: 5, Window: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return alg
}

// TestWritesOf: a library's model writes as its library does; ratelim's
// own algorithms overwrite, the racy topology's lesson.
func TestWritesOf(t *testing.T) {
	for _, tc := range []struct {
		algorithm string
		want      route.Writes
	}{
		{"token-bucket", route.Overwrite},
		{"gcra", route.Overwrite},
		{"throttled", route.CompareAndSwap},
		{"redis_rate", route.Atomic},
		{"envoy-ratelimit", route.Atomic},
		{"no-such-algorithm", route.Overwrite},
	} {
		if got := route.WritesOf(tc.algorithm); got != tc.want {
			t.Errorf("WritesOf(%q) = %s, want %s", tc.algorithm, got, tc.want)
		}
	}
}

// TestTakeWritesAsTheAlgorithmDoes: on the racy topology a request of an
// algorithm that writes atomically is one Take; one that overwrites reads
// and writes in two calls; a compare-and-swap reads, then reads again to
// compare before it writes. On the shared topology every request is one
// Take.
func TestTakeWritesAsTheAlgorithmDoes(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		kind                topology.Kind
		algorithm           string
		takes, loads, saves int
	}{
		{topology.Racy, "redis_rate", 1, 0, 0},
		{topology.Racy, "gcra", 0, 1, 1},
		{topology.Racy, "throttled", 0, 2, 1},
		{topology.Shared, "gcra", 1, 0, 0},
		{topology.Shared, "throttled", 1, 0, 0},
	} {
		alg := build(t, tc.algorithm)
		c := &counted{Memory: store.NewMemory(alg)}
		r := route.New(topology.New(topology.Config{Kind: tc.kind, Servers: 2}), []route.Copy{c}, alg, nil)
		d, err := r.Take(ctx, r.Route(1, 0), "k", 0, 0, 1)
		if err != nil || !d.Allowed {
			t.Fatalf("%s on %s: the first request: %+v, %v (want admitted)", tc.algorithm, tc.kind, d, err)
		}
		if c.takes != tc.takes || c.loads != tc.loads || c.saves != tc.saves {
			t.Errorf("%s on %s: %d takes, %d loads, %d saves; want %d, %d, %d", tc.algorithm, tc.kind,
				c.takes, c.loads, c.saves, tc.takes, tc.loads, tc.saves)
		}
	}
}

// TestCompareAndSwapTriesTenTimes: a swap that finds the key changed
// reads again; after MaxCASAttempts lost swaps the take fails with
// ErrCASExhausted, for the fail policy to answer, as throttled gives up.
func TestCompareAndSwapTriesTenTimes(t *testing.T) {
	ctx := context.Background()
	alg := build(t, "throttled")
	topo := topology.New(topology.Config{Kind: topology.Racy, Servers: 2})
	for _, tc := range []struct {
		name  string
		until int // the last load another server's write precedes
		want  error
		loads int
	}{
		{"no one else writes", 0, nil, 2},
		{"a write lands between each read and its swap", 1 << 30, route.ErrCASExhausted, 2 * route.MaxCASAttempts},
		{"the last try's swap lands", 2*route.MaxCASAttempts - 2, nil, 2 * route.MaxCASAttempts},
	} {
		c := &counted{Memory: store.NewMemory(alg), until: tc.until}
		r := route.New(topo, []route.Copy{c}, alg, nil)
		_, err := r.Take(ctx, 0, "k", 0, 0, 1)
		if !errors.Is(err, tc.want) || c.loads != tc.loads {
			t.Errorf("%s: %v after %d loads, want %v after %d", tc.name, err, c.loads, tc.want, tc.loads)
		}
	}
}

// TestTakeReplicatesWhatThePrimaryAdmits: on a split brain an admission on
// the primary reaches the replica (here with no lag); a refusal, a
// decision on the replica, and an unreachable copy send nothing. A heal
// (Resync) copies each key it is given from the primary.
func TestTakeReplicatesWhatThePrimaryAdmits(t *testing.T) {
	ctx := context.Background()
	alg := build(t, "token-bucket")
	primary, replica := store.NewMemory(alg), store.NewMemory(alg)
	topo := topology.New(topology.Config{Kind: topology.SplitBrain, Servers: 2})
	r := route.New(topo, []route.Copy{primary, replica}, alg, nil)
	state := func(c route.Copy, key string) algorithms.State {
		st, err := c.Load(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	same := func(a, b algorithms.State) bool { return a.T == b.T && a.N == b.N && slices.Equal(a.Log, b.Log) }
	if _, err := r.Take(ctx, 0, "a", 0, 0, 1); err != nil {
		t.Fatal(err)
	}
	if got, want := state(replica, "a"), state(primary, "a"); !same(got, want) || same(want, algorithms.State{}) {
		t.Errorf("after an admission on the primary the replica holds %+v, want the primary's %+v", got, want)
	}
	if _, err := r.Take(ctx, 1, "b", 0, 0, 1); err != nil {
		t.Fatal(err)
	}
	if got := state(primary, "b"); !same(got, algorithms.State{}) {
		t.Errorf("a decision on the replica reached the primary: %+v", got)
	}
	if got := state(replica, "b"); same(got, algorithms.State{}) {
		t.Errorf("an admission on the replica was overwritten by the primary's state of the key (none)")
	}
	if _, err := r.Take(ctx, 0, "c", 0, 0, 99); err != nil {
		t.Fatal(err)
	}
	if got := state(replica, "c"); !same(got, algorithms.State{}) {
		t.Errorf("a refusal was replicated: %+v", got)
	}
	if _, err := r.Take(ctx, topology.Unreachable, "a", 0, 0, 1); !errors.Is(err, route.ErrUnreachable) {
		t.Errorf("an unreachable copy answered %v, want ErrUnreachable", err)
	}
	if _, err := r.Take(ctx, topology.ClusterDown, "a", 0, 0, 1); !errors.Is(err, route.ErrClusterDown) || !route.StoreDown(err) {
		t.Errorf("a cluster that is down answered %v, want ErrClusterDown", err)
	}
	if err := r.Resync(ctx, slices.Values([]string{"b"}), 0); err != nil {
		t.Fatal(err)
	}
	if got := state(replica, "b"); !same(got, algorithms.State{}) {
		t.Errorf("after the heal the replica still holds its own write for b: %+v, want the primary's (none)", got)
	}
}

// TestClusterReplicatesWithinTheShard: on a cluster an admission on a
// shard's master reaches that shard's replicas only, and a heal copies
// each key from its shard's master to the shard's other nodes.
func TestClusterReplicatesWithinTheShard(t *testing.T) {
	ctx := context.Background()
	alg := build(t, "token-bucket")
	topo := topology.New(topology.Config{Kind: topology.Cluster, Servers: 1, Masters: 2, Replicas: 2})
	var copies []route.Copy
	for range topo.Copies() {
		copies = append(copies, store.NewMemory(alg))
	}
	r := route.New(topo, copies, alg, nil)
	key := "somekey" // slot 11058: the second of two masters (8192–16383), copy 3
	target := topo.RouteSlot(0, topology.HashSlot(key), 0)
	if target != 3 {
		t.Fatalf("somekey routed to copy %d, want s1-master (3)", target)
	}
	if _, err := r.Take(ctx, target, key, 0, 0, 1); err != nil {
		t.Fatal(err)
	}
	for i, c := range copies {
		st, err := c.Load(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if written, want := st.T != 0 || st.N != 0, i >= 3; written != want {
			t.Errorf("%s holds %+v after an admission on s1-master (want a copy: %v)", topo.Copies()[i], st, want)
		}
	}
	if err := copies[4].Save(ctx, key, algorithms.State{N: 99}, route.ReplicaTTL); err != nil {
		t.Fatal(err)
	}
	if err := r.Resync(ctx, slices.Values([]string{key}), 0); err != nil {
		t.Fatal(err)
	}
	if st, _ := copies[4].Load(ctx, key); st.N == 99 {
		t.Errorf("after the heal s1-replica1 still holds its own state")
	}
}

// TestSlotKeyPicksTheShard: a fleet whose keys carry a prefix ("key:")
// routes and heals each by the slot of the key without it, as the
// simulator slots it: "key:orders" hashes to slot 15573, shard 2 of three,
// "orders" to slot 105, shard 0's.
func TestSlotKeyPicksTheShard(t *testing.T) {
	ctx := context.Background()
	alg := build(t, "token-bucket")
	topo := topology.New(topology.Config{Kind: topology.Cluster, Servers: 1, Replicas: 1})
	var copies []route.Copy
	for range topo.Copies() {
		copies = append(copies, store.NewMemory(alg))
	}
	r := route.New(topo, copies, alg, nil)
	r.SlotKey = func(key string) string { return strings.TrimPrefix(key, "key:") }
	if got := r.RouteKey(0, "key:orders", 0); got != 0 {
		t.Fatalf("key:orders routed to copy %d, want s0-master (0)", got)
	}
	// The replica took no replication (its own state), and the heal
	// must copy s0-master's over it, and touch no other shard.
	if _, err := r.Take(ctx, 0, "key:orders", 0, 0, 1); err != nil {
		t.Fatal(err)
	}
	if err := copies[1].Save(ctx, "key:orders", algorithms.State{N: 99}, route.ReplicaTTL); err != nil {
		t.Fatal(err)
	}
	if err := r.Resync(ctx, slices.Values([]string{"key:orders"}), 0); err != nil {
		t.Fatal(err)
	}
	master, _ := copies[0].Load(ctx, "key:orders")
	if st, _ := copies[1].Load(ctx, "key:orders"); st.N != master.N || st.T != master.T {
		t.Errorf("after the heal s0-replica holds %+v, want s0-master's %+v", st, master)
	}
	for i := 2; i < len(copies); i++ {
		if st, _ := copies[i].Load(ctx, "key:orders"); st.N != 0 || st.T != 0 {
			t.Errorf("the heal wrote key:orders to %s: %+v", topo.Copies()[i], st)
		}
	}
}
