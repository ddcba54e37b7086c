package topology

import "hash/fnv"

// Balancer is how requests are spread over the API servers.
type Balancer string

const (
	RoundRobin Balancer = "round-robin" // each request to the next server in turn
	Random     Balancer = "random"      // each request to a server drawn at random
	KeyHash    Balancer = "key-hash"    // each limiter key always to the same server
)

// Spreader picks the server for each request by a Balancer. Its zero value
// is round-robin over one server. It is not safe for concurrent use.
type Spreader struct {
	Balancer Balancer
	Servers  int
	next     uint64 // round-robin: the server after the last one picked
}

// Pick is the server for a request whose limiter key hashes to keyHash
// (see HashKey); intn draws a random server for Random, as rand's IntN.
func (s *Spreader) Pick(keyHash uint64, intn func(int) int) int {
	n := s.Servers
	if n <= 1 {
		return 0
	}
	switch s.Balancer {
	case Random:
		return intn(n)
	case KeyHash:
		return int(keyHash % uint64(n))
	}
	s.next++
	return int((s.next - 1) % uint64(n))
}

// HashKey is the hash a key-hash balancer places a limiter key by: FNV-1a,
// 64 bits, the same in the simulator and against a live fleet.
func HashKey(key string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(key))
	return h.Sum64()
}
