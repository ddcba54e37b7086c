package outfile

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ratelim/ratelim/internal/outfile/outfiletest"
)

const (
	old     = "old\n"
	written = "new contents\n"
)

func writeNew(w io.Writer) error {
	_, err := io.WriteString(w, written)
	return err
}

// TestWrite writes to each thing a path can name, in a t.TempDir, and
// checks what the path and its target are afterwards. The CLI's own test
// (cmd/ratelim TestOutputPathsDoNoHarm) runs the same classes through
// report -o, --plot and --junit.
func TestWrite(t *testing.T) {
	tests := []struct {
		name string
		// setup returns the path to write, made in dir.
		setup func(t *testing.T, dir string) string
		// stdoutNil passes no standard output.
		stdoutNil bool
		// wantErr is part of the error's text ("" for none); unusable says
		// whether it must be an *UnusableError.
		wantErr    string
		wantStdout string
		// check looks at dir afterwards.
		check func(t *testing.T, dir, path string)
	}{
		{
			name:  "new file",
			setup: func(t *testing.T, dir string) string { return filepath.Join(dir, "out") },
			check: func(t *testing.T, dir, path string) {
				wantFile(t, path, written, 0o644)
				outfiletest.WantEntries(t, dir, "out")
			},
		},
		{
			name: "regular file replaced atomically, mode kept",
			setup: func(t *testing.T, dir string) string {
				return mkfile(t, filepath.Join(dir, "out"), 0o600)
			},
			check: func(t *testing.T, dir, path string) {
				wantFile(t, path, written, 0o600)
				outfiletest.WantEntries(t, dir, "out")
			},
		},
		{
			name: "link to a file in another directory",
			setup: func(t *testing.T, dir string) string {
				mkdir(t, filepath.Join(dir, "real"))
				mkfile(t, filepath.Join(dir, "real", "target"), 0o640)
				return symlink(t, "real/target", filepath.Join(dir, "link"))
			},
			check: func(t *testing.T, dir, path string) {
				outfiletest.WantLink(t, path, "real/target")
				wantFile(t, filepath.Join(dir, "real", "target"), written, 0o640)
				outfiletest.WantEntries(t, dir, "link", "real")
				outfiletest.WantEntries(t, filepath.Join(dir, "real"), "target")
			},
		},
		{
			name: "link to a link to a file",
			setup: func(t *testing.T, dir string) string {
				mkfile(t, filepath.Join(dir, "target"), 0o644)
				symlink(t, "target", filepath.Join(dir, "inner"))
				return symlink(t, "inner", filepath.Join(dir, "outer"))
			},
			check: func(t *testing.T, dir, path string) {
				outfiletest.WantLink(t, path, "inner")
				outfiletest.WantLink(t, filepath.Join(dir, "inner"), "target")
				wantFile(t, filepath.Join(dir, "target"), written, 0o644)
			},
		},
		{
			// Refused, as GNU cp refuses: the target is not created.
			name: "dangling link",
			setup: func(t *testing.T, dir string) string {
				return symlink(t, "missing", filepath.Join(dir, "link"))
			},
			wantErr: "it is a symbolic link to missing, which does not exist",
			check: func(t *testing.T, dir, path string) {
				outfiletest.WantLink(t, path, "missing")
				outfiletest.WantEntries(t, dir, "link")
			},
		},
		{
			name: "link to a directory",
			setup: func(t *testing.T, dir string) string {
				mkdir(t, filepath.Join(dir, "sub"))
				return symlink(t, "sub", filepath.Join(dir, "link"))
			},
			wantErr: "it is a symbolic link to sub, a directory",
			check: func(t *testing.T, dir, path string) {
				outfiletest.WantLink(t, path, "sub")
				outfiletest.WantEntries(t, filepath.Join(dir, "sub"))
			},
		},
		{
			name: "directory",
			setup: func(t *testing.T, dir string) string {
				return mkdir(t, filepath.Join(dir, "sub"))
			},
			wantErr: "it is a directory",
			check: func(t *testing.T, dir, path string) {
				wantMode(t, path, fs.ModeDir)
				outfiletest.WantEntries(t, path)
			},
		},
		{
			name:    "a name ending in a separator",
			setup:   func(t *testing.T, dir string) string { return dir + string(filepath.Separator) },
			wantErr: "it names a directory",
			check:   func(t *testing.T, dir, path string) { outfiletest.WantEntries(t, dir) },
		},
		{
			// Stat never opens it, so nothing blocks waiting for a reader.
			name: "FIFO",
			setup: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "fifo")
				if err := syscall.Mkfifo(p, 0o644); err != nil {
					t.Fatal(err)
				}
				return p
			},
			wantErr: "it is a named pipe (FIFO)",
			check: func(t *testing.T, dir, path string) {
				wantMode(t, path, fs.ModeNamedPipe)
				outfiletest.WantEntries(t, dir, "fifo")
			},
		},
		{
			name: "link to a FIFO",
			setup: func(t *testing.T, dir string) string {
				if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
					t.Fatal(err)
				}
				return symlink(t, "fifo", filepath.Join(dir, "link"))
			},
			wantErr: "it is a symbolic link to fifo, a named pipe (FIFO)",
			check: func(t *testing.T, dir, path string) {
				outfiletest.WantLink(t, path, "fifo")
				wantMode(t, filepath.Join(dir, "fifo"), fs.ModeNamedPipe)
			},
		},
		{
			name: "socket",
			setup: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "sock")
				l, err := net.Listen("unix", p)
				if err != nil {
					t.Skip("unix socket:", err)
				}
				l.(*net.UnixListener).SetUnlinkOnClose(false)
				t.Cleanup(func() { l.Close() })
				return p
			},
			wantErr: "it is a socket",
			check: func(t *testing.T, dir, path string) {
				wantMode(t, path, fs.ModeSocket)
			},
		},
		{
			name: "character device other than /dev/null",
			setup: func(t *testing.T, dir string) string {
				if os.Geteuid() != 0 {
					t.Skip("mknod needs root")
				}
				p := filepath.Join(dir, "null")
				if err := syscall.Mknod(p, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
					t.Skip("mknod:", err)
				}
				return p
			},
			wantErr: "it is a character device",
			check: func(t *testing.T, dir, path string) {
				wantMode(t, path, fs.ModeCharDevice)
				outfiletest.WantEntries(t, dir, "null")
			},
		},
		{
			// Written and discarded, as `> /dev/null`; never opened.
			name:  "/dev/null",
			setup: func(t *testing.T, _ string) string { return realDevice(t, os.DevNull) },
			check: func(t *testing.T, dir, path string) { wantMode(t, path, fs.ModeCharDevice) },
		},
		{
			name: "link to /dev/null",
			setup: func(t *testing.T, dir string) string {
				return symlink(t, os.DevNull, filepath.Join(dir, "link"))
			},
			check: func(t *testing.T, dir, path string) {
				outfiletest.WantLink(t, path, os.DevNull)
				wantMode(t, os.DevNull, fs.ModeCharDevice)
			},
		},
		{
			name:       "dash is standard output",
			setup:      func(*testing.T, string) string { return "-" },
			wantStdout: written,
			check:      func(t *testing.T, dir, path string) { outfiletest.WantEntries(t, dir) },
		},
		{
			name:       "/dev/stdout is standard output",
			setup:      func(t *testing.T, _ string) string { return realDevice(t, "/dev/stdout") },
			wantStdout: written,
			check: func(t *testing.T, dir, path string) {
				if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() {
					t.Errorf("/dev/stdout is now a regular file")
				}
			},
		},
		{
			name:      "no standard output for this output",
			setup:     func(*testing.T, string) string { return "-" },
			stdoutNil: true,
			wantErr:   "cannot go to standard output",
			check:     func(t *testing.T, dir, path string) { outfiletest.WantEntries(t, dir) },
		},
		{
			name:    "no such directory",
			setup:   func(t *testing.T, dir string) string { return filepath.Join(dir, "nope", "out") },
			wantErr: "no such file or directory",
			check:   func(t *testing.T, dir, path string) { outfiletest.WantEntries(t, dir) },
		},
		{
			// The temporary name must fit beside a target near NAME_MAX.
			name:  "name of 255 bytes",
			setup: func(t *testing.T, dir string) string { return filepath.Join(dir, strings.Repeat("n", 255)) },
			check: func(t *testing.T, dir, path string) {
				wantFile(t, path, written, 0o644)
				outfiletest.WantEntries(t, dir, filepath.Base(path))
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := tt.setup(t, dir)
			var stdout bytes.Buffer
			var out io.Writer = &stdout
			if tt.stdoutNil {
				out = nil
			}
			called := false
			done := make(chan error, 1)
			go func() {
				done <- Write(path, out, func(w io.Writer) error { called = true; return writeNew(w) })
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(30 * time.Second): // a hang, not a time limit: Write does no waiting
				t.Fatalf("Write(%s) still blocked after 30s", path)
			}
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Write(%s): %v", path, err)
				}
			} else {
				var ue *UnusableError
				if !errors.As(err, &ue) || !strings.HasPrefix(err.Error(), "cannot write "+path+": ") || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Write(%s) = %v; want an UnusableError naming the path and saying %q", path, err, tt.wantErr)
				}
				if called {
					t.Errorf("Write(%s) called write before refusing", path)
				}
			}
			if stdout.String() != tt.wantStdout {
				t.Errorf("stdout %q, want %q", stdout.String(), tt.wantStdout)
			}
			tt.check(t, dir, path)
		})
	}
}

