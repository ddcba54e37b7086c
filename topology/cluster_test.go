package topology

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/ratelim/ratelim/algorithms"
)

func TestHashSlot(t *testing.T) {
	for _, tc := range []struct {
		key  string
		want int
	}{
		// The specification's vectors (cluster-spec.md, "Hash tags").
		{"somekey", 11058},
		{"foo{hash_tag}", 2515},
		{"bar{hash_tag}", 2515},
		// CRC-16/XMODEM's check value, 0x31C3, modulo 16384.
		{"123456789", 0x31C3 & (Slots - 1)},
		// An empty tag counts as none: the whole key is hashed.
		{"{}a", int(crc16("{}a") & (Slots - 1))},
		// Only up to the first "}" after the first "{".
		{"{user1000}.following", int(crc16("user1000") & (Slots - 1))},
		{"foo{{bar}}zap", int(crc16("{bar") & (Slots - 1))},
		{"foo{bar}{zap}", int(crc16("bar") & (Slots - 1))},
		{"", 0},
	} {
		if got := HashSlot(tc.key); got != tc.want {
			t.Errorf("HashSlot(%q) = %d, want %d", tc.key, got, tc.want)
		}
	}
}

func TestFirstSlots(t *testing.T) {
	for _, tc := range []struct {
		masters int
		want    []int
	}{
		{1, []int{0}},
		{3, []int{0, 5461, 10923}}, // redis-cli --cluster create: 0–5460, 5461–10922, 10923–16383
		{4, []int{0, 4096, 8192, 12288}},
		{0, []int{0}},
	} {
		got := FirstSlots(tc.masters)
		if !slices.Equal(got, tc.want) {
			t.Errorf("FirstSlots(%d) = %v, want %v", tc.masters, got, tc.want)
		}
		for slot := range Slots {
			m := shardOf(got, slot)
			if got[m] > slot || (m+1 < len(got) && got[m+1] <= slot) {
				t.Fatalf("shardOf(%v, %d) = %d", got, slot, m)
			}
		}
	}
}

// keyIn is a key whose slot shard m of a 3-master cluster holds.
func keyIn(t *testing.T, m int) (key string, slot int) {
	t.Helper()
	first := FirstSlots(3)
	for i := range 1000 {
		key = fmt.Sprintf("k%d", i)
		if slot = HashSlot(key); shardOf(first, slot) == m {
			return key, slot
		}
	}
	t.Fatalf("no key in shard %d", m)
	return "", 0
}

// fixedDraw draws the middle of every range: gossip 0.5 s, election jitter
// 350 ms.
func fixedDraw(n int64) int64 { return n / 2 }

