package httplimit

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
)

func TestKeyBy(t *testing.T) {
	trusted := []netip.Prefix{
		netip.MustParsePrefix("10.0.0.0/8"),
		netip.MustParsePrefix("2001:db8:ffff::/48"),
	}
	tests := []struct {
		name   string
		opts   KeyOptions
		remote string
		header map[string][]string
		want   string
	}{
		{name: "api key", remote: "192.0.2.1:1234",
			header: map[string][]string{"X-Api-Key": {"abc123"}}, want: "key:abc123"},
		{name: "api key trimmed", remote: "192.0.2.1:1234",
			header: map[string][]string{"X-Api-Key": {"  abc123 "}}, want: "key:abc123"},
		{name: "blank api key falls through", remote: "192.0.2.1:1234",
			header: map[string][]string{"X-Api-Key": {"   "}}, want: "ip:192.0.2.1"},
		{name: "user", remote: "192.0.2.1:1234",
			header: map[string][]string{"X-User": {"alice"}}, want: "user:alice"},
		{name: "api key before user", remote: "192.0.2.1:1234",
			header: map[string][]string{"X-Api-Key": {"k"}, "X-User": {"alice"}}, want: "key:k"},
		{name: "custom headers", opts: KeyOptions{Header: "authorization-key", UserHeader: "X-Authenticated-User"},
			remote: "192.0.2.1:1234",
			header: map[string][]string{"X-Api-Key": {"ignored"}, "X-Authenticated-User": {"bob"}}, want: "user:bob"},
		{name: "headers disabled", opts: KeyOptions{Header: "-", UserHeader: "-"}, remote: "192.0.2.1:1234",
			header: map[string][]string{"X-Api-Key": {"k"}, "X-User": {"alice"}}, want: "ip:192.0.2.1"},
		{name: "an api key is not an address", remote: "10.0.0.1:1",
			header: map[string][]string{"X-Api-Key": {"10.0.0.1"}}, want: "key:10.0.0.1"},

		{name: "ip", remote: "192.0.2.1:1234", want: "ip:192.0.2.1"},
		{name: "ip without port", remote: "192.0.2.1", want: "ip:192.0.2.1"},
		{name: "not an ip peer", remote: "@", want: "ip:@"},
		{name: "ipv4-mapped ipv6 peer", remote: "[::ffff:192.0.2.1]:80", want: "ip:192.0.2.1"},
		{name: "ipv6 keyed by /64", remote: "[2001:db8:1:2:aaaa:bbbb:cccc:dddd]:443", want: "ip:2001:db8:1:2::/64"},
		{name: "ipv6 neighbour shares the /64", remote: "[2001:db8:1:2::1]:443", want: "ip:2001:db8:1:2::/64"},
		{name: "ipv6 whole address", opts: KeyOptions{IPv6PrefixLen: 128}, remote: "[2001:db8:1:2::1]:443",
			want: "ip:2001:db8:1:2::1"},
		{name: "ipv6 /56", opts: KeyOptions{IPv6PrefixLen: 56}, remote: "[2001:db8:1:2ff::1]:443",
			want: "ip:2001:db8:1:200::/56"},
		{name: "ipv6 zone dropped", remote: "[fe80::1%eth0]:80", want: "ip:fe80::/64"},

		{name: "spoofed xff from untrusted peer", opts: KeyOptions{TrustedProxies: trusted}, remote: "192.0.2.1:1234",
			header: map[string][]string{"X-Forwarded-For": {"203.0.113.7"}}, want: "ip:192.0.2.1"},
		{name: "spoofed xff without trusted proxies", remote: "10.0.0.5:1234",
			header: map[string][]string{"X-Forwarded-For": {"203.0.113.7"}}, want: "ip:10.0.0.5"},
		{name: "xff from trusted peer", opts: KeyOptions{TrustedProxies: trusted}, remote: "10.0.0.5:1234",
			header: map[string][]string{"X-Forwarded-For": {"203.0.113.7"}}, want: "ip:203.0.113.7"},
		{name: "xff: the client's own entries are ignored", opts: KeyOptions{TrustedProxies: trusted}, remote: "10.0.0.5:1234",
			header: map[string][]string{"X-Forwarded-For": {"198.51.100.1, 1.1.1.1, 203.0.113.7"}}, want: "ip:203.0.113.7"},
		{name: "xff: trusted hops skipped", opts: KeyOptions{TrustedProxies: trusted}, remote: "10.0.0.5:1234",
			header: map[string][]string{"X-Forwarded-For": {"198.51.100.1,203.0.113.7, 10.9.9.9 ,10.0.0.2"}}, want: "ip:203.0.113.7"},
		{name: "xff over several lines", opts: KeyOptions{TrustedProxies: trusted}, remote: "10.0.0.5:1234",
			header: map[string][]string{"X-Forwarded-For": {"198.51.100.1, 203.0.113.7", "10.0.0.2"}}, want: "ip:203.0.113.7"},
		{name: "xff entry with port", opts: KeyOptions{TrustedProxies: trusted}, remote: "10.0.0.5:1234",
			header: map[string][]string{"X-Forwarded-For": {"203.0.113.7:5555"}}, want: "ip:203.0.113.7"},
		{name: "xff all trusted: leftmost hop", opts: KeyOptions{TrustedProxies: trusted}, remote: "10.0.0.5:1234",
			header: map[string][]string{"X-Forwarded-For": {"10.1.1.1, 10.2.2.2"}}, want: "ip:10.1.1.1"},
		{name: "trusted peer, no xff", opts: KeyOptions{TrustedProxies: trusted}, remote: "10.0.0.5:1234", want: "ip:10.0.0.5"},
		{name: "malformed xff: the peer", opts: KeyOptions{TrustedProxies: trusted}, remote: "10.0.0.5:1234",
			header: map[string][]string{"X-Forwarded-For": {"not-an-ip"}}, want: "ip:10.0.0.5"},
		{name: "malformed xff: the last good hop", opts: KeyOptions{TrustedProxies: trusted}, remote: "10.0.0.5:1234",
			header: map[string][]string{"X-Forwarded-For": {"203.0.113.7, unknown, 10.0.0.2"}}, want: "ip:10.0.0.2"},
		{name: "empty xff entry is malformed", opts: KeyOptions{TrustedProxies: trusted}, remote: "10.0.0.5:1234",
			header: map[string][]string{"X-Forwarded-For": {"203.0.113.7,,10.0.0.2"}}, want: "ip:10.0.0.2"},
		{name: "malformed xff left of the client does not matter", opts: KeyOptions{TrustedProxies: trusted}, remote: "10.0.0.5:1234",
			header: map[string][]string{"X-Forwarded-For": {"<script>, 203.0.113.7"}}, want: "ip:203.0.113.7"},
		{name: "ipv6 client through ipv6 proxy", opts: KeyOptions{TrustedProxies: trusted}, remote: "[2001:db8:ffff::1]:443",
			header: map[string][]string{"X-Forwarded-For": {"2001:db8:aaaa:1::5"}}, want: "ip:2001:db8:aaaa:1::/64"},
		{name: "bracketed ipv6 xff entry with port", opts: KeyOptions{TrustedProxies: trusted}, remote: "10.0.0.5:1234",
			header: map[string][]string{"X-Forwarded-For": {"[2001:db8:aaaa:1::5]:443"}}, want: "ip:2001:db8:aaaa:1::/64"},
		{name: "ipv4 client through ipv6 proxy, mapped", opts: KeyOptions{TrustedProxies: trusted}, remote: "[2001:db8:ffff::1]:443",
			header: map[string][]string{"X-Forwarded-For": {"::ffff:203.0.113.7"}}, want: "ip:203.0.113.7"},
		{name: "mapped trusted prefix", opts: KeyOptions{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("::ffff:10.0.0.0/104")}},
			remote: "10.0.0.5:1234",
			header: map[string][]string{"X-Forwarded-For": {"203.0.113.7"}}, want: "ip:203.0.113.7"},
		{name: "api key through a proxy still wins", opts: KeyOptions{TrustedProxies: trusted}, remote: "10.0.0.5:1234",
			header: map[string][]string{"X-Forwarded-For": {"203.0.113.7"}, "X-Api-Key": {"k"}}, want: "key:k"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.RemoteAddr = tt.remote
			for k, vs := range tt.header {
				for _, v := range vs {
					r.Header.Add(k, v)
				}
			}
			if got := KeyBy(tt.opts)(r); got != tt.want {
				t.Errorf("key = %q, want %q", got, tt.want)
			}
		})
	}
}

