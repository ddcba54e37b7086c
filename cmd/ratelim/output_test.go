package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ratelim/ratelim/internal/outfile/outfiletest"
)

// outputWriter is one of the flags that make ratelim write a file, run on
// a small built-in.
type outputWriter struct {
	name string
	ext  string // the extension the flag needs
	args func(path string) []string
	// looksRight says whether data is what the writer writes.
	looksRight func(data string) bool
}

var outputWriters = []outputWriter{
	{"report", ".html", func(p string) []string { return []string{"report", "nat", "--image", "svg", "-o", p} },
		func(d string) bool { return strings.HasPrefix(d, "<!DOCTYPE html>") }},
	{"plot", ".svg", func(p string) []string { return []string{"sim", "nat", "--plot", p} },
		func(d string) bool { return strings.Contains(d, "<svg") }},
	{"junit", ".xml", func(p string) []string { return []string{"check", "nat", "--junit", p} },
		func(d string) bool { return strings.Contains(d, "<testsuites") }},
}

// TestOutputPathsDoNoHarm runs every output flag against what its path may
// already name (issue 27): a link is written through and stays a link, an
// existing file is replaced atomically and keeps its mode, "-" and
// /dev/stdout are standard output, /dev/null discards, and a dangling
// link, a directory, a FIFO or a device is refused (exit 2) and left as it
// was.
func TestOutputPathsDoNoHarm(t *testing.T) {
	const old = "old contents\n"
	tests := []struct {
		name string
		// setup makes what the path names in dir and returns the path;
		// ext is the writer's extension.
		setup func(t *testing.T, dir, ext string) string
		// only these writers, if any: a plot cannot go to "-" or /dev/null
		// (its format comes from the extension).
		only     []string
		wantExit int
		// check looks at dir and what was written afterwards.
		check func(t *testing.T, w outputWriter, dir, path, stdout string)
	}{
		{
			name: "regular-file",
			setup: func(t *testing.T, dir, ext string) string {
				p := filepath.Join(dir, "out"+ext)
				mustWrite(t, p, old, 0o600)
				return p
			},
			check: func(t *testing.T, w outputWriter, dir, path, _ string) {
				if fi := mustLstat(t, path); !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
					t.Errorf("%s is %v, want a regular file that kept its 0600", path, fi.Mode())
				}
				wantWritten(t, w, path)
				outfiletest.WantEntries(t, dir, "out"+w.ext)
			},
		},
		{
			name: "link-to-file",
			setup: func(t *testing.T, dir, ext string) string {
				mustMkdir(t, filepath.Join(dir, "real"))
				mustWrite(t, filepath.Join(dir, "real", "target"+ext), old, 0o640)
				return mustSymlink(t, filepath.Join("real", "target"+ext), filepath.Join(dir, "link"+ext))
			},
			check: func(t *testing.T, w outputWriter, dir, path, _ string) {
				outfiletest.WantLink(t, path, filepath.Join("real", "target"+w.ext))
				target := filepath.Join(dir, "real", "target"+w.ext)
				wantWritten(t, w, target)
				if fi := mustLstat(t, target); fi.Mode().Perm() != 0o640 {
					t.Errorf("target mode %v, want its 0640 kept", fi.Mode())
				}
				outfiletest.WantEntries(t, dir, "link"+w.ext, "real")
				outfiletest.WantEntries(t, filepath.Join(dir, "real"), "target"+w.ext)
			},
		},
		{
			name: "dangling-link",
			setup: func(t *testing.T, dir, ext string) string {
				return mustSymlink(t, "missing"+ext, filepath.Join(dir, "link"+ext))
			},
			wantExit: exitBadInput,
			check: func(t *testing.T, w outputWriter, dir, path, _ string) {
				outfiletest.WantLink(t, path, "missing"+w.ext)
				outfiletest.WantEntries(t, dir, "link"+w.ext)
			},
		},
		{
			name: "link-to-directory",
			setup: func(t *testing.T, dir, ext string) string {
				mustMkdir(t, filepath.Join(dir, "sub"+ext))
				return mustSymlink(t, "sub"+ext, filepath.Join(dir, "link"+ext))
			},
			wantExit: exitBadInput,
			check: func(t *testing.T, w outputWriter, dir, path, _ string) {
				outfiletest.WantLink(t, path, "sub"+w.ext)
				outfiletest.WantEntries(t, dir, "link"+w.ext, "sub"+w.ext)
				outfiletest.WantEntries(t, filepath.Join(dir, "sub"+w.ext))
			},
		},
		{
			name: "fifo",
			setup: func(t *testing.T, dir, ext string) string {
				p := filepath.Join(dir, "fifo"+ext)
				if err := syscall.Mkfifo(p, 0o644); err != nil {
					t.Fatal(err)
				}
				return p
			},
			wantExit: exitBadInput,
			check: func(t *testing.T, w outputWriter, dir, path, _ string) {
				if fi := mustLstat(t, path); fi.Mode()&fs.ModeNamedPipe == 0 {
					t.Errorf("%s is now %v, want the FIFO left as it was", path, fi.Mode())
				}
				outfiletest.WantEntries(t, dir, "fifo"+w.ext)
			},
		},
		{
			// A device node made here, not the machine's: writing one
			// would replace it, and as root that is what happened.
			name: "char-device",
			setup: func(t *testing.T, dir, ext string) string {
				if os.Geteuid() != 0 {
					t.Skip("mknod needs root")
				}
				p := filepath.Join(dir, "null"+ext)
				if err := syscall.Mknod(p, syscall.S_IFCHR|0o666, 1<<8|3); err != nil { // major 1, minor 3: a null device
					t.Skip("mknod:", err)
				}
				return p
			},
			wantExit: exitBadInput,
			check: func(t *testing.T, w outputWriter, dir, path, _ string) {
				if fi := mustLstat(t, path); fi.Mode()&fs.ModeCharDevice == 0 {
					t.Errorf("%s is now %v, want the device left as it was", path, fi.Mode())
				}
				outfiletest.WantEntries(t, dir, "null"+w.ext)
			},
		},
		{
			name:  "dev-null",
			setup: func(t *testing.T, _, _ string) string { return realDevice(t, os.DevNull) },
			only:  []string{"report", "junit"},
			check: func(t *testing.T, w outputWriter, dir, path, _ string) {
				if fi := mustLstat(t, os.DevNull); fi.Mode()&fs.ModeCharDevice == 0 {
					t.Errorf("%s is now %v, want the device", os.DevNull, fi.Mode())
				}
				outfiletest.WantEntries(t, dir)
			},
		},
		{
			name:  "dash",
			setup: func(*testing.T, string, string) string { return "-" },
			only:  []string{"report", "junit"},
			check: func(t *testing.T, w outputWriter, dir, path, stdout string) {
				if !strings.Contains(stdout, "<") || !w.looksRight(stdout[strings.Index(stdout, "<"):]) {
					t.Errorf("stdout does not hold the %s output:\n%.300s", w.name, stdout)
				}
				outfiletest.WantEntries(t, dir)
			},
		},
		{
			name:  "dev-stdout",
			setup: func(t *testing.T, _, _ string) string { return realDevice(t, "/dev/stdout") },
			only:  []string{"report", "junit"},
			check: func(t *testing.T, w outputWriter, dir, path, stdout string) {
				if !strings.Contains(stdout, "<") || !w.looksRight(stdout[strings.Index(stdout, "<"):]) {
					t.Errorf("stdout does not hold the %s output:\n%.300s", w.name, stdout)
				}
				if fi := mustLstat(t, "/dev/stdout"); fi.Mode().IsRegular() {
					t.Errorf("/dev/stdout is now a regular file")
				}
				outfiletest.WantEntries(t, dir)
			},
		},
	}
	// A plot has no place on standard output, where the table goes.
	for _, path := range []string{"-", "/dev/stdout"} {
		code, _, stderr := runArgs("sim", "nat", "--plot", path)
		if code != exitBadInput || !strings.Contains(stderr, "--plot: an image does not go to standard output") {
			t.Errorf("sim --plot %s: exit %d, %q; want 2 saying why", path, code, stderr)
		}
	}
	for _, tt := range tests {
		for _, w := range outputWriters {
			if tt.only != nil && !contains(tt.only, w.name) {
				continue
			}
			t.Run(tt.name+"/"+w.name, func(t *testing.T) {
				dir := t.TempDir()
				t.Chdir(dir) // a path taken as a name ("-") lands here
				path := tt.setup(t, dir, w.ext)
				code, stdout, stderr := runArgs(w.args(path)...)
				if code != tt.wantExit {
					t.Fatalf("%s: exit %d, want %d; stderr:\n%s", strings.Join(w.args(path), " "), code, tt.wantExit, stderr)
				}
				if code == exitBadInput && !strings.Contains(stderr, "cannot write "+path+": ") {
					t.Errorf("stderr %q does not say which path it cannot write", stderr)
				}
				tt.check(t, w, dir, path, stdout)
			})
		}
	}
}

// realDevice returns path, a real file under /dev, or skips the case when
// running as root: were the writers to regress to renaming onto it, root
// would replace the machine's /dev/stdout, as issue 27 saw. Unprivileged,
// a regression fails for want of permission in /dev and harms nothing.
// internal/outfile's TestIsStdout covers the names as root.
func realDevice(t *testing.T, path string) string {
	t.Helper()
	if os.Geteuid() == 0 {
		t.Skipf("writes the real %s only when not root", path)
	}
	return path
}

func mustWrite(t *testing.T, path, data string, perm fs.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, perm); err != nil { // past the umask
		t.Fatal(err)
	}
}

func mustMkdir(t *testing.T, path string) {
	t.Helper()
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
}

func mustSymlink(t *testing.T, dest, link string) string {
	t.Helper()
	if err := os.Symlink(dest, link); err != nil {
		t.Fatal(err)
	}
	return link
}

func mustLstat(t *testing.T, path string) fs.FileInfo {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

// wantWritten fails unless path is a regular file holding w's output.
func wantWritten(t *testing.T, w outputWriter, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil || !w.looksRight(string(data)) {
		t.Errorf("%s holds %.80q, %v; want the %s output", path, data, err, w.name)
	}
}