// realDevice returns path, a real file under /dev, for a case to write, or
// skips the case when running as root: were Write to regress to renaming
// onto it, root would replace the machine's /dev/stdout (as issue 27 saw,
// and as this test did once while checking that it fails). Unprivileged, a
// regression fails for want of permission in /dev and harms nothing.
// TestIsStdout covers the names as root.
func realDevice(t *testing.T, path string) string {
	t.Helper()
	if os.Geteuid() == 0 {
		t.Skipf("writes the real %s only when not root", path)
	}
	return path
}

func TestIsStdout(t *testing.T) {
	for path, want := range map[string]bool{
		"-": true, "/dev/stdout": true,
		"": false, "--": false, "./-": false, "/dev/stderr": false, "/dev/stdout/": false, "/proc/self/fd/1": false, os.DevNull: false,
	} {
		if got := IsStdout(path); got != want {
			t.Errorf("IsStdout(%q) = %v, want %v", path, got, want)
		}
	}
}

// TestWriteFailureLeavesTargetAsItWas: a write that fails part way leaves
// the file, and the link to it, as they were, and no temporary file.
func TestWriteFailureLeavesTargetAsItWas(t *testing.T) {
	dir := t.TempDir()
	mkfile(t, filepath.Join(dir, "target"), 0o600)
	link := symlink(t, "target", filepath.Join(dir, "link"))
	boom := errors.New("boom")
	err := Write(link, nil, func(w io.Writer) error {
		io.WriteString(w, "half")
		return boom
	})
	if err != boom {
		t.Fatalf("err = %v, want write's own error as it is", err)
	}
	outfiletest.WantLink(t, link, "target")
	wantFile(t, filepath.Join(dir, "target"), old, 0o600)
	outfiletest.WantEntries(t, dir, "link", "target")
}

func mkfile(t *testing.T, path string, perm fs.FileMode) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(old), perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, perm); err != nil { // past the umask
		t.Fatal(err)
	}
	return path
}

func mkdir(t *testing.T, path string) string {
	t.Helper()
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func symlink(t *testing.T, dest, link string) string {
	t.Helper()
	if err := os.Symlink(dest, link); err != nil {
		t.Fatal(err)
	}
	return link
}

func wantFile(t *testing.T, path, data string, perm fs.FileMode) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm() != perm {
		t.Errorf("%s is %v, want a regular file %v", path, fi.Mode(), perm)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != data {
		t.Errorf("%s holds %q, %v; want %q", path, b, err, data)
	}
}

func wantMode(t *testing.T, path string, typ fs.FileMode) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&typ == 0 {
		t.Errorf("%s is now %v, want it left as it was (%v)", path, fi.Mode(), typ)
	}
}