// A client behind a trusted proxy cannot buy itself fresh buckets by
// writing addresses into X-Forwarded-For: whatever it writes, the proxy's
// entry for it is the rightmost untrusted one.
func TestKeyByIgnoresClientWrittenXFF(t *testing.T) {
	key := KeyBy(KeyOptions{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}})
	seen := map[string]bool{}
	for _, spoof := range []string{"", "1.2.3.4", "10.0.0.1", "1.2.3.4, 5.6.7.8", "garbage", "::1"} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = "10.0.0.5:1234"
		xff := "203.0.113.7"
		if spoof != "" {
			xff = spoof + ", " + xff
		}
		r.Header.Set("X-Forwarded-For", xff)
		seen[key(r)] = true
	}
	if len(seen) != 1 || !seen["ip:203.0.113.7"] {
		t.Errorf("keys = %v, want only ip:203.0.113.7", seen)
	}
}

// KeyByHeader and KeyByIP read one attribute and nothing else: whatever
// other header a client sends, or rotates, its key does not move.
func TestKeyByOneAttribute(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	apiKey := KeyByHeader("x-api-key", KeyPrefixAPIKey)
	user := KeyByHeader("X-User", KeyPrefixUser)
	ip := KeyByIP(KeyOptions{TrustedProxies: trusted, Header: "X-Api-Key", UserHeader: "X-User"})
	tests := []struct {
		name   string
		key    KeyFunc
		remote string
		header map[string]string
		want   string
	}{
		{"api key", apiKey, "192.0.2.1:1", map[string]string{"X-Api-Key": " k1 "}, "key:k1"},
		{"api key: a user header is not read", apiKey, "192.0.2.1:1", map[string]string{"X-User": "alice"}, ""},
		{"api key: none is no key, not the address", apiKey, "192.0.2.1:1", nil, ""},
		{"api key: blank is none", apiKey, "192.0.2.1:1", map[string]string{"X-Api-Key": "  "}, ""},
		{"user", user, "192.0.2.1:1", map[string]string{"X-User": "alice", "X-Api-Key": "k1"}, "user:alice"},
		{"user: an api key is not read", user, "192.0.2.1:1", map[string]string{"X-Api-Key": "k1"}, ""},
		{"ip: headers are not read", ip, "192.0.2.1:1", map[string]string{"X-Api-Key": "k1", "X-User": "alice"}, "ip:192.0.2.1"},
		{"ip: xff from an untrusted peer", ip, "192.0.2.1:1", map[string]string{"X-Forwarded-For": "203.0.113.7"}, "ip:192.0.2.1"},
		{"ip: xff from a trusted proxy", ip, "10.0.0.5:1", map[string]string{"X-Forwarded-For": "203.0.113.7", "X-Api-Key": "k"}, "ip:203.0.113.7"},
		{"ip: ipv6 by /64", ip, "[2001:db8:1:2::1]:443", nil, "ip:2001:db8:1:2::/64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.RemoteAddr = tt.remote
			for k, v := range tt.header {
				r.Header.Set(k, v)
			}
			if got := tt.key(r); got != tt.want {
				t.Errorf("key = %q, want %q", got, tt.want)
			}
		})
	}
}
