package topology

// The regions kind: a store per region, replicated later or not at all.

import "github.com/ratelim/ratelim/algorithms"

// A regions topology is a fleet in several regions (or points of
// presence), each with its API servers and a store of its own that its
// servers reach in one round trip; a client is served in its region.
// Between regions the counts are either not shared at all (Cloudflare's
// rate limiting rules count per data center) or replicated
// asynchronously: every admission a region's store counts reaches the
// other regions' stores ReplicationLag later, counted there at its own
// instant whatever they would have decided (an active-active store's
// counters). A region that goes down sends its clients to the next region
// that is up, whose store has not counted what they were admitted at home
// (without replication, nothing of it; with it, what had arrived).
//
// So the copies are the regions' stores, by region name; Route gives a
// server its region's store, Unreachable while that region is down
// (RegionDown) or a partition separates them. What replication delivers
// is package sim's: a delivery across a partition, during an outage, or
// from or to a region that is down (RegionsReach), is lost.
//
// # What it admits beyond the limit
//
// Each region's store is exact for what it counts. An admission in a
// region at t has seen every admission made in its region, and the other
// regions' made before t − ReplicationLag: the unseen are each other
// region's admissions in a span of min(lag, T). By the argument of the
// synced kind (topology.Synced), for a bucket of C(T) = Burst + Rate × T,
// in any span of T a key is admitted at most
//
//	C(T) + (R − 1) × C(min(lag, T))
//
// R the regions its requests reached; without replication, R × C(T). A
// window algorithm counts per window: R × Limit a window either way. A
// region outage moves clients but not the bound: their admissions are
// counted where they are made. The bound holds with every delivery made;
// a lost one is said. It is tight to within 1.6×: regions that each burst
// before the others' admissions reach them, then flood, reach at least
// 62.5% of it on every exact algorithm, 2 to 4 regions and lags of 1 ms
// to 1 s (package sim's TestRegionsBoundIsReached), and a property test
// holds every random run within it.

// RegionConfig is one region: its name (its store's copy name) and how
// many API servers it has.
type RegionConfig struct {
	Name    string
	Servers int
}

// ReplicationNone is the ReplicationLag of regions that share nothing.
const ReplicationNone = -1

// RegionOf is the region server is in on a regions topology (0 on any
// other kind): the regions hold the servers in order, the first region
// servers 0 to its Servers − 1.
func (t *Topology) RegionOf(server int) int {
	for r, reg := range t.cfg.Regions {
		if server < reg.Servers {
			return r
		}
		server -= reg.Servers
	}
	return 0
}

// RegionServers is the first server of region r and how many it has.
func (t *Topology) RegionServers(r int) (first, n int) {
	for i, reg := range t.cfg.Regions {
		if i == r {
			return first, reg.Servers
		}
		first += reg.Servers
	}
	return 0, 0
}

// RegionDownStarts takes region r down until the matching RegionDownEnds:
// its store answers no one, and package sim sends its clients elsewhere.
func (t *Topology) RegionDownStarts(r int) {
	if r >= 0 && r < len(t.regionsDown) {
		t.regionsDown[r]++
	}
}

// RegionDownEnds ends one of region r's outages.
func (t *Topology) RegionDownEnds(r int) {
	if r >= 0 && r < len(t.regionsDown) {
		t.regionsDown[r] = max(t.regionsDown[r]-1, 0)
	}
}

// RegionDown reports whether region r is down.
func (t *Topology) RegionDown(r int) bool {
	return r >= 0 && r < len(t.regionsDown) && t.regionsDown[r] > 0
}

// RegionsReach reports whether region from's store reaches region to's at
// at: neither down, no outage, both on one side of any partition.
func (t *Topology) RegionsReach(from, to int, _ algorithms.Time) bool {
	switch {
	case t.outages > 0 || t.RegionDown(from) || t.RegionDown(to):
		return false
	case t.partitioned:
		return t.nodeSide[from] == t.nodeSide[to]
	}
	return true
}

// routeRegion is the copy server reaches on a regions topology: its
// region's store, unless it is down, out, or across a partition.
func (t *Topology) routeRegion(server int) int {
	r := t.RegionOf(server)
	switch {
	case t.outages > 0 || t.RegionDown(r):
		return Unreachable
	case t.partitioned && t.side(server) != t.nodeSide[r]:
		return Unreachable
	}
	return r
}