// TestClusterPartition walks a 3-master cluster through the question the
// tool exists for: a partition at 10 s leaves s0-master and servers 0, 1
// on the minority side, everything else with servers 2, 3. With the
// fixed draws, FAIL is at 25.5 s (15 s node timeout + 0.5 s of gossip)
// and s0-replica is elected at 26.35 s (500 ms + 350 ms).
func TestClusterPartition(t *testing.T) {
	minority := Partition{Groups: [][]int{{0, 1}, {2, 3}},
		Nodes: [][]string{{"s0-master"}, {"s1-master", "s2-master", "s0-replica", "s1-replica", "s2-replica"}}}
	noReplicaAcross := Partition{Groups: [][]int{{0, 1}, {2, 3}},
		Nodes: [][]string{{"s0-master", "s0-replica"}, {"s1-master", "s2-master", "s1-replica", "s2-replica"}}}
	const (
		U = Unreachable
		D = ClusterDown
	)
	for _, tc := range []struct {
		name    string
		partial bool
		p       Partition
		healAt  float64
		// at each instant, for servers 0 and 2, the copy a key of shard
		// 0, 1, 2 reaches.
		want map[float64][2][3]int
	}{
		{"the minority master serves until its fence; the majority fails it over", false, minority, 40, map[float64][2][3]int{
			5:     {{0, 2, 4}, {0, 2, 4}},
			11:    {{0, U, U}, {U, 2, 4}},
			24.9:  {{0, U, U}, {U, 2, 4}},
			25:    {{D, U, U}, {U, 2, 4}}, // the fence: node_timeout after the cut
			25.5:  {{D, U, U}, {U, D, D}}, // FAIL: full coverage lost on the majority side
			26.35: {{D, U, U}, {1, 2, 4}}, // s0-replica elected
			39:    {{D, U, U}, {1, 2, 4}},
			40:    {{1, 2, 4}, {1, 2, 4}}, // healed: everyone on the promoted replica
		}},
		{"without full coverage only the failed shard's keys wait", true, minority, 40, map[float64][2][3]int{
			25.5:  {{D, U, U}, {U, 2, 4}},
			26.35: {{D, U, U}, {1, 2, 4}},
		}},
		{"a heal before node_timeout loses nothing and fails nothing", false, minority, 20, map[float64][2][3]int{
			19: {{0, U, U}, {U, 2, 4}},
			20: {{0, 2, 4}, {0, 2, 4}},
			30: {{0, 2, 4}, {0, 2, 4}},
		}},
		{"a heal after the fence: the fenced master waits out its rejoin delay", false, noReplicaAcross, 22 + 5, map[float64][2][3]int{
			// No replica of s0 on the majority side: no failover, and
			// with full coverage the majority side is down from FAIL on.
			26:   {{D, U, U}, {U, D, D}},
			27:   {{D, D, D}, {D, D, D}}, // healed at 27: s0-master rejoins at 32, FAIL undone at 55.5
			32:   {{D, D, D}, {D, D, D}},
			55.5: {{0, 2, 4}, {0, 2, 4}},
		}},
		{"without full coverage a lost shard times out on the majority side", true, noReplicaAcross, 60, map[float64][2][3]int{
			26: {{D, U, U}, {U, 2, 4}},
			59: {{D, U, U}, {U, 2, 4}},
			60: {{D, 2, 4}, {D, 2, 4}}, // rejoin delay 5 s
			65: {{0, 2, 4}, {0, 2, 4}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tp := New(Config{Kind: Cluster, Servers: 4, Replicas: 1, PartialCoverage: tc.partial})
			var slots [3]int
			for m := range slots {
				_, slots[m] = keyIn(t, m)
			}
			instants := make([]float64, 0, len(tc.want))
			for at := range tc.want {
				instants = append(instants, at)
			}
			slices.Sort(instants)
			started, healed := false, false
			for _, at := range instants {
				if !started && at >= 10 {
					if err := tp.PartitionStarts(context.Background(), sec(10), tc.p, fixedDraw, nil); err != nil {
						t.Fatal(err)
					}
					started = true
				}
				if !healed && at >= tc.healAt {
					if err := tp.PartitionEnds(sec(tc.healAt), nil); err != nil {
						t.Fatal(err)
					}
					healed = true
				}
				var got [2][3]int
				for i, server := range []int{0, 2} {
					for m := range 3 {
						got[i][m] = tp.RouteSlot(server, slots[m], sec(at))
					}
				}
				if got != tc.want[at] {
					t.Errorf("at %gs: servers 0 and 2 reach %v, want %v", at, got, tc.want[at])
				}
			}
		})
	}
}

// TestClusterEvents: the plan of the partition above, and what a heal
// keeps of it.
func TestClusterEvents(t *testing.T) {
	tp := New(Config{Kind: Cluster, Servers: 4, Replicas: 1})
	p := Partition{Groups: [][]int{{0, 1}, {2, 3}},
		Nodes: [][]string{{"s0-master"}, {"s1-master", "s2-master", "s0-replica", "s1-replica", "s2-replica"}}}
	if err := tp.PartitionStarts(context.Background(), sec(10), p, fixedDraw, nil); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range tp.ClusterEvents() {
		got = append(got, fmt.Sprintf("%s %s %s", ev.At.Duration(), ev.What, tp.Copies()[ev.Node]))
	}
	want := []string{"25s fenced s0-master", "25.5s failed s0-master", "26.35s promoted s0-replica"}
	if !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
	// Healed between FAIL and the election: the election still completes,
	// and there the old master rejoins as the promoted replica's replica.
	if err := tp.PartitionEnds(sec(26), nil); err != nil {
		t.Fatal(err)
	}
	evs := tp.ClusterEvents()
	for i, wantHappens := range []bool{true, true, true} {
		ev, ok := tp.ClusterEventHappens(evs[i])
		if ok != wantHappens {
			t.Errorf("%s: happens %v, want %v", ev.What, ok, wantHappens)
		}
		if ev.Resync != (ev.What == "promoted") {
			t.Errorf("%s: resync %v", ev.What, ev.Resync)
		}
	}
	if got := tp.RouteSlot(0, 0, sec(26.1)); got != ClusterDown {
		t.Errorf("between the heal and the election shard 0 reaches %d, want CLUSTERDOWN", got)
	}
	if got := tp.RouteSlot(0, 0, sec(26.4)); got != 1 {
		t.Errorf("after the election shard 0 reaches %d, want s0-replica (1)", got)
	}
}

// TestPropertyCluster: over random clusters, placements and partitions,
// the rules the specification states hold at every instant.
func TestPropertyCluster(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		masters := rapid.IntRange(1, 7).Draw(rt, "masters")
		replicas := rapid.IntRange(0, 2).Draw(rt, "replicas")
		servers := rapid.IntRange(1, 6).Draw(rt, "servers")
		sides := rapid.IntRange(2, 3).Draw(rt, "sides")
		partial := rapid.Bool().Draw(rt, "partial")
		nt := time.Duration(rapid.IntRange(1, 20).Draw(rt, "node timeout s")) * time.Second
		tp := New(Config{Kind: Cluster, Servers: servers, Masters: masters, Replicas: replicas, NodeTimeout: nt, PartialCoverage: partial})
		names := tp.Copies()
		p := Partition{Groups: make([][]int, sides), Nodes: make([][]string, sides)}
		serverSide := make([]int, servers)
		for s := range servers {
			serverSide[s] = rapid.IntRange(0, sides-1).Draw(rt, "server side")
			p.Groups[serverSide[s]] = append(p.Groups[serverSide[s]], s)
		}
		nodeSide := make([]int, len(names))
		for n, name := range names {
			nodeSide[n] = rapid.IntRange(0, sides-1).Draw(rt, "node side")
			p.Nodes[nodeSide[n]] = append(p.Nodes[nodeSide[n]], name)
		}
		start := sec(float64(rapid.IntRange(0, 10).Draw(rt, "start")))
		heal := start + sec(float64(rapid.IntRange(1, 120).Draw(rt, "length")))
		draw := func(n int64) int64 { return rapid.Int64Range(0, n-1).Draw(rt, "jitter") }
		if err := tp.PartitionStarts(context.Background(), start, p, draw, nil); err != nil {
			rt.Fatal(err)
		}
		mastersOn := make([]int, sides)
		for m := range masters {
			mastersOn[nodeSide[m*(1+replicas)]]++
		}
		majority := -1
		for side, n := range mastersOn {
			if n > masters/2 {
				majority = side
			}
		}
		plan := tp.cluster.plan
		step := sec(0.25)
		for at := start; at < heal; at += step {
			for s := range servers {
				for m := range masters {
					slot := tp.cluster.first[m]
					got := tp.RouteSlot(s, slot, at)
					master := m * (1 + replicas)
					f := plan.shards[m]
					inWindow := false
					for _, g := range plan.shards {
						if g.cut && at >= g.failAt && (g.promoted < 0 || at < g.promoteAt) {
							inWindow = true
						}
					}
					switch {
					case got >= 0 && nodeSide[got] != serverSide[s]:
						rt.Fatalf("at %s server %d reached %s across the partition", at.Duration(), s, names[got])
					case got >= 0 && nodeSide[got] != majority && at >= start+algorithms.At(nt):
						rt.Fatalf("at %s a minority node %s served after node_timeout", at.Duration(), names[got])
					case got >= 0 && serverSide[s] != majority && got != master:
						rt.Fatalf("at %s a minority server reached %s for shard %d: a minority never promotes", at.Duration(), names[got], m)
					case serverSide[s] != majority && nodeSide[master] == serverSide[s] && got == Unreachable:
						rt.Fatalf("at %s a minority server lost its own side's master of shard %d: a minority never promotes", at.Duration(), m)
					case serverSide[s] == majority && nodeSide[master] == majority && got != master && (partial || !inWindow):
						rt.Fatalf("at %s shard %d, whose master stayed with the majority, reached %d", at.Duration(), m, got)
					case got >= 0 && got != master && (f.promoted != got || at < f.promoteAt):
						rt.Fatalf("at %s shard %d reached %s, neither its master nor its elected replica", at.Duration(), m, names[got])
					}
				}
			}
		}
		if err := tp.PartitionEnds(heal, nil); err != nil {
			rt.Fatal(err)
		}
		// Once every window has passed, one master per slot, the same
		// for every server.
		after := heal + sec(float64(3*nt/time.Second)+10)
		for m := range masters {
			slot := tp.cluster.first[m]
			first := tp.RouteSlot(0, slot, after)
			if first < 0 {
				rt.Fatalf("long after the heal shard %d reaches %d", m, first)
			}
			for s := range servers {
				if got := tp.RouteSlot(s, slot, after); got != first {
					rt.Fatalf("after the heal shard %d has two masters: %s and %s", m, names[first], names[got])
				}
			}
		}
	})
}
