package main

import (
	"errors"
	"io"

	"github.com/ratelim/ratelim/internal/outfile"
)

// writeOutput writes a file the user named (report -o, --plot, --junit)
// with outfile.Write, the one way this command writes a file: "-" and
// /dev/stdout are stdout (nil: refused), a link is written through to its
// target and stays a link, and a directory, device, FIFO or socket is
// refused, never replaced. A path that is refused or cannot be created is
// bad input (exit 2); a write that fails part way is not.
func writeOutput(path string, stdout io.Writer, write func(io.Writer) error) error {
	err := outfile.Write(path, stdout, write)
	var unusable *outfile.UnusableError
	if errors.As(err, &unusable) {
		return usageError{err}
	}
	return err
}
