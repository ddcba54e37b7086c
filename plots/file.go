package plots

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ratelim/ratelim/internal/outfile"
)

// WriteFile writes what render produces to the file at path, all or
// nothing: render writes into a temporary file beside the file, which is
// renamed over it only once render and every write have succeeded. On any
// failure the temporary file is removed and path is left as it was, so a
// half-drawn image is never left behind.
//
// path is written as the CLI writes every output (internal/outfile): "-"
// and /dev/stdout are os.Stdout, /dev/null discards, a symbolic link is
// written through to its target and stays a link, an existing file keeps
// its permissions, and a directory, device, FIFO or socket is refused,
// never replaced.
//
// A typical call is
//
//	plots.WriteFile("out.svg", func(w io.Writer) error {
//		return plots.Timeline(w, result, plots.Options{Format: "svg"})
//	})
func WriteFile(path string, render func(io.Writer) error) error {
	var renderErr error
	err := outfile.Write(path, os.Stdout, func(w io.Writer) error {
		renderErr = render(w)
		return renderErr
	})
	switch {
	case err == nil:
		return nil
	case err != renderErr:
		return fmt.Errorf("plots: %w", err)
	case strings.HasPrefix(err.Error(), "plots: "):
		return err
	}
	return fmt.Errorf("plots: drawing %s: %w", path, err)
}
