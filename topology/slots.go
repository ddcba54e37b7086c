package topology

// Redis Cluster's hash slots: which master holds a key.

import "strings"

// Slots is how many hash slots a Redis Cluster divides its keys among
// (src/cluster.h, CLUSTER_SLOTS).
const Slots = 16384

// HashSlot is the slot Redis Cluster puts key in: CRC16 of the key, or of
// its hash tag, modulo 16,384 (src/cluster.c, keyHashSlot). The hash tag
// is what lies between the first "{" and the first "}" after it, when
// that is not empty: "{user:42}:a" and "{user:42}:b" share a slot; "{}a"
// is hashed whole. The specification's own vectors: HashSlot("somekey")
// is 11058 and HashSlot("foo{hash_tag}") 2515.
func HashSlot(key string) int {
	if open := strings.IndexByte(key, '{'); open >= 0 {
		if end := strings.IndexByte(key[open+1:], '}'); end > 0 {
			key = key[open+1 : open+1+end]
		}
	}
	return int(crc16(key) & (Slots - 1))
}

// crc16 is CRC-16/XMODEM (polynomial 0x1021, initial 0, no reflection), the
// checksum src/crc16.c computes: its check value for "123456789" is 0x31C3.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// FirstSlots are the first slots of each of masters' ranges, as
// `redis-cli --cluster create` assigns them (src/redis-cli.c,
// clusterManagerCommandCreate): 16,384 / masters each, the ends rounded,
// the last master up to slot 16,383. Three masters hold 0–5460,
// 5461–10922 and 10923–16383.
func FirstSlots(masters int) []int {
	masters = max(masters, 1)
	first := make([]int, masters)
	per := float64(Slots) / float64(masters)
	cursor, next := 0.0, 0
	for i := range masters {
		first[i] = next
		last := int(cursor + per - 1 + 0.5) // lround, for positive values
		if last >= Slots || i == masters-1 {
			last = Slots - 1
		}
		last = max(last, next)
		next = last + 1
		cursor += per
	}
	return first
}

// shardOf is the master (shard) whose range holds slot, given the ranges'
// first slots.
func shardOf(first []int, slot int) int {
	lo, hi := 0, len(first)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if first[mid] <= slot {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}
