package store

import "testing"

func TestStoreNames(t *testing.T) {
	for _, tt := range []struct{ in, kind, redacted string }{
		{"", "memory", "memory"},
		{"memory", "memory", "memory"},
		{"miniredis", "miniredis", "miniredis"},
		{"redis://127.0.0.1:6379", "redis", "redis://127.0.0.1:6379"},
		{"redis://:s3cret@10.0.0.1:6379/2", "redis", "redis://:xxxxx@10.0.0.1:6379/2"},
		{"redis://user:s3cret@host:6379", "redis", "redis://user:xxxxx@host:6379"},
		{"rediss://:pw@host:6380", "redis", "rediss://:xxxxx@host:6380"},
		{"redis+cluster://:pw@a:7000,b:7001", "redis-cluster", "redis+cluster://:xxxxx@a:7000,b:7001"},
		// Unparsable: only the kind, since the password's place is unknown.
		{"redis://:pa%zzword@host", "redis", "redis"},
		{"redis://", "redis", "redis"},
	} {
		if got := KindOf(tt.in); got != tt.kind {
			t.Errorf("KindOf(%q) = %q, want %q", tt.in, got, tt.kind)
		}
		if got := Redacted(tt.in); got != tt.redacted {
			t.Errorf("Redacted(%q) = %q, want %q", tt.in, got, tt.redacted)
		}
	}
}
