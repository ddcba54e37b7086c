package plots

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// WriteFile writes what render produces to the file at path, all or
// nothing: render writes into a temporary file beside path, which is
// renamed over path only once render and every write have succeeded. On
// any failure the temporary file is removed and path is left as it was,
// so a half-drawn image is never left behind.
//
// A typical call is
//
//	plots.WriteFile("out.svg", func(w io.Writer) error {
//		return plots.Timeline(w, result, plots.Options{Format: "svg"})
//	})
func WriteFile(path string, render func(io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if base == "" {
		return fmt.Errorf("plots: cannot write %q: it names a directory, not a file", path)
	}
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return fmt.Errorf("plots: cannot write %s: directory %s: %w", path, filepath.Clean(dir), cause(err))
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	b := bufio.NewWriter(f)
	if err := render(b); err != nil {
		if strings.HasPrefix(err.Error(), "plots: ") {
			return err
		}
		return fmt.Errorf("plots: drawing %s: %w", path, err)
	}
	if err := b.Flush(); err != nil {
		return fmt.Errorf("plots: cannot write %s: %w", path, cause(err))
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("plots: cannot write %s: %w", path, cause(err))
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("plots: cannot write %s: %w", path, cause(err))
	}
	// CreateTemp makes the file private (0600); an image is for sharing.
	if err := os.Chmod(tmp, 0o644); err != nil {
		return fmt.Errorf("plots: cannot write %s: %w", path, cause(err))
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("plots: cannot write %s: %w", path, cause(err))
	}
	return nil
}

// cause strips a *fs.PathError naming the temporary file down to what went
// wrong, so the message names the path the user asked for and not ours.
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
