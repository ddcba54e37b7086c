package clientip

import (
	"net/netip"
	"testing"
)

func TestParseHop(t *testing.T) {
	tests := []struct {
		in   string
		want string // "" when not an address
	}{
		{"192.0.2.1", "192.0.2.1"},
		{"192.0.2.1:443", "192.0.2.1"},
		{"2001:db8::1", "2001:db8::1"},
		{"[2001:db8::1]:443", "2001:db8::1"},
		{"fe80::1%eth0", "fe80::1"},
		{"[fe80::1%eth0]:80", "fe80::1"},
		{"::ffff:10.0.0.1", "10.0.0.1"},
		{"[::ffff:10.0.0.1]:80", "10.0.0.1"},
		{"", ""},
		{"-", ""},
		{"unix", ""},
		{"192.0.2.1:", ""},
		{"[2001:db8::1]", ""},
		{"300.0.0.1", ""},
	}
	for _, tt := range tests {
		a, ok := ParseHop(tt.in)
		if got := map[bool]string{true: a.String(), false: ""}[ok]; got != tt.want {
			t.Errorf("ParseHop(%q) = %q, %v; want %q", tt.in, a, ok, tt.want)
		}
	}
}

func TestKey(t *testing.T) {
	tests := []struct {
		addr   string
		v6bits int
		want   string
	}{
		{"192.0.2.1", 64, "ip:192.0.2.1"},
		{"192.0.2.1", 128, "ip:192.0.2.1"},
		{"::ffff:192.0.2.1", 64, "ip:192.0.2.1"},
		{"2001:db8:1:2:3:4:5:6", 64, "ip:2001:db8:1:2::/64"},
		{"2001:db8:1:2:3:4:5:6", 0, "ip:2001:db8:1:2::/64"},
		{"2001:db8:1:2:3:4:5:6", 200, "ip:2001:db8:1:2::/64"},
		{"2001:db8:1:2:3:4:5:6", 48, "ip:2001:db8:1::/48"},
		{"2001:db8:1:2:3:4:5:6", 128, "ip:2001:db8:1:2:3:4:5:6"},
		{"fe80::1%eth0", 128, "ip:fe80::1"},
	}
	for _, tt := range tests {
		if got := Key(netip.MustParseAddr(tt.addr), tt.v6bits); got != tt.want {
			t.Errorf("Key(%s, %d) = %q, want %q", tt.addr, tt.v6bits, got, tt.want)
		}
	}
	if got := Key(netip.Addr{}, 64); got != "ip:" {
		t.Errorf("Key(zero Addr) = %q, want %q", got, "ip:")
	}
}

func TestAppendKeyDoesNotAllocate(t *testing.T) {
	a := netip.MustParseAddr("2001:db8:1:2:3:4:5:6")
	buf := make([]byte, 0, 64)
	if n := testing.AllocsPerRun(100, func() { buf = AppendKey(buf[:0], a, 64) }); n != 0 {
		t.Errorf("AppendKey allocates %v times, want 0", n)
	}
}
