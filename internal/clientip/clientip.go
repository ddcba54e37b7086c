// Package clientip names a client by its IP address the one way ratelim
// does everywhere: the HTTP middleware (httplimit) when it keys a live
// request, and trace when it keys a logged one, so that a replayed log
// counts each client against the same bucket the middleware would have.
//
// An IPv4 address is its own key. An IPv6 address is keyed by the network
// it is in (a /64 unless told otherwise): an IPv6 host is usually given a
// whole /64 and can pick a new address in it for every request, so keying
// single addresses would limit no one. An IPv4-mapped IPv6 address
// (::ffff:192.0.2.1, what a dual-stack socket reports for an IPv4 peer)
// counts as the IPv4 address it maps.
package clientip

import (
	"net/netip"
	"strings"
)

// Prefix starts every client-address key, so that an API key that happens
// to read "10.0.0.1" is not the address 10.0.0.1.
const Prefix = "ip:"

// DefaultV6Bits is how many leading bits of an IPv6 address name a client
// when the caller does not say.
const DefaultV6Bits = 64

// ParseHop reads an address as a connection's RemoteAddr, an
// X-Forwarded-For entry or an access log carries it: an IP address, or an
// IP address and port ("192.0.2.1:443", "[2001:db8::1]:443"). The zone is
// dropped and an IPv4-mapped address unmapped. It reports false for
// anything else.
func ParseHop(s string) (netip.Addr, bool) {
	var a netip.Addr
	// "[v6]:port" or "v4:port" have a port; a bare IPv6 address has two
	// colons or more. Choosing first saves parsing twice.
	if strings.HasPrefix(s, "[") || strings.Count(s, ":") == 1 {
		ap, err := netip.ParseAddrPort(s)
		if err != nil {
			return netip.Addr{}, false
		}
		a = ap.Addr()
	} else {
		var err error
		if a, err = netip.ParseAddr(s); err != nil {
			return netip.Addr{}, false
		}
	}
	return a.WithZone("").Unmap(), true
}

// Key returns the key of a client's address: [Prefix] and the address
// ("ip:192.0.2.1"), or for IPv6 the network of v6bits it is in
// ("ip:2001:db8:1:2::/64"); v6bits of 128 keys the whole IPv6 address, and
// one outside 1..128 means [DefaultV6Bits]. An IPv4-mapped address counts
// as the IPv4 address; the zone is dropped. The zero Addr gives "ip:".
func Key(a netip.Addr, v6bits int) string {
	var buf [64]byte
	return string(AppendKey(buf[:0], a, v6bits))
}

// AppendKey appends [Key](a, v6bits) to b and returns the extended slice,
// for a caller that keys many addresses and would rather not allocate a
// string for one it has seen before.
func AppendKey(b []byte, a netip.Addr, v6bits int) []byte {
	b = append(b, Prefix...)
	if !a.IsValid() {
		return b
	}
	a = a.WithZone("").Unmap()
	if v6bits <= 0 || v6bits > 128 {
		v6bits = DefaultV6Bits
	}
	if a.Is4() || v6bits == 128 {
		return a.AppendTo(b)
	}
	p, _ := a.Prefix(v6bits) // cannot fail: a is IPv6 and v6bits in 1..128
	return p.AppendTo(b)
}
