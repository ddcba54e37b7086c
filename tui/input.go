package tui

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/term"
)

// ttyPath is the controlling terminal, where the keys come from when
// standard input is not a terminal.
const ttyPath = "/dev/tty"

// input is where the player reads keys: in as given, unless in is a file
// that is not a terminal (`ratelim sim nat --tui < /dev/null`, or a pipe):
// the player then reads the controlling terminal, as less and fzf do. A
// reader that is not a file (a test's) is used as it is. close releases
// what input opened.
func input(in io.Reader, open func() (*os.File, error)) (r io.Reader, close func() error, err error) {
	if in == nil {
		in = os.Stdin
	}
	f, ok := in.(*os.File)
	if !ok || term.IsTerminal(int(f.Fd())) {
		return in, func() error { return nil }, nil
	}
	tty, err := open()
	if err != nil {
		return nil, nil, fmt.Errorf("the player reads keys from a terminal, standard input is not one, and %s cannot be opened (run it from a terminal): %w", ttyPath, err)
	}
	return tty, tty.Close, nil
}

func openTTY() (*os.File, error) { return os.Open(ttyPath) }
