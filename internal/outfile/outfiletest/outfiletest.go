// Package outfiletest holds the checks the tests of package outfile and
// of the commands that write through it share: what a directory holds
// after a write (no temporary file left beside the output), and that a
// symbolic link was not replaced by the file it pointed at.
package outfiletest

import (
	"os"
	"slices"
	"testing"
)

// WantEntries fails t unless dir holds exactly names, in os.ReadDir's
// order (sorted by name): no temporary file left, nothing missing.
func WantEntries(t testing.TB, dir string, names ...string) {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]string, 0, len(es))
	for _, e := range es {
		got = append(got, e.Name())
	}
	if !slices.Equal(got, names) {
		t.Errorf("%s holds %q, want %q", dir, got, names)
	}
}

// WantLink fails t unless path is still a symbolic link to dest.
func WantLink(t testing.TB, path, dest string) {
	t.Helper()
	if got, err := os.Readlink(path); err != nil || got != dest {
		t.Errorf("%s: readlink = %q, %v; want it still a link to %s", path, got, err, dest)
	}
}
