package httplimit

import (
	"net/http"
	"net/netip"
	"strings"

	"github.com/ratelim/ratelim/internal/clientip"
)

// KeyFunc names the limiter key a request counts against: every request
// with the same key shares one bucket, one window, one queue. An empty key
// exempts the request: it passes without a decision, without RateLimit
// fields, and is not counted.
type KeyFunc func(*http.Request) string

// Key prefixes: each kind of key has its own, so that an API key that
// happens to read "10.0.0.1" is not the address 10.0.0.1.
const (
	KeyPrefixAPIKey = "key:"
	KeyPrefixUser   = "user:"
	KeyPrefixIP     = clientip.Prefix
)

// KeyOptions configure [KeyBy].
type KeyOptions struct {
	// Header is the request header that carries an API key: "X-API-Key"
	// when empty, none when "-".
	Header string
	// UserHeader carries the authenticated user, as an authentication
	// middleware in front of this one sets it: "X-User" when empty, none
	// when "-".
	UserHeader string
	// TrustedProxies are the networks of your own reverse proxies and load
	// balancers: only a peer in one of them is believed about who the
	// client is (X-Forwarded-For). Empty trusts no one: the key is the
	// address of the connection's peer.
	TrustedProxies []netip.Prefix
	// IPv6PrefixLen is how many leading bits of an IPv6 address name a
	// client: 64 when 0, the whole address when 128. An IPv6 host is
	// usually given a whole /64, and can pick a new address in it for
	// every request, so limiting single addresses limits no one.
	IPv6PrefixLen int
}

// KeyBy returns the usual key: the API key header if the request has one
// ("key:" + value), else the user header ("user:" + value), else the
// client's IP address ("ip:" + address, or for IPv6 its network, e.g.
// "ip:2001:db8:1:2::/64"; an IPv4-mapped IPv6 address counts as the IPv4
// address it maps).
//
// KeyBy trusts the two headers as they arrive, so both must be trustworthy
// by the time this middleware runs: the API key checked (or the limiter
// placed after the check), the user header set by your authentication
// and stripped from what clients send. Otherwise a client that invents a
// new API key for each request gets a new bucket for each request.
//
// The client's address is the connection's peer (RemoteAddr), unless that
// peer is one of opts.TrustedProxies. Then X-Forwarded-For, where each proxy
// appends the address it received the request from, is read from the right
// (the entry the trusted peer wrote) leftwards, past every entry that is
// itself a trusted proxy; the first untrusted address is the client. Every
// entry left of that one was written by the client or by proxies you do not
// control and is ignored: reading the header from the left, or believing it
// from any peer, lets a client put any address it likes there. An entry that
// is not an IP address (an optional port is allowed) stops the walk: the
// client is then the last trusted hop read, the one that forwarded the
// malformed value. A request whose every hop is trusted (a proxy's own
// health check) is keyed by the leftmost hop. Only X-Forwarded-For is read;
// Forwarded (RFC 7239) and X-Real-IP are not.
func KeyBy(opts KeyOptions) KeyFunc {
	header := headerName(opts.Header, "X-API-Key")
	user := headerName(opts.UserHeader, "X-User")
	k := newIPKeyer(opts)
	return func(r *http.Request) string {
		if header != "" {
			if v := strings.TrimSpace(r.Header.Get(header)); v != "" {
				return KeyPrefixAPIKey + v
			}
		}
		if user != "" {
			if v := strings.TrimSpace(r.Header.Get(user)); v != "" {
				return KeyPrefixUser + v
			}
		}
		return k.key(r)
	}
}

// KeyByHeader keys each request by one header alone: prefix + its value,
// trimmed of spaces; a request without it (or with only spaces in it) has
// the empty key, which [Config.RequireKey] refuses. Nothing else is read:
// a limit keyed by API key is not escaped by sending a user header instead,
// nor one keyed by user by sending an API key, nor either by leaving the
// header out and being keyed by address. Use it when the limit is per API
// key, or per user, and nothing else: KeyByHeader("X-API-Key",
// KeyPrefixAPIKey). As with [KeyBy], the header must be trustworthy by the
// time the middleware runs (the key checked, the user header set by your
// authentication): a client that invents a new value per request gets a
// new bucket per request.
func KeyByHeader(name, prefix string) KeyFunc {
	name = http.CanonicalHeaderKey(name)
	return func(r *http.Request) string {
		if v := strings.TrimSpace(r.Header.Get(name)); v != "" {
			return prefix + v
		}
		return ""
	}
}

// KeyByIP keys each request by its client's address alone, as [KeyBy] does
// for a request with neither header (opts.TrustedProxies and
// opts.IPv6PrefixLen apply; opts.Header and opts.UserHeader are ignored):
// no header a client writes moves it to another bucket, except an
// X-Forwarded-For entry that a trusted proxy wrote. Every request has a key.
func KeyByIP(opts KeyOptions) KeyFunc {
	k := newIPKeyer(opts)
	return k.key
}

// newIPKeyer is the address part of [KeyBy] and [KeyByIP].
func newIPKeyer(opts KeyOptions) ipKeyer {
	trusted := make([]netip.Prefix, 0, len(opts.TrustedProxies))
	for _, p := range opts.TrustedProxies {
		if p.IsValid() {
			trusted = append(trusted, netip.PrefixFrom(p.Addr().Unmap(), bitsUnmapped(p)).Masked())
		}
	}
	v6bits := opts.IPv6PrefixLen
	if v6bits <= 0 || v6bits > 128 {
		v6bits = 64
	}
	return ipKeyer{trusted: trusted, v6bits: v6bits}
}

// headerName returns the canonical form of name, def when it is empty, ""
// (no header) when it is "-".
func headerName(name, def string) string {
	switch name {
	case "-":
		return ""
	case "":
		name = def
	}
	return http.CanonicalHeaderKey(name)
}

// bitsUnmapped is p's length once its address is unmapped: ::ffff:10.0.0.0/104
// is 10.0.0.0/8.
func bitsUnmapped(p netip.Prefix) int {
	if p.Addr().Is4In6() {
		return max(p.Bits()-96, 0)
	}
	return p.Bits()
}

type ipKeyer struct {
	trusted []netip.Prefix
	v6bits  int
}

func (k ipKeyer) isTrusted(a netip.Addr) bool {
	for _, p := range k.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func (k ipKeyer) key(r *http.Request) string {
	peer, ok := clientip.ParseHop(r.RemoteAddr)
	if !ok {
		// Not an IP peer (a Unix socket, a test's made-up address):
		// every such request shares the raw value's bucket.
		return KeyPrefixIP + r.RemoteAddr
	}
	return clientip.Key(k.client(peer, r.Header.Values("X-Forwarded-For")), k.v6bits)
}

// client walks the X-Forwarded-For values from the right, starting at peer.
func (k ipKeyer) client(peer netip.Addr, xff []string) netip.Addr {
	if !k.isTrusted(peer) {
		return peer
	}
	last := peer // the last trusted hop: the one that wrote the entry we read next
	for i := len(xff) - 1; i >= 0; i-- {
		line := xff[i]
		for line != "" {
			var entry string
			if j := strings.LastIndexByte(line, ','); j >= 0 {
				line, entry = line[:j], line[j+1:]
			} else {
				line, entry = "", line
			}
			hop, ok := clientip.ParseHop(strings.TrimSpace(entry))
			if !ok {
				return last
			}
			if !k.isTrusted(hop) {
				return hop
			}
			last = hop
		}
	}
	return last
}
