// Package outfile writes the files a command is told to write (report -o,
// --plot, --junit) without harming what the path already names.
//
// Writing a new file by temporary file + rename is all or nothing, but a
// rename replaces whatever the path names: a symbolic link became a regular
// file beside its untouched target, and as root `-o /dev/stdout` replaced
// the machine's /dev/stdout link with a 144 KB file. [Write] renames only
// onto a regular file, and only onto the file a link leads to:
//
//   - "-" and "/dev/stdout" are standard output: written, never opened.
//   - "/dev/null" is written and discarded (as `> /dev/null` would), never
//     opened or replaced, so a run can be checked without keeping it.
//   - A regular file, or a new name, is replaced atomically: a temporary
//     file in the same directory, renamed over it once every byte is
//     written. An existing file keeps its permissions; a new one is 0644.
//   - A symbolic link is followed: its target, if a regular file, is
//     replaced as above (the temporary file beside the target), so the link
//     stays a link. A dangling link is refused, not created through, as GNU
//     cp refuses ("not writing through dangling symlink"): the missing
//     target is more often a mistake than a wish.
//   - Anything else, even through a link, is refused and left as it is: a
//     directory, a device other than /dev/null, a named pipe (which would
//     block until a reader came), a socket.
//
// A refusal, and a path whose file cannot be created, is an *[UnusableError]
// (a command exits with bad input); an error part way through writing is
// returned as it is.
package outfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ratelim/ratelim/internal/filekind"
)

// IsStdout reports whether path names standard output: "-" or
// "/dev/stdout".
func IsStdout(path string) bool { return path == "-" || path == "/dev/stdout" }

// UnusableError is an output path that is refused (it names something other
// than a regular file) or whose file cannot be created (no such directory,
// no permission). Nothing was written and nothing at the path changed.
type UnusableError struct {
	Path string // as the user gave it
	Err  error  // why, worded to follow "cannot write PATH: "
}

func (e *UnusableError) Error() string { return "cannot write " + e.Path + ": " + e.Err.Error() }
func (e *UnusableError) Unwrap() error { return e.Err }

func unusable(path, format string, args ...any) error {
	return &UnusableError{Path: path, Err: fmt.Errorf(format, args...)}
}

// Write writes what write produces to the output named path, as the package
// doc says: standard output (stdout) for "-" and "/dev/stdout", nothing for
// /dev/null, else a regular file replaced all or nothing. A nil stdout
// refuses "-" and "/dev/stdout", for an output (an image) that has no place
// there.
//
// write is called only once the file could be created, and its error is
// returned as it is; the file it was writing is then removed and path is
// left as it was.
func Write(path string, stdout io.Writer, write func(io.Writer) error) error {
	if IsStdout(path) {
		if stdout == nil {
			return unusable(path, "this output cannot go to standard output (want a file name)")
		}
		return write(stdout)
	}
	target, perm, err := resolve(path, stdout != nil)
	if err != nil {
		return err
	}
	if target == os.DevNull {
		return write(io.Discard)
	}
	return replace(path, target, perm, write)
}

// Check refuses, writing nothing, a path Write would refuse as it is now
// (a directory, a device, a FIFO, a dangling link, a directory that does
// not exist), so that a command can say so before it works rather than
// after; stdoutOK as Write's stdout != nil. Write still checks again.
func Check(path string, stdoutOK bool) error {
	if IsStdout(path) {
		if !stdoutOK {
			return unusable(path, "this output cannot go to standard output (want a file name)")
		}
		return nil
	}
	target, _, err := resolve(path, stdoutOK)
	if err != nil || target == os.DevNull {
		return err
	}
	dir := filepath.Dir(target)
	if fi, err := os.Stat(dir); err != nil {
		return unusable(path, "directory %s: %w", dir, cause(err))
	} else if !fi.IsDir() {
		return unusable(path, "%s is not a directory (want a file in a directory that exists)", dir)
	}
	return nil
}

// resolve returns the regular file that writing path should replace (path
// with every link followed) and the permissions the new file gets, or an
// *UnusableError if path names something else.
func resolve(path string, stdoutOK bool) (target string, perm fs.FileMode, err error) {
	if _, base := filepath.Split(path); base == "" {
		return "", 0, unusable(path, "it names a directory, not a file (want a file name)")
	}
	fi, err := os.Stat(path) // follows links; never opens, so a FIFO cannot block
	if errors.Is(err, fs.ErrNotExist) {
		if li, lerr := os.Lstat(path); lerr == nil && li.Mode()&fs.ModeSymlink != 0 {
			dest, _ := os.Readlink(path)
			return "", 0, unusable(path, "it is a symbolic link to %s, which does not exist (create the target, or remove the link)", dest)
		}
		// A new file: CreateTemp says whether its directory can hold it.
		return path, 0o644, nil
	}
	if err != nil {
		return "", 0, unusable(path, "%w", cause(err))
	}
	through := ""
	if li, err := os.Lstat(path); err == nil && li.Mode()&fs.ModeSymlink != 0 {
		dest, _ := os.Readlink(path)
		through = "a symbolic link to " + dest + ", "
	}
	if !fi.Mode().IsRegular() {
		target, _ := filepath.EvalSymlinks(path)
		if target == os.DevNull {
			return target, 0, nil
		}
		want := "a file name, or - for standard output"
		if !stdoutOK {
			want = "a file name"
		}
		return "", 0, unusable(path, "it is %s%s; only a regular file is replaced (want %s)", through, filekind.Describe(fi.Mode()), want)
	}
	target, err = filepath.EvalSymlinks(path)
	if err != nil {
		return "", 0, unusable(path, "%w", cause(err))
	}
	return target, fi.Mode().Perm(), nil
}

// maxTempBase bounds the part of the temporary file's name taken from the
// target's, so that a target name near the file system's 255-byte limit
// still leaves room for the dot, the random part and ".tmp".
const maxTempBase = 200

// replace writes write's output to a temporary file beside target and
// renames it onto target with permissions perm. path is the name the user
// gave, for messages.
func replace(path, target string, perm fs.FileMode, write func(io.Writer) error) (err error) {
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	if len(base) > maxTempBase {
		base = base[:maxTempBase]
	}
	f, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return unusable(path, "directory %s: %w", filepath.Clean(dir), cause(err))
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	b := bufio.NewWriter(f)
	if err := write(b); err != nil {
		return err
	}
	failed := func(err error) error { return fmt.Errorf("cannot write %s: %w", path, cause(err)) }
	if err := b.Flush(); err != nil {
		return failed(err)
	}
	if err := f.Sync(); err != nil {
		return failed(err)
	}
	if err := f.Close(); err != nil {
		return failed(err)
	}
	// CreateTemp makes the file private (0600); the file it replaces may
	// not be, and a new one is for sharing.
	if err := os.Chmod(tmp, perm); err != nil {
		return failed(err)
	}
	if err := os.Rename(tmp, target); err != nil {
		return unusable(path, "%w", cause(err))
	}
	return nil
}

// cause strips a *fs.PathError or *os.LinkError naming our temporary file
// down to what went wrong, so a message names the path the user gave.
func cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
