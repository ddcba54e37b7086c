package outfiletest

import (
	"os"
	"path/filepath"
	"testing"
)

// recorder is a testing.TB that notes a failure instead of failing.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) Fatal(...any)          { r.failed = true }
func (r *recorder) Fatalf(string, ...any) { r.failed = true }
func (r *recorder) Error(...any)          { r.failed = true }

// The checks pass on what they want and fail on anything else: a
// temporary file left beside the output, one missing, a link replaced.
func TestChecksFailOnWhatTheyGuard(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"out.svg", ".out.svg.tmp123"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("out.svg", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		check func(testing.TB)
		fails bool
	}{
		{"exact entries", func(t testing.TB) { WantEntries(t, dir, ".out.svg.tmp123", "link", "out.svg") }, false},
		{"a temporary file left", func(t testing.TB) { WantEntries(t, dir, "link", "out.svg") }, true},
		{"an entry missing", func(t testing.TB) { WantEntries(t, dir, ".out.svg.tmp123", "link", "out.svg", "x") }, true},
		{"no such directory", func(t testing.TB) { WantEntries(t, filepath.Join(dir, "none")) }, true},
		{"the link kept", func(t testing.TB) { WantLink(t, filepath.Join(dir, "link"), "out.svg") }, false},
		{"a link elsewhere", func(t testing.TB) { WantLink(t, filepath.Join(dir, "link"), "other.svg") }, true},
		{"a file, not a link", func(t testing.TB) { WantLink(t, filepath.Join(dir, "out.svg"), "out.svg") }, true},
	} {
		r := &recorder{TB: t}
		tc.check(r)
		if r.failed != tc.fails {
			t.Errorf("%s: failed %v, want %v", tc.name, r.failed, tc.fails)
		}
	}
}
